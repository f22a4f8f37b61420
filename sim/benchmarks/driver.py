"""Running benchmark points: one SimPy model per (workload, operation, thread count).

A point simulates the benchmark's steady state, not its terabytes: threads start staggered, the
first ``warmup`` completions are discarded (and more, until every write cache started full of
drawn random writes has destaged as many entries as it started with: one turnover of the
guessed start), then completions are counted in batches of at least
one request per thread and at least ``min_batch`` (fewer when calls are so large, thousands of
chunk pieces, that ten such batches would not fit in the budget). Batches of a longer initial
transient (a cache filling, streams drifting into their long-run pattern) are found and dropped
by MSER (``sim/engine/stats.py``); the point stops when the series has settled and the 95%
interval of the kept batches is within ``rel_precision``, or when the kept batches have spent a
budget of drive commands, or after four budgets in all; the interval says how tight it got (a
bandwidth interval wholly above the hardware ceiling stops only at the four budgets, or when its
batches can double no more). At
``max_batches`` with budget left, adjacent batches merge in pairs and the point runs on with
batches twice as long (at most ``max_doublings`` times).

A run's interval covers what its own window can see. What it cannot see is what stays fixed for a
whole run and differs between runs: the file layout a seed draws (GPFS's scattered blocks, each
file's first NSD), where the streams start, the drives' spindle phases, and dynamics slower than
the window (streams that bunch up on the same NSDs and part again over seconds). With
``replications`` above 1 a point is simulated that many times from independent seeds (the first
the run's own) and reported as the mean of the runs, with a Student-t interval from their spread
(method of independent replications, docs/design.md, Measurement).

A model whose application takes its work from a bounded buffer filled ahead of it (GPFS prefetch)
also meters that buffer's supply. The supply has the application's long-run rate but not the
bursts of in-order consumption, so its estimate stands in for the direct one whenever it lies
inside the direct one's interval (it does not while a buffer is still filling behind a slow
reader), and the last-task rule then uses the tasks' supplied amounts (docs/design.md,
Measurement).

What the benchmark reports in that steady state:
* IOzone throughput mode, "Children see": the sum over threads of each thread's rate while all
  are running (stonewalled), i.e. the aggregate rate of the full-concurrency steady state.
* IOR: aggregate bytes / (last close - first open). Open and close are negligible against
  terabytes, but every task moves the same block, so the last task to finish sets the time: the
  aggregate rate divided by ``1 + delta z_N`` (``sim/benchmarks/straggler.py``), ``delta`` the
  spread of the tasks' completion times extrapolated from their spread in the window.
* mdtest: the slowest task's rate x the tasks, i.e. the phase's items over its wall time: in
  steady state the same last-task rule as IOR (see ``sim/fs/mdtest.py``); a phase small enough is
  simulated whole and the rule is applied to the tasks' own times.
"""

from __future__ import annotations

import hashlib
import math
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace

import simpy

from sim.benchmarks.runnable import check_runnable
from sim.benchmarks.straggler import last_task_interval
from sim.config.workload import AnyWorkload, MdtestWorkload, Workload
from sim.engine.core import Environment, Pool, Station, collector_paused
from sim.engine.meter import Meter
from sim.engine.rng import Streams
from sim.engine.stats import Estimate, batch_estimate, mser_cut, t95
from sim.errors import Problem, WorkloadError
from sim.fs.common import RunContext
from sim.fs.handles import handle_seconds
from sim.fs.mdtest import data_pieces
from sim.fs.models import model_for
from sim.fs.platform import Platform
from sim.topology.bounds import max_flow_bound
from sim.topology.model import System


@dataclass(frozen=True)
class Precision:
    """Stopping rule of one point, and how many independent runs make it (``replications``)."""

    rel_precision: float = 0.02
    min_batches: int = 10
    max_batches: int = 60  # even: at this count pairs of batches merge, at most ``max_doublings`` times
    max_doublings: int = 2
    warmup_per_thread: int = 2
    min_warmup: int = 200
    min_batch: int = 100
    max_device_ops: int = 80_000  # drive commands the kept batches may spend; the interval says what it bought
    # Budgets a point's measurement may spend in all, its initial transient included; a turnover
    # warm-up (caches started full of random writes, _steady_point) may spend as many before it.
    transient_budget_factor: int = 4
    replications: int = 1  # independent runs of each point, their mean reported (1: the run alone)

    def __post_init__(self) -> None:
        if self.max_batches % 2 or self.max_batches < 2 * self.min_batches:
            raise ValueError("max_batches must be even and at least twice min_batches")
        if self.replications < 1:
            raise ValueError("replications must be at least 1")


DEFAULT_PRECISION = Precision()

#: Visits in the measurement window a station needs before its utilisation can name the bottleneck
#: (the relative error of a utilisation estimate from n jobs is of order 1/sqrt(n): 20 gives ~20%).
MIN_BOTTLENECK_VISITS = 20

#: Below this utilisation of its busiest part a point is latency-bound: by the utilisation law
#: (U = X D) that part alone would let the rate rise by 1 / U >= 2 before it saturated, so what holds
#: the rate down is the time each request spends (too few requests in flight), not a capacity.
LATENCY_BOUND_UTILIZATION = 0.5

#: A pool of workers, connections or threads held at least this much of the time, and waited for,
#: while no part is half busy is what the requests wait for: it is named as the bottleneck (more
#: slots would raise the rate), instead of calling the point latency-bound.
POOL_FULL = 0.9


#: Why a point is not converged, by the code its ``not_converged`` (and the JSON's) gives.
NOT_CONVERGED = {
    "not_settled": "its batches still drifted when its budget ran out (MSER found no end to the start-up transient)",
    "precision": "its interval is wider than the requested precision when its budget of drive commands ran out",
    "phase_spread": (
        "its interval is wider than the requested precision: an MDtest phase small enough to simulate "
        "whole varies that much between its runs"
    ),
    "runs_spread": "its interval is wider than the requested precision: its independent runs vary that much",
    "task_spread": (
        "its interval is wider than the requested precision: the last task's term (IOR's and MDtest's "
        "arithmetic), estimated from the spread of a finite number of tasks, leaves that much open"
    ),
    "turnover": "its ME4 write caches, started full, had not turned that start over within its budget",
    "outran": (
        "an MDtest phase's file data outran the disks behind the write caches it started at their "
        "watermark (the caches were filling)"
    ),
    "above_ceiling": (
        "its interval (of the rate its window measured) lies above the hardware ceiling (pfssim show's, "
        "from the clients the threads run on): a start-up transient the run did not outlast, as between "
        "two parts within a few percent of each other"
    ),
}


