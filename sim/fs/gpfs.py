"""Spectrum Scale (GPFS) data path: blocks over NSDs, NSD servers, pagepool write-behind and prefetch.

* Block i of a file lives on data NSD (start + i) mod D, start random per file (round robin over
  all NSDs of the pool). With ``scattered`` allocation the block's place on the LUN is random;
  with ``cluster`` a file's blocks on one NSD are consecutive.
* A block (or a smaller record's part of one) is one NSD request to the LUN's primary NSD server
  (:class:`NsdPaths`): the client's transfer to that server's HCA, an NSD worker thread,
  ``gpfs_nsd_block_cpu_s`` of CPU on the receiving zone, then the server's HBA/SAS path and the
  ME4 controller.
* Buffered I/O goes through the client's pagepool: sequential reads are prefetched and writes
  (sequential or random) written behind, several block requests in flight per stream, at most
  ``gpfs_prefetch_threads`` per client node. Random reads are synchronous; a read hits the
  pagepool with probability (the node's pagepool share of this stream) / (file size), and a hit
  costs a memory copy. O_DIRECT bypasses the pagepool: one record at a time, its blocks in
  parallel.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Generator

from simpy.events import Event

from sim.config.system import GpfsSpec
from sim.config.workload import Workload
from sim.engine.core import Pool, join
from sim.engine.rng import Stream
from sim.fs.common import Route, RunContext
from sim.params import value


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
        self.paths = NsdPaths(ctx)
        self.depth = self._stream_depths()
        self.file_size = self.workload.file_size_for(ctx.threads)
        self.record = self.workload.record_size
        self.unit = min(self.record, self.block)
        # IOR N-1: one file (one start NSD); task t's block starts at t x block size in it.
        self.shared = self.workload.benchmark == "ior_seq_n1"
        first = ctx.streams("gpfs.file0").integer(len(self.nsds))
        self.starts = [
            first if self.shared else ctx.streams(f"gpfs.file{t}").integer(len(self.nsds)) for t in range(ctx.threads)
        ]

    def _stream_depths(self) -> list[int]:
        """Block requests each buffered stream keeps in flight: its node's ``gpfs_prefetch_threads``
        divided evenly over the node's streams (the first ones get the remainder), at least one."""
        ctx = self.ctx
        threads = int(value("gpfs_prefetch_threads"))
        seen: dict[str, int] = {}
        depths = []
        for t in range(ctx.threads):
            client = ctx.client_of(t)
            k = ctx.threads_on(client)
            index = seen.get(client, 0)
            seen[client] = index + 1
            depths.append(max(threads // k + (1 if index < threads % k else 0), 1))
        return depths

    def outstanding(self) -> int:
        """Requests the threads keep in flight at most (sizes the measurement batches)."""
        if self.workload.direct_io:
            return self.ctx.threads * max(int(self.record // self.unit), 1)
        if self.ctx.op == "random_read":
            return self.ctx.threads
        return sum(self.depth)

    def prefill_caches(self) -> None:
        """Controller write caches start full of writes like this workload's (scattered: anywhere)."""
        stream = self.ctx.streams("cache.prefill")
        unit = self.unit
        block = self.block

        def sampler(nsd: str):  # noqa: ANN202 - a (offset, size) sampler per LUN
            blocks = max(int(self.ctx.platform.raids[nsd].capacity // block), 1)
            return lambda: (stream.integer(blocks) * block + stream.integer(max(int(block // unit), 1)) * unit, unit)

        self.ctx.platform.prefill_caches_with(sampler)

    def start(self) -> None:
        """One process per benchmark thread."""
        for t in range(self.ctx.threads):
            self.ctx.env.process(self._thread(t))

    # -- per-thread I/O sequence -------------------------------------------------------------------

    def _units(self, t: int, stream: Stream) -> Generator[tuple[str, float, float], None, None]:
        """Endless (nsd, offset on the LUN, size) of a thread's requests, in issue order."""
        units_per_file = max(int(self.file_size // self.unit), 1)
        position = stream.integer(units_per_file)
        region = t * self.file_size if self.shared else 0.0
        d = len(self.nsds)
        while True:
            index = stream.integer(units_per_file) if self.ctx.random else position
            position = (position + 1) % units_per_file
            byte = region + index * self.unit
            block = int(byte // self.block)
            nsd = self.nsds[(self.starts[t] + block) % d]
            capacity = self.ctx.platform.raids[nsd].capacity
            within = byte - block * self.block
            if self.fs.allocation == "scattered":
                slot = stream.integer(max(int(capacity // self.block), 1))
            else:
                owner = 0 if self.shared else t
                slot = (owner * 7919 + block // d) % max(int(capacity // self.block), 1)
            yield nsd, slot * self.block + within, self.unit

    def _thread(self, t: int) -> Generator[Event, object, None]:
        ctx = self.ctx
        env = ctx.env
        stream = ctx.streams(f"thread{t}")
        client = ctx.client_of(t)
        units = self._units(t, stream)
        amount = 1.0 if ctx.random else self.unit
        op = ctx.io_op
        request = self.paths.request

        def next_request() -> Event:
            nsd, offset, size = next(units)
            return env.process(request(t, client, nsd, op, offset, size, stream))

        yield env.timeout(stream.uniform() * 1e-4)
        if self.workload.direct_io:
            per_record = max(int(self.record // self.unit), 1)
            while True:
                events = [next_request() for _ in range(per_record)]
                yield join(env, events)
                ctx.meter.add(t, 1.0 if ctx.random else self.record)
        elif ctx.op == "random_read":
            pagepool = self.workload.gpfs_pagepool_client or self.fs.pagepool.client
            share = pagepool / ctx.threads_on(client)
            hit = min(1.0, share / self.file_size)
            copy = self.unit / value("client_memcpy_Bps")
            while True:
                nsd, offset, size = next(units)
                if stream.uniform() < hit:
                    yield env.timeout(copy)
                else:
                    yield from request(t, client, nsd, op, offset, size, stream)
                ctx.meter.add(t, amount)
        else:
            # The node's prefetch / write-behind threads split evenly over its streams.
            inflight: deque[Event] = deque(next_request() for _ in range(self.depth[t]))
            while True:
                yield inflight.popleft()
                inflight.append(next_request())
                ctx.meter.add(t, amount)


class NsdPaths:
    """Requests from client nodes to NSDs through their primary NSD servers, shared by the data and
    metadata models: each (client, NSD, direction) route is resolved once; a request is the
    client's transfer to the server's HCA, an NSD worker thread, ``gpfs_nsd_block_cpu_s`` of CPU
    on the receiving zone, then the server's HBA/SAS path alongside the LUN's I/O (and the
    transfer back for a read)."""

    def __init__(self, ctx: RunContext) -> None:
        self.ctx = ctx
        system = ctx.system
        self.server_of = {n: system.services_of(n)[0] for n in system.storage_targets + system.metadata_targets}
        self.threads = {
            s.name: Pool(ctx.env, f"{s.name}.threads", int(value("gpfs_nsd_threads"))) for s in system.services.values()
        }
        self.cpu = value("gpfs_nsd_block_cpu_s")
        self.routes: dict[tuple[str, str, str], Route] = {}

    def route(self, t: int, client: str, nsd: str, op: str) -> Route:
        """Hops, CPU and NSD threads of ``op`` requests from one client to one NSD (computed once)."""
        key = (client, nsd, op)
        route = self.routes.get(key)
        if route is None:
            ctx = self.ctx
            platform = ctx.platform
            service = self.server_of[nsd]
            client_hca = ctx.system.client_hcas[client][0]
            server_hca = platform.pick_server_hca(client_hca, service.hcas, t)
            zone = ctx.system.zone_of[server_hca]
            route = self.routes[key] = Route(
                platform.resolve(platform.network_hops(client_hca, server_hca, op)),
                platform.resolve(platform.storage_hops(service.server, zone, nsd, op)),
                platform.cpu(zone),
                self.threads[service.name],
            )
        return route

    def request(
        self, t: int, client: str, nsd: str, op: str, offset: float, size: float, stream: Stream
    ) -> Generator[Event, object, None]:
        """One NSD request of ``size`` bytes at ``offset`` on the LUN."""
        ctx = self.ctx
        env = ctx.env
        platform = ctx.platform
        route = self.route(t, client, nsd, op)
        latency = 2 * platform.latency
        if op == "write":
            yield env.timeout(platform.finish_on(route.network, size, env.now + latency) - env.now)
        wait = route.pool.acquire()
        if wait is not None:
            yield wait
        yield route.cpu.serve(stream.exponential(self.cpu))
        hops_end = platform.finish_on(route.storage, size, env.now)
        yield join(env, [env.timeout(hops_end - env.now), platform.target_io(nsd, op, offset, size)])
        if op == "read":
            yield env.timeout(platform.finish_on(route.network, size, env.now + latency) - env.now)
        route.pool.release()
