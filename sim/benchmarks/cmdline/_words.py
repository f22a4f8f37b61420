"""What every command-line reader of the package shares: the error it raises, the word cursor,
numbers and sizes as the three programs write them, shell placeholders and workload validation."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import NoReturn, TypeVar

from pydantic import ValidationError

from sim.config.quantities import MAX_THREADS
from sim.config.workload import Workload, setting_key
from sim.errors import Problem, WorkloadError

SOURCE = "--cmd"

T = TypeVar("T")

PLACEHOLDER = re.compile(r"\$\{?[A-Za-z_][A-Za-z0-9_]*\}?")
#: A whole number with an optional one-letter binary suffix (ASCII digits, as atoi reads), as all
#: three programs write sizes and mdtest writes every number; which letters each takes is below.
SUFFIXED_NUMBER = re.compile(r"([0-9]+)([A-Za-z]?)")
BINARY = {"k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40, "p": 2**50}
#: IOzone's sizes take k, m and g; IOR's and mdtest's (IOR's option parser, string_to_bytes) also t and p.
IOZONE_SUFFIXES = "kmg"
IOR_SUFFIXES = "kmgtp"


def suffixes_text(suffixes: str) -> str:
    """``k, m or g``."""
    return f"{', '.join(suffixes[:-1])} or {suffixes[-1]}"


def fail(path: str, message: str) -> NoReturn:
    raise WorkloadError([Problem(SOURCE, None, path, message)])


class Cursor:
    """Walks the tokens of one program's arguments, handing out flag values."""

    def __init__(self, tokens: list[str]) -> None:
        self.tokens = tokens
        self.position = 0
        self.seen: dict[str, str] = {}
        self.values: dict[str, tuple[str, object]] = {}  # what :meth:`number` read: (text, value)

    def next(self) -> str | None:
        if self.position >= len(self.tokens):
            return None
        self.position += 1
        return self.tokens[self.position - 1]

    def value(self, flag: str, glued: str | None = None, what: str = "a value") -> str:
        """The argument of ``flag``: glued to it (``-i0``) or the next token."""
        if glued is not None:
            return glued
        token = self.next()
        if token is None or (token.startswith("-") and len(token) > 1):
            if token is not None and token[1].isdigit():
                fail(flag, f"{flag} needs {what}, and {token!r} is negative")
            fail(flag, f"{flag} needs {what} after it")
        return token

    def once(self, flag: str, value: str) -> str:
        """Record a flag that may be given only once; a second, different value is an error."""
        if flag in self.seen and self.seen[flag] != value:
            fail(flag, f"{flag} is given twice ({self.seen[flag]} and {value}); give it once")
        self.seen[flag] = value
        return value

    def single(self, flag: str, glued: str | None = None, what: str = "a value") -> str:
        """The argument of a flag that may be given only once (see :meth:`once`)."""
        return self.once(flag, self.value(flag, glued, what))

    def number(self, flag: str, glued: str | None, what: str, read: Callable[[str, str], T]) -> T:
        """The argument of a flag that may be given only once, read by ``read(flag, text)``: a second
        value is an error only if it reads differently (``-r 1024k`` and ``-r 1m`` are one size)."""
        text = self.value(flag, glued, what)
        value = read(flag, text)
        if flag in self.values and self.values[flag][1] != value:
            fail(flag, f"{flag} is given twice ({self.values[flag][0]} and {text}); give it once")
        self.values.setdefault(flag, (text, value))
        return value


def whole_number(flag: str, text: str, *, minimum: int = 1) -> int:
    if not (text.isascii() and text.isdigit()) or int(text) < minimum:
        fail(flag, f"{flag} needs a whole number of at least {minimum}, got {text!r}")
    return int(text)


def thread_count(flag: str, text: str) -> int:
    """A thread or task count: a whole number from 1 to the most threads pfssim simulates."""
    count = whole_number(flag, text)
    if count > MAX_THREADS:
        fail(flag, f"{flag} {count} is more than the {MAX_THREADS:,} threads pfssim simulates")
    return count