def not_converged(
    precise: bool,
    settled: bool = True,
    turned_over: bool = True,
    outrun: bool = False,
    above: bool = False,
    imprecise: str = "precision",
) -> tuple[str, ...]:
    """The codes of :data:`NOT_CONVERGED` that apply (none: the point is converged); ``imprecise``
    is the code of an interval wider than the precision (what made it so)."""
    checks = (
        ("not_settled", not settled),
        (imprecise, not precise),
        ("turnover", not turned_over),
        ("outran", outrun),
        ("above_ceiling", above),
    )
    return tuple(code for code, failed in checks if failed)


def limit_of(bottleneck_utilization: float) -> str:
    """The point's limit: "capacity" when its busiest part is at least half busy, else "latency"."""
    return "capacity" if bottleneck_utilization >= LATENCY_BOUND_UTILIZATION else "latency"


@dataclass
class PointResult:
    """One predicted point of a benchmark curve."""

    workload: str
    benchmark: str
    op: str
    threads: int
    value: float
    ci_low: float
    ci_high: float
    unit: str
    bottleneck: str
    bottleneck_utilization: float
    utilization: dict[str, float] = field(default_factory=dict)
    pool_occupancy: dict[str, float] = field(default_factory=dict)  # mean slots held / slots, per pool
    requests: int = 0
    requests_total: int = 0  # warm-up and a pilot started again included: what the engine simulated
    events_total: int = 0  # SimPy events scheduled for them (a machine-independent cost, for bench/)
    simulated_s: float = 0.0
    wall_s: float = 0.0  # all of the point's computing, a pilot started again included
    batches: int = 0  # batches kept for the estimate
    transient_batches: int = 0  # leading batches dropped as initial transient (MSER)
    converged: bool = False
    not_converged: tuple[str, ...] = ()  # why not, as codes of NOT_CONVERGED (empty when converged)
    bytes_moved: float = 0.0
    file_bytes: float | None = None  # mdtest: bytes written to each file (-w); None for data benchmarks
    last_task_factor: float | None = None  # IOR and steady-state mdtest: reported / aggregate rate
    work_per_task: float = 0.0  # IOzone and IOR: what each thread moves, in records or transfers if random
    # The timed opens, fsyncs and closes: IOR's (from the first open to the last close), IOzone's
    # (-e, -c) per child on average.
    open_close_s: float | None = None
    replications: int = 1  # independent runs averaged into this point (Precision.replications)
    bottleneck_runs: int = 1  # of those runs, how many named ``bottleneck``
    # Parts reported but never named the bottleneck: the drives behind a write-back cache that keeps
    # up (and their groups' ".drives"), which destage what arrives while no write waits for them.
    off_path: tuple[str, ...] = ()
    # Pools behind a named pool (a deeper stage) as full as it and never waited for: more slots in the
    # named pool alone would move the wait to them (:func:`_full_behind`).
    full_behind: tuple[str, ...] = ()
    # False when write caches started full of drawn random writes had not turned that start over
    # when the point began to measure (its transient allowance ran out first); such a point is not
    # converged.
    turned_over: bool = True
    # A bandwidth point's hardware ceiling: pfssim show's max-flow from the clients its threads run
    # on (None for operation rates). No steady state exceeds it, so an interval wholly above it is
    # a transient the run did not outlast, and the point is not converged (:func:`hardware_ceiling`).
    ceiling_Bps: float | None = None

    @property
    def above_ceiling(self) -> bool:
        """Whether the whole interval lies above the hardware ceiling."""
        return _above(self.ceiling_Bps, self.ci_low)

    @property
    def limit(self) -> str:
        """What holds the point's rate: a part's "capacity" (the bottleneck) or request "latency"."""
        return limit_of(self.bottleneck_utilization)

    def to_json(self) -> dict[str, object]:
        """The point as it appears in the versioned result (SI units)."""
        out: dict[str, object] = {
            "workload": self.workload,
            "benchmark": self.benchmark,
            "op": self.op,
            "threads": self.threads,
            "value": self.value,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            "unit": self.unit,
            "bottleneck": self.bottleneck,
            "bottleneck_utilization": self.bottleneck_utilization,
            "limit": self.limit,
            "converged": self.converged,
            "batches": self.batches,
            "transient_batches": self.transient_batches,
            "simulated_requests": self.requests,
            "simulated_seconds": self.simulated_s,
            "utilization": self.utilization,
            "pool_occupancy": self.pool_occupancy,
        }
        if self.file_bytes is not None:
            out["file_bytes"] = self.file_bytes
        if self.last_task_factor is not None:
            out["last_task_factor"] = self.last_task_factor
        if self.open_close_s is not None:
            out["open_close_seconds"] = self.open_close_s
        if self.replications > 1:
            out["replications"] = self.replications
            out["bottleneck_runs"] = self.bottleneck_runs
        if self.off_path:
            out["off_path"] = list(self.off_path)
        if self.not_converged:
            out["not_converged"] = list(self.not_converged)
        if self.full_behind:
            out["full_behind"] = list(self.full_behind)
        if self.ceiling_Bps is not None:
            out["hardware_ceiling"] = self.ceiling_Bps
        return out

    @property
    def open_close_share(self) -> float:
        """The part of the benchmark's time its opens and closes take (0 when not modelled)."""
        if not self.open_close_s or self.value <= 0:
            return 0.0
        total = self.threads * self.work_per_task
        return self.open_close_s / (total / self.value) if total > 0 else 0.0


def scheduled_events(env: simpy.Environment) -> int:
    """Events the environment has scheduled so far: SimPy numbers them from one counter (``_eid``,
    SimPy 4; pyproject pins it), which this reads by taking the next number."""
    counter = getattr(env, "_eid", None)
    return next(counter) if counter is not None else 0


#: mdtest phases of at most this many items (all tasks together) are simulated whole, as mdtest
#: runs them, rather than in steady state; each is repeated ``WHOLE_PHASE_REPLICATIONS`` times with
#: seeds derived from the master seed, and the interval comes from the spread of the repetitions.
WHOLE_PHASE_ITEMS = 20_000
WHOLE_PHASE_REPLICATIONS = 5


def _work_per_task(workload: Workload, threads: int, random: bool) -> float:
    """What one IOR task has to do, in the unit its points count: bytes, or transfers with -z."""
    return workload.file_size_for(threads) / (workload.record_size if random else 1.0)


def _handle_seconds(system: System, workload: Workload, op: str, threads: int, seed: int) -> list[float] | None:
    """Each task's timed open, fsync and close (:mod:`sim.fs.handles`), on a seed of their own."""
    return handle_seconds(system, workload, op, threads, _replica_seed(seed, -1))


def whole_phase_fits(system: System, workload: MdtestWorkload, op: str, threads: int) -> bool:
    """True when an mdtest phase is small enough to simulate whole: at most ``WHOLE_PHASE_ITEMS``
    items, each counted as the data requests its file takes (mdtest -w 1g makes a few items a
    long phase)."""
    return workload.total_items(threads) * data_pieces(system, workload.data_bytes(op)) <= WHOLE_PHASE_ITEMS


