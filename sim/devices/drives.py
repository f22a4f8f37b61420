"""Drive models: NVMe/SAS SSDs (latency + throughput engine) and HDDs (seek, rotation, zones, NCQ).

Interface shared by all devices: ``io(op, offset, size) -> Event``, ``op`` in ('read', 'write'),
``offset`` and ``size`` in bytes of the device's own address space.

A drive behind a PCIe switch (software RAID on the server, no array controller) also moves every
byte of its own I/Os over the switch's uplink: ``path`` gives, per direction, the shared stations
each of its I/Os crosses (booked at submission, cut-through with the drive's own service). So a
RAID10 write crosses the uplink twice and a RAID6 read-modify-write's reads go up and its writes
come down, as md's member I/Os do, where a payload-only hop would carry each byte once.

SSD: an I/O waits its access latency (an infinite-server delay: the drive's internal parallelism)
and then occupies the drive's single throughput engine for max(size / sequential rate, 1 / IOPS)
(computed engine first, latency after, which gives the same completion times).
At queue depth 1 this gives latency + transfer; at high depth the sequential rate for large I/Os
and the datasheet IOPS for small ones, reached once depth >= IOPS x latency (Little's law).

HDD: one actuator serves one command at a time. With up to ``hdd_ncq_depth`` commands queued the
drive picks the one with the shortest access time (seek by distance, then rotational wait to the
sector's angle: a fixed pseudo-random function of the sector, plus the drive's own spindle phase,
see ``_sector_angle``). Seek time is t0 + b sqrt(d) over the stroke fraction d, with b chosen so that the
mean over random distances is the datasheet average seek. Transfer rate falls linearly from the
outer-zone rate of the command's direction (seq_read or seq_write, at address 0) to the one inner-zone
rate the datasheet gives. A command that starts where the previous one
ended pays no positioning. The drive sees the oldest ``hdd_ncq_depth`` commands (the rest wait in
arrival order); they are kept sorted by stroke position so that the search can start at the head
and stop as soon as the seek alone to the next nearest command exceeds the best access time found
(of 32 commands at random positions it looks at about 6; commands clustered in a few streams are
all within a short seek, and most of them get looked at). The scan runs for every command, so the
positions and angles it reads are arrays of doubles: compared as floats rather than as tuples,
and compact (a drive's queue is mostly out of the CPU caches when its next command starts).
"""

from __future__ import annotations

import math
from array import array
from bisect import bisect_left, bisect_right
from collections import deque
from heapq import heappush

import simpy
from simpy.events import NORMAL, PENDING, Event

from sim.config.parts import Drive
from sim.engine.core import Station, join
from sim.engine.rng import Stream
from sim.params import value

_MEAN_SQRT_DISTANCE = 8.0 / 15.0  # E[sqrt|U1 - U2|] for independent uniforms

#: A queued HDD command: (arrival number, its event, offset, size, outer-zone rate of its direction).
Command = tuple[int, Event, float, float, float]

#: Per direction ("read", "write"), the shared stations (with seconds per byte) that every I/O of a
#: drive crosses between the drive and the server's memory.
Path = dict[str, list[tuple[Station, float]]]


def book_path(stations: list[tuple[Station, float]], size: float, end: float) -> float:
    """Book ``size`` bytes on each of ``stations`` now (cut-through); the latest finish, and no
    earlier than ``end``."""
    for station, per_byte in stations:
        finish = station.reserve(size * per_byte)
        if finish > end:
            end = finish
    return end


_MASK64 = (1 << 64) - 1


def _sector_angle(sector: int) -> float:
    """Where a 4 KiB sector sits on its track, in turns from the index mark: a fixed function of
    the sector number, with no relation between different sectors (splitmix64's finaliser, a
    64-bit mix, scaled to [0, 1)).

    The same sector always comes round at the same moment, so a RAID read-modify-write that
    rewrites the sector it has just read waits a whole turn. Different sectors are unrelated,
    because where a file's blocks fall on the platters (zones, track skew, spare sectors) is not
    a model input; a function linear in the address put streams at exact strides at fixed angles
    to each other, and some numbers of streams then met much worse rotational waits than others.
    """
    z = (sector * 0x9E3779B97F4A7C15) & _MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
    return ((z ^ (z >> 31)) >> 11) * (1.0 / (1 << 53))


