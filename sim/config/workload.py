"""Schema of a workload file (``workloads/*.yaml``): one benchmark run as its document ran it.

A workload is what a benchmark command line means, resolved into the quantities the model needs
(record size, file size per thread, O_DIRECT, operations, thread counts). ``sim.benchmarks.cmdline``
turns real IOzone, IOR and mdtest command lines into the same objects. IOzone and IOR runs are
:class:`Workload`; mdtest runs, which count files rather than bytes, are :class:`MdtestWorkload`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Annotated, Literal, TypeAlias, get_args

from pydantic import BeforeValidator, Field, PrivateAttr, ValidationInfo, field_validator, model_validator
from pydantic.fields import FieldInfo
from pydantic_core import ErrorDetails

from sim.config.quantities import (
    SIZE_VALIDATORS,
    ChunkSize,
    Count,
    Flag,
    Index,
    Model,
    Name,
    Size,
    Text,
    ThreadCount,
    size_validator,
)
from sim.config.units import Dimension, binary_size_hint, format_bytes, parse_quantity
from sim.config.yamlio import SourceMap, format_path
from sim.errors import Problem, WorkloadError

Op = Literal["write", "read", "random_write", "random_read"]
#: The order IOzone runs its tests in (-i 0 write, -i 1 read; -i 2 random readers, then random
#: writers, as its throughput report lists them) and IOR its phases (-w, then -r; with -z at
#: random offsets).
IO_OP_ORDER = ("write", "read", "random_read", "random_write")
IOR_OP_ORDER = ("write", "read", "random_write", "random_read")
#: IOR with -z (random offsets) is ``ior_random_n1`` / ``ior_random_nn``; its points count
#: transfers per second, as IOR's IOPS column does.
Benchmark = Literal["iozone_seq_nn", "iozone_random_nn", "ior_seq_n1", "ior_seq_nn", "ior_random_n1", "ior_random_nn"]
RANDOM_BENCHMARKS = ("iozone_random_nn", "ior_random_n1", "ior_random_nn")


class StripeOverride(Model):
    """File-system striping the benchmark's directory was set to (e.g. ``beegfs-ctl --setpattern``)."""

    num_targets: Annotated[int, Field(ge=1, le=256, strict=True)] | None = None  # DIRINODE_MAX_STRIPE_TARGETS
    chunk_size: ChunkSize | None = None


#: IOzone's own record limits, MINBUFFERSIZE and MAXBUFFERSIZE of iozone.c (128 B and 16 MiB in
#: IOzone 3.430; main() exits with "Maximum record length is 16777216 bytes" above it).
IOZONE_MIN_RECORD = 128
IOZONE_MAX_RECORD = 16 * 2**20


#: The alignment O_DIRECT calls need to be direct: Linux's open(2) asks for transfers in multiples
#: of the device's logical block size, 512 bytes at least, and local file systems refuse others with
#: EINVAL; Spectrum Scale runs an unaligned O_DIRECT call as normal file I/O with O_SYNC (IBM,
#: "Considerations for the use of direct I/O"), a path pfssim does not model either.
O_DIRECT_ALIGNMENT = 512


#: IOR's access unit, ``sizeof(IOR_size_t)`` (a long long): ior.c refuses a transfer or block size
#: that is not a multiple of it ("transfer size must be a multiple of access size").
IOR_ACCESS_SIZE = 8


def ior_size_problem(size: float, what: str) -> str | None:
    """Why IOR would refuse a transfer (``-t``) or block (``-b``) size of ``size`` bytes, or None."""
    if size % IOR_ACCESS_SIZE == 0:
        return None
    return (
        f"IOR needs a {what} size that is a multiple of {IOR_ACCESS_SIZE} B (ior.c: '{what} size must be a "
        f"multiple of access size'); got {format_bytes(size)}"
    )


def iozone_record_problem(record: float) -> str | None:
    """Why IOzone would refuse a record of ``record`` bytes, or None."""
    if IOZONE_MIN_RECORD <= record <= IOZONE_MAX_RECORD:
        return None
    return (
        f"IOzone records are {IOZONE_MIN_RECORD} B to {IOZONE_MAX_RECORD // 2**20} MiB (iozone.c refuses others: "
        f"'Maximum record length is {IOZONE_MAX_RECORD} bytes'); got {format_bytes(record)}"
    )


