"""Bad input: one located message per problem, exit code 2, never a traceback."""

from __future__ import annotations

import re

import pytest

from tests.conftest import run_cli

LOCATED = re.compile(r"^(?P<file>\S+\.yaml):(?P<line>\d+)(?: (?P<path>\S+))?: (?P<message>.+)$")

META_DRIVES = "drives: {part: intel-p4600-1.6tb, count: 12}\n        raid_groups:\n          - {count: 6"

# case: (text in the EDR topology, its replacement, YAML path, message fragment, text on the expected line)
CASES = {
    "malformed YAML": ("name: beegfs-edr-2019", "name: [beegfs-edr-2019", "", "malformed YAML", "title:"),
    "unknown key": (
        "  chunk_size: 2 MiB",
        "  chunk_size: 2 MiB\n  chunksize: 2 MiB",
        "filesystem.chunksize",
        "unknown key 'chunksize'",
        "chunksize:",
    ),
    "unknown part": (
        META_DRIVES,
        META_DRIVES.replace("p4600", "p4700"),
        "servers[1].numa[0].pcie_switches[0].drives.part",
        "unknown drive part 'intel-p4700-1.6tb'",
        "p4700",
    ),
    "unit-less rate": (
        META_DRIVES,
        META_DRIVES.replace("count: 12}", "count: 12, overrides: {seq_write: 1300}}"),
        "servers[1].numa[0].pcie_switches[0].drives.overrides.seq_write",
        "has no unit",
        "seq_write: 1300",
    ),
    "negative rate": (
        META_DRIVES,
        META_DRIVES.replace("count: 12}", "count: 12, overrides: {seq_write: -1.3 GB/s}}"),
        "servers[1].numa[0].pcie_switches[0].drives.overrides.seq_write",
        "must be positive",
        "seq_write: -1.3",
    ),
    "RAID6 with 3 members": (
        "{count: 6, level: 1, members: 2,",
        "{count: 4, level: 6, members: 3,",
        "servers[1].numa[0].raid_groups[0]",
        "RAID6 needs at least 4 members",
        "members: 3",
    ),
    "unknown switch": (
        "    - {name: cluster-fabric, part: mellanox-cs7500}",
        "    - {name: fabric, part: mellanox-cs7500}",
        "network.links[0].between",
        "unknown switch 'cluster-fabric'",
        "between:",
    ),
    "duplicate key": (
        "  num_targets: 3",
        "  num_targets: 3\n  num_targets: 4",
        "filesystem.num_targets",
        "duplicate key",
        "num_targets: 4",
    ),
    "drive in two groups": (
        "{count: 6, level: 1, members: 2, stripe_unit: 512 KiB, role: metadata, filesystem: ext4}",
        "{count: 6, level: 1, members: 2, stripe_unit: 512 KiB, role: metadata}\n"
        "          - {level: 1, members: 2, drives: [0, 1], stripe_unit: 512 KiB, role: metadata}",
        "servers[1].numa[0].raid_groups[1]",
        "already in RAID group meta.numa0.mdt0",
        "drives: [0, 1]",
    ),
    "chunk size below BeeGFS's minimum": (
        "  chunk_size: 2 MiB",
        "  chunk_size: 1 B",
        "filesystem.chunk_size",
        "power of two of at least 64 KiB",
        "chunk_size: 1 B",
    ),
    "more stripe targets than BeeGFS allows": (
        "  num_targets: 3",
        "  num_targets: 1000",
        "filesystem.num_targets",
        "less than or equal to 256",
        "num_targets: 1000",
    ),
    "capacity efficiency above 1": (
        "    value: 0.99",
        "    value: 1.5",
        "filesystem.capacity_efficiency.value",
        "less than or equal to 1",
        "value: 1.5",
    ),
    "HCA cabled to no switch": (
        "{part: connectx4-edr, switch: cluster-fabric}",
        "{part: connectx4-edr, switch: []}",
        "clients[0].hcas[0].switch",
        "at least 1 item",
        "switch: []",
    ),
    "benchmark listed twice": (
        "benchmarks: [beegfs-hp-iozone-seq, beegfs-hp-iozone-random]",
        "benchmarks: [beegfs-hp-iozone-seq, beegfs-hp-iozone-random, beegfs-hp-iozone-seq]",
        "benchmarks",
        "listed twice: beegfs-hp-iozone-seq",
        "benchmarks:",
    ),
    "override naming an unknown bus": (
        "{part: connectx4-edr, switch: cluster-fabric}",
        "{part: connectx4-edr, switch: cluster-fabric, overrides: {host: {bus: pcie9}}}",
        "clients[0].hcas[0].overrides.host.bus",
        "unknown bus part 'pcie9'",
        "pcie9",
    ),
    "too few drives": (
        "{count: 6, level: 1, members: 2,",
        "{count: 7, level: 1, members: 2,",
        "servers[1].numa[0].raid_groups[0]",
        "has only 12 drives",
        "count: 7",
    ),
}


