"""PowerVault ME4 controllers: command processing, data paths and the mirrored write-back cache.

A host command first takes the controller's command engine (1 / IOPS ceiling of one controller).
A write then crosses the controller's write data path (bytes / the controller's share of the
array's sequential write rate) into the cache; a read goes to the virtual disk (or the read-ahead
data) and then crosses the read data path. Writes are acknowledged from the write-back cache: a
benchmark that moves terabytes through a cache of a few GiB runs with the cache full, so a write
is admitted only when a destage frees space, and the long-run write rate is the rate at which
destages drain it. While destaging, the controller keeps every member drive's command queue
full: the destages in flight per virtual disk are ``hdd_ncq_depth`` x members / (drive commands
per destage), e.g. 32 x 10 / 6 = 53 read-modify-writes of a 4 KiB write on RAID6 8+2, or 32
full-stripe writes.

Reads of a sequential stream are read ahead (:class:`ReadAhead`): two back-to-back reads at
consecutive addresses of a virtual disk start a stream, and the controller then keeps one stripe
(the ``read_ahead`` setting of the enclosure) read beyond the stream's latest host read.

The simulated cache starts full of writes shaped like the workload's (``prefill``), or at its flush
watermark (half) where the destage outruns the writes (SSD LUNs); its size in entries
(``me4_cache_entries_per_vdisk``, capped by the controller's cache share and at least twice the
destages in flight) is the destage sort window: it sets how short the
drives' seeks are, and with them the steady random-write rate. Writes of a sequential stream that
land in one stripe are merged while they wait, so small sequential writes destage as (nearly)
full stripes; on parity RAID a write that crosses a stripe boundary is split there, each piece
joining its own stripe's dirty data, so records that do not divide the stripe gather too.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections import OrderedDict, deque
from collections.abc import Callable
from functools import partial

import simpy
from simpy.events import Event

from sim.devices.raid import RaidDevice
from sim.engine.core import Station, TandemStation, chain, fire, join, succeed_in
from sim.params import value


class WriteBackCache:
    """One virtual disk's share of a controller's write cache.

    Dirty data is held per stripe: a write that falls inside a stripe that already has dirty data
    waiting (not being destaged yet) joins it and takes no new entry, as a controller cache
    gathers the small writes of a sequential stream into their stripe. A destage writes the span
    of the stripe's dirty data: a full stripe without reading, a part of one by read-modify-write.
    Random small writes over a large LUN almost never meet a dirty stripe, so they destage one by
    one. Only the part of the cache above half full is destaged (the flush watermark), and the
    destages sweep the virtual disk in address order (an elevator over the dirty data), as a
    controller orders its flushes to keep the drives' seeks short.

    On parity RAID a write that crosses a stripe boundary is split there (:meth:`_pieces`): its
    part in its first stripe, the whole stripes it covers (one piece, as a stripe-aligned write of
    several whole stripes is), and its part in its last stripe. Each piece joins the waiting
    entry of its stripe or starts one, so a sequential stream whose records do not divide the
    stripe (1 MiB records on a 9+1 RAID5 with 512 KiB chunks, 4.5 MiB stripes) still completes
    whole stripes. Every piece that starts an entry takes one of the cache's entries (an entry is
    one destage, and the pieces destage separately), at most three for one write; the write is
    admitted, and acknowledged, as a whole once there is room for all of them. Other RAID levels
    have no read-modify-write to avoid and keep a crossing write whole, in an entry of its own.
    """

    def __init__(self, env: simpy.Environment, device: RaidDevice, controller: Me4Controller | None = None) -> None:
        self.env = env
        self.device = device
        self.controller = controller
        self.entries = int(value("me4_cache_entries_per_vdisk"))
        self.destagers = 1
        self.width = device.data * device.su  # bytes of data in one stripe
        self.span = device.capacity  # the elevator's pass: the virtual disk's address space
        self.order: list[tuple[float, int]] = []  # (start, entry id) of the waiting entries, by address
        # Parity RAID only: entries that hold a whole stripe, by address. They destage first, so a
        # sequential stream's newest stripe, still filling, is not written by read-modify-write.
        self.full: list[tuple[float, int]] = []
        self.coalesce = device.parity > 0
        self.extent: dict[int, list[float]] = {}  # entry id -> [start, end) on the virtual disk
        self.open: dict[int, int] = {}  # stripe -> its newest entry still waiting in the cache
        # Writes waiting for room: (done, the write's pieces, not before).
        self.waiting: deque[tuple[Event, list[tuple[float, float]], float]] = deque()
        self.active = 0
        self.sweep = 0.0  # where the elevator is
        self.destaged_bytes = 0.0
        self.merged = 0
        self.waits = 0  # host writes that found the cache full and waited for a destage
        self.entry_writes = 0  # host writes that needed entries of their own (only those can wait)
        self.destages = 0  # destages completed
        # Entries a full swept start put in the cache: its start is a guess until the destages have
        # written that many (one turnover), see :meth:`turned_over`.
        self.swept_start = 0
        self._ids = 0

    def prefill(self, sample: Callable[[], tuple[float, float]], fill: float = 1.0, swept: bool = False) -> None:
        """Start holding writes drawn from ``sample`` (offset, size), as after a long write phase:
        full (``fill`` 1) under a workload that saturates the destage, at the flush watermark
        (``fill`` 0.5) under one that does not.

        ``swept``: the writes arrive anywhere (random I/O), and the cache holds them as its
        elevator leaves them. The destages sweep up the disk and wrap round, so a write waits until
        the sweep next reaches it: one a fraction x of a pass ahead of the sweep arrived at most
        (1 - x) of a pass ago, and the held writes thin out linearly from just ahead of the sweep
        (density 2 (1 - x)) to just behind it. Of two draws, the one nearer ahead of the sweep has
        exactly that density. The sweep starts at a drawn write's place. A uniform start made the
        first destages seek further than the steady state's, and the rate rose over a pass of the
        elevator, longer than a point runs: pixstor-large's random writes at 8 threads gave 12.2K
        IOPS (seeds 1-8, sd 1.6%, each with a +-2% interval) where runs of 5 s of simulated time
        give 12.9K (seeds 1, 2, 3, 7: within 0.5%). From this start they gave 13.2K (sd 0.9%), still
        2% above the long runs. Half of that was the first destages taking the entries nearest
        ahead of the sweep, which cut the front off the pass (:meth:`_behind` holds them behind it
        instead, unless whole stripes wait, which destage first: 13.06K, seeds 1-8, sd 0.6%). The
        other half is the load: the writes waiting for room spread unevenly over the caches, so
        that about a third of the caches (11 of pixstor-large's 32) run a little below full at any
        moment (98.5% full on average), a state a start with every cache full reaches only over
        about a second of simulated time.
        So a full swept start counts its entries (``swept_start``), and the point's warm-up runs
        on until the cache has destaged that many (:meth:`turned_over`; 12.96K, the intervals of
        19 seeds in 20 holding the long runs' 12.92K): docs/design.md, Measurement.
        """
        phase, size = sample()
        commands = self.device.member_commands("write", size)
        self.destagers = max(1, round(value("hdd_ncq_depth") * len(self.device.members) / commands))
        # As many entries as the sort window, or as the cache holds writes of this size if fewer.
        room = self.controller.dirty_bytes_per_vdisk() if self.controller is not None else None
        if room is not None:
            self.entries = min(self.entries, max(int(room // size), 1))
        self.entries = max(self.entries, 2 * self.destagers)
        target = round(self.entries * fill)
        # A full swept start holds its destages in flight apart (see below).
        in_flight = self.destagers if swept and fill >= 1.0 else 0
        self._ahead(sample, phase, target - in_flight, swept)
        sweep = phase
        if in_flight and not self.full:
            sweep = self._behind(sample, phase, target)
        elif in_flight:
            # Whole stripes destage first, from the sweep on, whatever lies behind it: the rest is
            # drawn ahead, and the first destages take the nearest entries ahead (the old start).
            self._ahead(sample, phase, target, swept)
        self.order.sort()  # appended unordered (one sort instead of an insertion each)
        self.full.sort()
        if swept:
            self.sweep = sweep
            if fill >= 1.0:
                self.swept_start = self.held
        self._kick()

    def _ahead(self, sample: Callable[[], tuple[float, float]], phase: float, target: int, swept: bool) -> None:
        """Draw writes until the cache holds ``target`` entries: as they come, or ``swept``, of two
        draws the one nearer ahead of ``phase`` (density 2 (1 - x) a fraction x of a pass ahead)."""
        draws = 0
        # Draws that merge into held entries add none; a sampler with few distinct places (a target
        # that no file of the workload uses) must not spin forever.
        while self.held < target and draws < 8 * target + 8:
            draws += 1
            offset, size = sample()
            if swept:
                other, other_size = sample()
                if (other - phase) % self.span < (offset - phase) % self.span:
                    offset, size = other, other_size
            self._store(self._pieces(offset, size), ordered=False)

    def _behind(self, sample: Callable[[], tuple[float, float]], phase: float, target: int) -> float:
        """Fill the cache up to ``target`` entries with writes just behind the sweep at ``phase``,
        for the first destages to take, and return where the sweep must start for them to be
        taken first.

        Under a saturating load the destages in flight are the last entries the sweep passed: the
        held entries ahead of it thin out linearly over a whole pass, down to none just behind it,
        while those in flight lie just behind it. Drawing all the cache's entries ahead and letting
        the first destages take the nearest ones cut the front off that pass, and left the held
        entries denser ahead of the sweep than a long run leaves them. Held entries lie just ahead
        with density 2 per pass (per entry held), so the d destages in flight span d / (2 x held)
        of a pass: of 2 x held draws, the d nearest behind ``phase`` fall there. They are stored
        nearest first until the cache is full (a write cut at stripe boundaries may add several
        entries, one that joins a waiting entry none), and the sweep starts at the farthest one
        that added an entry. The first destages take about those: the few held entries of the
        linear density's tail that lie between that place and ``phase`` are taken in place of as
        many of them (about d^2 / (4 x held): two of 53 for a 4 KiB write on RAID6 8+2), which
        then wait just ahead of the sweep, as such entries do in a long run."""
        span = self.span
        draws = [sample() for _ in range(max(2 * self.held, target - self.held))]
        draws.sort(key=lambda draw: (phase - draw[0]) % span)
        sweep = phase
        for offset, size in draws:
            if self.held >= target:
                break
            before = self.held
            self._store(self._pieces(offset, size), ordered=False)
            if self.held > before:
                sweep = offset
        return sweep

    def turned_over(self) -> bool:
        """Whether a full swept start no longer shapes the cache (True for any other start).

        Either the cache has destaged as many entries as that start put in it, about half a pass
        of its elevator (a pass destages about twice what the cache holds, the held entries
        thinning out linearly ahead of the sweep), after which about a sixth of what it holds is
        still the start's, the sparse far half of that pass (docs/design.md, Measurement); or
        it has drained to its flush watermark with nothing in flight and no write waiting, which a
        cache the load keeps full never does: the load does not saturate it (or does not write to
        it at all, such as a GPFS NSD no block of a small file reaches), and it destages only what
        arrives, as from a start at the watermark."""
        if self.destages >= self.swept_start:
            return True
        return self.held <= self.entries // 2 and not self.active and not self.waiting

    def _pieces(self, offset: float, size: float) -> list[tuple[float, float]]:
        """A write as the cache holds it: on parity RAID split at stripe boundaries into its part
        of its first stripe, the whole stripes it covers (one piece) and its part of its last
        stripe (each present only if not empty); whole otherwise, or within one stripe."""
        width = self.width
        first = offset // width
        end = offset + size
        if not self.coalesce or end <= (first + 1) * width + 1e-9:
            return [(offset, size)]
        pieces: list[tuple[float, float]] = []
        start = offset
        if offset - first * width > 1e-6:  # starts inside a stripe: its part of that stripe
            start = (first + 1) * width
            pieces.append((offset, start - offset))
        last = (end // width) * width  # where the last, partly covered stripe starts
        if last - start > 1e-6:
            pieces.append((start, last - start))
        else:
            last = start
        if end - last > 1e-6:
            pieces.append((last, end - last))
        return pieces

    def _new_entries(self, pieces: list[tuple[float, float]]) -> int:
        """Entries a write's pieces would add: those that join no waiting entry. Never more than
        the flush watermark leaves free (half the cache), or a write could wait for room forever."""
        new = 0
        for offset, size in pieces:  # a piece in a stripe with an entry still waiting takes none
            stripe = self._stripe_of(offset, size)
            if stripe is None or stripe not in self.open:
                new += 1
        return min(new, self.entries - self.entries // 2)

    def _store(self, pieces: list[tuple[float, float]], ordered: bool = True) -> None:
        """Hold a write's pieces: each joins its stripe's waiting entry or takes an entry."""
        for offset, size in pieces:
            if not self._merge(offset, size):
                self._append(offset, size, ordered)

    def _stripe_of(self, offset: float, size: float) -> int | None:
        """The stripe a write lies in, or None when it crosses a stripe boundary."""
        stripe = int(offset // self.width)
        return stripe if offset + size <= (stripe + 1) * self.width + 1e-9 else None

    def _whole(self, offset: float, size: float) -> bool:
        """Whether [offset, offset + size) is one or more whole stripes (written without reading)."""
        stripes = size / self.width
        return stripes >= 1 - 1e-9 and abs(stripes - round(stripes)) < 1e-9 and offset % self.width < 1e-6

    @property
    def held(self) -> int:
        """Dirty entries waiting in the cache (partial and whole stripes)."""
        return len(self.order) + len(self.full)

    def _merge(self, offset: float, size: float) -> bool:
        stripe = self._stripe_of(offset, size)
        if stripe is None:
            return False
        entry = self.open.get(stripe)
        if entry is None:
            return False
        span = self.extent[entry]
        if offset < span[0]:
            # The entry's start moves: keep the address order right.
            self._unlist(self.order, span[0], entry)
            insort(self.order, (offset, entry))
            span[0] = offset
        span[1] = max(span[1], offset + size)
        self.merged += 1
        if self.coalesce and self._whole(span[0], span[1] - span[0]):
            # The stripe is whole: it takes no more writes and is first in line for a destage.
            self._unlist(self.order, span[0], entry)
            insort(self.full, (span[0], entry))
            del self.open[stripe]
        return True

    @staticmethod
    def _unlist(order: list[tuple[float, int]], start: float, entry: int) -> None:
        """Take (start, entry) out of an address-sorted list, found by bisection (by a scan while
        ``prefill`` appends unsorted)."""
        index = bisect_left(order, (start, entry))
        if index < len(order) and order[index] == (start, entry):
            del order[index]
        else:
            order.remove((start, entry))

    def _append(self, offset: float, size: float, ordered: bool = True) -> None:
        self._ids += 1
        entry = self._ids
        self.extent[entry] = [offset, offset + size]
        stripe = self._stripe_of(offset, size)
        whole = self.coalesce and self._whole(offset, size)
        queue = self.full if whole else self.order
        if ordered:
            insort(queue, (offset, entry))
        else:
            queue.append((offset, entry))
        if stripe is not None and not whole:
            self.open[stripe] = entry

    def write(self, offset: float, size: float) -> Event:
        """Admit a host write (now if it merges or there is room, else when a destage completes)."""
        done = Event(self.env)
        self.admit(offset, size, done)
        return done

    def admit(self, offset: float, size: float, done: Event, not_before: float = 0.0) -> None:
        """``write``, triggering the caller's ``done`` when the write is in the cache, or at
        ``not_before`` if that is later (the host side of the transfer still running). A write
        that only joins waiting entries is admitted at once; one that adds entries needs room for
        all of them, and waits behind the writes already waiting."""
        pieces = self._pieces(offset, size)
        new = self._new_entries(pieces)
        if new == 0:
            self._store(pieces)
            self._fire(done, not_before)
            return
        self.entry_writes += 1
        if not self.waiting and len(self.order) + len(self.full) + self.active + new <= self.entries:
            self._store(pieces)
            self._kick()
            self._fire(done, not_before)
        else:
            self.waits += 1
            self.waiting.append((done, pieces, not_before))

    def _fire(self, done: Event, not_before: float) -> None:
        """The write is in the cache: its waiter goes on now (:func:`fire`), or at ``not_before``.
        Callers store the write and start the destages it allows first, so that a waiter that
        goes on to write again finds the cache settled."""
        now = self.env.now
        if not_before > now:
            succeed_in(self.env, done, not_before - now)
        else:
            fire(done)

    def drop(self) -> None:
        """Forget the held and waiting writes (a finished run; ``Platform.drop``)."""
        self.order.clear()
        self.full.clear()
        self.extent.clear()
        self.open.clear()
        self.waiting.clear()

    def _kick(self) -> None:
        # Destage only the part of the cache above half full: the rest stays dirty (a controller
        # flushes above a watermark), which is where consecutive writes meet and merge.
        while self.active < self.destagers and len(self.order) + len(self.full) > self.entries // 2:
            order = self.full or self.order  # whole stripes first (parity RAID)
            index = bisect_left(order, (self.sweep, -1))
            if index == len(order):
                index = 0  # the elevator returns to the start of the disk
            start, entry = order.pop(index)
            self.sweep = start
            end = self.extent.pop(entry)[1]
            stripe = self._stripe_of(start, end - start)
            if stripe is not None and self.open.get(stripe) == entry:
                del self.open[stripe]
            self.active += 1
            self.device.write_then(start, end - start, partial(self._destaged, end - start))

    def _destaged(self, size: float) -> None:
        self.active -= 1
        self.destages += 1
        self.destaged_bytes += size
        admitted = []
        while self.waiting:
            done, pieces, not_before = self.waiting[0]
            # In arrival order, each when there is room for one entry and for all it adds.
            if len(self.order) + len(self.full) + self.active + max(self._new_entries(pieces), 1) > self.entries:
                break
            self.waiting.popleft()
            self._store(pieces)
            admitted.append((done, not_before))
        self._kick()
        for done, not_before in admitted:  # the cache is settled before its writers go on
            self._fire(done, not_before)


class _Stream:
    """A sequential read stream of one virtual disk: its fetches ahead of the host, in address order."""

    __slots__ = ("top", "fetches")

    def __init__(self, top: float) -> None:
        self.top = top  # end of the data read or being read ahead
        # (start, end, done) not yet read by the host; done is None for data already in the cache
        self.fetches: deque[tuple[float, float, Event | None]] = deque()


class ReadAhead:
    """One virtual disk's read-ahead in its controller's cache.

    A read that starts where a recent read of the virtual disk ended is the second of two
    back-to-back accesses to consecutive addresses, the trigger the ME4's firmware family documents;
    it starts a stream. From then on, after each host read of the stream the controller keeps at
    least ``ahead`` bytes beyond it read or being read, fetching up to stripe boundaries (so a
    one-stripe read-ahead reads whole stripes, each member drive one chunk). A host read within
    fetched data waits only for the fetch that carries it, if that is still in flight; then it takes
    the controller's data path as any read does. The data read ahead for all streams of the virtual
    disk may hold about ``budget`` bytes of the cache: a stream starts only while there is room for
    its read-ahead, so with more streams than room the others read without it (no stream's data is
    evicted before it is read: the adaptive setting adapts to the workload rather than thrash).

    Sources: the ME4 Administrator's Guide lists the read-ahead settings Adaptive (default), Stripe
    ("sets the read-ahead size to one stripe"), specific sizes and Disabled
    (https://www.manualshelf.com/manual/dell/emc-powervault-me412-expansion/administrator-guide-english/page-24.html);
    the trigger and the one-stripe default of the older firmware are from the HP 2300 MSA reference
    guide (http://www.manualshelf.com/manual/hp/hp-smart-array-532-controller/hp-storageworks-2300-modular-smart-array-reference-guide-500911-001-january-2009/page-22.html)
    and CLI guide (https://hp.manymanuals.cz/servers/modular-smart-array-500-starter-kit/users-guide-23154/81);
    half the cache for read-ahead from the HP 2000 CLI guide's "maximum" setting, "nearly half the
    memory for read-ahead cache" (http://www.manualowl.com/m/Hewlett-Packard/2000fc/Manual/217621?page=114).
    """

    # Lone reads remembered as possible stream starts: an implementation bound (a sweep has at
    # most a few hundred streams per virtual disk), not a model parameter. Streams themselves are
    # bounded by the budget, or by the same number when the part gives no cache size.
    _RECENT = 4096

    def __init__(self, device: RaidDevice, ahead: float, budget: float | None) -> None:
        self.device = device
        self.ahead = ahead
        self.width = device.data * device.su  # bytes of data in one stripe
        self.budget = budget
        self.recent: OrderedDict[float, None] = OrderedDict()  # where recent lone reads ended
        self.streams: OrderedDict[float, _Stream] = OrderedDict()  # by where the next read starts, LRU first
        self.held = 0.0  # bytes read ahead and not yet read by the host, over all streams
        self.hits = 0.0  # host bytes served from read-ahead

    def drop(self) -> None:
        """Forget the streams and recent reads (a finished run; ``Platform.drop``)."""
        self.streams.clear()
        self.recent.clear()

    def read(self, offset: float, size: float) -> Event:
        """A host read of [offset, offset + size): from the read-ahead data where it has it."""
        device = self.device
        end = offset + size
        stream = self.streams.pop(offset, None)
        if stream is None:
            if offset not in self.recent:
                self.recent[end] = None
                if len(self.recent) > self._RECENT:
                    self.recent.popitem(last=False)
                return device.io("read", offset, size)
            del self.recent[offset]
            if self.budget is not None and self.held + self.ahead > self.budget:
                self.recent[end] = None  # no room to read ahead for one more stream yet
                return device.io("read", offset, size)
            stream = _Stream(end)
            events = [device.io("read", offset, size)]
        else:
            events = []
            covered = min(end, stream.top)
            fetches = stream.fetches
            while fetches and fetches[0][0] < covered:
                start, stop, done = fetches[0]
                if done is not None and not done.processed:
                    events.append(done)
                if stop > end:
                    break
                fetches.popleft()
            self.held -= covered - offset
            self.hits += covered - offset
            if end > stream.top:
                events.append(device.io("read", stream.top, end - stream.top))
                stream.top = end
        self._fetch_ahead(stream, end)
        self.streams[end] = stream
        if len(self.streams) > self._RECENT:  # only without a cache size (no budget): keep memory bounded
            next_offset, dropped = self.streams.popitem(last=False)
            self.held -= dropped.top - next_offset
        if not events:
            done = Event(device.env)
            done.succeed()
            return done
        return join(device.env, events)

    def prestart(self, offset: float) -> bool:
        """Start a stream whose next host read begins at ``offset`` with its read-ahead already in
        the cache, as a stream is between two host reads in steady state; False when the budget
        has no room for it (the stream then starts, if ever, as a cold one does)."""
        if offset in self.streams:
            return True
        if self.budget is not None and self.held + self.ahead > self.budget:
            return False
        top = -(-(offset + self.ahead) // self.width) * self.width  # whole stripes, as _fetch_ahead reads
        stream = _Stream(top)
        stream.fetches.append((offset, top, None))
        self.held += top - offset
        self.streams[offset] = stream
        return True

    def _fetch_ahead(self, stream: _Stream, end: float) -> None:
        """Read whole stripes until ``ahead`` bytes beyond ``end`` are read or being read."""
        target = end + self.ahead
        width = self.width
        while stream.top < target:
            start = stream.top
            stop = (start // width + 1) * width
            stream.fetches.append((start, stop, self.device.io("read", start, stop - start)))
            stream.top = stop
            self.held += stop - start


class Me4Controller:
    """One controller of an ME4 array: command engine, read and write data paths."""

    def __init__(
        self,
        env: simpy.Environment,
        name: str,
        read_Bps: float,
        write_Bps: float,
        read_iops: float,
        write_iops: float,
        cache_bytes: float | None = None,
        read_ahead: str | float = "disabled",
    ) -> None:
        self.env = env
        self.name = name
        self.cache_bytes = cache_bytes
        self.read_ahead = read_ahead
        self.readers: dict[str, ReadAhead] = {}
        self.commands = Station(env, f"{name}.commands", 1)
        self.read_path = Station(env, f"{name}.read", 1)
        # Writes reach the write path only through the command engine (FCFS): a tandem pair.
        self.write_path = TandemStation(env, f"{name}.write")
        self.read_Bps = read_Bps
        self.write_Bps = write_Bps
        self.op_time = {"read": 1.0 / read_iops, "write": 1.0 / write_iops}
        self.caches: dict[str, WriteBackCache] = {}

    def attach(self, vdisk: str, device: RaidDevice) -> WriteBackCache:
        """Own a virtual disk (its cache share lives in this controller)."""
        cache = self.caches[vdisk] = WriteBackCache(self.env, device, self)
        if self.read_ahead != "disabled":
            ahead = device.data * device.su if self.read_ahead == "stripe" else float(self.read_ahead)
            self.readers[vdisk] = ReadAhead(device, ahead, None)
        # Read-ahead may use the half of the cache that does not hold mirrored writes, shared by the
        # virtual disks this controller owns.
        for reader in self.readers.values():
            reader.budget = self.cache_bytes / 2 / len(self.caches) if self.cache_bytes else None
        return cache

    def dirty_bytes_per_vdisk(self) -> float | None:
        """Write cache a virtual disk can fill: half the controller's cache (the other half mirrors
        the partner's writes) shared by the virtual disks it owns; None when the part gives no size."""
        if not self.cache_bytes or not self.caches:
            return None
        return self.cache_bytes / 2 / len(self.caches)

    def io(self, vdisk: str, op: str, offset: float, size: float, not_before: float = 0.0) -> Event:
        """A host command for one of this controller's virtual disks. A write's event fires no
        earlier than ``not_before`` (the end of the host's own transfer hops), which saves the
        caller a join; a read's ignores it."""
        cache = self.caches[vdisk]
        if op == "write":
            # Command, then the data into the cache: both finish times are known now (tandem FCFS
            # stations), so one timer takes the write to the cache's admission.
            commanded = self.commands.reserve(self.op_time[op])
            transferred = self.write_path.reserve_from(commanded, size / self.write_Bps)
            done = Event(self.env)
            timer = self.env.timeout(transferred - self.env.now)
            timer.callbacks.append(lambda _event: cache.admit(offset, size, done, not_before))
            return done
        command = self.commands.serve(self.op_time[op])
        reader = self.readers.get(vdisk)
        if reader is not None:
            media = chain(self.env, command, lambda: reader.read(offset, size))
        else:
            media = chain(self.env, command, lambda: cache.device.io("read", offset, size))
        return chain(self.env, media, lambda: self.read_path.serve(size / self.read_Bps))

    def drop(self) -> None:
        """Forget what the caches and read-ahead streams hold (a finished run; ``Platform.drop``)."""
        for cache in self.caches.values():
            cache.drop()
        for reader in self.readers.values():
            reader.drop()

    @property
    def stations(self) -> list[Station]:
        """Stations whose utilisation is reported."""
        return [self.commands, self.read_path, self.write_path]