def _derived_seed(seed: int, label: str) -> int:
    """A master seed derived from the run's seed for one labelled use (independent streams)."""
    digest = hashlib.blake2b(f"{seed}/{label}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little")


def _replica_seed(seed: int, replica: int) -> int:
    """A master seed for repetition ``replica`` of a point, derived from the run's seed."""
    return _derived_seed(seed, f"replica{replica}")


def _whole_phase(
    system: System, workload: MdtestWorkload, op: str, threads: int, seed: int, precision: Precision
) -> PointResult:
    """An mdtest phase simulated from its opening barrier to its last task, repeated."""
    started = time.perf_counter()
    rates: list[float] = []
    items = workload.items_per_task(threads)
    utilization: dict[str, float] = {}
    pools: dict[str, float] = {}
    bottleneck = ""
    window = 0.0
    simulated = 0.0  # over all repetitions, as the requests are counted
    events = 0
    for replica in range(WHOLE_PHASE_REPLICATIONS):
        env = Environment()
        streams = Streams(_replica_seed(seed, replica))
        platform = Platform(env, system, streams)
        with _dropped(env, platform):
            ctx = RunContext(env, system, platform, streams, workload, op, threads, Meter(env, threads))
            model = model_for(ctx)
            if op.endswith(("create", "remove")):
                model.prefill_caches()
            env.run(until=model.start_phase(items))
            events += scheduled_events(env)
            rates.append(workload.phase_rate(threads, model.finish))
            window = env.now
            simulated += window
            utilization, bottleneck, pools, _ = _utilization(platform, {}, {}, window)
    estimate = batch_estimate(rates, [1.0] * len(rates))
    precise = estimate.rel_half_width <= precision.rel_precision
    return PointResult(
        workload=workload.name,
        benchmark=workload.benchmark,
        op=op,
        threads=threads,
        value=estimate.mean,
        ci_low=estimate.low,
        ci_high=estimate.high,
        unit="op/s",
        bottleneck=bottleneck,
        bottleneck_utilization=utilization.get(bottleneck, 0.0),
        utilization=dict(sorted(utilization.items())),
        pool_occupancy=dict(sorted(pools.items())),
        requests=items * threads * len(rates),
        requests_total=items * threads * len(rates),
        events_total=events,
        simulated_s=simulated,
        wall_s=time.perf_counter() - started,
        batches=len(rates),
        converged=precise,
        not_converged=not_converged(precise, imprecise="phase_spread"),
        bytes_moved=0.0,
        file_bytes=None if op.startswith("dir_") else workload.write_bytes,
    )


@dataclass(frozen=True)
class _Mark:
    """The counters of a running point at one batch boundary."""

    time: float
    amount: float
    count: int
    per_task: tuple[float, ...]
    supplied: float
    supplied_per_task: tuple[float, ...]
    ops: int  # device commands so far
    work: dict[str, float]
    visits: dict[str, int]
    waits: dict[str, int]  # pools only: acquires that queued
    buffers: dict[str, tuple[int, int]]  # SSD write buffers: (writes, writes that waited for room)
    cache_waits: dict[str, tuple[int, int]]  # ME4 write caches by virtual disk: (waits, entry-making writes)

    @classmethod
    def take(cls, env: simpy.Environment, meter: Meter, platform: Platform) -> _Mark:
        stations: dict[str, Station | Pool] = {**platform.all_stations(), **platform.pools}
        return cls(
            env.now,
            meter.amount,
            meter.count,
            tuple(meter.per_thread),
            meter.supplied,
            tuple(meter.supplied_per_thread) if meter.by_supply else (),
            platform.device_ops(),
            {name: station.done_work() for name, station in stations.items()},
            {name: station.visits for name, station in stations.items()},
            {name: pool.waits for name, pool in platform.pools.items()},
            platform.buffer_counts(),
            platform.cache_waits_by_lun(),
        )


#: The share of a write cache's entry-making writes that waited for room which says the load kept
#: the cache full over a window.
CACHE_KEPT_FULL = 0.5


def _caches_kept_full(before: dict[str, tuple[int, int]], after: dict[str, tuple[int, int]]) -> set[str]:
    """The virtual disks whose write caches the load kept full between ``before`` and ``after``
    (:meth:`Platform.cache_waits_by_lun`): at least half the writes that needed entries of their
    own waited for room. In a cache kept full every such write waits for a destage (one that only
    joins a waiting entry needs no room); a wait or two in a cache that keeps up (a burst) do not
    make its drives what the rate waits on."""
    kept = set()
    for vdisk, (waits, writes) in after.items():
        waits0, writes0 = before.get(vdisk, (0, 0))
        if waits > waits0 and waits - waits0 >= CACHE_KEPT_FULL * (writes - writes0):
            kept.add(vdisk)
    return kept


def _pairs(values: list[float]) -> list[float]:
    """Adjacent pairs of batches summed into one (an even count of them)."""
    return [values[i] + values[i + 1] for i in range(0, len(values), 2)]


def _settle(amounts: list[float], durations: list[float]) -> tuple[int, bool, Estimate]:
    """The batches of the initial transient to drop (MSER), whether it ended, and the estimate
    from the batches kept."""
    cut, settled = mser_cut([a / d for a, d in zip(amounts, durations, strict=True)])
    return cut, settled, batch_estimate(amounts[cut:], durations[cut:])


