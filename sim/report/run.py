"""Rich tables of ``pfssim run`` results: one per workload, a row per point."""

from __future__ import annotations

import math
import re
from pathlib import Path

from rich.console import Console
from rich.table import Table

from sim.benchmarks.driver import LATENCY_BOUND_UTILIZATION, NOT_CONVERGED, POOL_FULL, limit_of
from sim.benchmarks.result import RunResult
from sim.config.system import BeeGFSSpec, GpfsSpec
from sim.config.units import Dimension, format_bytes, format_quantity
from sim.config.workload import AnyWorkload, Workload
from sim.topology.build_base import listing
from sim.topology.model import System


def format_value(value: float, unit: str, benchmark: str = "") -> str:
    """GB/s for bandwidth, K/M IOPS for I/O rates, K/M op/s for mdtest's metadata operations."""
    if unit == "B/s":
        return format_quantity(value, Dimension.BANDWIDTH)
    text = format_quantity(value, Dimension.IOPS)
    return text.replace("IOPS", "op/s") if benchmark == "mdtest" else text


#: Column of the bottleneck in a run table, and the narrowest it is broken to.
BOTTLENECK = 4
MIN_NAME_WIDTH = 10


def _signed_percent(share: float) -> str:
    """A signed percentage with one decimal, and a share that rounds to zero as 0.0%, not -0.0%
    (a review of the outputs found -0.0% in a last-task column)."""
    text = f"{share:+.1%}"
    return "0.0%" if text in ("+0.0%", "-0.0%") else text


def bottleneck_text(bottleneck: str, utilization: float, runs: int = 1, named: int = 1) -> str:
    """The bottleneck as a table shows it: the part, or "latency" and the busiest part when no part
    is half busy (``sim.benchmarks.driver.limit_of``); for a point of several runs that did not all
    name it, how many did."""
    if limit_of(utilization) == "latency":
        text = f"latency; busiest {bottleneck}" if bottleneck else "latency"
    else:
        text = bottleneck
    return f"{text} ({named} of {runs} runs)" if named < runs else text


def break_at_dots(text: str, width: int) -> str:
    """``text`` with line breaks at spaces, and after dots inside a word wider than ``width``, so
    that no line is wider than ``width`` unless one piece is: a dotted part name then wraps between
    its parts instead of mid-word."""
    lines: list[str] = []
    for word in text.split():
        if lines and len(lines[-1]) + 1 + len(word) <= width:
            lines[-1] += " " + word
            continue
        line = ""
        for piece in [word] if len(word) <= width else re.findall(r"[^.]+\.?|\.", word):
            if line and len(line) + len(piece) > width:
                lines.append(line)
                line = ""
            line += piece
        lines.append(line)
    return "\n".join(lines)


#: The smallest share of a benchmark's time spent in timed opens, fsyncs and closes that gets its own column.
OPEN_CLOSE_SHOWN = 0.005


def utilization_text(utilization: float) -> str:
    """A utilisation as the tables print it, in whole percent; one below the latency bound is
    rounded down, so that a latency-bound point never shows its busiest part "50%" busy beside a
    note saying no part is half busy (0.498 did: a newcomer's review)."""
    if utilization < LATENCY_BOUND_UTILIZATION:
        return f"{math.floor(utilization * 100)}%"
    return f"{utilization:.0%}"


def interval_text(value: float, low: float, high: float) -> str:
    """A 95% interval as the tables print it: its half-width relative to the value."""
    half = (high - low) / 2 / value if value else float("inf")
    if 0.0005 <= half < float("inf"):
        # Rounded up to the next 0.1%, so that an interval wider than the precision never shows as
        # within it (+-2.025% read "± 2.0% *" beside a 2% target: a newcomer's review); the 1e-9
        # keeps a width of exactly 2.0% from rounding up on a float's last digit.
        return f"± {math.ceil(half * 1000 - 1e-9) / 10:.1f}%"
    return f"± {half:.1%}"


