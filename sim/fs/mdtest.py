"""The mdtest walk both metadata models share: which file of which directory each task works on.

mdtest runs its phases one after the other with a barrier between them (directory phases first,
unless ``-F``, then file phases, unless ``-D``); in a phase every task goes through its
directories in order and, in each, through its items (the files, or the directories it makes). A point
of pfssim simulates one phase in steady state: every task loops over its own walk without end,
starting at a random place in it (so the tasks are spread over their directories as they are in
the middle of a real phase; without ``-u`` all tasks start at one place of the shared tree, as
they leave mdtest's barrier together), and every finished operation is one completion.

What mdtest prints for a phase is the slowest task's rate times the number of tasks, which with
its barriers is the total number of items over the phase's wall time. pfssim's tasks are
statistically identical (the same walk, the same kind of directories, placed evenly over the
clients), so the driver reports the steady-state aggregate rate less the last task's expected lag
(divided by 1 + delta z_N, ``sim/benchmarks/straggler.py``); see ``docs/design.md`` (MDtest) for
where this stops being true. A phase small enough to simulate
whole is run as mdtest runs it instead (:meth:`MetadataModelBase.start_phase`): every task from
its first file to its last, and mdtest's arithmetic applied to the tasks' times.
"""

from __future__ import annotations

import math
from collections.abc import Generator
from dataclasses import dataclass
from typing import Literal

from simpy.events import Event

from sim.config.system import BeeGFSSpec
from sim.config.workload import MdtestWorkload
from sim.devices.drives import SsdDrive
from sim.engine.rng import Stream
from sim.fs.common import RunContext
from sim.topology.model import System


def data_pieces(system: System, size: float) -> int:
    """Requests a file of ``size`` bytes takes at least: BeeGFS chunks, GPFS blocks (one if empty)."""
    fs = system.spec.filesystem
    unit = fs.chunk_size if isinstance(fs, BeeGFSSpec) else fs.block_size
    return max(math.ceil(size / unit), 1)


@dataclass(frozen=True)
class FileHandleSteps:
    """What each task does to its one file in a file-handle phase (:mod:`sim.fs.handles`): the
    open inside a data benchmark's timing ("" when it is outside, "create" when it makes the
    file), an fsync, a close. ``wrote``: the task wrote the file in the data phase; ``targets``:
    how many of the file's BeeGFS stripe targets its data touched (its fsync and close message
    them)."""

    open: Literal["", "open", "create"]
    fsync: bool
    close: bool
    wrote: bool
    targets: int


#: How many strides (-N) on from its own rank each phase's items were created by (mdtest's names:
#: mk_name rank, stat_name rank + N, read_name rank + 2N, rm_name rank + 3N; directories alike).
_STRIDE_STEPS = {"create": 0, "dir_create": 0, "stat": 1, "dir_stat": 1, "read": 2, "remove": 3, "dir_remove": 3}


class MdtestWalk:
    """The tree of one mdtest run at a thread count: directories per task, files per directory."""

    def __init__(self, ctx: RunContext) -> None:
        workload = ctx.workload
        assert isinstance(workload, MdtestWorkload)
        self.workload = workload
        self.phase = ctx.op
        self.dirs = workload.dirs_per_task(ctx.threads)
        self.per_dir = max(workload.files_per_dir(ctx.threads), 1)
        self.unique = workload.unique_dir
        self.threads = ctx.threads
        # mdtest -N: the k-th phase after the creates (stat 1, read 2, remove 3) works on the items
        # of the task k x stride ranks on: mdtest names them from rank + k * nstride (its stat_name,
        # read_name and rm_name, and with -u the trees one further on each). Until session 33 every
        # phase took one stride, so -N 1 on two nodes read the other node's files where mdtest reads
        # the ones its own node made (a benchmark-semantics review: 8.2K against 257K op/s).
        self.stride = _STRIDE_STEPS[self.phase] * workload.stride

    def owner(self, task: int) -> int:
        """The task that created the items ``task`` works on in this phase (itself without -N)."""
        return (task + self.stride) % self.threads

    def directory(self, task: int, index: int) -> tuple[int, int]:
        """A directory's identity: (owning task, index); without ``-u`` every task shares task 0's tree."""
        return (self.owner(task) if self.unique else 0, index)

    def all_directories(self, threads: int) -> list[tuple[int, int]]:
        """Every directory that holds files, in the order mdtest creates them (task by task)."""
        tasks = range(threads) if self.unique else range(1)
        return [(t, d) for t in tasks for d in range(self.dirs)]


