"""Turning a validated :class:`SystemSpec` into a :class:`System`: names, parts, RAID groups, services.

Counts and templates are expanded here, catalogue parts resolved (with overrides), drives dealt
into RAID groups, SAS cables assigned to HBA ports and services bound to targets and HCAs. Each
problem is reported at the YAML path of the declaration that caused it; all problems of a file are
collected before :class:`TopologyError` is raised.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

from sim.config.load import Catalogue, load_system_spec
from sim.config.overrides import Setting, as_set_problems
from sim.config.parts import Link, Server, Switch
from sim.config.system import (
    GpfsSpec,
    SystemSpec,
    pagepool_too_large,
)
from sim.config.units import format_bytes
from sim.config.yamlio import SourceMap, format_path
from sim.errors import ConfigError, TopologyError
from sim.topology.build_base import YamlPath, _Abort, expand_names, listing
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
            self.check_pagepools,
            self.check_unassigned_groups,
            self.check_unused_templates,
        )
        for step in steps:
            if self.problems and step in (self.build_filesystem, self.check_unassigned_groups):
                continue  # bindings of a half-built system only repeat earlier problems
            step()
        if not self.problems:
            self.check_service_cabling()
        if not self.problems:
            self.check_reachability()
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
                self.switch_ports[sw.name] = part.ports
                links = [
                    (name, self.catalogue.get("links", name)) for name in (part.port_link, part.split_link) if name
                ]
                rates = [(name, e.part.rate) for name, e in links if e is not None and isinstance(e.part, Link)]
                if rates:
                    self.switch_port_link[sw.name] = max(rates, key=lambda item: item[1])
                split = self.catalogue.get("links", part.split_link) if part.split_link else None
                if split is not None and isinstance(split.part, Link) and part.split_ports:
                    self.switch_split[sw.name] = (split.part.rate, part.split_ports // part.ports)
                self.switch_cables[sw.name] = 0
                self.switch_port_use[sw.name] = 0.0
                self.switch_paths[sw.name] = path
            except _Abort:
                self.broken_switches.add(sw.name)
                continue
        joined: dict[frozenset[str], int] = {}  # pair of switches -> the links entry joining them
        for i, bundle in enumerate(self.spec.network.links):
            path = ("network", "links", i)
            a, b = bundle.between
            pair = frozenset((a, b))
            if pair in joined and a != b:
                # A request takes one path, so a second bundle would sit idle in the simulation while
                # the max-flow bound counted it: the links between two switches are one bundle.
                self.problem(
                    (*path, "between"),
                    f"{a} and {b} are already joined by network.links[{joined[pair]}]; give the links "
                    "between two switches as one bundle (its count: the number of links)",
                )
                continue
            joined[pair] = i
            if a in self.broken_switches or b in self.broken_switches:
                continue
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
            try:
                for end in (a, b):
                    self.check_port_speed(bundle.link, entry.part.rate, end, (*path, "link"), "link: {}")
            except _Abort:
                continue
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
            self.take_ports(a, entry.part.rate, bundle.count)
            self.take_ports(b, entry.part.rate, bundle.count)

    def build_clients(self) -> None:
        """Client nodes and their HCAs, group by group."""
        for g, spec in enumerate(self.spec.clients):
            path: YamlPath = ("clients", g)
            try:
                chassis = self.part("servers", spec.part, {}, path)
                assert isinstance(chassis, Server)
                cpu = self.cpu_part(spec.cpu, chassis.cpu, path, (*path, "cpu"), (*path, "part"))
                names = self.names(spec.name, spec.count, spec.start, path)
            except _Abort:
                continue
            too_many = cpu.too_many_sockets(chassis.sockets)  # a client's are its chassis's, all populated
            if too_many:
                self.problem(
                    (*path, "cpu") if spec.cpu else (*path, "part"),
                    f"the {chassis.model} has {chassis.sockets} sockets but {too_many}",
                )
                continue
            physical = chassis.sockets * cpu.cores
            if spec.cores is not None and spec.cores > physical:
                self.problem(
                    (*path, "cores"),
                    f"{spec.cores} cores, but {chassis.sockets} x {cpu.model} have {physical} "
                    "(hyperthreads share a core's execution units and are not counted as cores)",
                )
                continue
            cores = spec.cores or physical
            memory = (spec.memory or chassis.memory, (*path, "memory") if spec.memory else (*path, "part"))
            for c, name in enumerate(names):
                try:
                    self.add_unique(Component(name, "client", chassis.model, note=f"{cores} cores"), path)
                except _Abort:
                    break
                self.system.part_names[name] = spec.part
                self.host_memory[name] = memory
                self.system.client_memory[name] = memory[0]
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
        """A service's server needs a SAS cable to the controller that owns each target it serves.

        One problem per service, with its targets counted and the enclosures it lacks cables to named:
        a GPFS NSD entry that names the wrong servers is one mistake, said at that entry's server,
        not once per LUN at the LUNs."""
        s = self.system
        uncabled: dict[str, dict[str, list[str]]] = {}  # service -> enclosure -> its targets served
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
                    enclosure = controller.rsplit(".", 1)[0]  # {enclosure}.ctrlA: the sas: list names enclosures
                    uncabled.setdefault(service.name, {}).setdefault(enclosure, []).append(target)
        for name, enclosures in uncabled.items():
            server = s.services[name].server
            targets = [t for served in enclosures.values() for t in served]
            path = self.group_paths.get(targets[0], ("servers",))
            fs = self.spec.filesystem
            if isinstance(fs, GpfsSpec) and targets[0] in self.nsd_entry:
                servers = fs.nsds[self.nsd_entry[targets[0]]].servers
                path = ("filesystem", "nsds", self.nsd_entry[targets[0]], "servers", servers.index(server))
            what = targets[0] if len(targets) == 1 else f"{len(targets)} targets ({listing(targets)})"
            where = list(enclosures)
            self.problem(
                path,
                f"{name} on {server} serves {what}, but {server} has no SAS cable to {listing(where)} "
                f"(add {'the enclosure' if len(where) == 1 else 'the enclosures'} to the server's sas: list)",
            )

    def check_reachability(self) -> None:
        """Every storage and metadata target is reachable from every client through the data path.

        One line per declaration and set of clients, with counts: a GPFS NSD entry whose servers sit
        on the wrong switch cuts off all its LUNs from all clients, which is one mistake, not
        LUNs x clients of them.
        """
        from sim.topology.bounds import unreachable_targets

        grouped: dict[tuple[YamlPath, tuple[str, ...]], list[str]] = {}
        for target, blocked in unreachable_targets(self.system).items():
            if target in self.nsd_entry:
                path: YamlPath = ("filesystem", "nsds", self.nsd_entry[target], "servers")
            else:
                path = self.group_paths.get(target, ("clients",))
            grouped.setdefault((path, tuple(blocked)), []).append(target)
        of_clients = len(self.system.clients)
        for (path, clients), targets in grouped.items():
            whom = f"{len(clients)} of {of_clients} clients (first: {clients[0]!r})"
            if targets[0] in self.nsd_entry:
                assert isinstance(self.spec.filesystem, GpfsSpec)
                servers = self.spec.filesystem.nsds[self.nsd_entry[targets[0]]].servers
                role = self.system.groups[targets[0]].role
                if len(targets) == 1:
                    what = f"{role} NSD {targets[0]!r} of this entry"
                else:
                    what = f"{len(targets)} {role} NSDs of this entry ({listing(targets)})"
                self.problem(
                    path,
                    f"{what} cannot be reached from {whom}: none of the entry's NSD "
                    f"servers ({', '.join(servers)}) has an HCA on a switch those clients reach "
                    "(check HCA switches and inter-switch links)",
                )
            else:
                what = f"target {targets[0]!r}" if len(targets) == 1 else f"{len(targets)} targets ({listing(targets)})"
                self.problem(
                    path,
                    f"{what} cannot be reached from {whom} "
                    "(check HCA switches, inter-switch links, service interfaces, SAS cabling)",
                )

    def check_unused_templates(self) -> None:
        """A template no server uses is checked as if one server were built from it alone.

        An unused template is not an error: keeping the other riser layout or next year's server
        beside the live ones is how templates get used, like an unreferenced anchor in any YAML file.
        But its mistakes (a misspelt part, a switch that does not exist, drives that do not fit) must
        not lie in wait for the day a server names it; only the schema checked it so far. It is built
        in a scratch system holding this file's fabric and enclosures, and only problems located in
        the template are kept (the rest of the file is checked by the real build). A template without
        a ``part`` is a fragment its servers complete, and cannot be built alone.
        """
        used = {entry.template for entry in self.spec.servers}
        for name, template in self.spec.templates.items():
            if name in used or template.part is None:
                continue
            scratch = Builder(self.spec, self.catalogue, self.smap)
            scratch.build_network()
            scratch.build_enclosures()
            scratch.problems = []
            scratch.build_template_alone(name)
            if not scratch.problems:
                scratch.build_filesystem()  # service bindings, as in build()
            prefix = format_path(("templates", name))
            self.problems.extend(
                p for p in scratch.problems if p.path == prefix or p.path.startswith((prefix + ".", prefix + "["))
            )

    def check_pagepools(self) -> None:
        """GPFS pins its pagepool in memory: it must fit in every client's, and every NSD server's,
        within the share of real memory GPFS can pin (:func:`pagepool_too_large`)."""
        fs = self.spec.filesystem
        if not isinstance(fs, GpfsSpec):
            return
        hosts = {
            "client": self.system.clients,
            "server": list(dict.fromkeys(server for nsd in fs.nsds for server in nsd.servers)),
        }
        for side, names in hosts.items():
            size = getattr(fs.pagepool, side)
            if size < fs.block_size:
                self.problem(
                    ("filesystem", "pagepool", side),
                    f"a {format_bytes(size)} pagepool cannot hold one {format_bytes(fs.block_size)} file-system "
                    "block (GPFS stages data through the pagepool a block buffer at a time)",
                )
            for name in names:
                memory, where = self.host_memory.get(name, (math.inf, ()))
                why = pagepool_too_large(size, memory)
                if why:
                    self.problem(
                        ("filesystem", "pagepool", side),
                        f"a {format_bytes(size)} pagepool is more than 80% of the {format_bytes(memory)} of {name} "
                        f"(memory set at {format_path(where)}): {why}",
                    )
                    break

    def check_switch_ports(self) -> None:
        """A switch cannot take more cables than it has ports."""
        for switch, cables in self.switch_cables.items():
            used, ports = self.switch_port_use[switch], self.switch_ports[switch]
            if used > ports + 1e-9:
                split = self.switch_split.get(switch)
                how = (
                    f"; a port splits into {split[1]} for links up to {split[0] / 1e9:g} GB/s, and the cables "
                    f"take {used:g} ports"
                    if split
                    else ""
                )
                self.problem(
                    self.switch_paths[switch],
                    f"{cables} cables (HCAs and inter-switch links) end at {switch} but it has {ports} ports{how}",
                )

    def check_unassigned_groups(self) -> None:
        """A data or metadata RAID group that no service serves is almost always a mistake."""
        unserved: dict[YamlPath, list[str]] = {}
        for name in self.system.groups:
            if not self.system.served(name):
                unserved.setdefault(self.group_paths.get(name, ("filesystem",)), []).append(name)
        how = (
            "an nsds entry whose luns match them"
            if isinstance(self.spec.filesystem, GpfsSpec)
            else "a beegfs-storage or beegfs-meta service in their zone, or one whose targets match them"
        )
        for path, names in unserved.items():
            role = self.system.groups[names[0]].role
            self.problem(
                path,
                f"{listing(names)} (role {role}) {'is' if len(names) == 1 else 'are'} served by no service; add {how}",
            )


def build_system(spec: SystemSpec, catalogue: Catalogue, smap: SourceMap) -> System:
    """Build and check a system; raises :class:`TopologyError` listing every problem."""
    return Builder(spec, catalogue, smap).build()


def load_system(path: Path | str, settings: Sequence[Setting] = ()) -> System:
    """Load a topology file, its parts catalogue, and build the checked system, with the values of
    ``settings`` (``--set``) in place of the file's."""
    path = Path(path)
    spec, catalogue, smap = load_system_spec(path, settings)
    try:
        system = build_system(spec, catalogue, smap)
    except ConfigError as exc:
        if not settings:
            raise
        raise type(exc)(as_set_problems(exc.problems, list(settings))) from None
    system.settings = tuple(s.text for s in settings)
    return system
