"""Spectrum Scale (GPFS) data path: blocks over NSDs, NSD servers, pagepool write-behind and prefetch.

* Block i of a file lives on data NSD (start + i) mod D, start random per file (round robin over
  all NSDs of the pool). With ``scattered`` allocation the block's place on the LUN is random;
  with ``cluster`` a file's blocks on one NSD are consecutive.
* A block (or a smaller record's part of one) is one NSD request to the LUN's primary NSD server
  (:class:`NsdPaths`): the client's transfer to that server's HCA, an NSD worker thread,
  ``gpfs_nsd_block_cpu_s`` of CPU on the server's cores (any of its zones:
  :meth:`Platform.service_cpu`), then the server's HBA/SAS path and the ME4 controller.
* Buffered I/O goes through the client's pagepool: sequential reads are prefetched and writes
  (sequential or random) written behind. The node's ``gpfs_prefetch_threads`` do the block I/Os,
  handed out first come, first served to its streams; a thread is free again as soon as its I/O
  completes (the block then waits in the pagepool, not in a thread). How far a stream runs ahead
  of its application (prefetched blocks not yet read, or written blocks not yet flushed) is
  bounded by its share of the node's pagepool. The application reads blocks in file order, so a
  late block holds it up; it writes into the pagepool and waits only when its share is full of
  dirty blocks. Random reads are synchronous; a read hits the pagepool with probability (the
  node's pagepool share of this stream) / (file size), and a hit costs a memory copy. O_DIRECT
  bypasses the pagepool: one record at a time, its blocks in parallel.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Generator
from functools import partial

from simpy.events import Event

from sim.config.system import GpfsSpec
from sim.config.workload import Workload
from sim.engine.core import Pool, Station, Task, fire, join
from sim.engine.rng import Stream
from sim.fs.common import Route, RunContext
from sim.fs.settings import gpfs_nsd_threads, memory_zone, ranks_by_hcas
from sim.params import value


def _mix(block: int, salt: int) -> int:
    """A well-spread 64-bit hash of a block number (SplitMix64's finaliser): a scattered block's
    place on its LUN as a function of the block alone."""
    z = (block * 0x9E3779B97F4A7C15 + salt) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
    return z ^ (z >> 31)


class GpfsModel:
    """Runs benchmark threads against a GPFS system."""

    def __init__(self, ctx: RunContext) -> None:
        self.ctx = ctx
        fs = ctx.system.spec.filesystem
        assert isinstance(fs, GpfsSpec)
        assert isinstance(ctx.workload, Workload)
        self.workload: Workload = ctx.workload
        self.fs = fs
        self.block = fs.block_size
        self.nsds = ctx.system.storage_targets
        self._slot_counts: dict[str, int] = {}  # blocks each NSD holds (_slots, on every request's path)
        self.paths = NsdPaths(ctx)
        self.file_size = self.workload.file_size_for(ctx.threads)
        self.record = self.workload.record_size
        self.unit = min(self.record, self.block)
        if not self.workload.direct_io and not ctx.random:
            # Buffered sequential I/O moves whole blocks: prefetch reads them and write-behind
            # flushes them once the application has filled them, whatever its record size (a
            # file smaller than a block is one partial block).
            self.unit = min(self.block, max(self.file_size, self.unit))
        self.window = self._stream_windows()
        prefetch = int(value("gpfs_prefetch_threads"))
        self.io_threads = {
            c: ctx.platform.pool(f"{c}.prefetch-threads", prefetch, family="prefetch threads")
            for c in ctx.system.clients
        }
        # IOR N-1: one file (one start NSD); task t's block starts at t x block size in it.
        self.shared = self.workload.shared_file
        # Written data goes to ``data_replicas`` NSDs (reads use the first copy): the client writes
        # each copy itself, and copy k of a block sits k / replicas of the way round the NSD list
        # (standing in for another failure group, as metadata replicas do).
        self.replicas = fs.data_replicas if ctx.io_op == "write" else 1
        self.nsd_index = {nsd: i for i, nsd in enumerate(self.nsds)}
        first = ctx.streams("gpfs.file0").integer(len(self.nsds))
        self.starts = [
            first if self.shared else ctx.streams(f"gpfs.file{t}").integer(len(self.nsds)) for t in range(ctx.threads)
        ]
        # IOR -s on a shared file: a block may hold several tasks' transfers, so where a scattered
        # block sits must be the file's, not a draw of whichever task reaches it first.
        segmented = self.shared and getattr(self.workload, "segments", 1) > 1
        self.salt = ctx.streams("gpfs.file0").integer(2**32) if segmented else None

    def _stream_windows(self) -> list[int]:
        """Blocks each buffered stream may run ahead of its application.

        A reader's read-ahead is bounded by its share of the node's pagepool (split evenly over the
        node's streams). A writer's dirty blocks are bounded by the same share in GPFS, but its
        long-run rate does not depend on that bound once the bound covers the stream's share of
        the node's write-behind threads: then either the application is slower than the flushes
        (few blocks dirty) or the flushes are (the bound full, each flush admitting one write). A
        bound of twice that thread share gives the same steady state without simulating the
        seconds a benchmark spends filling gigabytes of pagepool.
        """
        ctx = self.ctx
        pagepool = self.workload.gpfs_pagepool_client or self.fs.pagepool.client
        slots = int(value("gpfs_prefetch_threads"))
        windows = []
        for t in range(ctx.threads):
            streams = ctx.threads_on(ctx.client_of(t))
            window = max(int(pagepool / streams // self.unit), 1)
            if ctx.io_op == "write":
                window = min(window, 2 * -(-slots // streams))
            windows.append(window)
        return windows

    def pieces_per_call(self) -> int:
        """Block (or subblock-run) pieces one call is cut into, at least."""
        return max(math.ceil(self.record / self.unit), 1)

    def outstanding(self) -> int:
        """Calls the threads keep in flight at most (sizes the measurement batches, which count calls)."""
        if self.workload.direct_io:
            # O_DIRECT issues one record at a time: its block pieces are in flight together, but
            # they are one call. Counting the pieces made a batch span that many generations of
            # calls (IOR -B -t 1g at 16 tasks: 2,048 calls, 2 TiB, a batch; no end in minutes).
            return self.ctx.threads
        if self.ctx.op == "random_read":
            return self.ctx.threads
        # In flight at the devices: the node's I/O threads, or the streams' windows if smaller.
        per_node: dict[str, int] = {}
        for t, window in enumerate(self.window):
            client = self.ctx.client_of(t)
            per_node[client] = per_node.get(client, 0) + window
        slots = int(value("gpfs_prefetch_threads"))
        return sum(min(n, slots) for n in per_node.values())

    def prefill_caches(self) -> None:
        """Controller write caches of the data NSDs start holding what a long run of this workload
        leaves in them; metadata LUNs hold none of it.

        Random writes: units anywhere on the LUN. Sequential writes: whole blocks, each written
        unit after unit in order as a stream writes a block (scattered: each block at a random
        place; cluster: blocks one after the other), so units smaller than a RAID stripe gather
        into the whole stripes a real run's cache holds. Isolated units there instead (the rule
        before session 18) filled the caches with partial stripes that no long run leaves: with
        O_DIRECT 1 MiB records on 4 MiB stripes their read-modify-write destages lingered for
        seconds behind the stream's whole stripes, and the point's value then depended on how
        long it ran (17 to 21 GB/s at 64 threads on pixstor-large).
        """
        stream = self.ctx.streams("cache.prefill")
        unit = self.unit
        block = self.block
        per_block = max(int(block // unit), 1)
        scattered = self.fs.allocation == "scattered"
        recent = None
        if not scattered and not self.ctx.random:
            positions, count, step = self._first_positions()
            # Pieces a step is cut into at most, times the copies written: a round's pieces at most.
            pieces = (math.ceil(step / block) + 1) * self.replicas
            recent = _Recent(self._recent_pieces(positions, count, step), self.ctx.threads * count * pieces)

        def sampler(nsd: str):  # noqa: ANN202 - a (offset, size) sampler per LUN
            blocks = max(int(self.ctx.platform.raids[nsd].capacity // block), 1)
            if self.ctx.random:
                return lambda: (stream.integer(blocks) * block + stream.integer(per_block) * unit, unit)
            if recent is not None and recent.reaches(nsd):
                return partial(recent.next_on, nsd)

            def units() -> Generator[tuple[float, float], None, None]:
                slot = stream.integer(blocks)
                while True:
                    for k in range(per_block):
                        yield slot * block + k * unit, unit
                    slot = stream.integer(blocks) if scattered else (slot + 1) % blocks

            return units().__next__

        self.ctx.platform.prefill_caches_with(sampler, only=set(self.nsds), swept=self.ctx.random)

    def _first_positions(self) -> tuple[list[int], int, float]:
        """Where each thread's first request starts in its share of the file, as ``_thread`` draws
        it, and the count and size of the steps it walks the share in (units, or records when
        records are cut at block boundaries). The draws are repeated on a stream of the thread's
        own name (a stream is a function of the seed and its name): the thread's first draw is its
        start delay, its second the position."""
        cut = self.workload.direct_io and self.record % self.block and self.block % self.record
        step = self.record if cut else self.unit
        count = max(int(self.file_size // step), 1)
        positions = []
        for t in range(self.ctx.threads):
            twin = Stream(self.ctx.streams.seed, f"thread{t}")
            twin.uniform()
            positions.append(twin.integer(count))
        return positions, count, step

    def _recent_pieces(
        self, positions: list[int], count: int, step: float
    ) -> Generator[tuple[str, float, float], None, None]:
        """(NSD, offset on the LUN, size) of what the threads wrote last before their first
        requests, a block of each thread in turn, newest first, and round their files again
        without end: what a long sequential run leaves in the controllers' caches, every copy of
        it. Each thread's newest block is the part of its current block before where it starts
        (the stripes it is still filling); the older ones come whole, so that a cache's oldest
        entries are the whole stripes a long run leaves, not the partial ones that a cache filled
        a step at a time stops at (read-modify-writes that lingered, see :meth:`prefill_caches`).

        For cluster allocation, where a thread's blocks lie one after the other on each LUN: the
        caches must start holding the blocks just behind each thread, in the LUNs' zones where it
        writes. Blocks drawn from a random place instead (until the teaching review of session 36)
        started one writer's cache on the inner tracks of its LUN, and its destages ran at the
        inner zone's rate for longer than a point's window: one O_DIRECT writer of 1 MiB records
        on a RAID6 8+2 gave 1.17, 1.59 and 1.53 GB/s with seeds 1, 2 and 3, each interval
        +-1% or narrower, against 1.87 GB/s from long runs. ``positions``, ``count`` and ``step``
        are :meth:`_first_positions`'s."""
        walks = [self._blocks_behind(t, position, count, step) for t, position in enumerate(positions)]
        while True:
            for walk in walks:
                for nsd, offset, size in next(walk):
                    copies = self._copies(nsd, offset) if self.replicas > 1 else [(nsd, offset)]
                    for copy_nsd, copy_offset in copies:
                        yield copy_nsd, copy_offset, size

    def _blocks_behind(
        self, t: int, position: int, count: int, step: float
    ) -> Generator[list[tuple[str, float, float]], None, None]:
        """Thread ``t``'s pieces before step ``position`` of its share, block by block, newest block
        first, round its share without end. The steps are walked back and each step's pieces
        newest first, so that a record cut at a block boundary gives each block its own part: a
        block is complete when the walk has passed its start (grouped by the step's first block,
        a cut record's upper part stayed with the block below, and the caches started with the
        stripes above it partial)."""
        back = 1
        group: list[tuple[str, float, float]] = []
        block: tuple[str, int] | None = None
        walked = 0  # steps in the group: a share of one block is one group a round
        while True:
            for nsd, offset, size in reversed(self._step_pieces(t, (position - back) % count, step)):
                here = (nsd, int(offset // self.block))
                if block is not None and here != block:
                    yield group
                    group, walked = [], 0
                block = here
                group.append((nsd, offset, size))
            back += 1
            walked += 1
            if walked >= count:
                yield group
                group, block, walked = [], None, 0

    def _step_pieces(self, t: int, index: int, step: float) -> list[tuple[str, float, float]]:
        """(NSD, offset on the LUN, size) of step ``index`` of thread ``t``'s share of the file,
        cut at block boundaries, with cluster allocation (which draws no slot)."""
        byte = self.ctx.file_offset(t, index * step, self.file_size)
        end = byte + step
        pieces = []
        while byte < end:
            block = int(byte // self.block)
            within = byte - block * self.block
            size = min(self.block - within, end - byte)
            nsd = self.nsds[(self.starts[t] + block) % len(self.nsds)]
            pieces.append((nsd, self._cluster_slot(t, nsd, block) * self.block + within, size))
            byte += size
        return pieces

    def prestart_read_ahead(self) -> None:
        """Controllers' read-ahead starts cold. Scattered blocks give a LUN no sequential streams to
        read ahead for; with cluster allocation a file's blocks on one LUN are adjacent and do
        form streams, whose start-up (two reads each) the measurement's transient cut removes."""

    def start(self) -> None:
        """One process per benchmark thread."""
        for t in range(self.ctx.threads):
            self.ctx.env.process(self._thread(t))

    # -- per-thread I/O sequence -------------------------------------------------------------------

    def _units(self, t: int, stream: Stream) -> Generator[tuple[str, float, float], None, None]:
        """Endless (nsd, offset on the LUN, size) of a thread's requests, in issue order."""
        units_per_file = max(int(self.file_size // self.unit), 1)
        position = stream.integer(units_per_file)
        file_offset = self.ctx.file_offset
        d = len(self.nsds)
        last_block, last_slot = -1, 0
        while True:
            owner, index = self._next(t, stream, position, units_per_file)
            position = (position + 1) % units_per_file
            byte = file_offset(owner, index * self.unit, self.file_size)
            block = int(byte // self.block)
            nsd = self.nsds[(self.starts[t] + block) % d]
            within = byte - block * self.block
            # The next record of the same block (records smaller than blocks) keeps its place.
            same = last_slot if block == last_block and not self.ctx.random else None
            slot = last_slot = self._slot(t, nsd, block, same, stream)
            last_block = block
            yield nsd, slot * self.block + within, self.unit

    def _next(self, t: int, stream: Stream, position: int, count: int) -> tuple[int, int]:
        """(task whose part of the file, index in it) of thread ``t``'s next unit or record: the one
        at ``position`` in order, or with random offsets one of ``count`` drawn at random; IOR -z
        on a shared file draws the task too (a transfer anywhere in the file)."""
        if not self.ctx.random:
            return t, position
        index = stream.integer(count)
        return (stream.integer(self.ctx.threads) if self.shared else t), index

    def _slot(self, t: int, nsd: str, block: int, same: int | None, stream: Stream) -> int:
        """Where file block ``block`` of thread ``t`` sits on ``nsd``, in blocks: scattered, ``same``
        (the slot of the record before, in the same block) or else a random slot; with cluster
        allocation, the owner's blocks in order on the LUN."""
        slots = self._slots(nsd)
        if self.fs.allocation == "scattered":
            if self.salt is not None:  # a segmented shared file: the same place whichever task asks
                return _mix(block, self.salt) % slots
            return same if same is not None else stream.integer(slots)
        return self._cluster_slot(t, nsd, block)

    def _slots(self, nsd: str) -> int:
        """Blocks ``nsd`` holds."""
        slots = self._slot_counts.get(nsd)
        if slots is None:
            slots = self._slot_counts[nsd] = max(int(self.ctx.platform.raids[nsd].capacity // self.block), 1)
        return slots

    def _cluster_slot(self, t: int, nsd: str, block: int) -> int:
        """Where file block ``block`` of thread ``t`` sits on ``nsd`` with cluster allocation: the
        owner's blocks in order on the LUN (a shared file's from the start of the LUN)."""
        return ((0 if self.shared else t) * 7919 + block // len(self.nsds)) % self._slots(nsd)

    def _record_pieces(self, t: int, stream: Stream) -> Generator[list[tuple[str, float, float]], None, None]:
        """Endless O_DIRECT records that are not whole blocks and do not divide one (IOzone -r 12m,
        or -r 3m, on 8 MiB blocks), each as its (nsd, offset on the LUN, size) pieces cut at block
        boundaries: a 12 MiB record is 8 + 4 MiB or 4 + 8 MiB, a 3 MiB one whole or 2 + 1 MiB.
        (A 12 MiB record used to be one 8 MiB request counted as 12 MiB: 33 GB/s of writes on
        22 GB/s of controllers.)"""
        records = max(int(self.file_size // self.record), 1)
        position = stream.integer(records)
        d = len(self.nsds)
        last_block, last_slot = -1, 0
        while True:
            owner, index = self._next(t, stream, position, records)
            position = (position + 1) % records
            byte = self.ctx.file_offset(owner, index * self.record, self.file_size)
            end = byte + self.record
            pieces = []
            while byte < end:
                block = int(byte // self.block)
                within = byte - block * self.block
                size = min(self.block - within, end - byte)
                nsd = self.nsds[(self.starts[t] + block) % d]
                # A block shared by two sequential records keeps its one place on the LUN.
                slot = last_slot = self._slot(t, nsd, block, last_slot if block == last_block else None, stream)
                last_block = block
                pieces.append((nsd, slot * self.block + within, size))
                byte += size
            yield pieces

    def _copies(self, nsd: str, offset: float) -> list[tuple[str, float]]:
        """Where each copy of the data at ``offset`` on ``nsd`` is written: the block's slot moved
        by the same fraction of its NSD, so a block's records share their copies' slots and
        cluster-allocated blocks stay in order on every copy."""
        d = len(self.nsds)
        i = self.nsd_index[nsd]
        slot, within = divmod(offset, self.block)
        copies = [(nsd, offset)]
        for k in range(1, self.replicas):
            other = self.nsds[(i + k * d // self.replicas) % d]
            slots = self._slots(other)
            copies.append((other, ((int(slot) + k * slots // self.replicas) % slots) * self.block + within))
        return copies

    def _thread(self, t: int) -> Generator[Event, object, None]:
        ctx = self.ctx
        env = ctx.env
        stream = ctx.streams(f"thread{t}")
        client = ctx.client_of(t)
        units = self._units(t, stream)
        # A random op is one record: a record larger than a block is several units.
        amount = self.unit / self.record if ctx.random else self.unit
        op = ctx.io_op
        request = self.paths.request

        def issue(nsd: str, offset: float, size: float) -> Event:
            if self.replicas == 1:
                return Task(env, request(t, nsd, op, offset, size, stream))
            copies = self._copies(nsd, offset)
            return join(env, [Task(env, request(t, n, op, o, size, stream)) for n, o in copies])

        def next_request() -> Event:
            return issue(*next(units))

        yield env.timeout(stream.uniform() * 1e-4)
        if self.workload.direct_io:
            per_record = max(int(self.record // self.unit), 1)
            # Records that neither fill whole blocks nor divide one cross block boundaries now and
            # then (3 MiB records on 8 MiB blocks: every third), and the blocks either side sit on
            # different NSDs: such records are cut there. Until session 34 a record smaller than a
            # block was one request to its first block's NSD, whatever it crossed into (a GPFS
            # review: -r 3m wrote at 13.5 GB/s, the next block's stripes never whole; 19.2 cut).
            cut = self.record % self.block and self.block % self.record
            records = self._record_pieces(t, stream) if cut else None
            while True:
                if records is not None:
                    events = [issue(*piece) for piece in next(records)]
                else:
                    # A record's blocks are all drawn before its requests start (a read request
                    # draws its NSD CPU time from the same stream as it starts).
                    blocks = [next(units) for _ in range(per_record)]
                    events = [issue(*block) for block in blocks]
                yield join(env, events)
                ctx.meter.add(t, 1.0 if ctx.random else self.record)
        elif ctx.op == "random_read":
            pagepool = self.workload.gpfs_pagepool_client or self.fs.pagepool.client
            share = pagepool / ctx.threads_on(client)
            hit = min(1.0, share / self.file_size)
            copy = self.unit / value("client_memcpy_Bps")
            copier = self._copier(t, client)  # a hit is the thread's own copy out of the pagepool
            while True:
                nsd, offset, size = next(units)
                if stream.uniform() < hit:
                    yield copier.serve(copy)
                else:
                    yield from request(t, nsd, op, offset, size, stream)
                ctx.meter.add(t, amount)
        elif op == "read":
            yield from self._prefetched_reads(t, client, next_request)
        else:
            yield from self._written_behind(t, client, next_request)

    def _copier(self, t: int, client: str) -> Station:
        """The benchmark thread itself, as a station: its copies between its buffer and the pagepool
        (so a point limited by one thread's memcpy names that thread as its bottleneck)."""
        station = Station(self.ctx.env, f"{client}.thread{t}", 1)
        self.ctx.platform.stations[station.name] = station
        return station

    def _prefetched_reads(self, t: int, client: str, issue: Callable[[], Event]) -> Generator[Event, object, None]:
        """A sequential reader: a prefetcher keeps up to ``window`` blocks ahead, each I/O on one of
        the node's prefetch threads; the application consumes the blocks in file order."""
        env = self.ctx.env
        meter = self.ctx.meter
        pool = self.io_threads[client]
        window = self.window[t]
        ready: deque[Event] = deque()  # issued blocks not yet consumed, in file order
        wake: list[Event | None] = [None, None]  # [prefetcher waits for room, reader waits for an issue]

        # A block's arrival in the pagepool is the meter's supply: the reader's long-run rate
        # without its in-order stalls and bursts (see sim/benchmarks/driver.py).
        unit = self.unit
        meter.by_supply = True

        def arrived(_event: Event) -> None:
            pool.release()
            meter.supply(t, unit)

        def prefetcher() -> Generator[Event, object, None]:
            while True:
                if len(ready) >= window:
                    event = wake[0] = Event(env)
                    yield event
                wait = pool.acquire()
                if wait is not None:
                    yield wait
                block = issue()
                block.callbacks.append(arrived)
                ready.append(block)
                if wake[1] is not None:
                    _wake(wake, 1)

        env.process(prefetcher())
        copier = self._copier(t, client)
        meter.consumers.add(copier.name)
        copy = self.unit / value("client_memcpy_Bps")
        while True:
            if not ready:
                event = wake[1] = Event(env)
                yield event
            yield ready[0]
            ready.popleft()
            if wake[0] is not None:
                _wake(wake, 0)
            yield copier.serve(copy)  # out of the pagepool into the application's buffer
            meter.add(t, self.unit)

    def _written_behind(self, t: int, client: str, issue: Callable[[], Event]) -> Generator[Event, object, None]:
        """A writer: each block is copied into the pagepool and flushed behind, one block at a time
        per stream on one of the node's write-behind threads; the application waits only when
        ``window`` blocks are dirty."""
        env = self.ctx.env
        meter = self.ctx.meter
        pool = self.io_threads[client]
        window = self.window[t]
        amount = self.unit / self.record if self.ctx.random else self.unit  # a random op is one record
        copy = self.unit / value("client_memcpy_Bps")
        state = {"dirty": 0, "queued": 0}  # dirty blocks, and those of them not yet being flushed
        wake: list[Event | None] = [None, None]  # [writer waits for room, flusher waits for a block]

        def flushed(_event: Event) -> None:
            pool.release()
            state["dirty"] -= 1
            if wake[0] is not None:
                _wake(wake, 0)

        def flusher() -> Generator[Event, object, None]:
            while True:
                if not state["queued"]:
                    event = wake[1] = Event(env)
                    yield event
                wait = pool.acquire()
                if wait is not None:
                    yield wait
                state["queued"] -= 1
                issue().callbacks.append(flushed)

        env.process(flusher())
        copier = self._copier(t, client)
        while True:
            if state["dirty"] >= window:
                event = wake[0] = Event(env)
                yield event
            yield copier.serve(copy)  # from the application's buffer into the pagepool
            state["dirty"] += 1
            state["queued"] += 1
            if wake[1] is not None:
                _wake(wake, 1)
            meter.add(t, amount)


def _wake(wake: list[Event | None], side: int) -> None:
    """Run the waiter of ``wake[side]`` now (:func:`fire`), its slot cleared first: the waiter may
    wait again at once, and a slot cleared after that would lose the new wait."""
    waiter, wake[side] = wake[side], None
    assert waiter is not None
    fire(waiter)


class _Recent:
    """The pieces of :meth:`GpfsModel._recent_pieces` dealt to their LUNs' caches: each LUN's
    sampler takes its own next piece, and the pieces of other LUNs met on the way wait for theirs.

    The pieces go round the threads' files without end, ``per_round`` of them (at most) a round: a LUN
    that no piece of the first round reaches is reached by none (a file of fewer blocks than there
    are NSDs), and :meth:`reaches` says so instead of searching for ever."""

    def __init__(self, pieces: Generator[tuple[str, float, float], None, None], per_round: int) -> None:
        self.pieces = pieces
        self.per_round = per_round
        self.pulled = 0
        self.waiting: dict[str, deque[tuple[float, float]]] = {}

    def _pull(self) -> str:
        nsd, offset, size = next(self.pieces)
        self.pulled += 1
        self.waiting.setdefault(nsd, deque()).append((offset, size))
        return nsd

    def reaches(self, nsd: str) -> bool:
        """Whether some piece lies on ``nsd``."""
        while nsd not in self.waiting and self.pulled < self.per_round:
            self._pull()
        return nsd in self.waiting

    def next_on(self, nsd: str) -> tuple[float, float]:
        """The next piece on ``nsd`` (one that :meth:`reaches`)."""
        queue = self.waiting[nsd]
        while not queue:
            self._pull()
        return queue.popleft()


class NsdPaths:
    """Requests from client nodes to NSDs through their primary NSD servers, shared by the data and
    metadata models: each (client, NSD, direction) route is resolved once; a request is the
    client's transfer to the server's HCA, an NSD worker thread (for a request larger than
    ``gpfs_nsd_small_io_bytes`` first one of the ``gpfs_nsd_threads_per_queue`` threads of the
    LUN's own NSD queue, so a LUN has at most that many large requests at its drives),
    ``gpfs_nsd_block_cpu_s`` of CPU on the server's cores, then the server's HBA/SAS path from the
    memory of the arriving HCA's zone alongside the LUN's I/O (and the transfer back for a read)."""

    def __init__(self, ctx: RunContext) -> None:
        self.ctx = ctx
        system = ctx.system
        self.server_of = {n: system.services_of(n)[0] for n in system.storage_targets + system.metadata_targets}
        self.nsd_rank = ranks_by_hcas(self.server_of)  # how each NSD's paths are dealt its server's HCAs
        # The topology's filesystem.nsd_threads, or the model parameters where it leaves them out.
        fs = system.spec.filesystem
        assert isinstance(fs, GpfsSpec)
        nsd_threads = gpfs_nsd_threads(fs, "max_worker")
        self.threads = {
            s.name: ctx.platform.pool(f"{s.name}.threads", nsd_threads, stage=2, family="NSD server threads")
            for s in system.services.values()
        }
        self.cpu = value("gpfs_nsd_block_cpu_s")
        self.routes: dict[tuple[str, str, str], Route] = {}
        # A LUN's large requests are served by the threads of its own NSD queue (nsdThreadsPerQueue):
        # however many reads wait at the server, a LUN has at most that many at its drives.
        self.queue_threads = gpfs_nsd_threads(fs, "per_queue")
        self.small_io = value("gpfs_nsd_small_io_bytes")
        self.queues: dict[str, Pool] = {}

    def route(self, t: int, nsd: str, op: str) -> Route:
        """Hops, CPU and NSD threads of ``op`` requests from one client HCA to one NSD (computed once):
        thread ``t``'s requests leave by its client HCA (:meth:`RunContext.client_hca`)."""
        service = self.server_of[nsd]
        client_hca = self.ctx.client_hca(t, service.hcas)
        key = (client_hca, nsd, op)
        route = self.routes.get(key)
        if route is None:
            ctx = self.ctx
            platform = ctx.platform
            server_hca = platform.deal_server_hca(client_hca, service.hcas, self.nsd_rank[nsd])
            zone = memory_zone(ctx.system, service, server_hca)
            route = self.routes[key] = Route(
                platform.resolve(platform.network_hops(client_hca, server_hca, op)),
                platform.resolve(platform.storage_hops(service.server, zone, nsd, op)),
                platform.service_cpu(service),
                self.threads[service.name],
            )
        return route

    def request(
        self, t: int, nsd: str, op: str, offset: float, size: float, stream: Stream
    ) -> Generator[Event, object, None]:
        """One NSD request of ``size`` bytes at ``offset`` on the LUN."""
        ctx = self.ctx
        env = ctx.env
        platform = ctx.platform
        route = self.route(t, nsd, op)
        latency = 2 * platform.latency
        if op == "write":
            yield env.timeout(platform.finish_on(route.network, size, env.now + latency) - env.now)
        queue = None
        if size > self.small_io:
            queue = self.queues.get(nsd)
            if queue is None:
                queue = self.queues[nsd] = platform.pool(
                    f"{nsd}.nsd-queue", self.queue_threads, stage=1, family="NSD queue threads"
                )
            wait = queue.acquire()
            if wait is not None:
                yield wait
        wait = route.pool.acquire()
        if wait is not None:
            yield wait
        yield route.cpu.serve(stream.exponential(self.cpu))
        hops_end = platform.finish_on(route.storage, size, env.now)
        yield platform.storage_io(nsd, op, offset, size, hops_end)
        if op == "read":
            yield env.timeout(platform.finish_on(route.network, size, env.now + latency) - env.now)
        route.pool.release()
        if queue is not None:
            queue.release()
