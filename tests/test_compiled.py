"""The installed copy's compiled device models (setup.py, sim/accelerated.py) give the source's numbers.

The other tests import ``sim`` from the source tree, which is always pure Python. The installed
copy that ``pip install .`` built (what ``pfssim`` runs, and what CI's test environment holds) has
the modules of :data:`sim.accelerated.MODULES` compiled by mypyc where a C compiler was found. A
compiled module can fail where its source runs (mypyc built a generator defined in a closure that
then failed when called, and a subclass of SimPy's Event that crashed the interpreter: neither is
in :data:`~sim.accelerated.MODULES`), so this runs every shipped topology's golden suite
(tests/test_golden_runs.py) through the installed copy, in a separate interpreter that sees only
it, and holds its numbers to the source tree's own, bit for bit. Where the installed copy is the
source tree (an editable install) or pure Python by choice, there is nothing to compare and the
tests say so as a skip; a built copy that is pure Python although this machine has a C compiler
and Python's headers is a failed compile, and fails here (pip hides why: ``pip install -v .``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from functools import cache
from pathlib import Path

import pytest

from sim.accelerated import MODULES
from tests.conftest import ROOT, TOPOLOGIES
from tests.test_golden_runs import _pinned

#: Run by a separate interpreter in isolated mode (no current folder, no PYTHONPATH): ``sim`` comes
#: from the installed copy; the project folder goes last on the path, for the ``tests`` helpers.
#: It writes its answer to a file, so that nothing else printed can be mistaken for it.
_CHILD = """
import json, sys
sys.path.append({root!r})
import sim, sim.accelerated
from pathlib import Path
answer = {{"compiled": sim.accelerated.compiled_modules(), "sim": sim.__file__}}
if {topology!r}:
    from tests.test_golden_runs import _pinned
    answer["points"] = _pinned(Path({topology!r}))
Path({out!r}).write_text(json.dumps(answer))
"""


def _installed(out: Path, topology: str = "") -> dict:
    """What the installed copy reports: which modules it runs compiled, where it is, and
    ``topology``'s golden summary (``tests.test_golden_runs._pinned``) as it computes it."""
    child = _CHILD.format(root=str(ROOT), topology=topology, out=str(out))
    process = subprocess.run([sys.executable, "-I", "-c", child], capture_output=True, text=True, timeout=600)
    assert process.returncode == 0, process.stderr
    return json.loads(out.read_text())


@cache
def _installed_build() -> dict:
    with tempfile.TemporaryDirectory() as folder:
        return _installed(Path(folder) / "answer.json")


def _can_compile() -> bool:
    """Whether this machine has what setup.py's compile needs: a C compiler and Python's headers."""
    compiler = (sysconfig.get_config_var("CC") or "cc").split()[0]
    headers = Path(sysconfig.get_paths()["include"]) / "Python.h"
    return shutil.which(compiler) is not None and headers.exists()


def test_the_installed_copy_is_compiled_whole_or_not_at_all() -> None:
    # setup.py keeps every module or none: the compiled ones call each other directly.
    build = _installed_build()
    assert build["compiled"] in ([], list(MODULES)), build
    built = not build["sim"].startswith(str(ROOT / "sim"))  # not the source tree (an editable install)
    chose_pure = os.environ.get("PFSSIM_PURE_PYTHON", "") not in ("", "0")
    if built and not build["compiled"] and not chose_pure and _can_compile():
        pytest.fail(
            f"the installed pfssim ({build['sim']}) is pure Python although this machine has a C compiler "
            "and Python's headers: its compile failed (pip install -v . shows why; a copy installed pure on "
            "purpose with PFSSIM_PURE_PYTHON=1 wants it set for the tests too)"
        )


@pytest.mark.parametrize("path", TOPOLOGIES, ids=lambda p: p.stem)
def test_the_compiled_models_give_the_source_trees_numbers(path: Path, tmp_path: Path) -> None:
    if not _installed_build()["compiled"]:
        pytest.skip("the installed pfssim is pure Python (an editable install, or no C compiler): nothing to compare")
    installed = _installed(tmp_path / "answer.json", str(path))
    assert not installed["sim"].startswith(str(ROOT / "sim")), installed["sim"]
    # The compiled code does the same float operations in the same order: the same numbers to the
    # last bit, and the same bottlenecks (JSON keeps a float's every bit).
    assert installed["points"] == json.loads(json.dumps(_pinned(path)))
