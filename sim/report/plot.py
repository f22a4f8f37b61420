"""Curves of a run (value against threads, with the 95% band), written as PNG or SVG."""

from __future__ import annotations

import io
from pathlib import Path
from textwrap import fill

from sim.benchmarks.driver import PointResult, clients_used, hardware_ceiling
from sim.benchmarks.result import RunResult
from sim.config.workload import AnyWorkload
from sim.errors import PfssimError
from sim.report.files import check_output_file, write_atomic
from sim.report.run import system_label, workload_title

FORMATS = {".png": "png", ".svg": "svg"}


def check_plot_path(path: Path) -> None:
    """Refuse an unsupported extension before any simulation runs."""
    if not path.name or path.name in (".", ".."):
        raise PfssimError("--plot: give a file name ending in .png or .svg")
    if path.is_dir():
        raise PfssimError(f"{path}: --plot: this is a folder; give a file name ending in .png or .svg")
    if path.suffix.lower() not in FORMATS:
        raise PfssimError(f"{path}: --plot: the plot file must end in .png or .svg")
    check_output_file(path, "--plot")


def value_scale(unit: str, benchmark: str) -> tuple[float, str]:
    """How a panel shows a point's values: (divisor, axis unit), GB/s for bandwidth, K IOPS for
    IOzone's and IOR's operations, K op/s for mdtest's (run plots and reproduction figures alike)."""
    if unit == "B/s":
        return 1e9, "GB/s"
    return 1e3, "K op/s" if benchmark == "mdtest" else "K IOPS"


#: Values spanning more than this factor in one panel go on a log axis.
LOG_VALUES_SPAN = 100.0


def log_values(curves: list[list[PointResult]]) -> bool:
    """Whether a panel's values need a log axis: mdtest's (stat and create rates differ by orders of
    magnitude), or any spanning more than :data:`LOG_VALUES_SPAN` (random IOPS from one thread to a
    thousand: on a linear axis the points below 64 threads sat in its bottom seventh, a review)."""
    values = [p.value for curve in curves for p in curve]
    return log_scale(values, any(p.benchmark == "mdtest" for curve in curves for p in curve))


def log_scale(values: list[float], mdtest: bool) -> bool:
    """:func:`log_values` of a panel's plain values (``mdtest``: an mdtest panel)."""
    positive = [v for v in values if v > 0]
    return mdtest or (bool(positive) and max(positive) > LOG_VALUES_SPAN * min(positive))


def thread_axis(ax, log: bool) -> None:  # noqa: ANN001 - a matplotlib Axes
    """Threads on a base-2 log axis labelled 1, 2, 4, ... (every power, not 2^0, 2^2); values on a
    log axis if ``log`` (:func:`log_values`), else linear from zero, so that a step between thread
    counts looks its size."""
    from matplotlib.ticker import FixedLocator, FuncFormatter

    ax.set_xscale("log", base=2)
    low, high = ax.get_xlim()
    powers = [2.0**k for k in range(0, 17) if low <= 2.0**k <= high]
    if powers:
        ax.xaxis.set_major_locator(FixedLocator(powers))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda threads, _: f"{threads:g}"))
    if log:
        ax.set_yscale("log")
    else:
        ax.set_ylim(bottom=0)
    ax.set_xlabel("threads")


