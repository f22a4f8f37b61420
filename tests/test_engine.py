"""The kernel against queueing theory (M/M/1, M/M/c) and unit traces of stations, pools and joins."""

from __future__ import annotations

import math
import random
import weakref

import pytest
import simpy
from hypothesis import given
from hypothesis import strategies as st

from sim.engine.core import (
    Environment,
    Pool,
    Station,
    StationGroup,
    TandemStation,
    Task,
    collector_paused,
    fire,
    join,
    on_done,
    stop_when_safe,
    succeed_in,
    when_all,
)
from sim.engine.rng import Stream, Streams
from sim.engine.stats import batch_estimate, mser_cut, t95


def _poisson_responses(servers: int, arrival_rate: float, service_mean: float, jobs: int, seed: int) -> float:
    env = simpy.Environment()
    station = Station(env, "q", servers)
    arrivals = Stream(seed, "arrivals")
    services = Stream(seed, "services")
    total = [0.0]

    def source():  # noqa: ANN202
        for _ in range(jobs):
            yield env.timeout(arrivals.exponential(1.0 / arrival_rate))
            total[0] += station.reserve(services.exponential(service_mean)) - env.now

    env.process(source())
    env.run()
    return total[0] / jobs


def test_mm1_mean_response() -> None:
    # M/M/1, rho = 0.5: W = 1 / (mu - lambda) = 2 service times.
    w = _poisson_responses(1, 0.5, 1.0, 200_000, seed=7)
    assert w == pytest.approx(2.0, rel=0.03)


def _erlang_c(c: int, a: float) -> float:
    top = a**c / math.factorial(c) * c / (c - a)
    return top / (sum(a**k / math.factorial(k) for k in range(c)) + top)


def test_mmc_mean_response() -> None:
    # M/M/4 with offered load 3 (rho = 0.75): W = C(4, 3) / (4 mu - lambda) + 1 / mu.
    expected = _erlang_c(4, 3.0) / (4.0 - 3.0) + 1.0
    w = _poisson_responses(4, 3.0, 1.0, 200_000, seed=11)
    assert w == pytest.approx(expected, rel=0.03)


@given(
    st.lists(
        st.tuples(st.floats(0.0, 2.0, allow_nan=False), st.floats(0.01, 3.0, allow_nan=False)), min_size=1, max_size=60
    ),
    st.sampled_from([(1, 1), (2, 3), (4, 1), (3, 3)]),
)
def test_a_station_group_serves_as_one_station_with_all_its_servers(
    jobs: list[tuple[float, float]], sizes: tuple[int, int]
) -> None:
    """Jobs booked on a group of stations finish when they would on one FCFS station with all the
    members' servers (Lindley's recursion over the union), and the members' busy time adds up to
    the group's work."""
    env = simpy.Environment()
    group = StationGroup([Station(env, "a", sizes[0]), Station(env, "b", sizes[1])])
    alone = Station(env, "one", sum(sizes))
    assert group.servers == sum(sizes)
    finished: list[tuple[float, float]] = []

    def arrivals():  # noqa: ANN202
        for gap, duration in jobs:
            yield env.timeout(gap)
            finished.append((group.reserve(duration), alone.reserve(duration)))

    env.process(arrivals())
    env.run()
    assert all(a == pytest.approx(b, abs=1e-9) for a, b in finished)
    assert sum(m.work for m in group.members) == pytest.approx(alone.work)


def test_an_idle_station_group_spreads_its_jobs_over_its_members() -> None:
    # Jobs that each find every server free go to the member with the least work so far, so two
    # single-server members of a lightly loaded group take turns instead of the first taking all.
    env = simpy.Environment()
    a, b = Station(env, "a", 1), Station(env, "b", 1)
    group = StationGroup([a, b])

    def arrivals():  # noqa: ANN202
        for _ in range(10):
            yield env.timeout(1.0)
            group.reserve(0.1)

    env.process(arrivals())
    env.run()
    assert (a.visits, b.visits) == (5, 5)


