"""Queueing stations on SimPy with as few events per visit as possible.

A :class:`Station` is an FCFS queue with ``servers`` identical servers whose finish times are
computed at arrival; a :class:`TandemStation` is one booked before the job arrives, from the FCFS
station that feeds it. A :class:`Pool` is a counting semaphore (worker threads, connections) that
can also take back a slot at a known later time without an event (``release_at``); it keeps its
occupancy (slot-seconds held) so that a full pool can be named as a bottleneck. ``succeed_in``,
``on_done``, ``chain`` and ``fire`` (process an event now) trigger and link events without processes.
:func:`join` waits for several events with a counter instead of SimPy's condition events. Busy time
is accumulated per station so that utilisation over a window is ``work / (window x servers)``.
:class:`Environment` is SimPy's with the event loop of ``run(until=event)`` written out in one
function (the same events, in the same order, without a method call per event).
:func:`collector_paused` keeps Python's cycle collector out of a simulation's run.
"""

from __future__ import annotations

import gc
import heapq
import math
from collections import deque
from collections.abc import Callable, Generator, Iterator, Sequence
from contextlib import contextmanager

import simpy
from simpy.core import EmptySchedule, StopSimulation
from simpy.events import NORMAL, URGENT, Event, EventPriority, Initialize, Process, Timeout


