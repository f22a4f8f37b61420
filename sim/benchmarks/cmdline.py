"""Real IOzone, IOR and mdtest command lines (``pfssim run --cmd '...'``) turned into workloads.

IOzone and IOR lines become :class:`Workload` objects, mdtest lines :class:`MdtestWorkload` objects.
Every flag of a command is accounted for: it either changes the workload (record size, file size,
threads, O_DIRECT, fsync, operations, directory tree, files per directory), is listed below as
accepted with no effect on what pfssim models (with the reason), or is refused with a message saying
why. Nothing is dropped silently, so a command that means something pfssim cannot model never yields
a plausible-looking wrong answer.

Option meanings follow IOzone's usage text, IOR's ``parse_options.c`` and mdtest's option table in
``mdtest.c`` (see the shared research notes, sections 4.1 to 4.3): IOzone sizes without a suffix are
KiB, IOR and mdtest sizes without a suffix are bytes, and the ``k``/``m``/``g`` suffixes are binary in
all three. mdtest reads every number (``-n``, ``-I``, ``-b`` ...) the same way, so ``-I 1k`` is 1024.
A value may be glued to its flag (``-r16m``, ``-t16m``, ``-I1024``) or, for IOR and mdtest, follow an
``=`` (``-t=16m``), as their parsers allow; IOzone's getopt also reads bundled switches (``-ce``).
IOR 3.3 and mdtest read only the first letter of a bundle such as ``-wr`` (older IOR read every
letter), so their bundles are refused rather than guessed.

Launcher: ``mpirun``/``mpiexec`` with ``-np``, ``--map-by node``, host files, ``--mca``, ``-x``,
``--prefix``, ``--oversubscribe`` and ``--allow-run-as-root``. The Dell documents print some of these
with an en dash. ``\u2013-allow-run-as-root`` is read as ``--allow-run-as-root`` (it has no effect on
the I/O either way). A lone en dash in front of an option (``\u2013map-by node`` in the PixStor
document) is refused with a message saying to type ``--map-by``: mpirun would take such a word for the
program to start, so the line as printed cannot be the one that ran.
"""

from __future__ import annotations

import re
import shlex
from typing import Any, NoReturn

from pydantic import ValidationError

from sim.config.quantities import MAX_THREADS
from sim.config.units import Dimension, format_quantity
from sim.config.workload import (
    AnyWorkload,
    MdtestKeyError,
    MdtestWorkload,
    Workload,
    ior_size_problem,
    iozone_record_problem,
)
from sim.errors import Problem, WorkloadError

SOURCE = "--cmd"

# ---------------------------------------------------------------------------------------------- IOzone

IOZONE_NO_EFFECT = {
    "-c": "includes close() in the timed region; a close is negligible next to the data phase",
    "-w": "keeps the files after the run; no effect on the modelled phase",
    "-+n": "skips the re-tests (rewrite, re-read); pfssim models the first pass",
    "-O": "reports operations per second instead of kB/s; output units only, the I/O is the same",
    "-T": "runs the children as POSIX threads instead of processes; the I/O pattern is the same",
    "-C": "prints the bytes each child moved; reporting only",
    "-R": "adds an Excel-style report; reporting only",
}
IOZONE_NO_EFFECT_WITH_VALUE = {
    "-+m": "cluster mode: the file lists client hosts; pfssim places threads round robin over the topology's clients",
    "-b": "writes an Excel workbook of the results; reporting only",
}
IOZONE_REFUSED = {
    "-x": "turns off stonewalling; pfssim models the stonewalled 'Children see' results, so drop -x",
}
_IOZONE_VALUE_FLAGS = ("-+m", "-i", "-r", "-s", "-t", "-b")
# IOzone 3.4's getopt option string: letters before a ':' take a value.
_IOZONE_GETOPT = "ZQNIBDGCTOMREWovAxamwphcezKJ:j:k:V:r:t:s:f:F:d:l:u:U:S:L:H:+:P:i:b:X:Y:g:n:y:q:"
_IOZONE_TAKES_VALUE = {
    c for c, n in zip(_IOZONE_GETOPT, _IOZONE_GETOPT[1:] + " ", strict=True) if c != ":" and n == ":"
}
_IOZONE_SWITCH_LETTERS = {c for c in _IOZONE_GETOPT if c != ":"} - _IOZONE_TAKES_VALUE
_IOZONE_EXACT = {"-I", "-e", "-F", *IOZONE_NO_EFFECT, *IOZONE_REFUSED, *_IOZONE_VALUE_FLAGS}
_IOZONE_TESTS = {"0": "write", "1": "read", "2": "random"}
_IOZONE_OTHER_TESTS = {
    "3": "read-backwards",
    "4": "re-write-record",
    "5": "stride-read",
    "6": "fwrite",
    "7": "fread",
    "8": "random mix",
    "9": "pwrite",
    "10": "pread",
    "11": "pwritev",
    "12": "preadv",
}
_IOZONE_MODELS = "pfssim models IOzone's throughput mode: -i 0/-i 1 or -i 2 with -r, -s, -t, -I, -e"