def system_label(system: System) -> str:
    """How tables and plots name a system: its ``name:``, and its file where the two differ (a
    copy made for a what-if that kept the original's name read exactly as the original did: an
    architect's review)."""
    stem = Path(system.file).stem if system.file else system.name
    label = system.name if stem == system.name else f"{system.name} ({Path(system.file).name})"
    return label + "".join(f" --set {text}" for text in system.settings)


def workload_title(system: str, workload: AnyWorkload) -> str:
    """How a table or a plot panel names a workload: by its name, and a ``--cmd`` line (named
    cmd1, cmd2, ...) by the command too, which is what its user typed."""
    title = f"{system}: {workload.name}"
    if re.fullmatch(r"cmd\d+", workload.name) and workload.command:
        title += f" ({workload.command}"
        # A line swept over --threads runs other counts than its own -t or -np says.
        own = re.search(rf"(^|\s)(-t|-np)\s+{workload.threads[0]}(\s|$)", workload.command)
        if len(workload.threads) > 1 or not own:
            counts = workload.threads
            title += f", at {', '.join(str(t) for t in counts)} thread{'s' if list(counts) != [1] else ''}"
        title += ")"
    return title


def workload_settings(system: System, workload: AnyWorkload) -> list[str]:
    """The file-system settings a workload sets for itself that differ from the topology's (as the
    document's benchmark directory or run had them): a tuner who edits the topology's value
    must see that this workload does not use it."""
    fs = system.spec.filesystem
    if not isinstance(workload, Workload):
        return []
    said: list[str] = []
    if isinstance(fs, BeeGFSSpec) and workload.stripe is not None:
        count, chunk = workload.stripe.num_targets, workload.stripe.chunk_size
        if count is not None and count != fs.num_targets:
            targets = len(system.storage_targets)
            # BeeGFS gives a file fewer targets than asked when the pool has fewer.
            plural = "s" if targets != 1 else ""
            used = f", {targets} used: {system.name} has {targets} target{plural}" if count > targets else ""
            if count < targets and workload.shared_file:
                # One file takes one stripe: the other targets stay idle, however many the system
                # has (an architect's what-if: twice the arrays, the same IOR N-1 figures).
                used = f", its one shared file on {count} of {system.name}'s {targets} targets"
            said.append(f"num_targets {count}{used} (the topology's {fs.num_targets})")
        if chunk is not None and chunk != fs.chunk_size:
            said.append(f"chunk_size {format_bytes(chunk)} (the topology's {format_bytes(fs.chunk_size)})")
    if isinstance(fs, GpfsSpec) and workload.gpfs_pagepool_client not in (None, fs.pagepool.client):
        assert workload.gpfs_pagepool_client is not None
        said.append(
            f"client pagepool {format_bytes(workload.gpfs_pagepool_client)} "
            f"(the topology's {format_bytes(fs.pagepool.client)})"
        )
    return said