def at_threads(counts: list[int]) -> str:
    """``at 1 thread`` / ``at 4, 8 threads``: the thread counts a message is about."""
    return f"at {', '.join(map(str, counts))} thread{'' if counts == [1] else 's'}"


class _Located(Model):
    """Where a workload came from, so that a problem found later (its combination with a system)
    can still be given with the file and line of the key it is about."""

    _source: SourceMap | None = PrivateAttr(default=None)

    def locate(self, source: SourceMap) -> None:
        """Remember the file the workload was read from (a frozen model keeps private attributes writable)."""
        self._source = source

    def problem(self, key: str, message: str) -> Problem:
        """``message`` about ``key``, at its line when the workload came from a file."""
        if self._source is not None:
            return self._source.problem((key,), message)
        return Problem(str(getattr(self, "name", "workload")), None, format_path((key,)), message)


#: Where the threads run: ``round_robin`` deals them over every client in file order (IOzone's
#: ``-+m`` host list, ``mpirun --map-by node``); ``one_client`` puts them all on the first client
#: (IOzone without ``-+m`` forks its threads on its own node); ``per_node`` fills the clients in
#: file order with ``per_node`` threads each (``mpirun -npernode N``, ``--map-by ppr:N:node``).
Placement = Literal["round_robin", "one_client", "per_node"]


