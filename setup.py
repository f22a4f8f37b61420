"""Build script: the per-command device models compiled to C by mypyc, where a C compiler is found.

Everything else about the distribution is in pyproject.toml. pfssim is pure Python and runs the
same without this step. Compiled, the modules of :data:`sim.accelerated.MODULES` (an HDD's command
queue, a RAID group's member commands, an ME4 controller's cache: most of a point's time on hard
disks) make such a point about a fifth faster, with the same numbers (``tests/test_compiled.py``).

Only a built copy is compiled (``pip install .``, a wheel). An editable install (``pip install -e
.``) and the source tree stay pure Python: a compiled module beside its source would be imported
instead of the source after an edit. When compiling fails (no C compiler or Python headers) the
install goes on pure Python, with a note that pip shows only with ``pip install -v .``;
``PFSSIM_PURE_PYTHON=1`` skips compiling. ``pfssim --version`` says which the installed copy is.
Paths are relative to the project folder, where pip runs this script.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))
from sim.accelerated import MODULES  # noqa: E402  (standard library only: importable before the dependencies)

del sys.path[0]

#: The setup commands that build the package; the metadata steps (egg_info, dist_info) and the
#: editable ones (editable_wheel, develop) compile nothing.
_BUILDS = {"bdist_wheel", "build", "build_ext", "install"}


def _note(message: str) -> None:
    print(f"pfssim build: {message}", file=sys.stderr)


class OptionalBuildExt(build_ext):
    """Compile every extension, or none: on any failure the modules stay pure Python."""

    def run(self) -> None:
        if self.inplace or getattr(self, "editable_mode", False):
            _note("an editable build: the modules stay pure Python")
            self.extensions = []
            return
        try:
            super().run()
        except Exception as exc:  # any failure to compile leaves the pure-Python modules
            _note(f"compiling failed ({exc}); pfssim is installed as pure Python (slower, same numbers)")
            for output in self.get_outputs():  # those built before the failure: none or all
                Path(output).unlink(missing_ok=True)
            self.extensions = []


def _extensions() -> list[Extension]:
    if not _BUILDS.intersection(sys.argv[1:]) or {"editable_wheel", "develop"}.intersection(sys.argv[1:]):
        return []
    if os.environ.get("PFSSIM_PURE_PYTHON", "") not in ("", "0"):
        _note("PFSSIM_PURE_PYTHON is set: the modules stay pure Python")
        return []
    try:
        from mypyc.build import mypycify
    except ImportError as exc:
        _note(f"mypyc is not available ({exc}); pfssim is installed as pure Python")
        return []
    paths = [module.replace(".", "/") + ".py" for module in MODULES]
    try:
        # The build environment has mypy and SimPy but not the other dependencies (numpy,
        # pydantic): their types are unknown there, so the ignores written for them are unused.
        return mypycify([*paths, "--ignore-missing-imports", "--no-warn-unused-ignores"], opt_level="3")
    except (Exception, SystemExit) as exc:  # mypy's type check exits on an error
        _note(f"mypyc could not compile {', '.join(MODULES)} ({exc!r}); pfssim is installed as pure Python")
        return []


setup(ext_modules=_extensions(), cmdclass={"build_ext": OptionalBuildExt})
