"""What-if probe of model parameters against the HDD-array calibration points, repeatable.

Sets model parameters (``--set NAME=VALUE``, any name of ``sim/params.py``) for this process only,
simulates the ME4084 points that HDD and controller parameters move (PixStor random and
sequential, beegfs-high-capacity random and sequential) and prints each prediction against the
published figure it is compared with. The frozen values in ``sim/params.py`` are not changed:
this is how a lead is checked before anything is refitted (docs/design.md, Open questions).

Run: ``python bench/probe_params.py [--set hdd_ncq_depth=8] [--set ...] [--group random|sequential]``
(a few minutes on two cores; seed 1, the stopping rule of ``pfssim run``).
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace
from pathlib import Path

from sim import params
from sim.benchmarks.driver import run_point
from sim.benchmarks.workloads import find_workload
from sim.topology.build import load_system

ROOT = Path(__file__).resolve().parent.parent

# (group, system, workload, op, thread counts, published value, what the value is)
CASES = [
    ("random", "pixstor-large", "pixstor-iozone-random", "random_write", (1, 256), 12.8e3, "flat ~12.8K IOPS"),
    ("random", "pixstor-large", "pixstor-iozone-random", "random_read", (512,), 18.4e3, "peak 18.4K IOPS"),
    ("random", "beegfs-high-capacity", "beegfs-hc-iozone-random", "random_write", (32, 512), 31e3, "plateau ~31K"),
    ("random", "beegfs-high-capacity", "beegfs-hc-iozone-random", "random_read", (512,), 47e3, "peak 47K IOPS"),
    ("sequential", "pixstor-large", "pixstor-iozone-seq", "read", (32, 256), 21e9, "sustained 21 GB/s"),
    ("sequential", "pixstor-large", "pixstor-iozone-seq", "write", (64, 256), 19.8e9, "sustained 19.8 GB/s"),
    ("sequential", "pixstor-large", "pixstor-ior-n1", "read", (16, 128), 21e9, "plateau ~21 GB/s"),
    ("sequential", "beegfs-high-capacity", "beegfs-hc-iozone-seq", "read", (128,), 23.7e9, "out of sample"),
    ("sequential", "beegfs-high-capacity", "beegfs-hc-iozone-seq", "write", (512,), 22.07e9, "out of sample"),
]


def _setting(text: str) -> tuple[str, float]:
    name, sep, number = text.partition("=")
    if not sep or name not in params.PARAMETERS:
        raise argparse.ArgumentTypeError(f"{text!r}: expected NAME=VALUE with NAME one of sim/params.py")
    try:
        return name, float(number)
    except ValueError as err:
        raise argparse.ArgumentTypeError(f"{text!r}: {number!r} is not a number") from err


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", type=_setting, action="append", default=[], metavar="NAME=VALUE")
    parser.add_argument("--group", choices=["random", "sequential"], help="only these cases")
    args = parser.parse_args()
    frozen = dict(params.PARAMETERS)
    for name, number in args.set:
        params.PARAMETERS[name] = replace(frozen[name], value=number)
    label = " ".join(f"{n}={v:g}" for n, v in args.set) or "frozen values"
    print(f"parameters: {label}")
    header = f"{'system':21s} {'workload':24s} {'op':12s} {'thr':>4s} {'predicted':>10s} {'error':>7s} {'+-':>5s}"
    print(f"{header}  bottleneck")
    try:
        for group, system_name, workload_name, op, threads, published, what in CASES:
            if args.group and group != args.group:
                continue
            topology = ROOT / "topologies" / f"{system_name}.yaml"
            system = load_system(topology)
            workload = find_workload(workload_name, topology)
            for t in threads:
                started = time.perf_counter()
                point = run_point(system, workload, op, t, seed=1)
                half = (point.ci_high - point.ci_low) / 2 / point.value
                print(
                    f"{system_name:21s} {workload_name:24s} {op:12s} {t:4d} {point.value:10.4g} "
                    f"{point.value / published - 1:+7.1%} {half:5.1%}  {point.bottleneck} "
                    f"{point.bottleneck_utilization:.0%} (vs {what}; {time.perf_counter() - started:.0f} s)",
                    flush=True,
                )
    finally:
        params.PARAMETERS.clear()
        params.PARAMETERS.update(frozen)


if __name__ == "__main__":
    main()
