"""Loading topology files and the parts catalogue into validated models, with located errors.

Pydantic's error locations are turned back into YAML paths and line numbers, so that every message
reads ``file:line path: what is wrong``. All problems of a file are collected before raising.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import UnionType
from typing import Annotated, Any, Literal, TypeVar, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError

from sim.config.overrides import Setting, apply_settings, as_set_problems
from sim.config.parts import PART_KINDS, PART_REFERENCES, Part, merge_fields
from sim.config.quantities import name_problem
from sim.config.system import SystemSpec
from sim.config.yamlio import SourceMap, load_yaml, with_deferred
from sim.errors import ConfigError, Problem

M = TypeVar("M", bound=BaseModel)


def _data_path(data: Any, loc: tuple[Any, ...]) -> tuple[str | int, ...]:
    """Keep the elements of a pydantic ``loc`` that name real keys/indices of ``data``.

    Pydantic inserts union tags and validator names into locations; they are not YAML paths.
    """
    path: list[str | int] = []
    node = data
    for element in loc:
        if (
            isinstance(node, dict)
            and element in node
            or isinstance(node, list)
            and isinstance(element, int)
            and 0 <= element < len(node)
        ):
            path.append(element)
            node = node[element]
    return tuple(path)


def _required_keys(class_name: str | None) -> list[str]:
    """The required keys of the schema class named ``class_name`` (a pydantic error names its class)."""
    from sim.config.quantities import Model

    todo: list[type] = [Model]
    while todo:
        cls = todo.pop()
        if cls.__name__ == class_name and issubclass(cls, Model):
            return [name for name, info in cls.model_fields.items() if info.is_required()]
        todo.extend(cls.__subclasses__())
    return []


def _options(annotation: Any) -> list[Any]:
    """The types a value of ``annotation`` may be: ``Annotated`` unwrapped, unions spread out."""
    while get_origin(annotation) is Annotated:
        annotation = get_args(annotation)[0]
    if get_origin(annotation) in (Union, UnionType):
        return [option for arg in get_args(annotation) for option in _options(arg)]
    return [annotation]


def _is_model(option: Any) -> bool:
    return isinstance(option, type) and issubclass(option, BaseModel)


def _names(option: Any, element: object) -> bool:
    """Whether a location element is pydantic's name for the union member ``option``: a
    discriminated union's tag (the member's ``Literal`` value of its ``kind``), or the class's name."""
    if not _is_model(option):
        return False
    if element == option.__name__:
        return True
    for info in option.model_fields.values():
        if get_origin(info.annotation) is Literal and element in get_args(info.annotation):
            return True
    return False


def _keys_at(model: type[BaseModel], loc: tuple[Any, ...]) -> list[str]:
    """The keys the schema takes in the mapping at ``loc`` (a pydantic error's location, under
    ``model``), or none when the walk cannot tell: what an unknown key there may have meant."""
    options: list[Any] = [model]
    for element in loc:
        inner: list[Any] = []
        for option in options:
            if _is_model(option):
                if isinstance(element, str) and element in option.model_fields:
                    inner += _options(option.model_fields[element].annotation)
            elif get_origin(option) in (list, tuple) and isinstance(element, int):
                inner += _options(get_args(option)[0])
            elif get_origin(option) is dict and isinstance(element, str):
                inner += _options(get_args(option)[1])
        if not inner:  # the element is not a key or an index but pydantic's name of a union member
            inner = [option for option in options if _names(option, element)]
        options = inner
    return sorted({key for option in options if _is_model(option) for key in option.model_fields})


