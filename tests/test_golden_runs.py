"""Golden summaries of every shipped topology x its default suite (at two thread counts, to stay fast).

These pin the model's outputs: any change to a device, file-system or engine rule shows up here as
a diff to review. Regenerate with ``PFSSIM_UPDATE_GOLDEN=1 pytest tests/test_golden_runs.py``.
Correctness is argued elsewhere (hand-computed cases, properties, queueing theory, validation).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sim.benchmarks.cmdline.command import parse_command
from sim.benchmarks.driver import Precision, run_point
from sim.benchmarks.suite import default_workloads, run_suite
from sim.topology.build import load_system
from tests.conftest import TOPOLOGIES, UPDATE_GOLDEN

GOLDEN = Path(__file__).parent / "golden" / "run"
THREADS = [1, 8]


def _pinned(path: Path) -> list[dict]:
    system = load_system(path)
    workloads = [w.with_threads(THREADS) for w in default_workloads(system)]
    result = run_suite(system, workloads, seed=1)
    return [
        {
            "workload": p.workload,
            "op": p.op,
            "threads": p.threads,
            "value": p.value,
            "ci_low": p.ci_low,
            "ci_high": p.ci_high,
            "bottleneck": p.bottleneck,
        }
        for p in result.points
    ]


@pytest.mark.parametrize("path", TOPOLOGIES, ids=lambda p: p.stem)
def test_default_suite_is_pinned(path: Path) -> None:
    points = _pinned(path)
    golden = GOLDEN / f"{path.stem}.json"
    if UPDATE_GOLDEN:
        golden.write_text(json.dumps(points, indent=2) + "\n")
        pytest.skip(f"wrote {golden.name}: review the diff (a regenerated golden cannot check anything)")
    expected = json.loads(golden.read_text())
    assert [(p["workload"], p["op"], p["threads"], p["bottleneck"]) for p in points] == [
        (p["workload"], p["op"], p["threads"], p["bottleneck"]) for p in expected
    ]
    for got, want in zip(points, expected, strict=True):
        for key in ("value", "ci_low", "ci_high"):
            assert got[key] == pytest.approx(want[key], rel=1e-6), (got["workload"], got["op"], got["threads"], key)


@pytest.mark.parametrize(
    "command,op,value",
    [
        ("iozone -i 2 -w -I -O -r 16m -s 64g -t 1", "random_read", 36.8572584311489),
        ("iozone -i 0 -i 1 -c -e -w -I -r 16m -s 64g -t 1", "read", 634012610.8011466),
    ],
)
def test_gpfs_direct_records_of_several_blocks_are_pinned(command: str, op: str, value: float) -> None:
    # No shipped workload reads GPFS with O_DIRECT, so the suites above do not pin it. A 16 MiB
    # record is two 8 MiB blocks: both are drawn from the thread's stream before either request
    # starts and draws its NSD CPU time (session 28's review found them interleaved once requests
    # started at once, which moved these numbers without any test noticing).
    system = load_system(Path(__file__).parents[1] / "topologies" / "pixstor-large.yaml")
    point = run_point(system, parse_command(command), op, 1, seed=2, precision=Precision(max_device_ops=20_000))
    assert point.value == pytest.approx(value, rel=1e-9)
