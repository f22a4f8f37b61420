"""Rendering a :class:`Reproduction` as rows, JSON and rich tables.

Every renderer reads the same rows (:func:`point_row`, :func:`shape_row`, ...), so the terminal,
the JSON and the report document (:mod:`sim.validation.document`) show the same numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from sim import __version__
from sim.benchmarks.driver import limit_of
from sim.params import PARAMETERS
from sim.report.run import bottleneck_text, format_value, interval_text, utilization_text
from sim.validation.run import SEED
from sim.validation.score import ErrorSummary, PointScore, Reproduction, ShapeScore, UnscoredRun

#: ``pfssim reproduce --json`` schema: 1 - first release; 2 - ``limit`` ("capacity" or "latency",
#: see ``sim.benchmarks.driver.limit_of``) beside each bottleneck, and the unscored points'
#: bottleneck utilisation; 3 - ``fitted`` on each point (the model parameter fitted on it, or
#: null), and the summaries' medians and ``n_points`` over the predicted points only, the fitted
#: ones counted in ``n_fitted`` (the maxima still over every point).
SCHEMA_VERSION = 3
#: The legend of a scored row whose prediction is not converged.
NOT_CONVERGED_NOTE = (
    "* a prediction that is not converged, as pfssim run marks it (its interval is wider than the "
    "precision, or it did not outlast a start; --json gives each such point's not_converged codes)"
)
#: The summary table's columns (console and report).
SUMMARY_COLUMNS = ["", "median |error|", "max |error|", "error range", "points", "out of tolerance", "shapes holding"]
#: What the intervals are, and what they are not (a review: an architect read "+-0.0%" beside a
#: +11% miss as the prediction's uncertainty).
INTERVALS_NOTE = (
    "The 95% intervals are the simulation's own: how precisely it measured the model's steady state "
    "(seed 1). They do not include the model's error against real systems, which the error column "
    "measures; its range per benchmark above (over the predicted points) is how far a prediction of a "
    "like system may be off, and which way."
)
#: The issue's accuracy targets over all scored points.
TARGET_MEDIAN_ABS_ERROR = 0.05
TARGET_MAX_ABS_ERROR = 0.15


# ----------------------------------------------------------------------------------------------- rows


def _pct(value: float | None, signed: bool = True) -> str:
    if value is None:
        return "-"
    return f"{value:+.1%}" if signed else f"{value:.1%}"


def _threads(score: PointScore) -> str:
    point = score.point
    if point.threads is not None:
        return str(point.threads)
    if point.threads_range is not None:
        return f"{point.threads_range[0]}-{point.threads_range[1]}"
    used = score.comparison.threads_used
    return f"({used[0]}-{used[-1]})" if len(used) > 1 else f"({used[0]})"


def point_row(score: PointScore) -> dict[str, str]:
    """One scored point, formatted."""
    c = score.comparison
    unit = score.point.unit
    bench = "mdtest" if score.benchmark.startswith("mdtest") else ""
    peak = ""
    if score.point.kind == "peak":
        peak = f"{format_value(c.peak, unit, bench)} at {c.peak_threads}"
    verdict = "ok" if score.within else "MISS"
    return {
        "id": score.point.id,
        "op": score.point.op,
        # A fitted point says so where its verdict is read: its agreement is by construction.
        "kind": f"{score.point.kind}, fitted" if score.fitted else score.point.kind,
        "threads": _threads(score),
        "published": score.point.value,
        "predicted": format_value(score.predicted, unit, bench),
        # What the run tables show beside a prediction: its interval and what holds it (of the
        # chosen points, the busiest; a mean over several thread counts has their mean interval).
        "95% CI": interval_text(c.predicted, c.ci_low, c.ci_high) + ("" if c.converged else " *"),
        "bottleneck": f"{bottleneck_text(c.bottleneck, c.bottleneck_utilization)} "
        f"({utilization_text(c.bottleneck_utilization)})",
        "error": _pct(score.error),
        "tolerance": f"{score.point.tolerance:.0%}",
        "verdict": verdict,
        "predicted peak": peak,
        "source": score.point.source,
        "quote": score.point.quote or "",
        "how": c.how,
        "note": score.point.note or "",
        "fitted": score.point.fitted or "",
        "why": score.known_miss.why.strip() if (score.known_miss and not score.within) else "",
    }


UNSCORED_COLUMNS = ["op", "threads", "predicted", "95% CI", "bottleneck"]


def unscored_rows(run: UnscoredRun) -> list[dict[str, str]]:
    """The rows of an unscored prediction, as the run tables print them: a not converged point's
    interval marked ``*`` (its points are predictions a reader may act on, as much as scored ones)."""
    return [
        {
            "op": op,
            "threads": str(p.threads),
            "predicted": format_value(p.value, p.unit, p.benchmark),
            "95% CI": interval_text(p.value, p.ci_low, p.ci_high) + ("" if p.converged else " *"),
            "bottleneck": bottleneck_text(p.bottleneck, p.bottleneck_utilization)
            + f" ({utilization_text(p.bottleneck_utilization)})",
        }
        for op, curve in run.curves.items()
        for p in curve
    ]


def shape_row(shape: ShapeScore) -> dict[str, str]:
    """One evaluated shape, formatted."""
    return {
        "id": shape.shape.id,
        "statement": shape.shape.statement,
        "check": shape.shape.check.type,
        "verdict": "ok" if shape.passed else "FAIL",
        "detail": shape.outcome.detail,
        "why": shape.known_miss.why.strip() if (shape.known_miss and not shape.passed) else "",
    }


def summary_row(label: str, summary: ErrorSummary, shapes: Sequence[ShapeScore]) -> dict[str, str]:
    """Median / max absolute error and counts, formatted."""
    return {
        "": label,
        "median |error|": _pct(summary.median_abs_error, signed=False),
        "max |error|": _pct(summary.max_abs_error, signed=False),
        "error range": (
            f"{_pct(summary.error_range[0])} to {_pct(summary.error_range[1])}" if summary.error_range else "-"
        ),
        "points": f"{summary.n_points} + {summary.n_fitted} fitted" if summary.n_fitted else str(summary.n_points),
        "out of tolerance": str(summary.n_out_of_tolerance),
        "shapes holding": f"{sum(1 for s in shapes if s.passed)}/{len(shapes)}",
    }


def summary_rows(repro: Reproduction) -> list[dict[str, str]]:
    """Per system x benchmark, per system, and overall."""
    rows = [summary_row(f"{b.system} {b.benchmark}", b.summary, b.shapes) for b in repro.benchmarks]
    for system in repro.systems:
        benches = [b for b in repro.benchmarks if b.system == system]
        if benches:
            shapes = [s for b in benches for s in b.shapes]
            rows.append(summary_row(f"{system} (all)", repro.system_summary(system), shapes))
    rows.append(summary_row("overall", repro.summary, repro.shapes))
    return rows


def targets_text(repro: Reproduction) -> str:
    """Whether the issue's targets are met, in one sentence."""
    s = repro.summary
    if s.max_abs_error is None:
        return "No scored points."
    failed = len(repro.failed_shapes)
    if s.median_abs_error is None:
        median = f"No predicted point to take a median of (all {s.n_fitted} were fitted on)"
    else:
        median_ok = s.median_abs_error <= TARGET_MEDIAN_ABS_ERROR
        fitted = f" (the {s.n_fitted} points a parameter was fitted on left out)" if s.n_fitted else ""
        median = (
            f"Median |error| {s.median_abs_error:.1%} (target <= {TARGET_MEDIAN_ABS_ERROR:.0%}: "
            f"{'met' if median_ok else 'NOT met'}) over the {s.n_points} predicted points{fitted}"
        )
    max_ok = s.max_abs_error <= TARGET_MAX_ABS_ERROR
    return (
        f"{median}; max |error| {s.max_abs_error:.1%} (target <= {TARGET_MAX_ABS_ERROR:.0%}: "
        f"{'met' if max_ok else 'NOT met'}) and {s.n_out_of_tolerance} of {s.n_points + s.n_fitted} points out of "
        f"tolerance, over every point; {failed} of {len(repro.shapes)} shape checks failing."
    )


