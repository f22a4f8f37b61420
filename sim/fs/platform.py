"""The simulated hardware of one system: a station for every rated part, a device for every target.

Links, PCIe switches, HBAs and SAS ports are full duplex: each direction is its own FCFS station
whose service time is bytes / rate. A transfer crosses all its hops at once (cut-through, as RDMA
and DMA stream through them): it is a fork-join over one visit per hop, so a lone transfer takes
bytes / (slowest hop) and each hop is busy for the bytes it carries, while concurrent transfers
queue at whichever hop is loaded. CPUs are multi-server stations with one server per core.
"""

from __future__ import annotations

import zlib
from collections import deque
from collections.abc import Callable

import simpy
from simpy.events import Event

from sim.devices.drives import HddDrive, SsdDrive, book_path, make_drive
from sim.devices.me4 import Me4Controller, WriteBackCache
from sim.devices.raid import RaidDevice
from sim.engine.core import Pool, Station, StationGroup, join
from sim.engine.rng import Streams
from sim.fs.settings import service_cores
from sim.params import value
from sim.topology.model import Service, System

Hop = tuple[str, str]  # component, direction ('tx'/'rx' for HCAs, 'up'/'down' inside servers)


class Platform:
    """Stations and devices for a :class:`System` in one SimPy environment."""

    def __init__(self, env: simpy.Environment, system: System, streams: Streams) -> None:
        self.env = env
        self.system = system
        self.streams = streams
        self.latency = value("network_latency_s")
        self.stations: dict[str, Station] = {}
        self.pools: dict[str, Pool] = {}  # worker, connection and thread pools of the file-system models
        self._family_stage: dict[str, int] = {}
        self.rates: dict[str, float] = {}
        self.drives: dict[str, SsdDrive | HddDrive] = {}
        self.raids: dict[str, RaidDevice] = {}
        self.controllers: dict[str, Me4Controller] = {}
        self.cpus: dict[str, Station] = {}
        # How full prefilled write caches start unless a model says (1: full, 0.5: flush watermark).
        self.cache_fill = 1.0
        self._paths: dict[tuple[str, str], list[str]] = {}
        self._client_hcas: dict[tuple[str, tuple[str, ...]], list[str]] = {}
        self._cpu_groups: dict[tuple[str, ...], StationGroup] = {}
        # Per (service's HCAs, candidates dealt): each client HCA dealt them, by its rank in the system.
        self._client_hca_ranks: dict[tuple[tuple[str, ...], tuple[str, ...]], dict[str, int]] = {}
        self._build_devices()
        # The SSDs with a power-protected write buffer, found once (the warm-up and every batch ask).
        self.buffered: dict[str, SsdDrive] = {
            name: d for name, d in self.drives.items() if isinstance(d, SsdDrive) and d.buffer_s
        }

    # -- stations --------------------------------------------------------------------------------

    def station(self, component: str, direction: str) -> Station:
        """The station of one direction of a rated part (created on first use)."""
        key = f"{component}.{direction}"
        station = self.stations.get(key)
        if station is None:
            c = self.system.components[component]
            rate = c.read_Bps or c.write_Bps  # links and buses: the same rate in each direction
            assert rate, f"{component} has no rate"
            station = self.stations[key] = Station(self.env, key, 1)
            self.rates[key] = rate
        return station

    def cpu(self, zone_or_node: str) -> Station:
        """The cores of a NUMA zone or a client node."""
        station = self.cpus.get(zone_or_node)
        if station is None:
            cores = self.system.zone_cores.get(zone_or_node) or self.system.client_cores.get(zone_or_node) or 1
            station = self.cpus[zone_or_node] = Station(self.env, f"{zone_or_node}.cpu", cores)
            self.stations[station.name] = station
        return station

    def service_cpu(self, service: Service) -> Station | StationGroup:
        """The cores a service's requests are served on (:func:`service_cores`): one zone's station,
        or for a service not pinned to a zone, its server's zones' stations served as one (the
        earliest-free core of any of them), each keeping its own busy time. Before session 33 such
        a service ran on its first HCA's zone alone, and a CPU-bound BeeGFS server declared
        without per-zone services ran at half its rate with its second socket idle."""
        zones = service_cores(self.system, service)
        if len(zones) == 1:
            return self.cpu(zones[0])
        group = self._cpu_groups.get(zones)
        if group is None:
            group = self._cpu_groups[zones] = StationGroup([self.cpu(z) for z in zones])
        return group

    def resolve(self, hops: list[Hop]) -> list[tuple[Station, float]]:
        """Stations of ``hops`` with their seconds per byte (resolved once per route, not per request)."""
        resolved = []
        for component, direction in hops:
            station = self.station(component, direction)
            resolved.append((station, 1.0 / self.rates[station.name]))
        return resolved

    #: When a cut-through transfer over resolved stations ends, and no earlier than ``end``.
    finish_on = staticmethod(book_path)

    def transfer_finish(self, hops: list[Hop], size: float, latency: float = 0.0) -> float:
        """When a cut-through transfer over ``hops`` started now ends (``latency`` runs alongside)."""
        end = self.env.now + latency
        for component, direction in hops:
            station = self.station(component, direction)
            finish = station.reserve(size / self.rates[station.name])
            if finish > end:
                end = finish
        return end

    def target_finish(self, target: str, op: str, offset: float, size: float) -> float | None:
        """When a target I/O submitted now ends, if computable at submission (SSD RAID 0/1/10)."""
        raid = self.raids[target]
        if raid.computable and self.system.groups[target].owner is None:
            return raid.finish_time(op, offset, size)
        return None

    def transfer(self, hops: list[Hop], size: float, latency: float = 0.0) -> Event:
        """Move ``size`` bytes across ``hops`` at once (cut-through); ``latency`` runs alongside.

        Callers fold fixed delays of the same request (message latencies, uncontended CPU time)
        into ``latency``: one timeout instead of several, the same simulated time.
        """
        return self.env.timeout(self.transfer_finish(hops, size, latency) - self.env.now)

    def device_ops(self) -> int:
        """Drive commands issued so far (the unit of a point's simulation budget)."""
        return sum(drive.ops for drive in self.drives.values())

    def drop(self) -> None:
        """Empty what the devices hold after a finished run (queued drive commands, cache entries,
        waiting writes, read-ahead streams), so that reference counting frees it: held by the
        devices, all of it stayed for the cycle collector to walk."""
        for drive in self.drives.values():
            drive.drop()
        for controller in self.controllers.values():
            controller.drop()

    def pool(self, name: str, size: int, stage: int = 0, family: str | None = None) -> Pool:
        """A pool of ``size`` slots (workers, connections, threads), registered for reporting;
        ``stage`` orders the pools of a request's path and ``family`` groups the pools one setting
        sizes (:class:`Pool`), for naming the full ones that hold the rate."""
        pool = self.pools[name] = Pool(self.env, name, size, stage, family)
        # A family is one setting's pools: one place on the request's path.
        assert self._family_stage.setdefault(pool.family, stage) == stage, f"{pool.family}: two stages"
        return pool

    def all_stations(self) -> dict[str, Station]:
        """Every station whose utilisation is reported, by name."""
        out = dict(self.stations)
        for drive in self.drives.values():
            out[drive.name] = drive.engine
        for controller in self.controllers.values():
            for station in controller.stations:
                out[station.name] = station
        return out

    def prefill_caches_with(
        self,
        sampler: Callable[[str], Callable[[], tuple[float, float]]],
        only: set[str] | None = None,
        fill: Callable[[str], float] | None = None,
        swept: bool = False,
    ) -> None:
        """Fill ME4 write caches (of the virtual disks in ``only``, or all); ``sampler(vdisk)`` draws
        (offset, size) of one dirty write, ``fill(vdisk)`` how full the cache starts (default
        ``cache_fill``); ``swept`` for writes drawn anywhere, held as the destage elevator leaves
        them (:meth:`WriteBackCache.prefill`)."""
        for controller in self.controllers.values():
            for vdisk, cache in controller.caches.items():
                if only is None or vdisk in only:
                    cache.prefill(sampler(vdisk), fill(vdisk) if fill is not None else self.cache_fill, swept)

    def _caches(self, luns: set[str] | None = None) -> list[tuple[str, WriteBackCache]]:
        """(virtual disk, write cache) of every ME4 cache, or of those of ``luns``."""
        return [
            (vdisk, cache)
            for c in self.controllers.values()
            for vdisk, cache in c.caches.items()
            if luns is None or vdisk in luns
        ]

    def cache_waits(self, luns: set[str] | None = None) -> int:
        """Host writes that have found an ME4 write cache full so far (all caches, or ``luns``')."""
        return sum(cache.waits for _, cache in self._caches(luns))

    def cache_waits_by_lun(self) -> dict[str, tuple[int, int]]:
        """(host writes that found the cache full, host writes that needed entries of their own) so
        far of each ME4 write cache, by virtual disk."""
        return {vdisk: (cache.waits, cache.entry_writes) for vdisk, cache in self._caches()}

    def watch_write_buffers(self) -> None:
        """Start looking for the SSD write buffers' long-run state (:meth:`SsdDrive.watch_buffer`)."""
        for drive in self.buffered.values():
            drive.watch_buffer()

    def write_buffers_settled(self) -> bool:
        """Whether every SSD write buffer has been seen in its long-run state since
        :meth:`watch_write_buffers` (:meth:`SsdDrive.buffer_settled`)."""
        return all(d.buffer_settled() for d in self.buffered.values())

    def caches_turned_over(self) -> bool:
        """Whether every ME4 write cache has turned its start over (:meth:`WriteBackCache.turned_over`)."""
        return all(cache.turned_over() for c in self.controllers.values() for cache in c.caches.values())

    def cache_held(self) -> dict[str, int]:
        """Dirty entries each ME4 write cache holds now, by virtual disk."""
        return {vdisk: cache.held for c in self.controllers.values() for vdisk, cache in c.caches.items()}

    def caches_filling(self, before: dict[str, int], luns: set[str] | None = None) -> bool:
        """Whether a write cache (of ``luns``, if given) holds more entries than it did when
        ``before`` (:meth:`cache_held`) was taken by more than its destages in flight (what one
        round of destages can clear)."""
        return any(cache.held - before[vdisk] > cache.destagers for vdisk, cache in self._caches(luns))

    def buffer_counts(self) -> dict[str, tuple[int, int]]:
        """(writes, writes that waited for room) so far of every SSD with a write buffer."""
        return {name: (d.buffer_writes, d.buffer_waits) for name, d in self.buffered.items()}

    def buffered_drives_keeping_up(self, before: dict[str, tuple[int, int]]) -> set[str]:
        """The SSDs whose write buffers took every write since ``before`` (:meth:`buffer_counts`)
        without one waiting for room: the flash programs behind the requests, and no write waits
        for it, however busy it is (as an ME4 cache that keeps up, :meth:`destaging_drives`)."""
        return {
            name
            for name, (writes, waits) in self.buffer_counts().items()
            if writes > before.get(name, (0, 0))[0] and waits == before.get(name, (0, 0))[1]
        }

    def destaging_drives(self, luns: set[str] | None = None) -> set[str]:
        """The member drives of every virtual disk behind an ME4 write cache (of ``luns``, if given)."""
        return {drive.name for _, cache in self._caches(luns) for drive in cache.device.members}

    def prestart_read_ahead(self, starts: dict[str, list[float]]) -> None:
        """Start the controllers' read-ahead streams of each virtual disk at the given offsets (where
        each stream's next host read begins), in order, while their read-ahead budgets have room."""
        for controller in self.controllers.values():
            for vdisk, reader in controller.readers.items():
                for offset in starts.get(vdisk, ()):
                    if not reader.prestart(offset):
                        break

    # -- devices ---------------------------------------------------------------------------------

    def _build_devices(self) -> None:
        s = self.system
        for name, part in s.drive_parts.items():
            c = s.components[name]
            self.drives[name] = make_drive(
                self.env, name, part, self.streams(name), c.read_Bps or 0.0, c.write_Bps or 0.0
            )
        for name, component in s.components.items():
            if component.kind == "controller":
                enclosure = name.rsplit(".", 1)[0]
                n_ctrl = sum(1 for c in s.components if c.startswith(enclosure + ".ctrl") and c.count(".") == 1)
                iops_read, iops_write = s.enclosure_iops[enclosure]
                self.controllers[name] = Me4Controller(
                    self.env,
                    name,
                    component.read_Bps or 0.0,
                    component.write_Bps or 0.0,
                    iops_read / n_ctrl,
                    iops_write / n_ctrl,
                    s.enclosure_cache.get(enclosure),
                    s.enclosure_read_ahead.get(enclosure, "disabled"),
                )
        for name, group in s.groups.items():
            members = [self.drives[m] for m in group.members]
            raid = self.raids[name] = RaidDevice(self.env, name, group.level, members, group.stripe_unit_B)
            if group.controller is not None:
                self.controllers[group.controller].attach(name, raid)
            elif group.owner is None:
                # Software RAID: the server's RAID layer sends every member I/O (mirror copies,
                # parity, a read-modify-write's reads) over the PCIe switch the drive hangs off.
                for member in group.members:
                    switches = [n for n in s.graph.neighbors(member) if s.components[n].kind == "pcie_switch"]
                    if switches:
                        self.drives[member].path = {
                            op: self.resolve([(switch, "down" if op == "write" else "up") for switch in switches])
                            for op in ("read", "write")
                        }

    def target_io(self, target: str, op: str, offset: float, size: float) -> Event:
        """An I/O on a target's device: straight to the RAID group, or through its ME4 controller."""
        controller = self.system.groups[target].controller
        if controller is None:
            return self.raids[target].io(op, offset, size)
        return self.controllers[controller].io(target, op, offset, size)

    def storage_end(self, target: str, op: str, offset: float, size: float, hops_end: float) -> float | Event:
        """A target I/O alongside the server's own transfer hops that end at ``hops_end``: the later
        of the two ends as a time when the target's model computes it at submission (SSD RAID
        0/1/10, :meth:`target_finish`), else as an event (:meth:`storage_io`)."""
        device_end = self.target_finish(target, op, offset, size)
        if device_end is not None:
            return max(hops_end, device_end)
        return self.storage_io(target, op, offset, size, hops_end)

    def storage_wait(self, target: str, op: str, offset: float, size: float, hops_end: float) -> Event:
        """:meth:`storage_end` as an event to wait on."""
        end = self.storage_end(target, op, offset, size, hops_end)
        return end if isinstance(end, Event) else self.env.timeout(end - self.env.now)

    def storage_io(self, target: str, op: str, offset: float, size: float, hops_end: float) -> Event:
        """A target I/O alongside the server's own transfer hops that end at ``hops_end``: an event
        at the later of the two ends."""
        controller = self.system.groups[target].controller
        if controller is not None and op == "write":  # the controller waits for the hops itself
            return self.controllers[controller].io(target, op, offset, size, not_before=hops_end)
        return join(self.env, [self.env.timeout(hops_end - self.env.now), self.target_io(target, op, offset, size)])

    # -- paths -----------------------------------------------------------------------------------

    def switch_path(self, a: str, b: str) -> list[str]:
        """Inter-switch bundles between switches ``a`` and ``b`` (shortest path)."""
        key = (a, b)
        if key not in self._paths:
            links = self.system.switch_links
            adjacency: dict[str, list[tuple[str, str]]] = {}
            for name, (x, y) in links.items():
                adjacency.setdefault(x, []).append((y, name))
                adjacency.setdefault(y, []).append((x, name))
            previous: dict[str, tuple[str, str] | None] = {a: None}
            todo = deque([a])
            while todo:
                here = todo.popleft()
                for there, link in adjacency.get(here, []):
                    if there not in previous:
                        previous[there] = (here, link)
                        todo.append(there)
            path: list[str] = []
            node = b
            while previous.get(node) is not None:
                here, link = previous[node]  # type: ignore[misc]
                path.append(link)
                node = here
            if node != a:
                raise KeyError(f"no path from switch {a} to {b}")
            self._paths[key] = list(reversed(path))
        return self._paths[key]

    def pick_client_hca(self, client: str, server_hcas: tuple[str, ...], index: int) -> str:
        """The HCA of ``client`` that carries the ``index``-th of its threads to a service listening on
        ``server_hcas``: the client's HCAs that have a switch path to one of them, taken round-robin.

        A client with several InfiniBand ports opens its connections over each of them (BeeGFS with
        several RDMA interfaces, GPFS with several ``verbsPorts``) and its threads' traffic spreads
        over them; pfssim deals the client's threads to its HCAs in turn, as a server's HCAs are
        dealt to the threads that reach it (:meth:`pick_server_hca`). [ASSUMED] No source says by what
        rule either spreads; see docs/design.md, "Which HCAs a request crosses". An HCA on a fabric
        that cannot reach the service is skipped."""
        hcas = self.system.client_hcas[client]
        if len(hcas) == 1:
            return hcas[0]
        key = (client, server_hcas)
        pool = self._client_hcas.get(key)
        if pool is None:
            s = self.system
            reach = [h for h in hcas if any(self.connected(s.hca_switch[h], s.hca_switch[x]) for x in server_hcas)]
            pool = self._client_hcas[key] = reach or list(hcas)
        return pool[index % len(pool)]

    def connected(self, a: str, b: str) -> bool:
        """Whether switches ``a`` and ``b`` are joined, directly or through other switches."""
        try:
            self.switch_path(a, b)
        except KeyError:
            return False
        return True

    def server_hca_candidates(self, client_hca: str, hcas: tuple[str, ...]) -> tuple[str, ...]:
        """The HCAs of a service listening on ``hcas`` that ``client_hca``'s requests may arrive
        by: those on the client HCA's switch, else those a switch path reaches."""
        s = self.system
        switch = s.hca_switch[client_hca]
        local = [h for h in hcas if s.hca_switch[h] == switch]
        # Else the ones a switch path reaches (a service may also listen on a fabric this client
        # is not on); unreachable_targets refuses a system where none is.
        return tuple(local or [h for h in hcas if self.connected(switch, s.hca_switch[h])] or hcas)

    def pick_server_hca(self, client_hca: str, hcas: tuple[str, ...], index: int) -> str:
        """A server HCA reachable from ``client_hca`` (:meth:`server_hca_candidates`), spread by ``index``."""
        pool = self.server_hca_candidates(client_hca, hcas)
        return pool[index % len(pool)]

    def deal_server_hca(self, client_hca: str, hcas: tuple[str, ...], rank: int) -> str:
        """The server HCA by which ``client_hca`` reaches the ``rank``-th device of a service listening
        on ``hcas`` (its NSDs or storage targets in system order), for paths resolved once per
        client HCA and device (GPFS NSD requests, mdtest's file data): the candidates
        (:meth:`server_hca_candidates`) dealt in turn over the devices, starting at the client HCA's
        own rank among the system's client HCAs dealt the same candidates. A client's traffic,
        spread over the devices, then spreads over the candidates, and clients start on different
        ones. Picked by the first thread's index, as until session 33, a zone's second HCA on a
        switch carried nothing from clients on that switch (all of them even-numbered threads on
        pixstor-large with two HCAs per zone)."""
        pool = self.server_hca_candidates(client_hca, hcas)
        if len(pool) == 1:
            return pool[0]
        ranks = self._client_hca_ranks.get((hcas, pool))
        if ranks is None:
            s = self.system
            dealt = [h for c in s.clients for h in s.client_hcas[c] if self.server_hca_candidates(h, hcas) == pool]
            ranks = self._client_hca_ranks[hcas, pool] = {h: i for i, h in enumerate(dealt)}
        return pool[(ranks[client_hca] + rank) % len(pool)]

    def network_hops(self, client_hca: str, server_hca: str, op: str) -> list[Hop]:
        """Hops of a data transfer between a client HCA and a server HCA (write: to the server).

        An inter-switch bundle ``a~b`` is full duplex: its ``tx`` station carries what flows from
        ``a`` to ``b`` and its ``rx`` station what flows from ``b`` to ``a``, whichever end the
        client is on (as the max-flow bound counts it: one capacity per direction)."""
        s = self.system
        to_server = op == "write"
        hops: list[Hop] = [(client_hca, "tx" if to_server else "rx")]
        here = s.hca_switch[client_hca]
        for link in self.switch_path(here, s.hca_switch[server_hca]):
            a, b = s.switch_links[link]
            away = here == a  # crossing from the link's first end to its second, client to server
            here = b if away else a
            hops.append((link, "tx" if away == to_server else "rx"))
        hops.append((server_hca, "rx" if to_server else "tx"))
        return hops

    def upi_hops(self, zone_a: str, zone_b: str, op: str) -> list[Hop]:
        """The UPI crossing between two zones of one server, if any: a write's data goes from
        ``zone_a`` to ``zone_b`` (from the HCA's zone to the service's, from the service's to the
        drives'), a read's back. The links are full duplex, so each direction between two sockets
        is a station of its own, named by the zones it runs from and to
        (``storage1.upi.numa0->numa1``), as the max-flow bound counts it. Until session 34 the
        direction was the operation's: a server whose zone-1 service used the zone-0 HCA and
        whose zone-0 service the zone-1 HCA wrote through one direction's rate, half the bound."""
        if zone_a == zone_b or zone_a not in self.system.upi_of:
            return []
        source, sink = (zone_a, zone_b) if op == "write" else (zone_b, zone_a)
        return [(self.system.upi_of[zone_a], f"{source.rsplit('.', 1)[-1]}->{sink.rsplit('.', 1)[-1]}")]

    def storage_hops(self, server: str, zone: str, target: str, op: str) -> list[Hop]:
        """Hops from a server zone's memory to a target's device (UPI; or HBA/port/expansion of an array)."""
        s = self.system
        group = s.groups[target]
        direction = "down" if op == "write" else "up"
        hops: list[Hop] = []
        if group.owner is None:
            # A PCIe switch's uplink is booked by the member drives themselves, for the bytes each
            # member I/O moves (``_build_devices``); the UPI, if the drives sit on the other socket,
            # carries the payload once.
            for up in group.upstream:
                if s.components[up].kind == "pcie_switch":
                    hops += self.upi_hops(zone, s.zone_of[up], op)
                elif s.components[up].kind == "numa":
                    hops += self.upi_hops(zone, up, op)
            return list(dict.fromkeys(hops))
        controller = group.controller
        ports = [
            p
            for p in s.graph.neighbors(controller)
            if s.components[p].kind == "sas_port" and p.startswith(server + ".")
        ]
        port = ports[zlib.crc32(target.encode()) % len(ports)]  # stable across runs
        hba = port.rsplit(".", 1)[0]
        hops += self.upi_hops(zone, s.zone_of[hba], op)
        hops += [(hba, direction), (port, direction)]
        if group.owner.endswith(".expansion"):
            hops.append((group.owner, direction))
        return hops
