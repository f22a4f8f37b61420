"""Running what the datasets need and scoring it: the library call behind ``pfssim reproduce``.

Every (system, workload, op, threads) a dataset needs is simulated once, at the workload's own
thread counts, with seed 1 and the default precision; points and shape checks of a benchmark
read the same curves. Points run in a pool of processes (2 by default, the cores of the
project's machines); each worker loads a topology once and keeps it for the points that follow.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from concurrent.futures import as_completed
from dataclasses import dataclass
from pathlib import Path

from sim.benchmarks.driver import PointResult, run_point
from sim.benchmarks.workloads import find_workload
from sim.config.workload import AnyWorkload
from sim.engine.workers import worker_pool
from sim.errors import PfssimError
from sim.topology.build import load_system
from sim.topology.model import System
from sim.validation.dataset import UNSCORED_THREADS, Dataset, load_datasets, load_known_misses
from sim.validation.score import PendingPoint, Reproduction, UnscoredRun, curves_of, score_benchmark

SEED = 1
DEFAULT_WORKERS = 2
#: (system, workload, op, threads): what makes a simulated point unique.
JobKey = tuple[str, str, str, int]


@dataclass(frozen=True)
class Job:
    """One point to simulate."""

    system: str
    topology: str
    workload: AnyWorkload
    op: str
    threads: int

    @property
    def key(self) -> JobKey:
        """(system, workload, op, threads): what makes a point unique."""
        return (self.system, self.workload.name, self.op, self.threads)


#: Called after each point with (points done, points in all, the job just finished).
Progress = Callable[[int, int, "Job"], None]

_SYSTEMS: dict[str, System] = {}


def _run_job(job: Job) -> PointResult:
    """Simulate one point; the topology is loaded once per process."""
    system = _SYSTEMS.get(job.topology)
    if system is None:
        system = _SYSTEMS[job.topology] = load_system(Path(job.topology))
    return run_point(system, job.workload, job.op, job.threads, SEED)


def simulate(
    jobs: Sequence[Job],
    workers: int = DEFAULT_WORKERS,
    progress: Progress | None = None,
) -> dict[JobKey, PointResult]:
    """Every job once; results by :attr:`Job.key`. ``workers`` <= 1 runs them in this process."""
    unique = list({job.key: job for job in jobs}.values())
    # Large thread counts are the slow points: start them first so no long one is left for the end.
    unique.sort(key=lambda job: -job.threads)
    results: dict[JobKey, PointResult] = {}
    if workers <= 1 or len(unique) <= 1:
        for job in unique:
            results[job.key] = _run_job(job)
            if progress is not None:
                progress(len(results), len(unique), job)
        return results
    with worker_pool(min(workers, len(unique))) as pool:
        futures = {pool.submit(_run_job, job): job for job in unique}
        for future in as_completed(futures):
            job = futures[future]
            results[job.key] = future.result()
            if progress is not None:
                progress(len(results), len(unique), job)
    return results


def select(datasets: Sequence[Dataset], systems: Sequence[str] | None) -> list[Dataset]:
    """The datasets of ``systems`` (all when None), in the order asked; unknown names are a :class:`PfssimError`."""
    if not systems:
        return list(datasets)
    by_name = {d.system: d for d in datasets}
    unknown = [s for s in systems if s not in by_name]
    if unknown:
        known = ", ".join(d.system for d in datasets)
        names = ", ".join(repr(s) for s in unknown)
        raise PfssimError(f"unknown system{'s' if len(unknown) > 1 else ''} {names}; known systems: {known}")
    return [by_name[s] for s in dict.fromkeys(systems)]


def _plan(datasets: Sequence[Dataset], include_unscored: bool) -> list[Job]:
    jobs: list[Job] = []
    for dataset in datasets:
        topology = str(dataset.topology)
        for bench in dataset.spec.benchmarks.values():
            if bench.pending is not None or bench.workload is None:
                continue
            workload = find_workload(bench.workload, dataset.topology)
            jobs += [
                Job(dataset.system, topology, workload, op, t) for op in workload.point_ops for t in workload.threads
            ]
        if include_unscored:
            for entry in dataset.spec.unscored:
                workload = _unscored_workload(dataset, entry.workload, entry.threads)
                jobs += [
                    Job(dataset.system, topology, workload, op, t)
                    for op in workload.point_ops
                    for t in workload.threads
                ]
    return jobs


def _unscored_workload(dataset: Dataset, name: str, threads: Sequence[int] | None) -> AnyWorkload:
    workload = find_workload(name, dataset.topology)
    wanted = list(threads) if threads else [t for t in workload.threads if t in UNSCORED_THREADS]
    return workload.with_threads(wanted or list(UNSCORED_THREADS))


def figure_names(systems: Sequence[str] | None = None, directory: Path | None = None) -> list[str]:
    """The names (without ``.png``) of the figures a reproduction of ``systems`` draws, known
    before anything is simulated, so their files can be checked first."""
    names = []
    for dataset in select(load_datasets(directory), systems):
        for name, bench in dataset.spec.benchmarks.items():
            if bench.pending is None and bench.workload is not None:
                names.append(f"{dataset.system}-{name}")
        for entry in dataset.spec.unscored:
            names.append(f"{dataset.system}-{_unscored_workload(dataset, entry.workload, entry.threads).name}")
    return names


def _points(results: dict[JobKey, PointResult], system: str, workload: AnyWorkload) -> list[PointResult]:
    """A workload's points in the order the benchmark runs them (its ops, then its thread counts)."""
    return [results[(system, workload.name, op, t)] for op in workload.point_ops for t in workload.threads]


def reproduce(
    systems: Sequence[str] | None = None,
    directory: Path | None = None,
    workers: int = DEFAULT_WORKERS,
    include_unscored: bool = True,
    progress: Progress | None = None,
) -> Reproduction:
    """Simulate and score the datasets of ``systems`` (all by default)."""
    started = time.perf_counter()
    every = load_datasets(directory)
    datasets = select(every, systems)
    misses = load_known_misses(directory, every)
    jobs = _plan(datasets, include_unscored)
    results = simulate(jobs, workers, progress)
    repro = Reproduction(
        [d.system for d in datasets],
        misses=misses,
        documents={d.system: " ".join(d.spec.document.split()) for d in datasets},
        simulated_points=len(results),
    )
    for dataset in datasets:
        for name, bench in dataset.spec.benchmarks.items():
            if bench.pending is not None or bench.workload is None:
                reason = bench.pending or "no workload"
                repro.pending += [PendingPoint(dataset.system, name, p, reason) for p in bench.points]
                continue
            points = _points(results, dataset.system, find_workload(bench.workload, dataset.topology))
            repro.benchmarks.append(score_benchmark(dataset.system, name, bench, points, misses))
        if include_unscored:
            for entry in dataset.spec.unscored:
                workload = _unscored_workload(dataset, entry.workload, entry.threads)
                points = _points(results, dataset.system, workload)
                repro.unscored.append(
                    UnscoredRun(dataset.system, workload.name, workload.benchmark, entry.why, curves_of(points))
                )
    repro.wall_s = time.perf_counter() - started
    return repro
