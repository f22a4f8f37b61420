"""What a system can run: the refusals made before anything is simulated.

A workload is refused, with a message saying why and what to change, when its files do not fit
in the system's usable capacity, when it sets another file system's options, or when its calls
would take a path pfssim does not model (BeeGFS's client buffer cache for small buffered calls,
GPFS writes timed as copies into a pagepool they fit in).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from sim.config.system import BeeGFSSpec, GpfsSpec, pagepool_too_large
from sim.config.units import format_bytes, format_decimal_bytes
from sim.config.workload import AnyWorkload, MdtestWorkload, Workload, at_threads
from sim.errors import PfssimError, Problem, WorkloadError
from sim.fs.beegfs import file_stripe
from sim.params import value
from sim.topology.capacity import capacity
from sim.topology.model import System


def data_bytes(system: System, workload: AnyWorkload, threads: int) -> float:
    """Bytes a point's files hold (GPFS data replicas are counted in the usable capacity)."""
    if isinstance(workload, MdtestWorkload):
        size = workload.total_items(threads) * workload.write_bytes
    else:  # N-N: a file per thread; N-1: one block of the shared file per task
        size = workload.file_size_for(threads) * threads
    return size


# tuneFileCacheBufSize of the BeeGFS client (beegfs-client.conf default 524288): buffered calls at
# least this large bypass the client's cache (research notes 1.5).
BEEGFS_CACHE_BUF_SIZE = 512 * 1024


#: The most of a file its stream may leave unflushed in the client pagepool when the benchmark stops
#: its clock (no fsync): that tail is written untimed, so the reported rate exceeds the steady state
#: by about tail / (file - tail), here 2%, the default interval's half-width.
UNFLUSHED_TAIL_MAX = 0.02


#: The most of a buffered GPFS call's time that its unmodelled system-call cost may be.
SMALL_CALL_SHARE = 0.02


def _small_call_bytes() -> float:
    """The call size at which a cached GPFS call's cost is :data:`SMALL_CALL_SHARE` of its copy."""
    return value("gpfs_node_meta_call_s") * value("client_memcpy_Bps") / SMALL_CALL_SHARE


def smallest_buffered_gpfs_call() -> float:
    """The smallest buffered sequential GPFS record pfssim predicts: the power of two at which a
    call's unmodelled cost, taken as a cached GPFS call's (``gpfs_node_meta_call_s``, fitted on
    PixStor's mdtest), is at most :data:`SMALL_CALL_SHARE` of its copy at ``client_memcpy_Bps``
    (3.85 us x 10 GB/s / 2% = 1.9 MB: 2 MiB). Below it a thread would be predicted at memory-copy
    speed (10 GB/s for 4 KiB records; a tuning audit)."""
    return float(2 ** math.ceil(math.log2(_small_call_bytes())))


def _pagepool_shares(system: System, workload: Workload, fs: GpfsSpec) -> tuple[float, dict[int, float]]:
    """The client pagepool the workload runs with, and at each thread count the share of it one
    stream of the busiest node gets."""
    pagepool = workload.gpfs_pagepool_client or fs.pagepool.client
    clients = len(system.clients)
    return pagepool, {t: pagepool / workload.most_on_a_client(t, clients) for t in workload.threads}


