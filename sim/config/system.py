"""Schema of a system (topology) file: servers, NUMA zones, devices, enclosures, network and file system.

Repetition is declared with ``count`` and names with an ``{i}`` placeholder (``storage{i}`` with
``count: 5, start: 1`` gives storage1..storage5). A server may take its body from a named template.
What the schema cannot check alone (part names, drive counts, cabling, reachability) is checked when
the system is built (:mod:`sim.topology.build`), with the same file/line/path messages.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field, ValidationInfo, field_validator, model_validator

from sim.config.quantities import (
    GPFS_BLOCK_SIZES,
    MAX_THREADS,
    ChunkSize,
    ComponentName,
    Index,
    Model,
    Name,
    PartCount,
    ReadAheadSetting,
    SingleComponentName,
    Size,
    Text,
)
from sim.config.units import binary_size_hint, format_bytes


def _integer_level(value: Any) -> Any:
    """A choice among integers is written as an integer: ``level: 1.0`` or ``true`` is refused, as
    every other count is (pydantic's literal check would take 1.0 and True for 1)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"write the RAID level as a whole number (0, 1, 5, 6 or 10), got {value!r}")
    return value


RaidLevel = Annotated[Literal[0, 1, 5, 6, 10], BeforeValidator(_integer_level)]


class PartRef(Model):
    """A reference to a catalogue part, with optional field overrides."""

    part: Text
    overrides: dict[str, Any] = {}


class DriveSet(PartRef):
    """``count`` identical drives."""

    count: PartCount


class HcaRef(PartRef):
    """An HCA and the switch (or switches, taken in turn by the entry's copies: a switch listed
    twice takes two turns) its port is cabled to."""

    name: ComponentName | None = None
    switch: Text | Annotated[list[Text], Field(min_length=1)]


class PcieSwitchRef(PartRef):
    """A PCIe switch in a NUMA zone and the drives behind it."""

    name: ComponentName | None = None
    drives: DriveSet | None = None


class HbaRef(PartRef):
    """A SAS HBA in a NUMA zone."""

    name: ComponentName | None = None


class RaidSpec(Model):
    """``count`` RAID groups of ``members`` drives taken from the pool they are declared in.

    Drives are taken in slot order; with ``interleave: k`` each block of ``k * members`` slots is
    dealt out to ``k`` groups in turn (ME4084 even/odd slots: ``interleave: 2``; ME4024 mirrors
    N and N+12: ``members: 2, interleave: 12``). ``drives`` lists slots explicitly instead.
    """

    name: ComponentName | None = None
    count: PartCount = 1
    level: RaidLevel
    members: PartCount
    stripe_unit: Size
    role: Literal["data", "metadata"] = "data"
    interleave: PartCount = 1
    drives: list[Index] | None = None
    owner: Literal["alternate", "A", "B"] = "alternate"
    # The local file system of a BeeGFS target (documentary: the model does not depend on it).
    filesystem: Literal["xfs", "ext4", "zfs", "btrfs"] | None = None

    @field_validator("stripe_unit")
    @classmethod
    def _stripe_unit(cls, size: float, info: ValidationInfo) -> float:
        # mdadm refuses a chunk below 4 KiB or not a whole number of KiB ("invalid chunk/rounding
        # value"); Linux md's RAID4/5/6 and RAID10 also need a power of two ("chunk size must be at
        # least PAGE_SIZE(4096) and be a power of 2"). A byte-sized unit would also split every
        # record into millions of pieces.
        level = info.data.get("level")
        if size < 4096 or size % 1024:
            raise ValueError(
                f"a stripe unit (RAID chunk) is a whole number of KiB and at least 4 KiB, as mdadm requires "
                f"('invalid chunk/rounding value'); got {format_bytes(size)}"
                f"{binary_size_hint(size, lambda binary: binary >= 4096)}"
            )
        if level in (5, 6, 10) and int(size) & (int(size) - 1):
            raise ValueError(
                f"RAID{level} needs a power-of-two stripe unit (the rule of Linux md, 'chunk size must be "
                f"at least PAGE_SIZE and be a power of 2', which pfssim applies to hardware RAID too); "
                f"got {size / 1024:g} KiB{binary_size_hint(size)}"
            )
        return size

    @model_validator(mode="after")
    def _level_and_members(self) -> RaidSpec:
        n = self.members
        rules = {
            0: (n >= 1, "RAID0 needs at least 1 member"),
            1: (n >= 2, "RAID1 needs at least 2 members"),
            5: (n >= 3, "RAID5 needs at least 3 members"),
            6: (n >= 4, "RAID6 needs at least 4 members (2 data + 2 parity)"),
            10: (n >= 4 and n % 2 == 0, "RAID10 needs an even number of members, at least 4"),
        }
        ok, message = rules[self.level]
        if not ok:
            raise ValueError(f"{message}, got members: {n}")
        if self.drives is not None:
            if self.count != 1:
                raise ValueError("explicit 'drives' describe one group; remove 'count'")
            if len(self.drives) != n:
                raise ValueError(f"'drives' lists {len(self.drives)} slots but members is {n}")
            if len(set(self.drives)) != len(self.drives):
                raise ValueError("'drives' lists a slot twice")
        return self


ServiceKind = Literal["beegfs-mgmt", "beegfs-meta", "beegfs-storage"]


class ServiceSpec(Model):
    """BeeGFS daemons running on a server or pinned to one NUMA zone.

    ``targets`` are glob patterns over dotted names; in a zone they default to the zone's RAID groups
    of the matching role, dealt out evenly over ``count`` services. ``interfaces`` says which HCAs the
    service is reachable through: ``zone`` (the zone's own, NUMA-pinned; the default in a zone),
    ``all`` (the default for a server-level service), or a list of HCA names. GPFS NSD servers are
    declared in the file system's ``nsds`` section instead.
    """

    kind: ServiceKind
    count: PartCount = 1
    targets: Annotated[list[Text], Field(min_length=1)] | None = None  # omit it, rather than give none
    interfaces: Literal["zone", "all"] | Annotated[list[Text], Field(min_length=1)] | None = None
    workers: PartCount | None = None


class NumaZone(Model):
    """One CPU socket's share of a server: its HCAs, PCIe switches, HBAs, drives and services."""

    count: PartCount = 1
    hcas: list[HcaRef] = []
    pcie_switches: list[PcieSwitchRef] = []
    drives: DriveSet | None = None
    hbas: list[HbaRef] = []
    raid_groups: list[RaidSpec] = []
    spares: Index = 0
    services: list[ServiceSpec] = []


class SasCabling(Model):
    """One HBA port of this server to each controller of each matching enclosure."""

    enclosures: Text
    ports_per_controller: PartCount = 1


class ServerBody(Model):
    """What a server is made of; shared by templates and server entries."""

    part: Text | None = None
    role: Text | None = None
    # A CPU part by name, or with overrides (``{part: xeon-gold-6148, overrides: {cores: 1}}``).
    cpu: Text | PartRef | None = None
    memory: Size | None = None
    numa: list[NumaZone] | None = None
    sas: list[SasCabling] | None = None
    services: list[ServiceSpec] | None = None


class ServerSpec(ServerBody):
    """``count`` servers named from ``name`` (``{i}`` runs from ``start``), optionally from a template."""

    name: ComponentName
    count: PartCount = 1
    start: Index = 0
    template: Text | None = None


class ClientSpec(Model):
    """``count`` identical client nodes; benchmark threads are placed round-robin over all groups."""

    name: ComponentName = "client{i}"
    count: PartCount = 1
    start: Index = 0
    part: Text
    cpu: Text | PartRef | None = None
    memory: Size | None = None
    cores: PartCount | None = None
    hcas: list[HcaRef] = Field(min_length=1)


class ExpansionSpec(PartRef):
    """An expansion enclosure (ME484) behind a controller enclosure's expansion ports."""

    name: ComponentName = "exp"
    drives: DriveSet
    raid_groups: list[RaidSpec] = []
    spares: Index = 0


class EnclosureSpec(PartRef):
    """``count`` controller enclosures (ME4084/ME4024) with their drives, virtual disks and spares."""

    name: ComponentName
    count: PartCount = 1
    start: Index = 0
    drives: DriveSet
    raid_groups: list[RaidSpec] = []
    spares: Index = 0
    expansion: ExpansionSpec | None = None
    # The controllers' read-ahead for the virtual disks (the ME4 volume setting; docs/design.md):
    # adaptive (the default) and stripe read one stripe ahead of a sequential stream, disabled
    # turns it off, a size reads that much ahead.
    read_ahead: ReadAheadSetting = "adaptive"


class SwitchSpec(PartRef):
    """A network switch of the fabric."""

    name: SingleComponentName


class InterSwitchLinks(Model):
    """``count`` links of one link type between two switches (an uplink bundle)."""

    between: list[Text] = Field(min_length=2, max_length=2)
    count: PartCount
    link: Text


class NetworkSpec(Model):
    """The fabric: non-blocking switches that HCAs are cabled to, and the links between switches."""

    switches: list[SwitchSpec] = Field(min_length=1)
    links: list[InterSwitchLinks] = []


class SourcedValue(Model):
    """A number with the document it comes from."""

    value: float = Field(gt=0, strict=True)
    source: Text


class Efficiency(SourcedValue):
    """The fraction of the raw capacity a file system makes usable, with its source."""

    value: float = Field(gt=0, le=1, strict=True)


class BeeGFSSpec(Model):
    """BeeGFS settings the model uses, with defaults documented in docs/design.md."""

    kind: Literal["beegfs"]
    version: Text | None = None
    chunk_size: ChunkSize
    num_targets: Annotated[int, Field(ge=1, le=256, strict=True)]  # DIRINODE_MAX_STRIPE_TARGETS
    target_chooser: Literal["randomized", "roundrobin", "randomrobin", "randominternode"]
    workers: dict[Literal["meta", "storage"], PartCount]
    conn_max_internode: dict[Literal["client", "meta", "storage"], PartCount]
    capacity_efficiency: Efficiency


class GpfsNsdSpec(Model):
    """Which LUNs are NSDs of which usage, and the servers that serve them (primary alternates)."""

    luns: Text
    usage: Literal["data", "metadata"]
    servers: list[Text] = Field(min_length=1)


#: The largest share of a node's real memory a GPFS pagepool can take: "The pagepool size may be too
#: large. It cannot be more than 80% of real memory" (IBM Storage Scale message 6027-329, "Cannot pin
#: the main shared segment"). Newer releases also cap it by pagepoolMaxPhysMemPct, whose default is
#: not in IBM's pages pfssim has; 80% is the documented hard limit.
GPFS_PAGEPOOL_MAX_SHARE = 0.8


def pagepool_too_large(size: float, memory: float) -> str | None:
    """Why a pagepool of ``size`` bytes cannot be pinned on a node of ``memory`` bytes (the end of
    the message that names them), or None when it can."""
    if size <= GPFS_PAGEPOOL_MAX_SHARE * memory:
        return None
    return (
        "GPFS pins the pagepool in memory, and it cannot be more than 80% of real memory "
        f"({GPFS_PAGEPOOL_MAX_SHARE * memory / 2**30:g} GiB here; IBM Storage Scale message 6027-329)"
    )


class PagepoolSpec(Model):
    """GPFS pagepool sizes on clients and NSD servers."""

    client: Size
    server: Size


class NsdThreadsSpec(Model):
    """An NSD server's worker threads (``mmchconfig nsdMaxWorkerThreads``) and the threads of each
    NSD queue (``nsdThreadsPerQueue``; each LUN is taken to have a queue of its own)."""

    max_worker: PartCount
    per_queue: PartCount

    @model_validator(mode="after")
    def _queue_within_workers(self) -> NsdThreadsSpec:
        if self.per_queue > self.max_worker:
            raise ValueError(
                f"per_queue ({self.per_queue}) is more than max_worker ({self.max_worker}): a queue's threads "
                "are some of the server's worker threads"
            )
        return self


class GpfsSpec(Model):
    """Spectrum Scale settings the model uses."""

    kind: Literal["gpfs"]
    version: Text | None = None
    block_size: Size
    subblocks_per_block: PartCount
    allocation: Literal["scattered", "cluster"]
    inode_size: Size
    metadata_replicas: Annotated[int, Field(ge=1, le=3, strict=True)] = 1  # "the maximum replication factor is 3"
    data_replicas: Annotated[int, Field(ge=1, le=3, strict=True)] = 1
    pagepool: PagepoolSpec
    # Left out: the model parameters gpfs_nsd_threads and gpfs_nsd_threads_per_queue (a public
    # Scale configuration's 1024 and 16; IBM's current defaults are not in the sources).
    nsd_threads: NsdThreadsSpec | None = None
    nsds: list[GpfsNsdSpec] = Field(min_length=1)
    capacity_efficiency: Efficiency

    @field_validator("block_size")
    @classmethod
    def _block_size(cls, size: float) -> float:
        if size not in GPFS_BLOCK_SIZES:
            raise ValueError(
                f"{format_bytes(size)} is not a block size mmcrfs accepts (64K, 128K, 256K, ... 16M: powers of two)"
                f"{binary_size_hint(size, lambda binary: binary in GPFS_BLOCK_SIZES)}"
            )
        return size

    @field_validator("subblocks_per_block")
    @classmethod
    def _subblocks(cls, count: int, info: ValidationInfo) -> int:
        # Scale chooses the subblock, not mmcrfs's user: 32 per block in a file system formatted
        # before 5.0, else the size its 5.x table gives the block (research notes 2.1). Any count
        # that divided the block was taken until session 33 (a 256 KiB block of 512-byte
        # subblocks, a GPFS specialist's review).
        block = info.data.get("block_size")
        if block is not None:
            modern = int(block // _gpfs5_subblock(block))
            if count not in (32, modern):
                if modern == 32:
                    said = f"32 subblocks of {format_bytes(block / 32)} in every Spectrum Scale version"
                else:
                    said = (
                        f"32 subblocks (file systems formatted before Spectrum Scale 5.0) or {modern} "
                        f"(5.0 and later, which choose {format_bytes(block / modern)} subblocks for it)"
                    )
                size = format_bytes(block)
                raise ValueError(f"{'an' if size.startswith('8') else 'a'} {size} block has {said}, not {count}")
        return count

    @field_validator("inode_size")
    @classmethod
    def _inode_size(cls, size: float) -> float:
        if size not in (512.0, 1024.0, 4096.0):
            raise ValueError(f"{format_bytes(size)}: mmcrfs -i takes 512, 1024 or 4096 bytes")
        return size


def _gpfs5_subblock(block: float) -> float:
    """The subblock Spectrum Scale 5.x chooses for a block size (mmcrfs -B; research notes 2.1: 64 KiB
    -> 2 KiB, 128 KiB -> 4 KiB, 256 KiB to 4 MiB -> 8 KiB, 8 and 16 MiB -> 16 KiB)."""
    if block <= 128 * 2**10:
        return block / 32
    return 8 * 2**10 if block <= 4 * 2**20 else 16 * 2**10


class SystemSpec(Model):
    """A whole storage installation as written in one topology file."""

    name: Name
    title: Text
    source: Text
    assumptions: list[Text] = []
    benchmarks: list[Text] = Field(min_length=1)

    @field_validator("benchmarks")
    @classmethod
    def _distinct_benchmarks(cls, names: list[str]) -> list[str]:
        twice = sorted({name for name in names if names.count(name) > 1})
        if twice:
            raise ValueError(f"listed twice: {', '.join(twice)}")
        return names

    parts: dict[str, dict[Name, dict[str, Any]]] = {}
    templates: dict[Name, ServerBody] = {}
    network: NetworkSpec
    clients: list[ClientSpec] = Field(min_length=1)

    @field_validator("clients")
    @classmethod
    def _client_total(cls, groups: list[ClientSpec]) -> list[ClientSpec]:
        total = sum(group.count for group in groups)
        if total > MAX_THREADS:
            raise ValueError(
                f"{total:,} clients in all; pfssim runs at most {MAX_THREADS:,} threads, one or more per "
                "client, so the rest could never be used"
            )
        return groups

    servers: list[ServerSpec] = Field(min_length=1)
    enclosures: list[EnclosureSpec] = []
    filesystem: BeeGFSSpec | GpfsSpec = Field(discriminator="kind")