# ------------------------------------------------------------------------------------------------- IOR

IOR_NO_EFFECT = {
    "-E": "reuses an existing test file instead of removing it first; no effect on the modelled phase",
    "-k": "keeps the test file after the run; no effect on the modelled phase",
    "-g": "adds barriers between open, transfer and close; pfssim starts all tasks together anyway",
    "-C": "reorders tasks so each reads back data written from another node, which defeats the client cache; "
    "pfssim does not model client-cache hits on read-back",
}
IOR_NO_EFFECT_WITH_VALUE = {
    "-d": "delay between repetitions; no effect on the modelled phase",
    "-i": "number of repetitions; pfssim reports the steady state",
    "-o": "test file path; pfssim uses the file system of the topology",
    "-Q": "task-per-node offset used by -C; pfssim does not model client-cache hits on read-back",
}
IOR_REFUSED = {
    "-Y": "fsync after every write is not modelled (-e, one fsync as each file is closed, is)",
    "-z": "random offsets are not modelled; pfssim models IOR's sequential transfers (use IOzone -i 2 for random)",
}
_IOR_MODELS = "pfssim models IOR with -a POSIX, -w/-r, -t, -b, -s, -F, -e and O_DIRECT"
_IOR_VALUE_FLAGS = {"-a", "-O", "-t", "-b", "-s", *IOR_NO_EFFECT_WITH_VALUE}
_IOR_SWITCHES = {"-w", "-r", "-e", "-F", "-B", "-v", *IOR_NO_EFFECT, *IOR_REFUSED}

# ---------------------------------------------------------------------------------------------- mdtest

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
    "-w, -e, -y, -i and -N 0"
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
}

LAUNCHER_NO_EFFECT = {
    "--allow-run-as-root": "lets MPI run as root; no effect on the I/O",
    "--oversubscribe": "allows more tasks than cores; no effect on the modelled I/O",
}
LAUNCHER_NO_EFFECT_WITH_VALUE = {
    "-machinefile": "host list; pfssim places tasks round robin over the topology's clients",
    "--machinefile": "host list; pfssim places tasks round robin over the topology's clients",
    "-hostfile": "host list; pfssim places tasks round robin over the topology's clients",
    "--hostfile": "host list; pfssim places tasks round robin over the topology's clients",
    "--prefix": "Open MPI installation path; no effect on the I/O",
    "-x": "exports an environment variable to the tasks; no effect on the modelled I/O",
}
_LAUNCHER_NP = ("-np", "-n", "--np")
# The Dell documents print '--allow-run-as-root' with an en dash as its first character.
_LAUNCHER_ALIASES = {"\u2013-allow-run-as-root": "--allow-run-as-root"}

_MDTEST_NUMBER = re.compile(r"([0-9]+)([kmgKMG]?)")  # ASCII digits, as atoi reads
_PLACEHOLDER = re.compile(r"\$\{?[A-Za-z_][A-Za-z0-9_]*\}?")
_SIZE = re.compile(r"([0-9]+)([kmgKMG]?)")
_BINARY = {"k": 2**10, "m": 2**20, "g": 2**30}


def _fail(path: str, message: str) -> NoReturn:
    raise WorkloadError([Problem(SOURCE, None, path, message)])


