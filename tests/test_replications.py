"""Independent replications of a point (``Precision.replications``, ``pfssim run --replications``)."""

from __future__ import annotations

import contextlib
import json
import math
from dataclasses import replace
from pathlib import Path

import pytest

from sim.benchmarks.driver import (
    PointResult,
    Precision,
    combine_replications,
    replication_seed,
    run_point,
    run_replication,
)
from sim.benchmarks.suite import run_suite
from sim.config.workload import Workload
from sim.engine.stats import t95
from sim.topology.build import load_system
from tests.conftest import run_cli

TINY = Path(__file__).parent / "data" / "tiny.yaml"


def _random_writes() -> Workload:
    return Workload(
        name="w",
        title="w",
        source="test",
        benchmark="iozone_random_nn",
        ops=["random_write"],
        record_size="4 KiB",
        direct_io=True,
        fsync=True,
        aggregate_size="1 TB",
        threads=[8],
    )


def _point(value: float, bottleneck: str, utilization: dict[str, float], **fields: object) -> PointResult:
    point = PointResult("w", "iozone_random_nn", "random_write", 8, value, value, value, "op/s", bottleneck, 0.0)
    return replace(point, utilization=utilization, **fields)  # type: ignore[arg-type]


def test_the_first_replication_is_the_run_seed_itself_and_the_others_are_derived() -> None:
    assert replication_seed(7, 0) == 7
    derived = [replication_seed(7, r) for r in range(1, 6)]
    assert len(set(derived)) == 5 and 7 not in derived
    assert derived == [replication_seed(7, r) for r in range(1, 6)]  # the same every time
    assert replication_seed(8, 1) != replication_seed(7, 1)


def test_a_replicated_point_is_the_mean_of_its_runs_with_an_interval_from_their_spread() -> None:
    system = load_system(TINY)
    workload = _random_writes()
    precision = Precision(replications=3)
    runs = [run_replication(system, workload, "random_write", 8, 5, precision, r) for r in range(3)]
    point = run_point(system, workload, "random_write", 8, seed=5, precision=precision)
    values = [run.value for run in runs]
    assert len(set(values)) == 3, "independent seeds give different runs"
    mean = sum(values) / 3
    half = t95(2) * math.sqrt(sum((v - mean) ** 2 for v in values) / 2) / math.sqrt(3)
    assert point.value == pytest.approx(mean, rel=1e-12)
    assert point.ci_low == pytest.approx(mean - half, rel=1e-12)
    assert point.ci_high == pytest.approx(mean + half, rel=1e-12)
    assert point.replications == 3 and point.to_json()["replications"] == 3
    assert point.requests_total == sum(run.requests_total for run in runs)
    assert point.converged == (half / mean <= precision.rel_precision)
    # The first run is the point a run of one replication gives, with the same seed.
    alone = run_point(system, workload, "random_write", 8, seed=5)
    assert (alone.value, alone.ci_low, alone.ci_high, alone.utilization) == (
        runs[0].value,
        runs[0].ci_low,
        runs[0].ci_high,
        runs[0].utilization,
    )
    assert alone.replications == 1 and "replications" not in alone.to_json()


def test_combined_runs_name_the_part_most_of_them_name_and_average_every_utilisation() -> None:
    cases = [  # value, bottleneck, utilisations, pool occupancy, requests, last-task factor
        (100.0, "a", {"a": 0.9, "b": 0.8}, {"p": 1.0}, 10, 0.98),
        (110.0, "b", {"b": 0.95}, {"p": 0.5}, 20, 0.96),
        (120.0, "b", {"a": 0.6, "b": 1.0}, {}, 30, 0.97),
    ]
    runs = [
        _point(v, name, u, pool_occupancy=pools, requests=n, last_task_factor=f, bottleneck_utilization=u[name])
        for v, name, u, pools, n, f in cases
    ]
    point = combine_replications(runs, Precision(replications=3))
    assert point.bottleneck == "b" and point.bottleneck_runs == 2
    assert point.to_json()["bottleneck_runs"] == 2
    assert point.utilization == {"a": pytest.approx(0.5), "b": pytest.approx((0.8 + 0.95 + 1.0) / 3)}
    # Each run's own bottleneck's utilisation, averaged (what the runs were held by).
    assert point.bottleneck_utilization == pytest.approx((0.9 + 0.95 + 1.0) / 3)
    assert point.pool_occupancy == {"p": pytest.approx(0.5)}
    assert point.requests == 60 and point.last_task_factor == pytest.approx(0.97)
    # Half the runs each way: the earlier run's part.
    assert combine_replications(runs[:2], Precision(replications=2)).bottleneck == "a"
    # Identical runs (a bottleneck at a fixed rate): a zero-width interval around their value.
    same = combine_replications([runs[0], runs[0]], Precision(replications=2))
    assert (same.value, same.ci_low, same.ci_high, same.converged) == (100.0, 100.0, 100.0, True)


