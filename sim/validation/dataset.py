"""Published datasets (``validation/*.yaml``) and the list of known misses, loaded with located errors.

A dataset file holds one system's published results: per benchmark the workload that reproduces
it, the published points (each with its kind, value as printed, tolerance and source) and the
document's shape statements with a declarative check each (see :mod:`sim.validation.shapes`).
Benchmarks the simulator cannot run yet carry ``pending`` and are listed but never scored.
``unscored`` names workloads whose results are not in the data: they are predicted, not scored.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from sim.config.load import TOPOLOGY_SECTIONS, validate_model
from sim.config.quantities import Count, Model, Text
from sim.config.units import Dimension, UnitError, parse_quantity
from sim.config.yamlio import SourceMap, load_yaml, with_deferred
from sim.errors import ConfigError, PfssimError, Problem
from sim.params import PARAMETERS
from sim.validation.shapes import CheckSpec

#: The repository's ``validation/`` folder (a checkout or an editable install).
VALIDATION_DIR = Path(__file__).resolve().parents[2] / "validation"
#: The repository's ``topologies/`` folder.
TOPOLOGY_DIR = Path(__file__).resolve().parents[2] / "topologies"
KNOWN_MISSES_FILE = "known-misses.yaml"
DEFAULT_TOLERANCE = 0.10
#: Thread counts run for unscored predictions (those of each workload's own list that are here).
UNSCORED_THREADS = (1, 8, 64, 512)

Kind = Literal["peak", "value", "plateau", "sustained", "approximate"]


def default_directory() -> Path:
    """The repository's ``validation/``, or ``validation/`` in the current folder when pfssim is installed."""
    for candidate in (VALIDATION_DIR, Path.cwd() / "validation"):
        if candidate.is_dir():
            return candidate
    return VALIDATION_DIR


def topology_file(system: str, dataset_file: Path) -> Path:
    """A system's topology: ``topologies/<system>.yaml`` beside the dataset's folder, else the repository's."""
    beside = dataset_file.resolve().parent.parent / "topologies" / f"{system}.yaml"
    return beside if beside.is_file() else TOPOLOGY_DIR / f"{system}.yaml"


def parse_published(text: str) -> tuple[float, str]:
    """A value as printed (``121 GB/s``, ``3.6M IOPS``, ``164.76K op/s``) -> (SI float, ``B/s`` or ``op/s``)."""
    try:
        return parse_quantity(text, Dimension.BANDWIDTH), "B/s"
    except UnitError as bandwidth_error:
        try:
            return parse_quantity(text, Dimension.IOPS), "op/s"
        except UnitError:
            raise UnitError(f"{bandwidth_error} (or an operation rate such as '3.6M IOPS')") from None


class PublishedPoint(Model):
    """One published number and how it is compared with the prediction."""

    id: Text
    op: Text
    kind: Kind
    threads: Count | None = None
    threads_range: tuple[Count, Count] | None = None
    value: Text
    tolerance: float = Field(DEFAULT_TOLERANCE, gt=0, lt=1)
    source: Text
    quote: Text | None = None
    note: Text | None = None
    # The model parameter (sim.params) fitted on this point, wholly or with others: agreement here
    # is by construction, so the point is scored but kept out of the error medians.
    fitted: Text | None = None

    @field_validator("value")
    @classmethod
    def _parses(cls, value: str) -> str:
        parse_published(value)
        return value

    @model_validator(mode="after")
    def _where(self) -> PublishedPoint:
        if self.threads is not None and self.threads_range is not None:
            raise ValueError("give threads or threads_range, not both")
        if self.threads_range is not None:
            if self.kind not in ("plateau", "sustained"):
                raise ValueError(f"threads_range is for plateau or sustained points, not {self.kind}")
            if self.threads_range[0] >= self.threads_range[1]:
                raise ValueError("threads_range must be [low, high] with low < high")
        if self.kind in ("value", "approximate") and self.threads is None:
            raise ValueError(f"a {self.kind} point needs its thread count (threads)")
        if self.kind in ("plateau", "sustained") and self.threads is not None:
            raise ValueError(f"a {self.kind} point spans a range: give threads_range, or nothing")
        return self

    @property
    def published(self) -> float:
        """The published value in SI units."""
        return parse_published(self.value)[0]

    @property
    def unit(self) -> str:
        """``B/s`` or ``op/s``."""
        return parse_published(self.value)[1]


