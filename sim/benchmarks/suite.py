"""Running a set of workloads on a system: the library call behind ``pfssim run``.

Points are independent (each has its own model and streams from the master seed), and so are the
runs of a point with replications, so they can run in a pool of processes and come back in the
benchmark's order with the same numbers as in one.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import as_completed
from pathlib import Path

from sim.benchmarks.driver import (
    DEFAULT_PRECISION,
    PointResult,
    Precision,
    combine_replications,
    run_replication,
    run_workload,
)
from sim.benchmarks.result import RunResult
from sim.benchmarks.runnable import check_all_runnable
from sim.benchmarks.workloads import find_workload
from sim.config.workload import AnyWorkload
from sim.engine.workers import worker_pool
from sim.errors import Problem, WorkloadError
from sim.topology.model import System


def default_workloads(system: System) -> list[AnyWorkload]:
    """The benchmarks the system's document ran (its ``benchmarks`` list)."""
    workloads: list[AnyWorkload] = []
    problems = []
    for i, name in enumerate(system.spec.benchmarks):
        try:
            workloads.append(find_workload(name, Path(system.file), base=Path(system.file).parent))
        except WorkloadError as exc:
            line = system.source_map.line(("benchmarks", i)) if system.source_map else None
            problems += [
                # A problem inside the workload's own file keeps that file's name and place.
                Problem(system.file, line, f"benchmarks[{i}]", p.message)
                if p.file in ("--workload", system.file)
                else Problem(system.file, line, f"benchmarks[{i}]", f"in the workload: {p}")
                for p in exc.problems
            ]
    if problems:
        raise WorkloadError(problems)
    return workloads


#: What forked workers simulate: (system, workloads, seed, precision), set before the pool starts.
_SUITE: tuple[System, Sequence[AnyWorkload], int, Precision] | None = None
#: Held while ``_SUITE`` is set and its pool forks: two threads of one process running suites in
#: workers take turns (one's workers got the other's system, a scripting audit found).
_SUITE_LOCK = threading.Lock()


def _run_suite_point(task: tuple[int, str, int, int]) -> PointResult:
    assert _SUITE is not None
    system, workloads, seed, precision = _SUITE
    index, op, threads, replication = task
    return run_replication(system, workloads[index], op, threads, seed, precision, replication)


def run_suite(
    system: System,
    workloads: Sequence[AnyWorkload],
    seed: int = 1,
    precision: Precision = DEFAULT_PRECISION,
    progress: Callable[[PointResult], None] | None = None,
    workers: int = 1,
) -> RunResult:
    """Every point of every workload, with timing; ``workers`` > 1 simulates points (and each run of
    a point with ``precision.replications``) in that many processes (the points and their order are
    the same). ``progress`` is called with every run as it ends: each point's, or with replications
    each of its runs'."""
    global _SUITE
    started = time.perf_counter()
    result = RunResult(system, list(workloads), seed, precision)
    tasks = [(i, op, threads) for i, w in enumerate(workloads) for op in w.point_ops for threads in w.threads]
    check_all_runnable(system, workloads)  # every refusal before any point is simulated
    if workers <= 1 or len(tasks) * precision.replications <= 1:  # one run: nothing to share out
        for workload in workloads:
            result.points += run_workload(system, workload, seed, precision, progress)
    else:
        runs: dict[tuple[int, str, int, int], PointResult] = {}
        # Large thread counts are the slow points: start them first so no long one is left for the end.
        replications = range(precision.replications)
        order = sorted(((*task, r) for task in tasks for r in replications), key=lambda run: -run[2])
        with _SUITE_LOCK:
            _SUITE = (system, workloads, seed, precision)
            try:
                # No more processes than runs: --workers 5000 on a four-point run forks four.
                with worker_pool(min(workers, len(order))) as pool:
                    futures = {pool.submit(_run_suite_point, task): task for task in order}
                    for future in as_completed(futures):
                        run = runs[futures[future]] = future.result()
                        if progress is not None:
                            progress(run)
            finally:
                _SUITE = None
        result.points = [combine_replications([runs[(*task, r)] for r in replications], precision) for task in tasks]
    result.wall_s = time.perf_counter() - started
    return result
