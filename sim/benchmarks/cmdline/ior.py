"""IOR command lines (``mpirun -np 64 ior -a POSIX -w -r -t 16m -b 128g ...``) read as a :class:`Workload`.

Options follow IOR's ``parse_options.c``: sizes without a suffix are bytes, and a value may be glued
to its flag or follow an ``=`` (``-t16m``, ``-t=16m``).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from sim.benchmarks.cmdline._words import IOR_SUFFIXES, Cursor, fail, make_workload, size_bytes, whole_number
from sim.config.workload import Workload, ior_size_problem

IOR_NO_EFFECT = {
    "-E": "reuses an existing test file instead of removing it first; no effect on the modelled phase",
    "-k": "keeps the test file after the run; no effect on the modelled phase",
    "-g": "adds barriers between open, transfer and close; pfssim starts all tasks together anyway",
    "-c": "collective I/O, which applies to MPI-IO and HDF5; the POSIX interface pfssim models ignores it",
}
IOR_NO_EFFECT_WITH_VALUE = {
    "-d": "delay between repetitions; no effect on the modelled phase",
    "-i": "number of repetitions; pfssim reports the steady state",
    "-o": "test file path; pfssim uses the file system of the topology",
}
# -X's seed may be negative (IOR then varies it per repetition), so it is read apart from the others.
IOR_SEED = "the random seed of -Z's random task order (which pfssim does not model); nothing without -Z"
IOR_REFUSED = {
    "-Y": "fsync after every write is not modelled (-e, one fsync as each file is closed, is)",
    "-u": "a directory per task changes the timed opens (creates in separate directories); not modelled",
}
_IOR_MODELS = "pfssim models IOR with -a POSIX, -w/-r, -t, -b, -s, -F, -z, -e, -C and O_DIRECT"
_IOR_VALUE_FLAGS = {"-a", "-O", "-t", "-b", "-s", "-Q", "-D", "-X", *IOR_NO_EFFECT_WITH_VALUE}
#: Why a stonewall deadline (-D above 0; 0, IOR's default, sets none) is refused.
IOR_DEADLINE = (
    "a stonewall deadline stops every task at a set time, so the figure is not set by the last task to "
    "finish, as pfssim's IOR arithmetic has it; not modelled (-D 0, IOR's default, sets none)"
)
_IOR_SWITCHES = {"-w", "-r", "-e", "-F", "-B", "-z", "-C", "-v", *IOR_NO_EFFECT, *IOR_REFUSED}


def _ior_size(example: str) -> Callable[[str, str], int]:
    """A reader of an IOR size (``-t``, ``-b``): bytes, with IOR's k, m, g, t or p suffixes."""
    return lambda flag, text: size_bytes(flag, text, 1, example, IOR_SUFFIXES)


def _ior_option(flag: str, value: str) -> bool | None:
    """Apply one ``-O key=value``; returns the O_DIRECT setting it makes, if any."""
    key, _, setting = value.partition("=")
    if key == "useO_DIRECT" and setting in ("0", "1"):
        return setting == "1"
    if key == "summaryFormat" and setting:
        return None  # output format only
    fail(flag, f"unsupported IOR option -O {value} (pfssim reads -O useO_DIRECT=0|1 and -O summaryFormat=...)")


def _set_direct(given: dict[bool, str], setting: bool, flag: str, label: str) -> bool:
    """Record an O_DIRECT setting (``label`` says which flag gave it); refuse one that contradicts
    an earlier setting, since IOR would silently keep the last."""
    given.setdefault(setting, label)
    if len(given) == 2:
        fail(flag, f"{given[True]} asks for O_DIRECT and {given[False]} turns it off; give one")
    return setting


def _split_ior(token: str) -> tuple[str, str | None]:
    """``-t16m`` or ``-t=16m`` -> (``-t``, ``16m``): IOR's option parser (``option.c``) takes the
    rest of a short option as its value, or what follows the first ``=``."""
    if token.startswith("-") and not token.startswith("--") and len(token) > 2 and not re.fullmatch(r"-v+", token):
        flag, rest = token[:2], token[2:]
        if flag == "-O" and not rest.startswith("="):
            # IOR splits "-OuseO_DIRECT=1" at its "=" and passes "1" to -O.
            fail(flag, f"IOR would read {token} as -O with the value after its '='; write -O {rest}")
        if flag in _IOR_VALUE_FLAGS:
            return flag, rest.removeprefix("=")
        if flag in _IOR_SWITCHES:
            # IOR 3.3's parser looks at the first letter only; IOR 3.0's getopt read every letter.
            split = f", e.g. {' '.join('-' + c for c in token[1:])}" if rest.isalpha() else ""
            fail(
                token,
                f"IOR 3.3 reads {token} as {flag} alone and ignores {rest!r} (older IOR read each letter as a "
                f"flag); give each flag separately{split}",
            )
    return token, None