class Shape(Model):
    """A shape statement of the document and its executable check."""

    id: Text
    statement: Text
    check: CheckSpec
    note: Text | None = None


class BenchmarkData(Model):
    """One benchmark of a document: its workload, points and shapes."""

    workload: Text | None = None
    pending: Text | None = None
    points: list[PublishedPoint] = Field(default_factory=list)
    shapes: list[Shape] = Field(default_factory=list)

    @model_validator(mode="after")
    def _runnable(self) -> BenchmarkData:
        if self.workload is None and self.pending is None:
            raise ValueError("give the workload that reproduces this benchmark, or pending: <why it cannot run>")
        for kind, ids in (("point", [p.id for p in self.points]), ("shape", [s.id for s in self.shapes])):
            duplicates = sorted({i for i in ids if ids.count(i) > 1})
            if duplicates:
                raise ValueError(f"{kind} id {duplicates[0]!r} is used twice")
        return self


class Unscored(Model):
    """A workload whose results are not in the data: predicted and shown, never scored."""

    workload: Text
    why: Text
    threads: list[Count] | None = None


class DatasetSpec(Model):
    """The schema of one ``validation/<system>.yaml``."""

    system: Text
    document: Text
    transcribed_from: Text | None = None
    text: Text | None = None
    benchmarks: dict[str, BenchmarkData] = Field(default_factory=dict)
    unscored: list[Unscored] = Field(default_factory=list)


@dataclass(frozen=True)
class Dataset:
    """A validated dataset, with the file it came from and its line map."""

    spec: DatasetSpec
    file: Path
    smap: SourceMap

    @property
    def system(self) -> str:
        """The system (topology) name."""
        return self.spec.system

    @property
    def topology(self) -> Path:
        """The topology file the system is simulated on."""
        return topology_file(self.spec.system, self.file)

    @property
    def scored(self) -> bool:
        """True when the system has published points to score."""
        return any(b.pending is None and b.points for b in self.spec.benchmarks.values())


class MissSpec(Model):
    """One known miss: a point (by id) or a shape (by id) that is out of tolerance today, and why."""

    system: Text
    benchmark: Text
    point: Text | None = None
    shape: Text | None = None
    op: Text | None = None
    threads: Count | None = None
    error: Text | None = None
    why: Text

    @model_validator(mode="after")
    def _one(self) -> MissSpec:
        if (self.point is None) == (self.shape is None):
            raise ValueError("a known miss names exactly one of point and shape")
        return self

    @property
    def key(self) -> tuple[str, str, str, str]:
        """(system, benchmark, 'point' or 'shape', id)."""
        if self.point is not None:
            return (self.system, self.benchmark, "point", self.point)
        return (self.system, self.benchmark, "shape", self.shape or "")


def validation_kind(data: Any) -> str | None:
    """ "dataset" or "known-misses" for a document of validation/ (by its keys, misspelt ones aside),
    else None: a mapping with a topology's sections is a topology whatever else it holds."""
    if not isinstance(data, dict) or TOPOLOGY_SECTIONS & data.keys():
        return None
    if "misses" in data:
        return "known-misses"
    # Keys only a dataset has (a topology has benchmarks: too, a workload document none of these).
    return "dataset" if (DatasetSpec.model_fields.keys() - {"benchmarks"}) & data.keys() else None


class KnownMissesSpec(Model):
    """The schema of ``validation/known-misses.yaml``."""

    misses: list[MissSpec] = Field(default_factory=list)