def test_pool_with_announced_releases_is_an_mmc_queue() -> None:
    """A pool of 4 slots whose holders announce their release (``release_at``) at arrival, fed by
    Poisson arrivals with exponential holds, is an M/M/4 queue with FIFO waiting: the mean wait
    for a slot is Erlang C / (c mu - lambda), and the pool's occupancy is lambda / mu slots."""
    env = simpy.Environment()
    pool = Pool(env, "slots", 4)
    arrivals = Stream(13, "arrivals")
    holds = Stream(13, "holds")
    jobs = 100_000
    waited = [0.0]

    def job(hold: float):  # noqa: ANN202
        arrived = env.now
        wait = pool.acquire()
        if wait is not None:
            yield wait
        waited[0] += env.now - arrived
        pool.release_at(env.now + hold)

    def source():  # noqa: ANN202
        for _ in range(jobs):
            yield env.timeout(arrivals.exponential(1.0 / 3.0))
            env.process(job(holds.exponential(1.0)))

    env.process(source())
    env.run()
    assert waited[0] / jobs == pytest.approx(_erlang_c(4, 3.0) / (4.0 - 3.0), rel=0.05)
    assert pool.done_work() / env.now == pytest.approx(3.0, rel=0.02)


def test_fcfs_trace_is_lindley() -> None:
    env = simpy.Environment()
    station = Station(env, "link", 1)
    assert station.reserve(2.0) == 2.0  # idle: starts now
    assert station.reserve(3.0) == 5.0  # waits for the first
    env.run(until=10.0)
    assert station.reserve(1.0) == 11.0  # idle again
    assert station.work == 6.0 and station.visits == 3


def test_multi_server_takes_the_earliest_free() -> None:
    env = simpy.Environment()
    station = Station(env, "cpu", 2)
    assert [station.reserve(d) for d in (4.0, 1.0, 1.0, 1.0)] == [4.0, 1.0, 2.0, 3.0]


def test_done_work_never_exceeds_elapsed_server_time() -> None:
    env = simpy.Environment()
    station = Station(env, "link", 1)
    for _ in range(5):
        station.reserve(2.0)
    env.run(until=3.0)
    assert station.done_work() == 3.0  # 10 s booked, 3 s done


def test_two_transfers_share_a_link_in_order() -> None:
    env = simpy.Environment()
    link = Station(env, "link", 1)
    ends = []

    def transfer():  # noqa: ANN202
        yield link.serve(1e6 / 1e9)
        ends.append(env.now)

    env.process(transfer())
    env.process(transfer())
    env.run()
    assert ends == pytest.approx([1e-3, 2e-3])  # together they move 2 MB in 2 ms: the link's rate


def test_pool_hands_slots_over_in_order() -> None:
    env = simpy.Environment()
    pool = Pool(env, "workers", 1)
    assert pool.acquire() is None
    first, second = pool.acquire(), pool.acquire()
    assert first is not None and second is not None
    pool.release()
    assert first.triggered and not second.triggered
    assert not pool.try_acquire()


def test_a_released_slot_runs_its_waiter_inside_the_release() -> None:
    # The waiter goes on at once (fire), not in an event after those already due at this moment.
    env = simpy.Environment()
    pool = Pool(env, "workers", 1)
    assert pool.acquire() is None
    log: list[str] = []

    def waiter():  # noqa: ANN202 - a generator of events
        wait = pool.acquire()
        assert wait is not None
        yield wait
        log.append("got the slot")

    env.process(waiter())
    env.run()
    env.timeout(0.0).callbacks.append(lambda _event: log.append("same moment"))
    pool.release()
    log.append("after release")
    env.run()
    assert log == ["got the slot", "after release", "same moment"]
    assert pool.used == 1 and pool.visits == 2


def test_fire_processes_the_event_inside_the_caller() -> None:
    env = simpy.Environment()
    event = env.event()
    order: list[str] = []
    event.callbacks.append(lambda _event: order.append("waiter"))
    env.timeout(0.0).callbacks.append(lambda _event: order.append("same moment"))
    fire(event)
    order.append("caller")
    assert event.processed and event.ok and event.value is None
    assert order == ["waiter", "caller"]

    def late():  # noqa: ANN202 - a generator of events
        got = yield event  # already processed: goes on at once
        order.append(f"late {got}")

    env.process(late())
    env.run()
    # The process starts first (its start is urgent) and goes on at once past the processed event.
    assert order == ["waiter", "caller", "late None", "same moment"] and env.now == 0.0


