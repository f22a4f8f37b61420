"""How ``pfssim compare`` shows a comparison (:mod:`sim.report.compare`): a table per workload with
the topologies' differences and the cautions above and below it, one versioned JSON object, or
both runs' curves drawn together."""

from __future__ import annotations

import math
from pathlib import Path
from textwrap import fill
from typing import Any

from rich.console import Console
from rich.table import Table

from sim.config.units import Dimension, format_quantity
from sim.report.compare import Comparison, RunFile, TopologyChanges
from sim.report.plot import check_plot_path, log_scale, thread_axis, value_scale, write_figure
from sim.report.run import bottleneck_text

#: Version of ``pfssim compare --json``'s object.
SCHEMA_VERSION = 1


def _percent(change: float) -> str:
    if math.isinf(change):
        return "from 0"
    text = f"{change:+.1%}"
    return "0.0%" if text in ("+0.0%", "-0.0%") else text


def _only(keys: list[tuple[str, str, int]]) -> str:
    """``cmd1 write at 256, 512; read at 256``: points by workload and op."""
    grouped: dict[str, dict[str, list[int]]] = {}
    for workload, op, threads in keys:
        grouped.setdefault(workload, {}).setdefault(op, []).append(threads)
    return "; ".join(
        f"{workload} " + ", ".join(f"{op} at {', '.join(map(str, sorted(counts)))}" for op, counts in ops.items())
        for workload, ops in grouped.items()
    )


def _changes_text(changes: TopologyChanges | None, base: str, other: str) -> list[str]:
    """What differs between the topologies, as lines above the tables."""
    if changes is None:
        return []
    lines = [f"{other} against {base}:"]
    lines += [
        f"  {kind.replace('_', ' ')} {model}: {n} -> {m}".replace("  : ", ": ") for kind, model, n, m in changes.parts
    ]
    for op, (x, y) in changes.ceilings.items():
        lines.append(
            f"  {op} ceiling (pfssim show): {format_quantity(x, Dimension.BANDWIDTH)} -> "
            f"{format_quantity(y, Dimension.BANDWIDTH)}"
        )
    lines += [f"  filesystem.{key}: {x} -> {y}" for key, x, y in changes.settings]
    lines += [
        f"  parts file {name} differs (a part's figures may differ under the same model)"
        for name in changes.parts_files
    ]
    lines += [f"  (not compared: {why})" for why in changes.unread]
    if len(lines) == 1 and changes.spec_differs:
        lines.append(
            "  the systems as simulated differ in what no part count, ceiling, file-system setting or parts file "
            "shows (a part's overrides, a CPU's cores: see the --set replacements or the topology files)"
        )
    elif len(lines) == 1:
        lines.append("  no part count, ceiling, file-system setting or parts file differs")
    return lines


def render_comparison(comparison: Comparison, console: Console) -> None:
    """One table per workload: each point's two predictions, the change and whether it is one."""
    base, other = comparison.labels()
    words = {"same": "the same", "higher": "higher", "lower": "lower"}
    workloads = list(dict.fromkeys(pair.workload for pair in comparison.pairs))
    uncertain = False
    for line in _changes_text(comparison.changes, base, other):
        console.print(line)
    for workload in workloads:
        pairs = [pair for pair in comparison.pairs if pair.workload == workload]
        settings = comparison.base.workloads.get(workload, {})
        # A --cmd workload is named by its place (cmd1): its line says which it is.
        command = settings.get("command") if settings.get("source") == "--cmd" else None
        title = f"{workload} ({pairs[0].benchmark}{': ' + command if command else ''}): {other} against {base}"
        table = Table(title=title)
        for header in ("op", "threads", base, other, "change", "verdict", "bottleneck"):
            table.add_column(
                header,
                justify="right" if header in ("threads", "change") else "left",
                overflow="fold",
                no_wrap=header in ("op", "change"),
            )
        for pair in pairs:
            a = bottleneck_text(pair.base.bottleneck, pair.base.bottleneck_utilization)
            b = bottleneck_text(pair.other.bottleneck, pair.other.bottleneck_utilization)
            verdict = words[comparison.verdict(pair)]
            if verdict != "the same" and not (pair.base.converged and pair.other.converged):
                verdict += "?"
                uncertain = True
            table.add_row(
                pair.op,
                str(pair.threads),
                pair.base.text(pair.unit, pair.benchmark),
                pair.other.text(pair.unit, pair.benchmark),
                _percent(pair.change),
                verdict,
                f"{a} -> {b}" if pair.moved else b,
            )
        console.print(table)
    console.print(
        "a change is higher or lower only where the two 95% intervals do not overlap and it is larger than "
        f"the runs' precision (±{comparison.resolution:.1%}, the resolution they were run to): an interval is its "
        "run's own, and a point held at a fixed rate has almost none; run both with a smaller --precision to "
        "look closer. The bottleneck is the other run's, with an arrow from the base run's where it moved (to a "
        "part the base run held less busy: among equally busy parts the one named is any of them)"
    )
    if uncertain:
        console.print("?: a point that is not converged in its run: the verdict rests on an interval it did not reach")
    if any(not (p.base.converged and p.other.converged) for p in comparison.pairs):
        console.print("*: a point that is not converged in its run (pfssim run says why; --json: not_converged)")
    for caution in comparison.cautions():
        console.print(caution)
    for side, keys in ((comparison.base.path, comparison.only_base), (comparison.other.path, comparison.only_other)):
        if keys:
            console.print(f"only in {side}: {_only(keys)}")


