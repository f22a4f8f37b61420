"""Build steps for file-system services: BeeGFS daemons and GPFS NSD servers, bound to targets and HCAs."""

from __future__ import annotations

import fnmatch

from sim.config.system import (
    BeeGFSSpec,
    GpfsSpec,
    ServiceSpec,
)
from sim.topology.build_base import _SERVICE_ROLE, _SERVICE_SHORT, BuilderBase, YamlPath, _Abort, listing
from sim.topology.model import Component, Service

# At most eight NSD servers in an NSD's server list (mmcrnsd, "servers=ServerList" of the NSD stanza:
# IBM Spectrum Scale 5.0.2 command reference, https://www.ibm.com/support/knowledgecenter/en/STXKQY_5.0.2/
# com.ibm.spectrum.scale.v5r02.doc/bl1adm_mmcrnsd.htm).
MAX_NSD_SERVERS = 8


class ServiceSteps(BuilderBase):
    """Services, their targets and the HCAs they listen on."""

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
        mgmt: list[tuple[str, YamlPath]] = []  # (server, declaration) of each management daemon
        for svc, server, zone, path, _ in self.pending_services:
            kinds_seen.add(svc.kind)
            if svc.kind == "beegfs-mgmt":
                mgmt.extend([(server, path)] * svc.count)
            role = _SERVICE_ROLE.get(svc.kind)
            if role is None and (svc.targets is not None or svc.workers is not None):
                extra = "targets" if svc.targets is not None else "workers"
                self.problem(
                    (*path, extra),
                    f"{svc.kind} has no {extra}: the management daemon keeps only the registry of nodes and "
                    "targets and is not on the I/O path; remove it",
                )
                continue
            if svc.targets is not None:
                unmatched = [
                    i
                    for i, pat in enumerate(svc.targets)
                    if not any(fnmatch.fnmatchcase(g, pat) for g in self.system.groups)
                ]
                for i in unmatched:  # a pattern that matches nothing is a typo even when another matches
                    self.problem((*path, "targets", i), f"no RAID group matches {svc.targets[i]!r}")
                if unmatched:
                    continue
                targets = [g for g in self.system.groups if any(fnmatch.fnmatchcase(g, pat) for pat in svc.targets)]
            elif role is not None and zone is not None:
                targets = [g.name for g in self.groups_in(zone) if g.role == role]
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
            self.check_local_targets(
                f"{svc.kind} on {server}",
                server,
                targets,
                (*path, "targets"),
                "a BeeGFS target is a directory on a block device of the server running the service",
            )
            if targets and len(targets) % svc.count:
                self.problem(
                    (*path, "count"), f"{len(targets)} targets cannot be dealt evenly over {svc.count} services"
                )
                continue
            if svc.kind == "beegfs-meta" and len(targets) != svc.count:
                # beegfs-meta.conf has one storeMetaDirectory: one metadata target per daemon.
                self.problem(
                    (*path, "count"),
                    f"{len(targets)} metadata targets for {svc.count} beegfs-meta service"
                    f"{'s' if svc.count > 1 else ''}: each metadata service has exactly one metadata target "
                    f"(storeMetaDirectory in beegfs-meta.conf); set count: {len(targets)}",
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
        self.check_one_management_service(mgmt)

    def check_one_management_service(self, mgmt: list[tuple[str, YamlPath]]) -> None:
        """A BeeGFS file system has exactly one management daemon (beegfs-mgmtd).

        Every other service and every client registers with it (sysMgmtdHost); a second one would be
        a second file system, and without one nothing can mount.
        """
        why = (
            "a BeeGFS file system has exactly one management daemon (beegfs-mgmtd), with which every "
            "metadata and storage service and every client registers"
        )
        if not mgmt:
            self.problem(("servers",), f"no beegfs-mgmt service is declared: {why}")
        elif len(mgmt) > 1:
            servers = list(dict.fromkeys(server for server, _ in mgmt))
            self.problem(
                mgmt[1][1],
                f"{len(mgmt)} beegfs-mgmt services are declared (on {listing(servers)}): {why}; keep one",
            )

    def check_local_targets(self, subject: str, server: str, targets: list[str], path: YamlPath, rule: str) -> None:
        """A service can only serve RAID groups of drives in its own server (or behind its SAS cables).

        A RAID group of a NUMA zone's NVMe or internal drives is a block device of that server alone:
        a BeeGFS service keeps its target in a local directory (storeStorageDirectory,
        storeMetaDirectory) and a GPFS NSD server needs local access to the disk it serves. Groups in
        ME4 enclosures are checked against the SAS cabling instead (check_service_cabling).
        """
        elsewhere: dict[str, list[str]] = {}
        for target in targets:
            group = self.system.groups[target]
            owner = self.zone_server.get(group.pool)
            if group.controller is None and owner is not None and owner != server:
                elsewhere.setdefault(owner, []).append(target)
        for owner, groups in elsewhere.items():
            what = f"RAID group {groups[0]}" if len(groups) == 1 else f"{len(groups)} RAID groups ({listing(groups)})"
            self.problem(
                path,
                f"{subject} serves {what} inside server {owner}, whose internal drives {server} cannot "
                f"reach ({rule}); serve {'it' if len(groups) == 1 else 'them'} from {owner}",
            )

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
            matches = [h] if h in all_hcas else [x for x in all_hcas if x.endswith("." + h)]
            if len(matches) > 1:  # hca0 of numa0 and of numa1: which one is not for pfssim to guess
                short = [x.removeprefix(server + ".") for x in matches]
                self.problem(
                    (*path, "interfaces", i),
                    f"{h!r} names several HCAs of server {server!r} ({', '.join(short)}); give one of these",
                )
                return None
            full = matches[0] if matches else None
            if full is None:
                # Named as they may be written: relative to the server (numa0.hca0), which a
                # template's servers share, where the full names differ from server to server.
                short = [x.removeprefix(server + ".") for x in all_hcas]
                who = self.named(path, f"server {server!r}", "a server of this template")
                full = self.named(path, server, "<server>")
                self.problem(
                    (*path, "interfaces", i),
                    f"{who} has no HCA {h!r} (its HCAs: {', '.join(short) or 'none'}; a name may "
                    f"also be given in full, {full}.<name>, or by its last part, such as hca0)",
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
        self.system.add_service(service)
        self.system.connect(service.zone or service.server, service.name)
        for target in service.targets:
            others = [s.name for s in self.system.services_of(target) if s.name != service.name]
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
            if len(nsd.servers) > MAX_NSD_SERVERS:
                self.problem(
                    (*path, "servers"),
                    f"{len(nsd.servers)} NSD servers listed, but GPFS takes at most {MAX_NSD_SERVERS} "
                    "per NSD (mmcrnsd servers=)",
                )
            for s, server in enumerate(nsd.servers):
                if server not in self.hcas_of_server:
                    self.problem((*path, "servers", s), f"unknown server {server!r}")
                elif server in nsd.servers[:s]:
                    self.problem(
                        (*path, "servers", s),
                        f"{server} is listed twice (first at servers[{nsd.servers.index(server)}]): an NSD's "
                        "server list names distinct servers, a primary and its backups (up to "
                        f"{MAX_NSD_SERVERS}); the same server twice is no backup",
                    )
            for server in dict.fromkeys(nsd.servers):
                if server in self.hcas_of_server:
                    self.check_local_targets(
                        f"NSD server {server}",
                        server,
                        luns,
                        (*path, "servers", nsd.servers.index(server)),
                        "an NSD server needs local access to the disks it serves",
                    )
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
                self.nsd_entry[lun] = n
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
        # Services were indexed in the order they were added (the first server's first): put each
        # LUN's own primary first, as services_of promises. (Before session 13 every LUN of an
        # entry went through its first listed server, and the others served nothing.)
        for lun, servers in served.items():
            index = self.system.service_index.get(lun)
            if index:
                rank = {f"{server}.nsd": r for r, server in enumerate(servers)}
                index.sort(key=lambda service: rank.get(service.name, len(rank)))