def _fitted_problem(name: str, system: str) -> str | None:
    """Why ``fitted: name`` cannot be right on a point of ``system`` (None when it can)."""
    parameter = PARAMETERS.get(name)
    if parameter is None:
        return f"{name!r} is not a model parameter (pfssim reproduce --parameters lists them)"
    if parameter.fitted_on is None:
        return f"{name} is not fitted on published data (its source: {parameter.source})"
    if parameter.fitted_on.split()[0] != system:
        return f"{name} is fitted on {parameter.fitted_on}, not on {system}"
    return None


def _cross_check(spec: DatasetSpec, smap: SourceMap, path: Path) -> list[Problem]:
    """Workloads exist, ops and thread counts of points and checks belong to the workload."""
    from sim.benchmarks.workloads import find_workload
    from sim.errors import WorkloadError

    problems: list[Problem] = []
    topology = topology_file(spec.system, path)
    if not topology.is_file():
        problems.append(smap.problem(("system",), f"no topology {topology.name} in {topology.parent}"))
        return problems
    for name, bench in spec.benchmarks.items():
        if bench.pending is not None or bench.workload is None:
            continue
        try:
            workload = find_workload(bench.workload, topology)
        except WorkloadError as exc:
            problems += [smap.problem(("benchmarks", name, "workload"), p.message) for p in exc.problems]
            continue
        # The key names the document's benchmark, of the kind its workload runs (an mdtest key says
        # which mdtest run: mdtest_empty, mdtest_4k); a misspelt key would match no known miss.
        if not (name == workload.benchmark or workload.benchmark == "mdtest" and name.startswith("mdtest_")):
            kind = "mdtest_<run>" if workload.benchmark == "mdtest" else workload.benchmark
            problems.append(
                smap.problem(("benchmarks", name), f"{workload.name} runs {workload.benchmark}: name it {kind}")
            )
        for i, point in enumerate(bench.points):
            where = ("benchmarks", name, "points", i)
            if point.fitted is not None:
                problem = _fitted_problem(point.fitted, spec.system)
                if problem:
                    problems.append(smap.problem((*where, "fitted"), problem))
            if point.op not in workload.point_ops:
                problems.append(smap.problem((*where, "op"), f"{workload.name} does not run {point.op!r}"))
            if point.threads is not None and point.threads not in workload.threads:
                problems.append(
                    smap.problem((*where, "threads"), f"{workload.name} does not run {point.threads} threads")
                )
        for i, shape in enumerate(bench.shapes):
            for message in shape.check.problems(workload.point_ops, workload.threads):
                problems.append(smap.problem(("benchmarks", name, "shapes", i, "check"), message))
    for i, entry in enumerate(spec.unscored):
        try:
            find_workload(entry.workload, topology)
        except WorkloadError as exc:
            problems += [smap.problem(("unscored", i, "workload"), p.message) for p in exc.problems]
    return problems


def load_dataset(path: Path) -> Dataset:
    """Read and check one dataset file; every problem is a located :class:`ConfigError`."""
    data, smap = load_yaml(path, lenient=True)  # a duplicate key is reported with the other problems
    try:
        spec = validate_model(DatasetSpec, data, smap)
    except ConfigError as exc:
        raise ConfigError(with_deferred(smap, exc.problems)) from None
    problems = _cross_check(spec, smap, path)
    if problems or smap.deferred:
        raise ConfigError(with_deferred(smap, problems))
    return Dataset(spec, path, smap)


