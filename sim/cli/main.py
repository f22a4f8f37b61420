"""The ``pfssim`` command: a thin adapter from arguments to library calls and renderers.

Exit codes: 0 success, 1 a check failed, 2 bad input (with file:line path messages, no traceback).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console

from sim import __version__
from sim.errors import PfssimError, Problem

EXIT_OK = 0
EXIT_CHECK_FAILED = 1
EXIT_BAD_INPUT = 2


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pfssim",
        description="Predict what IOzone, IOR and MDtest report on a parallel file system.",
    )
    parser.add_argument("--version", action="version", version=f"pfssim {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    show = commands.add_parser("show", help="summarise a topology: parts, targets, capacity, ceilings")
    show.add_argument("topology", type=Path, help="a topology YAML file")
    show.add_argument("--json", action="store_true", help="print one JSON object instead of tables")

    validate = commands.add_parser("validate", help="check topology files; exit 2 listing every problem")
    validate.add_argument("files", type=Path, nargs="+", help="topology YAML files")
    return parser


def _print_problems(problems: Sequence[Problem], stream: object = None) -> None:
    out = stream if stream is not None else sys.stderr
    for problem in problems:
        print(str(problem), file=out)  # type: ignore[arg-type]


def cmd_show(args: argparse.Namespace) -> int:
    """``pfssim show``."""
    from sim.report.show import render_summary
    from sim.topology.build import load_system
    from sim.topology.summary import summarize

    summary = summarize(load_system(args.topology))
    if args.json:
        print(json.dumps(summary.to_json(), indent=2))
    else:
        render_summary(summary, Console())
    return EXIT_OK


def cmd_validate(args: argparse.Namespace) -> int:
    """``pfssim validate``: every file is checked; all problems are listed."""
    from sim.topology.build import load_system

    failed = 0
    for path in args.files:
        try:
            load_system(path)
        except PfssimError as exc:
            failed += 1
            problems = getattr(exc, "problems", None) or [Problem(str(path), None, "", str(exc))]
            _print_problems(problems, sys.stdout)
            continue
        print(f"{path}: ok")
    return EXIT_BAD_INPUT if failed else EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``pfssim`` console script."""
    args = _parser().parse_args(argv)
    handlers = {"show": cmd_show, "validate": cmd_validate}
    try:
        return handlers[args.command](args)
    except PfssimError as exc:
        problems = getattr(exc, "problems", None) or [Problem("", None, "", str(exc))]
        _print_problems(problems)
        return EXIT_BAD_INPUT


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