def _message(error: Any) -> str:
    kind = error["type"]
    loc = error["loc"]
    if kind == "extra_forbidden":
        return f"unknown key {loc[-1]!r}"
    if kind == "missing":
        return f"missing required key {loc[-1]!r}"
    message = str(error["msg"])
    for prefix in ("Value error, ", "Assertion failed, "):
        if message.startswith(prefix):
            message = message[len(prefix) :]
    bounds = {
        "greater_than_equal": ("ge", "at least"),
        "greater_than": ("gt", "more than"),
        "less_than_equal": ("le", "at most"),
        "less_than": ("lt", "less than"),
    }
    if kind in bounds:  # in the words of pfssim's own checks, not pydantic's "Input should be ..."
        key, words = bounds[kind]
        limit = error.get("ctx", {}).get(key)
        if limit is not None:
            return f"must be {words} {limit}, got {error.get('input')!r}"
    if kind == "literal_error":
        message += f" (got {error.get('input')!r})"
    elif kind == "union_tag_invalid":  # the input is the whole mapping; the message already names the tag
        tag = error.get("ctx", {}).get("tag")
        expected = error.get("ctx", {}).get("expected_tags")
        if tag is not None and expected is not None:
            message = f"unknown kind {tag!r}; expected {expected}"
    elif kind in ("dict_type", "model_type", "model_attributes_type"):
        message = f"expected a mapping of keys to values, got {_kind_of(error.get('input'))}"
        required = _required_keys(error.get("ctx", {}).get("class_name"))
        if required:  # capacity_efficiency: 0.99 -> {value: 0.99, source: ...}
            message += f" (it takes {', '.join(required)}: {{{', '.join(f'{k}: ...' for k in required)}}})"
    elif kind == "bool_type":
        given = error.get("input")
        message = f"expected true or false, got {given!r}"
        if isinstance(given, str) and given.lower() in ("true", "false"):
            message = f"expected true or false, got the text {given!r} (in quotes); write it without quotes"
    elif kind == "too_short" and error.get("ctx", {}).get("min_length") == 1:
        message = "needs at least one entry"
    elif kind in ("int_type", "int_parsing", "int_from_float", "float_type", "float_parsing"):
        given = error.get("input")
        message = f"expected {'a whole number' if kind.startswith('int') else 'a number'}, got {_kind_of(given)}"
        if isinstance(given, str) and _is_number(given):
            message += "; write it without quotes"
    elif kind == "string_type":
        given = error.get("input")
        message = f"expected text, got {_kind_of(given)}"
        if isinstance(given, int | float) and not isinstance(given, bool):
            message += "; put it in quotes to keep it as written"
    return message


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _kind_of(value: Any) -> str:
    """What a YAML value is, in the file's words (not Python's type names)."""
    if value is None:
        return "nothing (null)"
    if isinstance(value, bool):
        return f"{str(value).lower()} (a yes/no value)"
    if isinstance(value, int | float):
        return f"a number ({value!r})"
    if isinstance(value, str):
        return f"text ({value!r})"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


def _node(data: Any, path: tuple[str | int, ...]) -> Any:
    for element in path:
        data = data[element]
    return data


def _tag_problem(
    error: Any, data: Any, path: tuple[str | int, ...], prefix: tuple[str | int, ...]
) -> tuple[tuple[str | int, ...], str]:
    """Where and what a discriminated union's tag problem is (``filesystem.kind``): at the tag's own
    key and line, with the value as written (pydantic reports the mapping, with the value as text)."""
    ctx = error.get("ctx", {})
    key = str(ctx.get("discriminator", "")).strip("'")
    node = _node(data, path[len(prefix) :])
    if error["type"] == "union_tag_not_found" or not isinstance(node, dict) or key not in node:
        return (*path, key), f"missing required key {key!r}"
    value = node[key]
    expected = ctx.get("expected_tags", "")
    if isinstance(value, str):
        return (*path, key), f"unknown {key} {value!r}; expected {expected}"
    return (*path, key), f"expected one of {expected}, got {_kind_of(value)}"


# What a union's word or number alternatives say of a list (see validation_problems).
_SCALAR_TYPE_ERRORS = frozenset({"string_type", "literal_error", "int_type", "float_type", "bool_type"})


