"""Real IOzone, IOR and mdtest command lines (``pfssim run --cmd '...'``) turned into workloads.

IOzone and IOR lines become :class:`Workload` objects, mdtest lines :class:`MdtestWorkload` objects.
Every flag of a command is accounted for: it either changes the workload (record size, file size,
threads, O_DIRECT, fsync, operations, directory tree, files per directory), is listed below as
accepted with no effect on what pfssim models (with the reason), or is refused with a message saying
why. Nothing is dropped silently, so a command that means something pfssim cannot model never yields
a plausible-looking wrong answer.

Option meanings follow IOzone's usage text, IOR's ``parse_options.c`` and mdtest's option table in
``mdtest.c`` (see the shared research notes, sections 4.1 to 4.3): IOzone sizes without a suffix are
KiB, IOR and mdtest sizes without a suffix are bytes, and the ``k``/``m``/``g`` suffixes are binary in
all three. mdtest reads every number (``-n``, ``-I``, ``-b`` ...) the same way, so ``-I 1k`` is 1024.
A value may be glued to its flag (``-r16m``, ``-t16m``, ``-I1024``) or, for IOR and mdtest, follow an
``=`` (``-t=16m``), as their parsers allow; IOzone's getopt also reads bundled switches (``-ce``).
IOR 3.3 and mdtest read only the first letter of a bundle such as ``-wr`` (older IOR read every
letter), so their bundles are refused rather than guessed.

Launcher: ``mpirun``/``mpiexec`` with ``-np``, ``--map-by node`` or ``ppr:N:node``, ``-npernode``
(``-N``, ``-ppn``), host files, ``--mca``, ``-x``,
``--prefix``, ``--oversubscribe`` and ``--allow-run-as-root``. The Dell documents print some of these
with an en dash. ``\u2013-allow-run-as-root`` is read as ``--allow-run-as-root`` (it has no effect on
the I/O either way). A lone en dash in front of an option (``\u2013map-by node`` in the PixStor
document) is refused with a message saying to type ``--map-by``: mpirun would take such a word for the
program to start, so the line as printed cannot be the one that ran.

Modules: ``iozone``, ``ior``, ``mdtest`` and ``launcher`` read one program's options each,
``_words`` holds what they share, and ``command`` dispatches a whole line and checks a workload
file's own ``command:``.
"""

from sim.benchmarks.cmdline.command import command_mismatches, option_of, parse_command
from sim.benchmarks.cmdline.ior import IOR_NO_EFFECT, IOR_NO_EFFECT_WITH_VALUE, IOR_REFUSED
from sim.benchmarks.cmdline.iozone import IOZONE_NO_EFFECT, IOZONE_NO_EFFECT_WITH_VALUE, IOZONE_REFUSED
from sim.benchmarks.cmdline.launcher import LAUNCHER_NO_EFFECT, LAUNCHER_NO_EFFECT_WITH_VALUE
from sim.benchmarks.cmdline.mdtest import MDTEST_NO_EFFECT, MDTEST_NO_EFFECT_WITH_VALUE, MDTEST_REFUSED

__all__ = [
    "IOR_NO_EFFECT",
    "IOR_NO_EFFECT_WITH_VALUE",
    "IOR_REFUSED",
    "IOZONE_NO_EFFECT",
    "IOZONE_NO_EFFECT_WITH_VALUE",
    "IOZONE_REFUSED",
    "LAUNCHER_NO_EFFECT",
    "LAUNCHER_NO_EFFECT_WITH_VALUE",
    "MDTEST_NO_EFFECT",
    "MDTEST_NO_EFFECT_WITH_VALUE",
    "MDTEST_REFUSED",
    "command_mismatches",
    "option_of",
    "parse_command",
]
