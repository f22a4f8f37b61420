"""IOzone command lines (``iozone -i 0 -i 1 -r 1m -s 8g -t 64 ...``) read as a :class:`Workload`.

Options follow IOzone's usage text and its getopt string: sizes without a suffix are KiB, values may
be glued to their flag (``-r16m``) and switches bundled (``-ce``, ``-Ir16m``).
"""

from __future__ import annotations

from sim.benchmarks.cmdline._words import Cursor, fail, make_workload, size_bytes, thread_count
from sim.config.workload import Workload, iozone_record_problem

IOZONE_NO_EFFECT = {
    "-w": "keeps the files after the run; no effect on the modelled phase",
    "-+n": "skips the re-tests (rewrite, re-read); pfssim models the first pass",
    "-O": "reports operations per second instead of kB/s; output units only, the I/O is the same",
    "-T": "runs the children as POSIX threads instead of processes; the I/O pattern is the same",
    "-C": "prints the bytes each child moved; reporting only",
    "-R": "adds an Excel-style report; reporting only",
}
IOZONE_NO_EFFECT_WITH_VALUE = {
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
_IOZONE_EXACT = {"-I", "-e", "-c", "-F", *IOZONE_NO_EFFECT, *IOZONE_REFUSED, *_IOZONE_VALUE_FLAGS}
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
_IOZONE_MODELS = "pfssim models IOzone's throughput mode: -i 0/-i 1 or -i 2 with -r, -s, -t, -I, -e, -c"


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
        if letter not in _IOZONE_SWITCH_LETTERS:  # not a bundle: the word is reported as typed (-I;)
            return None
        flags.append("-" + letter)
    return flags


def _iozone_test(value: str) -> str:
    if value in _IOZONE_TESTS:
        return value
    if value in _IOZONE_OTHER_TESTS:
        fail(
            "-i",
            f"IOzone test -i {value} ({_IOZONE_OTHER_TESTS[value]}) is not modelled; "
            "pfssim models -i 0 (write), -i 1 (read) and -i 2 (random read and write)",
        )
    fail("-i", f"-i needs a test number (0 write, 1 read, 2 random), got {value!r}")


def parse_iozone(tokens: list[str], text: str, name: str) -> Workload:
    cursor = Cursor(tokens[1:])
    tests: list[str] = []
    record: int | None = None
    file_size: int | None = None
    threads: int | None = None
    direct = fsync = close = cluster = False
    while (token := cursor.next()) is not None:
        if (bundle := _unbundle_iozone(token)) is not None:
            cursor.tokens[cursor.position : cursor.position] = bundle[1:]
            token = bundle[0]
        flag, glued = _split_iozone(token)
        if flag == "-i":
            test = _iozone_test(cursor.value(flag, glued, "a test number"))
            if test in tests:
                fail("-i", f"-i {test} is given twice")
            tests.append(test)
        elif flag == "-r":
            record = cursor.number(flag, glued, "a record size", lambda f, t: size_bytes(f, t, 1024, "1m"))
        elif flag == "-s":
            file_size = cursor.number(flag, glued, "a file size", lambda f, t: size_bytes(f, t, 1024, "8g"))
        elif flag == "-t":
            threads = cursor.number(flag, glued, "a thread count", thread_count)
        elif flag == "-I":
            direct = True
        elif flag == "-e":
            fsync = True
        elif flag == "-c":
            close = True
        elif flag == "-F":
            if flag in cursor.seen:
                fail(flag, "-F is given twice; IOzone reads one list of file names, -t of them")
            cursor.seen[flag] = ""
            if threads is None:
                fail(flag, "put -t before -F: IOzone reads exactly -t file names after -F")
            for _ in range(threads):
                cursor.value(flag, None, f"{threads} file names (one per thread)")
        elif flag in IOZONE_NO_EFFECT:
            continue
        elif flag == "-+m":
            # Cluster mode: the file lists the client hosts, and pfssim deals the threads round robin
            # over the topology's clients; without it IOzone forks every thread on its own node.
            cursor.single(flag, glued, "a host-list file")  # IOzone reads one host list
            cluster = True
        elif flag in IOZONE_NO_EFFECT_WITH_VALUE:
            cursor.single(flag, glued)  # no effect, but two different ones are not one command line
        elif flag in IOZONE_REFUSED:
            fail(flag, IOZONE_REFUSED[flag])
        elif flag.startswith("-"):
            fail(flag, f"unsupported flag {flag} ({_IOZONE_MODELS})")
        else:
            fail(token, f"unexpected argument {token!r}; IOzone takes only flags here ({_IOZONE_MODELS})")
    if not tests:
        fail(
            "-i",
            "no test selected: give -i 0 -i 1 (sequential write, then read) or -i 2 (random read "
            "and write); without -i IOzone runs every test",
        )
    if "2" in tests and len(tests) > 1:
        fail(
            "-i",
            "-i 2 together with -i 0 or -i 1 runs two benchmarks (sequential and random) in one line; "
            "give them as two commands",
        )
    if threads is None:
        fail("-t", "missing -t: pfssim models IOzone's throughput mode; give the number of threads, e.g. -t 16")
    if record is None:
        fail("-r", "missing -r: give the record size, e.g. -r 1m (IOzone's 4 KiB default is rarely what was meant)")
    if file_size is None:
        fail("-s", "missing -s: give the file size per thread, e.g. -s 8g (IOzone's default is 512 KiB)")
    if problem := iozone_record_problem(record):
        fail("-r", problem)
    if record > file_size:
        fail("-r", f"the record size ({record} B) is larger than the file size per thread ({file_size} B)")
    random = tests == ["2"]
    ops = (
        ["random_read", "random_write"]
        if random
        else [op for code, op in (("0", "write"), ("1", "read")) if code in tests]
    )
    kind = "random" if random else "sequential"
    return make_workload(
        name=name,
        title=f"IOzone {kind} N-N",
        benchmark="iozone_random_nn" if random else "iozone_seq_nn",
        command=text,
        ops=ops,
        record_size=record,
        direct_io=direct,
        fsync=fsync,
        timed_close=close,
        file_size=file_size,
        threads=threads,
        # Without a -+m host list IOzone forks its threads on the node it runs on.
        placement="round_robin" if cluster else "one_client",
    )
