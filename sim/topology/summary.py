"""What ``pfssim show`` reports about a system: parts by kind, targets, capacity and ceilings."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sim import __version__
from sim.topology.bounds import Bound, max_flow_bound
from sim.topology.capacity import Capacity, capacity
from sim.topology.model import System


@dataclass(frozen=True)
class Summary:
    """A system's static figures, before any simulation."""

    system: System
    capacity: Capacity
    read: Bound
    write: Bound

    def parts_by_model(self) -> list[tuple[str, str, int]]:
        """(kind, model, count) for every physical part, most numerous first within a kind."""
        counts: dict[tuple[str, str], int] = {}
        for c in self.system.components.values():
            if c.kind in ("numa", "service"):
                continue
            key = (c.kind, c.model or "")
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

        A run measures a part directly (a drive) or through what it owns, named by a suffix: a
        link's directions (``.tx`` towards the switch, ``.rx`` from it; a PCIe switch uplink's
        ``.up``/``.down``), a NUMA zone's or node's cores (``.cpu``), an ME4 controller's ``.read``
        and ``.write`` paths and ``.commands``, a storage target's or metadata service's
        ``.workers`` (and ``.direct-worker``), a GPFS client's ``.gpfs-daemon``, ``.prefetch-threads``,
        ``.write-behind`` and application ``.threadN``, a GPFS server's NSD ``.threads``. A client's
        connections to a service are the pool ``client->service``.
        """
        return [
            {"name": c.name, "kind": c.kind, "model": c.model}
            for c in sorted(self.system.components.values(), key=lambda c: c.name)
        ]

    def to_json(self) -> dict[str, Any]:
        """The ``pfssim show --json`` object (SI units)."""
        s = self.system
        return {
            "schema_version": 1,
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
                "read_bottleneck_parts": [p for b in self.read.bottlenecks for p in b.parts],
                "write_bottleneck_parts": [p for b in self.write.bottlenecks for p in b.parts],
            },
        }


def summarize(system: System) -> Summary:
    """Compute capacity and both max-flow bounds."""
    return Summary(system, capacity(system), max_flow_bound(system, "read"), max_flow_bound(system, "write"))
