"""``parse_command``, which dispatches a command line to its program's reader, and
``command_mismatches``, which checks a workload file's ``command:`` against its settings."""

from __future__ import annotations

import shlex

from sim.benchmarks.cmdline._words import OPTION_OF, PLACEHOLDER, check_placeholders, fail, is_program
from sim.benchmarks.cmdline.ior import parse_ior
from sim.benchmarks.cmdline.iozone import parse_iozone
from sim.benchmarks.cmdline.launcher import LAUNCHER_NP, parse_launcher
from sim.benchmarks.cmdline.mdtest import parse_mdtest
from sim.config.units import Dimension, format_quantity
from sim.config.workload import AnyWorkload, MdtestWorkload, Workload
from sim.errors import WorkloadError


def parse_command(text: str, *, name: str = "cmd") -> AnyWorkload:
    """The workload a real ``iozone ...``, ``mpirun ... ior ...`` or ``mpirun ... mdtest ...`` line runs.

    Raises :class:`WorkloadError` (file ``--cmd``, path = the offending flag) for anything pfssim cannot
    model faithfully: unknown or unsupported flags, shell placeholders, missing thread or task counts.
    """
    try:
        tokens = shlex.split(text)
    except ValueError as exc:
        fail("", f"cannot split the command into words ({exc}); check its quotes")
    if not tokens:
        fail("", "the command is empty; give an iozone or mpirun ... ior command line")
    check_placeholders(tokens)
    program = tokens[0]
    if is_program(program, "iozone"):
        return parse_iozone(tokens, text, name)
    if program in ("mpirun", "mpiexec") or is_program(program, "mpirun") or is_program(program, "mpiexec"):
        launch = parse_launcher(tokens)
        rest = tokens[launch.start + 1 :]
        if is_program(tokens[launch.start], "mdtest"):
            return parse_mdtest(rest, text, name, launch.tasks, launch.per_node)
        return parse_ior(rest, text, name, launch.tasks, launch.per_node)
    if is_program(program, "ior"):
        fail("-np", "IOR needs an MPI launcher with the task count: mpirun -np N ior ...")
    if is_program(program, "mdtest"):
        fail("-np", "mdtest needs an MPI launcher with the task count: mpirun -np N mdtest ...")
    fail(
        program,
        f"pfssim reads IOzone (iozone ...), IOR (mpirun -np N ior ...) and mdtest (mpirun -np N mdtest ...) "
        f"command lines, not {program!r}",
    )


# ------------------------------------------------------------------------------ a workload's own command

#: Settings a workload file's ``command:`` must agree with. Thread counts and sizes are left out:
#: they vary over the sweep, and the command gives them as shell variables.
_SETTINGS = (
    *("benchmark", "record_size", "direct_io", "fsync", "timed_close", "placement", "per_node", "segments"),
    *("reorder_tasks", "reorder_offset"),
)
_MDTEST_SETTINGS = (
    *("benchmark", "placement", "per_node", "files_only", "dirs_only", "unique_dir", "depth", "leaf_only"),
    *("items_per_dir", "write_bytes", "read_bytes", "sync", "iterations", "stride"),
)


def _sweep_value(workload: AnyWorkload, program: str, flag: str, threads: int) -> str | None:
    """What a shell variable after ``flag`` stands for at ``threads`` threads, from the workload's fields."""
    if flag in ("-t", *LAUNCHER_NP) and program in ("iozone", "mpirun"):
        return str(threads)
    if isinstance(workload, Workload):
        size = int(workload.file_size_for(threads))
        if program == "iozone" and flag == "-s":
            return f"{size // 1024}k" if size % 1024 == 0 else None
        if program == "ior" and flag == "-b":
            block = workload.block_for(threads)
            return str(int(block)) if block == int(block) else None
        return None
    if program == "mdtest" and flag == "-b":
        return str(workload.branching_for(threads))
    if program == "mdtest" and flag == "-n" and workload.items is not None:
        return str(workload.items)
    return None


def _program_of(line: str) -> str | None:
    """Which benchmark a command line runs (iozone, ior or mdtest), if it can be told from its words."""
    try:
        tokens = shlex.split(line)
    except ValueError:
        return None
    for token in tokens:
        for program in ("iozone", "ior", "mdtest"):
            if is_program(token, program):
                return program
    return None


