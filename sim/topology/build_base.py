"""Shared state and helpers of the topology builder: names, parts, bus rates, located problems."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sim.config.load import Catalogue
from sim.config.parts import Bus, Cpu, Drive, Hca, Link, Part
from sim.config.system import (
    PartRef,
    ServiceSpec,
    SystemSpec,
)
from sim.config.yamlio import SourceMap
from sim.errors import ConfigError, Problem
from sim.topology.model import Component, RaidGroup, System

YamlPath = tuple[str | int, ...]

_SERVICE_SHORT = {"beegfs-mgmt": "mgmtd", "beegfs-meta": "meta", "beegfs-storage": "storage"}
_SERVICE_ROLE = {"beegfs-meta": "metadata", "beegfs-storage": "data"}


class _Abort(Exception):
    """Raised to stop building one declaration after its problem was recorded."""


@dataclass
class _Pool:
    """Drives declared together (a NUMA zone, an enclosure) from which RAID groups are dealt."""

    name: str
    drives: list[str] = field(default_factory=list)
    parts: list[tuple[str, Drive]] = field(default_factory=list)
    upstream: list[str] = field(default_factory=list)
    used: dict[int, str] = field(default_factory=dict)


def expand_names(pattern: str, count: int, start: int) -> list[str]:
    """``storage{i}`` x 3 from 1 -> storage1..storage3; a pattern without ``{i}`` needs count 1."""
    if "{i}" not in pattern:
        if count != 1:
            raise ValueError(f"name {pattern!r} needs an '{{i}}' placeholder when count is {count}")
        return [pattern]
    return [pattern.replace("{i}", str(start + i)) for i in range(count)]


def listing(names: list[str], shown: int = 3) -> str:
    """'a, b, c' or 'a, b, c and 29 more': enough names to find the declaration, never a wall of them."""
    if len(names) <= shown:
        return ", ".join(names)
    return f"{', '.join(names[:shown])} and {len(names) - shown} more"


class BuilderBase:
    """State shared by the build steps; every problem is recorded with its YAML path."""

    def __init__(self, spec: SystemSpec, catalogue: Catalogue, smap: SourceMap) -> None:
        self.spec = spec
        self.catalogue = catalogue
        self.smap = smap
        self.problems: list[Problem] = []
        self.system = System(spec=spec, file=smap.file, source_map=smap, parts_sources=dict(catalogue.sources))
        self.hcas_of_server: dict[str, list[str]] = {}
        self.hbas_of_server: dict[str, list[tuple[str, int, int]]] = {}
        self.pools: dict[str, _Pool] = {}
        self.controllers: dict[str, list[str]] = {}
        self.enclosure_failed = False  # an enclosure entry was reported and not built
        self.controller_ports: dict[str, int] = {}
        self.controller_cables: dict[str, int] = {}
        self.hba_ports_used: dict[str, int] = {}  # HBA -> ports already cabled (over all `sas:` entries)
        self.switch_ports: dict[str, int] = {}
        # Switches declared with a part that could not be resolved (already reported): what refers to
        # them is not reported again as an unknown switch.
        self.broken_switches: set[str] = set()
        self.switch_cables: dict[str, int] = {}
        self.host_memory: dict[str, tuple[float, YamlPath]] = {}  # server or client -> memory, where given
        self.lanes_taken: dict[str, int] = {}  # NUMA zone (or client) -> PCIe lanes its cards and switches take
        # Ports a switch's cables take: 1 each, or 1 / (split ports per port) for a cable that a split
        # port carries (its link no faster than the split link: an HDR100 HCA on half an HDR port).
        self.switch_port_use: dict[str, float] = {}
        self.switch_split: dict[str, tuple[float, int]] = {}  # switch -> (split link rate, splits per port)
        self.switch_paths: dict[str, YamlPath] = {}
        self.switch_port_link: dict[str, tuple[str, float]] = {}  # switch -> its fastest port link and rate
        self.server_cpu: dict[str, Cpu] = {}
        self.pending_services: list[tuple[ServiceSpec, str, str | None, YamlPath, list[str]]] = []
        self.group_paths: dict[str, YamlPath] = {}
        self.zone_server: dict[str, str] = {}  # NUMA zone -> the server it is a socket of
        self.nsd_entry: dict[str, int] = {}  # GPFS LUN -> index of the filesystem.nsds entry serving it

    def problem(self, path: YamlPath, message: str) -> None:
        """Record a problem located at ``path`` in the topology file."""
        self.problems.append(self.smap.problem(path, message))

    @staticmethod
    def named(path: YamlPath, name: str, generic: str) -> str:
        """How a message at ``path`` names a built part: by its name, or, when ``path`` is in a
        template, by ``generic`` ("the zone"), so that the message reads the same for every server
        built from the template and is printed once, not once per server."""
        return generic if path and path[0] == "templates" else name

    def part(
        self, kind: str, name: str, overrides: dict[str, Any], path: YamlPath, name_path: YamlPath | None = None
    ) -> Part:
        """Resolve a catalogue part or record why not and abort this declaration.

        ``path`` is the mapping holding ``part:`` (and ``overrides:``); a name given under another
        key (a server's ``cpu:``) passes that key's path as ``name_path``."""
        try:
            return self.catalogue.resolve(kind, name, overrides, self.smap, path, name_path)
        except ConfigError as exc:
            self.problems.extend(exc.problems)
            raise _Abort from None

    def cpu_part(
        self, given: str | PartRef | None, chassis_cpu: str, path: YamlPath, cpu_path: YamlPath, part_path: YamlPath
    ) -> Cpu:
        """The CPU of the node declared at ``path``: ``given`` under its ``cpu:`` (``cpu_path``), a
        part name or a part with overrides, else its chassis's (named at ``part_path``)."""
        if isinstance(given, PartRef):
            cpu = self.part("cpus", given.part, given.overrides, cpu_path)
        else:
            cpu = self.part("cpus", given or chassis_cpu, {}, path, cpu_path if given else part_path)
        assert isinstance(cpu, Cpu)
        return cpu

    def bus(self, name: str) -> Bus:
        """A bus by name (catalogue references were checked on load)."""
        entry = self.catalogue.get("buses", name)
        assert entry is not None and isinstance(entry.part, Bus)
        return entry.part

    def lane_rate(self, bus_name: str, host_bus: str | None) -> float:
        """Per-lane rate of a device on ``bus_name`` in a host whose slots are ``host_bus``.

        A PCIe 4 card in a PCIe 3 server runs at PCIe 3 rates: the slower generation wins.
        """
        rate = self.bus(bus_name).lane_rate
        if host_bus is not None and bus_name.startswith("pcie") and host_bus.startswith("pcie"):
            rate = min(rate, self.bus(host_bus).lane_rate)
        return rate

    def check_port_speed(self, link: str, rate: float, switch: str, path: YamlPath, fix: str) -> None:
        """A cable runs at the slower end's speed; pfssim counts the cable's link rate, so a link
        faster than every port of ``switch`` is refused rather than silently over-counted."""
        port_link, port_rate = self.switch_port_link.get(switch, (link, rate))
        if rate > port_rate:
            self.problem(
                path,
                f"{switch}'s fastest ports are {port_link} ({port_rate / 1e9:g} GB/s), slower than the {link} link "
                f"({rate / 1e9:g} GB/s) cabled to it: InfiniBand runs a cable at the slower end's speed and pfssim "
                f"would count the faster; give {fix.format(port_link)}, or cable it to a switch with {link} ports",
            )
            raise _Abort

    def check_drive_bus(self, part: Drive, bus: str, rule: str, path: YamlPath) -> None:
        """A drive goes only where its interface plugs in: SAS drives in SAS slots, NVMe on PCIe."""
        if not part.interface.bus.startswith(bus):
            self.problem(
                (*path, "drives", "part"),
                f"{part.model} has a {part.interface.bus} interface, but {rule}",
            )
            raise _Abort

    def names(self, pattern: str, count: int, start: int, path: YamlPath) -> list[str]:
        """Expanded names, or a recorded problem."""
        try:
            return expand_names(pattern, count, start)
        except ValueError as exc:
            self.problem((*path, "name"), str(exc))
            raise _Abort from None

    def add_unique(self, component: Component, path: YamlPath) -> None:
        """Add a component; two parts with one name are a problem."""
        if component.name in self.system.components:
            self.problem(path, f"name {component.name!r} is used twice")
            raise _Abort
        self.system.add(component)

    def attach_hca(
        self,
        owner: str,
        name: str,
        ref_part: str,
        overrides: dict[str, Any],
        switch: str,
        host_bus: str | None,
        path: YamlPath,
    ) -> str:
        """An HCA node of ``owner`` cabled to ``switch``; capacity = min(link, PCIe slot)."""
        part = self.part("hcas", ref_part, overrides, path)
        assert isinstance(part, Hca)
        if not part.host.bus.startswith("pcie"):
            self.problem(path, f"{part.model} has a {part.host.bus} host interface; an HCA plugs into a PCIe slot")
            raise _Abort
        if part.ports != 1:
            self.problem(
                path,
                f"{part.model} has {part.ports} ports; pfssim cables one port per HCA (the ports of a multi-port "
                "card share its PCIe slot, which pfssim does not split); use a single-port part",
            )
            raise _Abort
        link_entry = self.catalogue.get("links", part.link)
        assert link_entry is not None and isinstance(link_entry.part, Link)
        link_rate = link_entry.part.rate
        pcie_rate = part.host.lanes * self.lane_rate(part.host.bus, host_bus)
        rate = min(link_rate, pcie_rate)
        limit = f"{part.link} link" if link_rate <= pcie_rate else f"PCIe {part.host.bus} x{part.host.lanes} slot"
        if switch in self.broken_switches:
            raise _Abort
        if switch not in self.switch_ports:
            known = ", ".join(self.switch_ports) or "none"
            self.problem((*path, "switch"), f"unknown switch {switch!r} (switches: {known})")
            raise _Abort
        self.check_port_speed(part.link, link_rate, switch, path, "the HCA overrides: {{link: {}}}")
        self.add_unique(Component(name, "hca", part.model, rate, rate, note=limit), path)
        self.lanes_taken[owner] = self.lanes_taken.get(owner, 0) + part.host.lanes
        self.system.part_names[name] = ref_part
        self.system.connect(owner, name)
        self.system.connect(name, switch)
        self.system.hca_switch[name] = switch
        self.take_ports(switch, link_rate, 1)
        return name

    def groups_in(self, pool: str) -> list[RaidGroup]:
        """The RAID groups of one drive pool (a NUMA zone or an enclosure), in build order."""
        return self.system.groups_by_pool.get(pool, [])

    def take_ports(self, switch: str, rate: float, cables: int) -> None:
        """Count ``cables`` of link ``rate`` against ``switch``'s ports (see ``switch_port_use``)."""
        self.switch_cables[switch] += cables
        split_rate, splits = self.switch_split.get(switch, (0.0, 1))
        self.switch_port_use[switch] += cables / splits if rate <= split_rate else cables
