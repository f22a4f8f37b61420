"""Workload files (``workloads/*.yaml``): loading them with located errors and finding them by name."""

from __future__ import annotations

import difflib
import os
from pathlib import Path
from typing import Any, get_args

from pydantic import ValidationError

from sim.benchmarks.cmdline import command_mismatches
from sim.config.load import is_parts_catalogue, is_workload_document, parts_catalogue_problem, validation_problems
from sim.config.workload import AnyWorkload, Benchmark, MdtestWorkload, Workload, setting_key
from sim.config.yamlio import SourceMap, load_yaml, with_deferred
from sim.errors import ConfigError, Problem, WorkloadError

#: The repository's own ``workloads/`` (found when pfssim runs from a checkout or an editable install).
REPOSITORY_WORKLOADS = Path(__file__).resolve().parents[2] / "workloads"


def workload_dirs(topology: Path | None = None) -> list[Path]:
    """Where workload names are looked up, in order: ``workloads/`` beside the topology's folder
    (``topologies/x.yaml`` -> ``workloads/``), ``workloads/`` in the current directory, the repository's."""
    candidates = []
    if topology is not None:
        here = Path(topology).resolve().parent
        candidates += [here.parent / "workloads", here / "workloads"]
    candidates += [Path.cwd() / "workloads", REPOSITORY_WORKLOADS]
    unique: list[Path] = []
    for path in candidates:
        if path.is_dir() and path.resolve() not in [u.resolve() for u in unique]:
            unique.append(path)
    return unique


def workload_dir(topology: Path | None = None) -> Path:
    """The first workload folder found (the repository's when none is)."""
    dirs = workload_dirs(topology)
    return dirs[0] if dirs else REPOSITORY_WORKLOADS


def _relocate(problem: Problem, data: Any, smap: SourceMap) -> Problem:
    """An IOzone/IOR problem the model could not key (:class:`SettingError`), made useful.

    An unknown ``benchmark`` is told every choice, mdtest's too, which :class:`Workload` does not list;
    "give exactly one of file_size and aggregate_size" is put at whichever of them is written
    (at ``file_size``, the usual one, when neither is)."""
    message = problem.message
    if problem.path == "benchmark" and message.startswith("Input should be"):
        # Every choice in one list, mdtest's too (Workload's own list lacks it), and the likeliest.
        given = data.get("benchmark") if isinstance(data, dict) else None
        choices = [*get_args(Benchmark), "mdtest"]
        close = difflib.get_close_matches(str(given), choices, n=1, cutoff=0.6)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        return Problem(
            problem.file,
            problem.line,
            problem.path,
            f"unknown benchmark {given!r}{hint}; it is one of {', '.join(choices)}",
        )
    if problem.path or not isinstance(data, dict) or not ("file_size" in message and "aggregate_size" in message):
        return problem
    written = [key for key in ("aggregate_size", "file_size") if key in data]
    return smap.problem((written[0] if written else "file_size",), message)


def _keyed(cls: type[Workload] | type[MdtestWorkload], data: Any, smap: SourceMap) -> AnyWorkload:
    """A workload of ``cls``; a consistency error is pointed at the key it names (see
    :class:`SettingError`), an IOzone/IOR one without a key at the key its message is about
    (:func:`_relocate`)."""
    try:
        return cls.model_validate(data)
    except ValidationError as exc:
        keys = {
            error["msg"].removeprefix("Value error, "): key for error in exc.errors() if (key := setting_key(error))
        }
        problems = []
        for problem in validation_problems(exc, data, smap, model=cls):
            key = keys.get(problem.message)
            if not problem.path and key is not None and isinstance(data, dict):
                # At the key's line, or named at the file's when the key is not written (a default).
                problem = smap.problem((key,), problem.message)
            problems.append(_relocate(problem, data, smap) if cls is Workload else problem)
        raise WorkloadError(problems) from None


def load_workload(path: Path) -> AnyWorkload:
    """Read and validate one workload file; every problem is a located :class:`WorkloadError`.

    A file with ``benchmark: mdtest`` is an :class:`MdtestWorkload`; every other file a :class:`Workload`.
    A ``name`` that differs from the file's name is reported with the file's other problems, not
    only once they are fixed.
    """
    try:
        data, smap = load_yaml(path, lenient=True)  # a duplicate key is reported with the other problems
    except ConfigError as exc:
        raise WorkloadError(exc.problems) from None
    name = data.get("name") if isinstance(data, dict) and not _is_topology(data) else None
    misnamed = []
    if isinstance(name, str) and name != path.stem:
        misnamed.append(
            smap.problem(
                ("name",),
                f"name {name!r} differs from the file name {path.name!r}; "
                f"make them equal (name: {path.stem}, or rename the file)",
            )
        )
    try:
        workload = _validate_workload(data, smap)
    except WorkloadError as exc:
        raise WorkloadError(with_deferred(smap, [*exc.problems, *misnamed])) from None
    if misnamed or smap.deferred:
        raise WorkloadError(with_deferred(smap, misnamed))
    return workload