def parameter_rows() -> list[dict[str, str]]:
    """The model parameters (sim.params), formatted."""
    return [
        {
            "name": p.name,
            "value": f"{p.value:g}",
            "unit": p.unit,
            "meaning": p.meaning,
            "source": p.source,
            "fitted on": p.fitted_on or "not fitted",
        }
        for p in PARAMETERS.values()
    ]


# ----------------------------------------------------------------------------------------------- JSON


#: ``pfssim reproduce --parameters --json`` schema: 1 - a bare list of parameters (to session 23);
#: 2 - one object, versioned like every other JSON pfssim prints, the list under ``parameters``.
PARAMETERS_SCHEMA_VERSION = 2


def parameters_json() -> dict[str, Any]:
    """The model parameters as one versioned JSON object: each with its value (SI), unit, meaning,
    source and, for a fitted one, the dataset it was fitted on."""
    return {
        "schema_version": PARAMETERS_SCHEMA_VERSION,
        "pfssim_version": __version__,
        "parameters": [
            {
                "name": p.name,
                "value": p.value,
                "unit": p.unit,
                "meaning": p.meaning,
                "source": p.source,
                "fitted_on": p.fitted_on,
            }
            for p in PARAMETERS.values()
        ],
    }


def _summary_json(summary: ErrorSummary) -> dict[str, Any]:
    return {
        "median_abs_error": summary.median_abs_error,
        "max_abs_error": summary.max_abs_error,
        "n_points": summary.n_points,
        "n_fitted": summary.n_fitted,
        "n_out_of_tolerance": summary.n_out_of_tolerance,
        "error_range": list(summary.error_range) if summary.error_range else None,
    }