class SsdDrive:
    """NVMe or SAS SSD: one FIFO engine (bytes at the sequential rate, at least ``1 / IOPS`` a
    command) and a constant access latency.

    A part that prints sequential access latencies (``seq_read_latency``, ``seq_write_latency``)
    serves an access that continues where the drive's previous one of its kind ended at that
    latency (its read-ahead, or its write buffer, already holds the place) and others at the
    random latency; one stream per drive is recognised, so streams interleaved on a drive are
    random to it.

    A part with a ``write_buffer`` acknowledges a write once it is in the buffer: the data crosses
    the drive's link (a FIFO of its own) at the rate the drive moves data across it when it reads
    (``read_Bps``: its sequential read, capped by its link; no PCIe device moves data at the raw
    lane rate), while the flash programs it at ``seq_write`` behind, and a write waits only while
    the buffer is full: until the flash work queued ahead of it has fallen to what the buffer holds
    (``write_buffer / seq_write`` seconds of it). A lone write then runs at the read rate and a long
    run of writes at ``seq_write``: the 1.3 GB/s P4600 takes a 512 KiB write in 0.18 ms instead of
    0.42 ms (docs/design.md, Devices).
    """

    def __init__(self, env: simpy.Environment, name: str, part: Drive, read_Bps: float, write_Bps: float) -> None:
        self.env = env
        self.name = name
        self.engine = Station(env, name, 1)
        self.capacity = part.capacity
        # An SSD part gives all four (Drive's validator).
        assert part.read_latency is not None and part.write_latency is not None
        assert part.rand_read_iops is not None and part.rand_write_iops is not None
        self.latency = {"read": part.read_latency, "write": part.write_latency}
        # Sequential latencies where the part gives them (else the random one: no distinction).
        self.seq_latency = {
            "read": part.seq_read_latency if part.seq_read_latency is not None else part.read_latency,
            "write": part.seq_write_latency if part.seq_write_latency is not None else part.write_latency,
        }
        self.next_offset = {"read": -1.0, "write": -1.0}  # where each kind's previous access ended
        # The drive's rates as capped by its interface (the same figures the max-flow bound uses).
        self.rate = {"read": read_Bps, "write": write_Bps}
        self.op_time = {"read": 1.0 / part.rand_read_iops, "write": 1.0 / part.rand_write_iops}
        # The write buffer, as the seconds of flash work it holds, and the link writes cross into it.
        self.buffer_s = (part.write_buffer or 0.0) / write_Bps if write_Bps > 0 else 0.0
        self.link_free = 0.0  # when the link has carried the writes accepted so far
        # Since watch_buffer: writes, those that waited for room, those that found the flash idle.
        self.watch_buffer()
        self.bytes = {"read": 0.0, "write": 0.0}
        self.ops = 0
        self.path: Path | None = None

    def finish_time(self, op: str, offset: float, size: float) -> float:
        """When an I/O submitted now completes.

        The access latency is a constant delay of an infinite-server stage, so putting it after
        the engine instead of before changes no departure time distribution; it lets the whole
        I/O be computed at submission.
        """
        self.bytes[op] += size
        self.ops += 1
        service = size / self.rate[op]
        floor = self.op_time[op]
        if floor > service:  # max(transfer, 1 / IOPS), without the call
            service = floor
        engine = self.engine
        if op == "write" and self.buffer_s:
            # In the buffer once the link has carried it and the flash work ahead of it fits the buffer.
            now = self.env._now
            self.buffer_writes += 1
            if engine._free1 <= now:
                self.buffer_idles += 1
            end = engine.reserve(service)
            carried = (self.link_free if self.link_free > now else now) + size / self.rate["read"]
            self.link_free = carried
            if end - self.buffer_s > carried:
                self.buffer_waits += 1
                carried = end - self.buffer_s
            end = carried
        else:
            end = engine.reserve(service)
        continues = offset == self.next_offset[op]
        self.next_offset[op] = offset + size
        end += self.seq_latency[op] if continues else self.latency[op]
        if self.path is not None:
            return book_path(self.path[op], size, end)
        return end

    def watch_buffer(self) -> None:
        """Start looking for what says the write buffer has reached its long-run state
        (:meth:`buffer_settled`), forgetting what was seen before."""
        self.buffer_waits = self.buffer_idles = self.buffer_writes = 0

    def buffer_settled(self) -> bool:
        """Whether, since :meth:`watch_buffer`, the buffer is seen in the state a long run of the
        phase's writes keeps it in: a write waited for room (the writes outrun the flash, which
        keeps the buffer full), or a write found the flash idle (they do not, and it is empty
        between bursts); or no write came (a drive the phase does not write). A buffer starts
        empty, and a phase whose writes outrun the flash takes a buffer's worth of them at the
        link's rate first: a burst the measurement must not mistake for the steady state (a
        1 GiB buffer gave 3.9 GB/s with an interval of +-0.0% on a drive whose flash writes
        1.3 GB/s, session 30's review)."""
        return not self.buffer_writes or bool(self.buffer_waits or self.buffer_idles)

    def io(self, op: str, offset: float, size: float) -> Event:
        """Access latency and the throughput engine, as an event."""
        return self.env.timeout(self.finish_time(op, offset, size) - self.env.now)

    def drop(self) -> None:
        """Nothing to empty: an SSD keeps no queue of its own (see :meth:`HddDrive.drop`)."""

    @property
    def pending(self) -> float:
        """Seconds of work booked ahead (to pick the less loaded mirror)."""
        return self.engine.backlog

    @property
    def stations(self) -> list[Station]:
        """Stations whose utilisation is reported."""
        return [self.engine]