class _Cursor:
    """Walks the tokens of one program's arguments, handing out flag values."""

    def __init__(self, tokens: list[str]) -> None:
        self.tokens = tokens
        self.position = 0
        self.seen: dict[str, str] = {}

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
                _fail(flag, f"{flag} needs {what}, and {token!r} is negative")
            _fail(flag, f"{flag} needs {what} after it")
        return token

    def once(self, flag: str, value: str) -> str:
        """Record a flag that may be given only once; a second, different value is an error."""
        if flag in self.seen and self.seen[flag] != value:
            _fail(flag, f"{flag} is given twice ({self.seen[flag]} and {value}); give it once")
        self.seen[flag] = value
        return value


def _count(flag: str, text: str, *, minimum: int = 1) -> int:
    if not (text.isascii() and text.isdigit()) or int(text) < minimum:
        _fail(flag, f"{flag} needs a whole number of at least {minimum}, got {text!r}")
    return int(text)


def _threads(flag: str, text: str) -> int:
    """A thread or task count: a whole number from 1 to the most threads pfssim simulates."""
    count = _count(flag, text)
    if count > MAX_THREADS:
        _fail(flag, f"{flag} {count} is more than the {MAX_THREADS:,} threads pfssim simulates")
    return count


def _size(flag: str, text: str, plain_unit: int, example: str) -> int:
    """Bytes of ``text``: a whole number with an optional binary k/m/g suffix; a bare number counts ``plain_unit``."""
    match = _SIZE.fullmatch(text)
    if match is None:
        _fail(
            flag,
            f"cannot read {text!r} as a size; write a whole number with an optional k, m or g suffix, "
            f"e.g. {flag} {example}",
        )
    number, suffix = int(match[1]), match[2].lower()
    if number == 0:
        _fail(flag, f"{flag} must be positive, got {text!r}")
    size = number * (_BINARY[suffix] if suffix else plain_unit)
    if size > 2**53:
        _fail(flag, f"{text!r} is more than 2^53 B (9 PB), beyond which byte offsets are not exact")
    return size


def _check_placeholders(tokens: list[str]) -> None:
    """Refuse shell variables (``$Size``, ``${FileSize}G``): the command must be the one that ran."""
    problems = []
    for index, token in enumerate(tokens):
        variable = _PLACEHOLDER.search(token)
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


def _make(fields: dict[str, Any]) -> Workload:
    try:
        return Workload.model_validate(fields)
    except ValidationError as exc:
        problems = [
            Problem(
                SOURCE, None, ".".join(str(p) for p in error["loc"]), str(error["msg"]).removeprefix("Value error, ")
            )
            for error in exc.errors()
        ]
        raise WorkloadError(problems) from None


def _make_mdtest(fields: dict[str, Any]) -> MdtestWorkload:
    """Validate an mdtest workload; a consistency error is reported at the flag it is about."""
    try:
        return MdtestWorkload.model_validate(fields)
    except ValidationError as exc:
        problems = []
        for error in exc.errors():
            cause = (error.get("ctx") or {}).get("error")
            key = cause.key if isinstance(cause, MdtestKeyError) else ".".join(str(p) for p in error["loc"])
            message = str(error["msg"]).removeprefix("Value error, ")
            problems.append(Problem(SOURCE, None, _MDTEST_KEY_FLAGS.get(key, key), message))
        raise WorkloadError(problems) from None


def _program(token: str, name: str) -> bool:
    return token == name or token.endswith("/" + name)


# ---------------------------------------------------------------------------------------------- IOzone


def _split_iozone(token: str) -> tuple[str, str | None]:
    """``-i0`` -> (``-i``, ``0``): IOzone reads options with getopt, so values may be glued on."""
    if token in _IOZONE_EXACT:
        return token, None
    for flag in _IOZONE_VALUE_FLAGS:
        if token.startswith(flag) and len(token) > len(flag):
            return flag, token[len(flag) :]
    return token, None


def _unbundle_iozone(token: str) -> list[str] | None:
    """``-ce`` -> [``-c``, ``-e``], ``-Ir16m`` -> [``-I``, ``-r16m``]: getopt reads a bundle of
    switches, the last of which may take the rest of the word as its value. None if not a bundle."""
    if len(token) <= 2 or token[0] != "-" or token[1] not in _IOZONE_SWITCH_LETTERS or token in _IOZONE_EXACT:
        return None
    flags = []
    for i, letter in enumerate(token[1:], start=1):
        if letter in _IOZONE_TAKES_VALUE:
            flags.append("-" + token[i:])  # the value is glued on, or is the next word
            break
        flags.append("-" + letter)
    return flags