def test_runs_held_by_different_parts_combine_as_held_by_capacity() -> None:
    # Each seed draws another layout and another array saturates (beegfs-high-capacity with the
    # randomized chooser, 8 writers): every run is capacity-bound at 1.00, but the part most of
    # them name is 1/3 busy averaged over all. Read from that average the point was labelled
    # latency-bound ("more requests in flight would raise it"; an architect's review, session 33).
    from sim.report.run import bottleneck_text

    parts = ("me4084-0.vd1.drives", "me4084-2.ctrlA.write", "me4084-1.ctrlB.write")
    runs = [
        _point(12e9 + i, name, {p: (1.0 if p == name else 0.1) for p in parts}, bottleneck_utilization=1.0)
        for i, name in enumerate(parts)
    ]
    point = combine_replications(runs, Precision(replications=3))
    assert point.bottleneck == parts[0] and point.bottleneck_runs == 1
    assert point.utilization[parts[0]] == pytest.approx(0.4)
    assert point.bottleneck_utilization == 1.0 and point.limit == "capacity"
    shown = bottleneck_text(point.bottleneck, point.bottleneck_utilization, point.replications, point.bottleneck_runs)
    assert shown == "me4084-0.vd1.drives (1 of 3 runs)"
    assert bottleneck_text("x", 1.0, 3, 3) == "x"


def test_combined_runs_are_not_converged_if_any_run_measured_before_its_caches_turned_over() -> None:
    # Three runs that agree closely (an interval far inside the precision); one of them measured
    # from a start its caches had not turned over: the point is not converged and says why.
    runs = [_point(v, "a", {"a": 1.0}) for v in (100.0, 100.1, 99.9)]
    assert combine_replications(runs, Precision(replications=3)).converged
    runs[1] = replace(runs[1], turned_over=False)
    point = combine_replications(runs, Precision(replications=3))
    assert (point.converged, point.turned_over) == (False, False)
    # A run that never settled, or whose caches were filling, says so in the combined point too
    # (they were dropped: an interval review found one of three runs' codes lost).
    runs[1] = replace(runs[1], turned_over=True, converged=False, not_converged=("not_settled", "outran"))
    point = combine_replications(runs, Precision(replications=3))
    assert (point.converged, point.not_converged) == (False, ("not_settled", "outran"))
    runs[1] = replace(runs[1], converged=False, not_converged=("precision",))  # the runs' spread replaces it
    assert combine_replications(runs, Precision(replications=3)).converged


def test_replications_below_one_are_refused() -> None:
    with pytest.raises(ValueError, match="replications"):
        Precision(replications=0)


def test_replicated_runs_in_two_processes_give_the_points_of_one() -> None:
    system = load_system(TINY)
    workload = _random_writes().with_threads([2, 8])
    precision = Precision(replications=2)
    one = run_suite(system, [workload], seed=3, precision=precision, workers=1).points
    two = run_suite(system, [workload], seed=3, precision=precision, workers=2).points
    assert [(p.threads, p.value, p.ci_low, p.ci_high, p.bottleneck, p.replications) for p in one] == [
        (p.threads, p.value, p.ci_low, p.ci_high, p.bottleneck, p.replications) for p in two
    ]
    assert [p.replications for p in one] == [2, 2]


