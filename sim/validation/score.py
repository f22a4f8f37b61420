"""Scoring predicted curves against published points and shape statements; result objects only.

How a published point is compared (the prediction is read off the curve of its op):

* ``peak``, ``value`` or ``approximate`` at a thread count T: the prediction at T. For a peak the
  predicted curve's own peak and its thread count are reported beside it.
* ``peak`` without a thread count (a summary table's peak): the predicted curve's peak.
* ``plateau`` or ``sustained`` over ``threads_range``: the mean of the predictions at the thread
  counts in the range. Without a range: the mean over the thread counts after the predicted
  curve's peak (the peak itself when it is the last point), and the comparison says so.

The error is predicted / published - 1; a point is within tolerance when |error| <= its tolerance.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from sim.benchmarks.driver import PointResult
from sim.report.run import format_value
from sim.validation.dataset import BenchmarkData, MissSpec, PublishedPoint, Shape
from sim.validation.shapes import ShapeOutcome, evaluate

MissKey = tuple[str, str, str, str]


@dataclass(frozen=True)
class Comparison:
    """What a published point is compared with on the predicted curve."""

    predicted: float
    ci_low: float
    ci_high: float
    threads_used: tuple[int, ...]
    how: str
    peak: float
    peak_threads: int
    bottleneck: str
    bottleneck_utilization: float
    converged: bool = True  # every point compared is (the run tables' "*" when not)
    not_converged: tuple[str, ...] = ()  # why not: the codes of the points compared (driver.NOT_CONVERGED)


def compare(point: PublishedPoint, curve: Sequence[PointResult]) -> Comparison:
    """The prediction a published point is scored against (see the module docstring)."""
    if not curve:
        raise ValueError(f"no predicted curve for {point.op}")
    ordered = sorted(curve, key=lambda p: p.threads)
    by_threads = {p.threads: p for p in ordered}
    top = max(ordered, key=lambda p: p.value)
    if point.threads is not None:
        if point.threads not in by_threads:
            raise ValueError(f"no predicted point at {point.threads} threads for {point.op}")
        chosen = [by_threads[point.threads]]
        how = f"prediction at {point.threads} thread{'s' if point.threads != 1 else ''}"
    elif point.kind == "peak":
        chosen = [top]
        how = f"no thread count published: the predicted peak, at {top.threads} threads"
    elif point.threads_range is not None:
        low, high = point.threads_range
        chosen = [p for p in ordered if low <= p.threads <= high]
        if not chosen:
            raise ValueError(f"no predicted point of {point.op} in [{low}, {high}]")
        how = f"mean of the predictions over {chosen[0].threads}..{chosen[-1].threads} threads (the stated range)"
    else:
        after = [p for p in ordered if p.threads > top.threads]
        if after:
            chosen = after
            how = (
                f"no range published: mean over the thread counts after the predicted peak "
                f"({top.threads}), {after[0].threads}..{after[-1].threads}"
            )
        else:
            chosen = [top]
            how = f"no range published and the predicted peak is the last point: the prediction at {top.threads}"
    n = len(chosen)
    worst = max(chosen, key=lambda p: p.bottleneck_utilization)
    return Comparison(
        predicted=sum(p.value for p in chosen) / n,
        ci_low=sum(p.ci_low for p in chosen) / n,
        ci_high=sum(p.ci_high for p in chosen) / n,
        threads_used=tuple(p.threads for p in chosen),
        how=how,
        peak=top.value,
        peak_threads=top.threads,
        bottleneck=worst.bottleneck,
        bottleneck_utilization=worst.bottleneck_utilization,
        converged=all(p.converged for p in chosen),
        not_converged=tuple(sorted({code for p in chosen for code in p.not_converged})),
    )


@dataclass
class PointScore:
    """A scored published point."""

    system: str
    benchmark: str
    workload: str
    point: PublishedPoint
    comparison: Comparison
    known_miss: MissSpec | None = None

    @property
    def published(self) -> float:
        """The published value (SI)."""
        return self.point.published

    @property
    def predicted(self) -> float:
        """The prediction it is compared with (SI)."""
        return self.comparison.predicted

    @property
    def error(self) -> float:
        """predicted / published - 1."""
        return self.predicted / self.published - 1

    @property
    def within(self) -> bool:
        """|error| within the point's tolerance (a point exactly at the tolerance is within it)."""
        return abs(self.error) <= self.point.tolerance + 1e-12

    @property
    def key(self) -> MissKey:
        """The known-miss key of this point."""
        return (self.system, self.benchmark, "point", self.point.id)

    @property
    def fitted(self) -> bool:
        """A model parameter was fitted on this point: its agreement is by construction."""
        return self.point.fitted is not None


@dataclass
class ShapeScore:
    """An evaluated shape check."""

    system: str
    benchmark: str
    shape: Shape
    outcome: ShapeOutcome
    known_miss: MissSpec | None = None

    @property
    def passed(self) -> bool:
        """The check holds on the prediction."""
        return self.outcome.passed

    @property
    def key(self) -> MissKey:
        """The known-miss key of this shape."""
        return (self.system, self.benchmark, "shape", self.shape.id)


@dataclass(frozen=True)
class PendingPoint:
    """A transcribed point that cannot be scored yet (e.g. MDtest, not modelled)."""

    system: str
    benchmark: str
    point: PublishedPoint
    reason: str


