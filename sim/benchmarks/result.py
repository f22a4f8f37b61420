"""The versioned result of ``pfssim run``: inputs, seed, version, parameters and every point.

``schema_version`` history: 1 - first release (points with value, interval, bottleneck and the
utilisation of every part; the topology file with its SHA-256, the workloads' settings, precision
and parameters embedded). 2 - mdtest points (benchmark ``mdtest``, ``file_bytes``, values in
op/s); IOR and steady-state mdtest values are what the
benchmark reports, set by its last task, with ``last_task_factor`` (reported / aggregate rate).
3 - ``limit`` per point: "capacity" when its bottleneck (the busiest part) is at least half busy,
"latency" when no part is and the rate is held by the time requests take (too few in flight).
Keys added since, within version 3 (a reader that ignores keys it does not know reads them all
alike): ``pool_occupancy`` (each pool's slots held over the window) and, for IOR points and
IOzone points with ``-e`` or ``-c``, ``open_close_seconds``; with ``--replications`` N above 1,
``replications`` (N) on every point and in the precision; for writes into ME4 write-back caches
that keep up, ``off_path`` (the destaging drives, reported and never named the bottleneck);
``model_sha256`` (pfssim's source), and in ``inputs.topology`` the absolute ``path``, ``parts``
(each parts file read, with its SHA-256) and ``spec_sha256`` (the system as simulated), with
``sha256`` now of the bytes loaded rather than of the file when the result is written; every
field of the precision; ``inputs.workload_files`` (each workload as a workload file holds it,
sizes with units, which ``--workload`` reads back once saved as ``<name>.yaml``); for bandwidth
points, ``hardware_ceiling`` (the max-flow from the clients the threads run on). ``timing``
(wall seconds of the run and of each point) is the only part that differs between runs of the
same inputs.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sim import __version__
from sim.benchmarks.driver import PointResult, Precision
from sim.config.workload import AnyWorkload, workload_file
from sim.params import PARAMETERS
from sim.topology.model import System

SCHEMA_VERSION = 3


def _model_sha256() -> str:
    """The sha256 of pfssim's own source (every ``sim/**/*.py``, by relative path, in order): which
    code made a result, exactly, where the package version says only which release."""
    global _MODEL_SHA256
    if _MODEL_SHA256 is None:
        root = Path(__file__).resolve().parents[1]
        digest = hashlib.sha256()
        for path in sorted(root.rglob("*.py")):
            digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
        _MODEL_SHA256 = digest.hexdigest()
    return _MODEL_SHA256


_MODEL_SHA256: str | None = None


@dataclass
class RunResult:
    """Everything one ``pfssim run`` produced, and what it was produced from."""

    system: System
    workloads: list[AnyWorkload]
    seed: int
    precision: Precision
    points: list[PointResult] = field(default_factory=list)
    wall_s: float = 0.0

    def curve(self, workload: str, op: str) -> list[PointResult]:
        """The points of one operation of one workload, by thread count."""
        return sorted((p for p in self.points if p.workload == workload and p.op == op), key=lambda p: p.threads)

    def to_json(self) -> dict[str, Any]:
        """One JSON object; the same inputs and seed give the same object (timing aside)."""
        return {
            "schema_version": SCHEMA_VERSION,
            "pfssim_version": __version__,
            "model_sha256": _model_sha256(),
            "seed": self.seed,
            "inputs": {
                "topology": {
                    "name": self.system.name,
                    "file": self.system.file,
                    "path": str(Path(self.system.file).absolute()),
                    # Of the bytes parsed when the system was loaded (None for one built in memory).
                    "sha256": self.system.source_map.sha256 if self.system.source_map else None,
                    "parts": dict(sorted(self.system.parts_sources.items())),
                    # The system as simulated: changes made to it in memory (a library what-if) show here.
                    "spec_sha256": hashlib.sha256(self.system.spec.model_dump_json().encode()).hexdigest(),
                    # The --set replacements the topology was run with (KEY=VALUE, as given).
                    "set": list(self.system.settings),
                },
                "workloads": [w.model_dump(mode="json") for w in self.workloads],
                # The same workloads as workload files hold them (sizes with units), to run again.
                "workload_files": [workload_file(w) for w in self.workloads],
                "precision": {
                    name: getattr(self.precision, name)
                    for name in (
                        "rel_precision",
                        "min_batches",
                        "max_batches",
                        "max_doublings",
                        "warmup_per_thread",
                        "min_warmup",
                        "min_batch",
                        "max_device_ops",
                        "transient_budget_factor",
                    )
                }
                | ({"replications": self.precision.replications} if self.precision.replications > 1 else {}),
                "parameters": {name: p.value for name, p in PARAMETERS.items()},
            },
            "points": [p.to_json() for p in self.points],
            "timing": {
                "wall_seconds": self.wall_s,
                "points": [
                    {"workload": p.workload, "op": p.op, "threads": p.threads, "wall_seconds": p.wall_s}
                    for p in self.points
                ],
            },
        }
