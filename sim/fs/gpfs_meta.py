"""Spectrum Scale (GPFS) metadata path for mdtest: client-side metadata, metadata NSDs, small files.

GPFS has no metadata server: the client node that holds a file's tokens updates its metadata
itself, in its own cache, and writes the blocks to the metadata NSDs through their NSD servers
(shared research notes 2.4). What one file operation costs in the model:

* Every metadata system call (creat/open, close, stat, unlink) is handled by the node's GPFS
  daemon, modelled as one server per client node that each call occupies for
  ``gpfs_node_meta_call_s`` (the per-node ceiling of cached metadata operations). A small
  ``write``/``read`` of data that is in the pagepool is a data operation: a memory copy at
  ``client_memcpy_Bps``, not a metadata call.
* stat and open/close are served from the node's cache: mdtest's tasks stat and read the files
  they created themselves (no ``-N`` stride), so the node still holds their tokens and inodes.
  This client-side caching is what lets stat reach millions of operations per second.
* With ``-N`` a task works on the items another task created. When that task ran on another node,
  the item's inode token is held there: stat, open, unlink, rmdir and a directory stat first take
  the token (four message latencies: revoke and grant, as for a directory token) and read the
  inode from a metadata NSD (one ``inode_size`` read of its first copy); its data is not in this
  node's pagepool, so ``-e`` reads it from the data NSD (data in the inode came with it). An
  unlink or rmdir in a directory another node created also takes that directory's token over, as
  without ``-u``. Items of a task on the same node are cached as without ``-N``.
* create and remove write the file's inode (``inode_size`` bytes) to a metadata NSD, replicated
  ``metadata_replicas`` times on distinct metadata NSDs spread over the list (standing in for
  failure groups), in parallel; each write is an
  NSD request (network, NSD thread, ``gpfs_nsd_block_cpu_s`` on the server, SAS, ME4 controller).
  Directory-block and allocation-map updates of consecutive operations in one directory are
  assumed to be absorbed into these writes (the node keeps the directory's blocks while it holds
  its token).
* Data of ``-w``: up to ``inode_size`` - 128 bytes (the inode header) lives in the inode and costs
  nothing more. Larger files get whole blocks round robin over the data NSDs and their tail in
  subblocks (``block_size / subblocks_per_block``): the write is copied into the pagepool and
  written behind, one request per block or tail, through the node's ``gpfs_prefetch_threads``
  write-behind slots (a writer waits only when all are busy; ``-y`` waits for its own writes). A
  node's new small files fill the subblocks of one block after the other; each new block is on
  the next NSD, at a random place (``allocation: scattered``) or right after the node's previous
  block there (``cluster``).
* ``-e`` reads of data the node wrote come from its pagepool while the node's small files fit in
  it, otherwise (with the probability that they do not fit) from the data NSD.
* Directories (mdtest without ``-F``): mkdir and rmdir are one call and one replicated inode
  write, like a file's create and remove without the close (after a token takeover without
  ``-u``); a directory stat is one call.
* Without ``-u`` all tasks share directories: a create or remove in a directory whose token is
  held by another node first takes the token over (four message latencies: revoke and grant) and
  makes the old holder flush the directory block (one replicated metadata write), one node at a
  time per directory. The token leaves the old holder when the revoke starts: its next operation
  there waits for the takeover in progress and then takes the token back.
"""

from __future__ import annotations

import math
from collections.abc import Generator

from simpy.events import Event

from sim.config.system import GpfsSpec
from sim.engine.core import Pool, Station, join
from sim.engine.rng import Stream
from sim.fs.common import RunContext
from sim.fs.gpfs import NsdPaths
from sim.fs.mdtest import FileHandleSteps, MetadataModelBase
from sim.params import value

INODE_HEADER_BYTES = 128.0  # research notes 2.4: "a fixed footprint of the inode header, 128 bytes"


