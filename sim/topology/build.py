"""Turning a validated :class:`SystemSpec` into a :class:`System`: names, parts, RAID groups, services.

Counts and templates are expanded here, catalogue parts resolved (with overrides), drives dealt
into RAID groups, SAS cables assigned to HBA ports and services bound to targets and HCAs. Each
problem is reported at the YAML path of the declaration that caused it; all problems of a file are
collected before :class:`TopologyError` is raised.
"""

from __future__ import annotations

import contextlib
import fnmatch
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sim.config.load import Catalogue, load_system_spec
from sim.config.parts import Bus, Cpu, Drive, Enclosure, Hba, Hca, Link, Part, PcieSwitch, Server, Switch
from sim.config.system import (
    BeeGFSSpec,
    DriveSet,
    GpfsSpec,
    NumaZone,
    RaidSpec,
    ServerBody,
    ServiceSpec,
    SystemSpec,
)
from sim.config.yamlio import SourceMap
from sim.errors import ConfigError, Problem, TopologyError
from sim.topology.model import Component, RaidGroup, Service, System

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


class Builder:
    """Builds one system; collects problems instead of stopping at the first."""

    def __init__(self, spec: SystemSpec, catalogue: Catalogue, smap: SourceMap) -> None:
        self.spec = spec
        self.catalogue = catalogue
        self.smap = smap
        self.problems: list[Problem] = []
        self.system = System(spec=spec, file=smap.file, source_map=smap)
        self.hcas_of_server: dict[str, list[str]] = {}
        self.hbas_of_server: dict[str, list[tuple[str, int, int]]] = {}
        self.pools: dict[str, _Pool] = {}
        self.controllers: dict[str, list[str]] = {}
        self.controller_ports: dict[str, int] = {}
        self.controller_cables: dict[str, int] = {}
        self.switch_ports: dict[str, int] = {}
        self.switch_cables: dict[str, int] = {}
        self.switch_paths: dict[str, YamlPath] = {}
        self.server_cpu: dict[str, Cpu] = {}
        self.pending_services: list[tuple[ServiceSpec, str, str | None, YamlPath, list[str]]] = []
        self.group_paths: dict[str, YamlPath] = {}

    # -- helpers ---------------------------------------------------------------------------------

    def problem(self, path: YamlPath, message: str) -> None:
        """Record a problem located at ``path`` in the topology file."""
        self.problems.append(self.smap.problem(path, message))

    def part(self, kind: str, name: str, overrides: dict[str, Any], path: YamlPath) -> Part:
        """Resolve a catalogue part or record why not and abort this declaration."""
        try:
            return self.catalogue.resolve(kind, name, overrides, self.smap, path)
        except ConfigError as exc:
            self.problems.extend(exc.problems)
            raise _Abort from None

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

    # -- build steps -----------------------------------------------------------------------------

    def build(self) -> System:
        """Run every step; raise :class:`TopologyError` with all problems found."""
        steps = (
            self.build_network,
            self.build_enclosures,
            self.build_servers,
            self.build_clients,
            self.build_filesystem,
            self.check_switch_ports,
            self.check_unassigned_groups,
        )
        for step in steps:
            if self.problems and step in (self.build_filesystem, self.check_unassigned_groups):
                continue  # bindings of a half-built system only repeat earlier problems
            step()
        if not self.problems:
            from sim.topology.bounds import unreachable_targets

            for client, target in unreachable_targets(self.system):
                self.problem(
                    self.group_paths.get(target, ("clients",)),
                    f"target {target!r} cannot be reached from client {client!r} "
                    "(check HCA switches, inter-switch links, service interfaces, SAS cabling)",
                )
        if self.problems:
            raise TopologyError(self.problems)
        return self.system

    def build_network(self) -> None:
        """Switches of the fabric."""
        for i, sw in enumerate(self.spec.network.switches):
            path: YamlPath = ("network", "switches", i)
            try:
                part = self.part("switches", sw.part, sw.overrides, path)
                assert isinstance(part, Switch)
                self.add_unique(Component(sw.name, "switch", part.model, note="non-blocking"), path)
                self.system.part_names[sw.name] = sw.part
                self.switch_ports[sw.name] = max(part.ports, part.split_ports or 0)
                self.switch_cables[sw.name] = 0
                self.switch_paths[sw.name] = path
            except _Abort:
                continue
        for i, bundle in enumerate(self.spec.network.links):
            path = ("network", "links", i)
            a, b = bundle.between
            unknown = [x for x in (a, b) if x not in self.switch_ports]
            if unknown or a == b:
                message = f"unknown switch {unknown[0]!r}" if unknown else "a link bundle needs two different switches"
                self.problem((*path, "between"), message)
                continue
            entry = self.catalogue.get("links", bundle.link)
            if entry is None:
                from sim.config.load import unknown_part_message

                self.problem((*path, "link"), unknown_part_message("links", bundle.link, self.catalogue.names("links")))
                continue
            assert isinstance(entry.part, Link)
            rate = bundle.count * entry.part.rate
            name = f"{a}~{b}"
            try:
                self.add_unique(
                    Component(
                        name, "switch_link", entry.part.model, rate, rate, note=f"{bundle.count} x {bundle.link}"
                    ),
                    path,
                )
            except _Abort:
                continue
            self.system.connect(a, name)
            self.system.connect(name, b)
            self.system.switch_links[name] = (a, b)
            self.switch_cables[a] += bundle.count
            self.switch_cables[b] += bundle.count

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
        link_entry = self.catalogue.get("links", part.link)
        assert link_entry is not None and isinstance(link_entry.part, Link)
        link_rate = link_entry.part.rate
        pcie_rate = part.host.lanes * self.lane_rate(part.host.bus, host_bus)
        rate = min(link_rate, pcie_rate)
        limit = f"{part.link} link" if link_rate <= pcie_rate else f"PCIe {part.host.bus} x{part.host.lanes} slot"
        if switch not in self.switch_ports:
            known = ", ".join(self.switch_ports) or "none"
            self.problem((*path, "switch"), f"unknown switch {switch!r} (switches: {known})")
            raise _Abort
        self.add_unique(Component(name, "hca", part.model, rate, rate, note=limit), path)
        self.system.part_names[name] = ref_part
        self.system.connect(owner, name)
        self.system.connect(name, switch)
        self.system.hca_switch[name] = switch
        self.switch_cables[switch] += 1
        return name

    def build_enclosures(self) -> None:
        """Controller enclosures, their controllers, drives, virtual disks and expansions."""
        for i, enc in enumerate(self.spec.enclosures):
            path: YamlPath = ("enclosures", i)
            try:
                part = self.part("enclosures", enc.part, enc.overrides, path)
                assert isinstance(part, Enclosure)
                if part.kind != "controller":
                    self.problem((*path, "part"), f"{enc.part!r} is an expansion enclosure; put it under 'expansion'")
                    raise _Abort
                for name in self.names(enc.name, enc.count, enc.start, path):
                    self.build_enclosure(name, enc, part, path)
            except _Abort:
                continue

    def build_enclosure(self, name: str, enc: Any, part: Enclosure, path: YamlPath) -> None:
        """One controller enclosure (and its expansion, if any)."""
        assert part.controllers and part.host_port_bus and part.host_port_lanes
        self.add_unique(Component(name, "enclosure", part.model), path)
        self.system.part_names[name] = enc.part
        letters = [chr(ord("A") + c) for c in range(part.controllers)]
        ctrl_names = []
        for letter in letters:
            ctrl = f"{name}.ctrl{letter}"
            assert part.array_seq_read and part.array_seq_write
            self.add_unique(
                Component(
                    ctrl,
                    "controller",
                    part.model,
                    part.array_seq_read / part.controllers,
                    part.array_seq_write / part.controllers,
                    note="array rate shared equally by its controllers",
                ),
                path,
            )
            self.system.connect(name, ctrl)
            ctrl_names.append(ctrl)
            self.controller_ports[ctrl] = part.host_ports_per_controller or 0
            self.controller_cables[ctrl] = 0
        self.controllers[name] = ctrl_names
        assert part.array_read_iops and part.array_write_iops
        self.system.enclosure_iops[name] = (part.array_read_iops, part.array_write_iops)
        pool = self.make_pool(name, enc.drives, part.slots, ctrl_names, path)
        owners = self.deal_groups(pool, enc.raid_groups, enc.spares, "vd{i}", path, ctrl_names, 0)
        if enc.expansion is None:
            return
        epath: YamlPath = (*path, "expansion")
        exp_part = self.part("enclosures", enc.expansion.part, enc.expansion.overrides, epath)
        assert isinstance(exp_part, Enclosure)
        if exp_part.kind != "expansion":
            self.problem((*epath, "part"), f"{enc.expansion.part!r} is not an expansion enclosure")
            raise _Abort
        exp_name = f"{name}.{enc.expansion.name}"
        self.add_unique(Component(exp_name, "enclosure", exp_part.model), epath)
        self.system.part_names[exp_name] = enc.expansion.part
        port_rate = part.host_port_lanes * self.lane_rate(part.host_port_bus, None)
        exp_ports = []
        for ctrl in ctrl_names:
            port = f"{ctrl}.expansion"
            self.add_unique(
                Component(
                    port,
                    "sas_port",
                    part.model,
                    port_rate,
                    port_rate,
                    note=f"SAS x{part.host_port_lanes} expansion port",
                ),
                epath,
            )
            self.system.connect(ctrl, port)
            self.system.connect(port, exp_name)
            exp_ports.append(port)
        exp_pool = self.make_pool(exp_name, enc.expansion.drives, exp_part.slots, exp_ports, epath)
        self.deal_groups(exp_pool, enc.expansion.raid_groups, enc.expansion.spares, "vd{i}", epath, exp_ports, owners)

    def make_pool(self, name: str, drives: DriveSet, slots: int | None, upstream: list[str], path: YamlPath) -> _Pool:
        """``drives.count`` drives named ``<name>.drive<n>`` attached to ``upstream``."""
        if slots is not None and drives.count > slots:
            self.problem((*path, "drives", "count"), f"{drives.count} drives do not fit in {slots} slots")
            raise _Abort
        part = self.part("drives", drives.part, drives.overrides, (*path, "drives"))
        assert isinstance(part, Drive)
        pool = _Pool(name, upstream=list(upstream))
        self.pools[name] = pool
        self.add_drives(pool, drives.part, part, drives.count, upstream, path)
        return pool

    def add_drives(
        self, pool: _Pool, part_name: str, part: Drive, count: int, upstream: list[str], path: YamlPath
    ) -> None:
        """Append ``count`` drives to ``pool``; each connects to every upstream part."""
        iface = part.interface.lanes * self.lane_rate(part.interface.bus, None)
        for _ in range(count):
            drive = f"{pool.name}.drive{len(pool.drives)}"
            self.add_unique(
                Component(drive, "drive", part.model, min(part.seq_read, iface), min(part.seq_write, iface)),
                path,
            )
            self.system.part_names[drive] = part_name
            self.system.drive_parts[drive] = part
            for up in upstream:
                self.system.connect(up, drive)
            pool.drives.append(drive)
            pool.parts.append((part_name, part))

    def deal_groups(
        self,
        pool: _Pool,
        specs: list[RaidSpec],
        spares: int,
        default_name: str,
        path: YamlPath,
        owners: list[str],
        owner_start: int,
    ) -> int:
        """Deal the pool's drives into RAID groups; returns the next controller-ownership index."""
        next_slot = 0
        owner_index = owner_start
        counters = {"data": 0, "metadata": 0, "vd": 0}
        for g, raid in enumerate(specs):
            gpath: YamlPath = (*path, "raid_groups", g)
            if raid.drives is not None:
                slot_lists = [list(raid.drives)]
            else:
                slot_lists = []
                block = raid.members * raid.interleave
                for k in range(raid.count):
                    base = next_slot + (k // raid.interleave) * block
                    offset = k % raid.interleave
                    slot_lists.append([base + offset + m * raid.interleave for m in range(raid.members)])
                whole_blocks = -(-raid.count // raid.interleave)
                next_slot += whole_blocks * block
            pattern = raid.name or default_name
            if "{i}" not in pattern and len(slot_lists) > 1:
                self.problem((*gpath, "name"), f"name {pattern!r} needs an '{{i}}' placeholder when count > 1")
                continue
            for slots in slot_lists:
                bad = [s for s in slots if s >= len(pool.drives)]
                if bad:
                    self.problem(
                        gpath,
                        f"needs drive slot {bad[0]} but {pool.name} has only {len(pool.drives)} drives",
                    )
                    break
                taken = [s for s in slots if s in pool.used]
                if taken:
                    self.problem(gpath, f"drive {pool.drives[taken[0]]} is already in RAID group {pool.used[taken[0]]}")
                    break
                kinds = {pool.parts[s][0] for s in slots}
                if len(kinds) > 1:
                    self.problem(gpath, f"mixes drive models {sorted(kinds)} in one RAID group")
                    break
                key = "vd" if pattern == "vd{i}" else raid.role
                index = counters[key]
                counters[key] += 1
                if pattern == default_name and default_name != "vd{i}":
                    pattern_here = "target{i}" if raid.role == "data" else "mdt{i}"
                else:
                    pattern_here = pattern
                group_name = f"{pool.name}.{pattern_here.replace('{i}', str(index))}"
                owner = None
                upstream = tuple(dict.fromkeys(u for s in slots for u in self.upstream_of(pool, s)))
                if owners:
                    if raid.owner == "alternate":
                        owner = owners[owner_index % len(owners)]
                        owner_index += 1
                    else:
                        letter_index = ord(raid.owner) - ord("A")
                        owner = owners[min(letter_index, len(owners) - 1)]
                    upstream = (owner,)
                part_name, part = pool.parts[slots[0]]
                members = tuple(pool.drives[s] for s in slots)
                group = RaidGroup(
                    name=group_name,
                    level=raid.level,
                    members=members,
                    drive=part,
                    drive_part=part_name,
                    stripe_unit_B=raid.stripe_unit,
                    role=raid.role,
                    pool=pool.name,
                    upstream=upstream,
                    owner=owner,
                    filesystem=raid.filesystem,
                )
                member_read = min(self.system.components[m].read_Bps or 0.0 for m in members)
                member_write = min(self.system.components[m].write_Bps or 0.0 for m in members)
                try:
                    self.add_unique(
                        Component(
                            group_name,
                            "raid_group",
                            f"RAID{raid.level} of {len(members)}x {part.model}",
                            group.streaming_Bps("read", member_read, member_write),
                            group.streaming_Bps("write", member_read, member_write),
                        ),
                        gpath,
                    )
                except _Abort:
                    break
                self.system.groups[group_name] = group
                self.group_paths[group_name] = gpath
                for s, member in zip(slots, members, strict=True):
                    pool.used[s] = group_name
                    self.system.connect(member, group_name)
                if owner is not None:
                    self.system.connect(owner, group_name)
        unassigned = [i for i in range(len(pool.drives)) if i not in pool.used]
        if len(unassigned) != spares:
            where = path if not specs else (*path, "raid_groups")
            self.problem(
                where,
                f"{pool.name} has {len(unassigned)} drives in no RAID group but declares spares: {spares}",
            )
        roles = {self.system.groups[g].role for g in pool.used.values()}
        data_tier = "data" in roles
        for i, drive in enumerate(pool.drives):
            in_data_group = i in pool.used and self.system.groups[pool.used[i]].role == "data"
            if in_data_group or (i not in pool.used and data_tier):
                self.system.data_tier_drives.append(drive)
        return owner_index

    def upstream_of(self, pool: _Pool, slot: int) -> list[str]:
        """The parts a drive hangs off (its PCIe switch or the zone's root complex)."""
        drive = pool.drives[slot]
        return [n for n in self.system.graph.neighbors(drive) if self.system.components[n].kind != "raid_group"]

    def resolve_server(self, index: int) -> tuple[ServerBody, dict[str, YamlPath]]:
        """A server entry merged over its template; also the YAML path each field came from."""
        entry = self.spec.servers[index]
        path: YamlPath = ("servers", index)
        fields = ("part", "role", "cpu", "memory", "numa", "sas", "services")
        origin = {f: (*path, f) for f in fields}
        if entry.template is None:
            return entry, origin
        template = self.spec.templates.get(entry.template)
        if template is None:
            known = ", ".join(self.spec.templates) or "none defined"
            self.problem((*path, "template"), f"unknown template {entry.template!r} (templates: {known})")
            raise _Abort
        values = {}
        for f in fields:
            if f in entry.model_fields_set:
                values[f] = getattr(entry, f)
            else:
                values[f] = getattr(template, f)
                origin[f] = ("templates", entry.template, f)
        return ServerBody(**values), origin

    def build_servers(self) -> None:
        """Every server: CPU sockets as NUMA zones, UPI, devices, services, SAS cabling."""
        for index, entry in enumerate(self.spec.servers):
            path: YamlPath = ("servers", index)
            try:
                body, origin = self.resolve_server(index)
                if body.part is None:
                    self.problem(path, "missing required key 'part' (in the entry or its template)")
                    raise _Abort
                chassis = self.part("servers", body.part, {}, origin["part"])
                assert isinstance(chassis, Server)
                cpu_name = body.cpu or chassis.cpu
                cpu = self.part("cpus", cpu_name, {}, origin["cpu"] if body.cpu else origin["part"])
                assert isinstance(cpu, Cpu)
                for s_index, name in enumerate(self.names(entry.name, entry.count, entry.start, path)):
                    self.build_server(name, s_index, body, chassis, cpu, origin, path)
            except _Abort:
                continue

    def build_server(
        self,
        name: str,
        s_index: int,
        body: ServerBody,
        chassis: Server,
        cpu: Cpu,
        origin: dict[str, YamlPath],
        path: YamlPath,
    ) -> None:
        """One server and everything inside it."""
        self.add_unique(Component(name, "server", chassis.model, note=body.role or ""), path)
        self.system.part_names[name] = body.part or ""
        self.system.servers.append(name)
        self.server_cpu[name] = cpu
        self.hcas_of_server[name] = []
        self.hbas_of_server[name] = []
        zones: list[tuple[str, NumaZone, YamlPath]] = []
        for z, zone in enumerate(body.numa or []):
            for _ in range(zone.count):
                zones.append((f"{name}.numa{len(zones)}", zone, (*origin["numa"], z)))
        if len(zones) > chassis.sockets:
            self.problem(
                origin["numa"], f"{len(zones)} NUMA zones but the {chassis.model} has {chassis.sockets} sockets"
            )
            raise _Abort
        for zone_name, _, zpath in zones:
            self.add_unique(Component(zone_name, "numa", cpu.model, note=f"{cpu.cores} cores"), zpath)
            self.system.zone_cores[zone_name] = cpu.cores
            self.system.connect(name, zone_name)
        if len(zones) >= 2:
            upi = f"{name}.upi"
            rate = cpu.upi_links * cpu.upi_link_rate
            self.add_unique(
                Component(upi, "upi", cpu.model, rate, rate, note=f"{cpu.upi_links} UPI links"), origin["numa"]
            )
            for zone_name, _, _ in zones:
                self.system.connect(zone_name, upi)
                self.system.upi_of[zone_name] = upi
        for zone_name, zone, zpath in zones:
            self.build_zone(name, s_index, zone_name, zone, zpath, cpu)
        for c, cabling in enumerate(body.sas or []):
            self.cable(name, cabling.enclosures, cabling.ports_per_controller, (*origin["sas"], c))
        for v, svc in enumerate(body.services or []):
            self.pending_services.append((svc, name, None, (*origin["services"], v), []))

    def build_zone(self, server: str, s_index: int, zone_name: str, zone: NumaZone, zpath: YamlPath, cpu: Cpu) -> None:
        """HCAs, PCIe switches, drives, HBAs, RAID groups and services of one NUMA zone.

        When a device of the zone could not be built, its RAID groups and services are skipped:
        their errors would only echo the first one.
        """
        problems_before = len(self.problems)
        for h, ref in enumerate(zone.hcas):
            hpath: YamlPath = (*zpath, "hcas", h)
            switch = ref.switch if isinstance(ref.switch, str) else ref.switch[s_index % len(ref.switch)]
            hca = f"{zone_name}.{ref.name or f'hca{h}'}"
            try:
                self.attach_hca(zone_name, hca, ref.part, ref.overrides, switch, cpu.pcie_bus, hpath)
            except _Abort:
                continue
            self.hcas_of_server[server].append(hca)
            self.system.zone_of[hca] = zone_name
        pool = _Pool(zone_name)
        self.pools[zone_name] = pool
        for p, sw_ref in enumerate(zone.pcie_switches):
            ppath: YamlPath = (*zpath, "pcie_switches", p)
            try:
                part = self.part("pcie_switches", sw_ref.part, sw_ref.overrides, ppath)
                assert isinstance(part, PcieSwitch)
                sw = f"{zone_name}.{sw_ref.name or f'pcie{p}'}"
                rate = part.uplink.lanes * self.lane_rate(part.uplink.bus, cpu.pcie_bus)
                self.add_unique(
                    Component(
                        sw, "pcie_switch", part.model, rate, rate, note=f"{part.uplink.bus} x{part.uplink.lanes} uplink"
                    ),
                    ppath,
                )
                self.system.part_names[sw] = sw_ref.part
                self.system.connect(zone_name, sw)
                self.system.zone_of[sw] = zone_name
                if sw_ref.drives is not None:
                    if sw_ref.drives.count > part.downstream_ports:
                        self.problem(
                            (*ppath, "drives", "count"),
                            f"{sw_ref.drives.count} drives but the switch has {part.downstream_ports} ports",
                        )
                        raise _Abort
                    dpart = self.part("drives", sw_ref.drives.part, sw_ref.drives.overrides, (*ppath, "drives"))
                    assert isinstance(dpart, Drive)
                    self.add_drives(pool, sw_ref.drives.part, dpart, sw_ref.drives.count, [sw], (*ppath, "drives"))
            except _Abort:
                continue
        if zone.drives is not None:
            try:
                dpart = self.part("drives", zone.drives.part, zone.drives.overrides, (*zpath, "drives"))
                assert isinstance(dpart, Drive)
                self.add_drives(pool, zone.drives.part, dpart, zone.drives.count, [zone_name], (*zpath, "drives"))
            except _Abort:
                pass
        for d in pool.drives:
            self.system.zone_of[d] = zone_name
        for b, hba_ref in enumerate(zone.hbas):
            bpath: YamlPath = (*zpath, "hbas", b)
            try:
                part = self.part("hbas", hba_ref.part, hba_ref.overrides, bpath)
                assert isinstance(part, Hba)
                hba = f"{zone_name}.{hba_ref.name or f'hba{b}'}"
                rate = part.host.lanes * self.lane_rate(part.host.bus, cpu.pcie_bus)
                self.add_unique(
                    Component(hba, "hba", part.model, rate, rate, note=f"{part.host.bus} x{part.host.lanes} slot"),
                    bpath,
                )
                self.system.part_names[hba] = hba_ref.part
                self.system.connect(zone_name, hba)
                self.system.zone_of[hba] = zone_name
                port_rate = part.port_lanes * self.lane_rate(part.port_bus, None)
                for port in range(part.ports):
                    pname = f"{hba}.port{port}"
                    self.add_unique(
                        Component(
                            pname, "sas_port", part.model, port_rate, port_rate, note=f"SAS x{part.port_lanes} port"
                        ),
                        bpath,
                    )
                    self.system.connect(hba, pname)
                    self.system.zone_of[pname] = zone_name
                self.hbas_of_server[server].append((hba, part.ports, 0))
            except _Abort:
                continue
        if len(self.problems) > problems_before:
            return
        if zone.raid_groups or pool.drives:
            with contextlib.suppress(_Abort):
                self.deal_groups(pool, zone.raid_groups, zone.spares, "target{i}", zpath, [], 0)
        for group in [g for g in self.system.groups.values() if g.pool == zone_name]:
            self.system.zone_of[group.name] = zone_name
        if len(self.problems) > problems_before:
            return
        for v, svc in enumerate(zone.services):
            self.pending_services.append((svc, server, zone_name, (*zpath, "services", v), []))

    def cable(self, server: str, pattern: str, per_controller: int, path: YamlPath) -> None:
        """One HBA port of ``server`` to each controller of each enclosure matching ``pattern``.

        Controller k of an enclosure goes to HBA k mod (number of HBAs), so that losing one HBA
        leaves every array reachable through its other controller, as the Dell designs cable them.
        """
        enclosures = [e for e in self.controllers if fnmatch.fnmatchcase(e, pattern)]
        if not enclosures:
            known = ", ".join(self.controllers) or "none"
            self.problem((*path, "enclosures"), f"no enclosure matches {pattern!r} (enclosures: {known})")
            return
        hbas = self.hbas_of_server[server]
        if not hbas:
            self.problem(path, f"server {server!r} has no HBA to cable enclosures to")
            return
        used = {hba: 0 for hba, _, _ in hbas}
        capacity = {hba: ports for hba, ports, _ in hbas}
        order = [hba for hba, _, _ in hbas]
        for enc in enclosures:
            for k, ctrl in enumerate(self.controllers[enc]):
                for _ in range(per_controller):
                    candidates = order[k % len(order) :] + order[: k % len(order)]
                    hba = next((h for h in candidates if used[h] < capacity[h]), None)
                    if hba is None:
                        self.problem(path, f"server {server!r} has no free HBA port left for {ctrl}")
                        return
                    port = f"{hba}.port{used[hba]}"
                    used[hba] += 1
                    self.system.connect(port, ctrl)
                    self.controller_cables[ctrl] += 1
                    if self.controller_cables[ctrl] > self.controller_ports[ctrl]:
                        self.problem(path, f"{ctrl} has {self.controller_ports[ctrl]} host ports but more cables")
                        return

    def build_clients(self) -> None:
        """Client nodes and their HCAs, group by group."""
        for g, spec in enumerate(self.spec.clients):
            path: YamlPath = ("clients", g)
            try:
                chassis = self.part("servers", spec.part, {}, path)
                assert isinstance(chassis, Server)
                cpu = self.part("cpus", spec.cpu or chassis.cpu, {}, (*path, "cpu") if spec.cpu else path)
                assert isinstance(cpu, Cpu)
                names = self.names(spec.name, spec.count, spec.start, path)
            except _Abort:
                continue
            cores = spec.cores or chassis.sockets * cpu.cores
            for c, name in enumerate(names):
                try:
                    self.add_unique(Component(name, "client", chassis.model, note=f"{cores} cores"), path)
                except _Abort:
                    break
                self.system.part_names[name] = spec.part
                self.system.clients.append(name)
                self.system.client_cores[name] = cores
                self.system.client_hcas[name] = []
                for h, ref in enumerate(spec.hcas):
                    switch = ref.switch if isinstance(ref.switch, str) else ref.switch[c % len(ref.switch)]
                    hca = f"{name}.{ref.name or f'hca{h}'}"
                    try:
                        self.attach_hca(name, hca, ref.part, ref.overrides, switch, cpu.pcie_bus, (*path, "hcas", h))
                    except _Abort:
                        break
                    self.system.client_hcas[name].append(hca)

    def build_filesystem(self) -> None:
        """Services (BeeGFS daemons or GPFS NSD servers) bound to their targets and HCAs."""
        fs = self.spec.filesystem
        if isinstance(fs, BeeGFSSpec):
            self.build_beegfs_services()
        else:
            if self.pending_services:
                _, _, _, path, _ = self.pending_services[0]
                self.problem(path, "BeeGFS services on a GPFS system; declare NSD servers under filesystem.nsds")
            self.build_gpfs_nsds(fs)

    def build_beegfs_services(self) -> None:
        """Each declared BeeGFS service, with targets dealt from its zone or matched by pattern."""
        counters: dict[tuple[str, str], int] = {}
        kinds_seen = set()
        for svc, server, zone, path, _ in self.pending_services:
            kinds_seen.add(svc.kind)
            role = _SERVICE_ROLE.get(svc.kind)
            if svc.targets is not None:
                targets = [g for g in self.system.groups if any(fnmatch.fnmatchcase(g, pat) for pat in svc.targets)]
                if not targets:
                    self.problem((*path, "targets"), f"no RAID group matches {svc.targets}")
                    continue
            elif role is not None and zone is not None:
                targets = [g.name for g in self.system.groups.values() if g.pool == zone and g.role == role]
                if not targets:
                    self.problem(path, f"{svc.kind} in {zone} finds no RAID group of role {role!r} there")
                    continue
            elif role is not None:
                self.problem(path, f"a server-level {svc.kind} needs 'targets' patterns")
                continue
            else:
                targets = []
            wrong = [t for t in targets if role is not None and self.system.groups[t].role != role]
            if wrong:
                self.problem(
                    (*path, "targets"),
                    f"{wrong[0]} has role {self.system.groups[wrong[0]].role!r}, "
                    f"but {svc.kind} serves {role!r} targets",
                )
                continue
            if targets and len(targets) % svc.count:
                self.problem(
                    (*path, "count"), f"{len(targets)} targets cannot be dealt evenly over {svc.count} services"
                )
                continue
            hcas = self.service_hcas(svc, server, zone, path)
            if hcas is None:
                continue
            per = len(targets) // svc.count if targets else 0
            base = zone or server
            for k in range(svc.count):
                key = (base, svc.kind)
                index = counters.get(key, 0)
                counters[key] = index + 1
                name = f"{base}.{_SERVICE_SHORT[svc.kind]}{index}"
                mine = tuple(targets[k * per : (k + 1) * per])
                self.add_service(Service(name, svc.kind, server, zone, mine, tuple(hcas), svc.workers), path)
        for needed in ("beegfs-meta", "beegfs-storage"):
            if needed not in kinds_seen:
                self.problem(("servers",), f"a BeeGFS system needs at least one {needed} service")

    def service_hcas(self, svc: ServiceSpec, server: str, zone: str | None, path: YamlPath) -> list[str] | None:
        """The HCAs a service listens on, from its ``interfaces`` setting."""
        all_hcas = self.hcas_of_server.get(server, [])
        mode = svc.interfaces if svc.interfaces is not None else ("zone" if zone else "all")
        if mode == "all":
            return list(all_hcas)
        if mode == "zone":
            if zone is None:
                self.problem((*path, "interfaces"), "'zone' interfaces need a service declared inside a NUMA zone")
                return None
            return [h for h in all_hcas if self.system.zone_of.get(h) == zone]
        chosen = []
        for i, h in enumerate(mode):
            full = h if h in all_hcas else next((x for x in all_hcas if x.endswith("." + h)), None)
            if full is None:
                self.problem(
                    (*path, "interfaces", i),
                    f"server {server!r} has no HCA {h!r} (HCAs: {', '.join(all_hcas) or 'none'})",
                )
                return None
            chosen.append(full)
        return chosen

    def add_service(self, service: Service, path: YamlPath) -> None:
        """Register a service as a graph node attached to its zone or server."""
        try:
            self.add_unique(Component(service.name, "service", service.kind), path)
        except _Abort:
            return
        self.system.services[service.name] = service
        self.system.connect(service.zone or service.server, service.name)
        for target in service.targets:
            others = [s.name for s in self.system.services.values() if target in s.targets and s.name != service.name]
            if others and service.kind.startswith("beegfs"):
                self.problem(path, f"target {target!r} is served by both {others[0]} and {service.name}")

    def build_gpfs_nsds(self, fs: GpfsSpec) -> None:
        """One NSD-server service per server named in ``nsds``; LUN primaries alternate over the list."""
        served: dict[str, list[str]] = {}
        for n, nsd in enumerate(fs.nsds):
            path: YamlPath = ("filesystem", "nsds", n)
            luns = [g for g in self.system.groups if fnmatch.fnmatchcase(g, nsd.luns)]
            if not luns:
                self.problem((*path, "luns"), f"no RAID group matches {nsd.luns!r}")
                continue
            for s, server in enumerate(nsd.servers):
                if server not in self.hcas_of_server:
                    self.problem((*path, "servers", s), f"unknown server {server!r}")
            for k, lun in enumerate(luns):
                group = self.system.groups[lun]
                if group.role != nsd.usage:
                    self.problem((*path, "usage"), f"{lun} is declared with role {group.role!r}, not {nsd.usage!r}")
                    break
                if lun in served:
                    self.problem((*path, "luns"), f"{lun} is already an NSD of another entry")
                    break
                order = nsd.servers[k % len(nsd.servers) :] + nsd.servers[: k % len(nsd.servers)]
                served[lun] = [s for s in order if s in self.hcas_of_server]
        by_server: dict[str, list[str]] = {}
        for lun, servers in served.items():
            for server in servers:
                by_server.setdefault(server, []).append(lun)
        for server, luns in by_server.items():
            name = f"{server}.nsd"
            self.add_service(
                Service(name, "gpfs-nsd", server, None, tuple(luns), tuple(self.hcas_of_server[server])),
                ("filesystem", "nsds"),
            )

    def check_switch_ports(self) -> None:
        """A switch cannot take more cables than it has ports."""
        for switch, cables in self.switch_cables.items():
            if cables > self.switch_ports[switch]:
                self.problem(
                    self.switch_paths[switch],
                    f"{cables} HCAs are cabled to {switch} but it has {self.switch_ports[switch]} ports",
                )

    def check_unassigned_groups(self) -> None:
        """A data or metadata RAID group that no service serves is almost always a mistake."""
        for name, group in self.system.groups.items():
            if not self.system.served(name):
                self.problems.append(
                    Problem(
                        self.smap.file,
                        self.smap.line(("filesystem",)),
                        "filesystem",
                        f"RAID group {name!r} (role {group.role}) is served by no service",
                    )
                )


def build_system(spec: SystemSpec, catalogue: Catalogue, smap: SourceMap) -> System:
    """Build and check a system; raises :class:`TopologyError` listing every problem."""
    return Builder(spec, catalogue, smap).build()


def load_system(path: Path | str) -> System:
    """Load a topology file, its parts catalogue, and build the checked system."""
    path = Path(path)
    spec, catalogue, smap = load_system_spec(path)
    return build_system(spec, catalogue, smap)
