"""Figures of a reproduction: one per system x benchmark, predicted curves with their 95% band and the
published points marked (:func:`_draw_published`: within or out of tolerance, fitted, with or
without a published thread count); unscored predictions get the curves alone, titled as predictions.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from pathlib import Path

from sim.benchmarks.driver import PointResult
from sim.report.files import write_all
from sim.report.plot import log_values, mark_not_converged, thread_axis, value_scale
from sim.validation.score import BenchmarkScore, PointScore, UnscoredRun


def _draw_curves(ax, curves: dict[str, list[PointResult]]) -> dict[str, str]:  # noqa: ANN001 - matplotlib Axes
    colours: dict[str, str] = {}
    for op, curve in curves.items():
        if not curve:
            continue
        scale, unit = value_scale(curve[0].unit, curve[0].benchmark)
        x = [p.threads for p in curve]
        (line,) = ax.plot(x, [p.value / scale for p in curve], marker=".", label=f"{op} (predicted)")
        ax.fill_between(
            x, [p.ci_low / scale for p in curve], [p.ci_high / scale for p in curve], alpha=0.2, color=line.get_color()
        )
        colours[op] = line.get_color()
        mark_not_converged(ax, curve, scale, op)
        # The hardware ceiling of the clients each point's threads run on, as pfssim run's plots
        # draw it (bandwidth points carry it; a report review found these plots without one).
        if all(p.ceiling_Bps for p in curve):
            ax.step(
                x,
                [(p.ceiling_Bps or 0.0) / scale for p in curve],
                where="mid",
                linestyle="--",
                linewidth=1,
                color=line.get_color(),
                alpha=0.6,
                label=f"{op} hardware ceiling (pfssim show, clients used)",
            )
        ax.set_ylabel(unit)
    ax.grid(True, alpha=0.3)
    return colours


def _axes(ax, curves: dict[str, list[PointResult]]) -> None:  # noqa: ANN001 - matplotlib Axes
    """The run plots' axes (1, 2, 4, ... threads; linear values from zero), set once everything is
    drawn: fixed earlier, they clipped the published points above the curves (a review)."""
    thread_axis(ax, log_values(list(curves.values())))


def _draw_published(ax, points: Sequence[PointScore], colours: dict[str, str]) -> None:  # noqa: ANN001
    """The published points: a circle within tolerance, a cross outside, a square where a model
    parameter was fitted on the point (its agreement is by construction); filled where the document
    gives the thread count, hollow where it gives none and the point stands at the prediction it is
    compared with (the curve's peak, or the middle of the range it is compared over, drawn as a
    line: dashed within tolerance, dotted outside). A report review found fitted points drawn as
    validated ones, and placed points as measured there."""
    labelled: set[str] = set()

    def once(label: str) -> str | None:
        if label in labelled:
            return None
        labelled.add(label)
        return label

    for score in points:
        scale, _ = value_scale(score.point.unit, "")  # the divisor alone: the same for every rate
        y = score.published / scale
        colour = colours.get(score.point.op, "black")
        used = score.comparison.threads_used
        if len(used) > 1:
            ax.hlines(
                y,
                used[0],
                used[-1],
                colors=colour,
                linestyles="--" if score.within else ":",
                linewidth=2,
                label=once("published, compared with the mean over this range"),
            )
            x = (used[0] * used[-1]) ** 0.5
        else:
            x = used[0]
        if score.fitted:
            marker, label = "s", "published, a parameter fitted on it"
        elif score.within:
            marker, label = "o", "published, within tolerance"
        else:
            marker, label = "X", "published, out of tolerance"
        stated = score.point.threads is not None or score.point.threads_range is not None
        ax.scatter(
            [x],
            [y],
            marker=marker,
            s=60,
            color=colour if stated else "none",
            edgecolors=colour if not stated else "black",
            linewidths=1.5,
            zorder=5,
            label=once(label),
        )
        if not stated:
            ax.scatter(
                [],
                [],
                marker="o",
                s=60,
                color="none",
                edgecolors="grey",
                label=once("hollow: no thread count published, drawn where compared"),
            )


def _png(fig) -> bytes:  # noqa: ANN001 - matplotlib Figure
    import matplotlib.pyplot as plt

    buffer = io.BytesIO()
    try:
        fig.tight_layout()
        fig.savefig(buffer, format="png", dpi=110)
    finally:
        plt.close(fig)
    return buffer.getvalue()


def _figure():  # noqa: ANN202 - (Figure, Axes)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt.subplots(figsize=(7, 4))


def benchmark_png(bench: BenchmarkScore) -> bytes:
    """The figure of one scored system x benchmark, as PNG bytes."""
    fig, ax = _figure()
    colours = _draw_curves(ax, bench.curves)
    _draw_published(ax, bench.points, colours)
    _axes(ax, bench.curves)
    ax.set_title(f"{bench.system}: {bench.benchmark} ({bench.workload})", fontsize=10)
    ax.legend(fontsize=8)
    return _png(fig)


def unscored_png(run: UnscoredRun) -> bytes:
    """The figure of one unscored prediction, as PNG bytes."""
    fig, ax = _figure()
    _draw_curves(ax, run.curves)
    _axes(ax, run.curves)
    ax.set_title(f"{run.system}: {run.workload} - prediction, not scored", fontsize=10)
    ax.legend(fontsize=8)
    return _png(fig)


def figures(benchmarks: Sequence[BenchmarkScore], unscored: Sequence[UnscoredRun]) -> dict[str, bytes]:
    """Every figure, by name (``<system>-<benchmark>`` or ``<system>-<workload>`` for unscored runs)."""
    result = {f"{b.system}-{b.benchmark}": benchmark_png(b) for b in benchmarks}
    result.update({f"{u.system}-{u.workload}": unscored_png(u) for u in unscored})
    return result


def write_figures(directory: Path, benchmarks: Sequence[BenchmarkScore], unscored: Sequence[UnscoredRun]) -> list[Path]:
    """Write every figure to ``directory`` as ``<name>.png`` (all or none); returns the paths written."""
    files = {directory / f"{name}.png": data for name, data in figures(benchmarks, unscored).items()}
    write_all(files)
    return list(files)
