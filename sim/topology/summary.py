"""What ``pfssim show`` reports about a system: parts by kind, targets, capacity and ceilings."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sim import __version__
from sim.topology.bounds import Bound, even_share_bound, max_flow_bound
from sim.topology.capacity import Capacity, capacity
from sim.topology.model import System

#: ``pfssim show --json`` schema: 1 - first release; keys added within it (session 24):
#: ``owned_names``, ``filesystem_settings`` and the even-share ceilings (``bounds.*_even_*``).
SHOW_SCHEMA_VERSION = 1

#: How a run names what a part owns, or a pool between parts: (pattern, the kinds of component
#: ``{part}`` may be, what it is). Every name a run's ``bottleneck``, ``utilization``,
#: ``pool_occupancy`` or ``off_path`` gives is a component ``pfssim show --json`` lists or fits one
#: of these (``tests/test_cli.py`` checks it); ``show --json`` gives them as ``owned_names``.
UP_DOWN = ("pcie_switch", "hba", "sas_port")
OWNED_NAMES: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("{part}.tx", ("hca", "switch_link"), "the link's direction towards the switch (from a bundle's first end)"),
    ("{part}.rx", ("hca", "switch_link"), "the link's direction from the switch (towards a bundle's first end)"),
    ("{part}.up", UP_DOWN, "towards the CPU: a PCIe switch's uplink, an HBA's slot, a SAS port"),
    ("{part}.down", UP_DOWN, "from the CPU: a PCIe switch's uplink, an HBA's slot, a SAS port"),
    ("{part}.numa{i}->numa{j}", ("upi",), "the links between a server's sockets, one direction: from zone i to zone j"),
    ("{part}.cpu", ("numa", "server", "client"), "the cores of a NUMA zone, or of a node without zones"),
    ("{part}.read", ("controller",), "an ME4 controller's read data path"),
    ("{part}.write", ("controller",), "an ME4 controller's write data path"),
    ("{part}.commands", ("controller",), "an ME4 controller's command engine (its IOPS)"),
    ("{part}.drives", ("raid_group",), "the drives of a RAID group, by their mean utilisation"),
    ("{part}.workers", ("raid_group", "service"), "pool: a BeeGFS storage target's or metadata service's workers"),
    ("{part}.direct-worker", ("service",), "pool: a BeeGFS metadata service's direct worker"),
    ("{part}.threads", ("service",), "pool: a GPFS NSD server's threads"),
    ("{part}.nsd-queue", ("raid_group",), "pool: the threads of a GPFS NSD's queue on its server"),
    ("{part}.gpfs-daemon", ("client",), "a GPFS client daemon's metadata calls"),
    ("{part}.prefetch-threads", ("client",), "pool: a GPFS client's prefetch threads"),
    ("{part}.write-behind", ("client",), "pool: a GPFS client's write-behind buffers"),
    ("{part}.thread{n}", ("client",), "benchmark thread n of a client (its own copies into GPFS's pagepool)"),
    ("{a}->{b}", ("client", "service"), "pool: a BeeGFS client's connections to a service, or a service's to another"),
    ("mdtest.tree{i}.dir{j}.token", (), "pool: a GPFS directory's token for mdtest's directory j of tree i"),
)


@dataclass(frozen=True)
class Summary:
    """A system's static figures, before any simulation."""

    system: System
    capacity: Capacity
    read: Bound
    write: Bound
    # The same with every storage target taking an equal share, as striping spreads the data.
    read_even: Bound
    write_even: Bound

    def even_differs(self, op: str) -> bool:
        """Whether an equal share per target lowers the ceiling of ``op`` (by more than rounding)."""
        free, even = (self.read, self.read_even) if op == "read" else (self.write, self.write_even)
        return even.Bps < free.Bps * (1 - 1e-9)

    def parts_by_model(self) -> list[tuple[str, str, int]]:
        """(kind, model, count) for every physical part, most numerous first within a kind."""
        counts: dict[tuple[str, str], int] = {}
        for c in self.system.components.values():
            if c.kind == "service":
                continue
            # A server's NUMA zone is one of its CPUs; its UPI is the links between them, not a CPU
            # (listed under the CPU's name alone, six UPIs read as six CPUs: a review of the outputs).
            key = (c.kind, c.model or "")
            if c.kind == "numa":
                key = ("cpu", f"{c.model} ({c.note})" if c.note else c.model or "")
            elif c.kind == "upi":
                key = ("upi", f"{c.note or 'UPI links'} between the sockets, {c.model}")
            counts[key] = counts.get(key, 0) + 1
        return sorted(((k, m, n) for (k, m), n in counts.items()), key=lambda t: (t[0], -t[2], t[1]))

    def services_by_kind(self) -> dict[str, int]:
        """How many services of each kind."""
        counts: dict[str, int] = {}
        for s in self.system.services.values():
            counts[s.kind] = counts.get(s.kind, 0) + 1
        return counts

    def components(self) -> list[dict[str, Any]]:
        """Every named part, in name order: the names a run's utilisation and bottleneck refer to.

        A run measures a part directly (a drive) or through what it owns, named by a suffix (a
        link's ``.tx``, a zone's ``.cpu``, a target's ``.workers``, ...), or names a pool between
        parts (``client->service``): :data:`OWNED_NAMES` lists every such form.
        """
        return [
            {"name": c.name, "kind": c.kind, "model": c.model}
            for c in sorted(self.system.components.values(), key=lambda c: c.name)
        ]

    def to_json(self) -> dict[str, Any]:
        """The ``pfssim show --json`` object (SI units)."""
        s = self.system
        return {
            "schema_version": SHOW_SCHEMA_VERSION,
            "pfssim_version": __version__,
            "name": s.name,
            "title": s.spec.title,
            "file": s.file,
            "filesystem": s.spec.filesystem.kind,
            "benchmarks": list(s.spec.benchmarks),
            "clients": len(s.clients),
            "servers": len(s.servers),
            "storage_targets": len(s.storage_targets),
            "metadata_targets": len(s.metadata_targets),
            "services": self.services_by_kind(),
            "parts": [{"kind": k, "model": m, "count": n} for k, m, n in self.parts_by_model()],
            "components": self.components(),
            "owned_names": [{"pattern": p, "of": list(kinds), "what": what} for p, kinds, what in OWNED_NAMES],
            "capacity": {
                "raw_bytes": self.capacity.raw_B,
                "usable_bytes": self.capacity.usable_B,
                "filesystem_efficiency": self.capacity.efficiency,
                "metadata_files": self.capacity.metadata_files,
            },
            "bounds": {
                "read_Bps": self.read.Bps,
                "write_Bps": self.write.Bps,
                "read_bottleneck": self.read.describe(),
                "write_bottleneck": self.write.describe(),
                "read_bottleneck_parts": self.read.parts,
                "write_bottleneck_parts": self.write.parts,
                "read_even_Bps": self.read_even.Bps,
                "write_even_Bps": self.write_even.Bps,
                "read_even_bottleneck": self.read_even.describe(),
                "write_even_bottleneck": self.write_even.describe(),
                "read_even_bottleneck_parts": self.read_even.parts,
                "write_even_bottleneck_parts": self.write_even.parts,
            },
        }


def summarize(system: System) -> Summary:
    """Compute capacity, both max-flow bounds and both even-share bounds."""
    return Summary(
        system,
        capacity(system),
        max_flow_bound(system, "read"),
        max_flow_bound(system, "write"),
        even_share_bound(system, "read"),
        even_share_bound(system, "write"),
    )