def validation_problems(
    exc: ValidationError,
    data: Any,
    smap: SourceMap,
    prefix: tuple[str | int, ...] = (),
    model: type[BaseModel] | None = None,
    merged: bool = False,
) -> list[Problem]:
    """Translate a pydantic :class:`ValidationError` on ``data`` (found at ``prefix``) into problems.

    ``model``, the schema ``data`` was validated as, lets an unknown key that resembles one the
    schema takes there say which (``memroy`` -> did you mean 'memory'?), less the keys the mapping
    already has; ``merged``: ``data`` merges what the user wrote into other fields (a part's
    overrides into its catalogue entry), so a key it has may not be one the user wrote."""
    problems = []
    seen = set()
    errors = exc.errors()
    # A list given where a union takes a word or a list (``interfaces: []``, ``switch: []``): the
    # list's own problem is the one to report, not that it is not the word.
    short_lists = {_data_path(data, tuple(e["loc"])) for e in errors if e["type"] in ("too_short", "too_long")}
    # A misspelt required key is both an unknown key and a missing one: said once, as the unknown key
    # with the one it resembles (``cuont: 12`` -> did you mean 'count'?).
    missing: dict[tuple, list[str]] = {}
    for error in errors:
        if error["type"] == "missing" and error["loc"] and isinstance(error["loc"][-1], str):
            missing.setdefault(tuple(error["loc"][:-1]), []).append(error["loc"][-1])
    # A union of a word and a mapping (a server's ``cpu:``, a part by name or ``{part: ...,
    # overrides: ...}``): a mapping's problems are its keys', not that it is not a word; a value that
    # is neither gets one problem saying both (pydantic reports each member's).
    located = [(_data_path(data, tuple(e["loc"])), e) for e in errors]
    mapping_types = ("dict_type", "model_type", "model_attributes_type")
    either = {path for path, e in located if e["type"] in mapping_types} & {
        path for path, e in located if e["type"] == "string_type"
    }
    meant: dict[tuple, str] = {}  # unknown key's loc -> the missing key it resembles
    for error in errors:
        loc = tuple(error["loc"])
        if error["type"] == "extra_forbidden" and loc and isinstance(loc[-1], str):
            close = difflib.get_close_matches(loc[-1], missing.get(loc[:-1], []), n=1, cutoff=0.6)
            if close and (loc[:-1], close[0]) not in {(u[:-1], k) for u, k in meant.items()}:
                meant[loc] = close[0]
    for error in errors:
        loc = tuple(error["loc"])
        if (
            isinstance(error.get("input"), list)
            and error["type"] in _SCALAR_TYPE_ERRORS
            and _data_path(data, loc) in short_lists
        ):
            continue
        if error["type"] == "missing" and loc and loc[-1] in {k for u, k in meant.items() if u[:-1] == loc[:-1]}:
            continue  # said with the unknown key that is its misspelling
        where = _data_path(data, loc)
        if error["type"] == "string_type" and (
            where in either
            or isinstance(error.get("input"), dict)
            and any(other is not error and at[: len(where)] == where for at, other in located)
        ):
            continue  # a word-or-mapping union: said by the mapping's problems (see above)
        path = prefix + where
        message = _message(error)
        if error["type"] in mapping_types and where in either:
            required = _required_keys(error.get("ctx", {}).get("class_name"))
            shape = f" ({{{', '.join(f'{k}: ...' for k in required)}}})" if required else ""
            message = f"expected text or a mapping{shape}, got {_kind_of(error.get('input'))}"
        if loc in meant:
            message += f" (did you mean {meant[loc]!r}? it is required)"
        elif error["type"] == "extra_forbidden" and model is not None and loc and isinstance(loc[-1], str):
            written = _node(data, _data_path(data, loc[:-1]))
            free = [
                key for key in _keys_at(model, loc[:-1]) if merged or not (isinstance(written, dict) and key in written)
            ]
            close = difflib.get_close_matches(loc[-1], free, n=1, cutoff=0.6)
            if close:
                message += f" (did you mean {close[0]!r}?)"
        if error["type"] in ("extra_forbidden", "missing") and loc:
            key = loc[-1]
            path = prefix + _data_path(data, loc[:-1]) + (key,)
        elif error["type"] in ("union_tag_invalid", "union_tag_not_found"):
            path, message = _tag_problem(error, data, path, prefix)
        problem = smap.problem(path, message)
        if (problem.path, problem.message) not in seen:
            seen.add((problem.path, problem.message))
            problems.append(problem)
    return problems


