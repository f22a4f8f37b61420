"""Which modules an installed pfssim runs compiled (by mypyc, see ``setup.py``), and which as source.

pfssim is pure Python. ``pip install .`` compiles the modules named here to C where a compiler is
found: they hold the per-command work of a point (an HDD's command queue, a RAID group's member
commands, an ME4 controller's cache), which is most of the time of a point on hard disks. Compiled
or not, a point gives the same numbers to the last bit (``tests/test_compiled.py``). This module
imports nothing but the standard library, so that ``setup.py`` can read :data:`MODULES` before
the package's dependencies are installed.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
from pathlib import Path

#: The modules ``setup.py`` compiles. Each holds only plain classes and functions: a class that
#: derives from another library's class, or a generator defined inside a closure, is not safe to
#: compile (mypyc built both, and the first crashed the interpreter, the second failed at run time).
MODULES: tuple[str, ...] = ("sim.devices.drives", "sim.devices.raid", "sim.devices.me4")


def compiled_modules() -> list[str]:
    """The modules of :data:`MODULES` that this interpreter imports from a compiled extension."""
    compiled = []
    for name in MODULES:
        spec = importlib.util.find_spec(name)
        origin = spec.origin if spec is not None else None
        if origin and origin.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES)):
            compiled.append(name)
    return compiled


def build_summary() -> str:
    """One line for ``pfssim --version``: compiled, partly compiled, or pure Python."""
    compiled = compiled_modules()
    if not compiled:
        return "pure Python"
    if len(compiled) == len(MODULES):
        return f"compiled with mypyc: {len(compiled)} modules"
    return f"partly compiled: {', '.join(compiled)}; the rest pure Python"


def copy_summary() -> str:
    """Which copy of pfssim this interpreter imports, and :func:`build_summary` of it (for the
    benchmarks in bench/: an editable install runs the source tree, always pure Python; a copy
    installed with ``pip install .`` runs compiled where it could be built)."""
    import sim

    return f"pfssim from {Path(sim.__file__).parent} ({build_summary()})"
