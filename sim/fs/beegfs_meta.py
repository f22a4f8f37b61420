"""BeeGFS metadata path for mdtest: directory owners, metadata workers, MDTs, chunk-file messages.

What one file operation costs (shared research notes 1.4 and 1.5, from the BeeGFS sources):

* Every directory is owned by one metadata service, chosen uniformly at random when the directory
  is made; the files of a directory (dentry with the inode inlined) live with it, so every file
  operation is a request to the owner of its directory.
* A request: the client's CPU (``beegfs_client_request_cpu_s``) and one network latency each way;
  at most ``conn_max_internode.client`` requests in flight from one client to one service; one of
  the service's ``workers.meta`` worker threads (default twice the cores it runs on, at least 4)
  for the whole server-side work; one core of the service's NUMA zone (of any of its server's
  zones, if it is not pinned to one: :meth:`Platform.service_cpu`) for ``beegfs_meta_request_cpu_s``.
* create = open(O_CREAT) + close: two requests; the create writes one ext4 block
  (``beegfs_mdt_update_bytes``) to the owner's metadata target. No storage target is contacted
  (chunk files are made lazily by the first write).
* stat = one request, served from the metadata server's memory (no client attribute cache:
  ``tuneFileSubentryCacheValidityMS`` is 0).
* read = open + close: two requests, no MDT I/O.
* remove = one request that writes one block to the MDT and then sends one unlink message to
  every stripe target of the file (in parallel when there are several), whether or not chunk
  files exist. The client is answered before those messages (``tuneEarlyUnlinkResponse``), but the
  worker stays busy until they are done.
* ``-w``/``-e`` data: written or read in chunk-sized pieces over the file's stripe targets, one
  stripe set at a time (a file within one chunk is one request to its first target). With ``-y``
  the client then fsyncs the file: one ``FSyncLocalFileMsg`` to every target its data is on
  (``tuneRemoteFSync``, default true), a storage worker and its CPU each, as IOR's and IOzone's
  ``-e`` (no drive I/O: the write is already a device write in this model). Close then makes the
  metadata service message every target used (``CloseChunkFileMsg``), and the client waits for it.
* Directories (mdtest without ``-F``): mkdir is one request to the parent directory's owner, which
  writes the new dentry and sends ``MkLocalDirMsg`` to the metadata service chosen at random to
  own the new directory (an idle worker there, else its one direct worker; its CPU and one MDT
  block); rmdir is the same with ``RmLocalDirMsg``; a directory stat is one request to a
  metadata service drawn at random (the directory's owner, which the model does not keep).
* Storage-side messages (unlink, close chunk) cost the storage service one worker and
  ``beegfs_storage_request_cpu_s`` and no drive I/O, whether or not the chunk file was written.
  A metadata service sends them, and its inode messages to other metadata services, on at most
  ``conn_max_internode.meta`` connections to each service (a connection is held until the reply
  is back); a client's fsync messages (``FSyncLocalFileMsg``) take its ``conn_max_internode.client``
  connections to the storage services, as its data requests do.
* A file's stripe targets are ``num_targets`` consecutive targets in ID order from a random start
  (the round-robin chooser seen from one file).

The ext4 writes are modelled as synchronous in the worker (conservative: ext4 journals them, but a
long run cannot create faster than the MDT absorbs its blocks).
"""

from __future__ import annotations

from collections.abc import Generator

from simpy.events import Event

from sim.config.system import BeeGFSSpec
from sim.engine.core import Pool, Station, Task, acquire_first, join
from sim.engine.rng import Stream
from sim.fs.common import RunContext
from sim.fs.mdtest import FileHandleSteps, MetadataModelBase
from sim.fs.settings import (
    beegfs_conn_max,
    beegfs_meta_workers,
    beegfs_storage_workers,
    memory_zone,
    ranks_by_hcas,
    service_cores,
    service_zone,
)
from sim.params import value
from sim.topology.model import Service

#: Stations of a path with their seconds per byte (Platform.resolve).
_Resolved = list[tuple[Station, float]]


