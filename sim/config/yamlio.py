"""Reading YAML while remembering where every value came from.

:func:`load_yaml` returns plain Python data plus a :class:`SourceMap` from YAML paths (tuples of keys
and indices) to line numbers, so that any later check can say ``file:line path: message``. Duplicate
keys, which PyYAML would silently resolve to the last one, are reported as errors.
"""

from __future__ import annotations

import hashlib
import re
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
    sha256: str | None = None  # of the bytes parsed (load_yaml), so a result names what it was run from
    # Problems of a file read ``lenient``ly (load_yaml): duplicate keys, unsupported tags and the like,
    # whose node was dropped or its first value kept, left for the caller to report with the schema's.
    deferred: list[Problem] = field(default_factory=list)
    # Of those, the places (formatted paths) of values the reader could not take (dropped, or kept
    # as the text a number was written as), and of mappings whose merge key (<<) it dropped: the
    # schema's problems there only echo them (with_deferred).
    dropped: set[str] = field(default_factory=set)
    merges: set[str] = field(default_factory=set)

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


class _Loader(yaml.SafeLoader):
    """YAML 1.1's safe rules without the forms that surprise: no dates (``2019-13-01`` stays text
    instead of failing as a date), numbers only in decimal (``010`` is not octal 8, ``1:0`` not
    sexagesimal 60; such words stay text and :func:`_construct` reports them), and only ``true``
    and ``false`` as booleans, as in YAML 1.2 (``yes``, ``no``, ``on`` and ``off`` stay text, which
    a yes/no setting refuses, instead of switching it silently)."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        # (id of a sequence node, item index) -> line of an alias (*name) written as that item: the
        # composer hands back the anchored node itself, whose place is the anchor's.
        self.alias_lines: dict[tuple[int, int], int] = {}

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        # ``index`` is an item's index in a sequence, the key's node in a mapping (PyYAML's stubs say int).
        if isinstance(parent, yaml.SequenceNode) and isinstance(index, int) and self.check_event(yaml.AliasEvent):
            self.alias_lines[(id(parent), index)] = self.peek_event().start_mark.line + 1
        return super().compose_node(parent, index)


_DECIMAL_INT = re.compile(r"^[-+]?(?:0|[1-9][0-9_]*)$")
_DECIMAL_FLOAT = re.compile(
    r"^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+]?[0-9]+)?|\.[0-9][0-9_]*(?:[eE][-+]?[0-9]+)?"
    r"|[-+]?[0-9][0-9_]*[eE][-+]?[0-9]+|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
)
# What YAML 1.1 would read as a number in another base or as base 60 (and PyYAML does).
_LEGACY_NUMBER = re.compile(
    r"^[-+]?(?:0[0-7_]+|0b[0-1_]+|0x[0-9a-fA-F_]+|[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?)$"
)

_Loader.yaml_implicit_resolvers = {
    first: [
        (tag, regexp)
        for tag, regexp in resolvers
        if tag.rsplit(":", 1)[-1] not in ("int", "float", "timestamp", "bool")
    ]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)
_Loader.add_implicit_resolver("tag:yaml.org,2002:int", _DECIMAL_INT, list("-+0123456789"))
_Loader.add_implicit_resolver("tag:yaml.org,2002:float", _DECIMAL_FLOAT, list("-+0123456789."))

_LOADER = _Loader("")

# Deeper than this is no topology or workload; it also keeps Python's recursion limit far away.
MAX_DEPTH = 64


_PLAIN_COLLECTION_TAGS = ("tag:yaml.org,2002:map", "tag:yaml.org,2002:seq")
# The tags of the values pfssim reads (what the resolvers above give a plain scalar, or !!str etc.).
_PLAIN_SCALAR_TAGS = frozenset(f"tag:yaml.org,2002:{kind}" for kind in ("str", "int", "float", "bool", "null"))
# What YAML 1.1 resolves a plain = or << to: text to pfssim where it is a value (<< as a key is a
# merge key, refused where keys are read).
_WORD_TAGS = frozenset(("tag:yaml.org,2002:value", "tag:yaml.org,2002:merge"))


class _BadScalar(Exception):
    pass


def _scalar(
    node: yaml.Node, path: PathKey = (), smap: SourceMap | None = None, problems: list[Problem] | None = None
) -> Any:
    """Construct a scalar node with the rules of :class:`_Loader` (ints, floats, bools, null, strings).
    A value its explicit tag cannot make (``!!int twelve``) is a problem at its line."""
    try:
        return _LOADER.construct_object(node, deep=True)
    except (ValueError, TypeError, OverflowError) as exc:
        if problems is None or smap is None:
            raise
        problems.append(Problem(smap.file, node.start_mark.line + 1, format_path(path), _unreadable(node, exc)))
        smap.dropped.add(format_path(path))
        raise _BadScalar from None


#: What a value that its tag cannot make is not, by the tag's short name.
_NOT_A = {"!!int": "not a whole number", "!!float": "not a number", "!!bool": "not true or false"}


def _unreadable(node: yaml.Node, exc: Exception) -> str:
    """Why a scalar cannot be read, in the file's words: the value (cut short if long), its tag as
    YAML writes it (``!!int``) and what it is not, without Python's own wording (a literal of more
    than 4300 digits gave the interpreter's advice to raise its limit, with all the digits)."""
    text = str(node.value)
    shown = repr(text) if len(text) <= 40 else f"{text[:20]!r}... ({len(text)} characters)"
    tag = str(node.tag).replace("tag:yaml.org,2002:", "!!")
    if "digits" in str(exc) and text.replace("_", "").lstrip("+-").isdigit():  # YAML 1.1 allows 1_000
        reason = "too large a number"
    else:
        reason = _NOT_A.get(tag, "not a value of that type")
    return f"cannot read {shown} as {tag}: {reason}"