def _substitute(
    line: str, workload: AnyWorkload, threads: int
) -> tuple[str, set[tuple[str, str]], dict[str, str], list[str]]:
    """``line`` with each shell variable replaced: by the workload's value where the flag before it
    (or the flag it is glued to, ``-t$Thread``) sets a thread count or a size, else (a path or host
    file) by a plain word ``x``; the (program, flag) pairs whose value was a variable; by flag, the
    variables replaced by ``x`` (a message about ``'x'`` is about one of them); and the words
    pfssim cannot read this way.

    A count or size is the variable alone, or a size the variable and a k, m or g suffix
    (``${Size}G``): the word as a whole stands for the workload's value. Other text joined to it
    (``1$Thread``, ``$Size$Size``) makes a value pfssim cannot tell, and is refused, as is a flag
    given twice as variables (which a real shell may expand to two values)."""
    tokens = shlex.split(line)
    program = "iozone" if tokens and is_program(tokens[0], "iozone") else "mpirun"
    swept: set[tuple[str, str]] = set()
    unresolved: dict[str, str] = {}
    problems: list[str] = []
    for index, token in enumerate(tokens):
        if is_program(token, "ior") or is_program(token, "mdtest"):
            program = "ior" if is_program(token, "ior") else "mdtest"
        found = PLACEHOLDER.search(token)
        if found is None:
            continue
        glued = token.startswith("-") and found.start() > 1
        flag, prefix = (
            (token[: found.start()], token[: found.start()]) if glued else (tokens[index - 1] if index else "", "")
        )
        word = token[len(prefix) :]
        value = _sweep_value(workload, program, flag, threads)
        # The launcher's -np, -n and --np are one option: two of them are one given twice.
        key = (program, "-np" if program == "mpirun" and flag in LAUNCHER_NP else flag)
        if key in swept:
            problems.append(f"{flag} is given twice as a shell variable; give it once")
        elif value is not None:
            size = (program, flag) in _SIZE_FLAGS
            rest = word.replace(found[0], "", 1) if word.startswith(found[0]) else None
            if rest is None or (rest and not (rest in ("k", "m", "g", "K", "M", "G") and size)):
                problems.append(
                    f"{flag} {word}: a shell variable joined to other text stands for a value pfssim cannot "
                    "tell from the workload; write the variable alone"
                    f"{' (a size may carry a k, m or g suffix: ${Size}G)' if size else ''} or the value itself"
                )
        if value is None:
            unresolved[flag] = word
        swept.add(key)
        tokens[index] = prefix + (value if value is not None else PLACEHOLDER.sub("x", word))
    return shlex.join(tokens), swept, unresolved, problems


#: The flags that give the thread (task) count and the size per thread, by program.
_THREAD_FLAGS = {("iozone", "-t"), *(("mpirun", flag) for flag in LAUNCHER_NP)}
_SIZE_FLAGS = {("iozone", "-s"), ("ior", "-b"), ("ior", "-s")}