class _Placed(_Located):
    """Where a workload's threads run: which client each thread is on, and which of that client's
    threads it is (the order its HCAs are dealt in)."""

    placement: Placement = "round_robin"
    per_node: Count | None = None

    @model_validator(mode="after")
    def _per_node_given(self) -> _Placed:
        if self.placement == "per_node" and self.per_node is None:
            raise SettingError("placement", "per_node: N (threads per client) is missing; placement: per_node needs it")
        if self.placement != "per_node" and self.per_node is not None:
            raise SettingError(
                "per_node", f"per_node (threads per client) is for placement: per_node, not {self.placement}"
            )
        return self

    def placed(self, thread: int, clients: int) -> tuple[int, int]:
        """(index of the client ``thread`` runs on, index of the thread among that client's threads)
        for ``clients`` client nodes."""
        if self.placement == "one_client":
            return 0, thread
        if self.per_node is not None:
            return thread // self.per_node, thread % self.per_node
        return thread % clients, thread // clients

    def clients_needed(self, threads: int, clients: int) -> int:
        """Client nodes ``threads`` threads occupy (for ``per_node``, possibly more than there are)."""
        if self.placement == "one_client":
            return 1
        if self.per_node is not None:
            return -(-threads // self.per_node)
        return min(threads, clients)

    def most_on_a_client(self, threads: int, clients: int) -> int:
        """Threads on the busiest client node."""
        if self.placement == "one_client":
            return threads
        if self.per_node is not None:
            return min(threads, self.per_node)
        return -(-threads // clients)


class SettingError(ValueError):
    """A consistency error of a workload about one key (``key``), so loaders can point at its line
    (and ``--cmd`` at the option that sets it)."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(message)
        self.key = key


def setting_key(error: ErrorDetails) -> str | None:
    """The key a pydantic error of a workload model is about, when it is a :class:`SettingError`."""
    cause = (error.get("ctx") or {}).get("error")
    return cause.key if isinstance(cause, SettingError) else None


class Workload(_Placed):
    """One benchmark definition; ``threads`` is the sweep of thread (or MPI task) counts.

    Sizes: give ``file_size`` (bytes per thread, IOzone ``-s`` / IOR ``-b`` x ``-s``) or
    ``aggregate_size`` (split evenly over the threads, as the Dell documents do).
    ``gpfs_pagepool_client`` is the client pagepool the run was made with, when the document set
    it for this benchmark (PixStor's random test: 16 GiB instead of the sequential tests' 32 GiB).
    ``fsync`` is IOzone's ``-e`` / IOR's ``-e``: the flush of each file is inside the timing. There
    is no default: without it, a file that fits in a client cache would be timed as memory copies.
    ``timed_close`` is IOzone's ``-c``: each child's close is inside its timing (IOR always times
    its opens and closes, so it is an IOzone setting; off, as in IOzone, unless given).
    ``max_file_size`` caps the bytes per thread (the high-capacity runs: 768 GB per thread when
    the aggregate split over few threads would exceed it).
    ``segments`` is IOR's ``-s``: each task's bytes are that many blocks (``-b``) of equal size. On
    a shared file (``ior_seq_n1``) segment i holds block i of every task, in task order, so the
    tasks' blocks interleave through the file (ior.c's offset: segment x tasks x block + rank x
    block); with a file per task (``ior_seq_nn``) a task's blocks follow one another, so segments
    only lengthen its file.
    """

    name: Name
    title: Text
    source: Text
    benchmark: Benchmark
    command: Text | None = None
    ops: list[Op] = Field(min_length=1)
    record_size: Size
    direct_io: Flag
    fsync: Flag
    timed_close: Flag = False
    file_size: Size | None = None
    aggregate_size: Size | None = None
    max_file_size: Size | None = None
    threads: list[ThreadCount] = Field(min_length=1)
    segments: Count = 1
    # IOR's -C: each task reads back what the task ``reorder_offset`` nodes on wrote (-Q, default 1),
    # so no read finds its data in its own node's cache unless that offset comes back to its node.
    reorder_tasks: Flag = False
    reorder_offset: Count = 1
    stripe: StripeOverride | None = None
    gpfs_pagepool_client: Size | None = None

    def reads_own_node(self, threads: int, clients: int) -> bool:
        """Whether some task reads data written on its own node: always without IOR's -C; with it,
        when the task whose data a task reads (IOR's rankOffset: ``reorder_offset`` (-Q) times one
        rank for tasks dealt round-robin over the nodes, or times the first node's tasks for tasks
        in blocks per node, modulo the tasks) runs on the same node (a benchmark-semantics review:
        -C -Q 2 on two nodes reads back each node's own data)."""
        if not self.reorder_tasks:
            return True
        shift = 1 if self.per_node is None or self.placement == "one_client" else min(self.per_node, threads)
        offset = (self.reorder_offset * shift) % threads
        return any(
            self.placed(u, clients)[0] == self.placed((u + offset) % threads, clients)[0] for u in range(threads)
        )

    @field_validator("record_size")
    @classmethod
    def _iozone_record(cls, record: float, info: ValidationInfo) -> float:
        benchmark = str(info.data.get("benchmark", ""))
        if benchmark.startswith("iozone") and (problem := iozone_record_problem(record)):
            raise ValueError(problem)
        if benchmark.startswith("ior") and (problem := ior_size_problem(record, "transfer")):
            raise ValueError(problem)
        return record

    @model_validator(mode="after")
    def _consistent(self) -> Workload:
        if (self.file_size is None) == (self.aggregate_size is None):
            raise ValueError("give exactly one of file_size (per thread) and aggregate_size")
        random = {"random_write", "random_read"}
        if self.benchmark in RANDOM_BENCHMARKS and not set(self.ops) <= random:
            raise SettingError("ops", f"{self.benchmark} runs random_write / random_read only")
        if self.benchmark not in RANDOM_BENCHMARKS and set(self.ops) & random:
            raise SettingError("ops", f"{self.benchmark} runs write / read only")
        if len(set(self.ops)) != len(self.ops):
            raise SettingError("ops", "an operation is listed twice")
        ordering = IOR_OP_ORDER if self.benchmark.startswith("ior") else IO_OP_ORDER
        if self.ops != sorted(self.ops, key=ordering.index):
            order = ", ".join(op for op in ordering if op in self.ops)
            raise SettingError("ops", f"list the operations in the order the benchmark runs them: {order}")
        if sorted(self.threads) != self.threads or len(set(self.threads)) != len(self.threads):
            raise SettingError("threads", "threads must be increasing and distinct")
        if self.timed_close and not self.benchmark.startswith("iozone"):
            raise SettingError(
                "timed_close", "timed_close (IOzone's -c) is an IOzone setting: IOR always times its opens and closes"
            )
        if self.segments > 1 and not self.benchmark.startswith("ior"):
            raise SettingError("segments", f"segments (IOR's -s) is an IOR setting; {self.benchmark} has none")
        if self.max_file_size is not None and self.file_size is not None:
            raise SettingError(
                "max_file_size", "max_file_size caps an aggregate_size split; with file_size give the size itself"
            )
        if self.max_file_size is not None and self.max_file_size < self.record_size:
            raise SettingError(
                "max_file_size",
                f"max_file_size ({format_bytes(self.max_file_size)}) is less than one record "
                f"({format_bytes(self.record_size)})",
            )
        if self.gpfs_pagepool_client is not None and self.direct_io:
            raise SettingError(
                "gpfs_pagepool_client",
                "gpfs_pagepool_client is set but direct_io is true: O_DIRECT data bypasses the GPFS pagepool, "
                "so the setting would change nothing; drop it, or set direct_io: false",
            )
        if self.record_size != int(self.record_size):
            raise SettingError(
                "record_size", f"record_size must be a whole number of bytes, got {self.record_size:g} B"
            )
        if self.direct_io and self.record_size % O_DIRECT_ALIGNMENT:
            raise SettingError(
                "record_size",
                f"with direct_io every call must be a whole number of {O_DIRECT_ALIGNMENT}-byte sectors to be "
                "direct (Linux open(2): local file systems refuse others with EINVAL, and GPFS runs them as "
                f"normal I/O with O_SYNC, neither modelled); got {self.record_size:,.0f} B"
                f"{binary_size_hint(self.record_size)}",
            )
        if self.reorder_tasks and not self.benchmark.startswith("ior"):
            raise SettingError(
                "reorder_tasks", f"reorder_tasks (IOR's -C) is an IOR setting; {self.benchmark} has none"
            )
        if self.reorder_offset != 1 and not self.benchmark.startswith("ior"):
            raise SettingError(
                "reorder_offset", f"reorder_offset (IOR's -Q) is an IOR setting; {self.benchmark} has none"
            )
        if self.file_size is not None and self.file_size != int(self.file_size):
            raise SettingError("file_size", f"file_size must be a whole number of bytes, got {self.file_size:,.1f} B")
        if self.file_size is not None:
            if self.file_size < self.record_size:
                raise SettingError(
                    "file_size",
                    f"file_size ({format_bytes(self.file_size)}) is less than one record "
                    f"({format_bytes(self.record_size)})",
                )
            if self.benchmark.startswith("ior") and (self.file_size / self.segments) % self.record_size:
                raise SettingError(
                    "file_size",
                    f"file_size ({format_bytes(self.file_size)}, IOR's -b x -s) must be a whole number of "
                    f"{format_bytes(self.record_size)} transfers"
                    f"{f' in each of its {self.segments} blocks' if self.segments > 1 else ''}, as IOR requires",
                )
        problems = self.thread_problems(self.threads)
        if problems:
            raise SettingError("threads", "; ".join(problems))
        return self

    def thread_problems(self, threads: list[int]) -> list[str]:
        """Why some of ``threads`` cannot run this workload: each thread's file (or block of the shared
        file) must hold at least one record, and for IOR a whole number of transfers (its ``-b`` must
        be a multiple of ``-t``)."""
        problems = []
        short = [count for count in threads if self.file_size_for(count) < self.record_size]
        if short:
            largest = self.given_size_for(short[0])  # as given, before IOzone's whole records
            problems.append(
                f"{at_threads(short)} each thread's file holds less than one record ({format_bytes(self.record_size)}; "
                f"{format_bytes(largest)} {at_threads(short[:1])}); drop those thread counts, or raise the file or "
                "aggregate size"
            )
        if self.benchmark.startswith("ior"):
            uneven = [c for c in threads if c not in short and self.block_for(c) % self.record_size]
            if uneven:
                problems.append(
                    f"{at_threads(uneven)} each task's block "
                    f"({format_bytes(self.block_for(uneven[0]))} "
                    f"at {uneven[0]}) is not a whole number of {format_bytes(self.record_size)} transfers, which IOR "
                    "requires (-b a multiple of -t); choose thread counts that divide the aggregate size into "
                    "whole transfers"
                )
        return problems

    def given_size_for(self, threads: int) -> float:
        """Bytes per thread as the workload gives them: the file size, or the aggregate's share
        (capped by ``max_file_size``)."""
        size = self.file_size if self.file_size is not None else (self.aggregate_size or 0.0) / threads
        return min(size, self.max_file_size) if self.max_file_size is not None else size

    def file_size_for(self, threads: int) -> float:
        """Bytes each thread's file (or its block of the shared file) holds at ``threads`` threads.

        IOzone moves whole records: it takes ``-s`` bytes / ``-r`` bytes records, rounded down
        (iozone.c, ``numrecs64 = (kilobytes64*1024)/reclen``), so an IOzone file holds that many
        whole records (-s 1500k -r 1m: one record, 1 MiB). IOR refuses a block that is not a whole
        number of transfers (checked with the thread counts)."""
        size = self.given_size_for(threads)
        if self.benchmark.startswith("iozone"):
            # The tolerance keeps an aggregate split that is whole records up to rounding (8 TiB / 3
            # threads computed in floats) from losing a record.
            size = math.floor(size / self.record_size + 1e-9) * self.record_size
        return size

    @property
    def shared_file(self) -> bool:
        """IOR without -F: every task works on one shared file."""
        return self.benchmark in ("ior_seq_n1", "ior_random_n1")

    def block_for(self, threads: int) -> float:
        """IOR's ``-b`` at ``threads`` tasks: the bytes of one task in one segment."""
        return self.file_size_for(threads) / self.segments

    @property
    def point_ops(self) -> list[str]:
        """The operation of every point this workload produces, in the order the benchmark runs them."""
        return list(self.ops)

    def with_threads(self, threads: list[int]) -> Workload:
        """The same workload over another thread sweep (``pfssim run --threads``); thread counts the
        workload cannot use are errors."""
        counts = sorted(set(threads))
        problems = self.thread_problems(counts)
        if problems:
            raise WorkloadError([Problem("--threads", None, "", f"{self.name}: {p}") for p in problems])
        return self.model_copy(update={"threads": counts})


# ---------------------------------------------------------------------------------------------- mdtest

MdtestOp = Literal["create", "stat", "read", "remove"]
#: mdtest's file phases in the order it runs them (``-C``, ``-T``, ``-E``, ``-r``).
MDTEST_PHASES: tuple[MdtestOp, ...] = ("create", "stat", "read", "remove")
#: The directory phases (mdtest 3.3: creation, stat, removal; there is no directory read), as
#: point operations: ``dir_create``, ``dir_stat``, ``dir_remove``.
MDTEST_DIR_PHASES: tuple[MdtestOp, ...] = ("create", "stat", "remove")


@size_validator
def _byte_count(value: object) -> float:
    """A size that may be zero (``0 B`` for empty files), in whole bytes."""
    size = parse_quantity(value, Dimension.SIZE, allow_zero=True)
    if size != int(size):
        raise ValueError(f"{value!r} is not a whole number of bytes")
    if size > 2**30:  # mdtest holds the whole -w / -e buffer in memory
        raise ValueError(f"{value!r} is more than 1 GiB per file; pfssim simulates mdtest's small files")
    return size


#: Bytes that may be zero: mdtest's ``-w 0`` / ``-e 0`` (no data, the default).
ByteCount = Annotated[float, BeforeValidator(_byte_count)]


def _tree_dirs(branching: int, depth: int, *, leaves_only: bool = False) -> int:
    """Directories in one mdtest tree: the root plus ``branching`` children per directory, ``depth``
    levels (or only the ``branching ** depth`` leaves). Counted level by level and stopped just past
    :data:`MAX_TREE_DIRS`: -b 10^9 -z 10^8 must not become a number with 900 million digits."""
    total, level = 0, 1
    for _ in range(depth + 1):
        total = level if leaves_only else total + level
        if total > MAX_TREE_DIRS:
            return MAX_TREE_DIRS + 1
        level *= branching
    return total


# The most directories (over all tasks' trees) a simulated MDtest run may have: the model keeps
# each directory's state (about 600 bytes: 2M directories take about 1.2 GB per worker process),
# and -b 10 -z 8 would be a hundred million of them per task.
MAX_TREE_DIRS = 1 << 21


class MdtestWorkload(_Placed):
    """An mdtest run on files: each task creates, stats, reads and removes its files, phase by phase.

    Fields and the mdtest flags they stand for:

    * ``ops``: the phases run, in mdtest's order create, stat, read, remove (``-C -T -E -r``; all four
      when none of them is given).
    * ``threads``: the MPI task counts swept; ``placement: round_robin`` is ``mpirun --map-by node``,
      ``placement: per_node`` with ``per_node: N`` is ``mpirun -npernode N``.
    * ``files_only`` (``-F``): only file phases. When false mdtest first runs its directory phases
      (``dir_create``, ``dir_stat``, ``dir_remove`` for the selected create, stat and remove), then
      the file phases; ``dirs_only`` (``-D``) runs the directory phases alone.
    * ``unique_dir`` (``-u``): every task works in a directory tree of its own; otherwise all tasks
      share one tree.
    * ``branching`` (``-b``, default 1), ``depth`` (``-z``, default 0), ``leaf_only`` (``-L``): the
      shape of each tree; with ``leaf_only`` only the ``branching ** depth`` leaf directories hold files.
    * Files per task, exactly one way:

      - ``items_per_dir`` (``-I``): files in every directory that holds files;
      - ``items`` (``-n``, "every process will creat/stat/read/remove # ... files"): files per task,
        which mdtest spreads evenly over the directories that hold files, rounding down;
      - ``total_files`` with ``items_per_dir``: the Dell documents' rule. The total number of files is
        fixed, each directory holds ``items_per_dir`` and the directories per task follow the thread
        count: ``total_files / threads / items_per_dir``. The tree must then be ``depth: 1`` with
        ``leaf_only``, so the branching factor (``-b $Directories``) *is* the directories per task and
        is derived for each thread count; ``branching`` must be left out.
    * ``write_bytes`` (``-w``) and ``read_bytes`` (``-e``): data written to each file right after it is
      created, and read from it in the read phase (0 B: none; the read phase then only opens and closes).
    * ``sync`` (``-y``): fsync each file after writing it. mdtest attaches the sync to the write, so it
      does nothing when ``write_bytes`` is 0 (see :attr:`fsync_per_file`).
    * ``iterations`` (``-i``): times the whole test is repeated; the document's figures are over these.
    * ``stride`` (``-N``): in the stat, read and remove phases (files and directories) each task
      works on the items of the task 1, 2 and 3 x ``stride`` ranks further on (mdtest's names for
      each phase), not its own (0, the default: its own). Benchmarkers set it to the ranks per node
      so that no node finds the items it works on in its own cache (on more nodes than three: the
      read phase of -N 1 on two nodes reads what its own node made).
    * ``total_files`` is not a mdtest flag: the number of files the document kept fixed (see above).
    """

    name: Name
    title: Text
    source: Text
    benchmark: Literal["mdtest"]
    command: Text | None = None
    ops: list[MdtestOp] = Field(default_factory=lambda: list(MDTEST_PHASES), min_length=1)
    threads: list[ThreadCount] = Field(min_length=1)
    placement: Literal["round_robin", "per_node"] = "round_robin"
    files_only: Flag
    dirs_only: Flag = False
    unique_dir: Flag
    branching: Count | None = None
    depth: Index = 0
    leaf_only: Flag = False
    items_per_dir: Count | None = None
    items: Count | None = None
    total_files: Count | None = None
    write_bytes: ByteCount = 0.0
    read_bytes: ByteCount = 0.0
    sync: Flag = False
    iterations: Count = 1
    stride: Index = 0

    @model_validator(mode="after")
    def _consistent(self) -> MdtestWorkload:
        if len(set(self.ops)) != len(self.ops):
            raise SettingError("ops", "a phase is listed twice")
        if list(self.ops) != [op for op in MDTEST_PHASES if op in self.ops]:
            raise SettingError("ops", f"list the phases in the order mdtest runs them: {', '.join(MDTEST_PHASES)}")
        if self.files_only and self.dirs_only:
            raise SettingError("dirs_only", "files only (-F) and directories only (-D) exclude each other")
        if self.dirs_only and (self.write_bytes or self.read_bytes or self.sync):
            key = "write_bytes" if self.write_bytes else "read_bytes" if self.read_bytes else "sync"
            raise SettingError(
                key, "directories only (-D) make no files, so there is no file data to write, read or sync"
            )
        if not self.point_ops:
            raise SettingError(
                "ops", "directories have no read phase: with dirs_only (-D) select create, stat or remove"
            )
        if sorted(self.threads) != self.threads or len(set(self.threads)) != len(self.threads):
            raise SettingError("threads", "threads must be increasing and distinct")
        if self.total_files is None and self.tree_dirs(1) > MAX_TREE_DIRS:
            raise SettingError(
                "depth" if self.depth > 1 else "branching",
                f"a tree of branching {self.branching or 1} and depth {self.depth} has more than "
                f"{MAX_TREE_DIRS:,} directories, more than pfssim simulates; shrink -b or -z",
            )
        if self.total_files is not None:
            self._check_total_files_rule()
        elif self.items_per_dir is None and self.items is None:
            raise SettingError(
                "items_per_dir",
                "give the files per task: items_per_dir (-I), items (-n), or total_files with items_per_dir",
            )
        elif self.items_per_dir is not None and self.items is not None:
            raise SettingError(
                "items",
                "give items_per_dir (-I) or items (-n), not both: mdtest 1.9 refuses the two together, and later "
                "versions refuse them with -u and otherwise take them together in a way pfssim does not model",
            )
        elif self.items is not None and self.items < self.dirs_per_task(1):
            raise SettingError(
                "items",
                f"items {self.items} (-n) is fewer than the {self.dirs_per_task(1)} directories that hold files, "
                "so mdtest would put no file in any of them; raise items or shrink the tree",
            )
        problems = self.thread_problems(self.threads)
        if problems:
            raise SettingError("threads", "; ".join(problems))
        if "read" in self.ops and self.read_bytes > self.write_bytes:
            if "create" in self.ops:
                why = "mdtest refuses to read more than it wrote"
            else:  # -E without -C: the files come from an earlier run, whose -w pfssim needs to know
                why = (
                    "without the create phase the files are an earlier run's, and pfssim takes them to hold "
                    "write_bytes (-w): give that run's -w"
                )
            raise SettingError(
                "read_bytes",
                f"read_bytes ({format_bytes(self.read_bytes)}) is more than write_bytes "
                f"({format_bytes(self.write_bytes)}); {why}",
            )
        return self

    def _check_total_files_rule(self) -> None:
        if self.items is not None:
            raise SettingError("items", "with total_files give items_per_dir, not items (-n)")
        if self.items_per_dir is None:
            raise SettingError("total_files", "total_files needs items_per_dir (the files in each directory)")
        if self.branching is not None:
            raise SettingError(
                "branching",
                "with total_files the branching factor is derived (total_files / threads / items_per_dir "
                "directories per task); leave branching out",
            )
        if self.depth != 1 or not self.leaf_only:
            raise SettingError(
                "depth" if self.depth != 1 else "leaf_only",
                "total_files needs depth: 1 and leaf_only: true (one level of leaf directories per task, "
                "the -z 1 -L of the documents), so that -b is the number of directories per task",
            )

    def thread_problems(self, threads: list[int]) -> list[str]:
        """Why some of ``threads`` cannot run this workload (empty when all can).

        Under the total_files rule the directories per task, ``total_files / threads /
        items_per_dir``, must come out a whole number of at least 1. And the directories of all
        trees (one per task with ``unique_dir``) must stay within :data:`MAX_TREE_DIRS`.
        """
        if self.total_files is not None:
            per_dir = self.items_per_dir or 1
            bad = [count for count in threads if self.total_files % (count * per_dir)]
            if bad:
                first = bad[0]
                return [
                    f"{at_threads(bad)}, total_files / threads / items_per_dir is not a whole number of "
                    f"directories per task of at least 1 (at {first}: {self.total_files} / {first} / {per_dir} "
                    f"= {self.total_files / first / per_dir:.12g}); drop those thread counts or change total_files"
                ]
        return [
            f"{at_threads([count])} the trees hold {self.all_dirs(count):,} directories, more than the "
            f"{MAX_TREE_DIRS:,} pfssim simulates (the published runs use a few thousand); shrink -b, -z or the "
            "thread count"
            for count in threads
            if self.all_dirs(count) > MAX_TREE_DIRS
        ]

    def all_dirs(self, threads: int) -> int:
        """Directories of every tree at ``threads`` tasks: one tree per task with ``unique_dir``."""
        return self.tree_dirs(threads) * (threads if self.unique_dir else 1)

    def branching_for(self, threads: int) -> int:
        """The ``-b`` the run used at ``threads`` tasks (derived under the total_files rule)."""
        if self.total_files is not None:
            return self.total_files // (threads * (self.items_per_dir or 1))
        return self.branching or 1

    def tree_dirs(self, threads: int) -> int:
        """Directories in one task's tree (with ``unique_dir``) or the shared tree, root included."""
        return _tree_dirs(self.branching_for(threads), self.depth)

    def dirs_per_task(self, threads: int) -> int:
        """Directories that hold files in one tree: the leaves with ``leaf_only``, else every directory.

        This is the "Number of Directories per Thread" of the PixStor document's Table 3.
        """
        if self.leaf_only:
            return _tree_dirs(self.branching_for(threads), self.depth, leaves_only=True)
        return self.tree_dirs(threads)

    def files_per_dir(self, threads: int) -> int:
        """Files each task puts in each directory that holds files (mdtest's ``items_per_dir``)."""
        if self.items_per_dir is not None:
            return self.items_per_dir
        return (self.items or 0) // self.dirs_per_task(threads)

    def items_per_task(self, threads: int) -> int:
        """Files each task creates (and stats, reads, removes) at ``threads`` tasks."""
        return self.files_per_dir(threads) * self.dirs_per_task(threads)

    def total_items(self, threads: int) -> int:
        """Files of all tasks together: ``total_files`` under the documents' rule."""
        return self.items_per_task(threads) * threads

    @property
    def file_bytes(self) -> int:
        """Bytes in each file (``-w``): 0 for empty files, 4096 for ``-w 4K``."""
        return int(self.write_bytes)

    def data_bytes(self, op: str) -> float:
        """The bytes each file moves in phase ``op``: -w in create, -e in read, none otherwise."""
        return {"create": self.write_bytes, "read": self.read_bytes}.get(op, 0.0)

    @property
    def fsync_per_file(self) -> bool:
        """True when each created file is fsynced: ``-y`` with data to write."""
        return self.sync and self.write_bytes > 0

    def phase_rate(self, threads: int, task_seconds: Sequence[float]) -> float:
        """The operations/s mdtest prints for one phase from each task's time in it.

        mdtest divides each task's items by its phase time and reports the slowest task's rate
        times the number of tasks; with the barriers around every phase this is the total number of
        items over the phase's wall time.
        """
        if len(task_seconds) != threads or min(task_seconds, default=0.0) <= 0:
            raise ValueError(f"give one positive phase time per task ({threads} tasks)")
        items = self.items_per_task(threads)
        return min(items / seconds for seconds in task_seconds) * threads

    @property
    def point_ops(self) -> list[str]:
        """The phase of every point, in mdtest's order: directory phases first (unless files only),
        named ``dir_create``, ``dir_stat``, ``dir_remove``, then the file phases (unless directories
        only)."""
        phases = [] if self.files_only else [f"dir_{op}" for op in self.ops if op in MDTEST_DIR_PHASES]
        return phases + ([] if self.dirs_only else list(self.ops))

    def with_threads(self, threads: list[int]) -> MdtestWorkload:
        """The same workload over another thread sweep; thread counts the workload cannot use are errors."""
        counts = sorted(set(threads))
        problems = self.thread_problems(counts)
        if problems:
            raise WorkloadError([Problem("--threads", None, "", f"{self.name}: {p}") for p in problems])
        return self.model_copy(update={"threads": counts})


#: Any workload a file or a command line can hold.
AnyWorkload: TypeAlias = Workload | MdtestWorkload


def _is_size(field: FieldInfo) -> bool:
    """Whether a field holds a size in bytes: one of its validators, or one inside its annotation
    (``Size | None``), is a registered size validator."""
    found = list(field.metadata)
    pending: list[object] = [field.annotation]
    while pending:
        annotation = pending.pop()
        found += getattr(annotation, "__metadata__", ())
        pending += get_args(annotation)
    return any(getattr(item, "func", None) in SIZE_VALIDATORS for item in found)


def size_text(size: float) -> str:
    """A size as a workload file takes it, exactly: ``8 MiB``, ``1536 KiB``, ``1000 B``, ``307.2 B``."""
    return format_bytes(size) if size == int(size) else f"{size!r} B"


def _with_units(model: Model, data: dict[str, object]) -> dict[str, object]:
    fields = type(model).model_fields
    for key, value in data.items():
        inner = getattr(model, key)
        if isinstance(inner, Model) and isinstance(value, dict):
            data[key] = _with_units(inner, value)
        elif isinstance(value, int | float) and not isinstance(value, bool) and _is_size(fields[key]):
            data[key] = size_text(value)
    return data


def workload_file(workload: AnyWorkload) -> dict[str, object]:
    """The workload as a workload file holds it, which ``pfssim run --workload`` reads back as the
    same workload once saved as ``<name>.yaml`` (JSON is YAML): every setting, sizes with a unit
    (exactly; the file format refuses a bare number), unset ones left out. The command line is left
    out too: a file's ``command`` must write its sizes and thread counts as variables, and a
    ``--threads`` sweep replaced the line's own thread count; the run's inputs keep the line."""
    return _with_units(workload, workload.model_dump(mode="json", exclude={"command"}, exclude_none=True))
