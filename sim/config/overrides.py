"""``--set KEY=VALUE``: a topology's value replaced from the command line, for a what-if without
copying the file (and its parts folder) to edit it.

KEY is a YAML path in the form problems print (``filesystem.num_targets``,
``enclosures[0].count``, ``servers[1].numa[0].hcas[0].part``), VALUE is read as YAML by the
topology reader's own rules (``4``, ``2 MiB``, ``{max_worker: 64, per_queue: 16}``). A key may be
new in a mapping that exists (an optional setting the file leaves out); the mapping and any list
index on the way must exist. A problem at or below a replaced value is reported as the option's
(``--set filesystem.num_targets: must be at least 1, got 0``), not at the file's line, which no
longer holds what was checked.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from sim.config.yamlio import PathKey, format_path, load_yaml_text
from sim.errors import ConfigError, PfssimError, Problem

SOURCE = "--set"

_SEGMENT = re.compile(r"([^.\[\]]+)((?:\[\d+\])*)")


@dataclass(frozen=True)
class Setting:
    """One ``--set``: where, what, and the text it was given as."""

    path: PathKey
    value: Any
    text: str  # KEY=VALUE as given


def parse_setting(text: str) -> Setting:
    """A ``--set KEY=VALUE`` argument read (not yet applied)."""
    key, equals, raw = text.partition("=")
    key = key.strip()
    if not equals or not key:
        raise PfssimError(f"{SOURCE} {text!r}: give KEY=VALUE, e.g. --set filesystem.num_targets=4")
    path: list[str | int] = []
    for segment in key.split("."):
        found = _SEGMENT.fullmatch(segment)
        if found is None:
            raise PfssimError(
                f"{SOURCE} {text!r}: cannot read {key!r} as a YAML path; write it as problems print one, "
                "e.g. enclosures[0].count or servers[1].numa[0].hcas[0].part"
            )
        path.append(found[1])
        path += [int(index) for index in re.findall(r"\[(\d+)\]", found[2])]
    if not raw.strip():
        raise PfssimError(f"{SOURCE} {text!r}: give a value after '='")
    try:
        value, _ = load_yaml_text(raw, SOURCE)
    except ConfigError as exc:
        reason = exc.problems[0].message if exc.problems else str(exc)
        raise PfssimError(f"{SOURCE} {text!r}: cannot read its value as YAML: {reason}") from None
    if value is None:
        raise PfssimError(f"{SOURCE} {text!r}: give a value after '='")
    return Setting(tuple(path), value, text)


def apply_settings(data: Any, settings: list[Setting], file: str) -> None:
    """Replace (or add, in an existing mapping) each setting's value in ``data``, the topology read
    from ``file``; a path that leads nowhere is refused with every such setting named."""
    problems = []
    for setting in settings:
        node = data
        for depth, element in enumerate(setting.path[:-1]):
            node = _step(node, element)
            if node is None:
                where = format_path(setting.path[: depth + 1])
                problems.append(Problem(SOURCE, None, setting.text, f"{file} has no {where}"))
                break
        else:
            last = setting.path[-1]
            if isinstance(last, int):
                if not isinstance(node, list) or not 0 <= last < len(node):
                    problems.append(Problem(SOURCE, None, setting.text, f"{file} has no {format_path(setting.path)}"))
                    continue
            elif not isinstance(node, dict):
                where = format_path(setting.path[:-1]) or "the file"
                problems.append(Problem(SOURCE, None, setting.text, f"{where} in {file} is not a mapping"))
                continue
            node[last] = setting.value
    if problems:
        raise ConfigError(problems)


def _step(node: Any, element: str | int) -> Any:
    if isinstance(element, int):
        return node[element] if isinstance(node, list) and 0 <= element < len(node) else None
    return node.get(element) if isinstance(node, dict) else None


def as_set_problems(problems: list[Problem], settings: list[Setting]) -> list[Problem]:
    """``problems`` with those at or below a replaced value said as ``--set``'s (the file's line
    there holds the value the setting replaced)."""
    places = [(format_path(s.path), s) for s in settings]
    out = []
    for problem in problems:
        match = next(
            (s for place, s in places if problem.path == place or problem.path.startswith((place + ".", place + "["))),
            None,
        )
        if match is None:
            out.append(problem)
        else:
            # Said with the setting's text where the problem lies below the value it set.
            said = "" if problem.path == format_path(match.path) else f" ({SOURCE} {match.text})"
            out.append(Problem(SOURCE, None, problem.path, problem.message + said))
    return out
