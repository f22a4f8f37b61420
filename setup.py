"""Build hook: compiles pfssim's device models to C with mypyc when it can (docs/design.md, Speed).

The drive, RAID and ME4 modules (``COMPILED``) run for every simulated drive command, and compiled
they cost about a quarter fewer instructions a point. The Python source stays the reference: the
compiled modules must give the same numbers to the bit (``tests/test_compiled.py`` compares an
installed build with the source). Whatever cannot be compiled (no mypyc, no C compiler, an error)
is installed as Python, with a message (``pip -v`` shows it), and gives the same results slower;
``PFSSIM_PURE=1`` asks for that. An editable install (``pip install -e``) is never compiled: the
extension modules would sit beside the sources in the project folder, where Python prefers them to
the ``.py`` files, so later edits would not run.
"""

from __future__ import annotations

import os
import sys

from setuptools import setup
from setuptools.command.build_ext import build_ext

COMPILED = ["sim/devices/drives.py", "sim/devices/raid.py", "sim/devices/me4.py"]
#: The modules are translated on their own: what they import (SimPy, the engine, the config) is
#: not followed, so its types are Any to them, with Python's semantics and no runtime checks, and
#: the translation is the same whether or not the build environment has those packages.
MYPY_FLAGS = ["--follow-imports=skip", "--ignore-missing-imports", "--no-warn-unused-ignores"]


def _say(message: str) -> None:
    print(f"pfssim build: {message}", file=sys.stderr)


class OptionalBuildExt(build_ext):
    """Builds the compiled modules all or none: a module whose shared library failed to build
    would fail to import, where its Python source works."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as exc:  # a missing compiler or header, an error in the generated C
            _say(f"compiling failed ({exc}); the Python modules are installed instead")
            for output in self.get_outputs():
                if os.path.exists(output):
                    os.remove(output)
            self.extensions = []
            self.distribution.ext_modules = []


def _extensions() -> list:
    if os.environ.get("PFSSIM_PURE") == "1":
        _say("PFSSIM_PURE=1: installing the Python modules only")
        return []
    if any(arg.startswith(("editable", "develop")) for arg in sys.argv[1:]):
        return []  # see the module docstring
    try:
        from mypyc.build import mypycify
    except ImportError as exc:
        _say(f"mypyc is not available ({exc}); installing the Python modules only")
        return []
    try:
        return list(mypycify([*MYPY_FLAGS, *COMPILED], opt_level="3", group_name="sim_devices"))
    except BaseException as exc:  # mypy reports errors by SystemExit
        _say(f"mypyc could not translate the modules ({exc!r}); installing the Python modules only")
        return []


setup(ext_modules=_extensions(), cmdclass={"build_ext": OptionalBuildExt})