def _iozone_test(value: str) -> str:
    if value in _IOZONE_TESTS:
        return value
    if value in _IOZONE_OTHER_TESTS:
        _fail(
            "-i",
            f"IOzone test -i {value} ({_IOZONE_OTHER_TESTS[value]}) is not modelled; "
            "pfssim models -i 0 (write), -i 1 (read) and -i 2 (random read and write)",
        )
    _fail("-i", f"-i needs a test number (0 write, 1 read, 2 random), got {value!r}")


def _parse_iozone(tokens: list[str], text: str, name: str) -> Workload:
    cursor = _Cursor(tokens[1:])
    tests: list[str] = []
    record: int | None = None
    file_size: int | None = None
    threads: int | None = None
    direct = fsync = False
    while (token := cursor.next()) is not None:
        if (bundle := _unbundle_iozone(token)) is not None:
            cursor.tokens[cursor.position : cursor.position] = bundle[1:]
            token = bundle[0]
        flag, glued = _split_iozone(token)
        if flag == "-i":
            test = _iozone_test(cursor.value(flag, glued, "a test number"))
            if test in tests:
                _fail("-i", f"-i {test} is given twice")
            tests.append(test)
        elif flag == "-r":
            record = _size(flag, cursor.once(flag, cursor.value(flag, glued, "a record size")), 1024, "1m")
        elif flag == "-s":
            file_size = _size(flag, cursor.once(flag, cursor.value(flag, glued, "a file size")), 1024, "8g")
        elif flag == "-t":
            threads = _threads(flag, cursor.once(flag, cursor.value(flag, glued, "a thread count")))
        elif flag == "-I":
            direct = True
        elif flag == "-e":
            fsync = True
        elif flag == "-F":
            if threads is None:
                _fail(flag, "put -t before -F: IOzone reads exactly -t file names after -F")
            for _ in range(threads):
                cursor.value(flag, None, f"{threads} file names (one per thread)")
        elif flag in IOZONE_NO_EFFECT:
            continue
        elif flag in IOZONE_NO_EFFECT_WITH_VALUE:
            cursor.value(flag, glued)
        elif flag in IOZONE_REFUSED:
            _fail(flag, f"{flag} {IOZONE_REFUSED[flag]}")
        elif flag.startswith("-"):
            _fail(flag, f"unsupported flag {flag} ({_IOZONE_MODELS})")
        else:
            _fail(token, f"unexpected argument {token!r}; IOzone takes only flags here ({_IOZONE_MODELS})")
    if not tests:
        _fail(
            "-i",
            "no test selected: give -i 0 -i 1 (sequential write, then read) or -i 2 (random read "
            "and write); without -i IOzone runs every test",
        )
    if "2" in tests and len(tests) > 1:
        _fail(
            "-i",
            "-i 2 together with -i 0 or -i 1 runs two benchmarks (sequential and random) in one line; "
            "give them as two commands",
        )
    if threads is None:
        _fail("-t", "missing -t: pfssim models IOzone's throughput mode; give the number of threads, e.g. -t 16")
    if record is None:
        _fail("-r", "missing -r: give the record size, e.g. -r 1m (IOzone's 4 KiB default is rarely what was meant)")
    if file_size is None:
        _fail("-s", "missing -s: give the file size per thread, e.g. -s 8g (IOzone's default is 512 KiB)")
    if problem := iozone_record_problem(record):
        _fail("-r", problem)
    if record > file_size:
        _fail("-r", f"the record size ({record} B) is larger than the file size per thread ({file_size} B)")
    random = tests == ["2"]
    ops = (
        ["random_read", "random_write"]
        if random
        else [op for code, op in (("0", "write"), ("1", "read")) if code in tests]
    )
    kind = "random" if random else "sequential"
    return _make(
        {
            "name": name,
            "title": f"IOzone {kind} N-N from {SOURCE}",
            "source": SOURCE,
            "benchmark": "iozone_random_nn" if random else "iozone_seq_nn",
            "command": text,
            "ops": ops,
            "record_size": f"{record} B",
            "direct_io": direct,
            "fsync": fsync,
            "file_size": f"{file_size} B",
            "threads": [threads],
            "placement": "round_robin",
        }
    )


# ------------------------------------------------------------------------------------------------- IOR


