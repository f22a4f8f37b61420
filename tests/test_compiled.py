"""The installed copy's compiled device models (setup.py, sim/accelerated.py) give the source's numbers.

The other tests import ``sim`` from the source tree, which is always pure Python. The installed
copy that ``pip install .`` built (what ``pfssim`` runs, and what CI's test environment holds) has
the modules of :data:`sim.accelerated.MODULES` compiled by mypyc where a C compiler was found. A
compiled module can fail where its source runs (mypyc built a generator defined in a closure that
then failed when called, and a subclass of SimPy's Event that crashed the interpreter: neither is
in :data:`~sim.accelerated.MODULES`), so this runs every shipped topology's golden suite
(tests/test_golden_runs.py) through the installed copy, in a separate interpreter that sees only
it, and holds its numbers to the golden ones. Where the installed copy is pure Python (an
editable install, or no compiler) there is nothing to compare, and the tests say so as a skip.
"""

from __future__ import annotations

import json
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

from sim.accelerated import MODULES
from tests.conftest import ROOT, TOPOLOGIES
from tests.test_golden_runs import GOLDEN

#: Run by a separate interpreter in isolated mode (no current folder, no PYTHONPATH): ``sim`` comes
#: from the installed copy; the project folder goes last on the path, for the ``tests`` helpers.
_CHILD = """
import json, sys
sys.path.append({root!r})
import sim.accelerated
from pathlib import Path
print(json.dumps({{"compiled": sim.accelerated.compiled_modules(), "sim": sim.__file__}}))
if {topology!r}:
    from tests.test_golden_runs import _pinned
    print(json.dumps(_pinned(Path({topology!r}))))
"""


def _installed(topology: str = "") -> list[object]:
    """What the installed copy reports: which modules it runs compiled, and ``topology``'s golden
    summary (``tests.test_golden_runs._pinned``) as it computes it."""
    child = _CHILD.format(root=str(ROOT), topology=topology)
    process = subprocess.run([sys.executable, "-I", "-c", child], capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert process.returncode == 0, process.stderr
    return [json.loads(line) for line in process.stdout.splitlines()]


@cache
def _installed_build() -> dict:
    return _installed()[0]  # type: ignore[return-value]


def test_the_installed_copy_is_compiled_whole_or_not_at_all() -> None:
    # setup.py keeps every module or none: the compiled ones call each other directly.
    build = _installed_build()
    assert build["compiled"] in ([], list(MODULES)), build


@pytest.mark.parametrize("path", TOPOLOGIES, ids=lambda p: p.stem)
def test_the_compiled_models_give_the_golden_numbers(path: Path) -> None:
    if not _installed_build()["compiled"]:
        pytest.skip("the installed pfssim is pure Python (an editable install, or no C compiler): nothing to compare")
    build, points = _installed(str(path))
    assert not build["sim"].startswith(str(ROOT / "sim")), build  # type: ignore[index]
    expected = json.loads((GOLDEN / f"{path.stem}.json").read_text())
    assert [(p["workload"], p["op"], p["threads"], p["bottleneck"]) for p in points] == [  # type: ignore[union-attr]
        (p["workload"], p["op"], p["threads"], p["bottleneck"]) for p in expected
    ]
    # The compiled code does the same float operations in the same order: any difference is a
    # miscompiled rule, not rounding (the golden test allows 1e-6 for another machine's libm).
    for got, want in zip(points, expected, strict=True):  # type: ignore[call-overload]
        for key in ("value", "ci_low", "ci_high"):
            assert got[key] == pytest.approx(want[key], rel=1e-9), (got["workload"], got["op"], got["threads"], key)
