"""Speed of pfssim: wall time, simulated requests per second and peak memory of each default suite.

"req/s" counts every benchmark request the engine simulated (warm-up included) per second of wall
time, set-up included; "req/s@top" is the same over the IOzone and IOR points (I/O requests) at the
suite's largest thread count, and "md@top" over its MDtest points there (metadata operations).
"ev/req" is the SimPy events scheduled per simulated request over the suite: unlike the times, it
does not depend on how busy the machine is, so it shows an engine change's effect on any machine.
"ref req/s" is plain SimPy on the reference network of engine-speed.md (bench/engine_reference.py),
run before the first suite and after each (the mean of the runs either side of a suite); the
machine's speed drifts over minutes, so "@top ref" scales req/s@top by 63,500 / that figure: what
the suite's I/O points would do at its top thread count on the machine engine-speed.md measured,
the figure the "30,000 simulated I/O requests per second at 1024 threads" target is read against
("md ref" is md@top scaled the same way).
Below each suite, one line per workload gives its points and wall time (an MDtest workload's line
is its full sweep: every thread count, all four phases).

Run: ``python bench/bench_suites.py [TOPOLOGY...] [--threads 1,1024]`` (or ``tox -e bench``). Each
suite runs in its own process so that its peak resident memory is its own. This is a benchmark that
prints figures, not a test: nothing here passes or fails.
"""

from __future__ import annotations

import argparse
import multiprocessing
import queue as queue_module
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

from engine_reference import REFERENCE_RATE, reference_rate  # noqa: E402


def _measure(topology: str, threads: list[int] | None, queue: multiprocessing.Queue) -> None:
    from sim.benchmarks.suite import default_workloads, run_suite
    from sim.topology.build import load_system

    system = load_system(topology)
    workloads = default_workloads(system)
    if threads:
        workloads = [w.with_threads(threads) for w in workloads]
    started = time.perf_counter()
    result = run_suite(system, workloads, seed=1)
    wall = time.perf_counter() - started
    requests = sum(p.requests_total for p in result.points)
    events = sum(p.events_total for p in result.points)
    slowest = max(result.points, key=lambda p: p.wall_s)
    top = max(p.threads for p in result.points)
    at_top = [p for p in result.points if p.threads == top and p.benchmark != "mdtest"]
    md_top = [p for p in result.points if p.threads == top and p.benchmark == "mdtest"]
    rate_top = sum(p.requests_total for p in at_top) / sum(p.wall_s for p in at_top) if at_top else 0.0
    rate_md = sum(p.requests_total for p in md_top) / sum(p.wall_s for p in md_top) if md_top else 0.0
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    per_workload = [(w.name, w.benchmark, [p for p in result.points if p.workload == w.name]) for w in result.workloads]
    breakdown = [
        (name, bench, len(points), sum(p.wall_s for p in points), max(p.wall_s for p in points))
        for name, bench, points in per_workload
        if points
    ]
    queue.put(
        (
            Path(topology).stem,
            len(result.points),
            wall,
            requests / wall,
            events / requests,
            top,
            rate_top,
            rate_md,
            slowest.wall_s,
            f"{slowest.workload} {slowest.op} {slowest.threads}",
            peak_mib,
            breakdown,
        )
    )


def _reference_child(queue: multiprocessing.Queue) -> None:
    queue.put(reference_rate())


def _reference(context) -> float:  # type: ignore[no-untyped-def]
    """The reference network's req/s, in a fresh process like the suites'."""
    queue: multiprocessing.Queue = context.Queue()
    process = context.Process(target=_reference_child, args=(queue,))
    process.start()
    rate = _result(process, queue)
    process.join()
    return float(rate)


def _resolve(topology: str) -> str:
    """A path as given, or a shipped topology's name (``beegfs-hdr100``) made into its file."""
    if Path(topology).exists():
        return topology
    shipped = ROOT / "topologies" / f"{topology}.yaml"
    if shipped.exists():
        return str(shipped)
    raise SystemExit(f"bench_suites: no topology file or shipped topology named {topology!r}")


def _result(process, queue: multiprocessing.Queue) -> tuple:  # type: ignore[no-untyped-def]
    """The child's figures; exit with its status if it dies before sending them (no silent hang)."""
    while True:
        try:
            return queue.get(timeout=1.0)
        except queue_module.Empty:
            if not process.is_alive():
                raise SystemExit(f"bench_suites: the run died (exit code {process.exitcode})") from None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "topologies", nargs="*", help="files or shipped names (beegfs-hdr100); default: every shipped topology"
    )
    parser.add_argument("--threads", help="comma-separated thread counts replacing the suites' own")
    parser.add_argument(
        "--no-reference", action="store_true", help="skip the SimPy reference network (and the @top ref column)"
    )
    args = parser.parse_args()
    topologies = [_resolve(t) for t in args.topologies] or sorted(str(p) for p in (ROOT / "topologies").glob("*.yaml"))
    threads = [int(x) for x in args.threads.split(",")] if args.threads else None
    context = multiprocessing.get_context("spawn")
    header = (
        f"{'suite':26s} {'points':>6s} {'wall s':>8s} {'req/s':>9s} {'ev/req':>6s} {'top thr':>7s} {'req/s@top':>9s} "
        f"{'md@top':>8s} {'slowest s':>9s}  {'peak MiB':>8s} {'ref req/s':>9s} {'@top ref':>8s} {'md ref':>7s}"
        "  slowest point"
    )
    from sim.accelerated import copy_summary

    print(copy_summary())  # which copy is timed: the source tree, or an installed (compiled) one
    print(header)
    reference = None if args.no_reference else _reference(context)
    for topology in topologies:
        queue: multiprocessing.Queue = context.Queue()
        process = context.Process(target=_measure, args=(topology, threads, queue))
        process.start()
        name, points, wall, rate, per_request, top, rate_top, rate_md, slow_s, slow, peak, breakdown = _result(
            process, queue
        )
        process.join()
        scaled = ""
        if reference is not None:
            after = _reference(context)
            machine = (reference + after) / 2
            scaled = (
                f"{machine:9.0f} {rate_top * REFERENCE_RATE / machine:8.0f} {rate_md * REFERENCE_RATE / machine:7.0f}"
            )
            reference = after
        else:
            scaled = f"{'-':>9s} {'-':>8s} {'-':>7s}"
        print(
            f"{name:26s} {points:6d} {wall:8.1f} {rate:9.0f} {per_request:6.1f} {top:7d} {rate_top:9.0f} "
            f"{rate_md:8.0f} {slow_s:9.2f}  {peak:8.0f} {scaled}  {slow}",
            flush=True,
        )
        for workload, bench, count, seconds, slowest in breakdown:
            print(f"  {workload:24s} {count:6d} {seconds:8.1f}  ({bench}; slowest point {slowest:.2f} s)")


if __name__ == "__main__":
    main()
