"""The hardware ceiling: max-flow from all clients to all storage targets, and who sets it.

The flow network follows the data path a request takes: client HCA -> switch -> server HCA ->
service -> (UPI if the NUMA zone changes) -> PCIe switch, or HBA -> SAS port -> controller
(-> expansion port) -> RAID group -> sink. Every part with a rate becomes an edge of that capacity
(node splitting); reads and writes use the same paths with their own device and controller rates.

The bound is a relaxation, by design: it lets any server cabled to a controller carry that
controller's LUNs (a failover path) and lets flows share one UPI node per direction. On the shipped
systems neither changes the value; both are documented in docs/design.md.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

import networkx as nx

from sim.topology.model import Component, Service, System

SRC = "@clients"
SINK = "@targets"


def _in(name: str) -> tuple[str, str]:
    return (name, "in")


def _out(name: str) -> tuple[str, str]:
    return (name, "out")


class FlowNetwork:
    """A directed network with per-component capacities for one operation (read or write)."""

    def __init__(self, system: System, op: str, clients: Collection[str] | None = None) -> None:
        self.system = system
        self.op = op
        # The clients whose HCAs the flow starts from (all of them unless given).
        self.clients = set(system.client_hcas if clients is None else clients)
        self.graph = nx.DiGraph()
        self.split: set[str] = set()
        # Synthetic nodes (a UPI direction, a server-level service's entry per zone) live here,
        # not in the system: building a flow network must not change what it describes.
        self.extra: dict[str, Component] = {}
        self._software_raid_switches()
        self._build()

    def _software_raid_switches(self) -> None:
        """Count a PCIe switch's capacity in bytes of target data: software RAID sends each member
        I/O over the switch its drive hangs off, so a written byte crosses it once per copy (RAID1
        and RAID10: twice) or with its share of parity (RAID5/6: members / data members, for whole
        stripes). A switch feeding targets of different layouts takes the smallest factor, which
        keeps the bound an upper one."""
        factors: dict[str, float] = {}
        for target in self.system.storage_targets:
            group = self.system.groups[target]
            if group.owner is not None or self.op != "write":
                continue
            # Mirrors write two copies (RaidDevice's RAID1 writes its first two members); striped
            # layouts write every member for their data members' worth.
            factor = 2.0 if group.level in (1, 10) else len(group.members) / group.data_members
            for up in group.upstream:
                if self.system.components[up].kind == "pcie_switch":
                    factors[up] = min(factors.get(up, factor), factor)
        for switch, factor in factors.items():
            if factor > 1.0:
                base = self.system.components[switch]
                note = "; ".join(filter(None, [base.note, f"software RAID writes cross it {factor:.3g} times"]))
                rate = (base.write_Bps or 0.0) / factor
                self.extra[switch] = Component(switch, base.kind, base.model, base.read_Bps, rate, note)

    def component(self, name: str) -> Component:
        """A system component or one of this network's synthetic nodes."""
        return self.extra.get(name) or self.system.components[name]

    def capacity(self, name: str) -> float | None:
        """The component's rate for this operation (None: not a limit)."""
        component = self.component(name)
        return component.read_Bps if self.op == "read" else component.write_Bps

    def node(self, name: str) -> None:
        """Split a rated component into in -> out with its capacity."""
        if name in self.split:
            return
        self.split.add(name)
        cap = self.capacity(name)
        if cap is None:
            self.graph.add_edge(_in(name), _out(name))
        else:
            self.graph.add_edge(_in(name), _out(name), capacity=cap)

    def edge(self, a: str, b: str) -> None:
        """Unlimited connection from component ``a`` to component ``b``."""
        self.node(a)
        self.node(b)
        self.graph.add_edge(_out(a), _in(b))

    def upi_hop(self, src_zone: str, dst_zone: str, frm: str, to: str) -> None:
        """``frm`` -> ``to``, through the server's UPI when the two sit on different sockets."""
        if src_zone == dst_zone or src_zone not in self.system.upi_of:
            self.edge(frm, to)
            return
        upi = self.system.upi_of[src_zone]
        # One node per direction keeps the two directions' capacities apart.
        hop = f"{upi}[{src_zone.rsplit('.', 1)[-1]}->{dst_zone.rsplit('.', 1)[-1]}]"
        if hop not in self.extra:
            base = self.system.components[upi]
            self.extra[hop] = Component(hop, "upi", base.model, base.read_Bps, base.write_Bps, base.note)
        self.edge(frm, hop)
        self.edge(hop, to)

    def _build(self) -> None:
        s = self.system
        g = self.graph
        for name, (a, b) in s.switch_links.items():
            # A full-duplex bundle: one capacity per direction.
            base = s.components[name]
            for frm, to in ((a, b), (b, a)):
                hop = f"{name}[{frm}->{to}]"
                self.extra[hop] = Component(hop, "switch_link", base.model, base.read_Bps, base.write_Bps, base.note)
                self.edge(frm, hop)
                self.edge(hop, to)
        for client, hcas in s.client_hcas.items():
            for hca in hcas:
                self.node(hca)
                if client in self.clients:
                    g.add_edge(SRC, _in(hca))
                self.edge(hca, s.hca_switch[hca])
        for service in s.services.values():
            for hca in service.hcas:
                self.edge(s.hca_switch[hca], hca)
                hca_zone = s.zone_of.get(hca, service.server)
                entry = service.name if service.zone else f"{service.name}@{hca_zone.rsplit('.', 1)[-1]}"
                if entry not in s.components and entry not in self.extra:
                    self.extra[entry] = Component(entry, "service", service.kind)
                self.upi_hop(hca_zone, service.zone or hca_zone, hca, entry)
                for target in service.targets:
                    self._to_target(service, entry, service.zone or hca_zone, target)
        for name in s.storage_targets:
            self.node(name)
            g.add_edge(_out(name), SINK)

    def _to_target(self, service: Service, entry: str, zone: str, target: str) -> None:
        s = self.system
        group = s.groups[target]
        for up in group.upstream:
            kind = s.components[up].kind
            if kind == "pcie_switch":
                self.upi_hop(zone, s.zone_of[up], entry, up)
                self.edge(up, target)
            elif kind == "numa":
                self.upi_hop(zone, up, entry, target)
            elif kind in ("controller", "sas_port"):
                ctrl = up if kind == "controller" else up.rsplit(".", 1)[0]
                for port in s.graph.neighbors(ctrl):
                    if s.components[port].kind != "sas_port" or not port.startswith(service.server + "."):
                        continue
                    hba = port.rsplit(".", 1)[0]
                    self.upi_hop(zone, s.zone_of[hba], entry, hba)
                    self.edge(hba, port)
                    self.edge(port, ctrl)
                if kind == "sas_port":
                    self.edge(ctrl, up)
                self.edge(up, target)


