"""The fit of ``me4_cache_entries_per_vdisk`` (the ME4 destage sort window), repeatable.

For each candidate window it simulates the random 4 KiB writes the parameter was fitted on
(pixstor-large, 1 and 256 threads; published flat near 12.8K IOPS) and the ones that check it
(beegfs-high-capacity, 32 and 512 threads; published plateau ~31K IOPS), and prints the
predictions with their errors. The frozen value is in ``sim/params.py``; this script does not
change it.

Run: ``python bench/fit_me4_sort_window.py [WINDOW...]`` (default 512 768 1024 2048; a few
minutes on two cores).
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

from sim import params
from sim.benchmarks.driver import run_point
from sim.benchmarks.workloads import find_workload
from sim.topology.build import load_system

ROOT = Path(__file__).resolve().parent.parent
CASES = [
    ("pixstor-large", "pixstor-iozone-random", (1, 256), 12.8e3, "fitted on"),
    ("beegfs-high-capacity", "beegfs-hc-iozone-random", (32, 512), 31e3, "checked on"),
]


def main() -> None:
    windows = [int(x) for x in sys.argv[1:]] or [512, 768, 1024, 2048]
    frozen = params.PARAMETERS["me4_cache_entries_per_vdisk"]
    print(f"frozen value: {frozen.value:g} (sim/params.py)")
    print(f"{'window':>7s}  {'system':22s} {'threads':>7s} {'IOPS':>9s} {'published':>9s} {'error':>7s}  role")
    try:
        for window in windows:
            params.PARAMETERS["me4_cache_entries_per_vdisk"] = replace(frozen, value=window)
            for system_name, workload_name, threads, published, role in CASES:
                topology = ROOT / "topologies" / f"{system_name}.yaml"
                system = load_system(topology)
                workload = find_workload(workload_name, topology)
                for t in threads:
                    point = run_point(system, workload, "random_write", t, seed=1)
                    error = point.value / published - 1
                    print(
                        f"{window:7d}  {system_name:22s} {t:7d} {point.value:9.0f} {published:9.0f} "
                        f"{error:+7.1%}  {role}",
                        flush=True,
                    )
    finally:
        params.PARAMETERS["me4_cache_entries_per_vdisk"] = frozen


if __name__ == "__main__":
    main()