def _parse_launcher(tokens: list[str]) -> tuple[int, int]:
    """Read ``mpirun``/``mpiexec`` options; returns (task count, index of the ior or mdtest executable)."""
    cursor = _Cursor(tokens[1:])
    tasks: int | None = None
    while (token := cursor.next()) is not None:
        flag = _LAUNCHER_ALIASES.get(token, token)
        if flag in _LAUNCHER_NP:
            tasks = _threads(flag, cursor.once("-np", cursor.value(flag, None, "the number of MPI tasks")))
        elif flag == "--map-by":
            mapping = cursor.value(flag, None, "a mapping")
            if mapping != "node":
                _fail(
                    flag,
                    f"--map-by {mapping} is not modelled: pfssim places tasks round robin over the "
                    "clients, as --map-by node does",
                )
        elif flag == "--mca":
            cursor.value(flag, None, "a parameter name and a value")
            cursor.value(flag, None, "a parameter name and a value")
        elif flag in LAUNCHER_NO_EFFECT:
            continue
        elif flag in LAUNCHER_NO_EFFECT_WITH_VALUE:
            cursor.value(flag)
        elif _program(token, "ior") or _program(token, "mdtest"):
            if tasks is None:
                program = "ior" if _program(token, "ior") else "mdtest"
                _fail(
                    "-np",
                    f"{tokens[0]} has no -np: give the number of MPI tasks, e.g. {tokens[0]} -np 64 {program} ...",
                )
            return tasks, cursor.position
        elif flag.startswith("\u2013"):
            _fail(
                flag,
                f"unsupported {tokens[0]} flag {flag}: it begins with an en dash (U+2013), which is how documents "
                f"print '--'; {tokens[0]} would take it for the program to run, so type it as --{flag[1:]}",
            )
        elif flag.startswith("-"):
            _fail(
                flag,
                f"unsupported {tokens[0]} flag {flag} (pfssim reads -np/-n, --map-by node, host files, "
                "--mca, -x, --prefix, --allow-run-as-root and --oversubscribe)",
            )
        elif _program(token, "iozone"):
            _fail(token, "IOzone starts its own threads: drop the MPI launcher and give -t")
        else:
            _fail(
                token,
                f"expected the ior or mdtest executable after the {tokens[0]} options, got {token!r}; "
                "pfssim runs IOR and mdtest under MPI (ior, mdtest or a path ending in /ior or /mdtest)",
            )
    _fail(tokens[0], f"{tokens[0]} starts no ior or mdtest executable; pfssim runs IOR and mdtest under MPI")


def _ior_option(flag: str, value: str) -> bool | None:
    """Apply one ``-O key=value``; returns the O_DIRECT setting it makes, if any."""
    key, _, setting = value.partition("=")
    if key == "useO_DIRECT" and setting in ("0", "1"):
        return setting == "1"
    if key == "summaryFormat" and setting:
        return None  # output format only
    _fail(flag, f"unsupported IOR option -O {value} (pfssim reads -O useO_DIRECT=0|1 and -O summaryFormat=...)")


def _split_ior(token: str) -> tuple[str, str | None]:
    """``-t16m`` or ``-t=16m`` -> (``-t``, ``16m``): IOR's option parser (``option.c``) takes the
    rest of a short option as its value, or what follows the first ``=``."""
    if token.startswith("-") and not token.startswith("--") and len(token) > 2 and not re.fullmatch(r"-v+", token):
        flag, rest = token[:2], token[2:]
        if flag == "-O" and not rest.startswith("="):
            # IOR splits "-OuseO_DIRECT=1" at its "=" and passes "1" to -O.
            _fail(flag, f"IOR would read {token} as -O with the value after its '='; write -O {rest}")
        if flag in _IOR_VALUE_FLAGS:
            return flag, rest.removeprefix("=")
        if flag in _IOR_SWITCHES:
            # IOR 3.3's parser looks at the first letter only; IOR 3.0's getopt read every letter.
            split = f", e.g. {' '.join('-' + c for c in token[1:])}" if rest.isalpha() else ""
            _fail(
                token,
                f"IOR 3.3 reads {token} as {flag} alone and ignores {rest!r} (older IOR read each letter as a "
                f"flag); give each flag separately{split}",
            )
    return token, None


