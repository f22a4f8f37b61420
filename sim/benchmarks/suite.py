"""Running a set of workloads on a system: the library call behind ``pfssim run``."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path

from sim.benchmarks.driver import DEFAULT_PRECISION, PointResult, Precision, run_workload
from sim.benchmarks.result import RunResult
from sim.benchmarks.workloads import find_workload
from sim.config.workload import AnyWorkload, MdtestWorkload, Workload
from sim.errors import Problem, WorkloadError
from sim.topology.model import System


def require_modelled(workloads: list[AnyWorkload]) -> list[Workload]:
    """The workloads as data-path workloads; MDtest is refused until the metadata model exists."""
    modelled: list[Workload] = []
    for w in workloads:
        if isinstance(w, MdtestWorkload):
            raise WorkloadError(
                [
                    Problem(
                        w.name,
                        None,
                        "benchmark",
                        "MDtest workloads load and validate, but the metadata model is not built "
                        "yet (it is the MDtest issue); run IOzone or IOR workloads for now",
                    )
                ]
            )
        modelled.append(w)
    return modelled


def default_workloads(system: System) -> list[Workload]:
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
    return require_modelled(workloads)


def run_suite(
    system: System,
    workloads: Sequence[AnyWorkload],
    seed: int = 1,
    precision: Precision = DEFAULT_PRECISION,
    progress: Callable[[PointResult], None] | None = None,
) -> RunResult:
    """Every point of every workload, with timing."""
    modelled = require_modelled(list(workloads))  # refuses before anything is simulated
    started = time.perf_counter()
    result = RunResult(system, modelled, seed, precision)
    for workload in modelled:
        result.points += run_workload(system, workload, seed, precision, progress)
    result.wall_s = time.perf_counter() - started
    return result