# The most values one document may expand to. Aliases (``*name``) repeat a node without repeating
# its text, so nine nested levels of ten aliases would expand to a billion values.
MAX_VALUES = 100_000


class _TooLarge(Exception):
    def __init__(self, line: int) -> None:
        super().__init__(line)
        self.line = line


class _TooDeep(Exception):
    def __init__(self, line: int, path: PathKey, message: str) -> None:
        super().__init__(message)
        self.line, self.path, self.message = line, path, message


def _construct(
    node: yaml.Node,
    path: PathKey,
    smap: SourceMap,
    problems: list[Problem],
    budget: list[int] | None = None,
    open_nodes: set[int] | None = None,
    aliases: dict[tuple[int, int], int] | None = None,
) -> Any:
    budget = budget if budget is not None else [MAX_VALUES]
    budget[0] -= 1
    if budget[0] < 0:
        raise _TooLarge(node.start_mark.line + 1)
    smap.lines.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, yaml.CollectionNode):
        open_nodes = open_nodes if open_nodes is not None else set()
        if id(node) in open_nodes:
            raise _TooDeep(node.start_mark.line + 1, path, "an alias (*name) refers to a node that contains it")
        if len(path) > MAX_DEPTH:
            raise _TooDeep(node.start_mark.line + 1, path, f"values are nested more than {MAX_DEPTH} levels deep")
        if node.tag not in _PLAIN_COLLECTION_TAGS:
            # An explicit tag (!!set, !!omap, !!python/...) asks for a type pfssim does not read.
            tag = node.tag.replace("tag:yaml.org,2002:", "!!")
            problems.append(smap.problem(path, f"the tag {tag} is not supported; write a plain mapping or list"))
            smap.dropped.add(format_path(path))
            return None
        open_nodes.add(id(node))
        try:
            return _construct_collection(node, path, smap, problems, budget, open_nodes, aliases or {})
        finally:
            open_nodes.discard(id(node))
    if isinstance(node, yaml.ScalarNode) and node.style is None and node.tag in _WORD_TAGS:
        return node.value  # a plain = or <<, which YAML 1.1 types as !!value or !!merge: the word
    if node.tag not in _PLAIN_SCALAR_TAGS:
        # An explicit tag (!!binary, !!timestamp, !custom) asks for a value pfssim does not read:
        # !!binary would turn into its decoded text, a timestamp into a date.
        tag = node.tag.replace("tag:yaml.org,2002:", "!!")
        problems.append(smap.problem(path, f"the tag {tag} is not supported; write a plain value"))
        smap.dropped.add(format_path(path))
        return None
    plain = isinstance(node, yaml.ScalarNode) and node.style is None  # not quoted
    if plain and node.tag == "tag:yaml.org,2002:str" and _LEGACY_NUMBER.match(node.value):
        problems.append(
            smap.problem(
                path,
                f"{node.value!r}: write numbers in decimal (YAML 1.1 would read a leading 0 as octal, 0x as "
                "hexadecimal and a colon as base 60); quote it if it is meant as text",
            )
        )
        smap.dropped.add(format_path(path))
    try:
        return _scalar(node, path, smap, problems)
    except _BadScalar:
        return None