@dataclass(frozen=True)
class ErrorSummary:
    """Median and maximum absolute error of a set of scored points.

    A point a model parameter was fitted on agrees by construction, wholly or in part (a parameter
    fitted on the mean of several points meets none of them exactly), so it says little about how
    well the model predicts: it is counted apart (``n_fitted``) and left out of the median, which is
    over the ``n_points`` predicted points. The maximum and the points out of tolerance count every
    point: a fitted point far from its figure (PixStor's empty-file stat, +42%) is a failure of the
    model the summary must not hide (a session 25 review)."""

    median_abs_error: float | None
    max_abs_error: float | None
    n_points: int
    n_out_of_tolerance: int
    n_fitted: int = 0
    # The lowest and highest signed error of the predicted points: which way the model errs, and by
    # how much at most, as a reader would widen a prediction of a like system (None with none).
    error_range: tuple[float, float] | None = None

    @classmethod
    def of(cls, points: Sequence[PointScore]) -> ErrorSummary:
        """Summarise ``points`` (None for a median of no predicted point, a maximum of no point)."""
        signed = [p.error for p in points if not p.fitted]
        errors = [abs(e) for e in signed]
        every = [abs(p.error) for p in points]
        return cls(
            median_abs_error=statistics.median(errors) if errors else None,
            max_abs_error=max(every) if every else None,
            n_points=len(errors),
            n_out_of_tolerance=sum(1 for p in points if not p.within),
            n_fitted=sum(1 for p in points if p.fitted),
            error_range=(min(signed), max(signed)) if signed else None,
        )


@dataclass
class BenchmarkScore:
    """One system x benchmark: its scored points, shapes and the predicted curves they read."""

    system: str
    benchmark: str
    workload: str
    points: list[PointScore] = field(default_factory=list)
    shapes: list[ShapeScore] = field(default_factory=list)
    curves: dict[str, list[PointResult]] = field(default_factory=dict)

    @property
    def summary(self) -> ErrorSummary:
        """Median and maximum absolute error of this benchmark's points."""
        return ErrorSummary.of(self.points)


def curves_of(points: Sequence[PointResult]) -> dict[str, list[PointResult]]:
    """Points grouped by operation, each curve ordered by thread count."""
    curves: dict[str, list[PointResult]] = {}
    for p in sorted(points, key=lambda p: p.threads):
        curves.setdefault(p.op, []).append(p)
    return curves


def score_benchmark(
    system: str,
    name: str,
    data: BenchmarkData,
    points: Sequence[PointResult],
    misses: Mapping[MissKey, MissSpec] | None = None,
) -> BenchmarkScore:
    """Score one benchmark's published points and shapes on its predicted points."""
    misses = misses or {}
    curves = curves_of(points)
    result = BenchmarkScore(system, name, data.workload or "", curves=curves)
    for point in data.points:
        scored = PointScore(system, name, result.workload, point, compare(point, curves.get(point.op, [])))
        scored.known_miss = misses.get(scored.key)
        result.points.append(scored)
    values = {op: {p.threads: p.value for p in curve} for op, curve in curves.items()}
    unit = "B/s" if any(p.unit == "B/s" for p in points) else "1/s"
    benchmark = points[0].benchmark if points else ""

    def fmt(value: float) -> str:
        return format_value(value, unit, benchmark)

    for shape in data.shapes:
        shape_score = ShapeScore(system, name, shape, evaluate(shape.check, values, fmt))
        shape_score.known_miss = misses.get(shape_score.key)
        result.shapes.append(shape_score)
    return result


@dataclass
class UnscoredRun:
    """Predictions for a workload whose results are not in the data."""

    system: str
    workload: str
    benchmark: str
    why: str
    curves: dict[str, list[PointResult]] = field(default_factory=dict)


@dataclass
class Reproduction:
    """Everything ``pfssim reproduce`` found: scores, pending points, unscored predictions, timing."""

    systems: list[str]
    benchmarks: list[BenchmarkScore] = field(default_factory=list)
    pending: list[PendingPoint] = field(default_factory=list)
    unscored: list[UnscoredRun] = field(default_factory=list)
    misses: dict[MissKey, MissSpec] = field(default_factory=dict)
    #: The published document each system's results come from (the dataset's ``document``).
    documents: dict[str, str] = field(default_factory=dict)
    simulated_points: int = 0
    wall_s: float = 0.0

    @property
    def points(self) -> list[PointScore]:
        """Every scored point."""
        return [p for b in self.benchmarks for p in b.points]

    @property
    def shapes(self) -> list[ShapeScore]:
        """Every evaluated shape check."""
        return [s for b in self.benchmarks for s in b.shapes]

    @property
    def summary(self) -> ErrorSummary:
        """Over every scored point."""
        return ErrorSummary.of(self.points)

    def system_summary(self, system: str) -> ErrorSummary:
        """Over one system's scored points."""
        return ErrorSummary.of([p for p in self.points if p.system == system])

    @property
    def failed_shapes(self) -> list[ShapeScore]:
        """Shape checks that do not hold."""
        return [s for s in self.shapes if not s.passed]

    @property
    def ok(self) -> bool:
        """Every scored point within tolerance and every shape check holding."""
        return self.summary.n_out_of_tolerance == 0 and not self.failed_shapes

    def stale_misses(self) -> list[MissSpec]:
        """Known misses of the systems run that are no longer misses (or name nothing that exists)."""
        missing = {p.key for p in self.points if not p.within} | {s.key for s in self.shapes if not s.passed}
        return [m for key, m in self.misses.items() if key[0] in self.systems and key not in missing]