@contextmanager
def collector_paused() -> Iterator[None]:
    """Run the body without Python's cycle collector, then put it back as it was.

    A simulation allocates an event, a heap entry or a generator frame for nearly every step, and
    keeps thousands of them alive (one process per benchmark thread, their pending events), so
    the collector, triggered every 700 net allocations, walks the same live objects over and over:
    12-19% of a 1024-thread point's wall time (``gc.callbacks`` timing, beegfs-hdr100). Little of
    what a point leaves behind is cyclic (7,000 objects after a 1024-thread IOzone point; 250,000
    after beegfs-high-capacity's longest point, whose peak resident memory stayed at 151 MiB), and
    the collector frees it on its first pass after the body.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


#: A stop a signal asked for while an :class:`Environment` ran, raised when the run returns.
_held: list[BaseException] = []
_running = 0


def stop_when_safe(stop: BaseException) -> None:
    """Raise ``stop`` now or, while an :class:`Environment` runs, as soon as its ``run`` returns:
    what a signal handler calls instead of raising (Ctrl-C, a ``kill``).

    A signal handler runs between two bytecodes of whatever Python code is running, and its
    exception comes out there. Inside a run that is often a Python callback called from a device
    model compiled by mypyc, which does not expect an error at that point: the process aborted with
    mypyc's "fatal: out of memory" on about a third of the signals a newcomer's review sent to a
    one-worker run. A run returns after each batch of a point (a fraction of a second), so the stop
    waits at most that long."""
    if _running:
        if not _held:
            _held.append(stop)
        return
    raise stop


class Environment(simpy.Environment):
    """A SimPy environment whose ``run(until=event)`` processes events without calling ``step``.

    The loop is SimPy 4's ``run`` with ``step`` inlined, statement for statement: events are
    popped from the same heap in the same (time, priority, id) order, their callbacks run in the
    same order, and a stop at the ``until`` event leaves the same state (the event's remaining
    callbacks rescheduled urgently) for the next ``run``. Only the cost per event is less: the
    driver's points process millions of events, and a Python method call is a noticeable share
    of each. Other forms of ``until`` go to SimPy's own ``run``. ``timeout`` likewise builds
    SimPy's ``Timeout`` in one call instead of three.
    """

    def timeout(self, delay: float, value: object = None) -> Timeout:  # type: ignore[override]
        """A :class:`~simpy.events.Timeout` of ``delay`` seconds: the fields ``Timeout.__init__``
        sets and the entry ``schedule`` pushes (the next id), without the bound-class lookup and
        the two calls (most of the events of a point are timeouts)."""
        if delay < 0:
            raise ValueError(f"Negative delay {delay}")
        event = Timeout.__new__(Timeout)
        event.env = self
        event.callbacks = []
        event._value = value
        event._delay = delay
        event._ok = True
        heapq.heappush(self._queue, (self._now + delay, NORMAL, next(self._eid), event))
        return event

    def process(self, generator: Generator[Event, object, object]) -> Process:
        """SimPy's :class:`~simpy.events.Process` for ``generator``, built in one call: the fields
        ``Process.__init__`` and ``Initialize.__init__`` set and the urgent entry ``schedule``
        pushes for its start (the next id), without their calls and the generator check (a
        multi-piece call starts a process per piece, tens of thousands in a point)."""
        process = Process.__new__(Process)
        process.env = self
        process.callbacks = []
        process._generator = generator
        start = Initialize.__new__(Initialize)
        start.env = self
        start.callbacks = [process._resume]
        start._value = None
        start._ok = True
        heapq.heappush(self._queue, (self._now, URGENT, next(self._eid), start))
        process._target = start
        return process

    def drop(self) -> None:
        """Forget the events still scheduled (a finished run): the processes and requests they
        would resume are then freed by reference counting where they hold no cycle of their own."""
        self._queue.clear()

    def run(self, until: object = None) -> object:
        """Process events until ``until`` (an event) has been processed; return its value. A stop
        a signal asks for meanwhile (:func:`stop_when_safe`) is raised when the run ends."""
        global _running
        _running += 1
        try:
            return self._run(until)
        finally:
            _running -= 1
            if _held and not _running:
                raise _held.pop()

    def _run(self, until: object = None) -> object:
        if not isinstance(until, Event):
            return super().run(until)  # type: ignore[arg-type]
        if until.callbacks is None:
            return until.value
        until.callbacks.append(StopSimulation.callback)
        queue = self._queue
        pop = heapq.heappop
        try:
            while True:
                try:
                    self._now, _, _, event = pop(queue)
                except IndexError:
                    raise EmptySchedule from None
                callbacks, event.callbacks = event.callbacks, None  # type: ignore[assignment]
                try:
                    for callback in callbacks:
                        callback(event)
                except StopSimulation:
                    event.callbacks = callbacks[callbacks.index(callback) + 1 :]
                    self.schedule(event, EventPriority(-1))
                    raise
                if not event._ok and not hasattr(event, "_defused"):
                    exc = type(event._value)(*event._value.args)
                    exc.__cause__ = event._value
                    raise exc
        except StopSimulation as exc:
            return exc.args[0]
        except EmptySchedule:
            assert not until.triggered
            raise RuntimeError(f'No scheduled events left but "until" event was not triggered: {until}') from None


class Station:
    """FCFS queue with ``servers`` identical servers, computed at arrival (no events of its own).

    In an FCFS station jobs start in arrival order on the earliest-free server, so a job's finish
    time is known the moment it arrives: start = max(now, earliest free time), finish = start +
    service (Lindley's recursion; for c servers the earliest of c free times). ``reserve`` returns
    that finish time; ``serve`` returns a timeout to it. Exact for FCFS, and a visit costs no event
    unless the caller waits on it, so a transfer over several hops waits once, for the latest.
    """

    __slots__ = ("env", "name", "servers", "_free", "_free1", "work", "visits")

    def __init__(self, env: simpy.Environment, name: str, servers: int = 1) -> None:
        if servers < 1:
            raise ValueError(f"station {name} needs at least one server")
        self.env = env
        self.name = name
        self.servers = servers
        self._free1 = 0.0  # single-server fast path
        self._free = [0.0] * servers  # heap of free times for c > 1
        self.work = 0.0  # service seconds booked so far
        self.visits = 0

    def reserve(self, duration: float) -> float:
        """Book ``duration`` seconds on the earliest-free server; return when it will end."""
        now = self.env._now  # the ``now`` property's field: every transfer hop books here
        self.visits += 1
        self.work += duration
        if self.servers == 1:
            start = self._free1 if self._free1 > now else now
            self._free1 = start + duration
            return self._free1
        earliest = self._free[0]
        finish = (earliest if earliest > now else now) + duration
        heapq.heapreplace(self._free, finish)
        return finish

    def serve(self, duration: float) -> Event:
        """An event at the end of a service of ``duration`` seconds (after any queueing)."""
        return self.env.timeout(self.reserve(duration) - self.env._now)

    @property
    def free_at(self) -> float:
        """When the earliest server is free (now or later)."""
        t = self._free1 if self.servers == 1 else self._free[0]
        return max(t, self.env.now)

    def done_work(self) -> float:
        """Service seconds completed by now (booked work minus what is still ahead of the servers)."""
        now = self.env.now
        if self.servers == 1:
            return self.work - max(self._free1 - now, 0.0)
        return self.work - sum(f - now for f in self._free if f > now)

    @property
    def backlog(self) -> float:
        """Seconds of booked work not yet done on the earliest server."""
        return self.free_at - self.env.now


class StationGroup:
    """Several FCFS stations served as one: a job takes the earliest-free server of any of them.

    Lindley's recursion over the union of their servers, which is what one station with all of
    them would compute, while each member keeps its own busy time (so a report names the member).
    Of members with a server free now, the one with the least work booked so far takes the job,
    so that an idle group spreads its load instead of filling the first member."""

    __slots__ = ("members", "servers")

    def __init__(self, members: Sequence[Station]) -> None:
        self.members = tuple(members)
        self.servers = sum(m.servers for m in self.members)

    def _member(self) -> Station:
        # Every CPU visit of a request passes here: the earliest free time read from the fields
        # (not the ``free_at`` property), compared without building tuples.
        members = self.members
        best = members[0]
        now = best.env._now
        best_free = best._free1 if best.servers == 1 else best._free[0]
        if best_free < now:
            best_free = now
        for member in members[1:]:
            free = member._free1 if member.servers == 1 else member._free[0]
            if free < now:
                free = now
            if free < best_free or (free == best_free and member.work < best.work):
                best, best_free = member, free
        return best

    def reserve(self, duration: float) -> float:
        """Book ``duration`` seconds on the earliest-free server of the group; return when it ends."""
        return self._member().reserve(duration)

    def serve(self, duration: float) -> Event:
        """An event at the end of a service of ``duration`` seconds (after any queueing)."""
        return self._member().serve(duration)


class TandemStation(Station):
    """A single-server FCFS station fed only by another FCFS station, booked when a job enters the
    feeder (``reserve_from``), before it arrives here.

    The feeder finishes its jobs in the order they entered it, so they arrive here in booking
    order and Lindley's recursion holds with a future arrival: the finish computed at booking is
    exact, and a job crosses both stations on one event. The bookings not yet finished are kept
    so that ``done_work`` leaves out the idle time before a future arrival."""

    __slots__ = ("_ahead",)

    def __init__(self, env: simpy.Environment, name: str) -> None:
        super().__init__(env, name, 1)
        self._ahead: deque[tuple[float, float]] = deque()  # (start, finish) of bookings not done

    def reserve_from(self, arrival: float, duration: float) -> float:
        """Book ``duration`` seconds for a job arriving at ``arrival`` (now or later, and no earlier
        than the jobs booked before it); return when it will end."""
        now = self.env._now
        self.visits += 1
        self.work += duration
        start = self._free1 if self._free1 > arrival else arrival
        self._free1 = start + duration
        ahead = self._ahead
        while ahead and ahead[0][1] <= now:
            ahead.popleft()
        ahead.append((start, self._free1))
        return self._free1

    def reserve(self, duration: float) -> float:
        return self.reserve_from(self.env.now, duration)

    def done_work(self) -> float:
        now = self.env.now
        return self.work - sum(end - (start if start > now else now) for start, end in self._ahead if end > now)


class Pool:
    """A counting semaphore: ``acquire()`` returns None when a slot is free, else an event to wait on.

    It keeps its occupancy (slot-seconds held, ``done_work``) and the slots taken (``visits``) the
    way a :class:`Station` keeps busy time, so that a full pool of workers or connections can be
    named when it, rather than a device, holds the rate.

    ``release_at(t)`` gives a slot back at a known later time without an event of its own: the
    release is applied when the pool is next looked at (at or after ``t``, as if it had happened
    at ``t``), and a timer is set only while someone waits for a slot. A holder whose end is
    computed at arrival (a :class:`Station` booking) thus costs the pool nothing in events."""

    __slots__ = (
        "env",
        "name",
        "size",
        "stage",
        "family",
        "used",
        "queue",
        "visits",
        "waits",
        "_area",
        "_since",
        "_due",
        "_timer_at",
    )

    def __init__(self, env: simpy.Environment, name: str, size: int, stage: int = 0, family: str | None = None) -> None:
        self.env = env
        self.name = name
        self.size = size
        # Where on a request's path the pool is taken: a request holds its slots of lower stages
        # while it waits for this one (a client's connection while it queues for a server's worker).
        self.stage = stage
        # The pools one setting sizes (every target's workers): a tuner changes a family, not one pool.
        self.family = family or name
        self.used = 0
        self.queue: deque[Event] = deque()
        self.visits = 0
        self.waits = 0  # acquires that found every slot taken and queued
        self._area = 0.0  # slot-seconds held up to _since
        self._since = 0.0
        self._due: list[float] = []  # heap of the times of releases announced by release_at
        self._timer_at = math.inf  # when the armed timer (if any) fires

    @property
    def servers(self) -> int:
        """Slots, as a station's servers."""
        return self.size

    def done_work(self) -> float:
        """Slot-seconds held so far."""
        if self._due:
            self._settle()
        return self._area + self.used * (self.env.now - self._since)

    def _count(self, change: int, at: float) -> None:
        self._area += self.used * (at - self._since)
        self._since = at
        self.used += change

    def _settle(self, until: float | None = None) -> bool:
        """Apply, in time order, the announced releases due by now (or by ``until``); whether one
        went to a waiter."""
        due = self._due
        horizon = self.env.now if until is None else until
        handed = False
        while due and due[0] <= horizon:
            at = heapq.heappop(due)
            if self.queue:  # the slot goes straight to the first waiter, as in release()
                self.visits += 1
                self.queue.popleft().succeed()
                handed = True
            else:
                self._count(-1, at)
        return handed

    def _arm(self) -> None:
        """Make sure a timer fires at the next announced release while someone waits."""
        if self.queue and self._due and self._due[0] < self._timer_at:
            at = self._timer_at = self._due[0]
            timer = self.env.timeout(max(at - self.env.now, 0.0))
            timer.callbacks.append(lambda _event: self._ring(at))

    def _ring(self, at: float) -> None:
        # now + (at - now) may miss ``at`` by a rounding step: settle up to ``at`` itself.
        if self._timer_at == at:
            self._timer_at = math.inf
        self._settle(max(at, self.env.now))
        self._arm()

    def acquire(self, ahead: bool = False) -> Event | None:
        """Take a slot now (None) or get an event that fires when one is handed over (before those
        already waiting if ``ahead``: work the pool's holders take in preference)."""
        due = self._due
        if due and due[0] <= self.env._now:  # a release is due (else _settle would do nothing)
            self._settle()
        used = self.used
        if used < self.size:
            # _count(1, now), inlined: every request takes a slot of one pool or more
            now = self.env._now
            self._area += used * (now - self._since)
            self._since = now
            self.used = used + 1
            self.visits += 1
            return None
        waiting = Event(self.env)
        if ahead:
            self.queue.appendleft(waiting)
        else:
            self.queue.append(waiting)
        self.waits += 1
        self._arm()
        return waiting

    def try_acquire(self) -> bool:
        """Take a slot if one is free, without queueing."""
        due = self._due
        if due and due[0] <= self.env._now:  # a release is due (else _settle would do nothing)
            self._settle()
        if self.used < self.size and not self.queue:
            self._count(1, self.env.now)
            self.visits += 1
            return True
        return False

    def release(self) -> None:
        """Give the slot back, handing it straight to the first waiter."""
        due = self._due
        handed = False
        if due and due[0] <= self.env._now:  # a release is due (else _settle would do nothing)
            handed = self._settle()
        if self.queue:
            self.visits += 1  # the slot stays held, by the next holder
            if handed:  # after the earlier waiter _settle scheduled, not before it
                self.queue.popleft().succeed()
            else:
                fire(self.queue.popleft())
        else:
            # _count(-1, now), inlined as in acquire
            now = self.env._now
            self._area += self.used * (now - self._since)
            self._since = now
            self.used -= 1

    def release_at(self, when: float) -> None:
        """Give the slot back at ``when`` (now or later), as ``release()`` would then."""
        if when <= self.env.now:
            self.release()
            return
        heapq.heappush(self._due, when)
        if self.queue:  # _arm has nothing to do while no one waits
            self._arm()


def acquire_first(
    env: simpy.Environment, pools: Sequence[Pool], ahead: bool = False
) -> tuple[Pool | None, Event | None]:
    """A slot of whichever of ``pools`` can give one first: ``(pool, None)`` when one is free now
    (the first in order), else ``(None, event)``, queued at all of them (ahead of their waiters if
    ``ahead``), whose value is the pool that handed its slot over first; the other queues are left,
    and a slot handed over in the same moment is given back."""
    for pool in pools:
        if pool.try_acquire():
            return pool, None
    done = Event(env)
    queued: list[tuple[Pool, Event]] = []
    won = [False]

    def withdraw(keep: Pool | None) -> None:
        for other, event in queued:
            if other is not keep and not event.triggered:
                other.queue.remove(event)

    def granted(pool: Pool) -> Callable[[Event], None]:
        def callback(_event: Event) -> None:
            if won[0]:  # another pool's slot came first
                pool.release()
                return
            won[0] = True
            withdraw(pool)
            done.succeed(pool)

        return callback

    for pool in pools:
        event = pool.acquire(ahead)
        if event is None:  # a release fell due in the meantime: this one, at once
            won[0] = True
            withdraw(pool)
            return pool, None
        event.callbacks.append(granted(pool))
        queued.append((pool, event))
    return None, done


class Task(Event):
    """A generator run by the events it yields, as SimPy's :class:`~simpy.events.Process` runs one,
    for the short-lived requests of a benchmark call (tens of thousands in a point), which nothing
    interrupts and no one asks for the active process: its first step runs at once, where a
    process's start is an event of its own, and when the generator returns, the callbacks of
    those waiting for it run at once, where a process's end is another event (two of the few
    events a request costs).

    The end changes nothing but when the waiters' callbacks run within the moment. The start
    runs the first step before the code that made the Task goes on, not after it: what that step
    draws from a stream (a read's NSD CPU time) comes before what the caller draws next, so a
    caller that draws several requests' places should draw them all first (as GPFS's O_DIRECT
    records do). A Task's end is not an event, so it cannot be what ``env.run(until=...)`` runs
    to. Failed events are thrown into the generator, as a process does; an exception the
    generator lets out goes to whatever resumed it (the event loop, or the code that made the
    Task): a bug in pfssim, since the models fail no event."""

    def __init__(self, env: simpy.Environment, generator: Generator[Event, object, object]) -> None:
        self.env = env
        self.callbacks = []
        self._generator = generator
        self._resume(None)

    def _resume(self, event: Event | None) -> None:
        generator = self._generator
        try:
            while True:
                if event is None:
                    target = generator.send(None)
                elif event._ok:
                    target = generator.send(event._value)
                else:
                    event._defused = True
                    failure = type(event._value)(*event._value.args)
                    failure.__cause__ = event._value
                    target = generator.throw(failure)
                callbacks = target.callbacks
                if callbacks is not None:  # not processed yet: wait for it
                    callbacks.append(self._resume)  # (a bound method kept on self would be a cycle)
                    return
                event = target  # already processed: go on with its value
        except StopIteration as stop:
            self._ok = True
            self._value = stop.value
        # The waiters run outside the handler, so that an error of theirs is not reported as
        # raised while handling the generator's StopIteration.
        callbacks, self.callbacks = self.callbacks, None  # type: ignore[assignment]
        for callback in callbacks:
            callback(self)


#: How deep :func:`fire` may nest before it schedules instead (see there).
FIRE_DEPTH = 32
_fire_depth = 0
#: The callback ``env.run(until=...)`` adds to its target (one bound method, looked up once).
_STOP = StopSimulation.callback


def fire(event: Event) -> None:
    """Trigger the untriggered ``event`` and process it now: its waiters' callbacks run at once,
    inside the caller, where ``succeed()`` would schedule it and run them after the events already
    due at this moment.

    For hand-overs whose waiter only goes on with its own work (a freed worker slot, room in a
    cache, a block for a flusher): each would otherwise cost an event and a turn of the loop
    (about a quarter of a GPFS random write's events). The waiter's code then runs before the
    rest of the caller's, so a caller that goes on changing what the waiter may look at must do
    that first (see the call sites). SimPy's ``Process._resume`` may be called so: it only
    records the active process while it runs, which no model asks for.

    Two cases are scheduled as ``succeed()`` would, which every call site also allows:

    * Nested deeper than :data:`FIRE_DEPTH`. A waiter that releases what it was handed at once
      hands it on inside its own call (GPFS mdtest threads that find their node already holds a
      shared directory's token take the directory lock and give it straight back): hundreds of
      them in a row would exceed Python's recursion limit (2048 mdtest tasks in one directory on
      pixstor-large did, the review of session 29 found). Shipped workloads nest at most 2 deep.
    * The event that ``env.run(until=...)`` is waiting for: its stop would otherwise be raised
      inside the code that fired it, and end that process instead of the run."""
    global _fire_depth
    callbacks = event.callbacks
    if _fire_depth >= FIRE_DEPTH or _STOP in callbacks:
        event.succeed()
        return
    event._ok = True
    event._value = None
    event.callbacks = None  # type: ignore[assignment]
    _fire_depth += 1
    try:
        for callback in callbacks:
            callback(event)
    finally:
        _fire_depth -= 1


def join(env: simpy.Environment, events: Sequence[Event]) -> Event:
    """An event that fires when all ``events`` have fired (fork-join); with none, at once. It is
    processed as the last of them fires (:func:`fire`), not scheduled after it."""
    if len(events) == 1:
        return events[0]
    done = Event(env)
    waited = False

    def last() -> None:
        # Events that had all fired already: an event still to be processed, as the caller may
        # add callbacks to what it gets back (on_done, chain).
        if waited:
            fire(done)
        else:
            done.succeed()

    when_all(events, last)
    waited = True
    return done


def when_all(events: Sequence[Event], action: Callable[[], object]) -> None:
    """Run ``action()`` as the last of ``events`` fires (at once if all have been processed).

    :func:`join` without its event: the action runs inside the callbacks of the last event to
    fire, where a joined event would be scheduled for the same moment and processed after the
    events already due then. A stage that only starts the next stage (a read-modify-write's reads
    starting its writes) saves that event and its callback."""
    remaining = len(events)
    if not remaining:
        action()
        return

    def arrived(_event: Event) -> None:
        nonlocal remaining
        remaining -= 1
        if not remaining:
            action()

    for event in events:
        callbacks = event.callbacks  # None once processed (what ``event.processed`` tests)
        if callbacks is None:
            arrived(event)
        else:
            callbacks.append(arrived)


def succeed_in(
    env: simpy.Environment, event: Event, delay: float, first: Callable[[Event], None] | None = None
) -> None:
    """Trigger the untriggered ``event`` ``delay`` seconds from now, with ``first`` (if given) run
    before the callbacks its waiters added.

    What ``Timeout`` does to itself, done to an event handed out earlier: one scheduled event where
    a timeout whose callback succeeds ``event`` would cost two. (SimPy's own ``Timeout.__init__``
    sets the same two fields.)"""
    event._ok = True
    event._value = None
    if first is not None:
        event.callbacks.insert(0, first)
    # env.schedule(event, NORMAL, delay), without the call: the entry it pushes
    heapq.heappush(env._queue, (env._now + delay, NORMAL, next(env._eid), event))


def on_done(event: Event, action: Callable[[], object]) -> None:
    """Run ``action()`` when ``event`` fires (a callback that ignores the event)."""

    def callback(_event: Event) -> None:
        action()

    event.callbacks.append(callback)


def chain(env: simpy.Environment, first: Event, then: Callable[[], Event]) -> Event:
    """An event for ``then()`` started when ``first`` fires, without a process (stages in series)."""
    done = Event(env)
    on_done(first, lambda: on_done(then(), done.succeed))
    return done
