"""Schema of the parts catalogue (``topologies/parts/*.yaml``): datasheet values, each with its source.

A catalogue file maps a kind (``drives``, ``hcas``, ...) to part names and their fields. A system file
references parts by name and may override fields; :func:`part_with_overrides` re-validates the merged
fields so that an override obeys the same units and checks as the datasheet value it replaces.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import model_validator

from sim.config.quantities import (
    Bandwidth,
    ControllerCount,
    Duration,
    Frequency,
    Iops,
    Model,
    PartCount,
    Rotation,
    Size,
    Text,
)
from sim.config.units import Dimension, format_quantity
from sim.params import value as param_value


class Part(Model):
    """Fields every part carries: what it is and where its numbers come from.

    ``DOCUMENTARY`` names the fields a part records from its datasheet that no model reads (a
    link's signalling rate, a CPU's base clock): a topology's override of one is refused, as it
    would change nothing."""

    DOCUMENTARY: ClassVar[frozenset[str]] = frozenset()

    model: Text
    source: Text
    sources: dict[str, Text] = {}
    notes: str | None = None

    def documentary(self) -> dict[str, str]:
        """The fields of this part no model reads, each with why (what an override of it is told)."""
        return {
            field: "is recorded from the datasheet but no model reads it, so overriding it would change nothing; "
            "drop the override"
            for field in self.DOCUMENTARY
        }

    @model_validator(mode="after")
    def _sources_name_fields(self) -> Part:
        unknown = sorted(set(self.sources) - set(type(self).model_fields))
        if unknown:
            raise ValueError(f"'sources' names fields this part does not have: {', '.join(unknown)}")
        return self


class Interface(Model):
    """A host or device attachment: a bus generation and a lane count."""

    bus: Text
    lanes: PartCount

    @model_validator(mode="after")
    def _pcie_width(self) -> Interface:
        # PCIe link widths a card, slot or switch uplink comes in (x32 exists in the specification,
        # but no server slot offers it).
        if self.bus.startswith("pcie") and self.lanes not in (1, 2, 4, 8, 16):
            raise ValueError(f"a PCIe link is x1, x2, x4, x8 or x16, not x{self.lanes}")
        return self


class Bus(Part):
    """A serial bus generation; ``lane_rate`` is per lane and per direction."""

    lane_rate: Bandwidth


class Drive(Part):
    """A drive's datasheet figures. ``seq_*`` are outer-zone maxima for HDDs.

    SSDs may also give what their datasheets print beside the random figures: the access latency
    of sequential reads and writes (``seq_read_latency``, ``seq_write_latency``: the latency of an
    access that continues where the drive's previous one of its kind ended), and the bytes of
    power-protected write buffer that take writes across the drive's link at its read rate while
    the flash programs them at ``seq_write`` (``write_buffer``). A part that leaves them out is modelled
    without them: every access at the random latency, every write at ``seq_write``
    (``sim/devices/drives.py``).
    """

    DOCUMENTARY: ClassVar[frozenset[str]] = frozenset({"parallelism"})
    #: What the HDD model derives instead of reading: every access from seek, rotation and queueing.
    HDD_DERIVED: ClassVar[tuple[str, ...]] = ("rand_read_iops", "rand_write_iops", "read_latency", "write_latency")

    def documentary(self) -> dict[str, str]:
        unused = super().documentary()
        if self.kind == "nl_sas_hdd":
            for field in self.HDD_DERIVED:
                unused[field] = (
                    "is recorded from the datasheet, but an HDD's random IOPS and access times come from its "
                    "seek curve, rotation and command queueing, so overriding it would change nothing; override "
                    "avg_seek or rpm instead"
                )
        return unused

    kind: Literal["nvme", "sas_ssd", "nl_sas_hdd"]
    capacity: Size
    interface: Interface
    seq_read: Bandwidth
    seq_write: Bandwidth
    # An SSD's random rates and access latencies; an HDD may record its datasheet's, which no model
    # reads (HDD_DERIVED), and may leave them out.
    rand_read_iops: Iops | None = None
    rand_write_iops: Iops | None = None
    read_latency: Duration | None = None
    write_latency: Duration | None = None
    parallelism: PartCount | None = None
    rpm: Rotation | None = None
    avg_seek: Duration | None = None
    inner_seq_rate: Bandwidth | None = None
    seq_read_latency: Duration | None = None
    seq_write_latency: Duration | None = None
    write_buffer: Size | None = None

    @model_validator(mode="after")
    def _fields_of_its_kind(self) -> Drive:
        hdd_fields = ("rpm", "avg_seek", "inner_seq_rate")
        if self.kind == "nl_sas_hdd":
            missing = [f for f in hdd_fields if getattr(self, f) is None]
            if missing:
                raise ValueError(f"an HDD needs {', '.join(missing)}")
            track = param_value("hdd_track_to_track_seek_s")
            if self.avg_seek is not None and self.avg_seek <= track:
                raise ValueError(
                    f"avg_seek {self.avg_seek * 1e3:g} ms is not above the {track * 1e3:g} ms track-to-track seek "
                    "the seek curve starts from"
                )
            if self.inner_seq_rate is not None and self.inner_seq_rate > min(self.seq_read, self.seq_write):
                raise ValueError("inner_seq_rate is above the outer-zone rate (seq_read / seq_write)")
            ssd_fields = ("seq_read_latency", "seq_write_latency", "write_buffer")
            extra = [f for f in ssd_fields if getattr(self, f) is not None]
            if extra:
                verb = "applies" if len(extra) == 1 else "apply"
                raise ValueError(
                    f"{', '.join(extra)} {verb} to SSDs only: an HDD's access times come from its seek curve and "
                    "rotation"
                )
        else:
            extra = [f for f in hdd_fields if getattr(self, f) is not None]
            if extra:
                raise ValueError(f"{', '.join(extra)} apply to HDDs only, not to kind {self.kind!r}")
            missing = [f for f in self.HDD_DERIVED if getattr(self, f) is None]
            if missing:
                raise ValueError(f"an SSD needs {', '.join(missing)} (its datasheet's random figures)")
        for field, random in (("seq_read_latency", "read_latency"), ("seq_write_latency", "write_latency")):
            given = getattr(self, field)
            # An SSD gives the random latency (checked above); an HDD gives no sequential one.
            if given is not None and given > getattr(self, random):
                # A datasheet prints the sequential latency below the random one (the drive's read-ahead
                # or write buffer serves it); above it is a swapped pair.
                raise ValueError(
                    f"{field} {given * 1e6:g} us is above {random} {getattr(self, random) * 1e6:g} us; a sequential "
                    f"access is served at least as fast as a random one (are the two swapped? an override of "
                    f"{random} alone keeps the part's {field}: give both)"
                )
        if self.write_buffer is not None and self.write_buffer > self.capacity:
            raise ValueError(
                f"write_buffer {format_quantity(self.write_buffer, Dimension.SIZE)} is above the drive's capacity "
                f"({format_quantity(self.capacity, Dimension.SIZE)}): a drive buffers a few MiB of writes, not "
                "more than it holds"
            )
        return self


class Link(Part):
    """A network link type; ``rate`` is the per-direction data rate."""

    DOCUMENTARY: ClassVar[frozenset[str]] = frozenset({"signalling"})
    rate: Bandwidth
    signalling: Bandwidth | None = None

    @model_validator(mode="after")
    def _carries_no_more_than_it_signals(self) -> Link:
        if self.signalling is not None and self.rate > self.signalling * (1 + 1e-9):
            raise ValueError(
                f"rate {format_quantity(self.rate, Dimension.BANDWIDTH)} is above the signalling rate "
                f"{format_quantity(self.signalling, Dimension.BANDWIDTH)} ({self.signalling * 8 / 1e9:g} Gb/s): "
                "a link carries no more data than it signals"
            )
        return self


class Hca(Part):
    """A host channel adapter (InfiniBand NIC)."""

    link: Text
    ports: PartCount = 1
    host: Interface


class Switch(Part):
    """A non-blocking network switch."""

    ports: PartCount
    port_link: Text
    split_ports: PartCount | None = None
    split_link: Text | None = None

    @model_validator(mode="after")
    def _split(self) -> Switch:
        if (self.split_ports is None) != (self.split_link is None):
            raise ValueError("split_ports and split_link go together: the ports' count after splitting and their link")
        if self.split_ports is not None and (self.split_ports <= self.ports or self.split_ports % self.ports):
            raise ValueError(
                f"split_ports ({self.split_ports}) must be a multiple of ports ({self.ports}) above it: each port "
                "splits into the same number of slower ports"
            )
        return self


class PcieSwitch(Part):
    """A PCIe switch fanning one uplink out to device slots."""

    uplink: Interface
    downstream_ports: PartCount


class Hba(Part):
    """A SAS host bus adapter with external wide ports."""

    host: Interface
    ports: PartCount
    port_lanes: PartCount
    port_bus: Text


class Enclosure(Part):
    """A storage enclosure: a controller array (ME4084/ME4024) or an expansion (ME484)."""

    DOCUMENTARY: ClassVar[frozenset[str]] = frozenset({"expansion_ports_per_controller"})
    kind: Literal["controller", "expansion"]
    slots: PartCount
    controllers: ControllerCount | None = None
    host_ports_per_controller: PartCount | None = None
    host_port_lanes: PartCount | None = None
    host_port_bus: Text | None = None
    expansion_ports_per_controller: PartCount | None = None
    array_seq_read: Bandwidth | None = None
    array_seq_write: Bandwidth | None = None
    array_read_iops: Iops | None = None
    array_write_iops: Iops | None = None
    cache_per_controller: Size | None = None
    io_modules: PartCount | None = None

    @model_validator(mode="after")
    def _controller_fields(self) -> Enclosure:
        needed = (
            "controllers",
            "host_ports_per_controller",
            "host_port_lanes",
            "host_port_bus",
            "expansion_ports_per_controller",
            "array_seq_read",
            "array_seq_write",
            "array_read_iops",
            "array_write_iops",
        )
        if self.kind == "controller":
            missing = [f for f in needed if getattr(self, f) is None]
            if missing:
                raise ValueError(f"a controller enclosure needs {', '.join(missing)}")
            if self.io_modules is not None:
                raise ValueError("io_modules describe an expansion enclosure; a controller enclosure has controllers")
        else:
            if self.io_modules is None:
                raise ValueError("an expansion enclosure needs io_modules")
            extra = [f for f in (*needed, "cache_per_controller") if getattr(self, f) is not None]
            if extra:
                raise ValueError(
                    f"{', '.join(extra)} {'describe' if len(extra) > 1 else 'describes'} a controller enclosure; "
                    "an expansion enclosure has no "
                    "controllers (its drives are driven by the controllers it is cabled to)"
                )
        return self


class Cpu(Part):
    """A CPU socket: cores, inter-socket links and PCIe lanes."""

    DOCUMENTARY: ClassVar[frozenset[str]] = frozenset({"base_clock"})
    cores: PartCount
    base_clock: Frequency
    upi_links: PartCount
    upi_link_rate: Bandwidth
    pcie_bus: Text
    pcie_lanes: PartCount
    # The most sockets of one server this CPU can populate (Intel's "scalability", 2S, 4S or 8S): a
    # server whose NUMA zones, or a client whose chassis's sockets, outnumber it is refused.
    max_sockets: PartCount

    def too_many_sockets(self, sockets: int) -> str | None:
        """Why a server of ``sockets`` sockets cannot be built of this CPU (the end of the message
        that counts them), or None when it can."""
        if sockets <= self.max_sockets:
            return None
        return f"the {self.model} populates at most {self.max_sockets} sockets of a server (its max_sockets)"


class Server(Part):
    """A server chassis with its default CPU and memory (a system file may override both)."""

    sockets: PartCount
    cpu: Text
    memory: Size


#: Catalogue kinds and the schema of their parts, in the order references resolve.
PART_KINDS: dict[str, type[Part]] = {
    "buses": Bus,
    "drives": Drive,
    "links": Link,
    "hcas": Hca,
    "switches": Switch,
    "pcie_switches": PcieSwitch,
    "hbas": Hba,
    "enclosures": Enclosure,
    "cpus": Cpu,
    "servers": Server,
}

#: Which fields of a part name another part, and of which kind.
PART_REFERENCES: dict[str, list[tuple[tuple[str, ...], str]]] = {
    "drives": [(("interface", "bus"), "buses")],
    "hcas": [(("link",), "links"), (("host", "bus"), "buses")],
    "switches": [(("port_link",), "links"), (("split_link",), "links")],
    "pcie_switches": [(("uplink", "bus"), "buses")],
    "hbas": [(("host", "bus"), "buses"), (("port_bus",), "buses")],
    "enclosures": [(("host_port_bus",), "buses")],
    "cpus": [(("pcie_bus",), "buses")],
    "servers": [(("cpu",), "cpus")],
}


def merge_fields(base: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    """Deep-merge ``overrides`` into a copy of ``base`` (mappings merge, everything else replaces)."""
    merged = dict(base)
    for key, value in overrides.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = merge_fields(merged[key], value)
        else:
            merged[key] = value
    return merged
