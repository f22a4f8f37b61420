"""The MPI launcher in front of IOR and mdtest (``mpirun -np 64 --map-by node ...``): the task count
and where the tasks run.

Placement: ``--map-by node`` (``-bynode``) deals the ranks round robin over the nodes, as the Dell
documents run them; ``-npernode N`` (Open MPI; also ``--npernode``, ``-N`` and ``--map-by
ppr:N:node``) and ``-ppn N`` (MPICH, Intel MPI) put N consecutive ranks on each node in turn. With
none of them, pfssim deals the ranks round robin, which is what the documents' host files do; the
launchers' own default fills each node's slots from the host file first, which pfssim cannot
know, so a mapping by slot, core or socket is refused with the options that say it.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from sim.benchmarks.cmdline._words import Cursor, fail, is_program, thread_count, whole_number

LAUNCHER_NO_EFFECT = {
    "--allow-run-as-root": "lets MPI run as root; no effect on the I/O",
    "--oversubscribe": "allows more tasks than cores; no effect on the modelled I/O",
}
_HOSTS = "host list; pfssim places tasks over the topology's clients, round robin unless -npernode says how many each"
LAUNCHER_NO_EFFECT_WITH_VALUE = {
    "-machinefile": _HOSTS,
    "--machinefile": _HOSTS,
    "-hostfile": _HOSTS,
    "--hostfile": _HOSTS,
    "--prefix": "Open MPI installation path; no effect on the I/O",
    "-x": "exports an environment variable to the tasks; no effect on the modelled I/O",
}
LAUNCHER_NP = ("-np", "-n", "--np")
#: Ranks per node, filled node by node: Open MPI's -npernode / -N, MPICH's and Intel MPI's -ppn.
LAUNCHER_PER_NODE = ("-npernode", "--npernode", "-N", "-ppn")


class Launch(NamedTuple):
    """What the launcher's options say: the task count, where the program's own options start,
    and the ranks per node (None: round robin over the nodes); the options typed for the task
    count and the placement, to report a problem with either where the user wrote it."""

    tasks: int
    start: int
    per_node: int | None
    tasks_option: str = "-np"
    placement_option: str | None = None


# The Dell documents print '--allow-run-as-root' with an en dash as its first character.
_LAUNCHER_ALIASES = {"\u2013-allow-run-as-root": "--allow-run-as-root"}


def parse_launcher(tokens: list[str]) -> Launch:
    """Read ``mpirun``/``mpiexec`` options up to the ior or mdtest executable."""
    cursor = Cursor(tokens[1:])
    tasks: int | None = None
    tasks_flag = "-np"
    mapped: str | None = None  # the option that set the placement
    per_node: int | None = None

    def mapping(flag: str, ranks: int | None) -> None:
        nonlocal mapped, per_node
        if mapped is not None:
            fail(flag, f"the placement is given twice ({mapped} and {flag}); give one")
        mapped, per_node = flag, ranks

    while (token := cursor.next()) is not None:
        flag = _LAUNCHER_ALIASES.get(token, token)
        if flag in LAUNCHER_NP:
            # -np, -n and --np are one setting, compared as numbers (-np 8 -n 08 agree).
            text = cursor.value(flag, None, "the number of MPI tasks")
            count = thread_count(flag, text)
            if tasks is not None and count != tasks:
                fail(
                    flag,
                    f"the number of MPI tasks is given twice ({tasks_flag} {tasks} and {flag} {text}); give it once",
                )
            tasks = count
            tasks_flag = flag
        elif flag in LAUNCHER_PER_NODE:
            mapping(flag, whole_number(flag, cursor.value(flag, None, "the number of tasks per node")))
        elif flag in ("-bynode", "--bynode"):
            mapping(flag, None)
        elif flag == "--map-by":
            policy = cursor.value(flag, None, "a mapping")
            ppr = re.fullmatch(r"ppr:(\d+):node", policy)
            if policy == "node":
                mapping(flag, None)
            elif ppr is not None:
                mapping(flag, whole_number(flag, ppr.group(1)))
            else:
                fail(
                    flag,
                    f"--map-by {policy} is not modelled: a mapping by slot, core or socket fills each node's "
                    "slots (from the host file) before the next, which pfssim cannot know; say how many tasks "
                    "each client runs with -npernode N (or --map-by ppr:N:node), or deal them round robin "
                    "with --map-by node",
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
            return Launch(tasks, cursor.position, per_node, tasks_flag, mapped)
        elif flag.startswith("\u2013"):
            fail(
                flag,
                f"unsupported {tokens[0]} flag {flag}: it begins with an en dash (U+2013), which is how documents "
                f"print '--'; {tokens[0]} would take it for the program to run, so type it as --{flag[1:]}",
            )
        elif flag.startswith("-"):
            fail(
                flag,
                f"unsupported {tokens[0]} flag {flag} (pfssim reads -np/-n, --map-by node or ppr:N:node, "
                "-npernode/-N/-ppn, host files, "
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