def test_a_long_run_of_waiters_that_give_the_slot_straight_back_does_not_exhaust_the_stack() -> None:
    # Each hands the slot on inside its own call (fire): 5,000 in a row nested 5,000 deep until
    # fire began to schedule beyond FIRE_DEPTH (GPFS mdtest tasks sharing a directory whose
    # token their node already holds take the directory lock and give it straight back).
    env = simpy.Environment()
    pool = Pool(env, "lock", 1)
    got: list[int] = []

    def holder():  # noqa: ANN202 - a generator of events
        assert pool.acquire() is None
        yield env.timeout(1.0)
        pool.release()

    def waiter(i: int):  # noqa: ANN202 - a generator of events
        wait = pool.acquire()
        assert wait is not None
        yield wait
        got.append(i)
        pool.release()

    env.process(holder())
    for i in range(5000):
        env.process(waiter(i))
    env.run()
    assert got == list(range(5000)) and env.now == 1.0 and pool.used == 0


def test_a_join_of_events_that_have_all_fired_is_still_to_be_processed() -> None:
    # The caller may add a callback to what join returns; a processed event would refuse it.
    env = simpy.Environment()
    seen: list[str] = []
    on_done(join(env, []), lambda: seen.append("none"))
    fired = [env.timeout(0.0), env.timeout(0.0)]
    env.run()
    on_done(join(env, fired), lambda: seen.append("fired"))
    env.run()
    assert seen == ["none", "fired"]


def test_firing_the_run_target_stops_the_run_and_not_the_process_that_fired_it() -> None:
    env = Environment()
    target = env.event()
    log: list[str] = []

    def firing():  # noqa: ANN202 - a generator of events
        yield env.timeout(1.0)
        fire(target)
        log.append("went on")
        yield env.timeout(1.0)
        log.append("ended")

    process = env.process(firing())
    env.run(until=target)
    assert env.now == 1.0 and log == ["went on"]
    env.run()
    assert log == ["went on", "ended"] and process.ok


def test_an_announced_release_and_a_release_at_one_moment_hand_over_in_arrival_order() -> None:
    # release() first applies the release announced for this moment, which hands its slot over by
    # an event; the slot it frees itself must then not overtake it (fire would run it at once).
    env = Environment()
    pool = Pool(env, "workers", 2)
    assert pool.acquire() is None and pool.acquire() is None
    pool.release_at(1.0)
    log: list[str] = []

    def releasing():  # noqa: ANN202 - a generator of events
        yield env.timeout(1.0)
        pool.release()

    def waiter(name: str, arrives: float):  # noqa: ANN202 - a generator of events
        yield env.timeout(arrives)
        wait = pool.acquire()
        assert wait is not None
        yield wait
        log.append(name)

    env.process(releasing())
    env.process(waiter("first", 0.1))
    env.process(waiter("second", 0.2))
    env.run()
    assert log == ["first", "second"]


def test_a_join_is_processed_as_its_last_event_fires() -> None:
    env = simpy.Environment()
    done = join(env, [env.timeout(1.0), env.timeout(2.0)])
    order: list[tuple[str, float]] = []
    same = env.timeout(2.0)  # scheduled after the joined events, for the same moment as the last
    same.callbacks.append(lambda _event: order.append(("same moment", env.now)))
    done.callbacks.append(lambda _event: order.append(("joined", env.now)))
    env.run()
    assert order == [("joined", 2.0), ("same moment", 2.0)]


def test_release_at_hands_the_slot_to_a_waiter_at_that_time() -> None:
    env = simpy.Environment()
    pool = Pool(env, "workers", 1)
    assert pool.acquire() is None
    pool.release_at(2.0)  # no event of its own while nobody waits
    got: list[float] = []

    def waiter():  # noqa: ANN202
        yield env.timeout(0.5)
        wait = pool.acquire()
        assert wait is not None  # the slot is still held until t = 2
        yield wait
        got.append(env.now)
        pool.release_at(env.now + 1.0)

    env.process(waiter())
    env.run()
    assert got == [2.0]
    assert env.now == 2.0  # the last release needed no timer: nobody was waiting
    assert pool.done_work() == pytest.approx(2.0)  # held over [0, 2] so far, and still held
    env.run(until=5.0)
    assert pool.done_work() == pytest.approx(3.0)  # held over [0, 2] and [2, 3]
    assert pool.used == 0 and pool.visits == 2


