"""``pfssim compare``: two ``pfssim run --json`` results point by point, for a what-if (the same
workloads on two topologies, or on one topology before and after a change).

Points are matched by workload, operation and thread count, and a workload must be the same in
both runs (its settings, thread counts aside). A change is called a difference only when the two
95% intervals do not overlap and it is larger than the runs' precision (``--precision``, the
resolution they were asked for): each run's interval is its own simulation's, and does not hold
what differs from seed to seed (another file layout, other start points), which a point whose
bottleneck is busy at a fixed rate gives an interval of nearly zero; smaller changes are the same
at the resolution asked for (run both with a smaller ``--precision``, or ``--replications``, to
look closer).
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from sim.benchmarks.driver import limit_of
from sim.benchmarks.result import SCHEMA_VERSION as RUN_SCHEMA_VERSION
from sim.errors import PfssimError
from sim.fs.settings import filesystem_settings
from sim.report.run import format_value, interval_text

if TYPE_CHECKING:
    from sim.topology.summary import Summary

#: Utilisation within which a part as busy as a run's bottleneck could have been named instead.
TIE = 0.02

#: What a point of a run result must give, and of what type (float: any finite number).
_POINT_KEYS: dict[str, type] = {
    "workload": str,
    "benchmark": str,
    "op": str,
    "threads": int,
    "value": float,
    "ci_low": float,
    "ci_high": float,
    "unit": str,
    "bottleneck": str,
    "bottleneck_utilization": float,
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
    not_converged: tuple[str, ...] = ()
    # How busy every part and pool was (utilisation, occupancy), to tell a bottleneck that moved
    # from one of several parts equally busy (``PointPair.moved``).
    busy: dict[str, float] = field(default_factory=dict, compare=False)

    @property
    def limit(self) -> str:
        """``capacity`` or ``latency``, as the run says it (``sim.benchmarks.driver.limit_of``)."""
        return limit_of(self.bottleneck_utilization)

    def json(self) -> dict[str, Any]:
        """The side as ``compare --json`` gives it."""
        return {
            "value": self.value,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            "bottleneck": self.bottleneck,
            "bottleneck_utilization": self.bottleneck_utilization,
            "limit": self.limit,
            "converged": self.converged,
            "not_converged": list(self.not_converged),
        }

    def text(self, unit: str, benchmark: str) -> str:
        """The value and its interval as the run tables print them (``*``: not converged)."""
        if self.value == 0:
            return format_value(0.0, unit, benchmark)
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
    def moved(self) -> bool:
        """Whether the bottleneck moved: to a part the base run held below its own bottleneck (by
        more than :data:`TIE`). Several equal parts at the same utilisation (a system's eleven
        server HCAs, two controllers of an array) name one of them by chance, and a change of which
        is no move; nor is one between two latency-bound points, whose named part is only the
        busiest."""
        if self.base.bottleneck == self.other.bottleneck:
            return False
        if self.base.limit == "latency" and self.other.limit == "latency":
            return False
        there = self.base.busy.get(self.other.bottleneck, 0.0)
        return there < self.base.bottleneck_utilization - TIE

    @property
    def apart(self) -> str:
        """``higher`` or ``lower`` when the intervals do not overlap, else ``same``."""
        if self.other.ci_low > self.base.ci_high:
            return "higher"
        if self.other.ci_high < self.base.ci_low:
            return "lower"
        return "same"


@dataclass
class Comparison:
    """Two runs compared: their points in common, and those only one of them has."""

    base: RunFile
    other: RunFile
    pairs: list[PointPair] = field(default_factory=list)
    only_base: list[tuple[str, str, int]] = field(default_factory=list)
    only_other: list[tuple[str, str, int]] = field(default_factory=list)
    changes: TopologyChanges | None = None  # what differs between the two topologies (None: one file)

    @property
    def resolution(self) -> float:
        """The smallest relative change called a difference: the coarser of the runs' precisions."""
        return max(self.base.precision, self.other.precision)

    def verdict(self, pair: PointPair) -> str:
        """``higher`` or ``lower`` when the intervals do not overlap and the change is larger than
        :attr:`resolution`, else ``same``."""
        if pair.apart == "same" or abs(pair.change) <= self.resolution:
            return "same"
        return pair.apart

    def cautions(self) -> list[str]:
        """What may make a change something other than the what-if's: other model code or
        parameters, other seeds, a mean of several runs against one."""
        said = []
        version, code, parameters = self.base.model
        other_version, other_code, other_parameters = self.other.model
        if (version, code) != (other_version, other_code):
            said.append(
                f"the runs come from different pfssim code ({version} {code[:12]} and {other_version} "
                f"{other_code[:12]}): a change may be the model's, not the what-if's; run both with one pfssim"
            )
        elif parameters != other_parameters:
            said.append("the runs used different model parameters: a change may be theirs, not the what-if's")
        if self.base.seed != self.other.seed:
            replicated = self.base.replications > 1 and self.other.replications > 1
            said.append(
                f"the runs used different seeds ({self.base.seed} and {self.other.seed})"
                + (
                    ""
                    if replicated
                    else ": a seed draws its own file layout and start, which neither interval holds; "
                    "--replications covers them"
                )
            )
        if self.base.replications != self.other.replications:
            said.append(
                f"the points are means of {self.base.replications} and of {self.other.replications} runs "
                "(--replications): their intervals hold different things"
            )
        return said

    def labels(self) -> tuple[str, str]:
        """How the tables name the two runs: by their topologies' names, or where those agree (a
        copy that kept its name) their files, or where those agree too their names with the
        ``--set`` replacements they ran with, or else (one topology run twice) the result files."""
        for base, other in (
            (self.base.topology, self.other.topology),
            (self.base.topology_file, self.other.topology_file),
            (self.base.label, self.other.label),
        ):
            if base != other:
                return base, other
        return str(self.base.path), str(self.other.path)


