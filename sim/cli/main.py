"""The ``pfssim`` command: a thin adapter from arguments to library calls and renderers.

Exit codes: 0 success, 1 a check failed, 2 bad input (with file:line path messages, no traceback).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from rich.console import Console

from sim import __version__
from sim.accelerated import build_summary
from sim.cli.entry import EXIT_INTERRUPTED
from sim.config.quantities import MAX_THREADS
from sim.errors import ConfigError, PfssimError, Problem, WorkloadError

if TYPE_CHECKING:
    from sim.config.overrides import Setting
    from sim.config.workload import AnyWorkload
    from sim.topology.model import System

EXIT_OK = 0
EXIT_CHECK_FAILED = 1
EXIT_BAD_INPUT = 2


class _Once(argparse.Action):
    """Store an option's value, refusing a second one (argparse would silently keep the last)."""

    def __call__(self, parser, namespace, values, option_string=None):  # noqa: ANN001, ANN204
        seen = getattr(namespace, "_given", set())
        if self.dest in seen:
            parser.error(f"{option_string} is given twice; give it once")
        namespace._given = seen | {self.dest}
        setattr(namespace, self.dest, values)


class _Parser(argparse.ArgumentParser):
    """argparse's parser, except that help and version text that cannot be written to standard
    output (``--version > /dev/full``) raises, as every other write there does, where argparse
    would drop the error and exit 0. Its subcommands' parsers are of this class too."""

    def _print_message(self, message: str, file=None) -> None:  # noqa: ANN001 - argparse's signature
        if message and (file or sys.stderr) is sys.stdout:
            sys.stdout.write(message)
            return
        super()._print_message(message, file)


def _file_path(text: str) -> Path:
    """A file argument: an empty one is refused as such (``Path("")`` is the current folder, which
    would be reported as a folder named ".")."""
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty path; give a YAML file")
    return Path(text)


def _json_path(text: str) -> Path:
    """A result file argument (``compare``): an empty one is refused as such."""
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty path; give a pfssim run --json result file")
    return Path(text)


