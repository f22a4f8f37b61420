"""mdtest command lines (``mpirun -np 64 mdtest -d DIR -b 32 -z 1 -L -I 1024 -u -F ...``) read as an
:class:`MdtestWorkload`.

Options follow the option table in ``mdtest.c``: every number (``-n``, ``-I``, ``-b``, ``-w`` ...) is
read the same way, whole with an optional binary k/m/g suffix, so ``-I 1k`` is 1024.
"""

from __future__ import annotations

import re
from functools import partial
from typing import Any

from pydantic import ValidationError

from sim.benchmarks.cmdline._words import BINARY, IOR_SUFFIXES, SOURCE, SUFFIXED_NUMBER, Cursor, fail
from sim.config.workload import MdtestWorkload, setting_key
from sim.errors import Problem, WorkloadError

MDTEST_NO_EFFECT = {
    "-P": "prints times next to the rates; reporting only",
    "-Z": "prints times instead of rates; reporting only (pfssim reports the rates)",
    "-t": "counts each task's step into its unique directory (-u) in the phase times; that is a barrier and "
    "a path per task, negligible next to the files of a phase",
}
MDTEST_NO_EFFECT_WITH_VALUE = {
    "-d": "test directory; pfssim uses the file system of the topology",
    "-p": "delay before each iteration, outside the timed phases",
    "-V": "verbosity level; reporting only",
}
MDTEST_REFUSED = {
    "-B": "turns off the barriers between phases; mdtest's rate (the slowest task's rate x the tasks) "
    "assumes them, and so does pfssim",
    "-R": "stats the files in random order; pfssim models mdtest's in-order stat",
    "-W": "stonewalls the create phase after a number of seconds; pfssim models phases that handle every file",
    "-Y": "syncs the whole client after each phase, inside the timing; not modelled (-y, sync per file, is)",
    "-S": "makes all tasks use one shared file; not modelled",
    "-c": "makes task 0 create every file (collective creates); not modelled",
    "-k": "creates the files with mknod; not modelled",
    "-x": "stonewalling status file; stonewalling is not modelled",
    "-f": "sweeps task counts inside one run; give one command per task count",
    "-l": "sweeps task counts inside one run; give one command per task count",
    "-s": "sweeps task counts inside one run; give one command per task count",
    "-X": "verifies the data read; not modelled",
}
_MDTEST_PHASE_FLAGS = {"-C": "create", "-T": "stat", "-E": "read", "-r": "remove"}
_MDTEST_SWITCHES = {"-F": "files_only", "-D": "dirs_only", "-u": "unique_dir", "-L": "leaf_only", "-y": "sync"}
_MDTEST_COUNTS = {"-b": "branching", "-z": "depth", "-i": "iterations", "-I": "items_per_dir", "-n": "items"}
_MDTEST_FLAGS = {"-v", *_MDTEST_PHASE_FLAGS, *_MDTEST_SWITCHES, *MDTEST_NO_EFFECT, *MDTEST_REFUSED}
_MDTEST_VALUE_FLAGS = {"-a", "-b", "-e", "-i", "-I", "-n", "-N", "-w", "-z", *MDTEST_NO_EFFECT_WITH_VALUE}
_MDTEST_MODELS = (
    "pfssim models mdtest's directory and file phases with -C/-T/-E/-r, -F or -D, -u, -b, -z, -L, -I or -n, "
    "-w, -e, -y, -i and -N"
)
#: YAML key of an :class:`MdtestWorkload` -> the mdtest flag an error about it is reported at.
_MDTEST_KEY_FLAGS = {
    "items": "-n",
    "items_per_dir": "-I",
    "branching": "-b",
    "depth": "-z",
    "leaf_only": "-L",
    "write_bytes": "-w",
    "read_bytes": "-e",
    "threads": "-np",
    "iterations": "-i",
    "dirs_only": "-D",
    "ops": "-E",
    "sync": "-y",
    "stride": "-N",
}


def _make_mdtest(fields: dict[str, Any]) -> MdtestWorkload:
    """Validate an mdtest workload; a consistency error is reported at the flag it is about."""
    try:
        return MdtestWorkload.model_validate(fields)
    except ValidationError as exc:
        problems = []
        for error in exc.errors():
            key = setting_key(error) or ".".join(str(p) for p in error["loc"])
            message = str(error["msg"]).removeprefix("Value error, ")
            problems.append(Problem(SOURCE, None, _MDTEST_KEY_FLAGS.get(key, key), message))
        raise WorkloadError(problems) from None