@dataclass(frozen=True)
class RunFile:
    """What comparing reads of one ``pfssim run --json`` result."""

    path: Path
    topology: str  # its name
    topology_file: str  # as the run was given it
    seed: int
    precision: float
    workloads: dict[str, dict[str, Any]]  # by name, their settings as the run's inputs give them
    points: dict[tuple[str, str, int], dict[str, Any]]  # by (workload, op, threads)
    # What the numbers came from beyond the inputs: pfssim's version, its model code and parameters
    # (``model_sha256``, ``inputs.parameters``), and the runs each point is the mean of.
    model: tuple[str, str, str] = ("", "", "")
    replications: int = 1
    topology_path: str = ""  # absolute, as the run recorded it
    topology_sha256: str = ""  # of the bytes the run loaded
    parts_sha256: dict[str, str] = field(default_factory=dict)  # parts file name -> of the bytes the run loaded
    spec_sha256: str = ""  # of the system as simulated
    settings: tuple[str, ...] = ()  # the --set replacements it ran with

    @property
    def label(self) -> str:
        """The topology's name with the ``--set`` replacements it ran with."""
        return self.topology + "".join(f" --set {text}" for text in self.settings)


def _fail(path: Path, where: str, message: str) -> NoReturn:
    raise PfssimError(f"{path}: {where}: {message}" if where else f"{path}: {message}")


