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
            "capacity": {
                "raw_bytes": self.capacity.raw_B,
                "usable_bytes": self.capacity.usable_B,
                "filesystem_efficiency": self.capacity.efficiency,
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
