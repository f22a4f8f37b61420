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


@pytest.mark.parametrize("text", ["a:\n  - b: 1\n   c: 2\n", "a: x\n  b: 3\n"])
def test_an_indentation_mistake_is_named_as_such(text: str) -> None:
    # PyYAML's "expected <block end>" and "mapping values are not allowed here" were all a
    # newcomer saw of a line indented off its siblings.
    with pytest.raises(ConfigError) as info:
        load_yaml_text(text, "t.yaml")
    assert info.value.problems[0].message.endswith("; check this line's indentation against the lines above it")


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


def test_expand_names_counts_from_start_and_a_fixed_name_takes_count_one_only() -> None:
    # ``storage{i}`` with count 3 from 1 is storage1..storage3 (system.py's docstring); a name with
    # no {i} placeholder can name one component only, so count 2 must be refused, not give twins.
    from sim.topology.build_base import expand_names

    assert expand_names("storage{i}", 3, 1) == ["storage1", "storage2", "storage3"]
    assert expand_names("meta", 1, 0) == ["meta"]
    with pytest.raises(ValueError, match=r"name 'meta' needs an '\{i\}' placeholder when count is 2"):
        expand_names("meta", 2, 0)


def test_a_part_defined_twice_is_refused_where_it_is_defined_again() -> None:
    # A second definition of a part name (a system's own parts: repeating the catalogue's) must not
    # silently replace the first: it is refused at the second one, naming where the first is.
    from sim.config.load import Catalogue

    drive = (
        "{model: m, source: s, kind: nvme, capacity: 1 TB, interface: {bus: pcie3, lanes: 4}, "
        "seq_read: 2 GB/s, seq_write: 1 GB/s, rand_read_iops: 1000 IOPS, rand_write_iops: 1000 IOPS, "
        "read_latency: 100 us, write_latency: 20 us}"
    )
    first, first_map = load_yaml_text(f"drives:\n  d1: {drive}\n", "parts/drives.yaml")
    again, again_map = load_yaml_text(f"name: x\nparts:\n  drives:\n    d1: {drive}\n", "system.yaml")
    catalogue = Catalogue()
    assert catalogue.add_document(first, first_map) == []
    (problem,) = catalogue.add_document(again["parts"], again_map, ("parts",))
    assert (problem.file, problem.line, problem.path) == ("system.yaml", 4, "parts.drives.d1")
    assert problem.message == "part 'd1' is already defined at parts/drives.yaml:2; use 'overrides' to change a field"
    assert catalogue.get("drives", "d1").smap is first_map  # the first definition is kept


_HDD_FIELDS = {
    "model": "hdd",
    "source": "s",
    "kind": "nl_sas_hdd",
    "capacity": "12 TB",
    "interface": {"bus": "sas3", "lanes": 1},
    "seq_read": "250 MB/s",
    "seq_write": "200 MB/s",
    "rand_read_iops": "150 IOPS",
    "rand_write_iops": "150 IOPS",
    "read_latency": "12 ms",
    "write_latency": "12 ms",
    "rpm": "7200 rpm",
    "avg_seek": "8 ms",
    "inner_seq_rate": "125 MB/s",
}


def test_an_hdd_inner_rate_above_either_outer_rate_and_a_seek_at_track_to_track_are_refused() -> None:
    # inner_seq_rate is the slow inner-zone rate: above the slower of seq_read/seq_write (here 200
    # MB/s, write) is a mistake even though it is below seq_read. An avg_seek equal to the 0.5 ms
    # track-to-track seek gives the seek curve no slope: "not above" it is refused too.
    from pydantic import ValidationError

    from sim.config.parts import Drive

    Drive.model_validate(_HDD_FIELDS)
    with pytest.raises(ValidationError, match=r"inner_seq_rate is above the outer-zone rate"):
        Drive.model_validate({**_HDD_FIELDS, "inner_seq_rate": "220 MB/s"})
    with pytest.raises(ValidationError, match=r"avg_seek 0.5 ms is not above the 0.5 ms track-to-track seek"):
        Drive.model_validate({**_HDD_FIELDS, "avg_seek": "0.5 ms"})


def test_an_hdd_part_may_leave_out_the_random_figures_its_model_does_not_read_and_an_ssd_may_not() -> None:
    # An architect's 18 TB drive for a what-if was refused until it gave random IOPS and latencies,
    # which the HDD model derives from its seek curve and rotation (and refuses as overrides).
    from pydantic import ValidationError

    from sim.config.parts import Drive

    derived = set(Drive.HDD_DERIVED)
    hdd = Drive.model_validate({k: v for k, v in _HDD_FIELDS.items() if k not in derived})
    assert all(getattr(hdd, field) is None for field in derived)
    ssd = {k: v for k, v in _HDD_FIELDS.items() if k not in ("rpm", "avg_seek", "inner_seq_rate")}
    ssd["kind"] = "sas_ssd"
    Drive.model_validate(ssd)
    with pytest.raises(ValidationError, match=r"an SSD needs rand_write_iops, write_latency \(its datasheet"):
        Drive.model_validate({k: v for k, v in ssd.items() if k not in ("rand_write_iops", "write_latency")})


