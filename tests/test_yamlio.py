"""YAML is read with line numbers; duplicate keys and syntax errors are located problems."""

from __future__ import annotations

import pytest

from sim.config.yamlio import format_path, load_yaml_text
from sim.errors import ConfigError, PfssimError
from tests.conftest import ROOT


def test_lines_point_at_keys() -> None:
    data, smap = load_yaml_text("a: 1\nb:\n  - x: 2\n    y: [1, 2]\n", "t.yaml")
    assert data == {"a": 1, "b": [{"x": 2, "y": [1, 2]}]}
    assert smap.line(("b",)) == 2
    assert smap.line(("b", 0, "y")) == 4
    # A path below the deepest known node falls back to its nearest ancestor.
    assert smap.line(("b", 0, "y", 7, "z")) == 4


def test_a_list_item_written_as_an_alias_is_located_where_it_is_written() -> None:
    # PyYAML hands back the anchored node itself for an alias, so the item's line was the anchor's
    # (1 here). What is inside the anchored node is still located at the anchor, where it is written.
    text = "a: &x {k: 1}\nlist:\n  - 5\n  - *x\n  - [1, *x]\n"
    data, smap = load_yaml_text(text, "t.yaml")
    assert data["list"] == [5, {"k": 1}, [1, {"k": 1}]]
    assert (smap.line(("list", 1)), smap.line(("list", 2, 1))) == (4, 5)
    assert smap.line(("list", 1, "k")) == 1
    problem = smap.problem(("list", 1), "not a number")
    assert (problem.line, problem.path) == (4, "list[1]")


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
    with pytest.raises(ConfigError, match="expands to more than 100,000 values"):
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


def test_dates_stay_text_and_explicit_bad_ones_are_located() -> None:
    data, _ = load_yaml_text("version: 2019-13-01\ntitle: 2021-02-30\n", "dates.yaml")
    assert data == {"version": "2019-13-01", "title": "2021-02-30"}  # not dates, and no crash on day 30
    with pytest.raises(ConfigError) as info:
        load_yaml_text("name: x\nwhen: !!int twelve\n", "stamp.yaml")
    problem = info.value.problems[0]
    assert (problem.line, problem.path) == (2, "when") and "cannot read 'twelve' as" in problem.message


def _problems(text: str) -> list[tuple[int, str, str]]:
    """(line, path, message) of each problem ``text`` has, which must be refused."""
    with pytest.raises(ConfigError) as info:
        load_yaml_text(text, "t.yaml")
    return [(p.line, p.path, p.message) for p in info.value.problems]


def test_scalar_tags_other_than_plain_values_are_refused() -> None:
    """An explicit tag on a value asks for a type pfssim does not read: !!binary would become its
    decoded text (name: !!binary aGVsbG8= read as "hello"), !!timestamp a date."""
    text = "a: !!str 3\nb: !!binary aGVsbG8=\nc: !!timestamp 2019-01-01\nd: !!int 4\ne: !!float 1\n"
    assert _problems(text) == [
        (2, "b", "the tag !!binary is not supported; write a plain value"),
        (3, "c", "the tag !!timestamp is not supported; write a plain value"),
    ]
    data, _ = load_yaml_text("a: !!str 3\nd: !!int 4\ne: !!float 1\nf: !!null ''\ng: !!bool true\n", "t.yaml")
    assert data == {"a": "3", "d": 4, "e": 1.0, "f": None, "g": True}
    # A plain = or << is the word, not a tag no one wrote (YAML 1.1 types them !!value, !!merge).
    data, _ = load_yaml_text("title: =\nname: <<\n", "t.yaml")
    assert data == {"title": "=", "name": "<<"}


def test_only_true_and_false_are_booleans() -> None:
    """YAML 1.1 reads yes, no, on and off (a country code NO, a switch "on") as booleans; pfssim
    reads them as the words they are, as YAML 1.2 does, so that a yes/no setting refuses them."""
    text = "a: yes\nb: No\nc: on\nd: OFF\ne: true\nf: False\ng: TRUE\nh: y\n"
    data, _ = load_yaml_text(text, "b.yaml")
    assert data == {"a": "yes", "b": "No", "c": "on", "d": "OFF", "e": True, "f": False, "g": True, "h": "y"}


def test_a_yes_no_setting_written_yes_is_refused_at_its_line(tmp_path) -> None:
    from sim.benchmarks.workloads import load_workload

    text = (ROOT / "workloads" / "pixstor-iozone-seq.yaml").read_text()
    old = "direct_io: false"
    assert old in text, "test fixture out of date"
    path = tmp_path / "pixstor-iozone-seq.yaml"
    path.write_text(text.replace(old, "direct_io: no"))
    with pytest.raises(PfssimError) as info:
        load_workload(path)
    (problem,) = [p for p in info.value.problems if p.path == "direct_io"]
    assert problem.line == text[: text.index(old)].count("\n") + 1
    assert problem.message == "expected true or false, got 'no'"