def _point_json(score: PointScore) -> dict[str, Any]:
    c = score.comparison
    point = score.point
    return {
        "system": score.system,
        "benchmark": score.benchmark,
        "workload": score.workload,
        "id": point.id,
        "op": point.op,
        "kind": point.kind,
        "threads": point.threads,
        "threads_range": list(point.threads_range) if point.threads_range else None,
        "threads_used": list(c.threads_used),
        "published": score.published,
        "published_as_printed": point.value,
        "predicted": score.predicted,
        "ci_low": c.ci_low,
        "ci_high": c.ci_high,
        "unit": point.unit,
        "error": score.error,
        "tolerance": point.tolerance,
        "within_tolerance": score.within,
        "how": c.how,
        "predicted_peak": c.peak,
        "predicted_peak_threads": c.peak_threads,
        "bottleneck": c.bottleneck,
        "bottleneck_utilization": c.bottleneck_utilization,
        "limit": limit_of(c.bottleneck_utilization),
        "source": point.source,
        "quote": point.quote,
        "note": point.note,
        "fitted": point.fitted,
        "known_miss": score.known_miss.why.strip() if score.known_miss else None,
        "converged": c.converged,
        "not_converged": list(c.not_converged),
    }


def to_json(repro: Reproduction) -> dict[str, Any]:
    """The reproduction as one JSON object (SI units; errors as fractions)."""
    return {
        "schema_version": SCHEMA_VERSION,
        "pfssim_version": __version__,
        "seed": SEED,
        "systems": repro.systems,
        "documents": repro.documents,
        "points": [_point_json(p) for p in repro.points],
        "shapes": [
            {
                "system": s.system,
                "benchmark": s.benchmark,
                "id": s.shape.id,
                "statement": s.shape.statement,
                "check": s.shape.check.model_dump(mode="json"),
                "passed": s.passed,
                "detail": s.outcome.detail,
                "known_miss": s.known_miss.why.strip() if s.known_miss else None,
            }
            for s in repro.shapes
        ],
        "benchmarks": [
            {"system": b.system, "benchmark": b.benchmark, "workload": b.workload, **_summary_json(b.summary)}
            for b in repro.benchmarks
        ],
        "summary": {
            **_summary_json(repro.summary),
            "n_shapes": len(repro.shapes),
            "n_shapes_failed": len(repro.failed_shapes),
            "targets": {"median_abs_error": TARGET_MEDIAN_ABS_ERROR, "max_abs_error": TARGET_MAX_ABS_ERROR},
            "simulated_points": repro.simulated_points,
            "wall_seconds": repro.wall_s,
        },
        "pending": [
            {
                "system": p.system,
                "benchmark": p.benchmark,
                "id": p.point.id,
                "op": p.point.op,
                "threads": p.point.threads,
                "published": p.point.published,
                "published_as_printed": p.point.value,
                "source": p.point.source,
                "reason": p.reason,
            }
            for p in repro.pending
        ],
        "unscored": [
            {
                "system": u.system,
                "workload": u.workload,
                "benchmark": u.benchmark,
                "why": u.why,
                "points": [
                    {
                        "op": p.op,
                        "threads": p.threads,
                        "predicted": p.value,
                        "ci_low": p.ci_low,
                        "ci_high": p.ci_high,
                        "unit": p.unit,
                        "bottleneck": p.bottleneck,
                        "bottleneck_utilization": p.bottleneck_utilization,
                        "limit": p.limit,
                        "converged": p.converged,
                        "not_converged": list(p.not_converged),
                    }
                    for curve in u.curves.values()
                    for p in curve
                ],
            }
            for u in repro.unscored
        ],
        "stale_known_misses": [
            {"system": m.system, "benchmark": m.benchmark, "point": m.point, "shape": m.shape}
            for m in repro.stale_misses()
        ],
    }