@dataclass(frozen=True)
class Bottleneck:
    """Parts of one kind in the minimum cut."""

    kind: str
    model: str | None
    note: str
    count: int
    each_Bps: float
    parts: tuple[str, ...]

    def describe(self) -> str:
        """'11 x hca Mellanox ConnectX-5 ... (12.4 GB/s each, edr link)'."""
        label = self.kind.replace("_", " ")
        extra = f", {self.note}" if self.note else ""
        return f"{self.count} x {label} {self.model or ''}".rstrip() + f" ({self.each_Bps / 1e9:.4g} GB/s each{extra})"


@dataclass(frozen=True)
class Bound:
    """The max-flow ceiling for one operation and the parts of the minimum cut."""

    op: str
    Bps: float
    bottlenecks: tuple[Bottleneck, ...]
    replicas: int = 1  # copies of each written byte (the flow through the cut is Bps x replicas)
    # For the even-share bound: targets held to their share by the cut, of all the targets.
    held: tuple[int, int] | None = None

    def describe(self) -> str:
        """Human summary of the minimum cut."""
        text = "; ".join(b.describe() for b in self.bottlenecks)
        if self.held is not None:
            behind, targets = self.held
            verb = "is" if behind == 1 else "are"
            text += (
                f", which {behind} of the {targets} targets {verb} behind; the others are held to the same share"
                if behind < targets
                else ""
            )
        return f"{text}; each byte written {self.replicas} times (data replicas)" if self.replicas > 1 else text

    @property
    def parts(self) -> list[str]:
        """Every part of the minimum cut."""
        return [p for b in self.bottlenecks for p in b.parts]


