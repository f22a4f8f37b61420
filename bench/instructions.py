"""Instructions one point costs, counted by valgrind: a speed figure that does not drift with the machine.

Wall times on a shared machine move by 10-20% from run to run (docs/design.md, Open questions), so
an engine change worth a few percent cannot be seen in them. Valgrind's callgrind counts the
machine instructions a process executes, which is the same on every run of the same code. This
script runs the interpreter under callgrind twice for each point: once loading the topology and
workload only, once simulating the point as well, and prints the difference (the point's own
instructions, start-up left out), with its events and requests.

    python bench/instructions.py beegfs-high-capacity:beegfs-hc-ior-n1:write:32
    python bench/instructions.py --root /tmp/other-checkout pixstor-large:pixstor-iozone-random:random_write:1

``--root`` measures another checkout of pfssim with this interpreter (an A/B of two commits).
Callgrind runs the interpreter about 40 times slower: pick points of a few seconds (the first
above takes about 75 s, the second about 5 minutes). Needs valgrind (``apt-get install valgrind``).
This is a benchmark that prints figures, not a test: nothing here passes or fails.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: What the child runs: load the inputs and, with ``simulate``, run the point (seed 1).
_CHILD = """
import sys
sys.path.insert(0, {root!r})
from pathlib import Path
from sim.benchmarks.driver import run_point
from sim.benchmarks.workloads import find_workload
from sim.topology.build import load_system
path = Path({root!r}) / "topologies" / "{topology}.yaml"
system, workload = load_system(path), find_workload({workload!r}, path)
if {simulate}:
    result = run_point(system, workload, {op!r}, {threads}, seed=1)
    print("RESULT", result.value, result.events_total, result.requests_total)
"""


def _count(root: Path, spec: str, simulate: bool) -> tuple[int, str]:
    """Instructions callgrind counted for the child, and what it printed."""
    topology, workload, op, threads = spec.split(":")
    code = _CHILD.format(
        root=str(root), topology=topology, workload=workload, op=op, threads=int(threads), simulate=simulate
    )
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "callgrind.out"
        run = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
        )
    found = re.search(r"Collected : (\d+)", run.stderr)
    if found is None:
        raise SystemExit(f"no instruction count in valgrind's output:\n{run.stderr[-2000:]}")
    return int(found.group(1)), run.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("points", nargs="+", help="TOPOLOGY:WORKLOAD:OP:THREADS (shipped names)")
    parser.add_argument("--root", type=Path, default=ROOT, help="the pfssim checkout to measure (default: this one)")
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed (apt-get install valgrind)")
    print(f"{'point':60s} {'instructions':>14s} {'events':>9s} {'requests':>9s} {'instr/event':>11s}  value")
    for spec in args.points:
        base, _ = _count(args.root, spec, simulate=False)
        total, printed = _count(args.root, spec, simulate=True)
        _, value, events, requests = next(line for line in printed.splitlines() if line.startswith("RESULT")).split()
        own = total - base
        per_event = own / int(events)
        print(f"{spec:60s} {own:14,d} {int(events):9,d} {int(requests):9,d} {per_event:11,.0f}  {float(value):.6g}")


if __name__ == "__main__":
    main()
