"""Raw and usable capacity of a system, computed the way the published documents compute it.

Raw counts every drive of the data tier: members of data RAID groups and the spares of pools that
hold data (hot spares in an ME4084 count; metadata SSDs do not). Usable is the data members' space
of every storage target times the file system's capacity efficiency (its own overhead, given with
its source in the topology: 0.99 for XFS under BeeGFS in the Dell documents, 1.0 where the
document quotes formatted capacity as the RAID capacity), divided by GPFS's data replicas.

The metadata holds a bounded number of files: for BeeGFS the metadata targets' capacity at
``beegfs_mdt_bytes_per_file`` (BeeGFS's rule of thumb); for GPFS the metadata NSDs' (or, without
any, the data NSDs') capacity in inodes, each kept ``metadata_replicas`` times.
"""

from __future__ import annotations

from dataclasses import dataclass

from sim.config.system import BeeGFSSpec, GpfsSpec
from sim.config.units import format_decimal_bytes
from sim.params import value
from sim.topology.model import System


@dataclass(frozen=True)
class Capacity:
    """Capacity in bytes."""

    raw_B: float
    usable_B: float
    efficiency: float
    efficiency_source: str
    metadata_files: float  # files (or inodes) the metadata can hold
    metadata_basis: str  # how that number was reached, for messages and reports


def capacity(system: System) -> Capacity:
    """Raw and usable capacity of the data tier."""
    raw = sum(system.drive_parts[d].capacity for d in system.data_tier_drives)
    efficiency = system.spec.filesystem.capacity_efficiency
    usable = sum(system.groups[t].usable_B for t in system.storage_targets) * efficiency.value
    # GPFS data replication keeps every block data_replicas times.
    usable /= getattr(system.spec.filesystem, "data_replicas", 1)
    files, basis = _metadata_files(system)
    return Capacity(raw, usable, efficiency.value, efficiency.source, files, basis)


def _metadata_files(system: System) -> tuple[float, str]:
    """Files the metadata can hold, and how that follows from the metadata capacity."""
    fs = system.spec.filesystem
    if isinstance(fs, BeeGFSSpec):
        targets = [t for s in system.services.values() if s.kind == "beegfs-meta" for t in s.targets]
        space = sum(system.groups[t].usable_B for t in targets)
        per_file = value("beegfs_mdt_bytes_per_file")
        return space / per_file, f"{format_decimal_bytes(space, 3)} of metadata targets at {per_file:.0f} B per file"
    assert isinstance(fs, GpfsSpec)
    nsds = system.metadata_targets or system.storage_targets
    space = sum(system.groups[t].usable_B for t in nsds)
    replicas = fs.metadata_replicas
    return space / (fs.inode_size * replicas), (
        f"{format_decimal_bytes(space, 3)} of metadata NSDs in {fs.inode_size:.0f} B inodes x {replicas} "
        f"cop{'ies' if replicas > 1 else 'y'}"
    )
