"""The file-system settings a system runs with, each with where it comes from.

A topology may leave a setting out; the model then runs with a default, never silently: BeeGFS's
shipped configuration files (``conn_max_internode``, storage workers), BeeGFS's own rule (metadata
workers) or a model parameter (GPFS's NSD threads). This module owns those defaults, the BeeGFS
models read them here, and ``pfssim show`` prints every setting with its origin.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from sim.config.system import BeeGFSSpec, GpfsSpec
from sim.config.units import format_bytes
from sim.params import value
from sim.topology.model import Service, System

#: ``conn_max_internode`` keys a topology leaves out: the values the shipped ``beegfs-client.conf``
#: and ``beegfs-meta.conf`` set (research notes 1.7; the meta daemon's compiled default is 16, but
#: every installation has the conf file).
BEEGFS_CONN_DEFAULTS = {"client": 12, "meta": 32}
#: ``workers.storage`` left out: the shipped ``beegfs-storage.conf``'s ``tuneNumWorkers`` (research
#: notes 1.6).
BEEGFS_STORAGE_WORKERS_DEFAULT = 12

_CONF = "default: the shipped beegfs-{}.conf"


@dataclass(frozen=True)
class Setting:
    """One setting as the model runs it: ``key`` as the topology writes it under ``filesystem``,
    the value in SI (a number, text, or per service where services differ), how people read it,
    and ``origin``: ``topology``, or the default taken and why."""

    key: str
    value: object
    text: str
    origin: str


def service_zone(system: System, service: Service) -> str:
    """The NUMA zone a service runs in (its own, or its first HCA's), or its server without zones."""
    return service.zone or system.zone_of.get(service.hcas[0], service.server)


def memory_zone(system: System, service: Service, server_hca: str) -> str:
    """The zone whose memory a service's transfer by ``server_hca`` goes through: the service's own
    if it is pinned to one, else the HCA's (an unpinned daemon's buffers are taken as local to the
    port the data arrives by; taken as its first HCA's zone until session 33, the data of a path
    by a second zone's HCA crossed the UPI link there and back on its way to a disk of that zone)."""
    return service.zone or system.zone_of.get(server_hca, service.server)


def ranks_by_hcas(service_of: dict[str, Service]) -> dict[str, int]:
    """Each device's rank (in ``service_of``'s order) among the devices of services listening on
    the same HCAs: how paths resolved once per device are dealt those HCAs
    (:meth:`Platform.deal_server_hca`; several services may share a zone's HCAs)."""
    counts: dict[tuple[str, ...], int] = {}
    ranks: dict[str, int] = {}
    for device, service in service_of.items():
        ranks[device] = counts.get(service.hcas, 0)
        counts[service.hcas] = ranks[device] + 1
    return ranks


def service_cores(system: System, service: Service) -> tuple[str, ...]:
    """Where a service's threads run: its own zone if it is pinned to one (declared in a zone), else
    every zone of its server (a daemon not bound to a NUMA zone is scheduled on all the server's
    cores), or the server itself if it has no zones."""
    if service.zone:
        return (service.zone,)
    zones = tuple(z for z in system.graph.neighbors(service.server) if system.components[z].kind == "numa")
    return zones or (service_zone(system, service),)


def beegfs_meta_workers(system: System, service: Service) -> int:
    """A metadata service's workers: its own ``workers``, the topology's ``workers.meta``, or
    BeeGFS's own rule for ``tuneNumWorkers = 0``: twice the cores it runs on (its zone's if pinned,
    else its server's: :func:`service_cores`), at least 4 (research notes 1.4)."""
    fs = system.spec.filesystem
    assert isinstance(fs, BeeGFSSpec)
    if service.workers:
        return service.workers
    if "meta" in fs.workers:
        return fs.workers["meta"]
    return max(2 * sum(system.zone_cores.get(z, 2) for z in service_cores(system, service)), 4)


def beegfs_storage_workers(system: System, service: Service) -> int:
    """A storage target's workers: its service's own ``workers``, the topology's
    ``workers.storage``, or the shipped conf's 12."""
    fs = system.spec.filesystem
    assert isinstance(fs, BeeGFSSpec)
    return service.workers or fs.workers.get("storage", BEEGFS_STORAGE_WORKERS_DEFAULT)


def beegfs_conn_max(system: System, key: Literal["client", "meta"]) -> int:
    """``conn_max_internode.client`` or ``.meta``, or the shipped conf's value."""
    fs = system.spec.filesystem
    assert isinstance(fs, BeeGFSSpec)
    return fs.conn_max_internode.get(key, BEEGFS_CONN_DEFAULTS[key])


#: GPFS NSD thread counts a topology leaves out: (its ``nsd_threads`` key, the model parameter).
GPFS_NSD_THREADS = {"max_worker": "gpfs_nsd_threads", "per_queue": "gpfs_nsd_threads_per_queue"}


def gpfs_nsd_threads(fs: GpfsSpec, key: str) -> int:
    """``nsd_threads.max_worker`` or ``.per_queue`` of the topology, or its model parameter."""
    if fs.nsd_threads is not None:
        return int(getattr(fs.nsd_threads, key))
    return int(value(GPFS_NSD_THREADS[key]))


def _per_service(key: str, counts: dict[str, int], origin: str) -> Setting:
    """A count that may differ between services: one value when they agree."""
    distinct = sorted(set(counts.values()))
    if len(distinct) == 1:
        return Setting(key, distinct[0], str(distinct[0]), origin)
    text = ", ".join(f"{name} {n}" for name, n in counts.items())
    return Setting(key, dict(counts), text, origin)


def _beegfs(system: System, fs: BeeGFSSpec) -> list[Setting]:
    meta = [s for s in system.services.values() if s.kind == "beegfs-meta" and s.targets]
    storage = [s for s in system.services.values() if s.kind == "beegfs-storage"]
    settings = [
        Setting("chunk_size", fs.chunk_size, format_bytes(fs.chunk_size), "topology"),
        Setting(
            "num_targets",
            fs.num_targets,
            str(fs.num_targets),
            "topology"
            if fs.num_targets <= len(system.storage_targets)
            else f"topology; a file gets the {len(system.storage_targets)} targets there are",
        ),
        Setting("target_chooser", fs.target_chooser, fs.target_chooser, "topology"),
    ]
    rule = "default: BeeGFS's tuneNumWorkers = 0, twice the cores it runs on, at least 4"
    for role, services, default, count in (
        ("storage", storage, _CONF.format("storage"), beegfs_storage_workers),
        ("meta", meta, rule, beegfs_meta_workers),
    ):
        if not services:
            continue
        own = [s for s in services if s.workers]
        if len(own) == len(services) or role in fs.workers:
            origin = "topology"  # each service's own, else the file system's
        elif own:
            origin = f"topology for {', '.join(s.name for s in own)}; the others: {default}"
        else:
            origin = default
        settings.append(_per_service(f"workers.{role}", {s.name: count(system, s) for s in services}, origin))
    for key in ("client", "meta"):
        n = beegfs_conn_max(system, key)
        origin = "topology" if key in fs.conn_max_internode else _CONF.format(key)
        settings.append(Setting(f"conn_max_internode.{key}", n, str(n), origin))
    return settings


def _gpfs(fs: GpfsSpec) -> list[Setting]:
    def given(key: str) -> str:  # replicas left out are GPFS's own default, one copy
        return "topology" if key in fs.model_fields_set else "default: GPFS's, one copy (mmcrfs -r / -m 1)"

    settings = [
        Setting("block_size", fs.block_size, format_bytes(fs.block_size), "topology"),
        Setting("subblocks_per_block", fs.subblocks_per_block, str(fs.subblocks_per_block), "topology"),
        Setting("allocation", fs.allocation, fs.allocation, "topology"),
        Setting("inode_size", fs.inode_size, format_bytes(fs.inode_size), "topology"),
        Setting("data_replicas", fs.data_replicas, str(fs.data_replicas), given("data_replicas")),
        Setting("metadata_replicas", fs.metadata_replicas, str(fs.metadata_replicas), given("metadata_replicas")),
        Setting("pagepool.client", fs.pagepool.client, format_bytes(fs.pagepool.client), "topology"),
        Setting(
            "pagepool.server",
            fs.pagepool.server,
            format_bytes(fs.pagepool.server),
            "topology (checked against memory, not modelled)",
        ),
    ]
    for key, parameter in GPFS_NSD_THREADS.items():
        n = gpfs_nsd_threads(fs, key)
        origin = "topology" if fs.nsd_threads is not None else f"default: the model parameter {parameter}"
        settings.append(Setting(f"nsd_threads.{key}", n, str(n), origin))
    return settings


def filesystem_settings(system: System) -> list[Setting]:
    """Every setting of the system's file system the model uses, with its origin."""
    fs = system.spec.filesystem
    if isinstance(fs, BeeGFSSpec):
        return _beegfs(system, fs)
    return _gpfs(fs)