def _bottlenecks(network: FlowNetwork, reachable: set) -> tuple[Bottleneck, ...]:
    """The parts of a cut (edges from ``reachable`` out of it), grouped by kind and model, the
    largest share of the cut first; the edges into the sink (a target's share) are not parts."""
    cut: dict[tuple[str, str | None, str, float], list[str]] = {}
    for u, v, data in network.graph.edges(data=True):
        if u in reachable and v not in reachable and "capacity" in data and v != SINK:
            name = u[0] if isinstance(u, tuple) else str(u)
            c = network.component(name)
            cut.setdefault((c.kind, c.model, c.note, data["capacity"]), []).append(name)
    shares = sorted(cut.items(), key=lambda kv: -len(kv[1]) * kv[0][3])
    return tuple(
        Bottleneck(kind, model, note, len(parts), cap, tuple(sorted(parts)))
        for (kind, model, note, cap), parts in shares
    )


def _replicas(system: System, op: str) -> int:
    """With GPFS data replication the client writes every byte data_replicas times, each copy over
    the same kinds of path, so the data a benchmark writes is the flow over the replicas."""
    return getattr(system.spec.filesystem, "data_replicas", 1) if op == "write" else 1


def max_flow_bound(system: System, op: str, clients: Collection[str] | None = None) -> Bound:
    """Max-flow from every client (or from ``clients``) to every storage target for ``op`` ('read'
    or 'write')."""
    network = FlowNetwork(system, op, clients)
    if not system.storage_targets:
        return Bound(op, 0.0, ())
    value, (reachable, _) = nx.minimum_cut(network.graph, SRC, SINK)
    replicas = _replicas(system, op)
    return Bound(op, float(value) / replicas, _bottlenecks(network, reachable), replicas)


def even_share_bound(system: System, op: str) -> Bound:
    """The most all clients can move when every storage target takes an equal share, as striping
    (BeeGFS chunks, GPFS blocks dealt round robin) spreads a benchmark's data: the largest share d
    with a flow of d into every target at once.

    The free max-flow lets some targets take more than others, so a part that only some targets'
    traffic crosses (a UPI link that one zone's targets are reached over) can be worked around in
    it but not by striping: an architect's what-if showed 99 GB/s "set by 4 x hca" where its
    striped simulation gave 40, bound by the UPI links. Found by Newton's method on the parametric
    cut: with every target's edge to the sink at capacity d, a minimum cut of value V < T d that
    cuts the sink edges of A targets is also the bound's at d' = (V - A d) / (T - A), where it
    would carry exactly T d'; from d = free max-flow / T this falls to the largest feasible d in a
    few max-flows (each step leaves a cut with fewer sink edges). The binding cut's parts are the
    bottleneck, with the count of targets behind it."""
    network = FlowNetwork(system, op)
    targets = system.storage_targets
    if not targets:
        return Bound(op, 0.0, ())
    graph, count = network.graph, len(targets)
    value, (reachable, _) = nx.minimum_cut(graph, SRC, SINK)
    share, binding = value / count, reachable
    for _ in range(4 * count + 4):  # each step cuts fewer sink edges: at most count + 1 steps
        for target in targets:
            graph[_out(target)][SINK]["capacity"] = share
        value, (reachable, _) = nx.minimum_cut(graph, SRC, SINK)
        if value >= count * share * (1 - 1e-12):
            break
        free = [t for t in targets if _out(t) in reachable]  # their sink edges are in the cut
        share = (value - len(free) * share) / (count - len(free))
        binding = reachable
    behind = count - sum(1 for t in targets if _out(t) in binding)
    replicas = _replicas(system, op)
    return Bound(op, count * share / replicas, _bottlenecks(network, binding), replicas, (behind, count))


def unreachable_targets(system: System) -> dict[str, list[str]]:
    """Each target some client cannot reach, with those clients in client order; empty when all connect."""
    network = FlowNetwork(system, "read")
    graph = network.graph
    targets = system.storage_targets + system.metadata_targets
    missing: dict[str, list[str]] = {}
    seen_sets: dict[frozenset[str], set] = {}
    for client, hcas in system.client_hcas.items():
        key = frozenset(system.hca_switch[h] for h in hcas)
        if key not in seen_sets:
            reach: set = set()
            for hca in hcas:
                reach |= nx.descendants(graph, _in(hca))
            seen_sets[key] = reach
        reach = seen_sets[key]
        for target in targets:
            if _in(target) not in reach:
                missing.setdefault(target, []).append(client)
    return missing