class MetadataModelBase:
    """Closed-loop mdtest tasks; subclasses implement :meth:`operate` for one file operation."""

    #: Operations per measurement batch at least: metadata operations are cheap and their times
    #: vary (exponential service), so a batch needs many of them for its mean to be tight.
    batch_floor = 1000

    def __init__(self, ctx: RunContext) -> None:
        self.ctx = ctx
        self.walk = MdtestWalk(ctx)
        self.workload = self.walk.workload
        self.shared_start = (0, 0)  # without -u: (directory, item) where every task starts, drawn in start()
        #: Set for a file-handle phase: start_phase then runs these steps instead of the mdtest phase.
        self.handle_steps: FileHandleSteps | None = None

    def outstanding(self) -> int:
        """Operations the tasks keep in flight at most (sizes the measurement batches)."""
        return self.ctx.threads

    def pieces_per_call(self) -> int:
        """Data requests one operation of this phase makes at least: its file's bytes (-w for
        create, -e for read) in the file system's units (:func:`data_pieces`), else one."""
        return data_pieces(self.ctx.system, self.workload.data_bytes(self.walk.phase))

    def written_luns(self) -> set[str]:
        """The LUNs this phase writes to (their controller caches start filled, see prefill_fill)."""
        raise NotImplementedError

    def prefill_unit(self, lun: str) -> float:
        """Size of the dirty writes a LUN's cache holds in the phase's steady state: 4 KiB blocks."""
        return 4096.0

    def pilot_luns(self) -> set[str]:
        """LUNs whose write caches start at the point's fill (:attr:`Platform.cache_fill`), which a
        pilot at the watermark watches for a load the destages cannot keep up with (none here: the
        LUNs an mdtest phase writes start where :meth:`prefill_fill` puts them)."""
        return set()

    def prefill_fill(self, lun: str) -> float:
        """How full a LUN's cache starts. On SSDs the destage of small writes outruns the
        controller's command rate, so the cache sits at its flush watermark (half); on HDDs small
        writes are destaged by read-modify-write slower than they arrive under load, so it is full."""
        members = self.ctx.platform.raids[lun].members
        return 0.5 if all(isinstance(m, SsdDrive) for m in members) else 1.0

    def prefill_caches(self) -> None:
        """The write caches of the LUNs the phase writes start full of small writes like its own."""
        stream = self.ctx.streams("cache.prefill")
        platform = self.ctx.platform

        def sampler(lun: str):  # noqa: ANN202 - an (offset, size) sampler per LUN
            unit = self.prefill_unit(lun)
            slots = max(int(platform.raids[lun].capacity // unit), 1)
            return lambda: (stream.integer(slots) * unit, unit)

        platform.prefill_caches_with(sampler, self.written_luns(), self.prefill_fill, swept=True)

    def start(self) -> None:
        """One process per mdtest task."""
        if not self.walk.unique:  # where all tasks of a shared tree start (see _task)
            stream = self.ctx.streams("mdtest.shared-start")
            self.shared_start = (stream.integer(self.walk.dirs), stream.integer(self.walk.per_dir))
        for t in range(self.ctx.threads):
            self.ctx.env.process(self._task(t))

    def start_phase(self, items: int) -> Event:
        """Run the phase as mdtest does: every task from its first file, ``items`` operations, then
        stop. Returns an event that fires when the last task has finished; ``finish[t]`` is when
        task ``t`` did (the phase starts at time 0, mdtest's opening barrier)."""
        env = self.ctx.env
        self.finish = [0.0] * self.ctx.threads
        self._running = self.ctx.threads
        self.all_done = Event(env)
        for t in range(self.ctx.threads):
            env.process(self._finite_task(t, items))
        return self.all_done

    def _finite_task(self, t: int, items: int) -> Generator[Event, object, None]:
        ctx = self.ctx
        stream = ctx.streams(f"thread{t}")
        client = ctx.client_of(t)
        walk = self.walk
        steps = self.handle_steps
        for n in range(items):
            d, i = divmod(n, walk.per_dir)
            directory = walk.directory(t, d % walk.dirs)
            if steps is None:
                yield from self.operate(t, client, directory, i, stream)
            else:
                yield from self.handle(t, client, directory, steps, stream)
            ctx.meter.add(t, 1.0)
        self.finish[t] = ctx.env.now
        self._running -= 1
        if self._running == 0:
            self.all_done.succeed()

    def _task(self, t: int) -> Generator[Event, object, None]:
        ctx = self.ctx
        env = ctx.env
        stream = ctx.streams(f"thread{t}")
        client = ctx.client_of(t)
        walk = self.walk
        # With -u each task has its own tree, so where it is in it does not matter to the others:
        # a random place. Without -u all tasks share the tree and, starting together after
        # mdtest's barrier at the same pace, work in the same directory at the same time: one
        # place for all, drawn once from a stream of its own.
        if walk.unique:
            d = stream.integer(walk.dirs)
            i = stream.integer(walk.per_dir)
        else:
            d, i = self.shared_start
        yield env.timeout(stream.uniform() * 1e-5)  # break lock-step start
        while True:
            yield from self.operate(t, client, walk.directory(t, d), i, stream)
            ctx.meter.add(t, 1.0)
            i += 1
            if i == walk.per_dir:
                i = 0
                d = (d + 1) % walk.dirs

    def operate(
        self, t: int, client: str, directory: tuple[int, int], item: int, stream: Stream
    ) -> Generator[Event, object, None]:
        """One file operation of the phase (create, stat, read or remove) by task ``t``."""
        raise NotImplementedError

    def handle(
        self, t: int, client: str, directory: tuple[int, int], steps: FileHandleSteps, stream: Stream
    ) -> Generator[Event, object, None]:
        """Task ``t``'s open, fsync and close of its data-benchmark file, as ``steps`` says."""
        raise NotImplementedError