def validate_model(
    cls: type[M], data: Any, smap: SourceMap, prefix: tuple[str | int, ...] = (), merged: bool = False
) -> M:
    """Validate ``data`` as ``cls`` or raise :class:`ConfigError` with located problems (``merged``:
    see :func:`validation_problems`)."""
    try:
        return cls.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(validation_problems(exc, data, smap, prefix, cls, merged)) from None


@dataclass(frozen=True)
class CatalogueEntry:
    """One part: its validated model, its raw fields (for overrides) and where it was defined."""

    kind: str
    name: str
    part: Part
    raw: dict[str, Any]
    smap: SourceMap
    path: tuple[str | int, ...]


@dataclass
class Catalogue:
    """All parts known to a system: the shared catalogue plus the system file's own ``parts``."""

    entries: dict[str, dict[str, CatalogueEntry]] = field(default_factory=lambda: {kind: {} for kind in PART_KINDS})
    # Parts defined with problems of their own (already reported): a reference to one is not unknown.
    invalid: dict[str, set[str]] = field(default_factory=lambda: {kind: set() for kind in PART_KINDS})
    # The catalogue files read, by file name, with the sha256 of the bytes parsed (a result names them).
    sources: dict[str, str] = field(default_factory=dict)
    # Catalogue files that could not be read at all (malformed YAML, reported): the parts they
    # define are unknown, so a reference to a missing part is not said to be wrong while one is.
    unreadable: list[str] = field(default_factory=list)

    def get(self, kind: str, name: str) -> CatalogueEntry | None:
        """The entry of ``kind`` called ``name``, or None."""
        return self.entries[kind].get(name)

    def names(self, kind: str) -> list[str]:
        """Known part names of one kind, sorted."""
        return sorted(self.entries[kind])

    def add_document(self, data: Any, smap: SourceMap, prefix: tuple[str | int, ...] = ()) -> list[Problem]:
        """Add the parts of one catalogue document (or a system file's ``parts`` section)."""
        problems: list[Problem] = []
        if not isinstance(data, dict):
            return [smap.problem(prefix, "a parts catalogue must map kinds (drives, hcas, ...) to parts")]
        for kind, parts in data.items():
            kind_path = (*prefix, kind)
            if kind not in PART_KINDS:
                problems.append(smap.problem(kind_path, f"unknown part kind {kind!r} (known: {', '.join(PART_KINDS)})"))
                continue
            if not isinstance(parts, dict):
                problems.append(smap.problem(kind_path, "must map part names to their fields"))
                continue
            for name, fields in parts.items():
                path = (*kind_path, name)
                unnamed = name_problem(str(name))
                if unnamed is not None:
                    problems.append(smap.problem(path, unnamed))
                    continue
                if name in self.entries[kind]:
                    first = self.entries[kind][name]
                    problems.append(
                        smap.problem(
                            path,
                            f"part {name!r} is already defined at {first.smap.file}:"
                            f"{first.smap.line(first.path)}; use 'overrides' to change a field",
                        )
                    )
                    continue
                try:
                    part = validate_model(PART_KINDS[kind], fields, smap, path)
                except ConfigError as exc:
                    problems.extend(exc.problems)
                    self.invalid[kind].add(str(name))
                    continue
                self.entries[kind][name] = CatalogueEntry(kind, str(name), part, fields, smap, path)
        return problems

    def check_references(self) -> list[Problem]:
        """Every part named inside another part (a drive's bus, a server's CPU) must exist."""
        problems = []
        for kind, refs in PART_REFERENCES.items():
            for entry in self.entries[kind].values():
                for field_path, target_kind in refs:
                    value: Any = entry.raw
                    for key in field_path:
                        value = value.get(key) if isinstance(value, dict) else None
                    known = value in self.entries[target_kind] or value in self.invalid[target_kind]
                    if value is not None and not known and not self.unreadable:
                        problems.append(
                            entry.smap.problem(
                                (*entry.path, *field_path),
                                unknown_part_message(target_kind, str(value), self.names(target_kind)),
                            )
                        )
        return problems

    def resolve(
        self,
        kind: str,
        name: str,
        overrides: dict[str, Any],
        smap: SourceMap,
        path: tuple[str | int, ...],
        name_path: tuple[str | int, ...] | None = None,
    ) -> Part:
        """The part ``name`` of ``kind`` with ``overrides`` applied and re-validated; errors at ``path``
        (an unknown name at ``name_path``, by default ``path``'s ``part`` key)."""
        entry = self.get(kind, name)
        if entry is None:
            where = name_path if name_path is not None else (*path, "part")
            raise ConfigError([smap.problem(where, unknown_part_message(kind, name, self.names(kind)))])
        if not overrides:
            return entry.part
        unused = entry.part.documentary()
        documentary = sorted(set(overrides) & unused.keys())
        if documentary:
            raise ConfigError([smap.problem((*path, "overrides", key), f"{key} {unused[key]}") for key in documentary])
        merged = merge_fields(entry.raw, overrides)
        part = validate_model(PART_KINDS[kind], merged, smap, (*path, "overrides"), merged=True)
        # An override may name another part (a bus, a link): it must exist, as in the catalogue.
        problems = []
        for field_path, target_kind in PART_REFERENCES.get(kind, ()):
            value: Any = overrides
            for key in field_path:
                value = value.get(key) if isinstance(value, dict) else None
            if value is not None and value not in self.entries[target_kind]:
                problems.append(
                    smap.problem(
                        (*path, "overrides", *field_path),
                        unknown_part_message(target_kind, str(value), self.names(target_kind)),
                    )
                )
        if problems:
            raise ConfigError(problems)
        return part


