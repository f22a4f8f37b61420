"""``pfssim compare``: two ``pfssim run --json`` results point by point, for a what-if (the same
workloads on two topologies, or on one topology before and after a change).

Points are matched by workload, operation and thread count. A change is called a difference only
when the two 95% intervals do not overlap: each run's interval is its own simulation's, so
intervals that overlap leave the two predictions indistinguishable at the precision they were run
to (run both with a smaller ``--precision`` to look closer).
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from sim.benchmarks.result import SCHEMA_VERSION as RUN_SCHEMA_VERSION
from sim.errors import PfssimError
from sim.report.run import bottleneck_text, format_value, interval_text

#: Version of ``pfssim compare --json``'s object.
SCHEMA_VERSION = 1

_POINT_KEYS: dict[str, type | tuple[type, ...]] = {
    "workload": str,
    "benchmark": str,
    "op": str,
    "threads": int,
    "value": (int, float),
    "ci_low": (int, float),
    "ci_high": (int, float),
    "unit": str,
    "bottleneck": str,
    "bottleneck_utilization": (int, float),
    "converged": bool,
}


@dataclass(frozen=True)
class Side:
    """One run's prediction of a point."""

    value: float
    ci_low: float
    ci_high: float
    bottleneck: str
    bottleneck_utilization: float
    converged: bool

    def text(self, unit: str, benchmark: str) -> str:
        """The value and its interval as the run tables print them (``*``: not converged)."""
        interval = interval_text(self.value, self.ci_low, self.ci_high) + ("" if self.converged else " *")
        return f"{format_value(self.value, unit, benchmark)} {interval}"


@dataclass(frozen=True)
class PointPair:
    """A point of both runs."""

    workload: str
    benchmark: str
    op: str
    threads: int
    unit: str
    base: Side
    other: Side

    @property
    def change(self) -> float:
        """``other / base - 1`` (inf when the base is 0 and the other is not)."""
        if self.base.value == 0:
            return 0.0 if self.other.value == 0 else math.inf
        return self.other.value / self.base.value - 1

    @property
    def verdict(self) -> str:
        """``higher`` or ``lower`` when the intervals do not overlap, else ``same``."""
        if self.other.ci_low > self.base.ci_high:
            return "higher"
        if self.other.ci_high < self.base.ci_low:
            return "lower"
        return "same"


@dataclass
class Comparison:
    """Two runs compared: their points in common, and those only one of them has."""

    base: str  # the runs' topology names and files, as their inputs give them
    other: str
    base_file: str
    other_file: str
    pairs: list[PointPair] = field(default_factory=list)
    only_base: list[tuple[str, str, int]] = field(default_factory=list)
    only_other: list[tuple[str, str, int]] = field(default_factory=list)
    seeds: tuple[int, int] = (0, 0)