def command_mismatches(workload: AnyWorkload) -> list[str]:
    """How a workload file's ``command:`` (the document's command lines, one per line) disagrees with
    the settings pfssim simulates; empty when it agrees or there is no command.

    Each line is read as ``--cmd`` reads it, with its shell variables standing for the workload's own
    thread count and size at its first thread count; a line pfssim cannot read is reported too.
    """
    if not workload.command:
        return []
    lines = [line for line in workload.command.replace("\\\n", " ").splitlines() if line.strip()]
    if not lines:
        return ["the command is blank: give the document's command line, or leave the key out"]
    settings: tuple[str, ...] = _SETTINGS
    if isinstance(workload, MdtestWorkload):
        # Under the total_files rule -b changes with the thread count (a shell variable); else it is fixed.
        settings = _MDTEST_SETTINGS + (("branching", "items") if workload.total_files is None else ())
    problems: list[str] = []
    ops: list[str] = []
    for number, line in enumerate(lines, 1):
        where = f"line {number} of the command" if len(lines) > 1 else "the command"
        unresolved: dict[str, str] = {}
        program = _program_of(line)
        wanted = "mdtest" if workload.benchmark == "mdtest" else workload.benchmark.split("_")[0]
        if program is not None and program != wanted:
            problems.append(f"{where} runs {program}, the workload is {workload.benchmark}")
            continue
        try:
            text, swept, unresolved, unreadable = _substitute(line, workload, workload.threads[0])
            if unreadable:
                problems += [f"{where}: {problem}" for problem in unreadable]
                continue
            parsed = parse_command(text, name=workload.name)
        except ValueError as exc:  # shlex: unbalanced quotes
            problems.append(f"{where} cannot be split into words ({exc})")
            continue
        except WorkloadError as exc:
            for p in exc.problems:
                message = p.message
                variable = unresolved.get(p.path)
                if variable is not None and "'x'" in message:
                    message = message.replace(
                        "'x'",
                        f"{variable!r} (a shell variable: pfssim gives the thread count and size per "
                        "thread their values from the workload, but cannot tell what this one stands for "
                        "here; write its value)",
                    )
                problems.append(f"{where}: {p.path + ': ' if p.path else ''}{message}")
            continue
        # The variables stand for other values at the sweep's other points: a flag whose variable
        # is also given as a number (-t $Thread -t 1) is one given twice at all but one of them.
        for count in workload.threads[1:]:
            text, _swept, others, _unreadable = _substitute(line, workload, count)
            if others.keys() != unresolved.keys():
                continue  # a size that is no whole number of KiB there (an aggregate split): not written
            try:
                parse_command(text, name=workload.name)
            except WorkloadError as exc:
                problems += [
                    f"{where} at {count} threads: {p.path + ': ' if p.path else ''}{p.message}" for p in exc.problems
                ]
                break
        ops += [op for op in parsed.ops if op not in ops]
        # A thread count or size written as a number, not a shell variable, is the same at every
        # point of the sweep: the workload must then run that count, and that size at every count.
        if not swept & _THREAD_FLAGS and parsed.threads != workload.threads:
            problems.append(
                f"{where} runs {parsed.threads[0]} threads (a number, not a variable), the workload threads "
                f"{', '.join(map(str, workload.threads))}"
            )
        if isinstance(workload, Workload) and isinstance(parsed, Workload) and not swept & _SIZE_FLAGS:
            size = parsed.file_size or 0.0
            # Both as the benchmark runs them: an IOzone file in whole records (-s 1500k -r 1m is one).
            other = next((t for t in workload.threads if workload.file_size_for(t) != parsed.file_size_for(t)), None)
            if other is not None:
                problems.append(
                    f"{where} gives {_shown('record_size', size)} per thread (a number, not a variable), the "
                    f"workload {_shown('record_size', workload.file_size_for(other))} at {other} threads"
                )
        if (
            isinstance(workload, MdtestWorkload)
            and isinstance(parsed, MdtestWorkload)
            and workload.total_files is not None
            and ("mdtest", "-b") not in swept
        ):
            # The total_files rule derives -b for each thread count: a number must be that at every one.
            given = parsed.branching_for(parsed.threads[0])
            other = next((t for t in workload.threads if workload.branching_for(t) != given), None)
            if other is not None:
                problems.append(
                    f"{where} gives -b {given} (a number, not a variable), the workload "
                    f"{workload.branching_for(other)} directories per task at {other} thread{'s' if other != 1 else ''}"
                )
        for key in settings:
            mine, theirs = getattr(workload, key), getattr(parsed, key)
            if mine == theirs:
                continue
            if theirs is None:  # per_node: a mapping the command does not give
                problems.append(f"{where} gives no {key}, the workload {_shown(key, mine)}")
            elif mine is None:
                problems.append(f"{where} gives {key} {_shown(key, theirs)}, which the workload does not set")
            else:
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


def option_of(workload: AnyWorkload, key: str) -> str:
    """The command-line option that sets ``key`` of a workload read from a command line (``-e`` for
    ``fsync`` ...), as the user typed it (``-n`` or ``-np``, ``--map-by`` or ``-npernode``; ``-b/-s``
    for the bytes of an IOR task in several segments), or ``key`` itself when no single option does."""
    if isinstance(workload, MdtestWorkload):
        program = "mdtest"
    else:
        program = "iozone" if workload.benchmark.startswith("iozone") else "ior"
    if key in ("threads", "per_node") and program != "iozone" and workload.command:
        try:
            launch = parse_launcher(shlex.split(workload.command))
        except (ValueError, WorkloadError):  # not a launcher line pfssim reads: the usual names
            launch = None
        if launch is not None and key == "threads":
            return launch.tasks_option
        if launch is not None and launch.placement_option is not None:
            return launch.placement_option
    if key == "file_size" and isinstance(workload, Workload) and workload.segments > 1:
        return "-b/-s"  # IOR's bytes per task are -b x -s
    return OPTION_OF[program].get(key, key)