def _utilization(
    platform: Platform,
    work0: dict[str, float],
    visits0: dict[str, int],
    window: float,
    supply_scale: float = 1.0,
    consumers: frozenset[str] | set[str] = frozenset(),
    waits0: dict[str, int] | None = None,
    off_path: frozenset[str] | set[str] = frozenset(),
    waited: frozenset[str] | set[str] = frozenset(),
) -> tuple[dict[str, float], str, dict[str, float], tuple[str, ...]]:
    """Utilisation of every station over a window, the bottleneck named from them, the occupancy
    of every pool (mean slots held over its size), and the parts reported off the request path
    (see below). Work of stations and pools other than ``consumers`` is scaled by
    ``supply_scale`` (a supply that ran ahead of its consumer).

    A RAID group's drives are judged together: ``<group>.drives`` is their mean utilisation, and it
    stands for them when the bottleneck is named (its drives keep their own utilisations in the
    result). The bottleneck is named from utilisations that rest on enough visits: a part that served a
    handful of long jobs (a few stripe destages on one disk group) in a short window can look
    saturated by chance. Such parts still report their utilisation, and are named only when no
    part with enough visits is half busy and no pool is full. Parts ``off_path`` (the drives
    behind a write-back cache that keeps up, an ME4 array's or an SSD's own buffer: they write out
    what arrives, and no write waits for them) report their utilisation but are not named.

    ``waited``: the virtual disks whose ME4 write caches the load kept full in the window (writes
    waited for room, :func:`_caches_kept_full`). Such a write waits for the cache's destages, so
    the drives behind it hold the rate, however
    far below full their utilisation stays (read-modify-write destages leave members idle while
    the others finish): a full pool whose holders wait there (the NSD queue threads, each holding
    a write until the cache takes it) is not named, since more slots add only waiters (an
    architect's what-if, session 36: RAID6 of 16 drives with 64 KiB stripe units named the NSD
    queues 100% full, the drives 87% busy, and four times the queue threads changed nothing).
    """
    stations = platform.all_stations()
    utilization = {}
    for name, station in stations.items():
        busy = (station.done_work() - work0.get(name, 0.0)) / (window * station.servers) if window > 0 else 0.0
        if name not in consumers:
            busy *= supply_scale
        if busy > 0:
            utilization[name] = busy
    visits = {name: station.visits - visits0.get(name, 0) for name, station in stations.items()}
    # The drives of a RAID group share its load (striping, rotating parity, mirrors taken by their
    # backlog), so the group is judged by its drives' mean, reported as "<group>.drives", and its
    # drives are not named one by one: in a short window one of them can be busy all the time by
    # chance while the group has room (beegfs-high-capacity's 4 KiB reads at 512 threads: about 17
    # reads a drive, the busiest at 100%, the drives' mean 68%, every connection pool full), and in a
    # long one the busiest of equally loaded drives is a different one on every seed.
    grouped: set[str] = set()
    for group, raid in platform.raids.items():
        members = [drive.name for drive in raid.members]
        if len(members) < 2 or not any(m in utilization for m in members):
            continue
        name = f"{group}.drives"
        utilization[name] = sum(utilization.get(m, 0.0) for m in members) / len(members)
        visits[name] = sum(visits.get(m, 0) for m in members)
        grouped.update(members)
        if all(m in off_path for m in members):
            off_path = {*off_path, name}
    named = [n for n in utilization if n not in off_path and n not in grouped]
    settled = [n for n in named if visits[n] >= MIN_BOTTLENECK_VISITS]
    candidates = settled or named
    bottleneck = max(candidates, key=lambda n: utilization[n]) if candidates else ""
    pools: dict[str, float] = {}
    for name, pool in platform.pools.items():
        held = (pool.done_work() - work0.get(name, 0.0)) / (window * pool.size) if window > 0 else 0.0
        if name not in consumers:
            held *= supply_scale
        if held > 0:
            pools[name] = held
    if window > 0 and (not bottleneck or utilization[bottleneck] < POOL_FULL):
        # No part is busy nine tenths of the time: a full pool of workers or connections may be what
        # requests wait for (a part idle a tenth of the time or more has room; the pool has none).
        occupancy = {
            name: held
            for name, held in pools.items()
            if platform.pools[name].visits - visits0.get(name, 0) >= MIN_BOTTLENECK_VISITS
        }
        # Full and waited for: a pool whose every user holds a slot of its own (one thread, one
        # connection) is always full, but no request ever waits for it and more slots change nothing.
        pool_waits = {n: platform.pools[n].waits - (waits0 or {}).get(n, 0) for n in occupancy}
        full = [n for n, held in occupancy.items() if held >= POOL_FULL and pool_waits[n] > 0]
        # The drives behind the caches the load kept full: a group by its drives' mean, a lone drive
        # by itself (see the docstring); looked for only where a full pool would be named.
        groups = [f"{v}.drives" if f"{v}.drives" in utilization else platform.raids[v].members[0].name for v in waited]
        destage_bound = [name for name in groups if name in utilization and name not in off_path] if full else []
        if destage_bound:
            bottleneck = max(destage_bound, key=lambda n: (utilization[n], n))
        elif full:
            tightest = _tightest_pool(platform, full, visits0)
            utilization[tightest] = occupancy[tightest]
            bottleneck = tightest
        elif not bottleneck or utilization[bottleneck] < LATENCY_BOUND_UTILIZATION:
            # No full pool, and no part with enough visits is half busy: name the busiest of all, drives with few
            # long visits included. Under half busy it is only the busiest part of a latency-bound
            # point. At least half busy it is the bottleneck on its own figure: a short window can
            # leave every drive of a drive-bound point with fewer visits than the rule asks (4 KiB
            # random reads over 320 HDDs measured in 0.18 s: about 15 each, most drives above 50%),
            # and a CPU that each read crosses for microseconds must not be named instead.
            busiest = max(named, key=lambda n: utilization[n], default="")
            if busiest:
                bottleneck = busiest
    # Summing a busy period's services can exceed the window by ~1e-13: that rounding is reported
    # as 1. More than rounding is left as it is, so that a part booked beyond its time (a bug in
    # the model) shows, and the tests that bound utilisation by 1 can catch it.
    return _rounded(utilization), bottleneck, _rounded(pools), tuple(sorted(n for n in utilization if n in off_path))


#: A family of pools (the pools one setting sizes) whose full pools carry at least this share of
#: its traffic holds most requests: see :func:`_tightest_pool`.
POOL_FAMILY_MAJORITY = 0.5


def _tightest_pool(platform: Platform, full: list[str], visits0: dict[str, int]) -> str:
    """Of the full, waited-for pools ``full``, the one to name as the bottleneck.

    A tuner changes a setting, which sizes a family of pools (every target's workers, every
    client's connections to a service), so the families are compared first, by the share of
    their traffic (slots taken in the window) that went through their full pools: a few hot
    pools of one family (the three one-target services of beegfs-hdr100's metadata server) do not
    hold a rate that another family's full pools hold for most requests. Of the families whose
    full pools carry most of their traffic (:data:`POOL_FAMILY_MAJORITY`), the innermost is named
    (the highest ``stage``): a request holds its outer pools' slots while it queues for it, so
    the outer ones look full too, and more of their slots only add waiters (among families of one
    stage, the larger share, then the fewest slots in a pool); if none does, the family with the
    largest share (then the inner, then the fewest slots). Within
    the family, the full pool that took the most requests is named (a typical one, not a pool
    that a setting of its own made smaller).

    Until session 32 the pool with the fewest slots of all was named, and reviews found it naming
    pools that more slots did not help: four clients' 24 connections each onto one target's 32
    workers (doubling the connections changed nothing, the workers +70%), or a 4-worker target of
    33 while the other 32 targets' 8 workers held the rate (+89% when doubled, +5% for the 4)."""
    pools = platform.pools
    visits = {name: pool.visits - visits0.get(name, 0) for name, pool in pools.items()}
    families: dict[str, list[str]] = {}
    for name in full:
        families.setdefault(pools[name].family, []).append(name)
    traffic: dict[str, int] = {}
    for name, pool in pools.items():
        if pool.family in families:
            traffic[pool.family] = traffic.get(pool.family, 0) + visits[name]
    share = {family: sum(visits[n] for n in names) / max(traffic[family], 1) for family, names in families.items()}
    stage = {family: pools[names[0]].stage for family, names in families.items()}
    smallest = {family: min(pools[n].size for n in names) for family, names in families.items()}
    majority = [family for family in families if share[family] >= POOL_FAMILY_MAJORITY]
    if majority:
        chosen = max(majority, key=lambda f: (stage[f], share[f], -smallest[f], f))
    else:
        chosen = max(families, key=lambda f: (share[f], stage[f], -smallest[f], f))
    return max(families[chosen], key=lambda n: (visits[n], pools[n].size, n))