def _mdtest_number(flag: str, text: str, *, minimum: int = 1) -> int:
    """A number as mdtest reads it: whole, with an optional binary k, m, g, t or p suffix (``-w 4K``
    is 4096; IOR's option parser, which mdtest shares)."""
    match = SUFFIXED_NUMBER.fullmatch(text)
    if match is None or match[2].lower() not in ("", *IOR_SUFFIXES):
        fail(flag, f"cannot read {text!r} as a whole number; write e.g. {flag} 1024 or {flag} 4K")
    value = int(match[1]) * (BINARY[match[2].lower()] if match[2] else 1)
    if value < minimum:
        fail(flag, f"{flag} needs a whole number of at least {minimum}, got {text!r}")
    return value


def _split_mdtest(token: str) -> tuple[str, str | None]:
    """``-I1024`` or ``-w=4K`` -> (flag, value): mdtest's option parser takes both forms."""
    if token.startswith("-") and not token.startswith("--") and len(token) > 2 and token[:2] in _MDTEST_VALUE_FLAGS:
        return token[:2], token[2:].removeprefix("=")
    return token, None


def parse_mdtest(tokens: list[str], text: str, name: str, tasks: int, per_node: int | None = None) -> MdtestWorkload:
    cursor = Cursor(tokens)
    phases: set[str] = set()
    fields: dict[str, Any] = {
        "files_only": False,
        "dirs_only": False,
        "unique_dir": False,
        "leaf_only": False,
        "sync": False,
    }
    write_bytes = read_bytes = 0
    while (token := cursor.next()) is not None:
        flag, glued = _split_mdtest(token)
        if flag == "-a":
            value = cursor.single(flag, glued)
            if value.upper() != "POSIX":
                fail(flag, f"mdtest API {value} is not modelled; pfssim models -a POSIX (the default)")
        elif flag in _MDTEST_VALUE_FLAGS and flag not in MDTEST_NO_EFFECT_WITH_VALUE:
            # Numbers: a flag given twice is refused only with two values (-I 1024 -I 1k is one).
            least = 0 if flag in ("-N", "-w", "-e", "-z") else 1
            number = cursor.number(flag, glued, "a value", partial(_mdtest_number, minimum=least))
            if flag == "-N":
                fields["stride"] = number
            elif flag in ("-w", "-e"):
                write_bytes, read_bytes = (number, read_bytes) if flag == "-w" else (write_bytes, number)
            else:
                fields[_MDTEST_COUNTS[flag]] = number
        elif flag in MDTEST_NO_EFFECT_WITH_VALUE:
            cursor.single(flag, glued)  # no effect, but two different ones are not one command line
        elif flag in _MDTEST_PHASE_FLAGS:
            phases.add(_MDTEST_PHASE_FLAGS[flag])
        elif flag in _MDTEST_SWITCHES:
            fields[_MDTEST_SWITCHES[flag]] = True
        elif re.fullmatch(r"-v+", flag) or flag in MDTEST_NO_EFFECT:
            continue  # -v, -vv, ...: verbosity
        elif flag in MDTEST_REFUSED:
            fail(flag, MDTEST_REFUSED[flag])
        elif flag[:2] in _MDTEST_FLAGS and not flag.startswith("--"):
            fail(
                flag,
                f"mdtest reads {flag} as {flag[:2]} and ignores the rest of the word; give each flag on its own",
            )
        elif flag.startswith("-"):
            fail(flag, f"unsupported flag {flag} ({_MDTEST_MODELS})")
        else:
            fail(token, f"unexpected argument {token!r}; mdtest takes only flags ({_MDTEST_MODELS})")
    if "items_per_dir" not in fields and "items" not in fields:
        fail(
            "-I",
            "missing -I or -n: give the files per directory (-I 1024) or per task (-n 4096); "
            "without them mdtest creates no files",
        )
    ops = [phase for phase in ("create", "stat", "read", "remove") if phase in phases or not phases]
    kind = "empty files" if write_bytes == 0 else f"{write_bytes} B files"
    kind = "directories" if fields["dirs_only"] else kind if fields["files_only"] else f"directories and {kind}"
    return _make_mdtest(
        {
            "name": name,
            "title": f"mdtest {', '.join(ops)} of {kind} from {SOURCE}",
            "source": SOURCE,
            "benchmark": "mdtest",
            "command": text,
            "ops": ops,
            "threads": [tasks],
            "placement": "round_robin" if per_node is None else "per_node",
            "per_node": per_node,
            **fields,
            "write_bytes": f"{write_bytes} B",
            "read_bytes": f"{read_bytes} B",
        }
    )
