"""Independent replications of a point (``Precision.replications``, ``pfssim run --replications``)."""

from __future__ import annotations

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
    runs = [
        _point(100.0, "a", {"a": 0.9, "b": 0.8}, pool_occupancy={"p": 1.0}, requests=10, last_task_factor=0.98),
        _point(110.0, "b", {"b": 0.95}, pool_occupancy={"p": 0.5}, requests=20, last_task_factor=0.96),
        _point(120.0, "b", {"a": 0.6, "b": 1.0}, pool_occupancy={}, requests=30, last_task_factor=0.97),
    ]
    point = combine_replications(runs, Precision(replications=3))
    assert point.bottleneck == "b"
    assert point.utilization == {"a": pytest.approx(0.5), "b": pytest.approx((0.8 + 0.95 + 1.0) / 3)}
    assert point.bottleneck_utilization == point.utilization["b"]
    assert point.pool_occupancy == {"p": pytest.approx(0.5)}
    assert point.requests == 60 and point.last_task_factor == pytest.approx(0.97)
    # Half the runs each way: the earlier run's part.
    assert combine_replications(runs[:2], Precision(replications=2)).bottleneck == "a"
    # Identical runs (a bottleneck at a fixed rate): a zero-width interval around their value.
    same = combine_replications([runs[0], runs[0]], Precision(replications=2))
    assert (same.value, same.ci_low, same.ci_high, same.converged) == (100.0, 100.0, 100.0, True)


def test_combined_runs_are_not_converged_if_any_run_measured_before_its_caches_turned_over() -> None:
    # Three runs that agree closely (an interval far inside the precision); one of them measured
    # from a start its caches had not turned over: the point is not converged and says why.
    runs = [_point(v, "a", {"a": 1.0}) for v in (100.0, 100.1, 99.9)]
    assert combine_replications(runs, Precision(replications=3)).converged
    runs[1] = replace(runs[1], turned_over=False)
    point = combine_replications(runs, Precision(replications=3))
    assert (point.converged, point.turned_over) == (False, False)


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
        _point(100.0, name, {"drive": 0.6, name: 1.0}, pool_occupancy=full, requests=1)
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
