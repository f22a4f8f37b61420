"""Steady-state estimation: warm-up removal, batch means, Student-t intervals, a stopping rule.

Completions (bytes or operations) are counted in consecutive batches of simulated time after a
warm-up. Each batch gives a rate; the point estimate is total amount / total time over the kept
batches, and the 95% interval comes from the batch rates (Student t with batches - 1 degrees of
freedom). A point stops when the half-width is within ``rel_precision`` of the mean (after
``min_batches``), or when ``max_batches`` is reached; the interval reported is whatever was
achieved, so a loose one is visible, never hidden.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

# Two-sided 95% Student-t quantiles for 1..30 degrees of freedom; beyond 30 the normal 1.96 is
# within 2% of the exact value.
_T95 = [
    12.706,
    4.303,
    3.182,
    2.776,
    2.571,
    2.447,
    2.365,
    2.306,
    2.262,
    2.228,
    2.201,
    2.179,
    2.160,
    2.145,
    2.131,
    2.120,
    2.110,
    2.101,
    2.093,
    2.086,
    2.080,
    2.074,
    2.069,
    2.064,
    2.060,
    2.056,
    2.052,
    2.048,
    2.045,
    2.042,
]


def t95(dof: int) -> float:
    """The 97.5% quantile of Student's t with ``dof`` degrees of freedom."""
    if dof < 1:
        return math.inf
    return _T95[dof - 1] if dof <= len(_T95) else 1.96


@dataclass(frozen=True)
class Estimate:
    """A rate with its 95% confidence interval."""

    mean: float
    low: float
    high: float
    batches: int

    @property
    def rel_half_width(self) -> float:
        """Half-width of the interval relative to the mean."""
        return (self.high - self.low) / 2 / self.mean if self.mean > 0 else math.inf


def batch_estimate(amounts: list[float], durations: list[float]) -> Estimate:
    """Ratio estimate and t-interval from per-batch amounts and durations."""
    n = len(amounts)
    total_time = sum(durations)
    mean = sum(amounts) / total_time if total_time > 0 else 0.0
    if n < 2:
        return Estimate(mean, 0.0, math.inf, n)
    rates = [a / d for a, d in zip(amounts, durations, strict=True)]
    avg = sum(rates) / n
    var = sum((r - avg) ** 2 for r in rates) / (n - 1)
    half = t95(n - 1) * math.sqrt(var / n)
    return Estimate(mean, max(mean - half, 0.0), mean + half, n)


def batch_means_converged(amounts: list[float], durations: list[float], rel_precision: float, min_batches: int) -> bool:
    """True when enough batches are in and the interval is tight enough."""
    if len(amounts) < min_batches:
        return False
    return batch_estimate(amounts, durations).rel_half_width <= rel_precision