def test_the_cli_takes_replications_and_records_them() -> None:
    args = ("run", str(TINY), "--workload", "beegfs-hp-iozone-random", "--threads", "8")
    result = run_cli(*args, "--replications", "2", "--json")
    assert result.code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["inputs"]["precision"]["replications"] == 2
    assert [p["replications"] for p in data["points"]] == [2, 2]
    table = run_cli(*args, "--replications", "2")
    assert table.code == 0 and "each point is the mean of 2 independent runs" in table.stdout
    for bad in ("0", "32", "two", "-1", "1.5"):
        refused = run_cli(*args, "--replications", bad)
        assert refused.code == 2 and refused.stdout == "", bad
        assert "--replications" in refused.stderr and "whole number from 1 to 31" in refused.stderr, refused.stderr
    assert "replications" not in json.loads(run_cli(*args, "--json").stdout)["inputs"]["precision"]


def test_a_pool_named_by_the_runs_keeps_its_occupancy_when_they_combine() -> None:
    # A run lists a pool among its utilisations only when it names it; each run named another of
    # sixteen full connection pools, so averaged as utilisations the named one read 1/3 busy and
    # the point latency-bound, while every run was capacity-bound (session 22 review).
    full = {"c0->s": 1.0, "c1->s": 1.0, "c2->s": 1.0}
    runs = [
        _point(100.0, name, {"drive": 0.6, name: 1.0}, pool_occupancy=full, requests=1, bottleneck_utilization=1.0)
        for name in ("c0->s", "c1->s", "c2->s")
    ]
    point = combine_replications(runs, Precision(replications=3))
    assert point.bottleneck == "c0->s"  # a three-way tie: the first run's
    assert point.bottleneck_utilization == 1.0 and point.limit == "capacity"
    assert point.utilization == {"drive": pytest.approx(0.6), "c0->s": 1.0}
    assert point.pool_occupancy == full


def test_the_runs_of_a_single_point_share_the_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    import sim.benchmarks.suite as suite

    pools: list[int] = []
    real = suite.worker_pool

    def counted(workers: int):  # noqa: ANN202 - the pool's context manager
        pools.append(workers)
        return real(workers)

    monkeypatch.setattr(suite, "worker_pool", counted)
    system = load_system(TINY)
    workload = _random_writes()
    two = run_suite(system, [workload], seed=3, precision=Precision(replications=2), workers=2).points
    one = run_suite(system, [workload], seed=3, precision=Precision(replications=2), workers=1).points
    assert pools == [2]  # one point, two runs: two processes
    assert [(p.value, p.ci_low, p.ci_high) for p in two] == [(p.value, p.ci_low, p.ci_high) for p in one]


def _tiny_workload(benchmark: str, record: str, op: str, **settings: object) -> Workload:
    """A one-operation IOzone workload (O_DIRECT unless ``settings`` say otherwise)."""
    fields: dict[str, object] = {"direct_io": True, "fsync": True, "aggregate_size": "1 TB", "threads": [8]}
    return Workload(
        name="w", title="w", source="test", benchmark=benchmark, ops=[op], record_size=record, **{**fields, **settings}
    )  # type: ignore[arg-type]


class _Enough(Exception):
    """Raised to cut a run off once a test has seen what it looks at."""


def _completions_asked(
    monkeypatch: pytest.MonkeyPatch,
    workload: Workload,
    op: str,
    threads: int,
    precision: Precision,
    system_path: Path = TINY,
    stop: int | None = None,
) -> list[int]:
    """Every number of completions a run of the point (on the tiny system unless ``system_path``)
    waits for, in order: the warm-up's quarters, then one per batch (the driver's only use of
    ``Meter.after``); with ``stop``, the run is cut off as it asks for the ``stop``-th."""
    from sim.engine.meter import Meter

    asked: list[int] = []
    after = Meter.after

    def spy(self: Meter, completions: int):  # noqa: ANN202 - an event
        asked.append(completions)
        if len(asked) == stop:
            raise _Enough
        return after(self, completions)

    monkeypatch.setattr(Meter, "after", spy)
    with contextlib.suppress(_Enough):
        run_replication(load_system(system_path), workload, op, threads, 1, precision, 0)
    return asked