def test_a_published_threads_range_needs_low_below_high() -> None:
    # A plateau over [64, 64] is one point, not a range: refused as [low, high] with low < high.
    from pydantic import ValidationError

    from sim.validation.dataset import PublishedPoint

    point = {"id": "p", "op": "write", "kind": "plateau", "value": "10 GB/s", "source": "s"}
    assert PublishedPoint.model_validate({**point, "threads_range": [64, 128]}).threads_range == (64, 128)
    with pytest.raises(ValidationError, match=r"threads_range must be \[low, high\] with low < high"):
        PublishedPoint.model_validate({**point, "threads_range": [64, 64]})


def test_the_client_total_may_reach_the_thread_limit_but_not_pass_it() -> None:
    # pfssim runs at most 65,536 threads, one or more per client: beegfs-hdr100's two groups of 8
    # clients may grow to 65,536 in all; one more client could never be used and is refused.
    from pydantic import ValidationError

    from sim.config.system import SystemSpec

    text = (ROOT / "topologies" / "beegfs-hdr100.yaml").read_text()
    data, _ = load_yaml_text(text, "beegfs-hdr100.yaml")
    assert [group["count"] for group in data["clients"]] == [8, 8]
    data["clients"][0]["count"] = 65528
    assert sum(group.count for group in SystemSpec.model_validate(data).clients) == 65536
    data["clients"][0]["count"] = 65529
    with pytest.raises(ValidationError, match="65,537 clients in all; pfssim runs at most 65,536 threads"):
        SystemSpec.model_validate(data)


def test_raid_and_nsd_schema_limits_are_exact() -> None:
    # RAID10 mirrors pairs: 5 members is refused though it is "at least 4"; a RAID10 stripe unit
    # must be a power of two as RAID5/6's (Linux md); explicit drives may not list a slot twice. An
    # NSD queue's threads may equal the server's worker threads but not exceed them. A pagepool of
    # exactly 80% of memory can be pinned, a byte more cannot (IBM message 6027-329).
    from pydantic import ValidationError

    from sim.config.system import NsdThreadsSpec, RaidSpec, pagepool_too_large

    RaidSpec.model_validate({"level": 10, "members": 4, "stripe_unit": "512 KiB"})
    with pytest.raises(ValidationError, match="RAID10 needs an even number of members, at least 4, got members: 5"):
        RaidSpec.model_validate({"level": 10, "members": 5, "stripe_unit": "512 KiB"})
    with pytest.raises(ValidationError, match="RAID10 needs a power-of-two stripe unit"):
        RaidSpec.model_validate({"level": 10, "members": 4, "stripe_unit": "384 KiB"})
    RaidSpec.model_validate({"level": 0, "members": 4, "stripe_unit": "384 KiB"})  # RAID0: any whole KiB
    with pytest.raises(ValidationError, match="'drives' lists a slot twice"):
        RaidSpec.model_validate({"level": 1, "members": 2, "drives": [3, 3], "stripe_unit": "512 KiB"})
    assert NsdThreadsSpec.model_validate({"max_worker": 16, "per_queue": 16}).per_queue == 16
    with pytest.raises(ValidationError, match=r"per_queue \(17\) is more than max_worker \(16\)"):
        NsdThreadsSpec.model_validate({"max_worker": 16, "per_queue": 17})
    memory = 100 * 2.0**30
    assert pagepool_too_large(0.8 * memory, memory) is None
    assert "cannot be more than 80% of real memory (80 GiB here" in pagepool_too_large(0.8 * memory + 1, memory)


def test_a_topology_with_two_workload_keys_is_told_it_mixes_the_two_files(tmp_path) -> None:
    # Two keys only a workload has (benchmark:, ops:) beside a topology's sections: one file cannot be
    # both, said at the first of them before anything else is looked for (there is no parts/ folder
    # here, and its absence is not reported). A lone stray key is left to the topology's own checks.
    from sim.config.load import load_system_spec

    text = (ROOT / "topologies" / "beegfs-hdr100.yaml").read_text()
    mixed = tmp_path / "mixed.yaml"
    mixed.write_text(text + "benchmark: iozone_seq_nn\nops: [write]\n")
    with pytest.raises(ConfigError) as info:
        load_system_spec(mixed)
    (problem,) = info.value.problems
    assert problem.path == "benchmark" and problem.line == text.count("\n") + 1
    assert problem.message.startswith("this file has both a workload's keys (benchmark:, ops:) and a topology's (")
    mixed.write_text(text + "ops: [write]\n")
    with pytest.raises(ConfigError) as info:
        load_system_spec(mixed)
    assert not any("both a workload's keys" in p.message for p in info.value.problems)
