"""Rich rendering of ``pfssim show``: parts, targets, capacity and the hardware ceilings."""

from __future__ import annotations

from typing import Any

from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table

from sim.config.overrides import parse_setting
from sim.config.system import GpfsSpec
from sim.config.units import Dimension, format_decimal_bytes, format_quantity
from sim.config.yamlio import format_path
from sim.fs.settings import Setting, filesystem_settings
from sim.topology.model import System
from sim.topology.summary import Summary


def show_json(summary: Summary) -> dict[str, Any]:
    """The ``pfssim show --json`` object: the summary and the file-system settings as the model
    runs them, each with its origin (the topology, or the default taken)."""
    settings = [
        {"key": s.key, "value": s.value, "origin": origin(summary.system, s)}
        for s in filesystem_settings(summary.system)
    ]
    # The --set replacements the topology was read with (added within version 1).
    return summary.to_json() | {"filesystem_settings": settings, "set": list(summary.system.settings)}


def origin(system: System, setting: Setting) -> str:
    """Where a file-system setting's value comes from: ``--set`` where a replacement wrote it or a
    mapping holding it (the file's line no longer holds it), else the setting's own origin."""
    for text in system.settings:
        path = parse_setting(text).path
        if path[:1] == ("filesystem",):
            key = format_path(path[1:])
            if setting.key == key or setting.key.startswith((key + ".", key + "[")):
                return "--set"
    return setting.origin


def render_summary(summary: Summary, console: Console) -> None:
    """Print a system summary as tables."""
    s = summary.system
    head = Table.grid(padding=(0, 2))
    head.add_column(style="bold")
    head.add_column()
    head.add_row("system", f"{s.name}: {s.spec.title}")
    head.add_row("file", s.file)
    if s.settings:
        head.add_row("--set", ", ".join(s.settings))
    head.add_row("file system", s.spec.filesystem.kind)
    head.add_row("clients / servers", f"{len(s.clients)} / {len(s.servers)}")
    head.add_row("storage targets", str(len(s.storage_targets)))
    head.add_row("metadata targets", str(len(s.metadata_targets)))
    services = ", ".join(f"{n} x {k}" for k, n in summary.services_by_kind().items())
    head.add_row("services", services or "none")
    head.add_row("default suite", ", ".join(s.spec.benchmarks))

    parts = Table(title="Parts", show_lines=False)
    parts.add_column("kind")
    parts.add_column("model")
    parts.add_column("count", justify="right")
    for kind, model, count in summary.parts_by_model():
        parts.add_row(kind.replace("_", " "), model, str(count))

    cap = summary.capacity
    capacity = Table(title="Capacity", show_header=False)
    capacity.add_column(style="bold")
    capacity.add_column(justify="right")
    capacity.add_row(
        "raw (data tier)", f"{format_decimal_bytes(cap.raw_B)}  ({format_quantity(cap.raw_B, Dimension.SIZE)})"
    )
    capacity.add_row(
        "usable",
        f"{format_decimal_bytes(cap.usable_B)}  ({format_quantity(cap.usable_B, Dimension.SIZE)})",
    )
    capacity.add_row("file-system efficiency", f"{cap.efficiency:g}")
    capacity.add_row("files the metadata holds", f"{_count(cap.metadata_files)}  ({cap.metadata_basis})")

    bounds = Table(title="Hardware ceiling (max-flow, clients -> storage targets)")
    bounds.add_column("op")
    bounds.add_column("ceiling", justify="right")
    bounds.add_column("set by (minimum cut)")
    for bound, even in ((summary.read, summary.read_even), (summary.write, summary.write_even)):
        bounds.add_row(bound.op, format_quantity(bound.Bps, Dimension.BANDWIDTH), bound.describe())
        if summary.even_differs(bound.op):
            bounds.add_row(
                f"{bound.op}, an equal share per target",
                format_quantity(even.Bps, Dimension.BANDWIDTH),
                f"{even.describe()} (striping spreads a benchmark's data evenly over the targets)",
            )

    if s.data_on_hard_disks:
        # A teaching review found the drives named as a run's bottleneck far below this ceiling
        # (pixstor-large reads: 23 GB/s, drives 99.8% busy, ceiling 28 GB/s from the controllers).
        caption = (
            "hard disks count here at their datasheet sequential rate; streams that interleave on a "
            "disk make it seek, and a run can be bound by the disks well below this ceiling"
        )
        fs = s.spec.filesystem
        if isinstance(fs, GpfsSpec) and fs.allocation == "scattered":
            # A teaching review: one reader of one RAID6 8+2 at 5% of this ceiling, the note naming
            # only interleaved streams; scattered blocks make even one stream seek at every block.
            caption += (
                f"; with scattered allocation every {format_quantity(fs.block_size, Dimension.SIZE)} block "
                "lies at a random place on its LUN, so even one stream seeks at every block"
            )
        bounds.caption = caption

    settings = Table(title=f"File-system settings ({s.spec.filesystem.kind}, as the model runs them)")
    settings.add_column("filesystem.")
    settings.add_column("value", justify="right")
    settings.add_column("from")
    for setting in filesystem_settings(s):
        settings.add_row(setting.key, setting.text, origin(s, setting))
    own = "stripe: (chunk_size, num_targets)" if s.spec.filesystem.kind == "beegfs" else "gpfs_pagepool_client:"
    settings.caption = f"a workload file's own {own} replaces the topology's for that workload"

    console.print(Panel(head, title="pfssim show", expand=False))
    console.print(Group(parts, settings, capacity, bounds))


def _count(n: float) -> str:
    """A large count for people: 3.84 billion, 512 million, 40,000."""
    for factor, word in ((1e12, "trillion"), (1e9, "billion"), (1e6, "million")):
        if n >= factor:
            return f"{n / factor:.3g} {word}"
    return f"{n:,.0f}"