class HddDrive:
    """Nearline HDD with shortest-access-time-first command queueing."""

    def __init__(self, env: simpy.Environment, name: str, part: Drive, stream: Stream) -> None:
        assert part.rpm and part.avg_seek and part.inner_seq_rate
        self.env = env
        self.name = name
        self.stream = stream
        self.capacity = part.capacity
        self.revolution = 1.0 / part.rpm
        self.t0 = value("hdd_track_to_track_seek_s")
        self.seek_b = (part.avg_seek - self.t0) / _MEAN_SQRT_DISTANCE
        # Outer-zone media rate of each direction; the datasheet's one inner-zone rate ends both.
        self.outer = {"read": part.seq_read, "write": part.seq_write}
        self.inner = part.inner_seq_rate
        self.depth = int(value("hdd_ncq_depth"))
        # Spindles are not synchronised: each drive's platters turn with a phase of their own.
        self.phase = stream.uniform()
        # Commands the drive sees, sorted by (stroke position, arrival), in three parallel sequences:
        # positions and sector angles (what the scan reads) and (arrival, done, offset, size, outer-
        # zone rate of the command's direction).
        self.positions = array("d")
        self.angles = array("d")
        self.commands: list[Command] = []
        # Beyond the NCQ depth, in arrival order: (position, angle, command).
        self.waiting: deque[tuple[float, float, Command]] = deque()
        self.ops = 0
        self.busy = False
        self.head = 0.0  # stroke position 0 (outer) .. 1 (inner)
        self.next_offset = -1.0
        # A station is kept only for utilisation accounting (work = busy seconds).
        self.engine = Station(env, name, 1)
        self.bytes = {"read": 0.0, "write": 0.0}
        self.path: Path | None = None
        self._start_after = self._start_next  # one bound method for every command's event

    @property
    def pending(self) -> float:
        """Commands outstanding (to pick the less loaded mirror)."""
        return len(self.commands) + len(self.waiting) + int(self.busy)

    def seek(self, distance: float) -> float:
        """Seek time over a fraction of the stroke."""
        return 0.0 if distance <= 0 else self.t0 + self.seek_b * math.sqrt(distance)

    def rate_at(self, position: float, op: str = "read") -> float:
        """Media rate of ``op`` at a stroke position (zoned recording): from the direction's outer-
        zone rate at address 0 down to the inner-zone rate."""
        outer = self.outer[op]
        return outer - (outer - self.inner) * position

    def io(self, op: str, offset: float, size: float) -> Event:
        """Queue a command; it is served in shortest-access-time order."""
        self.bytes[op] += size
        self.ops += 1
        # Event(env), without the call: the command's event, whose first callback starts the next
        # command when it fires (set now, so that it runs before those its waiter adds).
        done = Event.__new__(Event)
        done.env = self.env
        done.callbacks = [self._start_after]
        done._value = PENDING
        position = offset / self.capacity
        # Clamped to the stroke [0, 1] (what min(max(.)) gives, without two calls per command).
        if position < 0.0:
            position = 0.0
        elif position > 1.0:
            position = 1.0
        angle = (_sector_angle(int(offset) >> 12) + self.phase) % 1.0
        command = (self.ops, done, offset, size, self.outer[op])
        if len(self.commands) < self.depth:
            self._admit(position, angle, command)
        else:
            self.waiting.append((position, angle, command))
        if not self.busy:
            self._start_next()
        if self.path is not None:
            now = self.env.now
            hops_end = book_path(self.path[op], size, now)
            if hops_end > now:
                return join(self.env, [done, self.env.timeout(hops_end - now)])
        return done

    def drop(self) -> None:
        """Forget the queued commands (a finished run; ``Platform.drop``)."""
        del self.positions[:], self.angles[:]
        self.commands.clear()
        self.waiting.clear()

    def _admit(self, position: float, angle: float, command: Command) -> None:
        """Make a command visible to the drive, in (position, arrival) order.

        Commands wait beyond the NCQ depth only while the drive's queue is full, so an admitted
        command arrived after every visible one: it goes after those at the same position
        (``bisect_right``), where sorting by (position, arrival) would put it."""
        index = bisect_right(self.positions, position)
        self.positions.insert(index, position)
        self.angles.insert(index, angle)
        self.commands.insert(index, command)

    def _start_next(self, _event: Event | None = None) -> None:
        """Start the visible command with the shortest access time (also run, first, by the event
        of the command that ends, hence the unused argument)."""
        positions = self.positions
        n = len(positions)
        if not n:
            self.busy = False
            return
        self.busy = True
        commands, angles = self.commands, self.angles
        now = self.env._now  # the ``now`` property's field, read directly on this hot path
        head = self.head
        revolution = self.revolution
        t0, b = self.t0, self.seek_b
        sqrt = math.sqrt
        inf = math.inf
        best_index, best_time = -1, inf
        # A command that continues where the head is needs no positioning and always wins; it sits
        # at the head's position (to rounding). ``hi`` is the first command at or above the head:
        # when no command is within rounding of the head (the usual case) it is the first one above
        # head - 1e-12, else it is searched for from there.
        j = hi = bisect_left(positions, head - 1e-12)
        if j < n and positions[j] <= head + 1e-12:
            next_offset = self.next_offset
            while j < n and positions[j] <= head + 1e-12:
                if commands[j][2] == next_offset:
                    best_index, best_time = j, 0.0
                    break
                j += 1
            hi = bisect_left(positions, head, hi)
        # Otherwise walk outward from the head, nearest command first (the one below on a tie),
        # until the seek alone loses. ``below`` and ``above`` are the distances to the next
        # command on each side (inf once that side is used up); the side gives the sign, so a
        # distance is one subtraction (the same float abs() would give).
        lo = hi - 1
        below = head - positions[lo] if lo >= 0 else inf
        above = positions[hi] - head if hi < n else inf
        while best_time > 0.0:
            if below <= above:
                if lo < 0:
                    break  # both sides used up
                index, distance = lo, below
                lo -= 1
                below = head - positions[lo] if lo >= 0 else inf
            else:
                index, distance = hi, above
                hi += 1
                above = positions[hi] - head if hi < n else inf
            seek = t0 + b * sqrt(distance) if distance > 0.0 else 0.0
            if seek >= best_time:
                break  # every command further out seeks longer still
            access = seek + ((angles[index] - (now + seek) / revolution) % 1.0) * revolution
            if access < best_time or (access == best_time and commands[index][0] < commands[best_index][0]):
                best_index, best_time = index, access
        position = positions.pop(best_index)
        del angles[best_index]
        _arrival, done, offset, size, outer = commands.pop(best_index)
        if self.waiting:
            self._admit(*self.waiting.popleft())
        service = best_time + size / (outer - (outer - self.inner) * position)
        head = position + size / self.capacity
        self.head = 1.0 if head > 1.0 else head  # min(head, 1.0), without the call
        self.next_offset = offset + size
        engine = self.engine
        engine.work += service
        engine.visits += 1
        engine._free1 = now + service  # lets the station account work done by now
        # The command's own event fires at its end and starts the next command first
        # (succeed_in without the call; its first callback was set in ``io``).
        done._ok = True
        done._value = None
        env = self.env
        heappush(env._queue, (now + service, NORMAL, next(env._eid), done))

    @property
    def stations(self) -> list[Station]:
        """Stations whose utilisation is reported."""
        return [self.engine]


def make_drive(
    env: simpy.Environment, name: str, part: Drive, stream: Stream, read_Bps: float, write_Bps: float
) -> SsdDrive | HddDrive:
    """The right model for a drive part; rates are the drive's as capped by its interface."""
    if part.kind == "nl_sas_hdd":
        return HddDrive(env, name, part, stream)
    return SsdDrive(env, name, part, read_Bps, write_Bps)