class BeeGFSMetadataModel(MetadataModelBase):
    """mdtest tasks against the metadata services (and, for data and unlinks, storage targets) of BeeGFS."""

    def __init__(self, ctx: RunContext) -> None:
        super().__init__(ctx)
        fs = ctx.system.spec.filesystem
        assert isinstance(fs, BeeGFSSpec)
        system = ctx.system
        # The topology builder guarantees metadata services with targets and storage targets.
        self.meta = [s for s in system.services.values() if s.kind == "beegfs-meta" and s.targets]
        self.targets = system.storage_targets
        assert self.meta and self.targets, f"{system.name}: BeeGFS without metadata or storage targets"
        self.storage_service = {t: system.services_of(t)[0] for t in self.targets}
        # How each target's paths are dealt its service's HCAs (three one-target services of
        # beegfs-hdr100's metadata server share their zone's).
        self.target_rank = ranks_by_hcas(self.storage_service)
        pool = ctx.platform.pool
        self._zones: dict[str, str] = {}
        # Pool stages (naming the full pool that holds the rate): a client's connections are taken
        # first (0); the server-side pools nest both ways (a worker waits for a connection to another
        # server, whose worker the message then takes), so workers, direct workers and server
        # connections share stage 1.
        self.meta_workers = {
            s.name: pool(f"{s.name}.workers", beegfs_meta_workers(system, s), stage=1, family="metadata workers")
            for s in self.meta
        }
        self.storage_workers = {
            t: pool(
                f"{t}.workers",
                beegfs_storage_workers(system, self.storage_service[t]),
                stage=1,
                family="storage workers",
            )
            for t in self.targets
        }
        # Messages from other servers arrive on "direct" connections and are queued as direct work,
        # which a regular worker takes when one is idle and the service's one direct worker
        # otherwise (APP_WORKERS_DIRECT_NUM 1 in beegfs-meta's App.cpp; StreamListener puts the work
        # of a direct socket on the direct queue). Without it, mkdirs whose workers all wait on each
        # other's MkLocalDirMsg would deadlock, in the model as in a server built without it.
        self.direct_workers = {
            s.name: pool(f"{s.name}.direct-worker", 1, stage=1, family="direct workers") for s in self.meta
        }
        self.conn_limit = beegfs_conn_max(system, "client")
        # A metadata service's own connections to each other server (beegfs-meta's
        # connMaxInternodeNum): its chunk-file messages to a storage service and its inode messages
        # to another metadata service wait for one (sim.fs.settings: the shipped conf's 32 when
        # the topology leaves it out).
        self.link_limit = beegfs_conn_max(system, "meta")
        self.links: dict[tuple[str, str], Pool] = {}
        self.conns: dict[tuple[str, str], Pool] = {}
        self.num_targets = min(fs.num_targets, len(self.targets)) if self.targets else 0
        self.chunk = fs.chunk_size
        self.meta_cpu = value("beegfs_meta_request_cpu_s")
        self.storage_cpu = value("beegfs_storage_request_cpu_s")
        self.client_cpu = value("beegfs_client_request_cpu_s")
        self.update_bytes = value("beegfs_mdt_update_bytes")
        self.write_bytes = self.workload.write_bytes
        self.read_bytes = self.workload.read_bytes
        # Each directory's owner, drawn as mdtest makes the directories (task by task, in order).
        owner_stream = ctx.streams("beegfs.mkdir")
        self.owner = {
            key: self.meta[owner_stream.integer(len(self.meta))] for key in self.walk.all_directories(ctx.threads)
        }
        self._mdt_hops: dict[str, list[tuple[Station, float]]] = {}
        # (client HCA, target, op) -> the network and storage hops of a file's data.
        self._data_routes: dict[tuple[str, str, str], tuple[_Resolved, _Resolved]] = {}

    def written_luns(self) -> set[str]:
        """The MDTs, and the storage targets when files get data."""
        luns = {s.targets[0] for s in self.meta}
        if self.walk.phase == "create" and self.write_bytes > 0:
            luns |= set(self.targets)
        return luns

    # -- helpers ---------------------------------------------------------------------------------

    def _zone(self, service: Service) -> str:
        zone = self._zones.get(service.name)
        if zone is None:
            zone = self._zones[service.name] = service_zone(self.ctx.system, service)
        return zone

    def _conn(self, client: str, service: Service) -> Pool:
        key = (client, service.name)
        pool = self.conns.get(key)
        if pool is None:
            pool = self.conns[key] = self.ctx.platform.pool(
                f"{client}->{service.name}", self.conn_limit, family="client connections"
            )
        return pool

    def _stripe(self, stream: Stream, count: int | None = None) -> list[str]:
        n = len(self.targets)
        start = stream.integer(n)
        return [self.targets[(start + i) % n] for i in range(self.num_targets if count is None else count)]

    def _mdt_write(self, service: Service, stream: Stream) -> float | Event:
        """One block written to the service's metadata target, through the server's PCIe path: its
        finish time when the target's model computes it at arrival, else an event."""
        ctx = self.ctx
        platform = ctx.platform
        mdt = service.targets[0]
        hops = self._mdt_hops.get(service.name)
        if hops is None:
            # A service not pinned to a zone writes from the zone nearest its MDT (no UPI crossing
            # where one of its zones holds the MDT's drives or HBA), as any of its cores may.
            zones = service_cores(ctx.system, service) if service.zone is None else (self._zone(service),)
            hops = self._mdt_hops[service.name] = platform.resolve(
                min((platform.storage_hops(service.server, z, mdt, "write") for z in zones), key=len)
            )
        blocks = max(int(platform.raids[mdt].capacity // self.update_bytes), 1)
        offset = stream.integer(blocks) * self.update_bytes
        hops_end = platform.finish_on(hops, self.update_bytes, ctx.env.now)
        return platform.storage_end(mdt, "write", offset, self.update_bytes, hops_end)

    def _link(self, sender: Service, receiver: Service) -> Pool:
        """The connections a metadata service opens to another server (``conn_max_internode.meta``)."""
        key = (sender.name, receiver.name)
        pool = self.links.get(key)
        if pool is None:
            pool = self.links[key] = self.ctx.platform.pool(
                f"{sender.name}->{receiver.name}", self.link_limit, stage=1, family="server connections"
            )
        return pool

    def _chunk_served(
        self, target: str, stream: Stream, link: Pool | None = None, linked: bool = True
    ) -> Generator[Event, object, None]:
        """A chunk message that found its sender's connections (``linked`` False) or its target's
        workers all busy: queue for them, then its CPU; the connection is back with the reply."""
        env = self.ctx.env
        if link is not None and not linked:
            wait = link.acquire()
            if wait is not None:
                yield wait
        pool = self.storage_workers[target]
        wait = pool.acquire()
        if wait is not None:
            yield wait
        service = self.storage_service[target]
        yield self.ctx.platform.service_cpu(service).serve(stream.exponential(self.storage_cpu))
        pool.release()
        if link is not None:
            link.release_at(env.now + self.ctx.platform.latency)

    def _inode_message(self, sender: Service, owner: Service, stream: Stream) -> Generator[Event, object, None]:
        """A metadata-to-metadata message (MkLocalDirMsg, RmLocalDirMsg) on one of the sender's
        connections to the owner: the directory inode's owner takes a worker, its CPU and one MDT
        block."""
        ctx = self.ctx
        link = self._link(sender, owner) if sender is not owner else None
        if link is not None:
            wait = link.acquire()
            if wait is not None:
                yield wait
        yield ctx.env.timeout(ctx.platform.latency)
        # An idle regular worker takes it, else the direct worker; if neither is idle, whichever
        # frees first, the message ahead of the clients' requests waiting for a regular worker
        # (BeeGFS's regular workers take direct work in turn with the clients', MultiWorkQueue:
        # queued behind hundreds of requests it would always go to the direct worker). Until
        # session 33 it waited for the direct worker alone, and mkdir ran at a third of its
        # CPU-bound rate behind that one worker from 256 tasks (a BeeGFS metadata review: 52K and
        # 59K at 256 and 1024 tasks against 161K at 64).
        pools = (self.meta_workers[owner.name], self.direct_workers[owner.name])
        free, wait = acquire_first(ctx.env, pools, ahead=True)
        handed = free if wait is None else (yield wait)
        assert isinstance(handed, Pool)
        pool = handed
        yield ctx.platform.service_cpu(owner).serve(stream.exponential(self.meta_cpu))
        written = self._mdt_write(owner, stream)
        yield written if isinstance(written, Event) else ctx.env.timeout(written - ctx.env.now)
        pool.release()
        yield ctx.env.timeout(ctx.platform.latency)
        if link is not None:
            link.release()

    def _messages(
        self,
        targets: list[str],
        stream: Stream,
        depart: float | None = None,
        sender: Service | None = None,
        client: str | None = None,
    ) -> Generator[Event, object, None]:
        """Messages to storage targets (unlink or close of a chunk file from a metadata service
        ``sender``, an fsync from a ``client``), sent to ``targets`` at once (now, or at ``depart``):
        each takes one of the sender's connections to the target's service, a storage worker of the
        target and its zone's CPU (nothing on the drive), and the sender waits for every reply.

        The messages leave and arrive together, so one process serves them all: a message whose
        target has an idle worker is booked on the CPU station at arrival (its finish is known
        then) and its worker released at that finish (``Pool.release_at``), without a process of
        its own; only a message that must queue for a worker gets one (``_chunk_served``). Same
        FCFS order and RNG draws as one process per message, at a fifth of the events."""
        ctx = self.ctx
        env = ctx.env
        platform = ctx.platform
        yield env.timeout((depart if depart is not None else env.now) + platform.latency - env.now)
        now = env.now
        last = now
        queued: list[Event] = []
        for target in targets:
            receiver = self.storage_service[target]
            link = (
                self._conn(client, receiver)
                if client is not None
                else self._link(sender, receiver)
                if sender is not None
                else None
            )
            if link is not None and not link.try_acquire():
                queued.append(Task(env, self._chunk_served(target, stream, link, linked=False)))
                continue
            pool = self.storage_workers[target]
            if not pool.try_acquire():
                queued.append(Task(env, self._chunk_served(target, stream, link)))
                continue
            cpu = platform.service_cpu(self.storage_service[target])
            end = cpu.reserve(stream.exponential(self.storage_cpu))
            pool.release_at(end)
            if link is not None:
                link.release_at(end + platform.latency)
            if end > last:
                last = end
        if queued:
            yield join(env, [env.timeout(last - now), *queued])
            last = env.now
        yield env.timeout(last + platform.latency - env.now)

    def _after_reply(
        self, pool: Pool, targets: list[str], stream: Stream, depart: float, service: Service
    ) -> Generator[Event, object, None]:
        yield from self._messages(targets, stream, depart, service)
        pool.release()

    def _request(
        self,
        client: str,
        service: Service,
        stream: Stream,
        *,
        update: bool = False,
        chunks: list[str] | None = None,
        early_reply: bool = False,
        remote: Service | None = None,
    ) -> Generator[Event, object, None]:
        """One client request to a metadata service, with its MDT write, its message to the metadata
        service that owns a directory's inode (``remote``: mkdir, rmdir) and chunk-file messages.

        Where the worker's last step has a finish time known at its start (a CPU or MDT booking),
        the worker is released at that time (``Pool.release_at``) and the reply's latency is added
        to the same wait: one event instead of two."""
        ctx = self.ctx
        env = ctx.env
        platform = ctx.platform
        conn = self._conn(client, service)
        wait = conn.acquire()
        if wait is not None:
            yield wait
        yield env.timeout(stream.exponential(self.client_cpu) + platform.latency)
        pool = self.meta_workers[service.name]
        wait = pool.acquire()
        if wait is not None:
            yield wait
        end = platform.service_cpu(service).reserve(stream.exponential(self.meta_cpu))
        if update:
            yield env.timeout(end - env.now)
            written = self._mdt_write(service, stream)
            if isinstance(written, Event):
                yield written
                end = env.now
            else:
                end = written
        if remote is not None:
            yield env.timeout(end - env.now)
            yield from self._inode_message(service, remote, stream)
            end = env.now
        if chunks and early_reply:  # unlink: the reply leaves with the chunk messages
            env.process(self._after_reply(pool, chunks, stream, end, service))
        elif chunks:  # close of a file with data: the reply waits for the chunk messages
            yield env.timeout(end - env.now)
            yield from self._messages(chunks, stream, sender=service)
            pool.release()
            end = env.now
        else:
            pool.release_at(end)
        yield env.timeout(end + platform.latency - env.now)
        conn.release()

    def _data(self, t: int, client: str, target: str, op: str, size: float, stream: Stream) -> Generator:
        """A client's small write or read of one file's data on one storage target."""
        ctx = self.ctx
        env = ctx.env
        platform = ctx.platform
        service = self.storage_service[target]
        client_hca = ctx.client_hca(t, service.hcas)
        key = (client_hca, target, op)
        route = self._data_routes.get(key)
        if route is None:
            server_hca = platform.deal_server_hca(client_hca, service.hcas, self.target_rank[target])
            zone = memory_zone(ctx.system, service, server_hca)
            hops = platform.network_hops(client_hca, server_hca, op)
            hops += platform.upi_hops(ctx.system.zone_of[server_hca], zone, op)
            storage_hops = platform.storage_hops(service.server, zone, target, op)
            route = self._data_routes[key] = (platform.resolve(hops), platform.resolve(storage_hops))
        network, storage = route
        conn = self._conn(client, service)
        wait = conn.acquire()
        if wait is not None:
            yield wait
        delay = stream.exponential(self.client_cpu) + 2 * platform.latency
        if op == "write":
            yield env.timeout(platform.finish_on(network, size, env.now + delay) - env.now)
            delay = 0.0
        pool = self.storage_workers[target]
        wait = pool.acquire()
        if wait is not None:
            yield wait
        yield platform.service_cpu(service).serve(stream.exponential(self.storage_cpu))
        blocks = max(int(platform.raids[target].capacity // 4096), 1)
        offset = stream.integer(blocks) * 4096.0
        yield platform.storage_wait(target, op, offset, size, platform.finish_on(storage, size, env.now))
        pool.release()
        if op == "read":
            yield env.timeout(platform.finish_on(network, size, env.now + delay) - env.now)
        conn.release()

    def _file_data(
        self, t: int, client: str, op: str, size: float, stream: Stream
    ) -> Generator[Event, object, list[str]]:
        """A file's data in chunk-sized pieces over its stripe targets, one stripe set at a time
        (each set's pieces in parallel); returns the targets used, which close then messages."""
        targets = self._stripe(stream)
        pieces: list[tuple[str, float]] = []
        done = 0.0
        while done < size - 1e-9:
            pieces.append((targets[len(pieces) % len(targets)], min(self.chunk, size - done)))
            done += pieces[-1][1]
        env = self.ctx.env
        for first in range(0, len(pieces), len(targets)):
            batch = pieces[first : first + len(targets)]
            if len(batch) == 1:
                yield from self._data(t, client, batch[0][0], op, batch[0][1], stream)
            else:
                yield join(env, [env.process(self._data(t, client, tg, op, n, stream)) for tg, n in batch])
        return targets[: min(len(pieces), len(targets))]

    # -- the four phases -------------------------------------------------------------------------

    def operate(
        self, t: int, client: str, directory: tuple[int, int], item: int, stream: Stream
    ) -> Generator[Event, object, None]:
        service = self.owner[directory]
        phase = self.walk.phase
        if phase.startswith("dir_"):
            # The new directory's inode lives on a metadata service chosen at random at mkdir.
            owner = self.meta[stream.integer(len(self.meta))]
            if phase == "dir_stat":
                yield from self._request(client, owner, stream)
            else:  # mkdir / rmdir: the parent's dentry here, the inode on its owner
                yield from self._request(client, service, stream, update=True, remote=owner)
        elif phase == "stat":
            yield from self._request(client, service, stream)
        elif phase == "create":
            yield from self._request(client, service, stream, update=True)  # open(O_CREAT)
            chunks: list[str] | None = None
            if self.write_bytes > 0:
                chunks = yield from self._file_data(t, client, "write", self.write_bytes, stream)
                if self.workload.fsync_per_file:  # -y: fsync, as handle() does for -e
                    yield from self._messages(chunks, stream, client=client)
            yield from self._request(client, service, stream, chunks=chunks)  # close
        elif phase == "read":
            yield from self._request(client, service, stream)  # open
            chunks = None
            if self.read_bytes > 0:
                chunks = yield from self._file_data(t, client, "read", self.read_bytes, stream)
            yield from self._request(client, service, stream, chunks=chunks)  # close
        else:  # remove
            chunks = self._stripe(stream)
            yield from self._request(client, service, stream, update=True, chunks=chunks, early_reply=True)

    def handle(
        self, t: int, client: str, directory: tuple[int, int], steps: FileHandleSteps, stream: Stream
    ) -> Generator[Event, object, None]:
        service = self.owner[directory]
        if steps.open:
            yield from self._request(client, service, stream, update=steps.open == "create")
        touched = self._stripe(stream, steps.targets) if steps.targets else []
        if steps.fsync and touched:
            # FSyncLocalFileMsg from the client to every target the file's data is on
            # (tuneRemoteFSync, default true): a storage worker and its CPU each, sent at once.
            yield from self._messages(touched, stream, client=client)
        if steps.close:  # the owner closes the chunk files the session used (CloseChunkFileMsg)
            yield from self._request(client, service, stream, chunks=touched or None)
