"""Mutated shipped inputs: pfssim either accepts them or names every problem's file and line.

The hand-written cases in test_bad_input.py pin the wording of known mistakes; these properties
look for the mistakes nobody thought of. Each example takes a shipped topology, parts catalogue
or workload, changes one or two of its values (a wrong type, a negative or absurd number, an empty
string, a unit that does not exist), deletes or renames a key, or repeats a list entry, and runs
the CLI on it. Whatever the change, the outcome must be exit 0 (the input still describes a
valid system) or exit 2 with every printed line a located problem: never a traceback, never
another exit code. A second property runs a short simulation on the mutated topologies that still
validate, since a value can be acceptable to the schema yet break the model (a zero or infinite
rate, say).
"""

from __future__ import annotations

import copy
import math
import re
import shutil
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tests.conftest import ROOT, run_cli

LOCATED_LINE = re.compile(r"^\S+\.yaml:\d+(?: \S+)?: .+$")

SHIPPED = (
    sorted(p.relative_to(ROOT) for p in (ROOT / "topologies").glob("*.yaml"))
    + sorted(p.relative_to(ROOT) for p in (ROOT / "topologies" / "parts").glob("*.yaml"))
    + sorted(p.relative_to(ROOT) for p in (ROOT / "workloads").glob("*.yaml"))
)
TOPOLOGIES = [p for p in SHIPPED if p.parent.name == "topologies"]

# Values a careless edit or a confused user could leave in a file.
VALUES = [
    -1, 0, 0.0, 7, 1e308, -1e-9, 10**30, 2**63, float("nan"), float("inf"), True, None,
    "", "abc", "1.5", "nan", "1e999", "10 XB", "5 GB/s", "-3 GiB", "0 s", "12 us", "{i}",
    [], [1, 2], {}, {"a": 1},
]  # fmt: skip

PICK = st.integers(min_value=0, max_value=10**6)  # which node, taken modulo the number of nodes
MUTATION = st.tuples(
    st.sampled_from(["set", "set", "set", "delete", "rename", "repeat"]), PICK, st.sampled_from(VALUES)
)
# Scaling a number keeps its type and unit: the kind of edit that still validates (a what-if).
SCALING = st.tuples(st.just("scale"), PICK, st.sampled_from([1e-3, 0.3, 3, 1000]))
# ... and these factors keep the unit but make the number zero, negative, infinite or not a number.
BREAKING = st.tuples(st.just("scale"), PICK, st.sampled_from([0.0, -1.0, float("inf"), float("nan")]))
NUMBER = re.compile(r"^(-?\d+(?:\.\d+)?(?:e-?\d+)?)(\s*[^\d.\s].*)?$")


def _nodes(node: object, prefix: tuple = ()) -> list[tuple]:
    """YAML paths of every node below the root, parents before children."""
    found = [prefix] if prefix else []
    if isinstance(node, dict):
        for key, value in node.items():
            found += _nodes(value, (*prefix, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found += _nodes(value, (*prefix, index))
    return found


def _scaled(value: object, factor: float) -> object:
    """``value`` times ``factor`` if it is a number or a quantity such as "12 GB/s", else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        scaled = value * factor
        return max(1, round(scaled)) if factor > 0 and math.isfinite(factor) else scaled
    if isinstance(value, float):
        return value * factor
    match = NUMBER.match(value) if isinstance(value, str) else None
    if not match:
        return None
    scaled = float(match.group(1)) * factor
    number = "1e999" if math.isinf(scaled) else f"{scaled:g}"  # how an infinity gets into YAML
    return f"{number}{match.group(2) or ''}"


def _at(document: object, path: tuple) -> object:
    for key in path:
        document = document[key]
    return document


def _mutate(document: object, kind: str, pick: int, value: object) -> None:
    nodes = _nodes(document)
    if kind == "scale":
        nodes = [path for path in nodes if _scaled(_at(document, path), 1.0) is not None]
    assume(nodes)  # an example that mutates nothing would check the shipped file again
    path = nodes[pick % len(nodes)]
    parent, key = _at(document, path[:-1]), path[-1]
    if kind == "delete" and isinstance(parent, dict):
        del parent[key]
    elif kind == "rename" and isinstance(parent, dict):
        parent[f"{key}x"] = parent.pop(key)
    elif kind == "repeat" and isinstance(parent, list):
        parent.append(copy.deepcopy(parent[key]))
    elif kind == "scale":
        parent[key] = _scaled(parent[key], value)
    else:
        parent[key] = value


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A private copy of the shipped topologies, catalogue and workloads."""
    root = tmp_path_factory.mktemp("shipped")
    shutil.copytree(ROOT / "topologies", root / "topologies")
    shutil.copytree(ROOT / "workloads", root / "workloads")
    return root


def _write_mutant(tree: Path, file: Path, mutations: list) -> str:
    """Write the mutated ``file`` into ``tree`` and return its original text."""
    original = (tree / file).read_text()
    document = yaml.safe_load(original)
    for mutation in mutations:
        _mutate(document, *mutation)
    (tree / file).write_text(yaml.safe_dump(document, sort_keys=False))
    return original


def _assert_clean_outcome(result, what: str) -> None:  # noqa: ANN001 - a CliResult
    assert result.code in (0, 2), f"{what}: exit {result.code}\n{result.stderr}"
    if result.code == 2:
        lines = [line for line in (result.stdout + result.stderr).splitlines() if not line.endswith(": ok")]
        assert lines, f"{what}: exit 2 without a message"
        for line in lines:
            assert LOCATED_LINE.match(line), f"{what}: not a located problem: {line!r}"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    file=st.sampled_from(SHIPPED),
    topology=st.sampled_from(TOPOLOGIES),
    mutations=st.lists(MUTATION | SCALING | BREAKING, min_size=1, max_size=2),
)
def test_a_mutated_input_is_accepted_or_located(tree: Path, file: Path, topology: Path, mutations: list) -> None:
    original = _write_mutant(tree, file, mutations)
    try:
        # A workload is checked on its own; a catalogue through a topology that uses it.
        target = file if file.parent.name in ("topologies", "workloads") else topology
        result = run_cli("validate", str(tree / target))
    finally:
        (tree / file).write_text(original)
    _assert_clean_outcome(result, f"{file} with {mutations}")


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(topology=st.sampled_from(TOPOLOGIES), mutation=SCALING)
def test_a_mutated_topology_that_validates_also_runs(tree: Path, topology: Path, mutation: tuple) -> None:
    original = _write_mutant(tree, topology, [mutation])
    try:
        result = run_cli("run", str(tree / topology), "--cmd", "iozone -i 0 -i 1 -r 1m -I -s 64m -t 2 -+n", "--json")
    finally:
        (tree / topology).write_text(original)
    _assert_clean_outcome(result, f"{topology} with {mutation}")
    if result.code == 0:
        import json

        points = json.loads(result.stdout)["points"]
        assert points and all(p["value"] > 0 for p in points), f"{topology} with {mutation}: {points}"
