"""YAML is read with line numbers; duplicate keys and syntax errors are located problems."""

from __future__ import annotations

import pytest

from sim.config.yamlio import format_path, load_yaml_text
from sim.errors import ConfigError


def test_lines_point_at_keys() -> None:
    data, smap = load_yaml_text("a: 1\nb:\n  - x: 2\n    y: [1, 2]\n", "t.yaml")
    assert data == {"a": 1, "b": [{"x": 2, "y": [1, 2]}]}
    assert smap.line(("b",)) == 2
    assert smap.line(("b", 0, "y")) == 4
    # A path below the deepest known node falls back to its nearest ancestor.
    assert smap.line(("b", 0, "y", 7, "z")) == 4


def test_duplicate_key_is_an_error() -> None:
    with pytest.raises(ConfigError) as info:
        load_yaml_text("a: 1\nb: 2\na: 3\n", "t.yaml")
    (problem,) = info.value.problems
    assert (problem.file, problem.line, problem.path) == ("t.yaml", 3, "a")
    assert "first given on line 1" in problem.message


@pytest.mark.parametrize(("text", "line"), [("a: [1,\n", 2), ("a:\n  b: 1\n c: 2\n", 3), ("", 1)])
def test_malformed_yaml_is_located(text: str, line: int) -> None:
    with pytest.raises(ConfigError) as info:
        load_yaml_text(text, "t.yaml")
    assert info.value.problems[0].line == line


def test_format_path() -> None:
    assert format_path(("servers", 2, "numa", 1, "hca")) == "servers[2].numa[1].hca"


def test_nested_aliases_cannot_blow_up() -> None:
    # Seven levels of ten aliases would be ten million values from seven short lines.
    lines = ["l0: &l0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"l{k}: &l{k} [{', '.join([f'*l{k - 1}'] * 10)}]" for k in range(1, 7)]
    with pytest.raises(ConfigError, match="expands to more than 1,000,000 values"):
        load_yaml_text("\n".join(lines), "bomb.yaml")
    data, _ = load_yaml_text("\n".join(lines[:3]), "small.yaml")  # 1,110 values: fine
    assert len(data["l2"]) == 10 and data["l2"][0][0] == ["x"] * 10


def test_a_file_that_is_not_utf8_names_the_line(tmp_path) -> None:
    from sim.config.yamlio import load_yaml

    path = tmp_path / "latin1.yaml"
    path.write_bytes("name: x\ntitle: caf\u00e9\n".encode("latin-1"))
    with pytest.raises(ConfigError) as info:
        load_yaml(path)
    (problem,) = info.value.problems
    assert (problem.file, problem.line) == (str(path), 2)
    assert "not UTF-8" in problem.message and "0xe9" in problem.message