def comparison_json(comparison: Comparison) -> dict[str, Any]:
    """The comparison as one JSON object (SI units; changes as fractions)."""

    def run(side: RunFile) -> dict[str, Any]:
        return {
            "topology": side.topology,
            "file": side.topology_file,
            "result": str(side.path),
            "set": list(side.settings),
            "seed": side.seed,
            "precision": side.precision,
        }

    return {
        "schema_version": SCHEMA_VERSION,
        "base": run(comparison.base),
        "other": run(comparison.other),
        "resolution": comparison.resolution,
        "topology_changes": None
        if comparison.changes is None
        else {
            "parts": [{"kind": k, "model": m, "base": n, "other": o} for k, m, n, o in comparison.changes.parts],
            "ceilings": {op: {"base": x, "other": y} for op, (x, y) in comparison.changes.ceilings.items()},
            "filesystem": [{"key": k, "base": x, "other": y} for k, x, y in comparison.changes.settings],
            "parts_files": comparison.changes.parts_files,
            "spec_differs": comparison.changes.spec_differs,
            "unread": comparison.changes.unread,
        },
        "cautions": comparison.cautions(),
        "points": [
            {
                "workload": p.workload,
                "benchmark": p.benchmark,
                "op": p.op,
                "threads": p.threads,
                "unit": p.unit,
                "base": p.base.json(),
                "other": p.other.json(),
                "change": None if math.isinf(p.change) else p.change,
                "verdict": comparison.verdict(p),
                "bottleneck_moved": p.moved,
            }
            for p in comparison.pairs
        ],
        "only_base": [{"workload": w, "op": op, "threads": t} for w, op, t in comparison.only_base],
        "only_other": [{"workload": w, "op": op, "threads": t} for w, op, t in comparison.only_other],
    }


def comparison_figure(comparison: Comparison):  # noqa: ANN201 - a matplotlib Figure (imported lazily)
    """One panel per workload: each operation's two curves with their 95% bands, the base run's
    solid and the other's dashed, points not converged ringed in red, as ``pfssim run --plot``
    rings them."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    base, other = comparison.labels()
    workloads = list(dict.fromkeys(pair.workload for pair in comparison.pairs))
    fig, axes = plt.subplots(len(workloads), 1, figsize=(11, 3.6 * len(workloads)), squeeze=False)
    for ax, workload in zip(axes[:, 0], workloads, strict=True):
        pairs = [pair for pair in comparison.pairs if pair.workload == workload]
        scale, unit = value_scale(pairs[0].unit, pairs[0].benchmark)
        values = []
        for op in dict.fromkeys(pair.op for pair in pairs):
            curve = sorted((pair for pair in pairs if pair.op == op), key=lambda pair: pair.threads)
            x = [pair.threads for pair in curve]
            color = None
            for label, style, sides in ((base, "-", [p.base for p in curve]), (other, "--", [p.other for p in curve])):
                (line,) = ax.plot(
                    x, [s.value / scale for s in sides], style, marker="o", color=color, label=f"{op}, {label}"
                )
                color = line.get_color()
                ax.fill_between(
                    x, [s.ci_low / scale for s in sides], [s.ci_high / scale for s in sides], color=color, alpha=0.15
                )
                loose = [(t, s) for t, s in zip(x, sides, strict=True) if not s.converged]
                if loose:
                    ax.plot([t for t, _ in loose], [s.value / scale for _, s in loose], linestyle="none", marker="o",
                            markersize=11, markerfacecolor="none", color="red")  # fmt: skip
                values += [s.value for s in sides]
        thread_axis(ax, log_scale(values, pairs[0].benchmark == "mdtest"))
        ax.set_ylabel(unit)
        ax.set_title(
            fill(f"{workload}: {other} (dashed) against {base} (solid)", 80).replace("$", r"\$"), fontsize="medium"
        )
        ax.grid(True, alpha=0.3)
        ax.legend(title="red ring: not converged", title_fontsize="small", fontsize="small", loc="upper left",
                  bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0)  # fmt: skip
    fig.tight_layout()
    return fig


def write_comparison_plot(comparison: Comparison, path: Path) -> None:
    """The curves of :func:`comparison_figure`, written to ``path``."""
    check_plot_path(path)
    write_figure(comparison_figure(comparison), path)