def _check_unflushed_writes(system: System, workload: Workload, fs: GpfsSpec) -> None:
    """Refuse buffered GPFS sequential writes without fsync whose untimed tail is more than
    :data:`UNFLUSHED_TAIL_MAX` of each file, and random ones whose file fits in the pagepool.

    Without ``-e`` IOzone and IOR stop the clock when the last record is in the pagepool, not on the
    disks. pfssim predicts the write-behind steady state, which is what they report when a file is
    much larger than the pagepool share of its stream: the last share's worth of the file is
    copied into the pagepool and not waited for. A file of S bytes with a share of P is then
    reported at about S / (S - P) times the steady rate, and a file that fits in its share is timed
    as memory copies alone; pfssim models neither, so such a workload is refused (a tuning audit
    found 33 GiB files under 32 GiB pagepools predicted at the flush rate, 22 GB/s, where the
    benchmark would report many times that).
    """
    if not set(workload.ops) & {"write", "random_write"}:
        return
    pagepool, shares = _pagepool_shares(system, workload, fs)
    # Random writes are refused only when a file fits in its share: PixStor's measured random writes
    # (32 GiB files over 16 GiB pagepools, no -e) are flat at the flush rate from one thread on,
    # with no sign of a share's worth of untimed writes.
    tail = UNFLUSHED_TAIL_MAX if "write" in workload.ops else 1.0
    small = [
        t
        for t in workload.threads
        if workload.file_size_for(t) <= shares[t] or shares[t] > tail * workload.file_size_for(t)
    ]
    if small:
        t = small[0]
        size, share = workload.file_size_for(t), shares[t]
        # On IOR's shared file a stream's data is its task's blocks (-b x -s), not a file of its own.
        shared = workload.benchmark.endswith("_n1")
        each, files = ("each task's blocks (-b x -s)", "blocks") if shared else ("each file", "files")
        # Random writes need only be larger than the share; sequential ones 1 / tail times it.
        least = (
            f"larger than {format_bytes(share)}"
            if tail == 1.0
            else f"of at least {format_bytes(math.ceil(share / tail / 2**20) * 2**20)}"
        )
        # With fsync the reads of files that fit their share would be refused next (found in the
        # pagepool, _check_cached_reads): then only larger files help (a tuning review).
        advice = f"add fsync (-e), or use {files} {least}"
        if _cached_read_threads(system, workload, shares):
            advice = f"use {files} {least} (with fsync alone, the reads would find the {files} in the pagepool)"
        if size <= share:
            what = (
                f"{each} {'fit' if shared else 'fits'} in its stream's share of the "
                f"{format_bytes(pagepool)} client pagepool "
                f"({format_bytes(size)} in {format_bytes(share)} at {t}), so without fsync (-e) the writes "
                "would be timed as copies into memory"
            )
        else:
            what = (
                f"a stream's share of the {format_bytes(pagepool)} client pagepool is more than {tail:.0%} of "
                f"{each} ({format_bytes(share)} of {format_bytes(size)} at {t}), so without fsync (-e) that "
                f"much of {each} is left in the pagepool untimed and the benchmark would report about "
                f"{size / (size - share):.3g} times the write-behind rate"
            )
        raise WorkloadError(
            [
                workload.problem(
                    "fsync",
                    f"{at_threads(small)} {what}, which pfssim does not model (it predicts the write-behind "
                    f"steady state); {advice}",
                )
            ]
        )


def _check_stream_buffers(system: System, workload: Workload, fs: GpfsSpec) -> None:
    """Refuse buffered sequential GPFS runs whose busiest node has more streams than block buffers in
    its pagepool.

    pfssim gives each buffered stream at least one block of the pagepool to read ahead into or write
    behind from; a node whose streams need more than its pagepool holds would make them wait for
    buffers, which is not modelled, and was predicted as if each had its block (64 MiB of pagepool
    for 16 streams of 8 MiB blocks ran at the rate of 32 GiB, a GPFS specialist's review)."""
    if "random" in workload.benchmark:  # random calls are not streams read ahead or written behind
        return
    pagepool = workload.gpfs_pagepool_client or fs.pagepool.client
    clients = max(len(system.clients), 1)
    crowded = [t for t in workload.threads if workload.most_on_a_client(t, clients) * fs.block_size > pagepool]
    if crowded:
        t = crowded[0]
        streams = workload.most_on_a_client(t, clients)
        raise WorkloadError(
            [
                workload.problem(
                    "gpfs_pagepool_client" if workload.gpfs_pagepool_client else "threads",
                    f"{at_threads(crowded)} a node runs {streams} buffered streams, which need one "
                    f"{format_bytes(fs.block_size)} block buffer each ({format_bytes(streams * fs.block_size)} at "
                    f"{t}), more than its {format_bytes(pagepool)} client pagepool holds: they would wait for "
                    "buffers, which pfssim does not model; use fewer threads per node, a larger pagepool, or "
                    "O_DIRECT",
                )
            ]
        )