def _parse_ior(tokens: list[str], text: str, name: str, tasks: int) -> Workload:
    cursor = _Cursor(tokens)
    write = read = direct = fsync = per_process = False
    transfer: int | None = None
    block: int | None = None
    segments = 1
    while (raw := cursor.next()) is not None:
        token, glued = _split_ior(raw)
        if glued is not None:
            cursor.tokens.insert(cursor.position, glued)  # the value is then read as the next token
        if token == "-a":
            api = cursor.once(token, cursor.value(token, None, "an API name"))
            if api.upper() != "POSIX":
                _fail(token, f"IOR API {api} is not modelled; pfssim models -a POSIX")
        elif token == "-w":
            write = True
        elif token == "-r":
            read = True
        elif token == "-e":
            fsync = True
        elif token == "-F":
            per_process = True
        elif token in ("-B", "--posix.odirect"):
            direct = True
        elif token == "-O":
            for item in cursor.value(token, None, "key=value").split(","):
                setting = _ior_option(token, item)
                direct = direct if setting is None else setting
        elif token == "-t":
            transfer = _size(token, cursor.once(token, cursor.value(token, None, "a transfer size")), 1, "16m")
        elif token == "-b":
            block = _size(token, cursor.once(token, cursor.value(token, None, "a block size")), 1, "16g")
        elif token == "-s":
            segments = _count(token, cursor.once(token, cursor.value(token, None, "a segment count")))
        elif token in ("-i", "-Q"):
            _count(token, cursor.value(token, None, "a whole number"))
        elif token == "-d":
            _count(token, cursor.value(token, None, "a delay in seconds"), minimum=0)
        elif re.fullmatch(r"-v+", token) or token in IOR_NO_EFFECT:
            continue  # -v, -vv, ...: verbosity
        elif token in IOR_NO_EFFECT_WITH_VALUE:
            cursor.value(token)
        elif token in IOR_REFUSED:
            _fail(token, f"{token}: {IOR_REFUSED[token]}")
        elif token.startswith("-"):
            _fail(token, f"unsupported flag {token} ({_IOR_MODELS})")
        else:
            _fail(token, f"unexpected argument {token!r}; IOR takes only flags ({_IOR_MODELS})")
    if transfer is None:
        _fail("-t", "missing -t: give the transfer size, e.g. -t 16m (IOR's 256 KiB default is rarely what was meant)")
    if block is None:
        _fail("-b", "missing -b: give the block size per task, e.g. -b 16g (IOR's 1 MiB default fits in any cache)")
    for flag, size, what in (("-t", transfer, "transfer"), ("-b", block, "block")):
        if problem := ior_size_problem(size, what):
            _fail(flag, problem)
    if block % transfer:
        _fail(
            "-b",
            f"the block size ({block} B) must be a multiple of the transfer size -t ({transfer} B), as IOR requires",
        )
    if not (write or read):
        write = read = True  # IOR runs both when neither -w nor -r is given
    layout = "N-N (file per process)" if per_process else "N-1 (shared file)"
    return _make(
        {
            "name": name,
            "title": f"IOR sequential {layout} from {SOURCE}",
            "source": SOURCE,
            "benchmark": "ior_seq_nn" if per_process else "ior_seq_n1",
            "command": text,
            "ops": [op for op, on in (("write", write), ("read", read)) if on],
            "record_size": f"{transfer} B",
            "direct_io": direct,
            "fsync": fsync,
            "file_size": f"{block * segments} B",
            "threads": [tasks],
            "placement": "round_robin",
        }
    )


# ---------------------------------------------------------------------------------------------- mdtest


def _mdtest_number(flag: str, text: str, *, minimum: int = 1) -> int:
    """A number as mdtest reads it: whole, with an optional binary k/m/g suffix (``-w 4K`` is 4096)."""
    match = _MDTEST_NUMBER.fullmatch(text)
    if match is None:
        _fail(flag, f"cannot read {text!r} as a whole number; write e.g. {flag} 1024 or {flag} 4K")
    value = int(match[1]) * (_BINARY[match[2].lower()] if match[2] else 1)
    if value < minimum:
        _fail(flag, f"{flag} needs a whole number of at least {minimum}, got {text!r}")
    return value


def _split_mdtest(token: str) -> tuple[str, str | None]:
    """``-I1024`` or ``-w=4K`` -> (flag, value): mdtest's option parser takes both forms."""
    if token.startswith("-") and not token.startswith("--") and len(token) > 2 and token[:2] in _MDTEST_VALUE_FLAGS:
        return token[:2], token[2:].removeprefix("=")
    return token, None