@given(
    size=st.integers(1, 3),
    jobs=st.lists(st.tuples(st.floats(0.0, 2.0), st.floats(0.01, 1.0)), min_size=1, max_size=12),
)
def test_release_at_is_release_after_a_timeout(size: int, jobs: list[tuple[float, float]]) -> None:
    """Announcing a release (``release_at``) gives the same grants and occupancy as releasing it
    from a process that sleeps until then."""

    def run(lazy: bool) -> tuple[list[float], float]:
        env = simpy.Environment()
        pool = Pool(env, "p", size)
        granted = [0.0] * len(jobs)

        def job(i: int, arrive: float, hold: float):  # noqa: ANN202
            yield env.timeout(arrive)
            wait = pool.acquire()
            if wait is not None:
                yield wait
            granted[i] = env.now
            if lazy:
                pool.release_at(env.now + hold)
            else:
                yield env.timeout(hold)
                pool.release()

        for i, (arrive, hold) in enumerate(jobs):
            env.process(job(i, arrive, hold))
        env.run(until=100.0)
        return granted, pool.done_work()

    eager, lazy = run(False), run(True)
    assert lazy[0] == pytest.approx(eager[0])
    assert lazy[1] == pytest.approx(eager[1])
    assert eager[1] == pytest.approx(sum(hold for _, hold in jobs))


@given(
    jobs=st.lists(st.tuples(st.floats(0.0, 1.0), st.floats(0.0, 0.3), st.floats(0.0, 0.3)), min_size=1, max_size=15),
    probes=st.lists(st.floats(0.0, 6.0), min_size=1, max_size=4),
)
def test_tandem_station_booked_ahead_is_the_two_stage_queue(
    jobs: list[tuple[float, float, float]], probes: list[float]
) -> None:
    """A second FCFS stage booked when the job enters the first (``reserve_from``) gives the
    finish times and busy time of booking it when the job reaches it."""

    def run(ahead: bool) -> tuple[list[float], list[float]]:
        env = simpy.Environment()
        first = Station(env, "first", 1)
        second = TandemStation(env, "second") if ahead else Station(env, "second", 1)
        ends = [0.0] * len(jobs)
        seen: list[float] = []

        def job(i: int, arrive: float, s1: float, s2: float):  # noqa: ANN202
            yield env.timeout(arrive)
            if ahead:
                assert isinstance(second, TandemStation)
                end = second.reserve_from(first.reserve(s1), s2)
                yield env.timeout(end - env.now)
            else:
                yield first.serve(s1)
                yield second.serve(s2)
            ends[i] = env.now

        def probe(at: float):  # noqa: ANN202
            yield env.timeout(at)
            seen.append(second.done_work())

        for i, (arrive, s1, s2) in enumerate(jobs):
            env.process(job(i, arrive, s1, s2))
        for at in probes:
            env.process(probe(at))
        env.run()
        return ends, seen

    (two_stage, busy), (booked, booked_busy) = run(False), run(True)
    assert booked == pytest.approx(two_stage)
    assert booked_busy == pytest.approx(busy, abs=1e-9)


def test_succeed_in_fires_the_event_once_and_runs_first_before_waiters() -> None:
    env = simpy.Environment()
    done = env.event()
    order: list[tuple[str, float]] = []
    done.callbacks.append(lambda _e: order.append(("waiter", env.now)))
    succeed_in(env, done, 2.5, lambda _e: order.append(("first", env.now)))
    env.run()
    assert order == [("first", 2.5), ("waiter", 2.5)]
    assert done.processed and done.ok and done.value is None


def test_join_waits_for_all() -> None:
    env = simpy.Environment()
    done = join(env, [env.timeout(1.0), env.timeout(3.0), env.timeout(2.0)])
    env.run(until=done)
    assert env.now == 3.0


def test_when_all_runs_its_action_once_as_the_last_event_fires() -> None:
    env = simpy.Environment()
    seen: list[float] = []
    when_all([env.timeout(1.0), env.timeout(3.0), env.timeout(2.0)], lambda: seen.append(env.now))
    env.run()
    assert seen == [3.0]
    # Events already processed count as arrived; with all of them (or none) the action runs at once.
    when_all([env.timeout(0.0)], lambda: seen.append(-1.0))
    env.run()
    assert seen == [3.0, -1.0]
    fired = env.timeout(1.0)
    env.run()
    when_all([fired], lambda: seen.append(env.now))
    when_all([], lambda: seen.append(0.0))
    assert seen == [3.0, -1.0, 4.0, 0.0]


