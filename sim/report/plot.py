"""Curves of a run (value against threads, with the 95% band), written as PNG or SVG."""

from __future__ import annotations

import io
from pathlib import Path
from textwrap import fill

from sim.benchmarks.driver import clients_used, hardware_ceiling
from sim.benchmarks.result import RunResult
from sim.errors import PfssimError
from sim.report.files import check_output_file, write_atomic
from sim.report.run import workload_title

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


def figure(result: RunResult):  # noqa: ANN201 - a matplotlib Figure (matplotlib is imported lazily)
    """One panel per workload: each operation's curve with its 95% band. Points limited by a part are
    filled, latency-bound points hollow; bandwidth panels show the hardware ceiling of ``pfssim
    show`` for each operation as a dashed line, so the curve can be read against what the parts allow:
    at thread counts that leave clients idle (one thread, a workload on one client) the max-flow from
    the clients the threads run on, as a step line, and dotted the even-share ceiling where lower."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter

    from sim.topology.summary import summarize

    workloads = result.workloads
    ceilings: dict[str, float] = {}  # pfssim show's, by op (and "op even" where lower)
    fig, axes = plt.subplots(len(workloads), 1, figsize=(7, 3.6 * len(workloads)), squeeze=False)
    for ax, workload in zip(axes[:, 0], workloads, strict=True):
        for op in workload.point_ops:
            curve = result.curve(workload.name, op)
            if not curve:
                continue
            if curve[0].unit == "B/s":
                scale, unit = 1e9, "GB/s"
            else:
                scale, unit = 1e3, "K op/s" if workload.benchmark == "mdtest" else "K IOPS"
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
                else:  # the clients the threads run on, at each thread count
                    ax.plot(
                        x,
                        [(hardware_ceiling(result.system, workload, op, t) or 0.0) / scale for t in x],
                        color=color,
                        linestyle="--",
                        linewidth=0.8,
                        drawstyle="steps-mid",
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
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_formatter(FuncFormatter(lambda threads, _: f"{threads:g}"))  # 1, 2, 4, not 2^0
        if workload.benchmark == "mdtest":
            ax.set_yscale("log")  # stat and create rates differ by orders of magnitude
        else:
            ax.set_ylim(bottom=0)  # from zero, so that a step between thread counts looks its size
        ax.set_xlabel("threads")
        # Names are the user's text: a '$' must not start matplotlib's math mode.
        ax.set_title(fill(workload_title(result.system.name, workload), 80).replace("$", r"\$"), fontsize="medium")
        ax.grid(True, alpha=0.3)
        ax.legend(title="filled: a part limits; hollow: latency", title_fontsize="small", fontsize="small")
    fig.tight_layout()
    return fig


def write_plot(result: RunResult, path: Path) -> None:
    """The curves of :func:`figure`, rendered in memory, then written whole (never half a file)."""
    check_plot_path(path)
    import matplotlib.pyplot as plt

    fig = figure(result)
    buffer = io.BytesIO()
    try:
        fig.savefig(buffer, format=FORMATS[path.suffix.lower()])
    finally:
        plt.close(fig)
    write_atomic(path, buffer.getvalue())
