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

import difflib
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
    return Setting(tuple(path), value, text)  # null too: an optional key back to its default


def apply_settings(data: Any, settings: list[Setting], file: str) -> dict[str, str]:
    """Replace (or add, in an existing mapping) each setting's value in ``data``, the topology read
    from ``file``; a path that leads nowhere, or one given twice, is refused with every such
    setting named. Returns, for each key a setting adds that resembles one the mapping has, that
    key (a typo of a key to replace: said if the schema refuses the new one)."""
    problems = []
    hints: dict[str, str] = {}
    seen: set[PathKey] = set()
    for setting in settings:
        if setting.path in seen:
            problems.append(Problem(SOURCE, None, format_path(setting.path), "is given twice; give it once"))
            continue
        seen.add(setting.path)
        node = data
        for depth, element in enumerate(setting.path[:-1]):
            parent, node = node, _step(node, element)
            if node is None:
                where = format_path(setting.path[: depth + 1])
                problems.append(
                    Problem(SOURCE, None, setting.text, f"{file} has no {where}{_resembles(parent, element)}")
                )
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
            elif last not in node:
                close = _closest(node, last)
                if close:
                    hints[format_path(setting.path)] = close
            node[last] = setting.value
    if problems:
        raise ConfigError(problems)
    return hints


def _closest(node: Any, element: str | int) -> str | None:
    """The key of mapping ``node`` that ``element`` resembles, if one does."""
    if not isinstance(node, dict) or not isinstance(element, str):
        return None
    close = difflib.get_close_matches(element, [k for k in node if isinstance(k, str)], n=1, cutoff=0.6)
    return close[0] if close else None


def _resembles(node: Any, element: str | int) -> str:
    """`` (did you mean 'filesystem'?)`` for a key that resembles one ``node`` has, else ``""``."""
    close = _closest(node, element)
    return f" (did you mean {close!r}?)" if close else ""


def _step(node: Any, element: str | int) -> Any:
    if isinstance(element, int):
        return node[element] if isinstance(node, list) and 0 <= element < len(node) else None
    return node.get(element) if isinstance(node, dict) else None


def as_set_problems(
    problems: list[Problem], settings: list[Setting], hints: dict[str, str] | None = None
) -> list[Problem]:
    """``problems`` of a topology read with ``settings``: those at or below a replaced value said
    as the ``--set``'s that last replaced it (the file's line there holds the value it replaced),
    the others said with the settings, since the file is checked as they leave it (a RAID group's
    drives counted against an enclosure's that a setting changed); ``hints``: keys a setting added
    that resemble ones the mapping has (:func:`apply_settings`)."""
    hints = hints or {}
    places = [(format_path(s.path), s) for s in settings]
    given = ", ".join(f"{SOURCE} {s.text}" for s in settings)
    out = []
    for problem in problems:
        if problem.file == SOURCE:  # already the option's (apply_settings)
            out.append(problem)
            continue
        match = next(
            (
                s
                for place, s in reversed(places)
                if problem.path == place or problem.path.startswith((place + ".", place + "["))
            ),
            None,
        )
        if match is None:
            out.append(Problem(problem.file, problem.line, problem.path, f"{problem.message} (with {given})"))
            continue
        message = problem.message
        if problem.path in hints and message.startswith("unknown key") and "did you mean" not in message:
            message += f" (did you mean {hints[problem.path]!r}? it is in the file)"
        # Said with the setting's text where the problem lies below the value it set.
        said = "" if problem.path == format_path(match.path) else f" ({SOURCE} {match.text})"
        out.append(Problem(SOURCE, None, problem.path, message + said))
    return out
