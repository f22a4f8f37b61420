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
that keep up, ``off_path`` (the destaging drives, reported and never named the bottleneck).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sim import __version__
from sim.benchmarks.driver import PointResult, Precision
from sim.config.workload import AnyWorkload
from sim.params import PARAMETERS
from sim.topology.model import System

SCHEMA_VERSION = 3


def _sha256(path: str | Path) -> str | None:
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return None


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
            "seed": self.seed,
            "inputs": {
                "topology": {"name": self.system.name, "file": self.system.file, "sha256": _sha256(self.system.file)},
                "workloads": [w.model_dump(mode="json") for w in self.workloads],
                "precision": {
                    "rel_precision": self.precision.rel_precision,
                    "min_batches": self.precision.min_batches,
                    "max_batches": self.precision.max_batches,
                    "max_doublings": self.precision.max_doublings,
                    **({"replications": self.precision.replications} if self.precision.replications > 1 else {}),
                },
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