def _add_set(command: argparse.ArgumentParser) -> None:
    """``--set KEY=VALUE`` (sim.config.overrides), for the commands that load a topology."""
    command.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help=(
            "replace a value of the topology: KEY is a YAML path as problems print it (filesystem.num_targets, "
            "enclosures[0].count), VALUE is YAML (4, '2 MiB'); repeat for several"
        ),
    )


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="pfssim",
        description="Predict what IOzone, IOR and MDtest report on a parallel file system.",
    )
    # The version, and whether this copy runs its device models compiled (setup.py): the same numbers either way.
    parser.add_argument("--version", action="version", version=f"pfssim {__version__} ({build_summary()})")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    show = commands.add_parser("show", help="summarise a topology: parts, targets, capacity, ceilings")
    show.add_argument("topology", type=_file_path, help="a topology YAML file")
    _add_set(show)
    show.add_argument("--json", action="store_true", help="print one JSON object instead of tables")

    validate = commands.add_parser("validate", help="check topology and workload files; exit 2 listing problems found")
    validate.add_argument("files", type=_file_path, nargs="+", help="topology or workload YAML files")

    run = commands.add_parser("run", help="simulate benchmarks on a topology and predict their curves")
    run.add_argument("topology", type=_file_path, help="a topology YAML file")
    _add_set(run)
    run.add_argument(
        "--workload",
        action="append",
        default=[],
        metavar="NAME|FILE",
        help="a workload from workloads/ or a workload file (repeatable; default: the topology's suite)",
    )
    run.add_argument(
        "--cmd",
        action="append",
        default=[],
        metavar="COMMAND",
        help="a real iozone, mpirun ... ior or mpirun ... mdtest command line (repeatable)",
    )
    run.add_argument(
        "--threads",
        action=_Once,
        type=_thread_list,
        metavar="LIST",
        help="comma-separated thread counts replacing every selected workload's",
    )
    run.add_argument(
        "--seed",
        action=_Once,
        type=_seed,
        default=1,
        help="master random seed, an integer from 0 to 2^53 - 1 (default 1)",
    )
    run.add_argument(
        "--precision",
        action=_Once,
        type=float,
        default=0.02,
        help="target relative half-width of the 95%% interval (default 0.02)",
    )
    run.add_argument(
        "--replications",
        action=_Once,
        type=_replications,
        default=1,
        metavar="N",
        help="independent runs of each point (other seeds: file layout, start, drive phases); their mean "
        "is reported with an interval from their spread (default 1, the run alone)",
    )
    run.add_argument("--workers", action=_Once, type=int, default=2, help="processes simulating points (default 2)")
    run.add_argument("--json", action="store_true", help="print the versioned result object as JSON")
    run.add_argument(
        "--plot", action=_Once, type=_output_file, metavar="FILE", help="write the curves to FILE (.png or .svg)"
    )

    compare = commands.add_parser(
        "compare",
        help="compare two pfssim run --json results point by point (a what-if: before and after)",
        description=(
            "Compare two pfssim run --json results point by point: points are matched by workload, op and "
            "thread count, and a workload of one name must have the same settings in both runs. A change is "
            "higher or lower only where the two 95% intervals do not overlap and it is larger than the runs' "
            "--precision; the bottleneck shows an arrow where it moved to a part the base run held less busy. "
            "Exit 0, or 2 for a file that is not a run's JSON result, differing workloads or no point in common."
        ),
    )
    compare.add_argument("base", type=_json_path, help="the run to compare against (pfssim run --json output)")
    compare.add_argument("other", type=_json_path, help="the run compared with it")
    compare.add_argument("--json", action="store_true", help="print one JSON object instead of tables")
    compare.add_argument(
        "--plot", action=_Once, type=_output_file, metavar="FILE", help="write both runs' curves to FILE (.png or .svg)"
    )

    reproduce = commands.add_parser(
        "reproduce", help="run the published suites and score the predictions against the published results"
    )
    reproduce.add_argument(
        "systems", nargs="*", metavar="SYSTEM", help="systems of validation/ to reproduce (default: all)"
    )
    reproduce.add_argument("--json", action="store_true", help="print one JSON object instead of tables")
    reproduce.add_argument(
        "--plots", action=_Once, type=_output_path, metavar="DIR", help="write one PNG per system x benchmark to DIR"
    )
    reproduce.add_argument(
        "--report",
        action=_Once,
        type=_output_file,
        metavar="FILE",
        help="write a self-contained report (.md with PNGs beside it, or .html)",
    )
    reproduce.add_argument(
        "--parameters", action="store_true", help="list the model parameters, their sources and fits, and exit"
    )
    reproduce.add_argument(
        "--workers", action=_Once, type=int, default=2, help="processes simulating points (default 2)"
    )
    return parser


def _thread_list(text: str) -> list[int]:
    items = [x.strip() for x in text.split(",")]
    if not all(x.isascii() and x.isdigit() for x in items):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a comma-separated list of whole numbers (such as 1,16,256, with no empty entries)"
        )
    values = [int(x) for x in items]
    twice = sorted({v for v in values if values.count(v) > 1})
    if twice:
        raise argparse.ArgumentTypeError(f"{', '.join(map(str, twice))} listed twice; give each thread count once")
    if not values or any(v < 1 for v in values):
        raise argparse.ArgumentTypeError("thread counts must be positive integers")
    if max(values) > MAX_THREADS:
        raise argparse.ArgumentTypeError(f"pfssim simulates at most {MAX_THREADS} threads, got {max(values)}")
    return sorted(set(values))


def _output_path(text: str) -> Path:
    """An output path as given; an empty one is refused (Path('') would mean the current folder)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty path; give a file or folder name")
    return Path(text)


def _output_file(text: str) -> Path:
    """An output file's path as given: not empty, and not ending in a slash, which names a folder
    (``Path`` drops the slash, and ``x.png/`` would be written as the file ``x.png``)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty path; give a file name")
    path = Path(text)
    if text.endswith(("/", os.sep)):
        raise argparse.ArgumentTypeError(f"{text!r} ends in a slash, which names a folder; give a file name")
    return path


