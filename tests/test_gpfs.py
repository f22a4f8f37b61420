"""GPFS data path: pagepool copies, prefetch and write-behind threads (hand-computed cases)."""

from __future__ import annotations

import pytest

from sim.benchmarks.driver import run_point
from sim.benchmarks.workloads import find_workload
from sim.params import value
from sim.topology.build import load_system
from tests.conftest import ROOT

PIXSTOR = ROOT / "topologies" / "pixstor-large.yaml"


@pytest.mark.parametrize("op", ["write", "read"])
def test_one_buffered_stream_runs_at_its_own_copy_rate(op: str) -> None:
    # One IOzone thread on one client: the node's 72 threads move blocks faster than one core
    # copies them between the application's buffer and the pagepool, so the copy sets the rate.
    system = load_system(PIXSTOR)
    point = run_point(system, find_workload("pixstor-iozone-seq"), op, 1, seed=2)
    assert point.value == pytest.approx(value("client_memcpy_Bps"), rel=0.01)
    assert point.utilization[f"{system.clients[0]}.thread0"] == pytest.approx(1.0, abs=0.01)


def test_write_behind_keeps_the_arrays_busy_with_one_stream_per_node() -> None:
    # 16 threads, one per client: each stream may have its node's 72 write-behind threads busy, so
    # 16 x 72 block writes are in flight and the arrays' write paths (4 x 5.5 GB/s) are the limit.
    system = load_system(PIXSTOR)
    point = run_point(system, find_workload("pixstor-iozone-seq"), "write", 16, seed=2)
    assert point.value == pytest.approx(22e9, rel=0.02)
    assert ".ctrl" in point.bottleneck or ".drive" in point.bottleneck
