"""``python -m sim.cli``: the ``pfssim`` command."""

from sim.cli.entry import run

run()
