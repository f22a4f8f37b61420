"""BeeGFS data path: file striping, target choice, client fork-join, storage servers.

* A file gets ``num_targets`` storage targets at creation, chosen by the metadata service that owns
  the benchmark directory (one directory, hence one chooser state): ``roundrobin`` takes the next
  targets in ID order after the last one it gave, ``randomrobin`` the same set shuffled,
  ``randomized`` one random target from each of ``num_targets`` equal slices of the target ring,
  ``randominternode`` targets on distinct storage servers.
  Target IDs follow the order the targets are declared in.
* Offset x of a file is in chunk x // chunk_size, stored on target (chunk mod num_targets) at
  chunk-file offset (chunk // num_targets) x chunk_size + x mod chunk_size.
* One call is cut at chunk boundaries; the pieces of one stripe set (at most num_targets pieces)
  go out in parallel and the thread waits for all before the next set (fork-join).
* A client node has at most ``conn_max_internode.client`` requests in flight to one service.
* A storage target has ``workers.storage`` worker threads; a worker holds a request from its
  arrival to its reply. Each request costs ``beegfs_storage_request_cpu_s`` on a core of the
  service's NUMA zone. With O_DIRECT the server opens chunk files O_DIRECT: I/O goes to the device.
  Without O_DIRECT (buffered) it is modelled the same way (long runs on terabytes are device-bound).
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Generator

from simpy.events import Event

from sim.config.system import BeeGFSSpec
from sim.config.workload import Workload
from sim.engine.core import Pool, Task, join
from sim.engine.rng import Stream
from sim.fs.common import Route, RunContext
from sim.fs.settings import beegfs_conn_max, beegfs_storage_workers, memory_zone
from sim.params import value
from sim.topology.model import Service


def file_stripe(fs: BeeGFSSpec, workload: Workload, available: int) -> tuple[float, int]:
    """A benchmark file's chunk size and stripe count: the workload's override, else the file
    system's default. "If fewer targets are available than requested, the file simply gets fewer"
    (the chooser clamps numTargets to the pool; modeling-facts 1.1)."""
    stripe = workload.stripe
    chunk = (stripe.chunk_size if stripe and stripe.chunk_size else None) or fs.chunk_size
    count = (stripe.num_targets if stripe and stripe.num_targets else None) or fs.num_targets
    return chunk, min(count, available)


class BeeGFSFile:
    """A benchmark file: its stripe targets and where its chunk files start on each target."""

    def __init__(self, targets: list[str], bases: list[float]) -> None:
        self.targets = targets
        self.bases = bases


class BeeGFSModel:
    """Runs benchmark threads against a BeeGFS system."""

    def __init__(self, ctx: RunContext) -> None:
        self.ctx = ctx
        fs = ctx.system.spec.filesystem
        assert isinstance(fs, BeeGFSSpec)
        assert isinstance(ctx.workload, Workload)
        self.workload: Workload = ctx.workload
        self.chunk, self.num_targets = file_stripe(fs, self.workload, len(ctx.system.storage_targets))
        self.chooser = fs.target_chooser
        self.conn_limit = beegfs_conn_max(ctx.system, "client")
        self.server_cpu = value("beegfs_storage_request_cpu_s")
        self.client_cpu = value("beegfs_client_request_cpu_s")
        self.targets = ctx.system.storage_targets
        self.service_of = {t: ctx.system.services_of(t)[0] for t in self.targets}
        self.workers = {
            t: ctx.platform.pool(
                f"{t}.workers",
                beegfs_storage_workers(ctx.system, self.service_of[t]),
                stage=1,
                family="storage workers",
            )
            for t in self.targets
        }
        self.conns: dict[tuple[str, str], Pool] = {}
        self.routes: dict[tuple[int, str], Route] = {}
        self.routes_by_hcas: dict[tuple[str, str, str], Route] = {}
        # A service's HCAs -> (thread, target) -> the path's turn (_server_hca_turn).
        self.hca_ranks: dict[tuple[str, ...], dict[tuple[int, str], int]] = {}
        self.file_size = self.workload.file_size_for(ctx.threads)
        self.shared = self.workload.shared_file
        self.files = self._create_files()
        self.record = self.workload.record_size
        records = max(int(self.file_size // self.record), 1)
        # Threads start at different points of their files (the first draw of each thread's stream).
        self.starts = [ctx.streams(f"thread{t}").integer(records) * self.record for t in range(ctx.threads)]

    # -- layout ----------------------------------------------------------------------------------

    def _choose(self, index: int, state: list[int]) -> list[str]:
        n = len(self.targets)
        k = min(self.num_targets, n)
        stream = self.ctx.streams("beegfs.chooser")
        if self.chooser in ("roundrobin", "randomrobin"):
            start = state[0]
            chosen = [self.targets[(start + i) % n] for i in range(k)]
            state[0] = (start + k) % n
            if self.chooser == "randomrobin":
                order = stream.permutation(k)
                chosen = [chosen[i] for i in order]
            return chosen
        if self.chooser == "randominternode":
            by_server: dict[str, list[str]] = {}
            for t in self.targets:
                by_server.setdefault(self.service_of[t].server, []).append(t)
            servers = list(by_server)
            first = stream.integer(len(servers))
            k = min(k, len(servers))
            return [
                by_server[servers[(first + i) % len(servers)]][
                    stream.integer(len(by_server[servers[(first + i) % len(servers)]]))
                ]
                for i in range(k)
            ]
        # randomized: stratified sampling around the ring from a random start
        start = stream.integer(n)
        part = n // k
        chosen = []
        for i in range(k):
            size = part if i < k - 1 else n - part * (k - 1)
            chosen.append(self.targets[(start + i * part + stream.integer(size)) % n])
        return chosen

    def _create_files(self) -> list[BeeGFSFile]:
        """Choose every thread's targets and place its chunk files.

        IOzone's children create their files at the same moment, so the metadata server (and its
        round-robin chooser) sees the creates in race order: a seeded permutation of the threads.
        Each target's file system is fresh and the benchmark's chunk files share a directory, so
        they are allocated one after another from the start of the target (XFS keeps a directory's
        files together), not scattered over the whole device; on a parity RAID target each starts
        on a stripe-unit boundary, as XFS aligns them.
        """
        state = [0]
        if self.shared:
            # IOR N-1: task 0 creates the one file; every task writes its own block of it.
            targets = self._choose(0, state)
            whole = BeeGFSFile(targets, [0.0] * len(targets))
            return [whole] * self.ctx.threads
        order = self.ctx.streams("beegfs.create-order").permutation(self.ctx.threads)
        chosen: dict[int, list[str]] = {}
        for t in order:
            chosen[t] = self._choose(t, state)
        per_target = self.file_size / self.num_targets
        cursor: dict[str, float] = {}
        files = []
        for t in range(self.ctx.threads):
            bases = []
            for target in chosen[t]:
                bases.append(cursor.get(target, 0.0))
                # XFS starts a large file's data on a stripe-unit boundary of a RAID target
                # (xfs(5), sunit: "data allocations are stripe unit aligned when the current end
                # of file is being extended and the file size is larger than 512KiB").
                raid = self.ctx.platform.raids.get(target)
                align = raid.su if raid is not None and raid.parity else 1.0
                cursor[target] = -(-(bases[-1] + per_target) // align) * align
            files.append(BeeGFSFile(chosen[t], bases))
        return files

    def pieces_per_call(self) -> int:
        """Chunk pieces one call is cut into (at least; an unaligned call straddles one more)."""
        return max(math.ceil(self.record / self.chunk), 1)

    def outstanding(self) -> int:
        """Requests the threads keep in flight at most (sizes the measurement batches)."""
        return self.ctx.threads

    def prefill_caches(self) -> None:
        """Start controller write caches holding what they hold after a long run of this workload.

        Random writes: pieces of the workload's size anywhere in the files. Sequential writes: each
        thread's most recent records before its starting point, newest first, interleaved over the
        threads (which full stripes are waiting, not random ones, sets how fast a cache destages).
        """
        piece = min(self.workload.record_size, self.chunk)
        stream = self.ctx.streams("cache.prefill")
        if self.ctx.random:
            per_target = self.file_size / self.num_targets
            regions: dict[str, list[float]] = {}
            for f in self.files:
                for target, base in zip(f.targets, f.bases, strict=True):
                    regions.setdefault(target, []).append(base)
            slots = max(int(per_target // piece), 1)

            def sampler(target: str):  # noqa: ANN202 - a (offset, size) sampler per target
                bases = regions[target]
                return lambda: (bases[stream.integer(len(bases))] + stream.integer(slots) * piece, piece)

            self.ctx.platform.prefill_caches_with(sampler, only=set(regions), swept=True)
            return

        records = max(int(self.file_size // self.record), 1)
        segments = self.workload.segments if self.shared else 1
        block = self.file_size / segments  # the bytes a thread's file offsets run on without a jump
        layout: dict[float, list[tuple[int, float, float]]] = {}  # a record's pieces, shared by all targets
        # A record's pieces on each target of a file, (device offset, length) in file order: every
        # target's walk visits the same records of a thread, so they are sorted out once per record.
        placed: dict[tuple[int, float], dict[str, list[tuple[float, float]]]] = {}
        # Thread t's record ``back`` records before its start: (its pieces by target, the records
        # before it in the same chunk, which a target without a piece in it skips). Every target's
        # walk visits the same records of a thread, so each is worked out once, not once a target.
        trails: list[dict[int, tuple[dict[str, list[tuple[float, float]]], int]]] = [{} for _ in self.files]

        def record_at(t: int, back: int) -> tuple[dict[str, list[tuple[float, float]]], int]:
            f = self.files[t]
            back_at = (self.starts[t] - back * self.record) % self.file_size
            start = self.ctx.file_offset(t, back_at, self.file_size)
            on_targets = placed.get((id(f), start))
            if on_targets is None:
                split = layout.get(start)
                if split is None:
                    split = layout[start] = self._pieces(start, self.record)
                on_targets = placed[(id(f), start)] = {}
                for index, chunk_offset, length in split:
                    on_targets.setdefault(f.targets[index % len(f.targets)], []).append(
                        (f.bases[index % len(f.bases)] + chunk_offset, length)
                    )
            within_chunk = start - (start // self.chunk) * self.chunk
            found = trails[t][back] = (on_targets, int(min(within_chunk, back_at % block) // self.record))
            return found

        def walk(t: int, i: int, target: str) -> Generator[tuple[int, int, list[tuple[float, float]]], None, None]:
            """Thread t's records before its starting point, newest first, as (how far back, ``i``,
            its pieces on ``target``), for the records with a piece there. The records before one
            that lies in a chunk of another target, down to that chunk's start, lie there too and
            are skipped (a 2 GiB chunk holds two million 1 KiB records). A thread none of whose
            records reaches the target (a file smaller than its stripe width) stops after one pass."""
            trail = trails[t]
            back, found = 1, False
            while found or back <= records + 1:
                on_targets, skip = trail.get(back) or record_at(t, back)
                hits = on_targets.get(target)
                if hits:
                    found = True
                    yield back, i, hits
                    back += 1
                else:
                    back += 1 + skip

        def recency(target: str):  # noqa: ANN202 - the target's recent pieces, newest first
            users = [t for t in range(self.ctx.threads) if target in self.files[t].targets]

            def pieces() -> Generator[tuple[float, float], None, None]:
                # Newest first over all threads, and among equally old records in thread order.
                walks = [walk(t, i, target) for i, t in enumerate(users)]
                for _back, _i, hits in heapq.merge(*walks):
                    yield from hits
                while True:  # a target of a file smaller than its stripe width that no record reaches
                    yield 0.0, piece

            return pieces().__next__

        # Targets no file of the workload uses (and metadata targets) hold none of its writes.
        used = {target for f in self.files for target in f.targets}
        self.ctx.platform.prefill_caches_with(recency, only=used)

    def prestart_read_ahead(self) -> None:
        """Sequential reads start as after a long read phase: each controller already reads ahead
        of every (thread, target) stream, from the place the thread's first read of that target
        begins. Streams take the read-ahead budget in a seeded random order of the threads (the
        order they happened to start in); those left without room start as cold streams do.

        Without it each stream needs two reads to start and one read-ahead to fill (8192 streams at
        256 threads of IOR N-1 on beegfs-high-capacity: 1.5 s simulated at a quarter of the
        steady rate), a start-up the real benchmark pays once in minutes but a point would pay in
        every run.
        """
        if self.ctx.random:
            return
        record = self.record
        segments = self.workload.segments if self.shared else 1
        block = self.file_size / segments  # the bytes a thread's file offsets run on without a jump
        starts: dict[str, list[float]] = {}
        for t in self.ctx.streams("read-ahead.prestart").permutation(self.ctx.threads):
            f = self.files[t]
            targets = len(set(f.targets))
            position = self.starts[t]
            seen: set[str] = set()
            # A thread's first calls reach each of its targets within one stripe width of the file
            # (num_targets chunks), plus the straddling call.
            calls = math.ceil(len(f.targets) * self.chunk / record) + 1
            while calls > 0 and len(seen) < targets:
                at = self.ctx.file_offset(t, position, self.file_size)
                for index, chunk_offset, _length in self._pieces(at, record):
                    target = f.targets[index % len(f.targets)]
                    if target not in seen:
                        seen.add(target)
                        starts.setdefault(target, []).append(f.bases[index % len(f.bases)] + chunk_offset)
                # The calls that follow inside the chunk this one ends in reach no new target: skip
                # them (a 2 GiB chunk holds two million 1 KiB records).
                end = at + record
                room = min((end // self.chunk + 1) * self.chunk - end, block - position % block - record)
                step = 1 + max(int(room // record), 0)
                calls -= step
                # The same steps as the thread's own (it wraps to the start of its file).
                position = position + step * record
                if position + record > self.file_size:
                    position = 0.0
        self.ctx.platform.prestart_read_ahead(starts)

    # -- threads ---------------------------------------------------------------------------------

    def start(self) -> None:
        """Start one closed-loop process per benchmark thread."""
        for t in range(self.ctx.threads):
            self.ctx.env.process(self._thread(t))

    def _thread(self, t: int) -> Generator[Event, object, None]:
        ctx = self.ctx
        env = ctx.env
        stream = ctx.streams(f"thread{t}")
        client = ctx.client_of(t)
        # A client CPU with at least as many cores as threads never queues: its time is a plain
        # delay. Either way it comes before the call takes a connection or a worker: folded into
        # the first transfer (as until session 32) it held the connection, and for a read the
        # server's worker, for the client's own CPU time, so that a curve bound by those pools rose
        # by a step where the threads outgrew the cores (32 workers: 194K to 205K IOPS).
        client_cpu = ctx.platform.cpu(client) if ctx.threads_on(client) > ctx.platform.cpu(client).servers else None
        f = self.files[t]
        record = self.record
        records = max(int(self.file_size // record), 1)
        position = self.starts[t]  # drawn from this stream in __init__
        # A shared file (IOR N-1) holds task t's blocks where IOR puts them (RunContext.file_offset).
        file_offset = ctx.file_offset
        yield env.timeout(stream.uniform() * 1e-4)  # break lock-step start
        while True:
            owner = t
            if ctx.random:
                offset = stream.integer(records) * record
                if self.shared:  # IOR -z on a shared file: a transfer anywhere in the file
                    owner = stream.integer(ctx.threads)
            else:
                offset = position
                position = position + record if position + 2 * record <= self.file_size else 0.0
            cpu_time = stream.exponential(self.client_cpu)
            if client_cpu is not None:
                yield client_cpu.serve(cpu_time)
            elif cpu_time > 0.0:
                yield env.timeout(cpu_time)
            pieces = self._pieces(file_offset(owner, offset, self.file_size), record)
            for first in range(0, len(pieces), self.num_targets):
                batch = pieces[first : first + self.num_targets]
                if len(batch) == 1:
                    yield from self._piece(t, client, f, *batch[0], stream)
                else:
                    yield join(env, [Task(env, self._piece(t, client, f, *p, stream)) for p in batch])
            # A call's bytes were counted piece by piece as they arrived (``_piece``); the call
            # itself counts one request, and for random I/O its one operation.
            ctx.meter.add(t, 1.0 if ctx.random else 0.0)

    def _pieces(self, offset: float, size: float) -> list[tuple[int, float, float]]:
        """(stripe index, chunk-file offset, length) of each piece of a call, in file order."""
        pieces = []
        end = offset + size
        pos = offset
        while pos < end - 1e-9:
            chunk = int(pos // self.chunk)
            within = pos - chunk * self.chunk
            length = min(self.chunk - within, end - pos)
            index = chunk % self.num_targets
            pieces.append((index, (chunk // self.num_targets) * self.chunk + within, length))
            pos += length
        return pieces

    def _route(self, t: int, client: str, target: str) -> Route:
        """The hops and pools of requests from one thread to one target (computed once): the thread's
        client HCA (:meth:`RunContext.client_hca`), a server HCA of the target's service."""
        key = (t, target)
        route = self.routes.get(key)
        if route is None:
            ctx = self.ctx
            platform = ctx.platform
            service = self.service_of[target]
            conn_key = (client, service.name)
            conn = self.conns.get(conn_key)
            if conn is None:
                conn = self.conns[conn_key] = ctx.platform.pool(
                    f"{client}->{service.name}", self.conn_limit, family="client connections"
                )
            client_hca = ctx.client_hca(t, service.hcas)
            server_hca = platform.pick_server_hca(client_hca, service.hcas, self._server_hca_turn(t, target, service))
            # Threads of one client that reach the target through the same pair of HCAs share a route.
            shared = (client_hca, server_hca, target)
            route = self.routes_by_hcas.get(shared)
            if route is None:
                op = ctx.io_op
                zone = memory_zone(ctx.system, service, server_hca)
                network = platform.network_hops(client_hca, server_hca, op)
                network += platform.upi_hops(ctx.system.zone_of[server_hca], zone, op)
                storage = platform.storage_hops(service.server, zone, target, op)
                route = self.routes_by_hcas[shared] = Route(
                    platform.resolve(network),
                    platform.resolve(storage),
                    platform.service_cpu(service),
                    self.workers[target],
                    conn,
                )
            self.routes[key] = route
        return route

    def _server_hca_turn(self, t: int, target: str, service: Service) -> int:
        """The turn of thread ``t``'s path to ``target`` among the paths (thread, target) from files
        to the targets of services listening on ``service``'s HCAs that are dealt the same of those
        HCAs (:meth:`Platform.server_hca_candidates`, from their client HCAs), which deals the HCAs
        to them in turn (:meth:`Platform.pick_server_hca`).

        Dealt by the thread's own index, the HCAs of a zone could alias with the layout: on
        beegfs-hdr100 with two HCAs per zone, the round-robin stripes put only odd threads on the
        metadata server's storage zone at 64 threads, and one of its HCAs carried nothing. The
        turns are counted per list of HCAs dealt, not per client switch: clients on two switches
        that both reach the service's HCAs on a third took the same first HCA (session 32's review).
        They are counted over paths and over every service on the same HCAs, not per thread and
        service: three one-target services sharing a zone's two HCAs each dealt their own few
        threads from the first HCA, which carried twice the second's traffic (0.44 against 0.23 at
        32 threads, session 33)."""
        turns = self.hca_ranks.get(service.hcas)
        if turns is None:
            ctx = self.ctx
            platform = ctx.platform
            counts: dict[tuple[str, ...], int] = {}
            turns = self.hca_ranks[service.hcas] = {}
            for u, f in enumerate(self.files):
                for reached in dict.fromkeys(f.targets):
                    if self.service_of[reached].hcas != service.hcas:
                        continue
                    dealt = platform.server_hca_candidates(ctx.client_hca(u, service.hcas), service.hcas)
                    turns[u, reached] = counts.get(dealt, 0)
                    counts[dealt] = turns[u, reached] + 1
        return turns[t, target]

    def _storage(self, target: str, op: str, offset: float, size: float, route: Route) -> Event:
        """Memory <-> device: the server's PCIe/SAS hops alongside the target I/O."""
        platform = self.ctx.platform
        env = self.ctx.env
        return platform.storage_wait(target, op, offset, size, platform.finish_on(route.storage, size, env.now))

    def _piece(
        self,
        t: int,
        client: str,
        f: BeeGFSFile,
        index: int,
        chunk_offset: float,
        size: float,
        stream: Stream,
    ) -> Generator[Event, object, None]:
        ctx = self.ctx
        env = ctx.env
        platform = ctx.platform
        target = f.targets[index % len(f.targets)]
        route = self._route(t, client, target)
        device_offset = f.bases[index % len(f.bases)] + chunk_offset
        # Request message and reply each cost one network latency; both ride on the data transfer.
        delay = 2 * platform.latency
        assert route.conn is not None
        wait = route.conn.acquire()
        if wait is not None:
            yield wait
        if ctx.io_op == "write":
            yield env.timeout(platform.finish_on(route.network, size, env.now + delay) - env.now)
            wait = route.pool.acquire()
            if wait is not None:
                yield wait
            yield route.cpu.serve(stream.exponential(self.server_cpu))
            yield self._storage(target, "write", device_offset, size, route)
            route.pool.release()
        else:
            wait = route.pool.acquire()
            if wait is not None:
                yield wait
            yield route.cpu.serve(stream.exponential(self.server_cpu))
            yield self._storage(target, "read", device_offset, size, route)
            yield env.timeout(platform.finish_on(route.network, size, env.now + delay) - env.now)
            route.pool.release()
        route.conn.release()
        if not ctx.random:
            # The piece's bytes are done: counted now rather than with its call, so that a window's
            # estimate does not move with how far the calls in flight have got (tasks that move in
            # step finish their calls together, in waves).
            ctx.meter.progress(t, size)
