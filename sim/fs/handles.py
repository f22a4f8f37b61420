"""The opens, fsyncs and closes inside a data benchmark's timing, simulated as a metadata phase.

IOR's bandwidth is bytes / (last close end - first open start): every task's open, its fsync with
``-e`` (write phases) and its close are timed with the transfers. IOzone opens its files before
its clock starts; with ``-e`` each child's fsync, and with ``-c`` its close, are timed with its
records. What they cost is simulated here as one file per task, all in one directory (IOR's test
directory; IOzone's working directory), every task starting at a barrier, with the metadata model
of the file system (:meth:`~sim.fs.mdtest.MetadataModelBase.handle`):

* the open: a create (open with O_CREAT) for IOR's write phase of a file per task, an open
  otherwise (task 0's one create of a shared file is not told apart); none for IOzone;
* the fsync: BeeGFS sends ``FSyncLocalFileMsg`` to every storage target the task's data is on
  (``tuneRemoteFSync``, default true); GPFS makes one daemon call and, after writes, forces the
  file's new size to the log (one replicated inode write on a metadata NSD);
* the close: BeeGFS asks the directory's metadata service, which closes the chunk files on the
  targets the task used (``CloseChunkFileMsg``, the targets up to the session's highest used
  stripe index) before it answers; GPFS makes one daemon call.

The files are empty to the metadata model: the data phase itself is simulated separately, and the
handle phase only needs how many stripe targets a task's data touched. Each task's time, from the
barrier to its last step's end, is returned; the driver applies each benchmark's arithmetic.
"""

from __future__ import annotations

import math
from typing import Literal

from sim.config.system import BeeGFSSpec
from sim.config.workload import MdtestWorkload, Workload
from sim.engine.core import Environment
from sim.engine.meter import Meter
from sim.engine.rng import Streams
from sim.fs.beegfs import file_stripe
from sim.fs.common import RunContext
from sim.fs.mdtest import FileHandleSteps, MetadataModelBase
from sim.fs.models import model_for
from sim.fs.platform import Platform
from sim.topology.model import System


def handle_steps(system: System, workload: Workload, op: str, threads: int) -> FileHandleSteps | None:
    """What each task's timed open, fsync and close are for this phase; None if nothing is timed."""
    writes = op.endswith("write")
    opening: Literal["", "open", "create"]
    if workload.benchmark.startswith("ior"):
        opening = "create" if writes and not workload.shared_file else "open"
        fsync = workload.fsync and writes  # IOR's -e: fsync as a written file is closed
        close = True
    else:
        opening = ""
        fsync = workload.fsync  # IOzone's -e: the flush ends every timed test
        close = workload.timed_close  # IOzone's -c
    if not opening and not fsync and not close:
        return None
    targets = 0
    fs = system.spec.filesystem
    if isinstance(fs, BeeGFSSpec):
        chunk, count = file_stripe(fs, workload, len(system.storage_targets))
        task_bytes = workload.file_size_for(threads)
        targets = min(count, max(math.ceil(task_bytes / chunk), 1))
    return FileHandleSteps(open=opening, fsync=fsync, close=close, wrote=writes, targets=targets)


def handle_seconds(system: System, workload: Workload, op: str, threads: int, seed: int) -> list[float] | None:
    """Each task's time for its timed open, fsync and close (from a barrier), or None if the
    benchmark times none of them in this phase."""
    steps = handle_steps(system, workload, op, threads)
    if steps is None:
        return None
    one_node = workload.placement == "one_client"
    files = MdtestWorkload(
        name=f"{workload.name}.handles",
        title="the benchmark's timed opens, fsyncs and closes",
        source=workload.source,
        benchmark="mdtest",
        ops=["create" if steps.open == "create" else "read"],
        threads=[threads],
        placement="per_node" if one_node or workload.per_node is not None else "round_robin",
        per_node=threads if one_node else workload.per_node,
        files_only=True,
        unique_dir=False,
        items_per_dir=1,
    )
    env = Environment()
    streams = Streams(seed)
    platform = Platform(env, system, streams)
    ctx = RunContext(env, system, platform, streams, files, files.ops[0], threads, Meter(env, threads))
    model = model_for(ctx)
    assert isinstance(model, MetadataModelBase)
    model.handle_steps = steps
    if steps.open == "create" or (steps.fsync and steps.wrote):
        model.prefill_caches()  # the metadata targets' caches, as in a create phase
    env.run(until=model.start_phase(1))
    return list(model.finish)