def _number(path: Path, where: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        _fail(path, where, f"expected a finite number, got {value!r}")
    return float(value)


def load_run(path: Path) -> RunFile:
    """A ``pfssim run --json`` result read from ``path``, checked for what comparing it reads."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        _fail(path, "", f"cannot read file: {reason}")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        _fail(
            path,
            "",
            f"not JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}); give the output of pfssim run --json",
        )
    if not isinstance(data, dict) or "points" not in data or "inputs" not in data:
        _fail(path, "", "not a pfssim run --json result (no points and inputs); give the output of one")
    version = data.get("schema_version")
    if version != RUN_SCHEMA_VERSION:
        _fail(
            path,
            "",
            f"a result of schema version {version!r}; this pfssim compares version {RUN_SCHEMA_VERSION} "
            "(run the topology again with this pfssim)",
        )
    inputs = data["inputs"]
    topology = inputs.get("topology") if isinstance(inputs, dict) else None
    if not isinstance(topology, dict) or not all(isinstance(topology.get(k), str) for k in ("name", "file")):
        _fail(path, "inputs.topology", "expected an object with the topology's name and file")
    seed = data.get("seed")
    if isinstance(seed, bool) or not isinstance(seed, int):
        _fail(path, "seed", f"expected a whole number, got {seed!r}")
    precision = inputs.get("precision")
    if not isinstance(precision, dict):
        _fail(path, "inputs.precision", "expected an object")
    resolution = _number(path, "inputs.precision.rel_precision", precision.get("rel_precision"))
    if not 0 < resolution < 1:
        _fail(path, "inputs.precision.rel_precision", f"expected a fraction between 0 and 1, got {resolution!r}")
    workloads = inputs.get("workloads")
    if not isinstance(workloads, list) or not all(
        isinstance(w, dict) and isinstance(w.get("name"), str) for w in workloads
    ):
        _fail(path, "inputs.workloads", "expected a list of workloads, each with its name")
    points = data["points"]
    if not isinstance(points, list):
        _fail(path, "points", "expected a list")
    if not points:
        _fail(path, "points", "the run has no points to compare")
    keyed: dict[tuple[str, str, int], dict[str, Any]] = {}
    for index, point in enumerate(points):
        where = f"points[{index}]"
        if not isinstance(point, dict):
            _fail(path, where, "expected an object")
        for key, kind in _POINT_KEYS.items():
            if key not in point:
                _fail(path, where, f"missing {key!r}")
            if kind is float:
                _number(path, f"{where}.{key}", point[key])
            elif not isinstance(point[key], kind) or (kind is not bool and isinstance(point[key], bool)):
                _fail(path, f"{where}.{key}", f"unexpected value {point[key]!r}")
        key3 = (point["workload"], point["op"], point["threads"])
        if key3 in keyed:
            _fail(path, where, f"{key3[0]} {key3[1]} at {key3[2]} threads is given twice")
        keyed[key3] = point
    parameters = json.dumps(inputs.get("parameters"), sort_keys=True)
    model = (str(data.get("pfssim_version", "")), str(data.get("model_sha256", "")), parameters)
    replications = precision.get("replications", 1)
    return RunFile(
        path,
        topology["name"],
        topology["file"],
        seed,
        resolution,
        {w["name"]: w for w in workloads},
        keyed,
        model,
        replications if isinstance(replications, int) and not isinstance(replications, bool) else 1,
        str(topology.get("path") or ""),
        str(topology.get("sha256") or ""),
        {str(k): str(v) for k, v in parts.items()} if isinstance(parts := topology.get("parts"), dict) else {},
        str(topology.get("spec_sha256") or ""),
        _settings(path, topology.get("set", [])),
    )


def _settings(path: Path, given: object) -> tuple[str, ...]:
    """A result's ``inputs.topology.set``: the ``--set`` replacements its topology ran with."""
    if not isinstance(given, list) or not all(isinstance(text, str) for text in given):
        _fail(path, "inputs.topology.set", f"expected a list of KEY=VALUE texts, got {given!r}")
    return tuple(given)


#: A workload's settings that may differ between two runs compared: its thread counts (a run may
#: sweep others) and its words (title, source, command line).
_FREE_SETTINGS = frozenset({"threads", "title", "source", "command"})


def _differing(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    return sorted(k for k in a.keys() | b.keys() if k not in _FREE_SETTINGS and a.get(k) != b.get(k))


def _side(point: dict[str, Any]) -> Side:
    busy: dict[str, float] = {}
    for key in ("utilization", "pool_occupancy"):
        shares = point.get(key)
        if isinstance(shares, dict):
            busy.update(
                {n: float(u) for n, u in shares.items() if isinstance(u, int | float) and not isinstance(u, bool)}
            )
    codes = point.get("not_converged")
    return Side(
        float(point["value"]),
        float(point["ci_low"]),
        float(point["ci_high"]),
        point["bottleneck"],
        float(point["bottleneck_utilization"]),
        point["converged"],
        tuple(str(c) for c in codes) if isinstance(codes, list) else (),
        busy,
    )


@dataclass
class TopologyChanges:
    """What differs between the two runs' topologies, read from their files when those are as the
    runs loaded them: parts counted by kind and model, the ``pfssim show`` ceilings and the file-
    system settings as the model runs them."""

    parts: list[tuple[str, str, int, int]] = field(default_factory=list)  # kind, model, base count, other count
    ceilings: dict[str, tuple[float, float]] = field(default_factory=dict)  # read, write: (base, other) B/s
    settings: list[tuple[str, str, str]] = field(default_factory=list)  # key, base value, other value
    # Parts catalogue files whose bytes differ between the runs (a part's figures may have changed
    # under the same model name, which the counts do not show).
    parts_files: list[str] = field(default_factory=list)
    unread: list[str] = field(default_factory=list)  # why a topology could not be read as its run loaded it
    # The systems as simulated differ (spec_sha256) in what the lists above may not show: a part's
    # overrides, a CPU's cores.
    spec_differs: bool = False


def _summary(run: RunFile, unread: list[str]) -> Summary | None:
    """The run's topology summarised, if its file and its parts files are still the bytes the run
    loaded."""
    from sim.config.load import catalogue_dir_for
    from sim.config.overrides import parse_setting
    from sim.topology.build import load_system
    from sim.topology.summary import summarize

    path = Path(run.topology_path or run.topology_file)
    try:
        data = path.read_bytes()
        parts = {name: (catalogue_dir_for(path) / name).read_bytes() for name in run.parts_sha256}
    except (OSError, ValueError) as exc:  # ValueError: a path with a NUL in it
        unread.append(f"{exc.filename if isinstance(exc, OSError) and exc.filename else path}: cannot read file: "
                      f"{exc.strerror if isinstance(exc, OSError) and exc.strerror else exc}")  # fmt: skip
        return None
    if run.topology_sha256 and hashlib.sha256(data).hexdigest() != run.topology_sha256:
        unread.append(f"{path} has changed since {run.path} was run")
        return None
    changed = sorted(
        name for name, bytes_ in parts.items() if hashlib.sha256(bytes_).hexdigest() != run.parts_sha256[name]
    )
    if changed:
        unread.append(f"parts file {', '.join(changed)} beside {path} has changed since {run.path} was run")
        return None
    try:
        return summarize(load_system(path, [parse_setting(text) for text in run.settings]))
    except PfssimError as exc:
        unread.append(f"{path}: {exc}")
        return None


def topology_changes(base: RunFile, other: RunFile) -> TopologyChanges | None:
    """What differs between the runs' topologies (None when both ran one system: the same topology
    and parts files, the same system as simulated)."""
    same = (base.topology_sha256, base.parts_sha256, base.spec_sha256) == (
        other.topology_sha256,
        other.parts_sha256,
        other.spec_sha256,
    )
    if same and base.topology_sha256:
        return None
    changes = TopologyChanges(spec_differs=base.spec_sha256 != other.spec_sha256)
    changes.parts_files = sorted(
        name
        for name in base.parts_sha256.keys() | other.parts_sha256.keys()
        if base.parts_sha256.get(name) != other.parts_sha256.get(name)
    )
    a, b = _summary(base, changes.unread), _summary(other, changes.unread)
    if a is None or b is None:
        return changes
    mine = {(kind, model): n for kind, model, n in a.parts_by_model()}
    theirs = {(kind, model): n for kind, model, n in b.parts_by_model()}
    for key in sorted(mine.keys() | theirs.keys()):
        if mine.get(key, 0) != theirs.get(key, 0):
            changes.parts.append((*key, mine.get(key, 0), theirs.get(key, 0)))
    for op, x, y in (("read", a.read, b.read), ("write", a.write, b.write)):
        if x.Bps != y.Bps:
            changes.ceilings[op] = (x.Bps, y.Bps)
    for op, x, y in (("read", a.read_even, b.read_even), ("write", a.write_even, b.write_even)):
        # As pfssim show gives them: where an equal share per target lowers a ceiling (in either run).
        if x.Bps != y.Bps and (a.even_differs(op) or b.even_differs(op)):
            changes.ceilings[f"{op}, an equal share per target"] = (x.Bps, y.Bps)
    before = {setting.key: setting.text for setting in filesystem_settings(a.system)}
    after = {setting.key: setting.text for setting in filesystem_settings(b.system)}
    for setting in sorted(before.keys() | after.keys()):
        if before.get(setting) != after.get(setting):
            changes.settings.append((setting, before.get(setting, "-"), after.get(setting, "-")))
    return changes


def compare_runs(base: RunFile, other: RunFile) -> Comparison:
    """The points of ``other`` against those of ``base``, matched by workload, op and thread count;
    a workload of one name must have the same settings in both (``--cmd`` workloads are named by
    their place on the command line, ``cmd1``, whatever line it is)."""
    for name in base.workloads.keys() & other.workloads.keys():
        differing = _differing(base.workloads[name], other.workloads[name])
        if differing:
            raise PfssimError(
                f"{other.path}: workload {name} is not the one of {base.path} (they differ in "
                f"{', '.join(differing)}); compare runs of the same workloads"
            )
    result = Comparison(base, other)
    for key, point in base.points.items():
        if key not in other.points:
            result.only_base.append(key)
            continue
        workload, op, threads = key
        pair = PointPair(
            workload, point["benchmark"], op, threads, point["unit"], _side(point), _side(other.points[key])
        )
        result.pairs.append(pair)
    result.only_other = [key for key in other.points if key not in base.points]
    result.changes = topology_changes(base, other)
    return result