@pytest.mark.parametrize(
    ("threads", "record", "precision", "expected"),
    [
        # Warm-up max(min_warmup, warmup_per_thread x threads, 2 x requests in flight), in quarters,
        # the last taking the remainder; then batches of max(min_batch, threads, in flight).
        (8, "4 KiB", Precision(min_warmup=1, warmup_per_thread=1), [4, 4, 4, 4, 100]),  # 2 x 8 in flight
        (8, "4 KiB", Precision(min_warmup=1, warmup_per_thread=5), [10, 10, 10, 10, 100]),  # 5 x 8 threads
        (2, "4 KiB", Precision(min_warmup=30, warmup_per_thread=1, min_batch=3), [7, 7, 7, 9, 3]),
        # Calls of four 2 MiB chunk pieces and a budget of 400 drive commands: 100 calls fill it, so
        # the warm-up is 100 calls and a batch a tenth of them (min_batches), not min_batch.
        (2, "8 MiB", Precision(max_device_ops=400), [25, 25, 25, 25, 10]),
    ],
)
def test_the_warm_up_and_the_first_batch_have_the_sizes_the_precision_asks(
    monkeypatch: pytest.MonkeyPatch, threads: int, record: str, precision: Precision, expected: list[int]
) -> None:
    random = record == "4 KiB"
    workload = _tiny_workload(
        "iozone_random_nn" if random else "iozone_seq_nn", record, "random_read" if random else "read"
    )
    asked = _completions_asked(monkeypatch, workload, workload.ops[0], threads, precision)
    assert asked[:5] == expected


def _unreachable(**settings: int) -> Precision:
    """A precision no point reaches (so only batch counts and budgets end a point), batches of 10."""
    return Precision(rel_precision=1e-12, min_batches=2, min_batch=10, **settings)