def _variant(tmp_path, system: str, replacements: list[tuple[str, str]]):  # noqa: ANN202 - the new file's Path
    """A copy of a shipped topology (with its catalogue) with each ``old`` replaced once by ``new``."""
    import shutil

    from tests.conftest import ROOT

    shutil.copytree(ROOT / "topologies" / "parts", tmp_path / "parts")
    text = (ROOT / "topologies" / f"{system}.yaml").read_text()
    for old, new in replacements:
        assert text.count(old) >= 1, f"test fixture out of date: {old!r} not in {system}"
        text = text.replace(old, new, 1)
    path = tmp_path / "variant.yaml"
    path.write_text(text)
    return path


def _line_of(text: str, fragment: str) -> int:
    return text[: text.index(fragment)].count("\n") + 1


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_input_is_located(case: str, bad_topology) -> None:
    old, new, path, fragment, marker = CASES[case]
    topology = bad_topology(old, new)
    result = run_cli("validate", str(topology))
    assert result.code == 2
    assert "Traceback" not in result.stdout + result.stderr
    lines = [m for m in map(LOCATED.match, result.stdout.splitlines()) if m]
    hit = [m for m in lines if fragment in m["message"]]
    assert hit, result.stdout
    m = hit[0]
    assert m["file"] == str(topology)
    assert (m["path"] or "") == path
    assert int(m["line"]) == _line_of(topology.read_text(), marker), result.stdout


def test_unreachable_target(bad_topology) -> None:
    # storage5's zone 1 port goes to a switch nobody else is on.
    topology = bad_topology(
        "    - {name: cluster-fabric, part: mellanox-cs7500}",
        "    - {name: cluster-fabric, part: mellanox-cs7500}\n    - {name: island, part: mellanox-sb7890}",
    )
    text = topology.read_text().replace(
        "  - name: storage{i}\n    count: 5\n    start: 1\n    template: r740xd-nvme\n",
        "  - name: storage{i}\n    count: 4\n    start: 1\n    template: r740xd-nvme\n"
        "  - name: storage5\n    part: poweredge-r740xd\n    numa:\n"
        "      - hcas: [{part: connectx5-edr, switch: island}]\n"
        "        pcie_switches: [{part: r740xd-nvme-switch, drives: {part: intel-p4600-1.6tb, count: 12}}]\n"
        "        raid_groups: [{count: 3, level: 0, members: 4, stripe_unit: 512 KiB}]\n"
        "        services: [{kind: beegfs-storage}]\n",
    )
    topology.write_text(text)
    result = run_cli("validate", str(topology))
    assert result.code == 2
    messages = result.stdout.splitlines()
    assert len(messages) == 3  # one line per unreachable target
    assert all("cannot be reached from client 'client1'" in m for m in messages)
    assert "storage5.numa0.target0" in messages[0]
    assert "servers[3].numa[0].raid_groups[0]" in messages[0]


def test_missing_file() -> None:
    result = run_cli("validate", "does/not/exist.yaml")
    assert result.code == 2
    assert "does/not/exist.yaml: cannot read file" in result.stdout


def test_show_bad_input_goes_to_stderr(bad_topology) -> None:
    topology = bad_topology("  chunk_size: 2 MiB", "  chunk_size: 2 MiB\n  chunksize: 2 MiB")
    result = run_cli("show", str(topology), "--json")
    assert result.code == 2
    assert result.stdout == ""  # never a partly written result
    assert "unknown key 'chunksize'" in result.stderr


def test_every_problem_is_reported(bad_topology) -> None:
    topology = bad_topology("  chunk_size: 2 MiB", "  chunk_size: 2 MiB\n  chunksize: 2 MiB\n  stripes: 3")
    result = run_cli("validate", str(topology))
    assert "unknown key 'chunksize'" in result.stdout and "unknown key 'stripes'" in result.stdout


def test_bad_catalogue_part_is_located(tmp_path) -> None:
    import shutil

    from tests.conftest import ROOT

    shutil.copytree(ROOT / "topologies" / "parts", tmp_path / "parts")
    drives = tmp_path / "parts" / "drives.yaml"
    drives.write_text(drives.read_text().replace('seq_write: "1.3 GB/s"', "seq_write: 1.3", 1))
    shutil.copy(ROOT / "topologies" / "beegfs-edr-2019.yaml", tmp_path / "t.yaml")
    result = run_cli("validate", str(tmp_path / "t.yaml"))
    assert result.code == 2
    assert f"{drives}:" in result.stdout
    assert "drives.intel-p4600-1.6tb.seq_write: 1.3 has no unit" in result.stdout


def test_bad_read_ahead_setting_is_located(tmp_path) -> None:
    topology = _variant(
        tmp_path, "beegfs-high-capacity", [("    spares: 4\n", "    spares: 4\n    read_ahead: fast\n")]
    )
    result = run_cli("validate", str(topology))
    assert result.code == 2
    lines = [m for m in map(LOCATED.match, result.stdout.splitlines()) if m]
    assert len(lines) == 1, result.stdout
    assert lines[0]["path"] == "enclosures[0].read_ahead"
    assert int(lines[0]["line"]) == _line_of(topology.read_text(), "read_ahead: fast")
    assert "'adaptive', 'stripe', 'disabled' or a size" in lines[0]["message"]