def load_run(path: Path) -> dict[str, Any]:
    """A ``pfssim run --json`` result read from ``path``, checked for what comparing it reads."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise PfssimError(f"{path}: cannot read file: {reason}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise PfssimError(
            f"{path}: not JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}); give the output of pfssim run --json"
        ) from None
    if not isinstance(data, dict) or "points" not in data or "inputs" not in data:
        raise PfssimError(f"{path}: not a pfssim run --json result (no points and inputs); give the output of one")
    version = data.get("schema_version")
    if version != RUN_SCHEMA_VERSION:
        raise PfssimError(
            f"{path}: a result of schema version {version!r}; this pfssim compares version {RUN_SCHEMA_VERSION} "
            "(run the topology again with this pfssim)"
        )
    points = data["points"]
    if not isinstance(points, list):
        raise PfssimError(f"{path}: points: expected a list")
    for index, point in enumerate(points):
        if not isinstance(point, dict):
            raise PfssimError(f"{path}: points[{index}]: expected an object")
        for key, kind in _POINT_KEYS.items():
            if key not in point:
                raise PfssimError(f"{path}: points[{index}]: missing {key!r}")
            if not isinstance(point[key], kind) or (kind is not bool and isinstance(point[key], bool)):
                raise PfssimError(f"{path}: points[{index}].{key}: unexpected value {point[key]!r}")
    return data


def _topology(data: dict[str, Any]) -> tuple[str, str]:
    topology = data.get("inputs", {}).get("topology", {})
    return str(topology.get("name", "?")), str(topology.get("file", "?"))


def _side(point: dict[str, Any]) -> Side:
    return Side(
        float(point["value"]),
        float(point["ci_low"]),
        float(point["ci_high"]),
        point["bottleneck"],
        float(point["bottleneck_utilization"]),
        point["converged"],
    )


def compare_runs(base: dict[str, Any], other: dict[str, Any]) -> Comparison:
    """The points of ``other`` against those of ``base``, matched by workload, op and thread count."""

    def by_key(data: dict[str, Any]) -> dict[tuple[str, str, int], dict[str, Any]]:
        return {(p["workload"], p["op"], p["threads"]): p for p in data["points"]}

    mine, theirs = by_key(base), by_key(other)
    (base_name, base_file), (other_name, other_file) = _topology(base), _topology(other)
    result = Comparison(base_name, other_name, base_file, other_file, seeds=(base.get("seed", 0), other.get("seed", 0)))
    for key, point in mine.items():
        if key not in theirs:
            result.only_base.append(key)
            continue
        workload, op, threads = key
        pair = PointPair(workload, point["benchmark"], op, threads, point["unit"], _side(point), _side(theirs[key]))
        result.pairs.append(pair)
    result.only_other = [key for key in theirs if key not in mine]
    return result


def _percent(change: float) -> str:
    if math.isinf(change):
        return "from 0"
    text = f"{change:+.1%}"
    return "0.0%" if text in ("+0.0%", "-0.0%") else text


def render_comparison(comparison: Comparison, console: Console) -> None:
    """One table per workload: each point's two predictions, the change and whether it is one."""
    base, other = comparison.base, comparison.other
    if base == other:  # two runs of one topology (a copy that kept its name): say which file is which
        base, other = comparison.base_file, comparison.other_file
    workloads = list(dict.fromkeys(pair.workload for pair in comparison.pairs))
    for workload in workloads:
        pairs = [pair for pair in comparison.pairs if pair.workload == workload]
        table = Table(title=f"{workload} ({pairs[0].benchmark}): {other} against {base}")
        for header in ("op", "threads", base, other, "change", "", "bottleneck"):
            table.add_column(
                header,
                justify="right" if header in ("threads", "change") else "left",
                overflow="fold",
                no_wrap=header in ("op", "change"),
            )
        for pair in pairs:
            a = bottleneck_text(pair.base.bottleneck, pair.base.bottleneck_utilization)
            b = bottleneck_text(pair.other.bottleneck, pair.other.bottleneck_utilization)
            table.add_row(
                pair.op,
                str(pair.threads),
                pair.base.text(pair.unit, pair.benchmark),
                pair.other.text(pair.unit, pair.benchmark),
                _percent(pair.change),
                {"same": "within the intervals", "higher": "higher", "lower": "lower"}[pair.verdict],
                a if a == b else f"{a} -> {b}",
            )
        console.print(table)
    console.print(
        "a change is higher or lower only where the two 95% intervals do not overlap; where they do, "
        "the runs cannot tell the two apart at the precision they were run to (--precision)"
    )
    if any(not (p.base.converged and p.other.converged) for p in comparison.pairs):
        console.print("*: a point that is not converged in its run (pfssim run says why; --json: not_converged)")
    if comparison.seeds[0] != comparison.seeds[1]:
        console.print(f"the runs used different seeds ({comparison.seeds[0]} and {comparison.seeds[1]})")
    for side, keys in ((comparison.base_file, comparison.only_base), (comparison.other_file, comparison.only_other)):
        if keys:
            listed = ", ".join(f"{w} {op} at {t}" for w, op, t in keys[:5])
            more = f" and {len(keys) - 5} more" if len(keys) > 5 else ""
            console.print(f"only in {side}: {listed}{more}")


def comparison_json(comparison: Comparison) -> dict[str, Any]:
    """The comparison as one JSON object (SI units; changes as fractions)."""

    return {
        "schema_version": SCHEMA_VERSION,
        "base": {"topology": comparison.base, "file": comparison.base_file, "seed": comparison.seeds[0]},
        "other": {"topology": comparison.other, "file": comparison.other_file, "seed": comparison.seeds[1]},
        "points": [
            {
                "workload": p.workload,
                "benchmark": p.benchmark,
                "op": p.op,
                "threads": p.threads,
                "unit": p.unit,
                "base": asdict(p.base),  # value, ci_low, ci_high, bottleneck, its utilisation, converged
                "other": asdict(p.other),
                "change": None if math.isinf(p.change) else p.change,
                "verdict": p.verdict,
            }
            for p in comparison.pairs
        ],
        "only_base": [{"workload": w, "op": op, "threads": t} for w, op, t in comparison.only_base],
        "only_other": [{"workload": w, "op": op, "threads": t} for w, op, t in comparison.only_other],
    }