def _construct_collection(
    node: yaml.CollectionNode,
    path: PathKey,
    smap: SourceMap,
    problems: list[Problem],
    budget: list[int],
    open_nodes: set[int],
    aliases: dict[tuple[int, int], int],
) -> Any:
    if isinstance(node, yaml.MappingNode):
        result: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                problems.append(
                    Problem(  # at the << itself, not at the mapping that holds it
                        smap.file,
                        key_node.start_mark.line + 1,
                        format_path(path),
                        "YAML merge keys ('<<') are not supported; write the keys out (a topology's servers can "
                        "share a template)",
                    )
                )
                smap.merges.add(format_path(path))
                continue
            if not isinstance(key_node, yaml.ScalarNode):
                problems.append(
                    Problem(
                        smap.file,
                        key_node.start_mark.line + 1,
                        format_path(path),
                        "a key is a list or a mapping; every key is a name such as threads or record_size",
                    )
                )
                continue
            try:
                key = _scalar(key_node, path, smap, problems)
            except _BadScalar:
                continue
            if not isinstance(key, str):
                # Every pfssim key is a name; a number, true/false or null key is a typo, not a setting.
                problems.append(
                    Problem(
                        smap.file,
                        key_node.start_mark.line + 1,
                        format_path(path),
                        f"key {key_node.value!r} is not a name; every key is a name such as threads or record_size",
                    )
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
            result[key] = _construct(value_node, (*path, key), smap, problems, budget, open_nodes, aliases)
        return result
    items = []
    for i, item in enumerate(node.value):
        line = aliases.get((id(node), i))
        if line is not None:  # an alias: errors point at where it is written, not at its anchor
            smap.lines.setdefault((*path, i), line)
        items.append(_construct(item, (*path, i), smap, problems, budget, open_nodes, aliases))
    return items


def _too_deep_line(text: str) -> int | None:
    """The line where nesting first passes ``MAX_DEPTH``, found by PyYAML's scanner, which (unlike
    its parser and composer) does not recurse."""
    block = (yaml.BlockMappingStartToken, yaml.BlockSequenceStartToken)
    opening = (*block, yaml.FlowMappingStartToken, yaml.FlowSequenceStartToken)
    closing = (yaml.BlockEndToken, yaml.FlowMappingEndToken, yaml.FlowSequenceEndToken)
    depth = 0
    try:
        for token in yaml.scan(text, Loader=_Loader):
            if isinstance(token, opening):
                depth += 1
                if depth > MAX_DEPTH:
                    return int(token.start_mark.line) + 1
            elif isinstance(token, closing):
                depth -= 1
    except yaml.YAMLError:
        return None
    return None


def with_deferred(smap: SourceMap, problems: list[Problem]) -> list[Problem]:
    """The problems :func:`load_yaml` deferred, then ``problems`` (the schema's and later checks' of
    the same data), less those that only echo a deferred one: at the place of a value the reader
    could not take (an unsupported tag, a tag's unreadable value, a number in another base), or a
    required key missing where a merge key (``<<``) was dropped. A duplicate key's first value is
    kept and checked: its problems are its own."""
    if not smap.deferred:
        return problems

    def echo(p: Problem) -> bool:
        if p.file != smap.file:
            return False
        return p.path in smap.dropped or (
            p.message.startswith("missing required key") and p.path.rpartition(".")[0] in smap.merges
        )

    return [*smap.deferred, *(p for p in problems if not echo(p))]


def load_yaml_text(text: str, file: str, lenient: bool = False) -> tuple[Any, SourceMap]:
    """Parse ``text`` (named ``file`` in messages); raise :class:`ConfigError` if it is not valid YAML.

    ``lenient``: problems that leave a usable document (a duplicate key, whose first value is kept; a
    value with an unsupported tag, dropped) are kept in ``smap.deferred`` instead of raised, so that a
    caller can report them with the schema's problems in one run (:func:`with_deferred`); a caller
    that asks for this must raise them itself when nothing else is wrong."""
    smap = SourceMap(file)
    if len(text) > MAX_CHARACTERS:
        raise ConfigError(
            [
                Problem(
                    file,
                    None,
                    "",
                    f"the file has {len(text):,} characters, more than the {MAX_CHARACTERS:,} pfssim reads; "
                    "topologies and workloads are a few kB (repeat parts with 'count' and templates)",
                )
            ]
        )
    loader: _Loader | None = None
    try:
        loader = _Loader(text)  # reads the text: a character YAML does not allow fails here
        node = loader.get_single_node()
    except yaml.YAMLError as exc:
        raise ConfigError([_yaml_problem(exc, text, file)]) from None
    except RecursionError:
        line = _too_deep_line(text)
        raise ConfigError([Problem(file, line, "", f"values are nested more than {MAX_DEPTH} levels deep")]) from None
    finally:
        if loader is not None:
            loader.dispose()
    if node is None:
        raise ConfigError([Problem(file, 1, "", "the file is empty")])
    problems: list[Problem] = []
    try:
        data = _construct(node, (), smap, problems, aliases=loader.alias_lines)
    except _TooLarge as exc:
        aliases = " (YAML aliases repeat their node each time)" if "*" in text else ""
        raise ConfigError(
            [Problem(file, exc.line, "", f"the document expands to more than {MAX_VALUES:,} values{aliases}")]
        ) from None
    except _TooDeep as exc:
        raise ConfigError([Problem(file, exc.line, format_path(exc.path), exc.message)]) from None
    except yaml.YAMLError as exc:  # e.g. an unknown tag
        raise ConfigError([_yaml_problem(exc, text, file)]) from None
    if problems and not lenient:
        raise ConfigError(problems)
    smap.deferred = problems
    return data, smap


# The largest file pfssim reads: 250,000 characters of short values take about 3 s to parse and
# check (1 MB takes 12 s, 50 MB half a minute and 0.5 GB of memory); the largest shipped file is 8 kB.
MAX_CHARACTERS = 250_000


#: What YAML 1.1 (and PyYAML's reader) counts as a line break; CR LF is one.
_LINE_BREAK = re.compile("\r\n|[\r\n\x85\u2028\u2029]")


def _yaml_problem(exc: yaml.YAMLError, text: str, file: str) -> Problem:
    """A PyYAML error as a located problem, without PyYAML's own rendering of the input."""
    mark = getattr(exc, "problem_mark", None)
    line = mark.line + 1 if mark is not None else None
    if isinstance(exc, yaml.reader.ReaderError):  # a character YAML does not allow (a NUL byte, ...)
        line = len(_LINE_BREAK.findall(text, 0, exc.position)) + 1
        char = exc.character if isinstance(exc.character, str) else chr(exc.character)
        return Problem(file, line, "", f"malformed YAML: the character U+{ord(char):04X} is not allowed in YAML")
    reason = getattr(exc, "problem", None) or str(exc)
    context = getattr(exc, "context", None)
    message = f"malformed YAML: {reason}" + (f" ({context})" if context else "")
    if "expected <block end>" in reason or "mapping values are not allowed here" in reason:
        # PyYAML's words for a line indented off its siblings, or a key: value where one cannot start.
        message += "; check this line's indentation against the lines above it"
    return Problem(file, line, "", message)


def load_yaml(path: Path, lenient: bool = False) -> tuple[Any, SourceMap]:
    """Read and parse a YAML file; unreadable files are a :class:`ConfigError` too (``lenient``: see
    :func:`load_yaml_text`)."""
    try:
        # Opening a named pipe waits for a writer, maybe for ever: only regular files are read.
        if path.exists() and not path.is_dir() and not path.is_file():
            raise ConfigError(
                [Problem(str(path), None, "", "cannot read file: not a regular file (a pipe, device or socket)")]
            )
        with path.open("rb") as handle:
            raw = handle.read(4 * MAX_CHARACTERS + 1)  # at most 4 bytes a character in UTF-8
    except OSError as exc:
        raise ConfigError([Problem(str(path), None, "", f"cannot read file: {exc.strerror or exc}")]) from None
    if len(raw) > 4 * MAX_CHARACTERS:
        raise ConfigError(
            [Problem(str(path), None, "", f"the file is larger than the {MAX_CHARACTERS:,} characters pfssim reads")]
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        byte = raw[exc.start : exc.start + 1].hex()
        raise ConfigError(
            [Problem(str(path), line, "", f"the file is not UTF-8 text (byte 0x{byte} on this line); save it as UTF-8")]
        ) from None
    data, smap = load_yaml_text(text, str(path), lenient)
    smap.sha256 = hashlib.sha256(raw).hexdigest()
    return data, smap