def _cached_read_threads(system: System, workload: Workload, shares: dict[int, float]) -> list[int]:
    """The thread counts at which the workload's reads find its files in their stream's share of the
    client pagepool (``shares``, by thread count): none when it does not read."""
    if not any(op in ("read", "random_read") for op in workload.ops):
        return []
    clients = len(system.clients)
    # With -C a task reads another node's data, when the tasks are on more than one node and -Q's
    # offset does not bring any of them back to its own.
    elsewhere = {t for t in workload.threads if not workload.reads_own_node(t, clients)}
    return [t for t in workload.threads if workload.file_size_for(t) <= shares[t] and t not in elsewhere]


def _check_cached_reads(system: System, workload: Workload, fs: GpfsSpec) -> None:
    """Refuse buffered GPFS reads of files that fit in their stream's share of the client pagepool.

    Such a file is in the pagepool when it is read: the benchmark's own write phase (or an earlier
    read) left it there, and GPFS keeps it for as long as nothing else needs the room. Its reads are
    then memory copies, each with a call's cost pfssim does not model: sequential reads were
    predicted at the drives' rate as if nothing were cached, and 4 KiB random reads at 2.4 million
    IOPS from one thread, copies alone (a newcomer's audit, session 24). IOR's ``-C`` (each task
    reads what a task on another node wrote) defeats the cache, as the documents' files of twice
    the pagepool do, and such reads are modelled.
    """
    reads = [op for op in workload.ops if op in ("read", "random_read")]
    if not reads:
        return
    pagepool, shares = _pagepool_shares(system, workload, fs)
    cached = _cached_read_threads(system, workload, shares)
    if not cached:
        return
    t = cached[0]
    shared = workload.benchmark.endswith("_n1")
    each, fits, it = ("each task's blocks (-b x -s)", "fit", "them") if shared else ("each file", "fits", "it")
    if not workload.benchmark.startswith("ior"):
        other = " or O_DIRECT (-I)"
    elif workload.reorder_tasks:  # -C given: some task reads its own node's data here
        other = (
            " or O_DIRECT (-B); -C reads another node's data only when the tasks span several nodes and "
            "the task each reads from (-Q nodes on) runs on another node"
        )
    else:
        other = ", O_DIRECT (-B), or -C (each task reads another node's data)"
    raise WorkloadError(
        [
            workload.problem(
                _size_key(workload),
                f"{at_threads(cached)} {each} {fits} in its stream's share of the {format_bytes(pagepool)} client "
                f"pagepool ({format_bytes(workload.file_size_for(t))} in {format_bytes(shares[t])} at {t}), so the "
                f"{' and '.join(reads)} phase finds {it} there, where the write phase or an earlier read left "
                f"{it}: "
                "memory copies, each with a call's cost pfssim does not model; use files larger than the share "
                f"(the documents use twice the pagepool){other}",
            )
        ]
    )