def test_a_task_runs_its_generator_like_a_process_without_start_and_end_events() -> None:
    env = simpy.Environment()
    steps: list[tuple[str, float]] = []

    def request(name: str, wait: float):  # noqa: ANN202 - a generator of events
        steps.append((name, env.now))
        got = yield env.timeout(wait, value=wait)
        steps.append((name + " woke", got))
        yield env.timeout(0.0)
        return name

    task = Task(env, request("a", 2.0))
    assert steps == [("a", 0.0)]  # its first step ran at once
    both = join(env, [task, Task(env, request("b", 1.0))])
    env.run(until=both)
    assert env.now == 2.0 and task.processed and task.value == "a"
    assert steps == [("a", 0.0), ("b", 0.0), ("b woke", 1.0), ("a woke", 2.0)]
    # A waiter's callback runs as the generator returns, with no event between: before an event
    # scheduled for that same moment while the generator ran.
    order: list[str] = []

    def last_step():  # noqa: ANN202 - a generator of events
        yield env.timeout(1.0)
        env.timeout(0.0).callbacks.append(lambda _event: order.append("same moment"))
        return None

    Task(env, last_step()).callbacks.append(lambda _event: order.append("waiter"))
    env.run()
    assert order == ["waiter", "same moment"] and env.now == 3.0
    # An event that fails is thrown into the generator, which may handle it.
    failing = env.event()

    def handler():  # noqa: ANN202 - a generator of events
        try:
            yield failing
        except ValueError as exc:
            return f"handled {exc}"
        return "not reached"

    handled = Task(env, handler())
    failing.fail(ValueError("bad"))
    env.run()
    assert handled.value == "handled bad"


def test_a_finished_task_is_freed_without_the_cycle_collector() -> None:
    # A point runs with the collector off (collector_paused) and makes tens of thousands of tasks:
    # one that referred to itself (a bound method kept on it) would stay until the collector ran.
    env = simpy.Environment()

    def request():  # noqa: ANN202 - a generator of events
        yield env.timeout(1.0)

    with collector_paused():
        task = Task(env, request())
        env.run()
        finished = weakref.ref(task)
        del task
        assert finished() is None


def test_streams_are_reproducible_and_independent() -> None:
    a, b = Streams(5), Streams(5)
    xs = [a("drive0").uniform() for _ in range(100)]
    assert xs == [b("drive0").uniform() for _ in range(100)]
    assert xs != [Streams(5)("drive1").uniform() for _ in range(100)]
    assert xs != [Streams(6)("drive0").uniform() for _ in range(100)]
    assert all(0.0 <= x < 1.0 for x in xs)


def test_a_stream_is_pcg64_from_the_digest_of_its_seed_and_name() -> None:
    # The seeding is the contract behind "same seed, same numbers on every machine": a stream's
    # first words are PCG64's from the BLAKE2b-256 digest of "seed/name" (state and increment,
    # four little-endian 64-bit words), through PCG64's own seeding rule (pcg64_set_seed:
    # increment made odd, state advanced), retyped here rather than taken from sim.engine.rng.
    import hashlib

    import numpy as np

    words = hashlib.blake2b(b"7/storage3.numa1.target2", digest_size=32).digest()
    w = [int.from_bytes(words[8 * i : 8 * i + 8], "little") for i in range(4)]
    seed, inc = (w[0] << 64) | w[1], (w[2] << 64) | w[3]
    mult = 0x2360ED051FC65DA44385DF649FCCF645
    mask = (1 << 128) - 1
    state, increment = 0, ((inc << 1) | 1) & mask

    def step(s: int) -> int:
        return (s * mult + increment) & mask

    state = step((step(state) + seed) & mask)
    ours = np.random.PCG64()
    ours.state = {"bit_generator": "PCG64", "state": {"state": state, "inc": increment}, "has_uint32": 0, "uinteger": 0}
    expected = np.random.Generator(ours).random(5).tolist()
    stream = Stream(7, "storage3.numa1.target2")
    assert [stream.uniform() for _ in range(5)] == expected