def size_bytes(flag: str, text: str, plain_unit: int, example: str, suffixes: str = IOZONE_SUFFIXES) -> int:
    """Bytes of ``text``: a whole number with an optional binary suffix of ``suffixes``; a bare
    number counts ``plain_unit``."""
    match = SUFFIXED_NUMBER.fullmatch(text)
    if match is None or match[2].lower() not in ("", *suffixes):
        fail(
            flag,
            f"cannot read {text!r} as a size; write a whole number with an optional {suffixes_text(suffixes)} "
            f"suffix, e.g. {flag} {example}",
        )
    number, suffix = int(match[1]), match[2].lower()
    if number == 0:
        fail(flag, f"{flag} must be positive, got {text!r}")
    size = number * (BINARY[suffix] if suffix else plain_unit)
    if size > 2**53:
        fail(flag, f"{text!r} is more than 2^53 B (9 PB), beyond which byte offsets are not exact")
    return size


def check_placeholders(tokens: list[str]) -> None:
    """Refuse shell variables (``$Size``, ``${FileSize}G``): the command must be the one that ran."""
    problems = []
    for index, token in enumerate(tokens):
        variable = PLACEHOLDER.search(token)
        if variable is None:
            continue
        before = tokens[index - 1] if index else ""
        flag = before if before.startswith(("-", "\u2013")) and not token.startswith("-") else token
        problems.append(
            Problem(
                SOURCE,
                None,
                flag,
                f"{token!r} contains the shell variable {variable[0]}; substitute the value the run used "
                "(a number such as 64 or 8g, or a real path)",
            )
        )
    if problems:
        raise WorkloadError(problems)


#: The option that sets each workload key, by program: a problem found with a ``--cmd`` workload's
#: setting is reported at the option the user typed.
OPTION_OF = {
    "iozone": {"fsync": "-e", "direct_io": "-I", "file_size": "-s", "record_size": "-r", "threads": "-t"},
    "ior": {
        **{"fsync": "-e", "direct_io": "-B", "file_size": "-b", "record_size": "-t", "threads": "-np"},
        **{"segments": "-s", "per_node": "-npernode", "reorder_tasks": "-C", "reorder_offset": "-Q"},
    },
    "mdtest": {
        **{"threads": "-np", "items": "-n", "items_per_dir": "-I", "write_bytes": "-w", "read_bytes": "-e"},
        "per_node": "-npernode",
    },
}


def make_workload(
    *,
    name: str,
    title: str,
    benchmark: str,
    command: str,
    ops: list[str],
    record_size: int,
    direct_io: bool,
    fsync: bool,
    file_size: int,
    threads: int,
    timed_close: bool = False,
    placement: str = "round_robin",
    segments: int = 1,
    per_node: int | None = None,
    reorder_tasks: bool = False,
    reorder_offset: int = 1,
) -> Workload:
    """The IOzone or IOR workload one command line runs: one thread count, threads placed round robin
    (IOzone's ``-+m`` list and ``mpirun --map-by node`` as the documents use them) or, for IOzone
    without ``-+m``, all on one client."""
    fields = {
        "name": name,
        "title": f"{title} from {SOURCE}",
        "source": SOURCE,
        "benchmark": benchmark,
        "command": command,
        "ops": ops,
        "record_size": f"{record_size} B",
        "direct_io": direct_io,
        "fsync": fsync,
        "timed_close": timed_close,
        "file_size": f"{file_size} B",
        "threads": [threads],
        "placement": "per_node" if per_node is not None else placement,
        "per_node": per_node,
        "segments": segments,
        "reorder_tasks": reorder_tasks,
        "reorder_offset": reorder_offset,
    }
    try:
        return Workload.model_validate(fields)
    except ValidationError as exc:
        options = OPTION_OF["iozone" if benchmark.startswith("iozone") else "ior"]
        if segments > 1:  # IOR's bytes per task are -b x -s
            options = {**options, "file_size": "-b/-s"}
        problems = []
        for error in exc.errors():
            key = setting_key(error) or ".".join(str(p) for p in error["loc"])
            message = str(error["msg"]).removeprefix("Value error, ")
            option = options.get(key, key)
            if _YAML_SIZE_HINT in message:  # the hint spells a YAML size; a command line's suffixes are binary
                message = message[: message.rfind("; ", 0, message.index(_YAML_SIZE_HINT))] + (
                    f"; a k, m or g suffix counts in powers of 1024 ({option} 1k is 1,024 bytes)"
                )
            problems.append(Problem(SOURCE, None, option, message))
        raise WorkloadError(problems) from None


#: How :func:`binary_size_hint` recognises its hint about a decimal size in YAML (a command line gets
#: one about its binary suffixes instead).
_YAML_SIZE_HINT = "(kB, MB and GB count in powers of 1000)"


def is_program(token: str, name: str) -> bool:
    return token == name or token.endswith("/" + name)
