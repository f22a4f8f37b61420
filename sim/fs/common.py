"""What both file-system models share: the run context and the thread-to-client placement."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import simpy

from sim.config.workload import AnyWorkload, Workload
from sim.engine.core import Pool, Station, StationGroup
from sim.engine.meter import Meter
from sim.engine.rng import Streams
from sim.fs.platform import Platform
from sim.topology.model import System


@dataclass(frozen=True)
class Route:
    """Resolved path of one thread's requests to one target: computed once, reused by every request.

    ``network`` and ``storage`` are stations with their seconds per byte; ``cpu`` is the cores the
    service runs on (one zone's, or a group of its server's zones' for a service not pinned to one);
    ``pool`` the server-side threads (BeeGFS target workers, GPFS NSD threads);
    ``conn`` the client's connection limit to that server, if the file system has one.
    """

    network: list[tuple[Station, float]]
    storage: list[tuple[Station, float]]
    cpu: Station | StationGroup
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
        if not isinstance(workload, Workload) or not workload.shared_file:
            return position
        segments = workload.segments
        if segments == 1:
            return thread * share + position
        block = share / segments
        segment, within = divmod(position, block)
        return (segment * self.threads + thread) * block + within

    @cached_property
    def placed_clients(self) -> list[str]:
        """The client nodes that run at least one thread, in file order."""
        clients = self.system.clients
        return list(clients[: self.workload.clients_needed(self.threads, len(clients))])

    @cached_property
    def _counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for thread in range(self.threads):
            client = self.client_of(thread)
            counts[client] = counts.get(client, 0) + 1
        return counts

    def client_of(self, thread: int) -> str:
        """The client node ``thread`` runs on, by the workload's placement (round robin over every
        client, all on the first, or ``per_node`` at a time), clients in file order."""
        clients = self.system.clients
        return clients[self.workload.placed(thread, len(clients))[0]]

    def client_hca(self, thread: int, server_hcas: tuple[str, ...]) -> str:
        """The client HCA that carries ``thread``'s traffic to a service listening on ``server_hcas``:
        a client's threads (its 1st, 2nd, ... in placement order) are dealt to its HCAs in turn."""
        clients = self.system.clients
        client, index = self.workload.placed(thread, len(clients))
        return self.platform.pick_client_hca(clients[client], server_hcas, index)

    def threads_on(self, client: str) -> int:
        """How many threads share a client node (none on a client the placement leaves out)."""
        return self._counts.get(client, 0)
