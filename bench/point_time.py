"""Wall time of single points, beside the SimPy reference network: what the 5 s bound per point asks.

    python bench/point_time.py pixstor-large-expansion:pixstor-iozone-random:random_write:64
    python bench/point_time.py --repeat 2 beegfs-high-capacity:beegfs-hc-ior-n1:write:512

Each point runs in this process, one at a time (seed 1, default precision), after the reference
network (``bench/engine_reference.py``), which measures how fast this machine runs SimPy today; the
last column scales the point's time to the machine engine-speed.md measured (63,500 requests/s),
as ``bench/bench_suites.py``'s ``@top ref`` does. Wall times on a shared machine move by 10-20%
between identical runs (``--repeat`` runs the whole list again, the reference included); for an
A/B of two commits ``bench/instructions.py`` counts what does not move. Set ``PYTHONPATH`` to
another checkout to time it instead. A benchmark that prints figures: nothing passes or fails.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from engine_reference import REFERENCE_RATE, reference_rate  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("points", nargs="+", help="TOPOLOGY:WORKLOAD:OP:THREADS (shipped names)")
    parser.add_argument("--repeat", type=int, default=1, help="run the list this many times")
    args = parser.parse_args()
    from sim.accelerated import copy_summary
    from sim.benchmarks.driver import run_point
    from sim.benchmarks.workloads import find_workload
    from sim.topology.build import load_system

    print(copy_summary())  # which copy is timed: the source tree, or an installed (compiled) one
    print(f"{'point':64s} {'wall s':>7s} {'events':>9s} {'requests':>9s} {'ref req/s':>9s} {'scaled s':>8s}  value")
    for _ in range(args.repeat):
        reference = reference_rate()
        for spec in args.points:
            topology, workload, op, threads = spec.split(":")
            path = ROOT / "topologies" / f"{topology}.yaml"
            system, chosen = load_system(path), find_workload(workload, path)
            started = time.perf_counter()
            result = run_point(system, chosen, op, int(threads), seed=1)
            wall = time.perf_counter() - started
            scaled = wall * reference / REFERENCE_RATE
            print(
                f"{spec:64s} {wall:7.2f} {result.events_total:9,d} {result.requests_total:9,d} "
                f"{reference:9,.0f} {scaled:8.2f}  {result.value:.6g}",
                flush=True,
            )


if __name__ == "__main__":
    main()
