"""The installed pfssim's compiled device models (``setup.py``, mypyc) give the numbers of the
Python source, to the bit.

The rest of the suite imports the source (the project folder comes first on the path), so this
is where the compiled build CI installs is checked: a few short points that cross every compiled
path (HDD command queueing, RAID6 read-modify-write and full-stripe writes, the ME4 write cache
from a full start and its read-ahead, NVMe RAID0, RAID1 and RAID10 metadata targets) run in a
child interpreter that imports the installed package, and must match the same points run here.
A build that could not compile (no C compiler: ``setup.py`` then installs the Python modules) or
an editable install has nothing to compare, and the test says so as a skip.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: (topology, workload, op, threads): together they run every compiled class and path.
POINTS = [
    ("pixstor-large", "pixstor-iozone-random", "random_write", 4),  # HDD queueing, RAID6 RMW, full cache start
    ("beegfs-high-capacity", "beegfs-hc-iozone-seq", "write", 8),  # ME4 cache, RAID6 full stripes
    ("beegfs-high-capacity", "beegfs-hc-ior-n1", "read", 16),  # ME4 read-ahead streams
    ("beegfs-hdr100", "beegfs-hp-iozone-random", "random_read", 16),  # NVMe RAID0
    ("beegfs-hdr100", "mdtest-beegfs-hp", "create", 16),  # NVMe RAID1 metadata targets
    ("beegfs-high-capacity", "mdtest-beegfs-hc", "stat", 16),  # ME4024 RAID10 metadata targets
]

#: Short runs: the comparison needs the same simulation, not a converged estimate.
PRECISION = {"max_device_ops": 4000, "min_batches": 4, "transient_budget_factor": 1}

_RUN = """
import json, sys
from pathlib import Path
import sim.devices
from sim.benchmarks.driver import Precision, run_point
from sim.benchmarks.workloads import find_workload
from sim.topology.build import load_system

root, points, precision = Path(sys.argv[1]), json.loads(sys.argv[2]), json.loads(sys.argv[3])
out = {"compiled": sim.devices.compiled(), "where": sim.devices.__file__, "points": []}
for topology, workload, op, threads in points:
    path = root / "topologies" / f"{topology}.yaml"
    result = run_point(load_system(path), find_workload(workload, path), op, threads, 1, Precision(**precision))
    out["points"].append([result.value, result.ci_low, result.ci_high, result.events_total, result.bottleneck])
print(json.dumps(out))
"""


def _installed_compiled() -> Path | None:
    """The installed package's device folder when its models are compiled, else None (an editable
    install puts no package folder in the environment's site-packages, only a pointer here)."""
    devices = Path(sysconfig.get_paths()["platlib"]) / "sim" / "devices"
    return devices if any(devices.glob("drives.*.so")) or any(devices.glob("drives.*.pyd")) else None


def _run(python_path_first: bool, cwd: Path) -> dict:
    """The points, run by a child interpreter: on the source (the project folder first on its path)
    or on the installed package (a folder of its own as the working directory)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if python_path_first:
        env["PYTHONPATH"] = str(ROOT)
    done = subprocess.run(
        [sys.executable, "-c", _RUN, str(ROOT), json.dumps(POINTS), json.dumps(PRECISION)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def test_the_compiled_device_models_give_the_numbers_of_the_source(tmp_path: Path) -> None:
    installed = _installed_compiled()
    if installed is None:
        pytest.skip("the installed pfssim is not compiled (an editable install, or a build without a C compiler)")
    compiled = _run(python_path_first=False, cwd=tmp_path)
    assert compiled["compiled"], f"the child imported {compiled['where']}, not the compiled build"
    source = _run(python_path_first=True, cwd=tmp_path)
    assert not source["compiled"] and Path(source["where"]).resolve().parent == ROOT / "sim" / "devices"
    assert compiled["points"] == source["points"]
