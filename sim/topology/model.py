"""The built system: named components, RAID groups, services and the physical graph.

Every component has a stable dotted name (``storage3.numa1.target2``) used in results and errors.
Capacities are SI floats per direction: ``read_Bps`` for data flowing from storage towards clients,
``write_Bps`` for data flowing towards storage (links are full duplex, so both equal the link rate).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import networkx as nx

from sim.config.parts import Drive
from sim.config.system import SystemSpec
from sim.config.yamlio import SourceMap


@dataclass(frozen=True)
class Component:
    """One physical or software part of the system, a node of the graph."""

    name: str
    kind: str
    model: str | None = None
    read_Bps: float | None = None
    write_Bps: float | None = None
    note: str = ""


@dataclass(frozen=True)
class RaidGroup:
    """A RAID group (a BeeGFS target, a GPFS NSD LUN) and the drives it is made of."""

    name: str
    level: int
    members: tuple[str, ...]
    drive: Drive
    drive_part: str
    stripe_unit_B: float
    role: str
    pool: str
    upstream: tuple[str, ...]
    owner: str | None = None
    filesystem: str | None = None

    @property
    def controller(self) -> str | None:
        """The ME4 controller that owns the group (through its expansion port for an ME484 group)."""
        if self.owner is None:
            return None
        return self.owner.removesuffix(".expansion")

    @property
    def data_members(self) -> float:
        """How many members' worth of space and streaming rate hold user data."""
        n = len(self.members)
        return {0: n, 1: 1, 10: n / 2, 5: n - 1, 6: n - 2}[self.level]

    @property
    def usable_B(self) -> float:
        """Capacity seen by the file system before its own overhead."""
        return self.data_members * self.drive.capacity

    @property
    def raw_B(self) -> float:
        """Capacity of all member drives."""
        return len(self.members) * self.drive.capacity

    def streaming_Bps(self, op: str, member_read_Bps: float, member_write_Bps: float) -> float:
        """Large sequential rate of the group from its members' rates.

        Reads are served by every member (RAID1/10 read either copy; RAID5/6 skip parity strips, so
        only data members count). Writes: RAID0 all members, RAID1 one member's worth, RAID10 half,
        RAID5/6 full stripes move data at (members - parity) x the member rate.
        """
        n = len(self.members)
        if op == "read":
            return (n if self.level in (0, 1, 10) else self.data_members) * member_read_Bps
        return self.data_members * member_write_Bps


@dataclass(frozen=True)
class Service:
    """A file-system server daemon (BeeGFS meta/storage, GPFS NSD server) and what it serves."""

    name: str
    kind: str
    server: str
    zone: str | None
    targets: tuple[str, ...]
    hcas: tuple[str, ...]
    workers: int | None = None


@dataclass
class System:
    """A loaded and checked storage installation."""

    spec: SystemSpec
    file: str
    # The parts catalogue files the system was built from: file name -> sha256 of the bytes parsed.
    parts_sources: dict[str, str] = field(default_factory=dict)
    # The ``--set KEY=VALUE`` replacements it was loaded with (sim.config.overrides), as given.
    settings: tuple[str, ...] = ()
    components: dict[str, Component] = field(default_factory=dict)
    graph: nx.Graph = field(default_factory=nx.Graph)
    groups: dict[str, RaidGroup] = field(default_factory=dict)  # add with add_group
    groups_by_pool: dict[str, list[RaidGroup]] = field(default_factory=dict)  # pool -> its groups, in order
    services: dict[str, Service] = field(default_factory=dict)  # add with add_service
    # target -> its services, kept by add_service: a scan of all services per question made checking
    # a topology of thousands of servers quadratic
    service_index: dict[str, list[Service]] = field(default_factory=dict)
    clients: list[str] = field(default_factory=list)
    client_hcas: dict[str, list[str]] = field(default_factory=dict)
    client_cores: dict[str, int] = field(default_factory=dict)
    client_memory: dict[str, float] = field(default_factory=dict)  # bytes
    zone_cores: dict[str, int] = field(default_factory=dict)
    enclosure_iops: dict[str, tuple[float, float]] = field(default_factory=dict)
    enclosure_cache: dict[str, float] = field(default_factory=dict)  # controller cache bytes, each
    # Controller read-ahead per enclosure: "stripe" (one stripe ahead), "disabled", or bytes ahead.
    enclosure_read_ahead: dict[str, str | float] = field(default_factory=dict)
    servers: list[str] = field(default_factory=list)
    hca_switch: dict[str, str] = field(default_factory=dict)
    switch_links: dict[str, tuple[str, str]] = field(default_factory=dict)
    zone_of: dict[str, str] = field(default_factory=dict)
    upi_of: dict[str, str] = field(default_factory=dict)
    data_tier_drives: list[str] = field(default_factory=list)
    drive_parts: dict[str, Drive] = field(default_factory=dict)
    part_names: dict[str, str] = field(default_factory=dict)
    source_map: SourceMap | None = None  # where each YAML path of the topology is, for later errors

    @property
    def name(self) -> str:
        """The system's name from its file."""
        return self.spec.name

    def add(self, component: Component) -> Component:
        """Register a component as a graph node under its dotted name."""
        self.components[component.name] = component
        self.graph.add_node(component.name, kind=component.kind)
        return component

    def connect(self, a: str, b: str) -> None:
        """A physical data connection between two components."""
        self.graph.add_edge(a, b)

    @property
    def data_on_hard_disks(self) -> bool:
        """Whether any drive of a storage target's RAID group is a hard disk."""
        members = (m for t in self.storage_targets for m in self.groups[t].members)
        return any(self.drive_parts[m].kind == "nl_sas_hdd" for m in members)

    @property
    def storage_targets(self) -> list[str]:
        """Targets holding file data (BeeGFS storage targets, GPFS data NSDs), in the order they are
        built: the enclosures' virtual disks (each array's, then its expansion's) in declaration
        order, then the servers' own RAID groups (zone by zone): BeeGFS's target IDs, which the
        roundrobin chooser walks from the first."""
        return [name for name, group in self.groups.items() if group.role == "data" and self.served(name)]

    @property
    def metadata_targets(self) -> list[str]:
        """Targets holding metadata (BeeGFS MDTs, GPFS metadata NSDs)."""
        return [name for name, group in self.groups.items() if group.role == "metadata" and self.served(name)]

    def add_group(self, group: RaidGroup) -> None:
        """Add a RAID group and index it by its drive pool."""
        self.groups[group.name] = group
        self.groups_by_pool.setdefault(group.pool, []).append(group)

    def add_service(self, service: Service) -> None:
        """Add a service and index it by the targets it serves."""
        self.services[service.name] = service
        for target in service.targets:
            self.service_index.setdefault(target, []).append(service)

    def served(self, target: str) -> bool:
        """True when some service serves ``target``."""
        return target in self.service_index

    def services_of(self, target: str) -> list[Service]:
        """The services that can serve ``target`` (GPFS: primary first)."""
        return list(self.service_index.get(target, ()))

    def count_by_kind(self) -> dict[str, int]:
        """How many components of each kind the system has."""
        counts: dict[str, int] = {}
        for component in self.components.values():
            counts[component.kind] = counts.get(component.kind, 0) + 1
        return dict(sorted(counts.items()))