# ----------------------------------------------------------------------------------------------- terminal

POINT_COLUMNS = [
    "id",
    "op",
    "kind",
    "threads",
    "published",
    "predicted",
    "95% CI",
    "error",
    "tolerance",
    "verdict",
    "bottleneck",
]


def _rich_table(title: str, rows: Sequence[dict[str, str]], columns: Sequence[str]) -> Table:
    table = Table(title=title, title_justify="left")
    for column in columns:
        table.add_column(column, overflow="fold")
    for row in rows:
        style = "red" if row.get("verdict") in ("MISS", "FAIL") else None
        table.add_row(*[escape(row[c]) for c in columns], style=style)
    return table


def render_parameters(console: Console) -> None:
    """The model parameters as a rich table."""
    columns = ["name", "value", "unit", "meaning", "source", "fitted on"]
    console.print(_rich_table("Model parameters (sim/params.py)", parameter_rows(), columns))


def render_console(repro: Reproduction, console: Console) -> None:
    """Per system x benchmark: points and shapes; then misses with their why, unscored predictions, summary."""
    for bench in repro.benchmarks:
        rows = [point_row(p) for p in bench.points]
        console.print(_rich_table(f"{bench.system}: {bench.benchmark} ({bench.workload})", rows, POINT_COLUMNS))
        for row in rows:
            if row["verdict"] == "MISS":
                why = row["why"] or "not in validation/known-misses.yaml: a new miss"
                console.print(f"  [red]{escape(row['id'])}[/red] {row['error']}: {escape(why)}")
        if any(not p.comparison.converged for p in bench.points):
            console.print(NOT_CONVERGED_NOTE)
        shapes = [shape_row(s) for s in bench.shapes]
        if shapes:
            console.print(_rich_table("  shapes", shapes, ["id", "verdict", "detail"]))
            for row in shapes:
                if row["verdict"] == "FAIL":
                    why = row["why"] or "not in validation/known-misses.yaml: a new miss"
                    console.print(f"  [red]{escape(row['id'])}[/red]: {escape(why)}")
    if repro.pending:
        benches = sorted({f"{p.system} {p.benchmark}" for p in repro.pending})
        console.print(
            f"Not scored (pending): {len(repro.pending)} published points of {', '.join(benches)} "
            f"({repro.pending[0].reason})."
        )
    for run in repro.unscored:
        title = f"{run.system}: {run.workload} - prediction, not scored ({run.why})"
        console.print(_rich_table(title, unscored_rows(run), UNSCORED_COLUMNS))
        if any(not p.converged for curve in run.curves.values() for p in curve):
            console.print(NOT_CONVERGED_NOTE)
    console.print(_rich_table("Summary", summary_rows(repro), SUMMARY_COLUMNS))
    console.print(targets_text(repro))
    console.print(INTERVALS_NOTE)
    stale = repro.stale_misses()
    if stale:
        names = ", ".join(f"{m.system}/{m.benchmark}/{m.point or m.shape}" for m in stale)
        console.print(f"[yellow]known misses that now pass (remove them from validation/known-misses.yaml): {names}")
    console.print(f"{repro.simulated_points} points simulated in {repro.wall_s:.0f} s (seed {SEED})")