def figure(result: RunResult):  # noqa: ANN201 - a matplotlib Figure (matplotlib is imported lazily)
    """One panel per workload: each operation's curve with its 95% band. Points limited by a part are
    filled, latency-bound points hollow; bandwidth panels show the hardware ceiling of ``pfssim
    show`` for each operation as a dashed line, so the curve can be read against what the parts allow:
    at thread counts that leave clients idle (one thread, a workload on one client) the max-flow from
    the clients the threads run on, as a step line, and dotted the even-share ceiling where lower."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from sim.topology.summary import summarize

    workloads = result.workloads
    ceilings: dict[str, float] = {}  # pfssim show's, by op (and "op even" where lower)
    fig, axes = plt.subplots(len(workloads), 1, figsize=(11, 3.6 * len(workloads)), squeeze=False)
    for ax, workload in zip(axes[:, 0], workloads, strict=True):
        for op in workload.point_ops:
            curve = result.curve(workload.name, op)
            if not curve:
                continue
            scale, unit = value_scale(curve[0].unit, workload.benchmark)
            x = [p.threads for p in curve]
            (line,) = ax.plot(x, [p.value / scale for p in curve], label=op)
            color = line.get_color()
            for limit, face in (("capacity", color), ("latency", "none")):
                chosen = [p for p in curve if p.limit == limit]
                if chosen:
                    ax.plot(
                        [p.threads for p in chosen],
                        [p.value / scale for p in chosen],
                        linestyle="none",
                        marker="o",
                        color=color,
                        markerfacecolor=face,
                        gid=f"{op}-{limit}",
                    )
            ax.fill_between(x, [p.ci_low / scale for p in curve], [p.ci_high / scale for p in curve], alpha=0.2)
            mark_not_converged(ax, curve, scale, op)
            if curve[0].unit == "B/s" and op in ("write", "read"):
                if not ceilings:
                    summary = summarize(result.system)
                    ceilings = {"read": summary.read.Bps, "write": summary.write.Bps}
                    for side in ("read", "write"):  # striped data: the even-share ceiling, when lower
                        if summary.even_differs(side):
                            ceilings[f"{side} even"] = (summary.read_even if side == "read" else summary.write_even).Bps
                used = [clients_used(result.system, workload, t) for t in x]
                if all(len(u) == len(result.system.clients) for u in used):
                    ax.axhline(
                        ceilings[op] / scale,
                        color=color,
                        linestyle="--",
                        linewidth=0.8,
                        label=f"{op} ceiling (pfssim show)",
                    )
                else:  # the clients the threads run on, at each thread count where that set changes
                    steps = _ceiling_steps(result, workload, x)
                    ax.plot(
                        steps,
                        [(hardware_ceiling(result.system, workload, op, t) or 0.0) / scale for t in steps],
                        color=color,
                        linestyle="--",
                        linewidth=0.8,
                        drawstyle="steps-post",
                        label=f"{op} ceiling of the clients used (pfssim show: all {len(result.system.clients)})",
                    )
                if f"{op} even" in ceilings:
                    ax.axhline(
                        ceilings[f"{op} even"] / scale,
                        color=color,
                        linestyle=":",
                        linewidth=0.8,
                        label=f"{op} ceiling, an equal share per target",
                    )
            ax.set_ylabel(unit)
        thread_axis(ax, log_values([result.curve(workload.name, op) for op in workload.point_ops]))
        # Names are the user's text: a '$' must not start matplotlib's math mode.
        title = fill(workload_title(system_label(result.system), workload), 80)
        ax.set_title(title.replace("$", r"\$"), fontsize="medium")
        ax.grid(True, alpha=0.3)
        # Beside the panel, not over its curves (an automatic place inside hid points).
        ax.legend(
            title="filled: a part limits; hollow: latency",
            title_fontsize="small",
            fontsize="small",
            loc="upper left",
            bbox_to_anchor=(1.02, 1.0),
            borderaxespad=0.0,
        )
    fig.tight_layout()
    return fig


def mark_not_converged(ax, curve: list[PointResult], scale: float, op: str) -> None:  # noqa: ANN001 - an Axes
    """Ring the points that are not converged, as the tables mark them ``*``: a prediction a reader
    should not take at its interval (a report review found the most striking point of a plot, a
    fall at 512 threads, unconverged and drawn like the others)."""
    loose = [p for p in curve if not p.converged]
    if not loose:
        return
    labels = {line.get_label() for line in ax.get_lines()}
    ax.plot(
        [p.threads for p in loose],
        [p.value / scale for p in loose],
        linestyle="none",
        marker="o",
        markersize=11,
        markerfacecolor="none",
        color="red",  # given, so that the ring takes no colour of the curves' cycle
        gid=f"{op}-not-converged",
        label=None if "not converged (*)" in labels else "not converged (*)",
    )


def _ceiling_steps(result: RunResult, workload: AnyWorkload, x: list[int]) -> list[int]:
    """The thread counts from the first to the last of ``x`` at which the clients the threads run on
    change (and the last), so that a step line of their ceiling changes where the ceiling does:
    drawn between the simulated counts (steps-mid), it showed at 2 threads the ceiling of one
    client where two run (a review of the plots)."""
    steps = [x[0]]
    seen = clients_used(result.system, workload, x[0])
    everyone = len(result.system.clients)
    for t in range(x[0] + 1, x[-1] + 1):
        used = clients_used(result.system, workload, t)
        if used != seen:
            steps.append(t)
            seen = used
        if len(used) == everyone:
            break
    return steps if steps[-1] == x[-1] else [*steps, x[-1]]


def write_plot(result: RunResult, path: Path) -> None:
    """The curves of :func:`figure`, written to ``path``."""
    check_plot_path(path)
    write_figure(figure(result), path)


def write_figure(fig, path: Path) -> None:  # noqa: ANN001 - a matplotlib Figure
    """``fig`` rendered in memory in the format of ``path``'s extension, then written whole (never
    half a file), and closed."""
    import matplotlib.pyplot as plt

    buffer = io.BytesIO()
    try:
        fig.savefig(buffer, format=FORMATS[path.suffix.lower()])
    finally:
        plt.close(fig)
    write_atomic(path, buffer.getvalue())
