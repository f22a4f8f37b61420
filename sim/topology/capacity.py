"""Raw and usable capacity of a system, computed the way the published documents compute it.

Raw counts every drive of the data tier: members of data RAID groups and the spares of pools that
hold data (hot spares in an ME4084 count; metadata SSDs do not). Usable is the data members' space
of every storage target times the file system's capacity efficiency (its own overhead, given with
its source in the topology: 0.99 for XFS under BeeGFS in the Dell documents, 1.0 where the
document quotes formatted capacity as the RAID capacity), divided by GPFS's data replicas.
"""

from __future__ import annotations

from dataclasses import dataclass

from sim.topology.model import System


@dataclass(frozen=True)
class Capacity:
    """Capacity in bytes."""

    raw_B: float
    usable_B: float
    efficiency: float
    efficiency_source: str


def capacity(system: System) -> Capacity:
    """Raw and usable capacity of the data tier."""
    raw = sum(system.drive_parts[d].capacity for d in system.data_tier_drives)
    efficiency = system.spec.filesystem.capacity_efficiency
    usable = sum(system.groups[t].usable_B for t in system.storage_targets) * efficiency.value
    # GPFS data replication keeps every block data_replicas times.
    usable /= getattr(system.spec.filesystem, "data_replicas", 1)
    return Capacity(raw, usable, efficiency.value, efficiency.source)
