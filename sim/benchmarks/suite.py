"""Running a set of workloads on a system: the library call behind ``pfssim run``."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path

from sim.benchmarks.driver import DEFAULT_PRECISION, PointResult, Precision, run_workload
from sim.benchmarks.result import RunResult
from sim.benchmarks.workloads import find_workload
from sim.config.workload import AnyWorkload
from sim.errors import Problem, WorkloadError
from sim.topology.model import System


def default_workloads(system: System) -> list[AnyWorkload]:
    """The benchmarks the system's document ran (its ``benchmarks`` list)."""
    workloads: list[AnyWorkload] = []
    problems = []
    for i, name in enumerate(system.spec.benchmarks):
        try:
            workloads.append(find_workload(name, Path(system.file)))
        except WorkloadError as exc:
            line = system.source_map.line(("benchmarks", i)) if system.source_map else None
            problems += [Problem(system.file, line, f"benchmarks[{i}]", p.message) for p in exc.problems]
    if problems:
        raise WorkloadError(problems)
    return workloads


def run_suite(
    system: System,
    workloads: Sequence[AnyWorkload],
    seed: int = 1,
    precision: Precision = DEFAULT_PRECISION,
    progress: Callable[[PointResult], None] | None = None,
) -> RunResult:
    """Every point of every workload, with timing."""
    started = time.perf_counter()
    result = RunResult(system, list(workloads), seed, precision)
    for workload in workloads:
        result.points += run_workload(system, workload, seed, precision, progress)
    result.wall_s = time.perf_counter() - started
    return result