def _check_shared_blocks(workload: Workload, fs: GpfsSpec) -> None:
    """Refuse buffered IOR segments on a GPFS shared file whose blocks hold several tasks' data.

    With ``-s`` above 1 the tasks' blocks (``-b``) interleave through the shared file. When ``-b``
    is not a whole number of file-system blocks, each GPFS block holds pieces of several tasks,
    written from several nodes: their pagepools each flush the whole block after byte-range token
    traffic between the nodes (false sharing), which pfssim does not model. With ``-s 1`` the same
    holds for the GPFS block at each boundary between two tasks, and every task after the first
    starts within a GPFS block, so its buffered blocks each straddle two of the file's (since
    session 34; a GPFS review found ``-b 65540m`` predicted as an aligned ``-b``). O_DIRECT writes
    go to the disks record by record and are modelled.
    """
    if not workload.shared_file or workload.direct_io:
        return
    shared = [t for t in workload.threads if workload.block_for(t) % fs.block_size and (workload.segments > 1 or t > 1)]
    if shared:
        block = workload.block_for(shared[0])
        layout = (
            f"with {workload.segments} segments the GPFS blocks hold several tasks' data"
            if workload.segments > 1
            else "the GPFS block at each boundary between two tasks holds both tasks' data, and each later "
            "task's blocks straddle two of the file's"
        )
        raise WorkloadError(
            [
                workload.problem(
                    "segments"
                    if workload.segments > 1
                    else ("aggregate_size" if workload.aggregate_size is not None else "file_size"),
                    f"{at_threads(shared)} each task's block of the shared file ({block / 2**20:g} MiB "
                    f"{at_threads(shared[:1])}) is not a whole number of {fs.block_size / 2**20:g} MiB GPFS "
                    f"blocks, so {layout}, which their nodes' pagepools write back in turn under byte-range "
                    "tokens (false sharing): not modelled; use a block size (-b) that is a multiple of the "
                    "file-system block, or O_DIRECT (-B)",
                )
            ]
        )


def _check_metadata_room(system: System, workload: MdtestWorkload) -> None:
    """Refuse an mdtest run whose files and directories need more inodes than the metadata holds."""
    if not system.storage_targets:
        return
    cap = capacity(system)
    room, bound = cap.metadata_files, cap.metadata_basis
    # A BeeGFS directory is two directories and two metadata files; a GPFS directory one inode.
    per_dir = 4 if isinstance(system.spec.filesystem, BeeGFSSpec) else 1

    def needed(threads: int) -> int:
        trees = threads if workload.unique_dir else 1
        return workload.total_items(threads) + per_dir * trees * workload.tree_dirs(threads)

    threads = max(workload.threads, key=needed)
    if needed(threads) > room:
        key = "total_files" if workload.total_files is not None else "items" if workload.items else "items_per_dir"
        raise WorkloadError(
            [
                workload.problem(
                    key,
                    f"{at_threads([threads])} the files and directories of {workload.name} need "
                    f"{needed(threads):,.0f} metadata entries (a directory counts as {per_dir}), more than the "
                    f"{room:,.0f} {system.name} holds ({bound}); "
                    "lower the files per task or directory, or the thread counts",
                )
            ]
        )


def check_all_runnable(system: System, workloads: Sequence[AnyWorkload]) -> None:
    """:func:`check_runnable` for every workload, raising one error that lists every refusal."""
    problems: list[Problem] = []
    for workload in workloads:
        try:
            check_runnable(system, workload)
        except PfssimError as exc:
            problems += getattr(exc, "problems", None) or [Problem(workload.name, None, "", str(exc))]
    if problems:
        raise WorkloadError(problems)


def _size_key(workload: AnyWorkload) -> str:
    """The workload key that sets how much data its files hold."""
    if isinstance(workload, MdtestWorkload):
        return "write_bytes"
    return "file_size" if workload.file_size is not None else "aggregate_size"


def _smaller(workload: AnyWorkload) -> str:
    """How to make a workload's files fit."""
    if isinstance(workload, MdtestWorkload):
        return "lower the bytes per file, the files per directory or the thread counts"
    if workload.file_size is not None:
        return "lower the file size or the thread counts"
    return "lower the aggregate size (or its max_file_size)"


def _tb(size: float) -> str:
    """A large size in a message, as the capacity refusals give it (pfssim show's unit)."""
    return format_decimal_bytes(size, 4)