def _parse_mdtest(tokens: list[str], text: str, name: str, tasks: int) -> MdtestWorkload:
    cursor = _Cursor(tokens)
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
        if flag in _MDTEST_VALUE_FLAGS and flag not in MDTEST_NO_EFFECT_WITH_VALUE:
            value = cursor.once(flag, cursor.value(flag, glued))
            if flag == "-a":
                if value.upper() != "POSIX":
                    _fail(flag, f"mdtest API {value} is not modelled; pfssim models -a POSIX (the default)")
            elif flag == "-N":
                stride = _mdtest_number(flag, value, minimum=0)
                if stride:
                    _fail(
                        flag,
                        f"-N {stride} makes each task stat, read and remove the files of the task "
                        f"{stride} rank{'s' if stride > 1 else ''} away, to defeat the client cache; pfssim "
                        "models every task on its own files (-N 0, mdtest's default)",
                    )
            elif flag in ("-w", "-e"):
                size = _mdtest_number(flag, value, minimum=0)
                write_bytes, read_bytes = (size, read_bytes) if flag == "-w" else (write_bytes, size)
            else:
                fields[_MDTEST_COUNTS[flag]] = _mdtest_number(flag, value, minimum=0 if flag == "-z" else 1)
        elif flag in MDTEST_NO_EFFECT_WITH_VALUE:
            cursor.value(flag, glued)
        elif flag in _MDTEST_PHASE_FLAGS:
            phases.add(_MDTEST_PHASE_FLAGS[flag])
        elif flag in _MDTEST_SWITCHES:
            fields[_MDTEST_SWITCHES[flag]] = True
        elif re.fullmatch(r"-v+", flag) or flag in MDTEST_NO_EFFECT:
            continue  # -v, -vv, ...: verbosity
        elif flag in MDTEST_REFUSED:
            _fail(flag, f"{flag} {MDTEST_REFUSED[flag]}")
        elif flag[:2] in _MDTEST_FLAGS and not flag.startswith("--"):
            _fail(
                flag,
                f"mdtest reads {flag} as {flag[:2]} and ignores the rest of the word; give each flag on its own",
            )
        elif flag.startswith("-"):
            _fail(flag, f"unsupported flag {flag} ({_MDTEST_MODELS})")
        else:
            _fail(token, f"unexpected argument {token!r}; mdtest takes only flags ({_MDTEST_MODELS})")
    if "items_per_dir" not in fields and "items" not in fields:
        _fail(
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
            "placement": "round_robin",
            **fields,
            "write_bytes": f"{write_bytes} B",
            "read_bytes": f"{read_bytes} B",
        }
    )


# ------------------------------------------------------------------------------------------------ entry


def parse_command(text: str, *, name: str = "cmd") -> AnyWorkload:
    """The workload a real ``iozone ...``, ``mpirun ... ior ...`` or ``mpirun ... mdtest ...`` line runs.

    Raises :class:`WorkloadError` (file ``--cmd``, path = the offending flag) for anything pfssim cannot
    model faithfully: unknown or unsupported flags, shell placeholders, missing thread or task counts.
    """
    try:
        tokens = shlex.split(text)
    except ValueError as exc:
        _fail("", f"cannot split the command into words ({exc}); check its quotes")
    if not tokens:
        _fail("", "the command is empty; give an iozone or mpirun ... ior command line")
    _check_placeholders(tokens)
    program = tokens[0]
    if _program(program, "iozone"):
        return _parse_iozone(tokens, text, name)
    if program in ("mpirun", "mpiexec") or _program(program, "mpirun") or _program(program, "mpiexec"):
        tasks, start = _parse_launcher(tokens)
        if _program(tokens[start], "mdtest"):
            return _parse_mdtest(tokens[start + 1 :], text, name, tasks)
        return _parse_ior(tokens[start + 1 :], text, name, tasks)
    if _program(program, "ior"):
        _fail("-np", "IOR needs an MPI launcher with the task count: mpirun -np N ior ...")
    if _program(program, "mdtest"):
        _fail("-np", "mdtest needs an MPI launcher with the task count: mpirun -np N mdtest ...")
    _fail(
        program,
        f"pfssim reads IOzone (iozone ...), IOR (mpirun -np N ior ...) and mdtest (mpirun -np N mdtest ...) "
        f"command lines, not {program!r}",
    )