def test_batches_merge_in_pairs_at_the_cap_and_run_on_twice_as_long_at_most_max_doublings_times(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A precision no point reaches and a budget no point spends: four batches of 10 (the cap), the
    # pairs merge into two, two more of 20 make four again, and with max_doublings=1 the point ends.
    precision = _unreachable(max_batches=4, max_doublings=1, min_warmup=8, max_device_ops=10**9)
    workload = _tiny_workload("iozone_random_nn", "4 KiB", "random_read")
    asked = _completions_asked(monkeypatch, workload, "random_read", 2, precision)
    assert asked == [2, 2, 2, 2, 10, 10, 10, 10, 20, 20]


@pytest.mark.parametrize(
    ("kept", "settled", "budgets"),
    [
        (None, True, 1),  # settled from the first batch: the kept batches spend one budget
        (None, False, 3),  # never settled: the whole transient allowance, transient_budget_factor budgets
        (2, True, 3),  # settled, but only the last two batches kept: they never spend a budget
    ],
)
def test_a_point_stops_when_its_kept_batches_spend_a_budget_or_the_measurement_the_transient_allowance(
    monkeypatch: pytest.MonkeyPatch, kept: int | None, settled: bool, budgets: int
) -> None:
    # MSER is replaced by a fixed verdict, and the precision is one no point reaches, so that only
    # the device budget ends the point: at the first batch whose drive commands, counted from the
    # first kept batch (or, for the allowance, from the end of the warm-up), reach the limit.
    from sim.benchmarks import driver

    ops: list[int] = []
    take = driver._Mark.take.__func__  # type: ignore[attr-defined]

    def spy(cls, env, meter, platform):  # noqa: ANN001, ANN202 - records each batch boundary's commands
        mark = take(cls, env, meter, platform)
        ops.append(mark.ops)
        return mark

    monkeypatch.setattr(driver._Mark, "take", classmethod(spy))
    monkeypatch.setattr(driver, "mser_cut", lambda rates: (0 if kept is None else len(rates) - kept, settled))
    precision = _unreachable(max_batches=400, max_doublings=0, max_device_ops=200, transient_budget_factor=3)
    workload = _tiny_workload("iozone_random_nn", "4 KiB", "random_read")
    point = run_replication(load_system(TINY), workload, "random_read", 2, 1, precision, 0)
    assert ops[-1] - ops[0] >= budgets * 200 > ops[-2] - ops[0]
    assert point.batches == (len(ops) - 1 if kept is None else kept)


@pytest.mark.parametrize(("factor", "turned_over"), [(4, True), (1, False)])
def test_the_turnover_warm_up_may_spend_transient_budget_factor_budgets(factor: int, turned_over: bool) -> None:
    # beegfs-high-capacity's random writes at 8 threads start again with their caches full of drawn
    # writes; turning that start over takes between 24,000 and 32,000 drive commands (seed 1). With a
    # budget of 10,000 commands, an allowance of four budgets outlasts it and one budget does not: the
    # point then measures from a start still partly guessed and is not converged (precision loose).
    from tests.conftest import ROOT

    system = load_system(ROOT / "topologies" / "beegfs-high-capacity.yaml")
    precision = Precision(
        rel_precision=10.0,
        min_batches=2,
        max_batches=6,
        min_batch=10,
        max_device_ops=10_000,
        transient_budget_factor=factor,
    )
    point = run_point(system, _random_writes(), "random_write", 8, seed=1, precision=precision)
    assert (point.turned_over, point.converged) == (turned_over, turned_over)


@pytest.mark.parametrize(("ceiling", "converged"), [(99.0, True), (98.5, False), (None, True)])
def test_combined_runs_are_not_converged_only_when_their_whole_interval_lies_above_the_ceiling(
    ceiling: float | None, converged: bool
) -> None:
    # 100, 100.5 and 99.5: a mean of 100 +- t95(2) x 0.5 / sqrt(3) = +-1.24 (within 2%). No steady
    # state exceeds the ceiling, but an interval that reaches below it (98.76 < 99) may hold one.
    runs = [_point(v, "a", {"a": 1.0}, ceiling_Bps=ceiling) for v in (100.0, 100.5, 99.5)]
    point = combine_replications(runs, Precision(replications=3))
    assert point.ci_low == pytest.approx(100.0 - t95(2) * 0.5 / math.sqrt(3), rel=1e-12)
    assert (point.converged, point.above_ceiling) == (converged, not converged)


def test_the_interval_of_combined_runs_that_disagree_widely_stops_at_zero() -> None:
    # 10 and 90: a mean of 50 +- t95(1) x 56.6 / sqrt(2) = +-508; no rate is negative, so the
    # interval's lower end is 0 (and the point far from converged).
    point = combine_replications(
        [_point(10.0, "a", {"a": 1.0}), _point(90.0, "a", {"a": 1.0})], Precision(replications=2)
    )
    half = t95(1) * math.sqrt(2 * 40.0**2) / math.sqrt(2)
    assert (point.value, point.ci_low, point.converged) == (50.0, 0.0, False)
    assert point.ci_high == pytest.approx(50.0 + half, rel=1e-12)


def test_a_bandwidth_points_ceiling_is_the_max_flow_from_the_clients_its_threads_run_on() -> None:
    # The tiny system's two clients: one thread runs on client0 alone, two and more on both; the
    # ceiling of a sequential point is pfssim show's max-flow from those clients, and a rate of
    # operations (random I/O) has none.
    from sim.benchmarks.driver import clients_used, hardware_ceiling
    from sim.topology.bounds import max_flow_bound

    system = load_system(TINY)
    workload = _tiny_workload("iozone_seq_nn", "1 MiB", "write")
    assert [sorted(clients_used(system, workload, t)) for t in (1, 2, 3)] == [
        ["client0"],
        ["client0", "client1"],
        ["client0", "client1"],
    ]
    one = frozenset({"client0"})
    assert hardware_ceiling(system, workload, "write", 1) == max_flow_bound(system, "write", one).Bps
    assert hardware_ceiling(system, _random_writes(), "random_write", 1) is None


def test_a_batch_has_at_least_one_request_per_thread_even_when_fewer_are_in_flight(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # 200 GPFS buffered readers on one PixStor client share its 72 prefetch threads: 72 calls in
    # flight, fewer than the threads. The warm-up is 2 calls a thread (400, in quarters of 100) and a batch
    # spans a request of every thread: 200, not min_batch's 100 nor the 72 in flight.
    from tests.conftest import ROOT

    workload = _tiny_workload("iozone_seq_nn", "1 MiB", "read", direct_io=False, placement="one_client")
    path = ROOT / "topologies" / "pixstor-large.yaml"
    asked = _completions_asked(monkeypatch, workload, "read", 200, Precision(), system_path=path, stop=5)
    assert asked == [100, 100, 100, 100, 200]


@pytest.mark.parametrize(("grown", "filling"), [(0, False), (1, False), (2, True)])
def test_a_cache_is_filling_once_it_grew_by_more_than_a_round_of_destages(grown: int, filling: bool) -> None:
    # A cache at its watermark that gained up to its destages in flight (one round of destages can
    # clear that) may be steady; one more entry and it gains faster than it destages: the pilot's
    # sign to start again full. ``grown`` counts rounds: 0 none, 1 exactly a round, 2 a round and one.
    from tests.conftest import ROOT, build_model

    system = load_system(ROOT / "topologies" / "beegfs-high-capacity.yaml")
    model = build_model(system, _random_writes(), "random_write", 8)
    platform = model.ctx.platform
    platform.cache_fill = 0.5
    model.prefill_caches()
    held = platform.cache_held()
    caches = {vdisk: cache for c in platform.controllers.values() for vdisk, cache in c.caches.items()}
    vdisk = max(sorted(caches), key=lambda v: caches[v].destagers)  # a data target's, prefilled
    gain = {0: 0, 1: caches[vdisk].destagers, 2: caches[vdisk].destagers + 1}[grown]
    assert caches[vdisk].destagers > 1 and held[vdisk] > gain
    assert platform.caches_filling({**held, vdisk: held[vdisk] - gain}) is filling
    assert not platform.caches_filling(held)


def test_a_pilot_stops_at_once_when_a_write_finds_a_cache_full(monkeypatch: pytest.MonkeyPatch) -> None:
    # A write that found a cache full (made to be the case from the start here) says the load
    # outruns the destages of caches started at their watermark: the pilot stops at the end of the
    # first stretch it runs, the warm-up's first quarter (50 of 200 writes), to start again full.
    from sim.benchmarks import driver
    from sim.fs.platform import Platform
    from tests.conftest import ROOT

    monkeypatch.setattr(Platform, "cache_waits", lambda self, luns=None: 1)
    system = load_system(ROOT / "topologies" / "beegfs-high-capacity.yaml")
    with pytest.raises(driver._CacheFilled) as caught:
        driver._steady_point(system, _random_writes(), "random_write", 8, 1, Precision(), 0.5)
    assert caught.value.requests == 50


def test_the_write_buffers_are_settled_only_when_every_drives_buffer_is() -> None:
    # The tiny system's three P4600s (4 MiB write buffers): a write that finds the data drive's
    # flash busy and its buffer with room shows neither long-run state (full, or empty between
    # bursts); the metadata drives, not written since, are settled, but the platform is not.
    from tests.conftest import build_model

    model = build_model(load_system(TINY), _tiny_workload("iozone_seq_nn", "1 MiB", "write"), "write", 1)
    platform = model.ctx.platform
    drive = platform.drives["storage.numa0.drive0"]
    platform.watch_write_buffers()
    assert platform.write_buffers_settled()  # nothing written
    drive.finish_time("write", 0.0, 1e6)  # the flash was idle: settled
    assert platform.write_buffers_settled()
    platform.watch_write_buffers()
    drive.finish_time("write", 1e6, 1e6)  # queued behind the first, room in the buffer
    assert not drive.buffer_settled() and not platform.write_buffers_settled()
    assert all(d.buffer_settled() for name, d in platform.drives.items() if name != drive.name)