#: The largest seed: JSON readers that hold numbers as doubles (JavaScript's, jq's) keep integers
#: exact only up to 2^53 - 1, and the seed in a result must name the run exactly wherever it is read.
MAX_SEED = 2**53 - 1


def _seed(text: str) -> int:
    digits = text.strip().removeprefix("-")
    if not (digits.isascii() and digits.isdigit()):
        shown = text if len(text) <= 40 else f"{text[:40]}..."
        raise argparse.ArgumentTypeError(f"{shown!r} is not an integer")
    refusal = (
        f"the seed must be an integer from 0 to 2^53 - 1 ({MAX_SEED:,}): a larger one would not be exact in "
        "every JSON reader of the result"
    )
    if len(digits.lstrip("0")) > 20:  # int() refuses very long digit strings
        raise argparse.ArgumentTypeError(refusal)
    seed = int(text)
    if not 0 <= seed <= MAX_SEED:
        raise argparse.ArgumentTypeError(refusal)
    return seed


#: The most independent runs ``--replications`` takes for each point: more narrow an interval
#: little (with 31, 30 degrees of freedom, the t quantile is 4% above the normal's, and the
#: half-width falls as the square root of the count).
MAX_REPLICATIONS = 31


def _replications(text: str) -> int:
    digits = text.strip()
    if not (digits.isascii() and digits.isdigit()) or not 1 <= int(digits) <= MAX_REPLICATIONS:
        shown = text if len(text) <= 40 else f"{text[:40]}..."
        raise argparse.ArgumentTypeError(
            f"{shown!r} is not a whole number from 1 to {MAX_REPLICATIONS} (runs of each point; 1 is the run alone)"
        )
    return int(digits)


def _tell(line: str) -> None:
    """Write a message line to standard error. One that cannot be written (``2>/dev/full``) is
    dropped: the exit code still tells, and a traceback could not be shown either."""
    with contextlib.suppress(OSError):
        print(line, file=sys.stderr, flush=True)


def _print_problems(problems: Sequence[Problem], stream: TextIO | None = None) -> None:
    """One line per problem, in the order of the file's lines (the checks find them schema part by
    schema part), each file's where it was first named; a problem of the whole file first."""
    files: dict[str, int] = {}
    for problem in problems:
        files.setdefault(problem.file, len(files))
    ordered = sorted(problems, key=lambda p: (files[p.file], -1 if p.line is None else p.line))
    seen: set[str] = set()
    for problem in ordered:
        line = str(problem)
        if line not in seen:  # a template's mistake is found once per server built from it
            seen.add(line)
            if stream is None:
                _tell(line)
            else:
                print(line, file=stream)


class _Console(Console):
    """rich's console, except that a reader who stops reading (``| head``) ends the command the way
    every other write to standard output does (:func:`main`'s ``BrokenPipeError``), not with
    rich's own exit code 1, which here means that a check failed."""

    def on_broken_pipe(self) -> None:
        raise BrokenPipeError


def _progress():  # noqa: ANN202 - a rich Progress
    """A progress display on stderr, shown only on a terminal and cleared when done."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    stderr = _Console(stderr=True)
    return Progress(
        TextColumn("{task.description}", markup=False),  # workload names are the user's text
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=stderr,
        transient=True,
        disable=not stderr.is_terminal,
    )


def _settings_of(args: argparse.Namespace) -> list[Setting]:
    """The ``--set`` arguments read; every one that cannot be is reported together."""
    from sim.config.overrides import parse_setting

    settings, problems = [], []
    for text in args.set:
        try:
            settings.append(parse_setting(text))
        except PfssimError as exc:
            problems.append(Problem("", None, "", str(exc)))
    if problems:
        raise ConfigError(problems)
    return settings


def _suite(system: System, settings: list[Setting]) -> list[AnyWorkload]:
    """The topology's default suite; its problems said with the ``--set`` replacements, which the
    file's ``benchmarks:`` may hold."""
    from sim.benchmarks.suite import default_workloads
    from sim.config.overrides import as_set_problems

    try:
        return default_workloads(system)
    except ConfigError as exc:
        if not settings:
            raise
        raise type(exc)(as_set_problems(exc.problems, settings)) from None


