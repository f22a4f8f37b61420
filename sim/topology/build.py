"""Turning a validated :class:`SystemSpec` into a :class:`System`: names, parts, RAID groups, services.

Counts and templates are expanded here, catalogue parts resolved (with overrides), drives dealt
into RAID groups, SAS cables assigned to HBA ports and services bound to targets and HCAs. Each
problem is reported at the YAML path of the declaration that caused it; all problems of a file are
collected before :class:`TopologyError` is raised.
"""

from __future__ import annotations

from pathlib import Path

from sim.config.load import Catalogue, load_system_spec
from sim.config.parts import Cpu, Link, Server, Switch
from sim.config.system import (
    SystemSpec,
)
from sim.config.yamlio import SourceMap
from sim.errors import Problem, TopologyError
from sim.topology.build_base import YamlPath, _Abort, expand_names
from sim.topology.build_servers import ServerSteps
from sim.topology.build_services import ServiceSteps
from sim.topology.model import Component, System

__all__ = ["Builder", "build_system", "expand_names", "load_system"]


class Builder(ServerSteps, ServiceSteps):
    """Builds one system; collects problems instead of stopping at the first."""

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
            self.check_service_cabling()
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

    def check_service_cabling(self) -> None:
        """A service's server needs a SAS cable to the controller that owns each target it serves."""
        s = self.system
        for service in s.services.values():
            for target in service.targets:
                group = s.groups.get(target)
                controller = group.controller if group is not None else None
                if controller is None:
                    continue
                cabled = any(
                    s.components[p].kind == "sas_port" and p.startswith(service.server + ".")
                    for p in s.graph.neighbors(controller)
                )
                if not cabled:
                    self.problem(
                        self.group_paths.get(target, ("servers",)),
                        f"{service.name} on {service.server} serves {target}, but {service.server} has no SAS "
                        f"cable to {controller} (add the enclosure to the server's sas: list)",
                    )

    def check_switch_ports(self) -> None:
        """A switch cannot take more cables than it has ports."""
        for switch, cables in self.switch_cables.items():
            if cables > self.switch_ports[switch]:
                self.problem(
                    self.switch_paths[switch],
                    f"{cables} cables (HCAs and inter-switch links) end at {switch} but it has "
                    f"{self.switch_ports[switch]} ports",
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