def _check_target_room(system: System, fs: BeeGFSSpec, workload: Workload) -> None:
    """A BeeGFS file is k chunk files of about 1/k of it each, on k distinct targets of its stripe,
    so a total that fits the file system can still not fit its targets: one file on a stripe of
    one target larger than the target, or many files on few targets. Refused when no placement of
    all the chunk files fits (a target holds at most one chunk file of each file, and as many as
    its usable space takes): BeeGFS would fail with no space left (ENOSPC) wherever its chooser
    put them."""
    targets = system.storage_targets
    _, k = file_stripe(fs, workload, len(targets))
    efficiency = fs.capacity_efficiency.value
    room = [system.groups[t].usable_B * efficiency for t in targets]
    shared = workload.benchmark.endswith("_n1")
    for threads in workload.threads:
        files = 1 if shared else threads
        piece = data_bytes(system, workload, threads) / files / k
        holds = sum(min(math.floor(r / piece), files) for r in room)
        if holds >= files * k:
            continue
        count = "its file" if files == 1 else f"each of its {files} files"
        chunk_files = f"{files * k} chunk file{'s' if files * k != 1 else ''}"
        raise WorkloadError(
            [
                workload.problem(
                    _size_key(workload),
                    f"at {threads} thread{'s' if threads != 1 else ''} {count} puts {_tb(piece)} on "
                    f"{'each of ' if k != 1 else ''}{k} target{'s' if k != 1 else ''} (its stripe), and the "
                    f"{len(targets)} targets of "
                    f"{system.name} ({_tb(max(room))} usable at most) have room for {holds} of "
                    f"those {chunk_files}: BeeGFS would fail with no space left (ENOSPC) although the "
                    f"file system holds the total; {_smaller(workload)}, or stripe the files over more targets",
                )
            ]
        )


