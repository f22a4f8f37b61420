"""Reading YAML while remembering where every value came from.

:func:`load_yaml` returns plain Python data plus a :class:`SourceMap` from YAML paths (tuples of keys
and indices) to line numbers, so that any later check can say ``file:line path: message``. Duplicate
keys, which PyYAML would silently resolve to the last one, are reported as errors.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from sim.errors import ConfigError, Problem

PathKey = tuple[str | int, ...]


def format_path(path: Iterable[str | int]) -> str:
    """``('servers', 2, 'numa', 1, 'hca')`` -> ``servers[2].numa[1].hca``."""
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return text


@dataclass
class SourceMap:
    """Where each node of a YAML document starts (1-based lines) in one file."""

    file: str
    lines: dict[PathKey, int] = field(default_factory=dict)

    def line(self, path: Iterable[str | int]) -> int | None:
        """The line of ``path``, or of its nearest ancestor that exists in the file."""
        key = tuple(path)
        while key:
            if key in self.lines:
                return self.lines[key]
            key = key[:-1]
        return self.lines.get((), None)

    def problem(self, path: Iterable[str | int], message: str) -> Problem:
        """A :class:`Problem` located at ``path`` in this file."""
        path = tuple(path)
        return Problem(self.file, self.line(path), format_path(path), message)


_LOADER = yaml.SafeLoader("")


def _scalar(node: yaml.Node) -> Any:
    """Construct a scalar node with YAML 1.1 safe rules (ints, floats, bools, null, strings)."""
    return _LOADER.construct_object(node, deep=True)


# The most values one document may expand to. Aliases (``*name``) repeat a node without repeating
# its text, so nine nested levels of ten aliases would expand to a billion values.
MAX_VALUES = 1_000_000


class _TooLarge(Exception):
    pass


def _construct(
    node: yaml.Node, path: PathKey, smap: SourceMap, problems: list[Problem], budget: list[int] | None = None
) -> Any:
    budget = budget if budget is not None else [MAX_VALUES]
    budget[0] -= 1
    if budget[0] < 0:
        raise _TooLarge
    smap.lines.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        result: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                problems.append(smap.problem(path, "YAML merge keys ('<<') are not supported; use templates"))
                continue
            key = _scalar(key_node)
            if not isinstance(key, str | int):
                problems.append(
                    Problem(smap.file, key_node.start_mark.line + 1, format_path(path), f"key {key!r} must be a string")
                )
                continue
            if key in result:
                problems.append(
                    Problem(
                        smap.file,
                        key_node.start_mark.line + 1,
                        format_path((*path, key)),
                        f"duplicate key {key!r} (first given on line {smap.lines[(*path, key)]})",
                    )
                )
                continue
            smap.lines[(*path, key)] = key_node.start_mark.line + 1  # errors point at the key
            result[key] = _construct(value_node, (*path, key), smap, problems, budget)
        return result
    if isinstance(node, yaml.SequenceNode):
        return [_construct(item, (*path, i), smap, problems, budget) for i, item in enumerate(node.value)]
    return _scalar(node)


def load_yaml_text(text: str, file: str) -> tuple[Any, SourceMap]:
    """Parse ``text`` (named ``file`` in messages); raise :class:`ConfigError` if it is not valid YAML."""
    smap = SourceMap(file)
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        reason = getattr(exc, "problem", None) or str(exc)
        context = getattr(exc, "context", None)
        message = f"malformed YAML: {reason}" + (f" ({context})" if context else "")
        raise ConfigError([Problem(file, line, "", message)]) from None
    if node is None:
        raise ConfigError([Problem(file, 1, "", "the file is empty")])
    problems: list[Problem] = []
    try:
        data = _construct(node, (), smap, problems)
    except _TooLarge:
        raise ConfigError(
            [Problem(file, None, "", f"the document expands to more than {MAX_VALUES:,} values (nested YAML aliases?)")]
        ) from None
    except yaml.YAMLError as exc:  # e.g. a bad timestamp or an unknown tag
        mark = getattr(exc, "problem_mark", None)
        raise ConfigError([Problem(file, mark.line + 1 if mark else None, "", f"malformed YAML: {exc}")]) from None
    if problems:
        raise ConfigError(problems)
    return data, smap


def load_yaml(path: Path) -> tuple[Any, SourceMap]:
    """Read and parse a YAML file; unreadable files are a :class:`ConfigError` too."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ConfigError([Problem(str(path), None, "", f"cannot read file: {exc.strerror or exc}")]) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        byte = raw[exc.start : exc.start + 1].hex()
        raise ConfigError(
            [Problem(str(path), line, "", f"the file is not UTF-8 text (byte 0x{byte} on this line); save it as UTF-8")]
        ) from None
    return load_yaml_text(text, str(path))