def unknown_part_message(kind: str, name: str, known: list[str]) -> str:
    """'unknown part X' with the known names of that kind, so the fix is visible."""
    listing = ", ".join(known) if known else "none defined"
    # buses -> bus, switches -> switch, drives -> drive
    singular = kind[:-2] if kind.endswith(("ses", "ches", "shes", "xes")) else kind[:-1]
    return f"unknown {singular.replace('_', ' ')} part {name!r} (known: {listing})"


def catalogue_dir_for(topology: Path) -> Path:
    """The shared catalogue beside a topology file: ``<its folder>/parts``."""
    return topology.resolve().parent / "parts"


def load_catalogue(directory: Path, topology: Path | None = None) -> tuple[Catalogue, list[Problem]]:
    """Read every ``*.yaml`` (and ``*.yml``) in ``directory`` (the folder beside ``topology``, if
    given, which a missing folder's problem names); returns the catalogue and the problems found."""
    catalogue = Catalogue()
    problems: list[Problem] = []
    if not directory.is_dir():
        # Its parts are unknown, not missing: references to them are not reported one by one.
        catalogue.unreadable.append(str(directory))
        reader = f"{topology.name} reads" if topology is not None else "a topology reads"
        return catalogue, [
            Problem(
                str(directory),
                None,
                "",
                f"parts catalogue folder not found ({reader} its parts from the parts/ folder beside it: "
                "copy the pfssim checkout's topologies/parts/ there)",
            )
        ]
    try:
        os.listdir(directory)  # glob() says nothing of a folder it cannot read: it finds no file
    except OSError as exc:
        catalogue.unreadable.append(str(directory))
        return catalogue, [Problem(str(directory), None, "", f"cannot read the parts catalogue folder: {exc.strerror}")]
    for path in sorted([*directory.glob("*.yaml"), *directory.glob("*.yml")]):
        try:
            data, smap = load_yaml(path, lenient=True)
        except ConfigError as exc:
            problems.extend(exc.problems)
            catalogue.unreadable.append(path.name)
            continue
        catalogue.sources[path.name] = smap.sha256 or ""
        problems.extend(with_deferred(smap, catalogue.add_document(data, smap)))
    return catalogue, problems