def render_run(result: RunResult, console: Console) -> None:
    """Print one table per workload."""
    for workload in result.workloads:
        title = f"{workload_title(system_label(result.system), workload)}, {workload.benchmark}"
        if workload.placement == "one_client":
            title += f", every thread on {result.system.clients[0]}"
        elif workload.per_node is not None:
            title += f", {workload.per_node} per client"
        elif len(result.system.clients) > 1:
            # Said even when the command line gave no mapping (mpirun without one is dealt the same
            # way; docs/design.md, Engine): on a system of several clients the title always says
            # where the threads run.
            title += f", dealt round robin over {len(result.system.clients)} clients"
        table = Table(title=title)
        points = [p for op in workload.point_ops for p in result.curve(workload.name, op)]
        last_task = any(p.last_task_factor is not None for p in points)
        # Timed opens, fsyncs and closes get a column once they cost any point 0.5% (less is within the
        # usual interval).
        open_close = any(p.open_close_share >= OPEN_CLOSE_SHOWN for p in points)
        rows: list[list[str]] = []
        for point in points:
            interval = interval_text(point.value, point.ci_low, point.ci_high)
            if not point.converged:
                interval += " *"
            row = [
                point.op,
                str(point.threads),
                format_value(point.value, point.unit, point.benchmark),
                interval,
                bottleneck_text(
                    point.bottleneck, point.bottleneck_utilization, point.replications, point.bottleneck_runs
                ),
                utilization_text(point.bottleneck_utilization),
            ]
            if last_task:
                factor = point.last_task_factor
                row.append("" if factor is None else _signed_percent(factor - 1))
            if open_close:
                row.append(_signed_percent(-point.open_close_share))
            rows.append(row)
        headers = ["op", "threads", "predicted", "95% CI", "bottleneck", "util."]
        headers += (["last task"] if last_task else []) + (["open/close"] if open_close else [])
        # Part names are dotted paths without spaces: in a narrow console (80 columns when output is
        # not a terminal) they are broken after a dot, not folded mid-word.
        others = sum(max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(headers) if i != BOTTLENECK)
        room = console.width - others - 3 * len(headers) - 1
        for header in headers:
            right = header not in ("op", "bottleneck")
            table.add_column(
                header, justify="right" if right else "left", overflow="fold" if header == "bottleneck" else "ellipsis"
            )
        for row in rows:
            row[BOTTLENECK] = break_at_dots(row[BOTTLENECK], max(room, MIN_NAME_WIDTH))
            table.add_row(*row)
        console.print(table)
        own = workload_settings(result.system, workload)
        fs = result.system.spec.filesystem
        inherits = isinstance(workload, Workload) and (workload.stripe is None or workload.stripe.num_targets is None)
        if isinstance(fs, BeeGFSSpec) and isinstance(workload, Workload) and workload.shared_file and inherits:
            # One shared file takes one stripe: with the topology's few targets it is those targets'
            # rate, whatever the system's (a newcomer's IOR N-1 on beegfs-high-capacity: 1.8 GB/s).
            # Said whenever the count is the topology's, a workload's own chunk size or not.
            count = min(fs.num_targets, len(result.system.storage_targets))
            chunk = (workload.stripe.chunk_size if workload.stripe else None) or fs.chunk_size
            console.print(
                f"{workload.name}'s one shared file is striped over the topology's num_targets: {count} of "
                f"{len(result.system.storage_targets)} targets, in {format_bytes(chunk)} chunks "
                "(a workload file's stripe: sets its own, as the benchmark directory's beegfs-ctl --setpattern)"
            )
        if own:
            key = "gpfs_pagepool_client:" if isinstance(result.system.spec.filesystem, GpfsSpec) else "stripe:"
            console.print(
                f"{workload.name} runs with its own {' and '.join(own)}, as its benchmark was run "
                f"(the workload file's {key}); the topology's setting applies to workloads that set none"
            )
        if last_task:
            console.print(
                "last task: how much the benchmark's own arithmetic lowers the figure from the aggregate rate "
                "(every task moves the same amount; the last to finish sets the figure); the interval "
                "includes this term's uncertainty, which a longer run does not narrow"
            )
        if open_close:
            console.print(
                "open/close: how much the figure is lowered by the time its timed opens, fsyncs and closes take "
                "(IOR's clock runs from the first open to the last close, through -e's fsyncs; IOzone times "
                "each child's fsync with -e and close with -c; simulated as one file per task in one directory)"
            )
    if any(p.limit == "latency" for p in result.points):
        console.print(
            "latency-bound: no part is half busy; the rate is held by the time each request takes "
            "(more requests in flight would raise it)"
        )
    partly = [p for p in result.points if p.limit == "capacity" and p.bottleneck_utilization < POOL_FULL]
    if partly:
        # A lecturer's review: one stream's drive at 65%, named and called capacity-bound, and
        # more threads gave +54%: the utilisation law, U = X D, lets the part alone carry X / U.
        least = min(partly, key=lambda p: p.bottleneck_utilization)
        headroom = 1 / least.bottleneck_utilization - 1
        console.print(
            "a bottleneck below 90% busy holds its point only in part: each request also waits elsewhere, and "
            "by the utilisation law that part alone would allow the figure divided by its utilisation with "
            f"more requests in flight (at {utilization_text(least.bottleneck_utilization)}, up to "
            f"+{math.floor(headroom * 100)}%)"
        )
    if any(p.bottleneck.endswith(".drives") for p in result.points):
        console.print(
            "<group>.drives: the drives of a RAID group (a target or virtual disk), by their mean "
            "utilisation: striping and rotating parity share a group's load among its drives, so "
            "they are judged together (each drive's own figure is in --json)"
        )
        if result.system.data_on_hard_disks:
            console.print(
                "hard disks busy all the time still serve more per busy second with more commands "
                "queued (each picks the nearest of those it sees), so more requests in flight per "
                "target (GPFS's nsd_threads per_queue, BeeGFS's storage workers) can raise their rate"
            )
    if any(p.bottleneck in p.pool_occupancy for p in result.points):
        console.print(
            "a pool as bottleneck (a->b: a client's connections to a service, or a service's messages "
            "to another; .workers: a BeeGFS storage target's or metadata service's worker threads, "
            ".direct-worker its direct worker; GPFS's .threads, .nsd-queue, .prefetch-threads and "
            ".write-behind, and an mdtest directory's .token): its slots are held nine tenths of the time "
            "or more and requests wait for one while no part is as busy; more slots would raise the rate "
            "(its figure is the pool's occupancy)"
        )
    behind = sorted({(p.bottleneck, name) for p in result.points for name in p.full_behind})
    if behind:
        pairs = [f"{name} behind {pool}" for pool, name in behind]
        shown = listing(pairs)
        console.print(
            f"as full behind a named pool: {shown}: a request holding a slot of the named pool found one "
            "of the pool behind it free, so that pool holds the rate too; more slots in the named pool "
            "alone would only move the wait there: raise both (--json: full_behind)"
        )
    busier = sorted(
        {
            name
            for p in result.points
            # A RAID group's drives are shown as the group (<group>.drives) when they are all off the path.
            for name in ([n for n in p.off_path if n.endswith(".drives")] or p.off_path)
            if p.utilization.get(name, 0.0) > p.bottleneck_utilization + 0.005
        }
    )
    if busier:
        shown = listing(busier)
        console.print(
            f"busier than the bottleneck but not named: {shown}: drives behind a write-back cache (an "
            "array's, or an SSD's own buffer) that keeps up write what arrives behind the requests, and "
            "no write waits for them (their figures are in --json, off_path)"
        )
    if any(p.value and (p.ci_high - p.ci_low) / 2 / p.value < 0.0005 for p in result.points):
        console.print(
            "± 0.0%: the bottleneck is busy all the time at a fixed rate (a link's, a controller's or a "
            "drive's rated speed, or a thread's copies at the client's memory rate), so every batch moves "
            "the same amount; the uncertainty is then in that rate, not in the simulation"
        )
    replications = max((p.replications for p in result.points), default=1)
    if replications > 1:
        console.print(
            f"each point is the mean of {replications} independent runs (seeds derived from seed "
            f"{result.seed}: another file layout, other start points and drive phases); its interval "
            f"comes from their spread (Student t, {replications - 1} degree{'' if replications == 2 else 's'} "
            "of freedom)"
        )
    # Each reason once, with the points it applies to (the JSON's not_converged gives them per point).
    reasons: dict[str, list[str]] = {}
    for p in result.points:
        if not p.converged:
            for code in p.not_converged or ("precision",):
                reasons.setdefault(code, []).append(f"{p.workload} {p.op} at {p.threads}")
    for code, where in reasons.items():
        console.print(f"* not converged, {', '.join(where)}: {NOT_CONVERGED[code]}")
    count = len(result.points)
    console.print(f"seed {result.seed}; {count} point{'' if count == 1 else 's'} in {result.wall_s:.1f} s")