def cmd_show(args: argparse.Namespace) -> int:
    """``pfssim show``; a default suite naming a workload that cannot be found is refused, as
    ``run`` and ``validate`` refuse it, rather than listed as if it could run."""
    from sim.report.show import render_summary, show_json
    from sim.topology.build import load_system
    from sim.topology.summary import summarize

    settings = _settings_of(args)
    system = load_system(args.topology, settings)
    _suite(system, settings)
    summary = summarize(system)
    if args.json:
        print(json.dumps(show_json(summary), indent=2))
    else:
        render_summary(summary, _Console(markup=False))  # names are the user's text, not markup
    return EXIT_OK


def _file_kind(path: Path) -> str:
    """ "known-misses", "dataset", "workload" or "topology": what a file given to ``validate`` is, by
    its keys (:func:`sim.validation.dataset.validation_kind`, :func:`sim.config.load.is_workload_document`),
    read once; a file that cannot be read goes to the topology loader, which reports why."""
    from sim.config.load import is_workload_document
    from sim.config.yamlio import load_yaml
    from sim.validation.dataset import validation_kind

    try:
        data, _ = load_yaml(path, lenient=True)
    except PfssimError:
        return "topology"
    return validation_kind(data) or ("workload" if is_workload_document(data) else "topology")


def cmd_validate(args: argparse.Namespace) -> int:
    """``pfssim validate``: every file is checked; all problems are listed. Topology, workload and
    validation files (a dataset of published results, known-misses.yaml) are told apart by their keys."""
    from sim.benchmarks.runnable import check_all_runnable
    from sim.benchmarks.suite import default_workloads
    from sim.benchmarks.workloads import load_workload
    from sim.topology.build import load_system
    from sim.validation.dataset import load_dataset, load_datasets, load_known_misses_file

    failed = 0
    for path in args.files:
        try:
            kind = _file_kind(path)
            if kind == "known-misses":
                # Its entries must name what the folder's datasets have (the folder's other files).
                load_known_misses_file(path, load_datasets(path.parent, skip=path))
            elif kind == "dataset":
                load_dataset(path)
            elif kind == "workload":
                load_workload(path)
            else:
                system = load_system(path)
                check_all_runnable(system, default_workloads(system))  # what `pfssim run` would refuse
        except PfssimError as exc:
            failed += 1
            problems = getattr(exc, "problems", None) or [Problem(str(path), None, "", str(exc))]
            _print_problems(problems, sys.stdout)
            continue
        print(f"{path}: ok")
    return EXIT_BAD_INPUT if failed else EXIT_OK


def _settings(workload: AnyWorkload) -> str:
    """What a workload runs, without its name, title and command line (two --cmd lines compared)."""
    return workload.model_dump_json(exclude={"name", "title", "command"})