def _full_behind(
    platform: Platform, bottleneck: str, pools: dict[str, float], waits0: dict[str, int]
) -> tuple[str, ...]:
    """When a pool is named, the pools of a deeper stage (behind it on the requests' path) that are
    as full (:data:`POOL_FULL`) and that no request waited for in the window: each request that
    holds the named pool's slot finds one of theirs free, so they hold the rate too, and more
    slots in the named pool alone would only move the wait to them (eight connections to a target
    of eight workers: doubling the connections changed nothing, a teaching review)."""
    named = platform.pools.get(bottleneck)
    if named is None:
        return ()
    return tuple(
        sorted(
            name
            for name, held in pools.items()
            if held >= POOL_FULL
            and platform.pools[name].stage > named.stage
            and platform.pools[name].waits == waits0.get(name, 0)
        )
    )


def _rounded(shares: dict[str, float]) -> dict[str, float]:
    """Utilisations with a rounding excess over 1 (at most 1e-9) taken off."""
    return {name: 1.0 if 1.0 < u <= 1.0 + 1e-9 else u for name, u in shares.items()}


#: Utilisation of a drive behind a write cache that says its destages never run dry (see _steady_point).
DESTAGE_SATURATED = 0.99


class _CacheFilled(Exception):
    """A write point started with its caches at the flush watermark filled one: start it again full.

    It carries what the pilot cost, which the point started again is charged with: a point's wall
    time and simulated requests are all that computing it took (bench/ reads them)."""

    def __init__(self, wall_s: float, requests: int, events: int) -> None:
        super().__init__("a write cache filled")
        self.wall_s, self.requests, self.events = wall_s, requests, events

    def charged_to(self, point: PointResult) -> PointResult:
        """``point`` with the pilot's cost added to its own."""
        return replace(
            point,
            wall_s=point.wall_s + self.wall_s,
            requests_total=point.requests_total + self.requests,
            events_total=point.events_total + self.events,
        )


def replication_seed(seed: int, replication: int) -> int:
    """The master seed of a point's run number ``replication``: the run's own seed for the first,
    a seed derived from it for every other (independent streams, so another layout and start)."""
    return seed if replication == 0 else _derived_seed(seed, f"replication{replication}")


def run_point(
    system: System,
    workload: AnyWorkload,
    op: str,
    threads: int,
    seed: int = 1,
    precision: Precision = DEFAULT_PRECISION,
    whole_phase: bool | None = None,
    check: bool = True,
) -> PointResult:
    """Simulate one point (``precision.replications`` independent runs, combined by
    :func:`combine_replications`) and return its estimate, interval, utilisations and bottleneck.
    An IOzone or IOR operation the workload does not run is refused, and so, unless ``check`` is
    False (tests of the model's mechanisms on cases outside what pfssim predicts), is a workload
    ``pfssim run`` refuses (:func:`check_runnable`)."""
    if isinstance(workload, Workload) and op not in workload.point_ops:
        message = f"{workload.name} has no {op!r} point (its operations: {', '.join(workload.point_ops)})"
        raise WorkloadError([Problem("", None, "ops", message)])
    if check:
        check_runnable(system, workload.with_threads([threads]))
    runs = [
        run_replication(system, workload, op, threads, seed, precision, replication, whole_phase)
        for replication in range(precision.replications)
    ]
    return combine_replications(runs, precision)


def combine_replications(runs: list[PointResult], precision: Precision) -> PointResult:
    """Independent runs of one point as one: the mean of their values, with a Student-t interval
    from their spread (``len(runs) - 1`` degrees of freedom), which covers what differs between
    runs and not within one (the layout and start a seed draws, slow dynamics). Each part's
    utilisation and each pool's occupancy are the runs' means (a pool named as the bottleneck is
    given its occupancy's); the bottleneck is the part most runs name (the earliest run's on a tie,
    as when each run names another of many equal pools), and its utilisation is the mean of each
    run's own bottleneck's, so that runs held by different parts (a layout drawn per seed puts the
    load on another array) still read as held by capacity: the named part's mean utilisation over
    runs that did not name it read as a latency-bound point (an architect's review, session 33);
    counts, times and batches add up. A single run is returned as it is."""
    count = len(runs)
    if count == 1:
        return runs[0]
    values = [run.value for run in runs]
    mean = sum(values) / count
    spread = math.sqrt(sum((v - mean) ** 2 for v in values) / (count - 1))
    half = t95(count - 1) * spread / math.sqrt(count)
    names = [run.bottleneck for run in runs]
    bottleneck = max(names, key=lambda name: (names.count(name), -names.index(name)))

    def averaged(maps: list[dict[str, float]]) -> dict[str, float]:
        keys = sorted({key for m in maps for key in m})
        return {key: sum(m.get(key, 0.0) for m in maps) / count for key in keys}

    def mean_of(items: list[float | None]) -> float | None:
        return None if any(x is None for x in items) else sum(x for x in items if x is not None) / count

    turned_over = all(run.turned_over for run in runs)  # a run measured from a guessed start is not converged
    pools = averaged([run.pool_occupancy for run in runs])
    # A run lists a pool among its utilisations only when it names it (its occupancy is in
    # pool_occupancy in every run): averaged with the runs that did not, it would read as idle.
    utilization = averaged([{n: u for n, u in run.utilization.items() if n not in pools} for run in runs])
    if bottleneck in pools:
        utilization[bottleneck] = pools[bottleneck]
    first = runs[0]
    # What made a run unconverged besides its own precision carries over: a run that never settled,
    # or whose caches were filling, is in the mean (its own interval is replaced by the runs' spread).
    reasons = not_converged(
        mean > 0 and half / mean <= precision.rel_precision,
        settled=not any("not_settled" in run.not_converged for run in runs),
        turned_over=turned_over,
        outrun=any("outran" in run.not_converged for run in runs),
        above=_above(first.ceiling_Bps, mean - half),
        imprecise="runs_spread",
    )
    return replace(
        first,
        value=mean,
        ci_low=max(mean - half, 0.0),
        ci_high=mean + half,
        bottleneck=bottleneck,
        bottleneck_utilization=sum(run.bottleneck_utilization for run in runs) / count,
        bottleneck_runs=names.count(bottleneck),
        utilization=utilization,
        pool_occupancy=pools,
        requests=sum(run.requests for run in runs),
        requests_total=sum(run.requests_total for run in runs),
        events_total=sum(run.events_total for run in runs),
        simulated_s=sum(run.simulated_s for run in runs),
        wall_s=sum(run.wall_s for run in runs),
        batches=sum(run.batches for run in runs),
        transient_batches=sum(run.transient_batches for run in runs),
        converged=not reasons,
        not_converged=reasons,
        turned_over=turned_over,
        bytes_moved=sum(run.bytes_moved for run in runs),
        last_task_factor=mean_of([run.last_task_factor for run in runs]),
        open_close_s=mean_of([run.open_close_s for run in runs]),
        replications=count,
        off_path=tuple(sorted({name for run in runs for name in run.off_path})),
        full_behind=tuple(sorted({name for run in runs if run.bottleneck == bottleneck for name in run.full_behind})),
    )