def test_the_cycle_collector_is_off_inside_a_point_and_as_it_was_after() -> None:
    import gc

    from sim.engine.core import collector_paused

    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # a caller that had it off keeps it off
    finally:
        gc.enable()
    with pytest.raises(KeyError), collector_paused():
        raise KeyError("x")
    assert gc.isenabled()  # back on after an exception too


def test_batch_estimate_interval() -> None:
    est = batch_estimate([10.0, 12.0, 11.0, 9.0], [1.0, 1.0, 1.0, 1.0])
    assert est.mean == 10.5
    sd = math.sqrt(sum((x - 10.5) ** 2 for x in (10, 12, 11, 9)) / 3)
    assert est.high - est.mean == pytest.approx(t95(3) * sd / 2)


def test_batch_estimate_edges() -> None:
    # A very noisy series: the interval's lower end stops at zero (a rate is never negative).
    assert batch_estimate([1.0, 100.0, 1.0, 100.0], [1.0] * 4).low == 0.0
    # A point that moved nothing has no finite relative width (and does not divide by zero).
    assert batch_estimate([0.0, 0.0, 0.0], [1.0, 1.0, 1.0]).rel_half_width == math.inf
    assert batch_estimate([], []).mean == 0.0


def test_batch_estimate_is_total_amount_over_total_time() -> None:
    # Batches of unequal length: the rate is 40 / 3, not the mean of the batch rates (10 and 15).
    assert batch_estimate([10.0, 30.0], [1.0, 2.0]).mean == pytest.approx(40 / 3)


def test_t_quantiles_are_the_tables() -> None:
    # Student's t, 97.5% quantiles (any statistics table): 1, 3, 10 and 30 degrees of freedom, and
    # beyond the table's 30 rows 40, 60 and 120 (2.021, 2.000, 1.980), where the normal's 1.96
    # would be 2-3% narrow; the quantile falls towards 1.96 as the degrees of freedom grow.
    assert [round(t95(d), 3) for d in (1, 3, 10, 30)] == [12.706, 3.182, 2.228, 2.042]
    assert [round(t95(d), 3) for d in (40, 60, 120)] == [2.021, 2.0, 1.98]
    assert t95(31) < t95(30) and all(t95(d) > t95(d + 1) > 1.96 for d in range(31, 2000, 7))
    assert t95(10**6) == pytest.approx(1.96, abs=1e-4) and t95(0) == math.inf


def test_mser_keeps_a_stationary_series_whole() -> None:
    rng = random.Random(3)
    rates = [100.0 + rng.gauss(0.0, 2.0) for _ in range(20)]
    cut, settled = mser_cut(rates)
    assert settled
    assert cut <= 3


def test_mser_drops_an_initial_transient() -> None:
    rng = random.Random(4)
    # Five slow batches (a cache filling), then a steady state around 200.
    rates = [50.0, 80.0, 120.0, 150.0, 180.0] + [200.0 + rng.gauss(0.0, 3.0) for _ in range(15)]
    cut, settled = mser_cut(rates)
    assert settled
    assert cut == 5


def test_mser_says_when_the_transient_has_not_ended() -> None:
    # Still drifting down at the end of the series: no cut in its first half can be trusted.
    rates = [30.0 - i for i in range(12)]
    cut, settled = mser_cut(rates)
    assert not settled
    assert cut == 6


def test_mser_keeps_a_noiseless_series_whole() -> None:
    # Every cut ties (the statistic is 0): the earliest wins, and the series has settled.
    assert mser_cut([5.0] * 10) == (0, True)


def test_mser_needs_a_few_batches() -> None:
    assert mser_cut([1.0, 2.0, 3.0]) == (0, False)


@given(
    st.lists(st.floats(-1.0, 1.0), min_size=10, max_size=40),
    st.integers(1, 4),
    st.floats(50.0, 1000.0),
)
def test_mser_cuts_at_least_a_large_step(noise: list[float], step: int, offset: float) -> None:
    # A start far below a steady state whose noise is tiny against the step is always cut.
    rates = [100.0 - offset] * step + [100.0 + x for x in noise]
    cut, settled = mser_cut(rates)
    assert cut >= step