def check_runnable(system: System, workload: AnyWorkload) -> None:
    """Refuse, before anything is simulated, a workload the system cannot run."""
    if not system.storage_targets and not isinstance(workload, MdtestWorkload):
        message = f"{system.name} has no storage targets to run {workload.name} on"
        if system.source_map is not None:
            raise WorkloadError([system.source_map.problem(("servers",), message)])
        raise PfssimError(message)
    fs = system.spec.filesystem
    if isinstance(fs, GpfsSpec) and system.storage_targets and fs.data_replicas > len(system.storage_targets):
        message = (
            f"data_replicas {fs.data_replicas} needs as many data NSDs to hold the copies; "
            f"{system.name} has {len(system.storage_targets)}"
        )
        if system.source_map is not None:
            raise WorkloadError([system.source_map.problem(("filesystem", "data_replicas"), message)])
        raise PfssimError(message)
    if system.storage_targets:
        usable = capacity(system).usable_B
        threads = max(workload.threads, key=lambda t: data_bytes(system, workload, t))
        needed = data_bytes(system, workload, threads)
        if needed > usable:
            raise WorkloadError(
                [
                    workload.problem(
                        _size_key(workload),
                        f"at {threads} thread{'s' if threads != 1 else ''} the files of {workload.name} need "
                        f"{_tb(needed)}, more than the {_tb(usable)} {system.name} holds "
                        f"(usable capacity, as pfssim show reports it); {_smaller(workload)}",
                    )
                ]
            )
        if isinstance(fs, BeeGFSSpec) and isinstance(workload, Workload):
            _check_target_room(system, fs, workload)
    if workload.per_node is not None and system.clients:
        clients = len(system.clients)
        over = [t for t in workload.threads if t > workload.per_node * clients]
        if over:
            raise WorkloadError(
                [
                    workload.problem(
                        "per_node",
                        f"{at_threads(over)} the tasks, {workload.per_node} per client, need more clients than "
                        f"the {clients} of {system.name} ({workload.clients_needed(over[0], clients)} at {over[0]}; "
                        "mpirun refuses more ranks than its mapping places); raise the tasks per client or lower "
                        "the thread counts",
                    )
                ]
            )
    if isinstance(workload, MdtestWorkload):
        _check_metadata_room(system, workload)
    if isinstance(workload, Workload):
        kind = system.spec.filesystem.kind
        if workload.stripe is not None and kind != "beegfs":
            raise WorkloadError(
                [workload.problem("stripe", f"a BeeGFS setting (beegfs-ctl --setpattern); {system.name} runs {kind}")]
            )
        if workload.gpfs_pagepool_client is not None and kind != "gpfs":
            raise WorkloadError(
                [workload.problem("gpfs_pagepool_client", f"a GPFS setting; {system.name} runs {kind}")]
            )
        fs = system.spec.filesystem
        if kind == "beegfs" and not workload.direct_io and workload.record_size < BEEGFS_CACHE_BUF_SIZE:
            raise WorkloadError(
                [
                    workload.problem(
                        "direct_io",
                        f"buffered calls of {workload.record_size / 2**10:g} KiB go through the BeeGFS client's "
                        "buffer cache (tuneFileCacheType = buffered; calls of 512 KiB or more bypass it), which "
                        "pfssim does not model; use O_DIRECT (direct_io: true, IOzone -I, IOR -B) or records of "
                        "at least 512 KiB",
                    )
                ]
            )
        if isinstance(fs, GpfsSpec) and workload.gpfs_pagepool_client is not None:
            # The topology's own pagepool is checked against memory when the topology is built.
            pagepool = workload.gpfs_pagepool_client
            if pagepool < fs.block_size:
                raise WorkloadError(
                    [
                        workload.problem(
                            "gpfs_pagepool_client",
                            f"a client pagepool of {format_bytes(pagepool)} cannot hold one "
                            f"{format_bytes(fs.block_size)} file-system block (GPFS stages data through the "
                            "pagepool a block buffer at a time)",
                        )
                    ]
                )
            for client in system.clients:
                memory = system.client_memory.get(client)
                if memory is not None and (why := pagepool_too_large(pagepool, memory)):
                    raise WorkloadError(
                        [
                            workload.problem(
                                "gpfs_pagepool_client",
                                f"a client pagepool of {format_bytes(pagepool)} is more than 80% of the "
                                f"{format_bytes(memory)} of {client}: {why}",
                            )
                        ]
                    )
        # Random calls are mostly drive-bound (a hit in the pagepool is a share of them); sequential
        # buffered ones are served from the pagepool at memory speed.
        if isinstance(fs, GpfsSpec) and not workload.direct_io and "random" not in workload.benchmark:
            smallest = smallest_buffered_gpfs_call()
            if workload.record_size < smallest:
                raise WorkloadError(
                    [
                        workload.problem(
                            "record_size",
                            f"buffered sequential calls of {format_bytes(workload.record_size)} on GPFS each cost the "
                            "client a system call, which pfssim does not model (it charges a call only its copy "
                            "into or out of the pagepool, at client_memcpy_Bps): that cost, a few microseconds as a "
                            "cached GPFS call's (gpfs_node_meta_call_s), is more than "
                            f"{SMALL_CALL_SHARE:.0%} of a call below about "
                            f"{format_bytes(float(round(_small_call_bytes(), -3)))}; use O_DIRECT (IOzone -I, "
                            f"IOR -B) or records of at least {format_bytes(smallest)}",
                        )
                    ]
                )
        if isinstance(fs, GpfsSpec) and not workload.direct_io and not workload.fsync:
            _check_unflushed_writes(system, workload, fs)
        if isinstance(fs, GpfsSpec) and not workload.direct_io:
            _check_stream_buffers(system, workload, fs)
            _check_cached_reads(system, workload, fs)
        if isinstance(fs, GpfsSpec):
            _check_shared_blocks(workload, fs)