def _is_topology(data: Any) -> bool:
    return isinstance(data, dict) and "benchmark" not in data and {"servers", "filesystem"} <= data.keys()


def _validate_workload(data: Any, smap: SourceMap) -> AnyWorkload:
    """The workload ``data`` (read from ``smap``'s file) holds, its command checked against it."""
    workload: AnyWorkload
    if _is_topology(data):
        raise WorkloadError(
            [
                smap.problem(
                    (),
                    "this is a topology file (it has servers: and filesystem:), not a workload; give it as the "
                    "TOPOLOGY argument and a workload name or file to --workload",
                )
            ]
        )
    if is_parts_catalogue(data):
        remedy = "give --workload a workload name or a workload file (workloads/*.yaml)"
        raise WorkloadError([parts_catalogue_problem(data, smap, "a workload", remedy)])
    if isinstance(data, dict) and data.get("benchmark") == "mdtest":
        workload = _keyed(MdtestWorkload, data, smap)
    else:
        try:
            workload = _keyed(Workload, data, smap)
        except WorkloadError as exc:
            about_benchmark = [p for p in exc.problems if p.path == "benchmark"]
            # With an unknown benchmark the other keys were checked against the wrong schema: the
            # benchmark's own line is the only finding worth reading.
            raise WorkloadError(about_benchmark or exc.problems) from None
    workload.locate(smap)
    mismatches = command_mismatches(workload)
    if mismatches:
        hint = (
            "; the settings are what pfssim simulates, so make the command the one they describe, or leave command: out"
        )
        raise WorkloadError([smap.problem(("command",), message + hint) for message in mismatches])
    return workload


def known_workloads(topology: Path | None = None) -> list[str]:
    """Names of the workloads that can be given by name, sorted."""
    return sorted({path.stem for folder in workload_dirs(topology) for path in folder.glob("*.yaml")})


def find_workload(name_or_path: str, topology: Path | None = None, base: Path | None = None) -> AnyWorkload:
    """A workload given as a path to a ``.yaml`` file, or by name from :func:`workload_dirs`.

    A relative path is taken from ``base`` when given (a topology's ``benchmarks`` entries are
    relative to the topology's folder, as its ``parts/`` is), else from the current folder (a
    path on the command line)."""
    candidate = Path(name_or_path)
    if candidate.suffix in (".yaml", ".yml") or "/" in name_or_path or candidate.is_file():
        if base is not None and not candidate.is_absolute():
            candidate = base / candidate
        return load_workload(candidate)
    for folder in workload_dirs(topology):
        path = folder / f"{name_or_path}.yaml"
        # Anything under the name, a file or not (a dangling link, a folder), is the workload meant:
        # it is read, and refused if unreadable, not passed over for a copy in a later folder.
        if path.exists() or path.is_symlink():
            return load_workload(path)
    folders = workload_dirs(topology)
    # A workload file beside the topology (or in the current folder) is not looked up by name, only
    # workloads/ folders are: say how to name it rather than only that the name is unknown.
    near = [Path(topology).resolve().parent] if topology is not None else []
    loose = [d / f"{name_or_path}.yaml" for d in [*near, Path.cwd()] if (d / f"{name_or_path}.yaml").is_file()]
    hint = ""
    if loose and is_workload_file(loose[0]):
        # The path as it must be written where the name was: a benchmarks entry is relative to the
        # topology's folder (``base``), a --workload to the current folder.
        where = (base or Path.cwd()).resolve()
        written = os.path.relpath(loose[0], where)
        hint = (
            f"; {loose[0]} is not in a workloads/ folder, so give its path, {written} (relative to "
            f"{'the topology' + chr(39) + 's folder' if base is not None else 'the current folder'})"
        )
    if folders:
        known = ", ".join(known_workloads(topology)) or "none"
        searched = ", ".join(str(d) for d in folders)
        message = (
            f"unknown workload {name_or_path!r} (known: {known}; searched {searched}); give one of these "
            f"names or a path to a .yaml file{hint}"
        )
    else:
        message = (
            f"unknown workload {name_or_path!r}: no workloads/ folder beside the topology's folder, in it or in "
            "the current folder (run from the pfssim checkout, or copy its workloads/ beside your topology's "
            f"folder); or give a path to a .yaml file{hint}"
        )
    raise WorkloadError([Problem("--workload", None, "", message)])


def is_workload_file(path: Path) -> bool:
    """True when ``path`` holds a workload (:func:`sim.config.load.is_workload_document`).

    Unreadable or malformed YAML gives False, so the caller reports it through the topology loader.
    """
    try:
        data, _ = load_yaml(path, lenient=True)  # a duplicate key does not make it another kind of file
    except ConfigError:
        return False
    return is_workload_document(data)