# ------------------------------------------------------------------------------ a workload's own command

#: Settings a workload file's ``command:`` must agree with. Thread counts and sizes are left out:
#: they vary over the sweep, and the command gives them as shell variables.
_SETTINGS = ("benchmark", "record_size", "direct_io", "fsync", "placement")
_MDTEST_SETTINGS = (
    *("benchmark", "placement", "files_only", "dirs_only", "unique_dir", "depth", "leaf_only"),
    *("items_per_dir", "write_bytes", "read_bytes", "sync", "iterations"),
)


def _sweep_value(workload: AnyWorkload, program: str, flag: str, threads: int) -> str | None:
    """What a shell variable after ``flag`` stands for at ``threads`` threads, from the workload's fields."""
    if flag in ("-t", *_LAUNCHER_NP) and program in ("iozone", "mpirun"):
        return str(threads)
    if isinstance(workload, Workload):
        size = int(workload.file_size_for(threads))
        if program == "iozone" and flag == "-s":
            return f"{size // 1024}k" if size % 1024 == 0 else None
        if program == "ior" and flag == "-b":
            return str(size)
        return None
    if program == "mdtest" and flag == "-b":
        return str(workload.branching_for(threads))
    if program == "mdtest" and flag == "-n" and workload.items is not None:
        return str(workload.items)
    return None


def _substitute(line: str, workload: AnyWorkload, threads: int) -> str:
    """``line`` with each shell variable replaced: by the workload's value where the flag before it
    sets a thread count or a size, else (a path or host file) by a plain word."""
    tokens = shlex.split(line)
    program = "iozone" if tokens and _program(tokens[0], "iozone") else "mpirun"
    for index, token in enumerate(tokens):
        if _program(token, "ior") or _program(token, "mdtest"):
            program = "ior" if _program(token, "ior") else "mdtest"
        if _PLACEHOLDER.search(token) is None:
            continue
        flag = tokens[index - 1] if index else ""
        value = _sweep_value(workload, program, flag, threads)
        tokens[index] = value if value is not None else _PLACEHOLDER.sub("x", token)
    return shlex.join(tokens)


def command_mismatches(workload: AnyWorkload) -> list[str]:
    """How a workload file's ``command:`` (the document's command lines, one per line) disagrees with
    the settings pfssim simulates; empty when it agrees or there is no command.

    Each line is read as ``--cmd`` reads it, with its shell variables standing for the workload's own
    thread count and size at its first thread count; a line pfssim cannot read is reported too.
    """
    if not workload.command:
        return []
    lines = [line for line in workload.command.replace("\\\n", " ").splitlines() if line.strip()]
    settings: tuple[str, ...] = _SETTINGS
    if isinstance(workload, MdtestWorkload):
        # Under the total_files rule -b changes with the thread count (a shell variable); else it is fixed.
        settings = _MDTEST_SETTINGS + (("branching", "items") if workload.total_files is None else ())
    problems: list[str] = []
    ops: list[str] = []
    for number, line in enumerate(lines, 1):
        where = f"line {number} of the command" if len(lines) > 1 else "the command"
        try:
            parsed = parse_command(_substitute(line, workload, workload.threads[0]), name=workload.name)
        except ValueError as exc:  # shlex: unbalanced quotes
            problems.append(f"{where} cannot be split into words ({exc})")
            continue
        except WorkloadError as exc:
            problems += [f"{where}: {p.path + ': ' if p.path else ''}{p.message}" for p in exc.problems]
            continue
        ops += [op for op in parsed.ops if op not in ops]
        for key in settings:
            mine, theirs = getattr(workload, key), getattr(parsed, key)
            if mine != theirs:
                problems.append(f"{where} gives {key} {_shown(key, theirs)}, the workload {_shown(key, mine)}")
    if not problems and set(ops) != set(workload.ops):
        problems.append(f"the command runs {', '.join(ops)}; the workload lists ops {', '.join(workload.ops)}")
    return problems


def _shown(key: str, value: object) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if key in ("record_size", "write_bytes", "read_bytes") and isinstance(value, float):
        return format_quantity(value, Dimension.SIZE)
    return str(value)
