"""Where the ``pfssim`` command starts: before the command's modules are imported.

Importing the command (rich, pydantic, numpy) takes a few tenths of a second, before
:func:`sim.cli.main.main` can turn a Ctrl-C into ``pfssim: interrupted`` and exit 130; a Ctrl-C
in that time used to end the process with Python's traceback, killed by the signal. This module
imports nothing of its own, so the window left is the interpreter's own start.
"""

from __future__ import annotations

import sys

EXIT_INTERRUPTED = 130  # 128 + SIGINT, what shells report for a program stopped by Ctrl-C


def run() -> None:
    """Import the command and run it, exiting with its code (130 for a Ctrl-C while importing)."""
    try:
        from sim.cli.main import main
    except KeyboardInterrupt:
        print("pfssim: interrupted", file=sys.stderr)
        sys.exit(EXIT_INTERRUPTED)
    sys.exit(main())


if __name__ == "__main__":
    run()
