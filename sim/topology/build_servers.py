"""Build steps for servers: templates, NUMA zones, UPI, HCAs, PCIe switches, HBAs and SAS cabling."""

from __future__ import annotations

import contextlib
import fnmatch

from sim.config.parts import Cpu, Drive, Hba, PcieSwitch, Server
from sim.config.system import (
    NumaZone,
    ServerBody,
)
from sim.topology.build_base import YamlPath, _Abort, _Pool
from sim.topology.build_storage import StorageSteps
from sim.topology.model import Component

_BODY_FIELDS = ("part", "role", "cpu", "memory", "numa", "sas", "services")


class ServerSteps(StorageSteps):
    """Servers and everything inside them."""

    def resolve_server(self, index: int) -> tuple[ServerBody, dict[str, YamlPath]]:
        """A server entry merged over its template; also the YAML path each field came from."""
        entry = self.spec.servers[index]
        path: YamlPath = ("servers", index)
        fields = _BODY_FIELDS
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
        # The values were validated where they were written (the entry or the template): merged
        # as they are, since validating them again would read sizes already in bytes as bare numbers.
        return ServerBody.model_construct(_fields_set=set(values), **values), origin

    def build_servers(self) -> None:
        """Every server: CPU sockets as NUMA zones, UPI, devices, services, SAS cabling."""
        for index, entry in enumerate(self.spec.servers):
            path: YamlPath = ("servers", index)
            try:
                body, origin = self.resolve_server(index)
                self.build_servers_of(body, origin, path, entry.name, entry.count, entry.start)
            except _Abort:
                continue

    def build_template_alone(self, name: str) -> None:
        """One server named after the template, built from the template alone (to check an unused one)."""
        path: YamlPath = ("templates", name)
        origin = {f: (*path, f) for f in _BODY_FIELDS}
        with contextlib.suppress(_Abort):
            self.build_servers_of(self.spec.templates[name], origin, path, name, 1, 0)

    def build_servers_of(
        self, body: ServerBody, origin: dict[str, YamlPath], path: YamlPath, pattern: str, count: int, start: int
    ) -> None:
        """``count`` servers named from ``pattern``, all made of ``body``."""
        if body.part is None:
            self.problem(path, "missing required key 'part' (in the entry or its template)")
            raise _Abort
        chassis = self.part("servers", body.part, {}, origin["part"][:-1], origin["part"])
        assert isinstance(chassis, Server)
        cpu = self.cpu_part(body.cpu, chassis.cpu, path, origin["cpu"], origin["part"])
        for s_index, name in enumerate(self.names(pattern, count, start, path)):
            self.build_server(name, s_index, body, chassis, cpu, origin, path)

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
        self.host_memory[name] = (body.memory or chassis.memory, origin["memory"] if body.memory else origin["part"])
        self.system.servers.append(name)
        self.server_cpu[name] = cpu
        self.hcas_of_server[name] = []
        self.hbas_of_server[name] = []
        zones: list[tuple[str, NumaZone, YamlPath]] = []
        for z, zone in enumerate(body.numa or []):
            for _ in range(zone.count):
                zones.append((f"{name}.numa{len(zones)}", zone, (*origin["numa"], z)))
                self.zone_server[zones[-1][0]] = name
        if len(zones) > chassis.sockets:
            self.problem(
                origin["numa"], f"{len(zones)} NUMA zones but the {chassis.model} has {chassis.sockets} sockets"
            )
            raise _Abort
        too_many = cpu.too_many_sockets(len(zones))
        if too_many:
            self.problem(
                origin["cpu"] if body.cpu else origin["numa"], f"{len(zones)} NUMA zones (one a socket) but {too_many}"
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
                self.lanes_taken[zone_name] = self.lanes_taken.get(zone_name, 0) + part.uplink.lanes
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
                    self.check_drive_bus(dpart, "pcie", "a PCIe switch's downstream ports take NVMe drives", ppath)
                    self.add_drives(
                        pool,
                        sw_ref.drives.part,
                        dpart,
                        sw_ref.drives.count,
                        [sw],
                        (*ppath, "drives"),
                        # A switch's downstream ports run at its own generation (its uplink's).
                        host_bus=part.uplink.bus,
                    )
            except _Abort:
                continue
        if zone.drives is not None:
            try:
                dpart = self.part("drives", zone.drives.part, zone.drives.overrides, (*zpath, "drives"))
                assert isinstance(dpart, Drive)
                self.check_drive_bus(
                    dpart, "pcie", "drives on a NUMA zone attach to its CPU's PCIe lanes (NVMe)", zpath
                )
                self.add_drives(
                    pool,
                    zone.drives.part,
                    dpart,
                    zone.drives.count,
                    [zone_name],
                    (*zpath, "drives"),
                    host_bus=cpu.pcie_bus,
                )
                self.lanes_taken[zone_name] = (
                    self.lanes_taken.get(zone_name, 0) + zone.drives.count * dpart.interface.lanes
                )
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
                self.lanes_taken[zone_name] = self.lanes_taken.get(zone_name, 0) + part.host.lanes
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
        if self.lanes_taken.get(zone_name, 0) > cpu.pcie_lanes:
            self.problem(
                zpath,
                f"the zone's cards, PCIe switches and drives take {self.lanes_taken[zone_name]} PCIe lanes, but its "
                f"CPU socket ({cpu.model}) has {cpu.pcie_lanes}",
            )
        if len(self.problems) > problems_before:
            return
        if zone.raid_groups or pool.drives:
            with contextlib.suppress(_Abort):
                self.deal_groups(pool, zone.raid_groups, zone.spares, "target{i}", zpath, [], 0)
        for group in self.groups_in(zone_name):
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
            if self.enclosure_failed:
                return  # the enclosure's own problem is reported; this would only echo it
            known = ", ".join(self.controllers) or "none"
            self.problem((*path, "enclosures"), f"no enclosure matches {pattern!r} (enclosures: {known})")
            return
        hbas = self.hbas_of_server[server]
        if not hbas:
            self.problem(path, f"server {server!r} has no HBA to cable enclosures to")
            return
        # Ports stay taken across the server's `sas:` entries: one entry per enclosure cables the
        # same ports as one entry for all of them, never one port twice.
        used = self.hba_ports_used
        for name, _, _ in hbas:
            used.setdefault(name, 0)
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
                        self.problem(
                            path,
                            f"{ctrl} has {self.controller_ports[ctrl]} host ports, all cabled already "
                            f"(this entry would add cable number {self.controller_cables[ctrl]})",
                        )
                        return
