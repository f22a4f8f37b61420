"""The MPI launcher in front of IOR and mdtest (``mpirun -np 64 --map-by node ...``): the task count."""

from __future__ import annotations

from sim.benchmarks.cmdline._words import Cursor, fail, is_program, thread_count

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
LAUNCHER_NP = ("-np", "-n", "--np")
# The Dell documents print '--allow-run-as-root' with an en dash as its first character.
_LAUNCHER_ALIASES = {"\u2013-allow-run-as-root": "--allow-run-as-root"}


def parse_launcher(tokens: list[str]) -> tuple[int, int]:
    """Read ``mpirun``/``mpiexec`` options; returns (task count, index of the ior or mdtest executable)."""
    cursor = Cursor(tokens[1:])
    tasks: int | None = None
    while (token := cursor.next()) is not None:
        flag = _LAUNCHER_ALIASES.get(token, token)
        if flag in LAUNCHER_NP:
            tasks = thread_count(flag, cursor.once("-np", cursor.value(flag, None, "the number of MPI tasks")))
        elif flag == "--map-by":
            mapping = cursor.value(flag, None, "a mapping")
            if mapping != "node":
                fail(
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
        elif is_program(token, "ior") or is_program(token, "mdtest"):
            if tasks is None:
                program = "ior" if is_program(token, "ior") else "mdtest"
                fail(
                    "-np",
                    f"{tokens[0]} has no -np: give the number of MPI tasks, e.g. {tokens[0]} -np 64 {program} ...",
                )
            return tasks, cursor.position
        elif flag.startswith("\u2013"):
            fail(
                flag,
                f"unsupported {tokens[0]} flag {flag}: it begins with an en dash (U+2013), which is how documents "
                f"print '--'; {tokens[0]} would take it for the program to run, so type it as --{flag[1:]}",
            )
        elif flag.startswith("-"):
            fail(
                flag,
                f"unsupported {tokens[0]} flag {flag} (pfssim reads -np/-n, --map-by node, host files, "
                "--mca, -x, --prefix, --allow-run-as-root and --oversubscribe)",
            )
        elif is_program(token, "iozone"):
            fail(token, "IOzone starts its own threads: drop the MPI launcher and give -t")
        else:
            fail(
                token,
                f"expected the ior or mdtest executable after the {tokens[0]} options, got {token!r}; "
                "pfssim runs IOR and mdtest under MPI (ior, mdtest or a path ending in /ior or /mdtest)",
            )
    fail(tokens[0], f"{tokens[0]} starts no ior or mdtest executable; pfssim runs IOR and mdtest under MPI")
