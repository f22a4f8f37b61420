"""What both file-system models share: the run context and the thread-to-client placement."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import simpy

from sim.config.workload import AnyWorkload
from sim.engine.core import Pool, Station
from sim.engine.meter import Meter
from sim.engine.rng import Streams
from sim.fs.platform import Platform
from sim.topology.model import System


@dataclass(frozen=True)
class Route:
    """Resolved path of one thread's requests to one target: computed once, reused by every request.

    ``network`` and ``storage`` are stations with their seconds per byte; ``cpu`` is the serving
    zone's cores; ``pool`` the server-side threads (BeeGFS target workers, GPFS NSD threads);
    ``conn`` the client's connection limit to that server, if the file system has one.
    """

    network: list[tuple[Station, float]]
    storage: list[tuple[Station, float]]
    cpu: Station
    pool: Pool
    conn: Pool | None = None


@dataclass
class RunContext:
    """Everything one simulated measurement point needs."""

    env: simpy.Environment
    system: System
    platform: Platform
    streams: Streams
    workload: AnyWorkload
    op: str  # write, read, random_write, random_read; mdtest: [dir_]create, [dir_]stat, read, [dir_]remove
    threads: int
    meter: Meter

    @property
    def io_op(self) -> str:
        """'read' or 'write' as the devices see it."""
        return "write" if self.op.endswith("write") else "read"

    @property
    def random(self) -> bool:
        """Random offsets (IOzone -i 2) rather than sequential."""
        return self.op.startswith("random")

    def file_offset(self, thread: int, position: float, share: float) -> float:
        """Where byte ``position`` of ``thread``'s ``share`` of bytes lies in the file it writes: the
        same place in a file of its own; in IOR's shared file (N-1), segment by segment, each
        segment holding one block of every task in task order (ior.c: segment x tasks x block +
        rank x block; with one segment, task t's share starts at t x share). A transfer never
        crosses a block, as IOR's -b is a multiple of its -t."""
        workload = self.workload
        if workload.benchmark != "ior_seq_n1":
            return position
        segments = workload.segments
        if segments == 1:
            return thread * share + position
        block = share / segments
        segment, within = divmod(position, block)
        return (segment * self.threads + thread) * block + within

    @cached_property
    def placed_clients(self) -> list[str]:
        """The client nodes the threads are dealt to, in order: every client (placement
        ``round_robin``) or the first one only (``one_client``)."""
        clients = self.system.clients
        return clients[:1] if self.workload.placement == "one_client" else list(clients)

    def client_of(self, thread: int) -> str:
        """Round-robin placement of benchmark threads over the placed client nodes, in file order."""
        clients = self.placed_clients
        return clients[thread % len(clients)]

    def client_hca(self, thread: int, server_hcas: tuple[str, ...]) -> str:
        """The client HCA that carries ``thread``'s traffic to a service listening on ``server_hcas``:
        a client's threads (its 1st, 2nd, ... in placement order) are dealt to its HCAs in turn."""
        clients = self.placed_clients
        return self.platform.pick_client_hca(clients[thread % len(clients)], server_hcas, thread // len(clients))

    def threads_on(self, client: str) -> int:
        """How many threads share a client node (none on a client the placement leaves out)."""
        clients = self.placed_clients
        if client not in clients:
            return 0
        return len(range(clients.index(client), self.threads, len(clients)))