@pytest.mark.parametrize(
    ("old", "new", "path", "fragment"),
    [
        ("block_size: 8 MiB", "block_size: 3 MiB", "filesystem.block_size", "not a block size mmcrfs accepts"),
        ("subblocks_per_block: 512", "subblocks_per_block: 7", "filesystem.subblocks_per_block", "does not divide"),
        ("inode_size: 4 KiB", "inode_size: 3 KiB", "filesystem.inode_size", "512, 1024 or 4096"),
        ("metadata_replicas: 2", "metadata_replicas: 4", "filesystem.metadata_replicas", "less than or equal to 3"),
    ],
)
def test_impossible_gpfs_settings_are_located(tmp_path, old: str, new: str, path: str, fragment: str) -> None:
    topology = _variant(tmp_path, "pixstor-large", [(old, new)])
    result = run_cli("validate", str(topology))
    assert result.code == 2 and "Traceback" not in result.stdout + result.stderr
    lines = [m for m in map(LOCATED.match, result.stdout.splitlines()) if m]
    assert [m["path"] for m in lines] == [path], result.stdout
    assert fragment in lines[0]["message"]
    assert int(lines[0]["line"]) == _line_of(topology.read_text(), new)


def test_a_bad_enclosure_is_reported_once_without_echoes(tmp_path) -> None:
    # A typo in the ME4084's overrides: the enclosure is not built, and the servers' SAS cabling
    # to "me4084-*" must not add "no enclosure matches" lines that only echo it.
    old = "    part: powervault-me4084\n"
    topology = _variant(tmp_path, "beegfs-high-capacity", [(old, old + "    overrides: {array_seq_wrtie: 6 GB/s}\n")])
    result = run_cli("validate", str(topology))
    assert result.code == 2
    lines = [m for m in map(LOCATED.match, result.stdout.splitlines()) if m]
    assert [m["path"] for m in lines] == ["enclosures[0].overrides.array_seq_wrtie"], result.stdout


def test_a_service_needs_a_sas_cable_to_its_targets(tmp_path) -> None:
    # meta0 has no SAS cable to the ME4084s; a storage service there serving one of their virtual
    # disks used to pass validate and crash the run (no SAS port to choose from).
    meta0 = '      - {kind: beegfs-meta, count: 6, targets: ["me4024-0.vd[0-5]"]}\n'
    storage0 = '      - {kind: beegfs-storage, targets: ["me4084-*.vd[0-3]"]}\n'
    topology = _variant(
        tmp_path,
        "beegfs-high-capacity",
        [
            (meta0, meta0 + '      - {kind: beegfs-storage, targets: ["me4084-0.vd0"]}\n'),
            (storage0, '      - {kind: beegfs-storage, targets: ["me4084-[123].vd[0-3]", "me4084-0.vd[123]"]}\n'),
        ],
    )
    result = run_cli("validate", str(topology))
    assert result.code == 2 and "Traceback" not in result.stdout + result.stderr
    assert "has no SAS cable to me4084-0.ctrl" in result.stdout, result.stdout


def test_an_hdd_seek_below_track_to_track_is_refused(tmp_path) -> None:
    # avg_seek under the model's track-to-track seek made the seek curve's slope negative.
    old = "drives: {part: nl-sas-12tb-7200, count: 84}"
    new = "drives: {part: nl-sas-12tb-7200, count: 84, overrides: {avg_seek: 0.01 ms}}"
    topology = _variant(tmp_path, "beegfs-high-capacity", [(old, new)])
    result = run_cli("validate", str(topology))
    assert result.code == 2 and "not above the 0.5 ms track-to-track seek" in result.stdout, result.stdout


def test_catalogue_files_may_end_in_yml(tmp_path) -> None:
    # A catalogue file named drives.yml used to be skipped, so every drive was "unknown".
    import shutil

    from tests.conftest import ROOT

    shutil.copytree(ROOT / "topologies" / "parts", tmp_path / "parts")
    (tmp_path / "parts" / "drives.yaml").rename(tmp_path / "parts" / "drives.yml")
    shutil.copy(ROOT / "topologies" / "beegfs-edr-2019.yaml", tmp_path / "t.yaml")
    result = run_cli("validate", str(tmp_path / "t.yaml"))
    assert result.code == 0, result.stdout


def test_a_raid_group_that_does_not_fit_is_not_echoed_as_unassigned_drives(tmp_path) -> None:
    # 8 x 11 drives do not fit in an 84-slot ME4084: one line per enclosure says so, and the drives
    # left over are not reported again as "in no RAID group".
    old = "{count: 8, level: 6, members: 10, interleave: 2, stripe_unit: 512 KiB}"
    topology = _variant(tmp_path, "beegfs-high-capacity", [(old, old.replace("members: 10", "members: 11"))])
    result = run_cli("validate", str(topology))
    assert result.code == 2
    assert result.stdout.count("has only 84 drives") == 4, result.stdout
    assert "in no RAID group" not in result.stdout