class GpfsMetadataModel(MetadataModelBase):
    """mdtest tasks against GPFS client nodes, metadata NSDs and (for data) data NSDs."""

    def __init__(self, ctx: RunContext) -> None:
        super().__init__(ctx)
        fs = ctx.system.spec.filesystem
        assert isinstance(fs, GpfsSpec)
        self.fs = fs
        system = ctx.system
        env = ctx.env
        self.data_nsds = system.storage_targets
        self.meta_nsds = system.metadata_targets or self.data_nsds  # dataAndMetadata NSDs otherwise
        assert self.meta_nsds, f"{system.name}: GPFS without NSDs"
        self.replicas = max(1, min(fs.metadata_replicas, len(self.meta_nsds)))
        self.paths = NsdPaths(ctx)
        self.call_s = value("gpfs_node_meta_call_s")
        self.memcpy = value("client_memcpy_Bps")
        self.daemon: dict[str, Station] = {}
        for client in system.clients:
            station = Station(env, f"{client}.gpfs-daemon", 1)
            self.daemon[client] = station
            ctx.platform.stations[station.name] = station
        behind = int(value("gpfs_prefetch_threads"))
        self.slots = {c: ctx.platform.pool(f"{c}.write-behind", behind, family="write-behind") for c in system.clients}
        self.inode = fs.inode_size
        self.subblock = fs.block_size / fs.subblocks_per_block
        workload = self.workload
        self.write_bytes = workload.write_bytes
        self.read_bytes = workload.read_bytes
        self.in_inode = workload.write_bytes <= self.inode - INODE_HEADER_BYTES
        # A file's data: whole blocks round robin over the data NSDs, the tail in subblocks.
        self.full_blocks = int(workload.write_bytes // fs.block_size)
        tail = workload.write_bytes - self.full_blocks * fs.block_size
        self.tail_size = math.ceil(tail / self.subblock) * self.subblock
        self.data_size = self.full_blocks * fs.block_size + self.tail_size
        assert self.in_inode or self.data_nsds, f"{system.name}: no data NSDs for file data"
        # Reads of data the node wrote: pagepool hits while its small files fit.
        files_per_node = workload.total_items(ctx.threads) / len(ctx.placed_clients)
        footprint = files_per_node * self.data_size
        self.hit = 1.0 if footprint <= 0 else min(1.0, fs.pagepool.client / footprint)
        self.cursor: dict[str, list[float]] = {}  # client -> [nsd index, block base, subblock index]
        self.next_block: dict[tuple[str, int], int] = {}  # (client, data NSD index) -> its next block (cluster)
        self.holder: dict[tuple[int, int], str] = {}
        self.dir_lock: dict[tuple[int, int], Pool] = {}

    def written_luns(self) -> set[str]:
        """Metadata NSDs for creates and removes, data NSDs too when created files need subblocks."""
        luns = set(self.meta_nsds)
        if self.walk.phase == "create" and not self.in_inode:
            luns |= set(self.data_nsds)
        return luns

    def prefill_unit(self, lun: str) -> float:
        """Inode writes on metadata NSDs; on data NSDs a node's small files fill whole stripes in the
        controller cache (they are written one after the other into the node's block)."""
        if lun in self.meta_nsds:
            return self.inode
        raid = self.ctx.platform.raids[lun]
        return raid.data * raid.su

    def pilot_luns(self) -> set[str]:
        """The data NSDs a create phase writes file data beyond the inode to: their caches start at
        the flush watermark, and a point watches them for a load their drives cannot keep up with
        (reported as not converged, :func:`sim.benchmarks.driver.run_replication`)."""
        return set(self.data_nsds) - set(self.meta_nsds) if self.walk.phase == "create" and not self.in_inode else set()

    def prefill_fill(self, lun: str) -> float:
        """Data NSDs start at the flush watermark: a stream of small files adds a stripe to the cache
        every block / subblock files (whole phases too: a point's fill, 1.0 outside a steady-state
        pilot, started them full for a few hours of session 33). Metadata NSDs as in the base class."""
        return super().prefill_fill(lun) if lun in self.meta_nsds else 0.5

    # -- NSD requests ----------------------------------------------------------------------------

    def _inode_write(self, t: int, stream: Stream) -> Event:
        """The inode (or a directory block) written to ``metadata_replicas`` distinct metadata NSDs,
        spaced evenly over the list (standing in for failure groups)."""
        ctx = self.ctx
        n = len(self.meta_nsds)
        base = stream.integer(n)
        step = max(n // self.replicas, 1)
        writes = []
        for r in range(self.replicas):
            nsd = self.meta_nsds[(base + r * step) % n]
            slots = max(int(ctx.platform.raids[nsd].capacity // self.inode), 1)
            offset = stream.integer(slots) * self.inode
            writes.append(ctx.env.process(self.paths.request(t, nsd, "write", offset, self.inode, stream)))
        return writes[0] if len(writes) == 1 else join(ctx.env, writes)

    def _data_pieces(self, client: str, stream: Stream) -> list[tuple[str, float, float]]:
        """(NSD, offset, bytes) of a file's data: its whole blocks on consecutive NSDs from a random
        one, at random places (scattered allocation); its tail in the next subblocks of the node's
        current block, which a node's small files fill one after the other."""
        block = self.fs.block_size
        count = len(self.data_nsds)
        pieces = []
        start = stream.integer(count) if self.full_blocks else 0
        for b in range(self.full_blocks):
            index = (start + b) % count
            pieces.append((self.data_nsds[index], self._new_block(client, index, stream), block))
        if self.tail_size > 0:
            per_block = int(block // self.tail_size) or 1
            cursor = self.cursor.get(client)
            if cursor is None or cursor[2] >= per_block:
                index = stream.integer(count) if cursor is None else (int(cursor[0]) + 1) % count
                cursor = self.cursor[client] = [float(index), self._new_block(client, index, stream), 0.0]
            pieces.append((self.data_nsds[int(cursor[0])], cursor[1] + cursor[2] * self.tail_size, self.tail_size))
            cursor[2] += 1
        return pieces

    def _new_block(self, client: str, index: int, stream: Stream) -> float:
        """Where a node's next new block on data NSD ``index`` goes: anywhere on the LUN with
        scattered allocation; with cluster allocation right after the node's previous block there
        (its first one at a place of its own, as the data path places a file's blocks)."""
        block = self.fs.block_size
        slots = max(int(self.ctx.platform.raids[self.data_nsds[index]].capacity // block), 1)
        if self.fs.allocation == "scattered":
            return stream.integer(slots) * block
        key = (client, index)
        n = self.next_block.get(key)
        if n is None:
            n = self.ctx.system.clients.index(client) * 7919
        self.next_block[key] = n + 1
        return (n % slots) * block

    def _write_behind(self, t: int, client: str, piece: tuple[str, float, float], stream: Stream) -> Generator:
        yield from self.paths.request(t, piece[0], "write", piece[1], piece[2], stream)
        self.slots[client].release()

    def _call(self, client: str, stream: Stream) -> Event:
        return self.daemon[client].serve(stream.exponential(self.call_s))

    def _inode_read(self, t: int, stream: Stream) -> Generator[Event, object, None]:
        """An item another node created (mdtest -N): take its inode token (revoke and grant) and read
        the inode from the first copy's metadata NSD."""
        ctx = self.ctx
        yield ctx.env.timeout(4 * ctx.platform.latency)
        nsd = self.meta_nsds[stream.integer(len(self.meta_nsds))]
        slots = max(int(ctx.platform.raids[nsd].capacity // self.inode), 1)
        yield from self.paths.request(t, nsd, "read", stream.integer(slots) * self.inode, self.inode, stream)

    def _take_directory(
        self, t: int, client: str, directory: tuple[int, int], stream: Stream, first: str | None = None
    ) -> Generator:
        """Move the directory's token to this node (one node at a time): without -u, or with -N
        in a directory another node made. ``first`` holds it until anyone takes it (this node by
        default)."""
        if self.holder.get(directory, first or client) == client:
            self.holder[directory] = client
            return
        lock = self.dir_lock.get(directory)
        if lock is None:
            lock = self.dir_lock[directory] = self.ctx.platform.pool(
                f"mdtest.tree{directory[0]}.dir{directory[1]}.token", 1, family="directory tokens"
            )
        wait = lock.acquire()
        if wait is not None:
            yield wait
        if self.holder.get(directory) != client:
            # The revoke takes the token from the old holder at once: its next operation in this
            # directory waits for the lock and takes the token back, it does not slip in between.
            self.holder[directory] = client
            yield self.ctx.env.timeout(4 * self.ctx.platform.latency)
            yield self._inode_write(t, stream)  # the old holder flushes the directory block
        lock.release()

    # -- the four phases -------------------------------------------------------------------------

    def operate(
        self, t: int, client: str, directory: tuple[int, int], item: int, stream: Stream
    ) -> Generator[Event, object, None]:
        env = self.ctx.env
        phase = self.walk.phase
        # mdtest -N: the item was made on another node, which holds its token and inode.
        maker = self.ctx.client_of(self.walk.owner(t)) if self.walk.stride else client
        remote = maker != client
        if phase == "dir_stat":
            if remote:
                yield from self._inode_read(t, stream)
            yield self._call(client, stream)
        elif phase in ("dir_create", "dir_remove"):  # mkdir / rmdir: the directory's inode
            if not self.walk.unique or remote:
                yield from self._take_directory(t, client, directory, stream, maker)
            if remote:
                yield from self._inode_read(t, stream)
            yield self._call(client, stream)
            yield self._inode_write(t, stream)
        elif phase == "stat":
            if remote:
                yield from self._inode_read(t, stream)
            yield self._call(client, stream)
        elif phase == "create":
            if not self.walk.unique:
                yield from self._take_directory(t, client, directory, stream)
            yield self._call(client, stream)  # creat
            yield self._inode_write(t, stream)
            if self.write_bytes > 0:
                yield env.timeout(self.write_bytes / self.memcpy)  # write: a copy into the pagepool
                if not self.in_inode:
                    slots = self.slots[client]
                    flushes = []
                    for piece in self._data_pieces(client, stream):
                        wait = slots.acquire()
                        if wait is not None:
                            yield wait
                        flushes.append(env.process(self._write_behind(t, client, piece, stream)))
                    if self.workload.fsync_per_file:
                        yield flushes[0] if len(flushes) == 1 else join(env, flushes)
            yield self._call(client, stream)  # close
        elif phase == "read":
            if remote:
                yield from self._inode_read(t, stream)
            yield self._call(client, stream)  # open
            if self.read_bytes > 0:
                # In the inode (read with it), or in this node's pagepool if it wrote the file.
                if self.in_inode or (not remote and stream.uniform() < self.hit):
                    yield env.timeout(self.read_bytes / self.memcpy)
                else:
                    reads = [
                        env.process(self.paths.request(t, nsd, "read", offset, size, stream))
                        for nsd, offset, size in self._data_pieces(client, stream)
                    ]
                    yield reads[0] if len(reads) == 1 else join(env, reads)
            yield self._call(client, stream)  # close
        else:  # remove
            if not self.walk.unique or remote:
                yield from self._take_directory(t, client, directory, stream, maker)
            if remote:
                yield from self._inode_read(t, stream)
            yield self._call(client, stream)  # unlink
            yield self._inode_write(t, stream)

    def handle(
        self, t: int, client: str, directory: tuple[int, int], steps: FileHandleSteps, stream: Stream
    ) -> Generator[Event, object, None]:
        if steps.open == "create":
            if not self.walk.unique:
                yield from self._take_directory(t, client, directory, stream)
            yield self._call(client, stream)
            yield self._inode_write(t, stream)
        elif steps.open:
            yield self._call(client, stream)
        if steps.fsync:
            yield self._call(client, stream)
            if steps.wrote:  # the new size and times are forced to the log on a metadata NSD
                yield self._inode_write(t, stream)
        if steps.close:
            yield self._call(client, stream)
