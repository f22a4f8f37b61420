"""Which model simulates a point: the data or metadata model of the topology's file system."""

from __future__ import annotations

from sim.config.system import BeeGFSSpec
from sim.config.workload import MdtestWorkload
from sim.fs.common import RunContext


def model_for(ctx: RunContext):  # noqa: ANN201 - one of the four file-system models
    """The BeeGFS or GPFS model, of its data path or (for mdtest) its metadata path, for ``ctx``."""
    beegfs = isinstance(ctx.system.spec.filesystem, BeeGFSSpec)
    if isinstance(ctx.workload, MdtestWorkload):
        if beegfs:
            from sim.fs.beegfs_meta import BeeGFSMetadataModel

            return BeeGFSMetadataModel(ctx)
        from sim.fs.gpfs_meta import GpfsMetadataModel

        return GpfsMetadataModel(ctx)
    if beegfs:
        from sim.fs.beegfs import BeeGFSModel

        return BeeGFSModel(ctx)
    from sim.fs.gpfs import GpfsModel

    return GpfsModel(ctx)