def load_datasets(directory: Path | None = None, skip: Path | None = None) -> list[Dataset]:
    """Every dataset of ``directory`` (default: :func:`default_directory`): the systems with published
    results first, then prediction-only ones; ``skip``, a file there that is not a dataset (a
    known-misses file under another name that ``pfssim validate`` was given)."""
    directory = directory or default_directory()
    files = sorted(
        p
        for p in directory.glob("*.yaml")
        if p.name != KNOWN_MISSES_FILE and not (skip is not None and p.resolve() == skip.resolve())
    )
    if not files:
        # Installed, pfssim looks in the current folder's validation/ (default_directory): name that one.
        where = Path.cwd() / "validation" if directory == VALIDATION_DIR and not directory.is_dir() else directory
        raise PfssimError(f"no validation datasets (*.yaml) in {where}; run pfssim reproduce from the project's folder")
    datasets: list[Dataset] = []
    problems: list[Problem] = []
    for path in files:
        try:
            datasets.append(load_dataset(path))
        except ConfigError as exc:
            problems += exc.problems
    names = [d.system for d in datasets]
    for dataset in datasets:
        if names.count(dataset.system) > 1:
            problems.append(dataset.smap.problem(("system",), f"{dataset.system} has more than one dataset file"))
    if problems:
        raise ConfigError(problems)
    return sorted(datasets, key=lambda d: (not d.scored, d.system))


def _miss_problem(miss: MissSpec, datasets: dict[str, Dataset]) -> tuple[str, str] | None:
    """(key, why) when ``miss`` names a system, benchmark, point or shape no dataset has (None if all
    exist): such an entry excuses nothing, and a misspelling in either file would go unnoticed."""
    dataset = datasets.get(miss.system)
    if dataset is None:
        return "system", f"no dataset is for system {miss.system!r} (datasets: {', '.join(sorted(datasets))})"
    bench = dataset.spec.benchmarks.get(miss.benchmark)
    if bench is None:
        known = ", ".join(sorted(dataset.spec.benchmarks))
        return "benchmark", f"{dataset.file.name} has no benchmark {miss.benchmark!r} (it has: {known})"
    kind, wanted = ("point", miss.point) if miss.point is not None else ("shape", miss.shape)
    ids = [p.id for p in bench.points] if kind == "point" else [s.id for s in bench.shapes]
    if wanted not in ids:
        return kind, f"{miss.benchmark} of {miss.system} has no {kind} {wanted!r} (it has: {', '.join(ids) or 'none'})"
    # op and threads are for the reader, so they must be the point's own (a commit review).
    point = next((p for p in bench.points if p.id == wanted), None)
    if point is not None and miss.op is not None and miss.op != point.op:
        return "op", f"point {wanted} is of {point.op}, not {miss.op}"
    if point is not None and miss.threads is not None and miss.threads != point.threads:
        stated = f"at {point.threads} threads" if point.threads is not None else "without a thread count"
        return "threads", f"point {wanted} is published {stated}, not at {miss.threads}"
    return None


def load_known_misses(
    directory: Path | None = None, datasets: list[Dataset] | None = None
) -> dict[tuple[str, str, str, str], MissSpec]:
    """The known misses by (system, benchmark, 'point'|'shape', id); an absent file is an empty list.

    With ``datasets`` (all of the folder's), every entry must name a point or shape one of them has."""
    path = (directory or default_directory()) / KNOWN_MISSES_FILE
    if not path.is_file():
        return {}
    return load_known_misses_file(path, datasets)


def load_known_misses_file(
    path: Path, datasets: list[Dataset] | None = None
) -> dict[tuple[str, str, str, str], MissSpec]:
    """:func:`load_known_misses` of the file ``path`` (``pfssim validate`` of any such file)."""
    data, smap = load_yaml(path, lenient=True)
    try:
        spec = validate_model(KnownMissesSpec, data, smap)
    except ConfigError as exc:
        raise ConfigError(with_deferred(smap, exc.problems)) from None
    result: dict[tuple[str, str, str, str], MissSpec] = {}
    problems = []
    by_system = {d.system: d for d in datasets or []}
    for i, miss in enumerate(spec.misses):
        if miss.key in result:
            problems.append(smap.problem(("misses", i), f"{'/'.join(miss.key)} is listed twice"))
        result[miss.key] = miss
        wrong = _miss_problem(miss, by_system) if datasets is not None else None
        if wrong is not None:
            problems.append(smap.problem(("misses", i, wrong[0]), wrong[1]))
    if problems or smap.deferred:
        raise ConfigError(with_deferred(smap, problems))
    return result
