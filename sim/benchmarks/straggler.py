"""The last task: what IOR's and mdtest's arithmetic make of the spread between alike tasks.

IOR reports bytes / (last close - first open) and mdtest the slowest task's rate x the tasks.
Every task has the same fixed amount to move (its block of the file, its files), so both figures
are set by the task that finishes last, not by the aggregate rate. IOzone's "Children see" is
stonewalled (every child stops when the first one finishes) and has no such term.

In a steady-state point the tasks run at one mean rate, but each task's progress wanders with the
queues its own requests meet. Over the measurement window of ``T_w`` seconds the tasks' amounts
have a mean ``m`` and a standard deviation ``s`` across tasks. Taking a task's progress as
independent increments (the assumption the batch-means interval already makes), its spread grows
with the square root of time: a task that must move ``W`` finishes near ``T = W T_w / m`` with a
relative standard deviation ``delta = (s / m) sqrt(T_w / T)``. The last of ``N`` tasks finishes
near ``T (1 + delta z_N)``, ``z_N`` the expected largest of ``N`` standard normal draws, so the
benchmark reports the aggregate rate divided by ``1 + delta z_N``.

Slowdowns common to all tasks (one saturated part that everyone waits on) move every task alike
and do not appear in ``s``; only what differs between tasks does. Persistent differences between
tasks (two tasks on a node where the others have one) are outside this rule: it treats the tasks
as alike, which the shipped sweeps are (thread counts below, or multiples of, the client count);
mdtest phases small enough to simulate whole get the exact arithmetic instead.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

_BLOM_ALPHA = 0.375
_Z95 = 1.959964  # two-sided 95% point of the standard normal


def expected_max_normal(n: int) -> float:
    """E[max of n independent standard normals], by Blom's plotting position.

    Exact values are 0 (n = 1), 0.564 (2), 1.539 (10), 2.508 (100), 3.241 (1000); Blom's formula
    gives 0, 0.589, 1.547, 2.506, 3.242.
    """
    if n < 2:
        return 0.0
    return statistics.NormalDist().inv_cdf((n - _BLOM_ALPHA) / (n - 2 * _BLOM_ALPHA + 1))


def completion_spread(amounts: Sequence[float], window_s: float, work_per_task: float) -> float:
    """``delta``: the relative standard deviation of the tasks' times to move ``work_per_task``,
    from what each moved in a window of ``window_s`` seconds (0 for one task or no progress)."""
    if len(amounts) < 2 or window_s <= 0 or work_per_task <= 0:
        return 0.0
    mean = statistics.fmean(amounts)
    if mean <= 0:
        return 0.0
    spread = statistics.stdev(amounts) / mean
    task_seconds = work_per_task * window_s / mean
    return spread * min(1.0, (window_s / task_seconds) ** 0.5)


def last_task_factor(amounts: Sequence[float], window_s: float, work_per_task: float) -> float:
    """The reported rate over the aggregate rate: ``1 / (1 + delta z_N)``."""
    return last_task_interval(amounts, window_s, work_per_task)[0]


def last_task_interval(amounts: Sequence[float], window_s: float, work_per_task: float) -> tuple[float, float, float]:
    """:func:`last_task_factor` with its 95% interval (factor, low, high).

    ``delta`` rests on the standard deviation of ``N`` tasks' amounts, an estimate however long
    the window: for normal amounts ``(N - 1) s^2 / sigma^2`` is chi-square with ``N - 1`` degrees of
    freedom, which bounds ``sigma`` between ``s sqrt((N - 1) / chi2_0.975)`` and
    ``s sqrt((N - 1) / chi2_0.025)`` (17 tasks: 0.74 s to 1.52 s; 512 tasks: 0.94 s to 1.07 s).
    The interval carries that through the factor, so a point whose aggregate rate is pinned by a
    saturated part still shows what the last-task term's own estimate leaves open.
    """
    delta = completion_spread(amounts, window_s, work_per_task)
    z = expected_max_normal(len(amounts))
    if delta <= 0 or z <= 0:
        return 1.0, 1.0, 1.0
    k = len(amounts) - 1
    small, large = (delta * (k / _chi2_quantile(k, q)) ** 0.5 for q in (_Z95, -_Z95))
    return 1.0 / (1.0 + delta * z), 1.0 / (1.0 + large * z), 1.0 / (1.0 + small * z)


def _chi2_quantile(k: int, normal_quantile: float) -> float:
    """The chi-square quantile with ``k`` degrees of freedom at the probability where the standard
    normal has ``normal_quantile``: exact for k = 1 and 2, else Wilson and Hilferty's cube-root
    approximation (its 2.5% point is 16% low at k = 3, 1% at k = 9; its 97.5% point within 0.3%)."""
    p = statistics.NormalDist().cdf(normal_quantile)
    if k == 1:
        return statistics.NormalDist().inv_cdf((1 + p) / 2) ** 2
    if k == 2:
        return -2 * math.log(1 - p)
    c = 2.0 / (9.0 * k)
    return k * max(1.0 - c + normal_quantile * c**0.5, 1e-3) ** 3