def parse_ior(tokens: list[str], text: str, name: str, tasks: int, per_node: int | None = None) -> Workload:
    cursor = Cursor(tokens)
    write = read = direct = fsync = per_process = random = reorder = False
    offset = 1
    direct_by: dict[bool, str] = {}  # the O_DIRECT settings given, and by which flag
    transfer: int | None = None
    block: int | None = None
    segments = 1
    while (raw := cursor.next()) is not None:
        token, glued = _split_ior(raw)
        if glued is not None:
            cursor.tokens.insert(cursor.position, glued)  # the value is then read as the next token
        if token == "-a":
            api = cursor.single(token, None, "an API name")
            if api.upper() != "POSIX":
                fail(token, f"IOR API {api} is not modelled; pfssim models -a POSIX")
        elif token == "-w":
            write = True
        elif token == "-r":
            read = True
        elif token == "-e":
            fsync = True
        elif token == "-F":
            per_process = True
        elif token == "-z":
            random = True
        elif token == "-C":
            reorder = True
        elif token in ("-B", "--posix.odirect"):
            direct = _set_direct(direct_by, True, token, token)
        elif token == "-O":
            for item in cursor.value(token, None, "key=value").split(","):
                setting = _ior_option(token, item)
                if setting is not None:
                    direct = _set_direct(direct_by, setting, token, f"-O {item}")
        elif token == "-t":
            transfer = cursor.number(token, None, "a transfer size", _ior_size("16m"))
        elif token == "-b":
            block = cursor.number(token, None, "a block size", _ior_size("16g"))
        elif token == "-s":
            segments = cursor.number(token, None, "a segment count", whole_number)
        elif token == "-i":
            whole_number(token, cursor.value(token, None, "a whole number"))
        elif token == "-Q":  # the task-per-node offset of -C (IOR's taskPerNodeOffset); nothing without it
            offset = cursor.number(token, None, "a whole number", whole_number)
        elif token == "-d":
            whole_number(token, cursor.value(token, None, "a delay in seconds"), minimum=0)
        elif token == "-D":
            if whole_number(token, cursor.value(token, None, "a deadline in seconds"), minimum=0):
                fail(token, IOR_DEADLINE)
        elif token == "-X":  # a whole number, negative too: the next word even if it starts with '-'
            seed = cursor.next()
            if seed is None:
                fail(token, "-X needs a whole number (a seed) after it")
            if not re.fullmatch(r"-?\d+", seed):
                fail(token, f"-X needs a whole number (a seed), got {seed!r}")
        elif re.fullmatch(r"-v+", token) or token in IOR_NO_EFFECT:
            continue  # -v, -vv, ...: verbosity
        elif token in IOR_NO_EFFECT_WITH_VALUE:
            cursor.value(token)
        elif token in IOR_REFUSED:
            fail(token, IOR_REFUSED[token])
        elif token.startswith("-"):
            fail(token, f"unsupported flag {token} ({_IOR_MODELS})")
        else:
            fail(token, f"unexpected argument {token!r}; IOR takes only flags ({_IOR_MODELS})")
    if transfer is None:
        fail("-t", "missing -t: give the transfer size, e.g. -t 16m (IOR's 256 KiB default is rarely what was meant)")
    if block is None:
        fail("-b", "missing -b: give the block size per task, e.g. -b 16g (IOR's 1 MiB default fits in any cache)")
    for flag, size, what in (("-t", transfer, "transfer"), ("-b", block, "block")):
        if problem := ior_size_problem(size, what):
            fail(flag, problem)
    if block % transfer:
        fail(
            "-b",
            f"the block size ({block} B) must be a multiple of the transfer size -t ({transfer} B), as IOR requires",
        )
    if not (write or read):
        write = read = True  # IOR runs both when neither -w nor -r is given
    layout = "N-N (file per process)" if per_process else "N-1 (shared file)"
    kind = "random" if random else "seq"
    if segments > 1 and not per_process:  # interleaved blocks; with -F segments only lengthen the files
        layout += f", {segments} segments"
    return make_workload(
        name=name,
        title=f"IOR {'random' if random else 'sequential'} {layout}",
        benchmark=f"ior_{kind}_{'nn' if per_process else 'n1'}",
        command=text,
        ops=[("random_" if random else "") + op for op, on in (("write", write), ("read", read)) if on],
        record_size=transfer,
        direct_io=direct,
        fsync=fsync,
        file_size=block * segments,
        threads=tasks,
        segments=segments,
        per_node=per_node,
        reorder_tasks=reorder,
        reorder_offset=offset,
    )