# Keys only a topology file has.
TOPOLOGY_SECTIONS = frozenset({"servers", "clients", "network", "filesystem", "enclosures", "templates"})


def workload_keys_in(data: Any) -> list[str]:
    """The keys of a YAML mapping that only workloads have, in the file's order."""
    from sim.config.workload import MdtestWorkload, Workload

    if not isinstance(data, dict):
        return []
    own = (set(Workload.model_fields) | set(MdtestWorkload.model_fields)) - {"name", "title", "source"}
    return [key for key in data if key in own]


def is_workload_document(data: Any) -> bool:
    """A YAML mapping with none of a topology's sections and a ``benchmark`` key or another key only
    workloads have (so a workload that lost its ``benchmark:`` is still reported as a workload, and a
    topology whose ``benchmarks:`` lost its s as a topology)."""
    if not isinstance(data, dict) or TOPOLOGY_SECTIONS & data.keys():
        return False
    return bool(workload_keys_in(data))


def is_parts_catalogue(data: Any) -> bool:
    """A YAML mapping that is a file of the parts catalogue: part kinds only, each mapping part names
    to parts (a topology's servers and enclosures are lists)."""
    return (
        isinstance(data, dict)
        and bool(data)
        and set(data) <= set(PART_KINDS)
        and all(isinstance(v, dict) for v in data.values())
    )


def parts_catalogue_problem(data: dict[str, Any], smap: SourceMap, instead: str, remedy: str) -> Problem:
    """A parts catalogue file given where ``instead`` (a topology, a workload) goes: said as such,
    not as a document missing all its keys, with what to do."""
    return smap.problem(
        (next(iter(data)),), f"this is a parts catalogue file ({', '.join(data)}), not {instead}: {remedy}"
    )


def _reference_problems(data: dict[str, Any], smap: SourceMap, catalogue: Catalogue) -> list[Problem]:
    """Part and switch names that nothing in the catalogue or the topology defines, found in the
    raw document: said with the schema's problems, where the build (which knows each reference's
    kind, and names them then) would only have run once those were fixed (a fuzz review found a
    topology that took three rounds of validate). A name some kind has is left to the build."""
    parts = {name for kind in PART_KINDS for name in catalogue.names(kind)}
    parts |= {name for kind in PART_KINDS for name in catalogue.invalid[kind]}
    known_parts = not catalogue.unreadable  # the parts of an unreadable catalogue file are not known
    network = data.get("network")
    declared = network.get("switches") if isinstance(network, dict) else None
    names = [s.get("name") if isinstance(s, dict) else None for s in declared] if isinstance(declared, list) else []
    # None: a switch without a readable name (reported as such), so nothing is said of references to them.
    switches = set(names) if names and all(isinstance(n, str) for n in names) else None
    problems: list[Problem] = []

    def walk(node: Any, path: tuple[str | int, ...]) -> None:
        if isinstance(node, list):
            for i, item in enumerate(node):
                walk(item, (*path, i))
            return
        if not isinstance(node, dict):
            return
        for key, value in node.items():
            if key == "part" and isinstance(value, str) and known_parts and value not in parts:
                # Of every kind (the reference's is the build's to know): the likeliest few.
                close = difflib.get_close_matches(value, sorted(parts), n=2, cutoff=0.6)
                hint = f" (did you mean {' or '.join(repr(c) for c in close)}?)" if close else ""
                problems.append(smap.problem((*path, key), f"unknown part {value!r}: the catalogue has none{hint}"))
            elif key == "switch" and switches is not None and path[:1] != ("network",):
                for i, name in enumerate(value if isinstance(value, list) else [value]):
                    if isinstance(name, str) and name not in switches:
                        where = (*path, key, i) if isinstance(value, list) else (*path, key)
                        known = ", ".join(sorted(str(s) for s in switches)) or "none declared"
                        problems.append(smap.problem(where, f"unknown switch {name!r} (switches: {known})"))
            elif key != "parts":  # a topology's own parts section is the catalogue's to check
                walk(value, (*path, key))

    walk(data, ())
    return problems