#: Max-flow ceilings already found, by (system, operation, clients); the system is kept with its
#: value so that its id is not reused while the entry lives.
_CEILINGS: dict[tuple[int, str, frozenset[str]], tuple[System, float]] = {}


def clients_used(system: System, workload: AnyWorkload, threads: int) -> frozenset[str]:
    """The clients ``threads`` threads of the workload run on (all of them once every client has
    one; :meth:`Workload.clients_needed`)."""
    if not isinstance(workload, Workload):
        return frozenset(system.clients)
    return frozenset(system.clients[: workload.clients_needed(threads, len(system.clients))])


def hardware_ceiling(system: System, workload: AnyWorkload, op: str, threads: int) -> float | None:
    """The most a bandwidth point (IOzone or IOR, sequential read or write) can move: the max-flow
    of ``pfssim show`` from the clients its threads run on (:func:`clients_used`, the plots' step
    line), or None for a rate of operations."""
    if not isinstance(workload, Workload) or op not in ("read", "write") or "random" in workload.benchmark:
        return None
    clients = clients_used(system, workload, threads)
    key = (id(system), op, clients)
    if key not in _CEILINGS:
        _CEILINGS[key] = (system, max_flow_bound(system, op, clients).Bps)
    return _CEILINGS[key][1]


def _above(ceiling: float | None, low: float) -> bool:
    """Whether an interval whose lower end is ``low`` lies wholly above ``ceiling``."""
    return ceiling is not None and low > ceiling * (1.0 + 1e-9)


def run_replication(
    system: System,
    workload: AnyWorkload,
    op: str,
    threads: int,
    seed: int,
    precision: Precision,
    replication: int,
    whole_phase: bool | None = None,
) -> PointResult:
    """One run of a point, from :func:`replication_seed`'s seed (the run's own seed for run 0).

    An mdtest phase small enough (:func:`whole_phase_fits`) is simulated whole (``whole_phase``
    None), others in steady state; ``whole_phase`` True or False forces one way.

    IOzone and IOR writes first run with the ME4 write caches at their flush watermark, where a
    long run of a load the destages keep up with holds them. If a write finds a cache full, a
    cache grows by more than a round of destages after the warm-up's first quarter, or a drive
    behind a cache is busy all the kept window (:data:`DESTAGE_SATURATED`), the load outruns the
    destages, and the point starts again with the caches full, where the long run of such a load holds them
    (:meth:`WriteBackCache.prefill`). Starting every write
    point full made the drives destage the prefilled surplus for the whole of a point their
    writes did not load (pixstor-large, one O_DIRECT thread: every drive 100% busy and named the
    bottleneck of a rate set by the thread's latency). An mdtest phase in steady state watches
    the caches of the LUNs its model starts at the watermark (:meth:`MetadataModelBase.pilot_luns`:
    GPFS file data beyond the inode) the same way, and their drives are off its path while they
    keep up; one whose load outruns them is not started again full (a guess of full caches of
    drawn writes that such a load does not turn over within a point's budget: 11 s and still a
    guess, at 256 tasks of PixStor's 4 KiB creates) but reported as not converged, its drives on
    its path. Until session 33 those caches were not watched at all, and busy drives that held
    no create back were named the bottleneck.
    """
    seed = replication_seed(seed, replication)
    with collector_paused():
        if isinstance(workload, MdtestWorkload):
            small = whole_phase_fits(system, workload, op, threads)
            if whole_phase if whole_phase is not None else small:
                return _whole_phase(system, workload, op, threads, seed, precision)
        elif not op.endswith("write"):  # reads prefill no cache (RunContext.io_op)
            return _steady_point(system, workload, op, threads, seed, precision, 1.0)
        # An mdtest phase watches only the caches its model starts at the point's fill
        # (MetadataModelBase.pilot_luns), and raises no _CacheFilled (_steady_point).
        try:
            return _steady_point(system, workload, op, threads, seed, precision, 0.5)
        except _CacheFilled as pilot:
            return pilot.charged_to(_steady_point(system, workload, op, threads, seed, precision, 1.0))


@contextmanager
def _dropped(env: Environment, platform: Platform) -> Iterator[None]:
    """Drop a run's state when its body ends, returned or raised (see :func:`_steady_point`)."""
    try:
        yield
    finally:
        platform.drop()
        env.drop()


