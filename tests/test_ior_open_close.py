"""IOR's clock runs from the first open to the last close: the tasks' opens and closes count."""

from __future__ import annotations

import pytest

from sim.benchmarks import driver
from sim.benchmarks.cmdline import parse_command
from sim.benchmarks.driver import run_point
from sim.fs.handles import handle_seconds
from sim.params import value
from sim.topology.build import load_system
from tests.conftest import ROOT

HDR100 = ROOT / "topologies" / "beegfs-hdr100.yaml"
PIXSTOR = ROOT / "topologies" / "pixstor-large.yaml"


def _ior(block: str, tasks: int = 16, per_process: bool = True) -> object:
    return parse_command(f"mpirun -np {tasks} ior -a POSIX -w -r -e -B {'-F ' if per_process else ''}-t 1m -b {block}")


def test_opens_and_closes_lengthen_the_timed_run(monkeypatch: pytest.MonkeyPatch) -> None:
    # The same point with the opens and closes left out (0 s): the reported rate is the bytes over
    # the transfers' time plus the opens' and closes', exactly.
    system = load_system(HDR100)
    workload = _ior("1m")
    point = run_point(system, workload, "write", 16, seed=4)
    seconds = point.open_close_s
    # IOR's clock stops at the last close: the slowest task's opens and closes, not a typical one.
    times = handle_seconds(system, workload, "write", 16, driver._replica_seed(4, -1))
    assert times is not None and min(times) < max(times)
    assert seconds == max(times)
    # Two requests to the directory's metadata service (open with O_CREAT, close), each at least
    # a round trip: the phase cannot be shorter.
    assert seconds >= 4 * value("network_latency_s")
    monkeypatch.setattr(driver, "_handle_seconds", lambda *args: None)
    bare = run_point(system, workload, "write", 16, seed=4)
    total = 16 * 2**20
    assert point.value == pytest.approx(total / (total / bare.value + seconds), rel=1e-12)
    assert point.ci_low / point.value == pytest.approx(bare.ci_low / bare.value, rel=1e-9)
    assert point.to_json()["open_close_seconds"] == seconds


def test_their_share_shrinks_with_the_block() -> None:
    # A 1 MiB block per task spends a visible part of IOR's time opening and closing; 1 GiB, none
    # to speak of (the shipped runs move gigabytes per task).
    system = load_system(HDR100)
    small = run_point(system, _ior("1m"), "write", 16, seed=4)
    large = run_point(system, _ior("1g"), "write", 16, seed=4)
    assert small.open_close_share > 0.05
    assert large.open_close_share < small.open_close_share / 100


def test_gpfs_creates_in_one_directory_take_its_token_in_turn() -> None:
    # IOR -F makes its files in one directory: on GPFS each node's create takes the directory's
    # token over from the last one, one at a time, while the read phase's opens and closes are
    # the nodes' own cached calls.
    system = load_system(PIXSTOR)
    write = run_point(system, _ior("1m"), "write", 16, seed=4)
    read = run_point(system, _ior("1m"), "read", 16, seed=4)
    assert write.open_close_s is not None and read.open_close_s is not None
    assert write.open_close_s > 16 * 4 * value("network_latency_s")  # 16 takeovers, one after another
    assert write.open_close_s > 10 * read.open_close_s