def cmd_run(args: argparse.Namespace) -> int:
    """``pfssim run``: resolve inputs (all errors before any simulation), simulate, render."""
    from sim.benchmarks.cmdline import option_of, parse_command
    from sim.benchmarks.driver import Precision
    from sim.benchmarks.runnable import check_all_runnable
    from sim.benchmarks.suite import run_suite
    from sim.benchmarks.workloads import find_workload
    from sim.report.plot import check_plot_path, write_plot
    from sim.report.run import render_run
    from sim.topology.build import load_system

    settings = _settings_of(args)
    system = load_system(args.topology, settings)
    chosen: list[AnyWorkload] = []
    problems: list[Problem] = []
    for given in args.workload:
        try:
            chosen.append(find_workload(given, args.topology))
        except PfssimError as exc:
            problems += getattr(exc, "problems", None) or [Problem("--workload", None, "", str(exc))]
    commands: dict[str, int] = {}  # what a --cmd runs -> its number: the same benchmark twice is refused
    given_as: dict[int, str] = {}  # a --cmd's number -> what it says before --threads
    labels: dict[str, str] = {}  # a --cmd workload's name -> how its problems name it
    # --cmd workloads are named cmd1, cmd2, ...: skipping names a --workload file already has.
    taken = {w.name for w in chosen}
    free = (name for name in (f"cmd{n}" for n in range(1, len(taken) + len(args.cmd) + 1)) if name not in taken)
    for i, command in enumerate(args.cmd):
        try:
            workload = parse_command(command, name=next(free))
            # Compared as they will run: lines that differ only in -t or -np are one benchmark once
            # --threads gives both the same counts.
            ran = workload.with_threads(args.threads) if args.threads else workload
            what = _settings(ran)
            if what in commands:
                why = (
                    ""
                    if _settings(workload) == given_as[commands[what]]
                    else " once --threads replaces their thread counts"
                )
                problems.append(
                    Problem(
                        f"--cmd #{i + 1}",
                        None,
                        "",
                        f"runs the same benchmark as --cmd #{commands[what]}{why} (selected twice); give it once",
                    )
                )
                continue
            commands[what] = i + 1
            given_as[i + 1] = _settings(workload)
            chosen.append(workload)
            labels[workload.name] = f"--cmd #{i + 1}" if len(args.cmd) > 1 else "--cmd"
        except PfssimError as exc:
            # Name the command when several are given: each --cmd is reported, not only the first bad one.
            label = f"--cmd #{i + 1}" if len(args.cmd) > 1 else "--cmd"
            for problem in getattr(exc, "problems", None) or [Problem("--cmd", None, "", str(exc))]:
                problems.append(Problem(label, problem.line, problem.path, problem.message))
    names = [w.name for w in chosen]
    problems += [
        Problem("--workload", None, "", f"{name!r} is selected twice")
        for name in sorted(set(names))
        if names.count(name) > 1
    ]
    if problems:
        raise WorkloadError(problems)
    workloads = chosen if chosen else _suite(system, settings)
    if args.threads:
        workloads = [w.with_threads(args.threads) for w in workloads]
    try:
        check_all_runnable(system, workloads)
    except WorkloadError as exc:  # a --cmd workload has no file: name the command and its option instead
        by_name = {w.name: w for w in workloads}
        problems = []
        for p in exc.problems:
            path = p.path
            if p.file in labels:
                path = option_of(by_name[p.file], p.path)
            if args.threads and p.path in ("per_node", "threads"):
                # The thread counts are --threads's: name it beside the setting they meet.
                path = f"{path} with --threads {','.join(map(str, args.threads))}"
            problems.append(Problem(labels.get(p.file, p.file), p.line, path, p.message))
        raise WorkloadError(problems) from None
    if args.plot is not None:
        check_plot_path(args.plot)
    if not 0 < args.precision < 1:
        raise PfssimError("--precision: must be above 0 and below 1 (0.02 is +-2%)")
    if args.workers < 1:
        raise PfssimError("--workers: must be at least 1")
    total = sum(len(w.point_ops) * len(w.threads) for w in workloads) * args.replications
    with _progress() as progress:
        task = progress.add_task(f"simulating {system.name}", total=total)

        def advance(point: object) -> None:
            progress.update(
                task,
                advance=1,
                description=f"{getattr(point, 'workload', '')} "
                f"{getattr(point, 'op', '')} {getattr(point, 'threads', '')}",
            )

        precision = Precision(rel_precision=args.precision, replications=args.replications)
        result = run_suite(system, workloads, args.seed, precision, advance, args.workers)
    # The result first: a plot that cannot be written (a full disk) then ends the run with exit 2
    # without losing the simulation's numbers.
    if args.json:
        print(json.dumps(result.to_json(), indent=2))
    else:
        # Names are the user's text, not markup. Piped or redirected, the tables are as wide as
        # reproduce's (160 columns), so that a part's dotted name stays on one line for grep.
        console = _Console(markup=False)
        render_run(result, console if console.is_terminal else _Console(markup=False, width=160))
    if args.plot is not None:
        sys.stdout.flush()
        write_plot(result, args.plot)
    return EXIT_OK