def _steady_point(
    system: System,
    workload: AnyWorkload,
    op: str,
    threads: int,
    seed: int,
    precision: Precision,
    cache_fill: float,
) -> PointResult:
    """One run of a point in steady state, write caches prefilled to ``cache_fill`` (below full, raises
    :class:`_CacheFilled` on any of :func:`run_replication`'s signs that the load outruns the destages).

    When it ends, returned or raised, the run's state is dropped (:meth:`Platform.drop`,
    :meth:`Environment.drop`): the queued commands, cache entries and pending events would
    otherwise be freed only by the cycle collector, which walked all of them, 300,000 objects and
    0.39 s after the expansion's random write at 64 threads, 0.03 s once they are dropped."""
    started = time.perf_counter()
    env = Environment()
    streams = Streams(seed)
    platform = Platform(env, system, streams)
    with _dropped(env, platform):
        platform.cache_fill = cache_fill
        meter = Meter(env, threads)
        ctx = RunContext(env, system, platform, streams, workload, op, threads, meter)
        model = model_for(ctx)
        mdtest = isinstance(workload, MdtestWorkload)
        # The caches a pilot below full watches: every write cache of IOzone and IOR writes; of an
        # mdtest phase, those it starts at the point's fill (GPFS file data beyond the inode: the
        # metadata LUNs' caches start where their drives keep them, MetadataModelBase.prefill_fill).
        watched: set[str] | None = model.pilot_luns() if mdtest else None
        pilot = cache_fill < 1.0 and (watched is None or bool(watched))
        if op.endswith(("create", "remove")) if mdtest else ctx.io_op == "write":
            model.prefill_caches()
        elif not mdtest:
            model.prestart_read_ahead()
        model.start()

        held0: dict[str, int] | None = None  # the caches' entries after the warm-up's first quarter

        def filled() -> _CacheFilled:
            return _CacheFilled(time.perf_counter() - started, meter.count, scheduled_events(env))

        outrun = False  # an mdtest phase's watched caches found filling: reported, not started again

        def outran() -> None:
            nonlocal outrun
            if watched is None:
                raise filled()
            outrun = True

        def advance(completions: int) -> None:
            try:
                env.run(until=meter.after(completions))
            except RecursionError:
                raise  # a bug in pfssim too, but not a stall (RecursionError is a RuntimeError)
            except RuntimeError as exc:  # no events left: the model deadlocked, a bug in pfssim
                raise RuntimeError(f"simulation of {workload.name} {op} at {threads} threads stalled") from exc
            if pilot and (
                platform.cache_waits(watched) or (held0 is not None and platform.caches_filling(held0, watched))
            ):
                outran()

        # Calls so large that the usual warm-up or batches would not fit in the budget (IOR -t 4g:
        # thousands of chunk pieces each, every piece at least one drive command) get fewer calls,
        # never fewer than a generation of those in flight.
        pieces = getattr(model, "pieces_per_call", lambda: 1)()
        affordable = precision.max_device_ops / pieces  # calls whose pieces alone fill one budget
        warmup = max(
            math.ceil(min(precision.min_warmup, affordable)),
            precision.warmup_per_thread * threads,
            2 * model.outstanding(),
        )
        # In quarters, so that a write that finds a cache full stops a pilot early. A cache started at
        # its watermark must not be filling up: its entries are compared with those it held after the
        # first quarter, once the threads' first writes have opened their entries.
        for quarter, part in enumerate((warmup // 4, warmup // 4, warmup // 4, warmup - 3 * (warmup // 4))):
            if part:
                advance(part)
            if quarter == 0:
                held0 = platform.cache_held()
                platform.watch_write_buffers()
        # A cache started full of drawn random writes (:meth:`WriteBackCache.prefill`, swept) holds a
        # guess at the steady state, and the point drifts from it for as long as the guessed entries
        # last: PixStor's random writes ran 2% above their long runs, inside a drift too slow for MSER
        # to see. The warm-up runs on, a quarter of it at a time, until every such cache has destaged
        # as many entries as it started with (one turnover) or drained to its watermark (a cache the
        # load does not keep full), within an allowance of as many budgets as the measurement's own
        # transient allowance; a point cut short there measures from a start still partly guessed and
        # does not count as converged (its table marks it). Likewise every SSD write buffer, which
        # starts empty, must have been seen in the state the phase's writes keep it in, full or
        # empty between bursts (:meth:`SsdDrive.buffer_settled`), since the first quarter.
        allowance = platform.device_ops() + precision.max_device_ops * precision.transient_budget_factor

        def start_forgotten() -> bool:
            return platform.caches_turned_over() and platform.write_buffers_settled()

        while not start_forgotten() and platform.device_ops() < allowance:
            advance(max(warmup // 4, 1))
        turned_over = start_forgotten()
        # A batch must span a "generation" of the requests in flight, or batches correlate.
        least = math.ceil(min(precision.min_batch, affordable / precision.min_batches))
        floor = min(getattr(model, "batch_floor", 0), math.ceil(affordable / precision.min_batches))
        batch = max(least, threads, model.outstanding(), floor)
        ops0 = platform.device_ops()
        ceiling = hardware_ceiling(system, workload, op, threads)
        marks = [_Mark.take(env, meter, platform)]  # the state at every batch boundary
        amounts: list[float] = []  # what the application completed in each batch
        supplies: list[float] = []  # what reached its buffer (models that meter a supply only)
        durations: list[float] = []
        cut, settled, supplied = 0, False, False
        estimate = batch_estimate([1.0], [1.0])
        doublings = 0
        while True:
            if len(amounts) == precision.max_batches:
                if doublings == precision.max_doublings:
                    break
                # Out of batches with budget left: adjacent pairs become one batch of twice the size
                # and the point runs on with batches twice as long (sequential batch means).
                amounts, durations, supplies = _pairs(amounts), _pairs(durations), _pairs(supplies)
                marks = marks[::2]
                batch *= 2
                doublings += 1
            advance(batch)
            marks.append(_Mark.take(env, meter, platform))
            amounts.append(marks[-1].amount - marks[-2].amount)
            if meter.by_supply:
                supplies.append(marks[-1].supplied - marks[-2].supplied)
            durations.append(marks[-1].time - marks[-2].time)
            if len(amounts) < precision.min_batches:
                continue
            cut, settled, estimate = _settle(amounts, durations)
            supplied = False
            if supplies:
                # The supply has the application's long-run rate (its buffer is bounded) without the
                # bursts of in-order consumption; it stands in only while it agrees with the direct
                # estimate, which it does not while a buffer is still filling (a reader slower than
                # its prefetch).
                supply_cut, supply_settled, supply = _settle(supplies, durations)
                if estimate.low <= supply.mean <= estimate.high:
                    cut, settled, estimate, supplied = supply_cut, supply_settled, supply, True
            kept = len(amounts) - cut
            # An interval wholly above the hardware ceiling is a transient the window has not outlasted
            # (SSD write buffers filling at their link rate: a drive-bound write at 135 GB/s against a
            # 132 GB/s ceiling after 10 ms, an architect's what-if in session 34): the point runs on,
            # for MSER to find the transient, until the whole allowance is spent.
            above = _above(ceiling, estimate.low)
            if (
                settled
                and not above
                and kept >= precision.min_batches
                and estimate.rel_half_width <= precision.rel_precision
            ):
                break
            # The batches kept after a transient get a budget of their own; the measurement as a whole
            # (from the end of the warm-up) never spends more than the transient allowance.
            if marks[-1].ops - ops0 >= precision.max_device_ops * precision.transient_budget_factor:
                break
            if settled and not above and marks[-1].ops - marks[cut].ops >= precision.max_device_ops:
                break
        first, last = marks[cut], marks[-1]
        window = last.time - first.time
        # A supply kept out because it ran ahead: the buffer was filling, and in the long run the supply
        # slows to the consumer's rate, so the parts serving it are busy in that proportion
        # (utilisation law, U = X D); the consumer's own stations are not scaled.
        behind = 1.0
        if meter.by_supply and not supplied and last.supplied - first.supplied > last.amount - first.amount > 0:
            behind = (last.amount - first.amount) / (last.supplied - first.supplied)
        # At the watermark (a pilot that held) the writes are acknowledged from the caches and the drives
        # behind them destage what arrives: busy, but nothing waits for them.
        destagers = platform.destaging_drives(watched) if pilot else set()
        # Likewise SSDs whose write buffers kept up over the window: their flash programs what the
        # writes left, and none waited for it (one thread's writes named a drive 85% busy whose
        # flash a faster one did not change the rate of: a teaching review, session 34).
        off_path = destagers | platform.buffered_drives_keeping_up(first.buffers)
        waited = _caches_kept_full(first.cache_waits, platform.cache_waits_by_lun())
        utilization, bottleneck, pools, destaging = _utilization(
            platform, first.work, first.visits, window, behind, meter.consumers, first.waits, off_path, waited
        )
        if any(utilization.get(d, 0.0) >= DESTAGE_SATURATED for d in destagers):
            # A cache at its watermark destages only what arrives: drives busy all the time mean the
            # destages have work above the watermark all the time, so the load is at or past what they
            # can take and the cache is filling, however slowly. A cache filling by a few stripes a
            # second looks steady over a point's fraction of a second (beegfs-high-capacity with
            # controllers twice as fast: one writer at 2.81 GB/s from a RAID6 8+2 of 261 MB/s drives).
            outran()  # IOzone and IOR start again full; an mdtest phase is reported as not converged
        if outrun:  # an mdtest phase: its drives that could not keep up are on its path after all
            utilization, bottleneck, pools, destaging = _utilization(
                platform,
                first.work,
                first.visits,
                window,
                behind,
                meter.consumers,
                first.waits,
                off_path - destagers,
                waited,
            )
        behind_pools = _full_behind(platform, bottleneck, pools, first.waits)
        factor = None
        if mdtest or workload.benchmark.startswith("ior"):  # IOR -F reports the same way
            after, before = (
                (last.supplied_per_task, first.supplied_per_task) if supplied else (last.per_task, first.per_task)
            )
            per_task = [a - b for a, b in zip(after, before, strict=True)]
            if isinstance(workload, MdtestWorkload):
                work = float(workload.items_per_task(threads))
            else:
                work = _work_per_task(workload, threads, ctx.random)  # as the meter counts it
            factor, factor_low, factor_high = last_task_interval(per_task, window, work)
        scale = factor if factor is not None else 1.0
        open_close = None
        times = None
        if isinstance(workload, Workload) and estimate.mean * scale > 0:
            times = _handle_seconds(system, workload, op, threads, seed)
        if times and isinstance(workload, Workload):
            total = threads * _work_per_task(workload, threads, ctx.random)
            span = total / (estimate.mean * scale)  # the transfers' time (each IOzone child's, too)
            if workload.benchmark.startswith("ior"):
                # IOR's clock runs from the first open to the last close: total / (span + their time).
                open_close = max(times)
                scale *= span / (span + open_close)
            else:
                # IOzone adds up its children's rates, each over its records plus its own fsync and close.
                scale *= sum(span / (span + c) for c in times) / len(times)
                open_close = sum(times) / len(times)
        ci_low, ci_high = estimate.low * scale, estimate.high * scale
        if factor is not None and estimate.mean > 0:
            # The factor's own interval (from the spread of a finite number of tasks) and the aggregate
            # rate's are independent estimates with small relative errors: their margins add in
            # quadrature. The stopping rule looked at the aggregate only, since a longer run does not
            # narrow the factor's. (The opens and closes scale both sides alike.)
            value = estimate.mean * scale
            ci_low = value * (1 - math.hypot(1 - estimate.low / estimate.mean, 1 - factor_low / factor))
            ci_high = value * (1 + math.hypot(estimate.high / estimate.mean - 1, factor_high / factor - 1))
        # The aggregate rate's precision is what the stop rule waits for. The reported interval adds the
        # last-task term's margin, which a longer run does not narrow: when that makes it wider than the
        # precision, the point says so (an interval review found such IOR points marked converged).
        precise = estimate.rel_half_width <= precision.rel_precision
        spread_wide = precise and ci_high - ci_low > 2 * precision.rel_precision * estimate.mean * scale
        reasons = not_converged(
            precise and not spread_wide,
            imprecise="task_spread" if spread_wide else "precision",
            settled=settled,
            turned_over=turned_over,
            outrun=outrun,
            # The window's own rate, before IOR's last-task and open/close scaling (which only lower
            # it): a transient above the hardware is one whatever the benchmark's arithmetic makes of it.
            above=_above(ceiling, estimate.low),
        )
        return PointResult(
            workload=workload.name,
            benchmark=workload.benchmark,
            op=op,
            threads=threads,
            value=estimate.mean * scale,
            ci_low=ci_low,
            ci_high=ci_high,
            unit="op/s" if mdtest or ctx.random else "B/s",
            bottleneck=bottleneck,
            bottleneck_utilization=utilization.get(bottleneck, 0.0),
            utilization=dict(sorted(utilization.items())),
            pool_occupancy=dict(sorted(pools.items())),
            requests=last.count - first.count,
            requests_total=meter.count,
            events_total=scheduled_events(env),
            simulated_s=window,
            wall_s=time.perf_counter() - started,
            batches=len(amounts) - cut,
            transient_batches=cut,
            converged=not reasons,
            not_converged=reasons,
            bytes_moved=(last.supplied - first.supplied) if supplied else (last.amount - first.amount),
            file_bytes=workload.write_bytes
            if isinstance(workload, MdtestWorkload) and not op.startswith("dir_")
            else None,
            last_task_factor=factor,
            work_per_task=_work_per_task(workload, threads, ctx.random) if isinstance(workload, Workload) else 0.0,
            open_close_s=open_close,
            off_path=destaging,
            full_behind=behind_pools,
            turned_over=turned_over,
            ceiling_Bps=ceiling,
        )


def run_workload(
    system: System,
    workload: AnyWorkload,
    seed: int = 1,
    precision: Precision = DEFAULT_PRECISION,
    progress: Callable[[PointResult], None] | None = None,
) -> list[PointResult]:
    """Every (operation, thread count) point of a workload, in the order the benchmark runs them
    (``progress`` is called with every run: each point's, or with replications each of its runs')."""
    check_runnable(system, workload)
    points: list[PointResult] = []
    for op in workload.point_ops:
        for threads in workload.threads:
            runs = []
            for replication in range(precision.replications):
                runs.append(run_replication(system, workload, op, threads, seed, precision, replication))
                if progress is not None:
                    progress(runs[-1])
            points.append(combine_replications(runs, precision))
    return points