@pytest.mark.parametrize("word", ["010", "0x10", "0b11", "1:0", "-07"])
def test_numbers_only_in_decimal(word: str) -> None:
    """YAML 1.1 reads 010 as 8 and 1:0 as 60; pfssim refuses them instead of guessing."""
    with pytest.raises(ConfigError) as info:
        load_yaml_text(f"name: x\ncount: {word}\n", "n.yaml")
    problem = info.value.problems[0]
    assert (problem.line, problem.path) == (2, "count") and "decimal" in problem.message
    data, _ = load_yaml_text(f"name: x\ncount: '{word}'\nn: 1_000\nf: 1e3\ng: .5\n", "q.yaml")
    assert data == {"name": "x", "count": word, "n": 1000, "f": 1000.0, "g": 0.5}


def test_self_containing_alias_and_deep_nesting_are_located() -> None:
    with pytest.raises(ConfigError) as info:
        load_yaml_text("name: x\nbenchmarks: &b [x, *b]\n", "loop.yaml")
    assert info.value.problems[0].path == "benchmarks[1]" and "contains it" in info.value.problems[0].message
    for depth in (100, 2000):  # past the limit, and past what Python's recursion allows
        with pytest.raises(ConfigError, match="nested more than 64 levels") as info:
            load_yaml_text("name: x\na: " + "[" * depth + "]" * depth + "\n", "deep.yaml")
        assert info.value.problems[0].line == 2


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_a_nul_byte_is_located_whatever_the_line_endings(newline: str) -> None:
    # The line was counted by LF alone, so a file with CR line endings (old Mac) put it on line 1.
    with pytest.raises(ConfigError) as info:
        load_yaml_text(newline.join(["name: x", "title: y", "source: a\x00b", ""]), "nul.yaml")
    assert info.value.problems[0].line == 3


def test_nul_bytes_and_unknown_tags_are_located_without_pyyaml_internals() -> None:
    with pytest.raises(ConfigError) as info:
        load_yaml_text("name: x\ntitle: a\x00b\n", "nul.yaml")
    assert info.value.problems[0].line == 2 and "U+0000" in info.value.problems[0].message
    with pytest.raises(ConfigError) as info:
        load_yaml_text("name: x\ntitle: !foo bar\n", "tag.yaml")
    assert info.value.problems[0].line == 2 and "<unicode string>" not in info.value.problems[0].message


def test_oversized_files_are_refused_before_parsing(tmp_path) -> None:
    from sim.config.yamlio import MAX_CHARACTERS, load_yaml

    path = tmp_path / "big.yaml"
    path.write_text("name: x\nvalues: [" + "1, " * (MAX_CHARACTERS // 3) + "1]\n")
    with pytest.raises(ConfigError, match="more than the 250,000"):
        load_yaml(path)


@pytest.mark.parametrize("key", ["1", "true", "null", "1.5"])
def test_keys_are_names(key: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_yaml_text(f"name: x\nstripe:\n  {key}: 4\n", "k.yaml")
    problem = info.value.problems[0]
    assert (problem.line, problem.path) == (3, "stripe") and f"key {key!r} is not a name" in problem.message


def test_collection_keys_and_tagged_collections_are_located() -> None:
    text = (
        "a: 1\n? [x, y]\n: 2\nb: !!set {p, q}\nc: !!python/object:os.system {}\nd: !!omap [{x: 1}]\ne: !!map {f: 1}\n"
    )
    assert _problems(text) == [
        (2, "", "a key is a list or a mapping; every key is a name such as threads or record_size"),
        (4, "b", "the tag !!set is not supported; write a plain mapping or list"),
        (5, "c", "the tag !!python/object:os.system is not supported; write a plain mapping or list"),
        (6, "d", "the tag !!omap is not supported; write a plain mapping or list"),
    ]  # !!map is the plain mapping's own tag


def test_a_merge_key_is_refused_at_its_own_line() -> None:
    """YAML 1.1's << merges another mapping's keys in, which would hide where a value is written;
    it is refused where the << is (until session 31, at the line of the mapping holding it)."""
    text = "name: x\nbase: &b {count: 2}\nservers:\n  - name: s\n    <<: *b\n"
    assert _problems(text) == [
        (
            5,
            "servers[0]",
            "YAML merge keys ('<<') are not supported; write the keys out (a topology's servers can share a template)",
        )
    ]