def cmd_compare(args: argparse.Namespace) -> int:
    """``pfssim compare``: two run results side by side; exit 2 when they share no point."""
    from sim.report.compare import compare_runs, load_run
    from sim.report.compare_view import comparison_json, render_comparison, write_comparison_plot
    from sim.report.plot import check_plot_path

    if args.plot is not None:
        check_plot_path(args.plot)
    comparison = compare_runs(load_run(args.base), load_run(args.other))
    if not comparison.pairs:
        raise PfssimError(
            f"{args.other}: no point in common with {args.base} (points are matched by workload, op and "
            "thread count: run the same workloads and --threads on both)"
        )
    if args.json:
        print(json.dumps(comparison_json(comparison), indent=2))
    else:
        console = _Console(markup=False)
        render_comparison(comparison, console if console.is_terminal else _Console(markup=False, width=160))
    if args.plot is not None:
        sys.stdout.flush()  # the table or JSON is out before a plot that cannot be written (exit 2)
        write_comparison_plot(comparison, args.plot)
    return EXIT_OK


def cmd_reproduce(args: argparse.Namespace) -> int:
    """``pfssim reproduce``: check the arguments, simulate and score, render; exit 1 on any miss."""
    from sim.report.files import check_output_folder, check_output_names
    from sim.validation.dataset import load_datasets, load_known_misses
    from sim.validation.document import check_report_path, write_report
    from sim.validation.figures import write_figures
    from sim.validation.report import parameters_json, render_console, render_parameters, to_json
    from sim.validation.run import figure_names, reproduce, select

    if args.parameters:
        others = [
            name
            for name, given in (
                ("SYSTEM", args.systems),
                ("--plots", args.plots is not None),
                ("--report", args.report is not None),
                ("--workers", "workers" in getattr(args, "_given", set())),
            )
            if given
        ]
        if others:
            raise PfssimError(
                f"--parameters lists the model parameters and exits; it takes --json only, not {', '.join(others)}"
            )
        if args.json:
            print(json.dumps(parameters_json(), indent=2))
        else:
            console = _Console()
            render_parameters(console if console.is_terminal else _Console(width=160))
        return EXIT_OK
    if args.report is not None:
        check_report_path(args.report)
    if args.plots is not None:
        check_output_folder(args.plots, "--plots")
        if args.report is not None and args.plots.absolute() == args.report.absolute():
            raise PfssimError(f"{args.plots}: --plots and --report name the same path; give each its own")
    if args.workers < 1:
        raise PfssimError("--workers: must be at least 1")
    every = load_datasets()
    select(every, args.systems)  # unknown system names: exit 2 before simulating
    load_known_misses(None, every)  # and known misses that name nothing the datasets have
    # The figures' files too: a folder in the way or a name too long must not cost the run.
    names = figure_names(args.systems or None)
    if args.plots is not None:
        check_output_names(args.plots, [f"{name}.png" for name in names], "--plots")
    if args.report is not None and args.report.suffix.lower() == ".md":
        check_output_names(args.report.parent, [f"{args.report.stem}-{name}.png" for name in names], "--report")
    with _progress() as progress:
        task = progress.add_task("reproducing", total=None)

        def advance(done: int, total: int, job: object) -> None:
            description = f"{getattr(job, 'system', '')} {getattr(job, 'op', '')} {getattr(job, 'threads', '')}"
            progress.update(task, completed=done, total=total, description=description)

        result = reproduce(args.systems or None, workers=args.workers, progress=advance)
    if args.plots is not None:
        write_figures(args.plots, result.benchmarks, result.unscored)
    if args.report is not None:
        write_report(result, args.report)
    if args.json:
        print(json.dumps(to_json(result), indent=2))
    else:
        console = _Console()
        render_console(result, console if console.is_terminal else _Console(width=160))
    return EXIT_OK if result.ok else EXIT_CHECK_FAILED


