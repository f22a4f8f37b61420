"""PowerVault ME4 controllers: command processing, data paths and the mirrored write-back cache.

A host command first takes the controller's command engine (1 / IOPS ceiling of one controller),
then its data path (bytes / the controller's share of the array's sequential rate). Reads then go
to the virtual disk. Writes are acknowledged from the write-back cache: a benchmark that moves
terabytes through a cache of a few GiB runs with the cache full, so a write is admitted only when
a destage frees space, and the long-run write rate is the rate at which destages drain it. While
destaging, the controller keeps every member drive's command queue full: the destages in flight
per virtual disk are ``hdd_ncq_depth`` x members / (drive commands per destage), e.g. 32 x 10 / 6
= 53 read-modify-writes of a 4 KiB write on RAID6 8+2, or 32 full-stripe writes.

The simulated cache starts full of writes shaped like the workload's (``prefill``); its size in
entries (``me4_cache_entries_per_vdisk``) changes the start-up transient, not the steady state.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from functools import partial

import simpy
from simpy.events import Event

from sim.devices.raid import RaidDevice
from sim.engine.core import Station, chain, on_done
from sim.params import value


class WriteBackCache:
    """One virtual disk's share of a controller's write cache."""

    def __init__(self, env: simpy.Environment, device: RaidDevice) -> None:
        self.env = env
        self.device = device
        self.entries = int(value("me4_cache_entries_per_vdisk"))
        self.destagers = 1
        self.dirty: deque[tuple[float, float]] = deque()
        self.waiting: deque[tuple[Event, float, float]] = deque()
        self.active = 0
        self.destaged_bytes = 0.0

    def prefill(self, sample: Callable[[], tuple[float, float]]) -> None:
        """Start full of writes drawn from ``sample`` (offset, size), as after a long write phase."""
        _, size = sample()
        commands = self.device.member_commands("write", size)
        self.destagers = max(1, round(value("hdd_ncq_depth") * len(self.device.members) / commands))
        self.entries = max(self.entries, 2 * self.destagers)
        while len(self.dirty) < self.entries:
            self.dirty.append(sample())
        self._kick()

    def write(self, offset: float, size: float) -> Event:
        """Admit a host write (now if there is room, else when a destage completes)."""
        done = Event(self.env)
        if len(self.dirty) + self.active < self.entries:
            self.dirty.append((offset, size))
            done.succeed()
            self._kick()
        else:
            self.waiting.append((done, offset, size))
        return done

    def _kick(self) -> None:
        while self.active < self.destagers and self.dirty:
            offset, size = self.dirty.popleft()
            self.active += 1
            on_done(self.device.io("write", offset, size), partial(self._destaged, size))

    def _destaged(self, size: float) -> None:
        self.active -= 1
        self.destaged_bytes += size
        if self.waiting:
            done, offset, size = self.waiting.popleft()
            self.dirty.append((offset, size))
            done.succeed()
        self._kick()


class Me4Controller:
    """One controller of an ME4 array: command engine, read and write data paths."""

    def __init__(
        self, env: simpy.Environment, name: str, read_Bps: float, write_Bps: float, read_iops: float, write_iops: float
    ) -> None:
        self.env = env
        self.name = name
        self.commands = Station(env, f"{name}.commands", 1)
        self.read_path = Station(env, f"{name}.read", 1)
        self.write_path = Station(env, f"{name}.write", 1)
        self.read_Bps = read_Bps
        self.write_Bps = write_Bps
        self.op_time = {"read": 1.0 / read_iops, "write": 1.0 / write_iops}
        self.caches: dict[str, WriteBackCache] = {}

    def attach(self, vdisk: str, device: RaidDevice) -> WriteBackCache:
        """Own a virtual disk (its cache share lives in this controller)."""
        cache = self.caches[vdisk] = WriteBackCache(self.env, device)
        return cache

    def io(self, vdisk: str, op: str, offset: float, size: float) -> Event:
        """A host command for one of this controller's virtual disks."""
        cache = self.caches[vdisk]
        command = self.commands.serve(self.op_time[op])
        if op == "write":
            transfer = chain(self.env, command, lambda: self.write_path.serve(size / self.write_Bps))
            return chain(self.env, transfer, lambda: cache.write(offset, size))
        media = chain(self.env, command, lambda: cache.device.io("read", offset, size))
        return chain(self.env, media, lambda: self.read_path.serve(size / self.read_Bps))

    @property
    def stations(self) -> list[Station]:
        """Stations whose utilisation is reported."""
        return [self.commands, self.read_path, self.write_path]
