"""``python -m sim.cli``: the ``pfssim`` command."""

import sys

from sim.cli.main import main

sys.exit(main())