class _Terminated(BaseException):
    """SIGTERM or SIGHUP, raised where the run is, so that it unwinds as Ctrl-C does."""

    def __init__(self, number: int) -> None:
        super().__init__(number)
        self.number = number


def _terminated(number: int, _frame: object) -> None:
    from sim.engine.core import stop_when_safe

    # Not inside a simulation's event loop, where a compiled device model may be running: see there.
    stop_when_safe(_Terminated(number))


def _interrupted(_number: int, _frame: object) -> None:
    """Ctrl-C, as Python's own handler raises it, at a point where a run can stop (see above)."""
    from sim.engine.core import stop_when_safe

    stop_when_safe(KeyboardInterrupt())


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``pfssim`` console script."""
    if sys.stderr is None:
        # Started with standard error closed (2>&-): messages are dropped, the exit code still
        # tells. Without this, print(file=sys.stderr) and argparse's usage would write them to
        # standard output, into the result a script is reading.
        sys.stderr = open(os.devnull, "w")  # noqa: SIM115 - lives as long as the process
    if sys.stdout is None:  # started with standard output closed (>&-): no result could be shown
        _tell("pfssim: standard output is closed; nothing could be written")
        return EXIT_BAD_INPUT
    handlers = {
        "show": cmd_show,
        "validate": cmd_validate,
        "run": cmd_run,
        "compare": cmd_compare,
        "reproduce": cmd_reproduce,
    }
    try:
        try:
            args = _parser().parse_args(argv)
        except SystemExit as stop:  # --help, --version (exit 0) or a usage error (2), printed
            sys.stdout.flush()  # --version > /dev/full must not exit 0: the flush shows it here
            return stop.code if isinstance(stop.code, int) else EXIT_BAD_INPUT
        # A plain kill (SIGTERM) or a closed terminal (SIGHUP) stops a run as Ctrl-C does: the
        # workers with it, no output file begun, no traceback. The caller's handlers come back
        # when main returns (a script or a test calling main keeps its own).
        previous = {number: signal.signal(number, _terminated) for number in (signal.SIGTERM, signal.SIGHUP)}
        if signal.getsignal(signal.SIGINT) is signal.default_int_handler:  # not one a caller set
            previous[signal.SIGINT] = signal.signal(signal.SIGINT, _interrupted)
        try:
            code = handlers[args.command](args)
            sys.stdout.flush()  # a full disk or a closed pipe shows here, not at exit
        finally:
            for number, handler in previous.items():
                if handler is not None:  # None: a handler not set from Python, which cannot be put back
                    signal.signal(number, handler)
        return code
    except PfssimError as exc:
        problems = getattr(exc, "problems", None) or [Problem("", None, "", str(exc))]
        _print_problems(problems)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        # Ctrl-C: no traceback; the worker processes are stopped (sim.engine.workers) and no output
        # file was begun, since they are written whole or not at all once every point is done.
        _tell("pfssim: interrupted")
        return EXIT_INTERRUPTED
    except _Terminated as stop:
        _tell(f"pfssim: terminated ({signal.Signals(stop.number).name})")
        return 128 + stop.number
    except BrokenPipeError:
        # The reader stopped reading (| head): nothing more to say, and nothing to flush at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_BAD_INPUT
    except OSError as exc:
        what = f"{exc.filename}" if exc.filename else "standard output: cannot write"
        _tell(f"{what}: {exc.strerror or exc}")
        with contextlib.suppress(OSError):  # drop what is still buffered for the full device
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_BAD_INPUT


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