def test_a_meter_counts_each_request_once_for_its_own_thread_and_wakes_after_exactly_n() -> None:
    # progress() moves the amount as work is done, add() the rest and the request count; both, and
    # supply(), are kept per thread. after(2) fires at the second completion after it, not before.
    from sim.engine.meter import Meter

    env = simpy.Environment()
    meter = Meter(env, 3)
    meter.progress(1, 30.0)
    meter.add(1, 70.0)
    meter.add(2, 5.0)
    assert (meter.amount, meter.count, meter.per_thread) == (105.0, 2, [0.0, 100.0, 5.0])
    meter.supply(2, 4.0)
    meter.supply(2, 6.0)
    meter.supply(0, 1.0)
    assert (meter.supplied, meter.supplied_per_thread) == (11.0, [1.0, 0.0, 10.0])
    event = meter.after(2)
    meter.add(0, 1.0)
    assert not event.triggered
    meter.add(0, 1.0)
    assert event.triggered and meter.per_thread == [2.0, 100.0, 5.0]


def test_a_component_asking_for_its_stream_again_continues_it_and_no_mean_draws_nothing() -> None:
    # Streams hands a name the same stream each time: a second call continues the draws rather than
    # restarting them (which would repeat the numbers). An exponential of mean 0 or below is 0.
    streams = Streams(3)
    first = streams("target0").uniform()
    second = streams("target0").uniform()
    fresh = Stream(3, "target0")
    assert [first, second] == [fresh.uniform(), fresh.uniform()] and first != second
    assert streams("target0") is streams("target0")
    assert (fresh.exponential(0.0), fresh.exponential(-1.0)) == (0.0, 0.0)


def test_acquire_first_takes_the_first_pool_to_hand_a_slot_over_and_withdraws_from_the_other() -> None:
    # Two full pools: the caller queues at both (ahead of a waiter already at the first), takes the
    # slot of the one released first, leaves the other's queue, and a slot the other hands over in
    # the same moment goes back to it.
    from sim.engine.core import acquire_first

    env = simpy.Environment()
    a, b = Pool(env, "a", 1), Pool(env, "b", 1)
    assert acquire_first(env, (a, b)) == (a, None)  # a free slot: the first pool's, at once
    assert acquire_first(env, (a, b)) == (b, None)
    waiter = a.acquire()
    free, wait = acquire_first(env, (a, b), ahead=True)
    assert free is None and wait is not None and a.queue[0] is not waiter and len(b.queue) == 1
    got: list[object] = []

    def holder():  # noqa: ANN202
        yield env.timeout(1.0)
        b.release()  # b frees first
        yield env.timeout(1.0)
        a.release()  # then a: its slot goes to the earlier waiter, not to the caller

    def caller():  # noqa: ANN202
        got.append((yield wait))

    env.process(holder())
    env.process(caller())
    env.run()
    assert got == [b] and not b.queue and a.queue.count(waiter) == 0 and waiter.triggered
    assert (a.used, b.used) == (1, 1)  # a: the earlier waiter's; b: the caller's
    # Both pools handing over in the same moment: the second slot is given back.
    c, d = Pool(env, "c", 1), Pool(env, "d", 1)
    c.acquire(), d.acquire()
    free, wait = acquire_first(env, (c, d))
    c.release()
    d.release()
    env.run()
    assert wait.value is c and (c.used, d.used) == (1, 0)


def test_a_stop_asked_for_during_a_run_is_raised_when_the_run_returns() -> None:
    # A signal handler calls stop_when_safe: inside a run the stop waits until the run returns
    # (compiled device models abort the process on an exception raised into them mid-call: a
    # newcomer's review), outside it is raised at once.
    env = Environment()
    seen: list[float] = []
    env.timeout(1.0).callbacks.append(lambda _event: stop_when_safe(KeyboardInterrupt()))
    env.timeout(2.0).callbacks.append(lambda _event: seen.append(env.now))
    with pytest.raises(KeyboardInterrupt):
        env.run(until=env.timeout(3.0))
    assert seen == [2.0] and env.now == 3.0  # the run went on to its end, then stopped
    env.run(until=env.timeout(1.0))  # the stop was raised once, and is gone
    with pytest.raises(KeyboardInterrupt):
        stop_when_safe(KeyboardInterrupt())