def load_system_spec(path: Path, settings: Sequence[Setting] = ()) -> tuple[SystemSpec, Catalogue, SourceMap]:
    """Parse and schema-check a topology file and its catalogue (no graph checks yet), with the
    values of ``settings`` (``--set``) in place of the file's."""
    hints: dict[str, str] = {}
    try:
        return _load_system_spec(path, settings, hints)
    except ConfigError as exc:
        if not settings:
            raise
        raise type(exc)(as_set_problems(exc.problems, list(settings), hints)) from None


def _load_system_spec(
    path: Path, settings: Sequence[Setting], hints: dict[str, str]
) -> tuple[SystemSpec, Catalogue, SourceMap]:
    data, smap = load_yaml(path, lenient=True)
    if is_parts_catalogue(data):
        # pfssim validate parts/drives.yaml
        remedy = "a topology reads its parts from the parts/ folder beside it, and validating the topology checks them"
        raise ConfigError([parts_catalogue_problem(data, smap, "a topology", remedy)])
    if is_workload_document(data):
        key = "benchmark" if "benchmark" in data else next(k for k in data if k not in ("name", "title", "source"))
        raise ConfigError(
            [
                smap.problem(
                    (key,),
                    f"this is a workload file (it has {key}:), not a topology; give a topology file as "
                    "TOPOLOGY and this file to --workload",
                )
            ]
        )
    mixed = workload_keys_in(data)
    if len(mixed) > 1:
        # A workload's keys beside a topology's sections (a workload given a stray servers:): one
        # file cannot be both, so nothing else (the parts folder beside it, the keys a topology
        # needs) is looked for. A lone workload key in a topology (benchmark: for benchmarks:) is
        # a typo the topology's own checks report, with everything else.
        sections = ", ".join(f"{key}:" for key in data if key in TOPOLOGY_SECTIONS)
        raise ConfigError(
            [
                smap.problem(
                    (mixed[0],),
                    f"this file has both a workload's keys ({', '.join(k + ':' for k in mixed)}) and a "
                    f"topology's ({sections}); a workload and a topology are files of their own",
                )
            ]
        )
    if not isinstance(data, dict):
        # A list or a lone value is neither a topology nor a workload: say so before anything else
        # (the catalogue beside it, the keys a topology needs) is looked for.
        what = "is empty" if data is None else f"holds a {'list' if isinstance(data, list) else 'single value'}"
        raise ConfigError(
            [
                Problem(
                    smap.file,
                    1,
                    "",
                    f"the file {what}; a topology (or a workload) is a mapping of keys such as name:, servers: "
                    "and filesystem: (or benchmark:)",
                )
            ]
        )
    hints.update(apply_settings(data, list(settings), str(path)))
    catalogue, problems = load_catalogue(catalogue_dir_for(path), path)
    if isinstance(data.get("parts"), dict):
        problems.extend(catalogue.add_document(data["parts"], smap, ("parts",)))
    problems.extend(catalogue.check_references())
    spec: SystemSpec | None = None
    try:
        spec = validate_model(SystemSpec, data, smap)
    except ConfigError as exc:
        # A parts section the catalogue has read reports its own problems, in its words: the
        # schema's view of the same entries would say each one twice.
        covered = isinstance(data.get("parts"), dict)
        problems.extend(p for p in exc.problems if not (covered and p.path.startswith(("parts.", "parts["))))
    if spec is None or problems or smap.deferred:
        # The build, which would name unknown parts and switches with their kinds, does not run.
        places = {p.path for p in problems}
        problems.extend(p for p in _reference_problems(data, smap, catalogue) if p.path not in places)
        raise ConfigError(with_deferred(smap, problems))
    return spec, catalogue, smap
