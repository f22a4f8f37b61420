"""Bad input: one located message per problem, exit code 2, never a traceback."""

from __future__ import annotations

import re

import pytest

from sim.errors import PfssimError
from tests.conftest import ROOT, run_cli

LOCATED = re.compile(r"^(?P<file>\S+\.yaml):(?P<line>\d+)(?: (?P<path>\S+))?: (?P<message>.+)$")

META_DRIVES = "drives: {part: intel-p4600-1.6tb, count: 12}\n        raid_groups:\n          - {count: 6"

# case: (text in the EDR topology, its replacement, YAML path, message fragment, text on the expected line)
CASES = {
    # A discriminated union's tag (filesystem.kind) is located at the tag's own key and line, in
    # the file's words (until session 33: at filesystem's line, as pydantic's text of the value).
    "unknown file-system kind": (
        "  kind: beegfs\n",
        "  kind: lustre\n",
        "filesystem.kind",
        "unknown kind 'lustre'",
        "kind: lustre",
    ),
    "file-system kind null": ("  kind: beegfs\n", "  kind:\n", "filesystem.kind", "got nothing (null)", "  kind:\n"),
    "file-system kind a list": (
        "  kind: beegfs\n",
        "  kind: [beegfs]\n",
        "filesystem.kind",
        "got a list",
        "kind: [beegfs]",
    ),
    "file-system kind missing": (
        "  kind: beegfs\n",
        "",
        "filesystem.kind",
        "missing required key 'kind'",
        "filesystem:\n  version",
    ),
    "file system not a mapping": (
        "filesystem:\n  kind: beegfs\n",
        "filesystem: 5\nfs:\n  kind: beegfs\n",
        "filesystem",
        "expected a mapping of keys to values, got a number (5)",
        "filesystem: 5",
    ),
    # A literal beyond Python's 4300 digits, or one its explicit tag cannot make: no interpreter
    # advice, no tag URI, and not every digit repeated.
    "huge integer": (
        "  num_targets: 3\n",
        "  num_targets: " + "9" * 5000 + "\n",
        "filesystem.num_targets",
        "cannot read '99999999999999999999'... (5000 characters) as !!int: too large a number",
        "num_targets:",
    ),
    "huge integer with separators": (
        "  num_targets: 3\n",
        "  num_targets: " + "1_" * 4400 + "1\n",
        "filesystem.num_targets",
        "(8801 characters) as !!int: too large a number",
        "num_targets:",
    ),
    "explicit tag": (
        "  chunk_size: 2 MiB\n",
        "  chunk_size: !!int 2 MiB\n",
        "filesystem.chunk_size",
        "cannot read '2 MiB' as !!int: not a whole number",
        "chunk_size:",
    ),
    "null overrides": (
        META_DRIVES,
        META_DRIVES.replace("count: 12}", "count: 12, overrides: null}"),
        "servers[1].numa[0].pcie_switches[0].drives.overrides",
        "expected a mapping of keys to values, got nothing (null)",
        "overrides: null",
    ),
    "malformed YAML": ("name: beegfs-edr-2019", "name: [beegfs-edr-2019", "", "malformed YAML", "title:"),
    "unknown key": (
        "  chunk_size: 2 MiB",
        "  chunk_size: 2 MiB\n  chunksize: 2 MiB",
        "filesystem.chunksize",
        "unknown key 'chunksize'",
        "chunksize:",
    ),
    "unknown server part": (
        "    part: poweredge-r640",
        "    part: poweredge-r64",
        "servers[0].part",
        "unknown server part 'poweredge-r64'",
        "part: poweredge-r64\n",
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
    "a drive faster than its own link": (
        META_DRIVES,
        META_DRIVES.replace("count: 12}", "count: 12, overrides: {seq_read: 100 GB/s}}"),
        "servers[1].numa[0].pcie_switches[0].drives",
        "seq_read 100 GB/s is above what its own pcie3 x4 interface carries (3.94 GB/s)",
        "seq_read: 100 GB/s",
    ),
    "a quoted fraction": (
        "    value: 0.99",
        "    value: '0.99'",
        "filesystem.capacity_efficiency.value",
        "expected a number, got text ('0.99'); write it without quotes",
        "value: '0.99'",
    ),
    "a billion RAID members": (
        "{count: 6, level: 1, members: 2,",
        "{count: 6, level: 1, members: 1000000000,",
        "servers[1].numa[0].raid_groups[0].members",
        "must be at most 100000",
        "members: 1000000000",
    ),
    "a latency no hardware has": (
        META_DRIVES,
        META_DRIVES.replace("count: 12}", "count: 12, overrides: {read_latency: 1e307 s}}"),
        "servers[1].numa[0].pcie_switches[0].drives.overrides.read_latency",
        "outside what pfssim can simulate",
        "read_latency: 1e307",
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
    "a chunk size in decimal megabytes": (
        "  chunk_size: 2 MiB",
        "  chunk_size: 2 MB",
        "filesystem.chunk_size",
        "got 2 MB; 2 MB is 2,000,000 bytes (kB, MB and GB count in powers of 1000): the power of two is written 2 MiB",
        "chunk_size: 2 MB",
    ),
    "a parity stripe unit in decimal kilobytes": (
        "{count: 3, level: 0, members: 4, stripe_unit: 512 KiB, filesystem: xfs}",
        "{count: 3, level: 10, members: 4, stripe_unit: 256 KB, filesystem: xfs}",
        "templates.r740xd-nvme.numa[0].raid_groups[0].stripe_unit",
        "got 250 KiB; 256 KB is 256,000 bytes (kB, MB and GB count in powers of 1000): the power of two is written",
        "stripe_unit: 256 KB",
    ),
    "a stripe unit in decimal kilobytes, not whole KiB": (
        "{count: 3, level: 0, members: 4, stripe_unit: 512 KiB, filesystem: xfs}",
        "{count: 3, level: 0, members: 4, stripe_unit: 64 KB, filesystem: xfs}",
        "templates.r740xd-nvme.numa[0].raid_groups[0].stripe_unit",
        "got 64 kB; 64 KB is 64,000 bytes (kB, MB and GB count in powers of 1000): the power of two is written 64",
        "stripe_unit: 64 KB",
    ),
    "chunk size below BeeGFS's minimum": (
        "  chunk_size: 2 MiB",
        "  chunk_size: 1 B",
        "filesystem.chunk_size",
        "power of two of at least 64 KiB",
        "chunk_size: 1 B",
    ),
    "chunk size beyond BeeGFS's 32 bits": (
        "  chunk_size: 2 MiB",
        "  chunk_size: 4 GiB",
        "filesystem.chunk_size",
        "stored in 32 bits: at most 2 GiB",
        "chunk_size: 4 GiB",
    ),
    "more stripe targets than BeeGFS allows": (
        "  num_targets: 3",
        "  num_targets: 1000",
        "filesystem.num_targets",
        "must be at most 256",
        "num_targets: 1000",
    ),
    "capacity efficiency above 1": (
        "    value: 0.99",
        "    value: 1.5",
        "filesystem.capacity_efficiency.value",
        "must be at most 1",
        "value: 1.5",
    ),
    "HCA cabled to no switch": (
        "{part: connectx4-edr, switch: cluster-fabric}",
        "{part: connectx4-edr, switch: []}",
        "clients[0].hcas[0].switch",
        "needs at least one entry",
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
    "stripe unit below mdadm's 4 KiB": (
        "{count: 3, level: 0, members: 4, stripe_unit: 512 KiB",
        "{count: 3, level: 0, members: 4, stripe_unit: 1 B",
        "templates.r740xd-nvme.numa[0].raid_groups[0].stripe_unit",
        "at least 4 KiB, as mdadm requires",
        "stripe_unit: 1 B",
    ),
    "RAID5 stripe unit not a power of two": (
        "{count: 3, level: 0, members: 4, stripe_unit: 512 KiB",
        "{count: 4, level: 5, members: 3, stripe_unit: 384 KiB",
        "templates.r740xd-nvme.numa[0].raid_groups[0].stripe_unit",
        "RAID5 needs a power-of-two stripe unit",
        "stripe_unit: 384 KiB",
    ),
    "drives left over without spares": (
        "{count: 3, level: 0, members: 4, stripe_unit: 512 KiB",
        "{count: 2, level: 0, members: 4, stripe_unit: 256 KiB",
        "templates.r740xd-nvme.numa[0].raid_groups",
        "4 drives in no RAID group but 0 spares (`spares:`, 0 when not given); declare spares: 4",
        "raid_groups:",
    ),
    "HDR HCA on an EDR switch": (
        "{part: connectx4-edr, switch: cluster-fabric}",
        "{part: connectx6-hdr, switch: cluster-fabric}",
        "clients[0].hcas[0]",
        "cluster-fabric's fastest ports are edr (12.4 GB/s), slower than the hdr link (24.8 GB/s)",
        "connectx6-hdr",
    ),
    "HDR inter-switch link between EDR switches": (
        "count: 24, link: edr}",
        "count: 1, link: hdr}",
        "network.links[0].link",
        "give link: edr",
        "link: hdr}",
    ),
    "a worker count beyond any server": (
        "workers: {meta: 24, storage: 32}",
        "workers: {meta: 24, storage: 1000000000000000000}",
        "filesystem.workers.storage",
        "must be at most 100000",
        "workers: {meta: 24",
    ),
    "a connection limit beyond any client": (
        "client: 24}",
        "client: 1000000000000000000}",
        "filesystem.conn_max_internode.client",
        "must be at most 100000",
        "conn_max_internode:",
    ),
    "a service on no interface": (
        "- {kind: beegfs-mgmt}",
        "- {kind: beegfs-mgmt, interfaces: []}",
        "servers[0].services[0].interfaces",
        "needs at least one entry",
        "kind: beegfs-mgmt",
    ),
    "a RAID level written as a fraction": (
        "{count: 6, level: 1, members: 2,",
        "{count: 6, level: 1.0, members: 2,",
        "servers[1].numa[0].raid_groups[0].level",
        "write the RAID level as a whole number (0, 1, 5, 6 or 10), got 1.0",
        "level: 1.0",
    ),
    "a part named with a dot": (
        "  - name: client{i}",
        "  - name: client.{i}",
        "clients[0].name",
        "may not contain '.', which joins the dotted names of parts",
        "name: client.{i}",
    ),
    "a part named with an arrow": (
        "  - name: client{i}",
        "  - name: client->{i}",
        "clients[0].name",
        "may not contain '->', which names a pool between two parts",
        "name: client->{i}",
    ),
    "too few drives": (
        "{count: 6, level: 1, members: 2,",
        "{count: 7, level: 1, members: 2,",
        "servers[1].numa[0].raid_groups[0]",
        "the RAID groups take 14 drives up to this entry (7 x 2 members here, dealt after those listed before it), "
        "but the zone's drives (its own drives: and its PCIe switches') number 12",
        "count: 7",
    ),
    # The template's zone entry counted three times: three NUMA zones (one a socket) on the two-socket
    # R740xd. Its Platinum 8268 scales to eight sockets, so only the chassis can refuse it.
    "more NUMA zones than the chassis has sockets": (
        "      - count: 2\n        hcas:",
        "      - count: 3\n        hcas:",
        "templates.r740xd-nvme.numa",
        "3 NUMA zones but the Dell EMC PowerEdge R740xd (2U, 24x NVMe configuration) has 2 sockets",
        "numa:\n      - count: 3",
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


def _located(result) -> list[re.Match]:  # noqa: ANN001 - a CliResult
    """The located problem lines of a run that must have refused its input (exit 2, no traceback)."""
    assert result.code == 2, result.stdout
    assert "Traceback" not in result.stdout + result.stderr
    return [m for m in map(LOCATED.match, result.stdout.splitlines()) if m]


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


def test_a_parts_section_problem_is_told_once(bad_topology) -> None:
    # The catalogue reads a topology's own parts and says what is wrong with them; the schema's
    # view of the same entries said each one a second time, as Python's type names (a fuzz review).
    for section, message in (
        ("parts: {drives: []}\n", "must map part names to their fields"),
        ("parts: {drives: {x: null}}\n", "expected a mapping of keys to values, got nothing (null)"),
    ):
        path = bad_topology("filesystem:\n", section + "filesystem:\n")
        problems = _located(run_cli("validate", str(path)))
        assert len(problems) == 1, [m.group(0) for m in problems]
        assert problems[0]["message"].startswith(message)


def test_a_service_given_no_targets_is_told_to_give_some(tmp_path) -> None:
    # An empty list is refused at the list itself; the metadata-count check once answered it with
    # "set count: 0", which the schema refuses in turn.
    path = _variant(tmp_path, "beegfs-high-capacity", [('targets: ["me4024-0.vd[0-5]"]', "targets: []")])
    problems = _located(run_cli("validate", str(path)))
    assert [(m["path"], int(m["line"])) for m in problems] == [
        ("servers[1].services[0].targets", _line_of(path.read_text(), "targets: []"))
    ]
    assert problems[0]["message"] == "needs at least one entry"


@pytest.mark.parametrize(
    ("catalogue", "old", "new", "topology", "fragment"),
    [
        # 100 GB/s of data over a link that signals 100 Gb/s: eight times what it can carry.
        ("network.yaml", 'rate: "12.4 GB/s"', 'rate: "100 GB/s"', "beegfs-edr-2019", "above the signalling rate"),
        # A 1-byte drive in a RAID group of 512 KiB stripe units.
        ("drives.yaml", 'capacity: "12 TB"', 'capacity: "1 B"', "pixstor-large", "larger than a whole member drive"),
    ],
)
def test_parts_that_cannot_exist_are_refused(
    tmp_path, catalogue: str, old: str, new: str, topology: str, fragment: str
) -> None:
    path = _variant(tmp_path, topology, [])
    parts = tmp_path / "parts" / catalogue
    parts.write_text(parts.read_text().replace(old, new, 1))
    problems = _located(run_cli("validate", str(path)))
    assert any(fragment in m["message"] for m in problems), [m.group(0) for m in problems]
    # The part's own problem, not an "unknown part" at every part that names it as well.
    assert not any("unknown" in m["message"] for m in problems), [m.group(0) for m in problems]


def test_a_read_ahead_larger_than_the_cache_for_it_is_refused(tmp_path) -> None:
    # An ME4084 controller has 8 GiB of cache, half of it for read-ahead.
    path = _variant(
        tmp_path,
        "pixstor-large",
        [("    part: powervault-me4084\n", "    part: powervault-me4084\n    read_ahead: 100 TiB\n")],
    )
    problems = _located(run_cli("validate", str(path)))
    assert [(m["path"], int(m["line"])) for m in problems] == [
        ("enclosures[0].read_ahead", _line_of(path.read_text(), "read_ahead: 100 TiB"))
    ]
    assert "does not fit in the 4 GiB" in problems[0]["message"], problems[0]["message"]
    ok = _variant(
        tmp_path / "ok",
        "pixstor-large",
        [("    part: powervault-me4084\n", "    part: powervault-me4084\n    read_ahead: 32 MiB\n")],
    )
    assert run_cli("validate", str(ok)).code == 0


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
    lines = _located(result)
    assert len(lines) == 1, result.stdout  # one line for the declaration, not one per target
    assert "3 targets (storage5.numa0.target0, storage5.numa0.target1, storage5.numa0.target2)" in lines[0]["message"]
    assert "cannot be reached from 32 of 32 clients (first: 'client1')" in lines[0]["message"]
    assert lines[0]["file"] == str(topology)
    assert lines[0]["path"] == "servers[3].numa[0].raid_groups[0]"
    assert int(lines[0]["line"]) == _line_of(
        text, "raid_groups: [{count: 3, level: 0, members: 4, stripe_unit: 512 KiB}]"
    )


def test_unknown_cpu_is_located_at_its_key(tmp_path) -> None:
    topology = _variant(tmp_path, "pixstor-large-expansion", [("cpu: xeon-gold-6148", "cpu: xeon-gold-614")])
    lines = _located(run_cli("validate", str(topology)))
    assert [(m["path"], int(m["line"])) for m in lines] == [
        ("clients[1].cpu", _line_of(topology.read_text(), "cpu: xeon-gold-614\n"))
    ], lines
    assert "unknown cpu part 'xeon-gold-614'" in lines[0]["message"]


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


def test_show_refuses_a_default_suite_it_cannot_find(bad_topology) -> None:
    # show listed a misspelt workload as the default suite, while run and validate refused it.
    old = "benchmarks: [beegfs-hp-iozone-seq, beegfs-hp-iozone-random]"
    topology = bad_topology(old, old.replace("iozone-seq", "iozone-sequential"))
    for command in (["show"], ["show", "--json"], ["validate"]):
        result = run_cli(*command, str(topology))
        assert result.code == 2, command
        text = result.stderr if command[0] == "show" else result.stdout
        assert "benchmarks[0]: unknown workload 'beegfs-hp-iozone-sequential'" in text, text
        assert command[0] != "show" or result.stdout == ""


def test_a_switch_with_an_unknown_part_is_reported_once(bad_topology) -> None:
    # It was "unknown switche part", followed by an "unknown switch" line for every HCA and link
    # bundle cabled to the switch that had been declared.
    old = "{name: storage-switch, part: mellanox-sb7890}"
    topology = bad_topology(old, old.replace("sb7890", "sb7899"))
    result = run_cli("validate", str(topology))
    assert result.code == 2
    (line,) = result.stdout.strip().splitlines()
    assert "network.switches[0].part: unknown switch part 'mellanox-sb7899' (known: " in line, line


def test_a_template_with_too_few_drives_is_reported_once_with_what_it_needs(bad_topology) -> None:
    # The storage template of the 2019 system, built six times: one line, saying how many drives
    # the groups take (it said "needs drive slot 8 but storage1.numa0 has only 8 drives", a line
    # per zone built from the template).
    old = "drives: {part: intel-p4600-1.6tb, count: 12}"
    topology = bad_topology(old, old.replace("12}", "8}"))
    result = run_cli("validate", str(topology))
    assert result.code == 2
    lines = [line for line in result.stdout.splitlines() if line.strip()]
    template = [line for line in lines if ".templates." in line or " templates." in line]
    assert len(template) == 1, lines
    assert "the RAID groups take 12 drives up to this entry (3 x 4 members here" in template[0]
    assert template[0].endswith("but the zone's drives (its own drives: and its PCIe switches') number 8")


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
        # One power of two past mmcrfs's largest, 16M.
        ("block_size: 8 MiB", "block_size: 32 MiB", "filesystem.block_size", "not a block size mmcrfs accepts"),
        (
            "subblocks_per_block: 512",
            "subblocks_per_block: 7",
            "filesystem.subblocks_per_block",
            "an 8 MiB block has 32 subblocks (file systems formatted before Spectrum Scale 5.0) or 512",
        ),
        ("inode_size: 4 KiB", "inode_size: 3 KiB", "filesystem.inode_size", "512, 1024 or 4096"),
        ("metadata_replicas: 2", "metadata_replicas: 4", "filesystem.metadata_replicas", "must be at most 3"),
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


def test_the_largest_gpfs_block_is_accepted(tmp_path) -> None:
    # mmcrfs: "Block size must be 64K, 128K, 256K, 512K, 1M, 2M, 4M, 8M or 16M." 16 MiB loads with
    # its 32 subblocks (formatted before Scale 5.0) or 1024 of 16 KiB (5.x); 32 MiB is refused in
    # test_impossible_gpfs_settings_are_located.
    for count in (32, 1024):
        (tmp_path / str(count)).mkdir()
        topology = _variant(
            tmp_path / str(count),
            "pixstor-large",
            [
                ("block_size: 8 MiB", "block_size: 16 MiB"),
                ("subblocks_per_block: 512", f"subblocks_per_block: {count}"),
            ],
        )
        result = run_cli("validate", str(topology))
        assert (result.code, result.stdout) == (0, f"{topology}: ok\n")


@pytest.mark.parametrize(
    ("block", "count", "said"),
    [
        ("256 KiB", 512, "a 256 KiB block has 32 subblocks of 8 KiB in every Spectrum Scale version, not 512"),
        ("16 MiB", 512, "or 1024 (5.0 and later, which choose 16 KiB subblocks for it), not 512"),
        ("64 KiB", 64, "a 64 KiB block has 32 subblocks of 2 KiB in every Spectrum Scale version, not 64"),
    ],
)
def test_a_gpfs_subblock_count_scale_would_not_choose_is_refused(tmp_path, block: str, count: int, said: str) -> None:
    # Scale chooses the subblock for the block size (32 per block before 5.0; 5.x: 2 KiB at 64 KiB,
    # 4 KiB at 128 KiB, 8 KiB to 4 MiB, 16 KiB at 8 and 16 MiB). Any count that divided the block
    # was taken: a 256 KiB block of 512-byte subblocks (a GPFS specialist's review).
    topology = _variant(
        tmp_path,
        "pixstor-large",
        [("block_size: 8 MiB", f"block_size: {block}"), ("subblocks_per_block: 512", f"subblocks_per_block: {count}")],
    )
    (line,) = _located(run_cli("validate", str(topology)))
    assert line["path"] == "filesystem.subblocks_per_block" and said in line["message"], line.group(0)


@pytest.mark.parametrize(
    ("new", "key", "fragment"),
    [
        # 4 x 20 members fill 80 of the 84 slots, the same as 8 x 10: only the group's size is wrong.
        (
            "{count: 4, level: 6, members: 20, interleave: 2, stripe_unit: 512 KiB}",
            "members",
            "an ME4 linear disk group of RAID6 has at most 16 members",
        ),
        (
            "{count: 8, level: 6, members: 10, interleave: 2, stripe_unit: 16 MiB}",
            "stripe_unit",
            "an ME4 controller stripes with units of at most 512 KiB",
        ),
        # RAID5 9+1: nine data disks, which a 512 KiB unit cannot serve evenly (session 34's what-if).
        (
            "{count: 8, level: 5, members: 10, interleave: 2, stripe_unit: 512 KiB}",
            "stripe_unit",
            "stripes a RAID5 group of 9 data disks (not a power of two) with 64 KiB units",
        ),
    ],
)
def test_me4_disk_groups_beyond_what_the_array_builds_are_refused(tmp_path, new: str, key: str, fragment: str) -> None:
    # Session 24's architect built both and pfssim ran them (Dell's guide caps linear groups at 16
    # disks and names 512 KB as the controllers' largest stripe unit).
    old = "{count: 8, level: 6, members: 10, interleave: 2, stripe_unit: 512 KiB}"
    topology = _variant(tmp_path, "pixstor-large", [(old, new)])
    lines = _located(run_cli("validate", str(topology)))
    assert [m["path"] for m in lines] == [f"enclosures[0].raid_groups[0].{key}"], lines
    assert fragment in lines[0]["message"]
    assert int(lines[0]["line"]) == _line_of(topology.read_text(), new)


def test_me4_limits_hold_for_mirrors_and_expansions(tmp_path) -> None:
    # An ME4024 RAID1 of 4 (a mirror is 2 disks on the ME4) and an ME484 expansion's 20-member
    # RAID6 are refused where they are written; the groups after a refused one are dealt their own
    # slots (no echo about unused drives).
    mirror = "{count: 12, level: 1, members: 2, interleave: 12, stripe_unit: 512 KiB, role: metadata}"
    wide = "        - {count: 8, level: 6, members: 10, interleave: 2, stripe_unit: 512 KiB}"
    topology = _variant(
        tmp_path,
        "pixstor-large-expansion",
        [
            (mirror, mirror.replace("count: 12", "count: 6").replace("members: 2", "members: 4")),
            (wide, wide.replace("count: 8", "count: 4").replace("members: 10", "members: 20")),
        ],
    )
    lines = _located(run_cli("validate", str(topology)))
    assert [m["path"] for m in lines] == [
        "enclosures[0].expansion.raid_groups[0].members",
        "enclosures[1].raid_groups[0].members",
    ], lines
    assert "RAID6 has at most 16 members" in lines[0]["message"]
    assert "RAID1 has at most 2 members" in lines[1]["message"]


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
    assert "has no SAS cable to me4084-0 (add the enclosure to the server's sas: list)" in result.stdout, result.stdout


def test_nsd_servers_without_cables_are_one_problem_each_at_the_entry(tmp_path) -> None:
    # A fuzz review: an NSD entry naming the metadata servers for the data LUNs gave 64 lines (one per
    # LUN and controller), all at the first RAID group; the mistake is one per server, in the entry.
    data = '{luns: "me4084-*.vd*", usage: data, servers: [storage0, storage1]}'
    topology = _variant(tmp_path, "pixstor-large", [(data, data.replace("storage0, storage1", "hdmd0, hdmd1"))])
    lines = _located(run_cli("validate", str(topology)))
    cabling = [m for m in lines if "no SAS cable" in m["message"]]
    assert [m["path"] for m in cabling] == ["filesystem.nsds[0].servers[0]", "filesystem.nsds[0].servers[1]"], lines
    assert "hdmd0.nsd on hdmd0 serves 32 targets" in cabling[0]["message"]
    assert "no SAS cable to me4084-0, me4084-1, me4084-2 and 1 more (add the enclosures" in cabling[0]["message"]


def test_an_hdd_seek_below_track_to_track_is_refused(tmp_path) -> None:
    # avg_seek under the model's track-to-track seek made the seek curve's slope negative.
    old = "drives: {part: nl-sas-12tb-7200, count: 84}"
    new = "drives: {part: nl-sas-12tb-7200, count: 84, overrides: {avg_seek: 0.01 ms}}"
    topology = _variant(tmp_path, "beegfs-high-capacity", [(old, new)])
    result = run_cli("validate", str(topology))
    assert result.code == 2 and "not above the 0.5 ms track-to-track seek" in result.stdout, result.stdout


@pytest.mark.parametrize(
    "topology,old,overrides,message",
    [
        # A sequential latency above the random one is a swapped pair, not a drive.
        (
            "beegfs-edr-2019",
            "drives: {part: intel-p4600-1.6tb, count: 12}",
            "{seq_read_latency: 90 us}",
            "seq_read_latency 90 us is above read_latency 85 us; a sequential access is served at least as fast",
        ),
        # An override of the random latency alone keeps the part's sequential one, which says so.
        (
            "beegfs-edr-2019",
            "drives: {part: intel-p4600-1.6tb, count: 12}",
            "{write_latency: 10 us}",
            "seq_write_latency 13 us is above write_latency 10 us; a sequential access is served at least as fast "
            "as a random one (are the two swapped? an override of write_latency alone keeps the part's "
            "seq_write_latency: give both)",
        ),
        # A buffer larger than the drive is a unit slip, not a drive.
        (
            "beegfs-edr-2019",
            "drives: {part: intel-p4600-1.6tb, count: 12}",
            "{write_buffer: 10 TB}",
            "write_buffer 9.095 TiB is above the drive's capacity (1.455 TiB)",
        ),
        # An HDD's access times come from its mechanics: SSD-only figures are refused, not ignored.
        (
            "beegfs-high-capacity",
            "drives: {part: nl-sas-12tb-7200, count: 84}",
            "{write_buffer: 64 MiB}",
            "write_buffer applies to SSDs only",
        ),
    ],
)
def test_ssd_access_figures_are_checked(tmp_path, topology: str, old: str, overrides: str, message: str) -> None:
    new = old[:-1] + f", overrides: {overrides}}}"
    path = _variant(tmp_path, topology, [(old, new)])
    result = run_cli("validate", str(path))
    assert result.code == 2 and message in result.stdout, result.stdout
    line = next(i for i, text in enumerate(path.read_text().splitlines(), 1) if overrides in text)
    assert f"{path.name}:{line} " in result.stdout, result.stdout


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
    # 8 x 11 drives do not fit in an 84-slot ME4084: one line says so for the four enclosures of the
    # declaration (it was a line per enclosure), and the drives left over are not reported again as
    # "in no RAID group". (Nine data disks take 64 KiB stripe units on an ME4.)
    old = "{count: 8, level: 6, members: 10, interleave: 2, stripe_unit: 512 KiB}"
    new = old.replace("members: 10", "members: 11").replace("512 KiB", "64 KiB")
    topology = _variant(tmp_path, "beegfs-high-capacity", [(old, new)])
    result = run_cli("validate", str(topology))
    assert result.code == 2
    assert result.stdout.count("the RAID groups take 88 drives up to this entry") == 1, result.stdout
    assert result.stdout.count("but the enclosure's drives: declares 84") == 1
    assert "in no RAID group" not in result.stdout


MGMT = "      - {kind: beegfs-mgmt}\n"


@pytest.mark.parametrize(
    ("new", "path", "marker", "fragment"),
    [
        ("", "servers", "servers:\n", "no beegfs-mgmt service is declared"),
        (
            MGMT + MGMT.replace("}", ", interfaces: all}"),
            "servers[0].services[1]",
            "interfaces: all",
            "2 beegfs-mgmt services are declared (on mgmt)",
        ),
        ("      - {kind: beegfs-mgmt, count: 2}\n", "servers[0].services[0]", "count: 2}", "2 beegfs-mgmt services"),
    ],
    ids=["none", "two", "count 2"],
)
def test_beegfs_needs_exactly_one_management_service(tmp_path, new: str, path: str, marker: str, fragment: str) -> None:
    old = "    services:\n" + MGMT
    topology = _variant(tmp_path, "beegfs-edr-2019", [(old, "    services:\n" + new if new else "")])
    text = topology.read_text()
    lines = _located(run_cli("validate", str(topology)))
    assert len(lines) == 1, lines
    m = lines[0]
    assert fragment in m["message"]
    assert "exactly one management daemon (beegfs-mgmtd)" in m["message"]
    assert (m["file"], m["path"], int(m["line"])) == (str(topology), path, _line_of(text, marker))


def test_a_second_management_service_on_another_server(tmp_path) -> None:
    meta0 = "  - name: meta0\n    template: r740-meta\n    services:\n"
    topology = _variant(tmp_path, "beegfs-high-capacity", [(meta0, meta0 + MGMT)])
    lines = _located(run_cli("validate", str(topology)))
    assert [m["path"] for m in lines] == ["servers[1].services[0]"]
    assert "2 beegfs-mgmt services are declared (on mgmt, meta0)" in lines[0]["message"]
    assert int(lines[0]["line"]) == _line_of(topology.read_text(), meta0) + 3


@pytest.mark.parametrize(
    ("servers", "path", "fragment"),
    [
        ("[storage0, storage1, storage0]", "filesystem.nsds[0].servers[2]", "storage0 is listed twice"),
        ("[storage0, storage0]", "filesystem.nsds[0].servers[1]", "storage0 is listed twice (first at servers[0])"),
        (
            "[storage0, storage1, " + ", ".join(f"spare{i}" for i in range(7)) + "]",
            "filesystem.nsds[0].servers",
            "9 NSD servers listed, but GPFS takes at most 8 per NSD",
        ),
    ],
    ids=["third", "second", "nine"],
)
def test_nsd_server_lists_are_checked(tmp_path, servers: str, path: str, fragment: str) -> None:
    spares = "  - name: spare{i}\n    count: 7\n    template: r750-sas\n"
    topology = _variant(
        tmp_path,
        "pixstor-large",
        [
            ("servers: [storage0, storage1]}", f"servers: {servers}}}"),
            ("  - name: hdmd{i}\n", spares + "  - name: hdmd{i}\n"),
        ],
    )
    lines = _located(run_cli("validate", str(topology)))
    assert len(lines) == 1, lines
    m = lines[0]
    assert fragment in m["message"]
    assert (m["file"], m["path"], int(m["line"])) == (str(topology), path, _line_of(topology.read_text(), servers))


def test_a_beegfs_service_cannot_serve_another_servers_internal_drives(tmp_path) -> None:
    # meta's second zone also claims storage1's NVMe RAID0 groups (served by nobody else): they are
    # drives inside storage1, which this used to accept and simulate over a path that does not exist.
    storage = "  - name: storage{i}\n    count: 5\n    start: 1\n    template: r740xd-nvme\n"
    bare = (
        "  - name: storage1\n    part: poweredge-r740xd\n    numa:\n"
        "      - hcas: [{part: connectx5-edr, switch: storage-switch}]\n"
        "        pcie_switches: [{part: r740xd-nvme-switch, drives: {part: intel-p4600-1.6tb, count: 12}}]\n"
        "        raid_groups: [{count: 3, level: 0, members: 4, stripe_unit: 256 KiB}]\n"
        "  - name: storage{i}\n    count: 4\n    start: 2\n    template: r740xd-nvme\n"
    )
    meta_storage = "          - {kind: beegfs-storage, count: 3}\n"
    claim = '          - {kind: beegfs-storage, targets: ["storage1.numa0.target*"]}\n'
    topology = _variant(tmp_path, "beegfs-edr-2019", [(storage, bare), (meta_storage, meta_storage + claim)])
    lines = _located(run_cli("validate", str(topology)))
    assert len(lines) == 1, lines
    m = lines[0]
    assert m["path"] == "servers[1].numa[1].services[1].targets"
    assert int(m["line"]) == _line_of(topology.read_text(), claim.strip())
    assert m["file"] == str(topology)
    assert "beegfs-storage on meta serves 3 RAID groups (storage1.numa0.target0" in m["message"]
    assert "inside server storage1, whose internal drives meta cannot reach" in m["message"]


def test_an_nsd_server_cannot_serve_another_servers_internal_drives(tmp_path) -> None:
    # nvme0's own NVMe RAID0 is an NSD whose server list also names storage0, which has no access to it.
    nvme0 = (
        "  - name: nvme0\n    part: poweredge-r750\n    numa:\n"
        "      - hcas: [{part: connectx6-hdr, switch: ib0}, {part: connectx6-hdr, switch: ib1}]\n"
        "        drives: {part: intel-p4600-1.6tb, count: 4}\n"
        "        raid_groups: [{level: 0, members: 4, stripe_unit: 512 KiB}]\n"
    )
    metadata = '    - {luns: "me4024-*.vd*", usage: metadata, servers: [hdmd0, hdmd1]}\n'
    entry = '    - {luns: "nvme0.*", usage: data, servers: [nvme0, storage0]}\n'
    topology = _variant(
        tmp_path,
        "pixstor-large",
        [("  - name: hdmd{i}\n", nvme0 + "  - name: hdmd{i}\n"), (metadata, metadata + entry)],
    )
    lines = _located(run_cli("validate", str(topology)))
    assert len(lines) == 1, lines
    m = lines[0]
    assert (m["file"], m["path"]) == (str(topology), "filesystem.nsds[2].servers[1]")
    assert int(m["line"]) == _line_of(topology.read_text(), entry.strip())
    assert "NSD server storage0 serves RAID group nvme0.numa0.target0 inside server nvme0" in m["message"]
    assert "needs local access" in m["message"]
    # Served from its own server only, the same NSD is fine.
    fixed = _variant(
        tmp_path / "fixed",
        "pixstor-large",
        [
            ("  - name: hdmd{i}\n", nvme0 + "  - name: hdmd{i}\n"),
            (metadata, metadata + entry.replace(", storage0", "")),
        ],
    )
    assert run_cli("validate", str(fixed)).code == 0


def test_unreachable_nsds_are_reported_once_per_entry(tmp_path) -> None:
    # The data NSD servers' ports go to a switch no client is on: one line for the nsds entry with
    # counts, not one per LUN (32) and client (16).
    topology = _variant(
        tmp_path,
        "pixstor-large",
        [
            (
                "    - {name: ib1, part: mellanox-qm8700}\n",
                "    - {name: ib1, part: mellanox-qm8700}\n    - {name: island, part: mellanox-qm8700}\n",
            ),
            (
                "    template: r750-sas\n    role: NSD server (data)\n",
                "    template: r750-sas\n    role: NSD server (data)\n    numa:\n"
                "      - hcas: [{part: connectx6-hdr, switch: island}]\n        hbas: [{part: dell-hba355e}]\n"
                "      - hcas: [{part: connectx6-hdr, switch: island}]\n        hbas: [{part: dell-hba355e}]\n",
            ),
        ],
    )
    lines = _located(run_cli("validate", str(topology)))
    assert len(lines) == 1, lines
    m = lines[0]
    assert (m["file"], m["path"]) == (str(topology), "filesystem.nsds[0].servers")
    assert int(m["line"]) == _line_of(topology.read_text(), 'luns: "me4084-*.vd*"')
    assert "32 data NSDs of this entry (me4084-0.vd0, me4084-0.vd1, me4084-0.vd2 and 29 more)" in m["message"]
    assert "cannot be reached from 16 of 16 clients" in m["message"]
    assert (
        "none of the entry's NSD servers (storage0, storage1) has an HCA on a switch those clients reach"
        in m["message"]
    )


SPARE_TEMPLATE = (
    "  r740xd-spare:\n    part: poweredge-r740xd\n    numa:\n"
    "      - count: 2\n"
    "        hcas: [{part: connectx5-edr, switch: storage-swtich}]\n"
    "        pcie_switches: [{part: r740xd-nvme-switch, drives: {part: intel-p4600-1.6tb, count: 13}}]\n"
    "        raid_groups: [{count: 3, level: 0, members: 4, stripe_unit: 256 KiB}]\n"
    "        services: [{kind: beegfs-storage}]\n"
)


def test_an_unused_template_is_checked(tmp_path) -> None:
    # No server names r740xd-spare; its misspelt switch and its drives that do not fit the PCIe
    # switch used to pass unnoticed until the day a server used it.
    topology = _variant(tmp_path, "beegfs-edr-2019", [("servers:\n", SPARE_TEMPLATE + "servers:\n")])
    text = topology.read_text()
    lines = _located(run_cli("validate", str(topology)))
    assert [(m["file"], m["path"], int(m["line"])) for m in lines] == [
        (str(topology), "templates.r740xd-spare.numa[0].hcas[0].switch", _line_of(text, "storage-swtich")),
        (str(topology), "templates.r740xd-spare.numa[0].pcie_switches[0].drives.count", _line_of(text, "count: 13")),
    ]
    assert "unknown switch 'storage-swtich'" in lines[0]["message"]
    assert "13 drives but the switch has 12 ports" in lines[1]["message"]


def test_an_unused_template_without_mistakes_is_fine(tmp_path) -> None:
    # Keeping a template no server uses (a spare configuration) is not an error in itself.
    good = SPARE_TEMPLATE.replace("storage-swtich", "storage-switch").replace("count: 13", "count: 12")
    topology = _variant(tmp_path, "beegfs-edr-2019", [("servers:\n", good + "servers:\n")])
    result = run_cli("validate", str(topology))
    assert result.code == 0, result.stdout


def test_a_raid0_stripe_unit_need_not_be_a_power_of_two(bad_topology) -> None:
    # Linux md's RAID0 takes any whole-KiB chunk of at least 4 KiB; only RAID4/5/6/10 need a power of two.
    topology = bad_topology("stripe_unit: 512 KiB", "stripe_unit: 384 KiB")
    assert run_cli("validate", str(topology)).code == 0


def test_an_hca_with_its_link_overridden_to_the_switch_speed_is_accepted(bad_topology) -> None:
    topology = bad_topology(
        "{part: connectx4-edr, switch: cluster-fabric}",
        "{part: connectx6-hdr, switch: cluster-fabric, overrides: {link: edr}}",
    )
    assert run_cli("validate", str(topology)).code == 0


def test_drives_go_where_their_interface_plugs_in(tmp_path) -> None:
    """NVMe drives in an ME4084's SAS slots, and SAS disks on an NVMe PCIe switch, are refused."""
    nvme_in_me4 = _variant(tmp_path / "a", "pixstor-large", [("part: nl-sas-12tb-7200", "part: intel-p4600-1.6tb")])
    lines = _located(run_cli("validate", str(nvme_in_me4)))
    assert [(m["path"], int(m["line"])) for m in lines] == [
        ("enclosures[0].drives.part", _line_of(nvme_in_me4.read_text(), "part: intel-p4600-1.6tb"))
    ], lines
    assert "has a pcie3 interface, but an ME4 enclosure's drive slots are SAS" in lines[0]["message"]
    sas_on_pcie = _variant(
        tmp_path / "b", "beegfs-edr-2019", [("intel-p4600-1.6tb, count: 12", "nl-sas-12tb-7200, count: 12")]
    )
    lines = _located(run_cli("validate", str(sas_on_pcie)))
    assert lines[0]["path"] == "templates.r740xd-nvme.numa[0].pcie_switches[0].drives.part"
    assert "has a sas3 interface, but a PCIe switch's downstream ports take NVMe drives" in lines[0]["message"]


@pytest.mark.parametrize(
    ("ports", "hdr_clients", "taken"),
    [(14, 0, None), (13, 0, "take 14 ports"), (14, 1, "take 18 ports")],
    ids=["28 HDR100 fit 14 split ports", "not 13", "8 HDR cards take whole ports"],
)
def test_split_ports_carry_slower_links_only(tmp_path, ports: int, hdr_clients: int, taken: str | None) -> None:
    """A QM8790 port splits into two HDR100 ports; a full-speed HDR cable needs a whole one."""
    switch = "{name: ib, part: mellanox-qm8790}"
    override = f"{{name: ib, part: mellanox-qm8790, overrides: {{ports: {ports}, split_ports: {2 * ports}}}}}"
    client = "    hcas:\n      - {part: connectx6-hdr100, switch: ib}"
    replacements = [(switch, override)]
    if hdr_clients:
        replacements.append((client, client.replace("hdr100", "hdr")))
    topology = _variant(tmp_path, "beegfs-hdr100", replacements)
    result = run_cli("validate", str(topology))
    if taken is None:
        assert result.code == 0, result.stdout
        return
    lines = _located(result)
    assert [m["path"] for m in lines] == ["network.switches[0]"], result.stdout
    assert f"but it has {ports} ports" in lines[0]["message"] and taken in lines[0]["message"]


@pytest.mark.parametrize("side", ["client", "server"])
def test_a_pagepool_must_fit_in_memory(tmp_path, side: str) -> None:
    old = "pagepool: {client: 32 GiB, server: 96 GiB}"
    new = old.replace("32 GiB", "320 GiB") if side == "client" else old.replace("96 GiB", "960 GiB")
    topology = _variant(tmp_path, "pixstor-large", [(old, new)])
    lines = _located(run_cli("validate", str(topology)))
    assert [m["path"] for m in lines] == [f"filesystem.pagepool.{side}"], lines
    host = "c6230-0 (memory set at clients[0].memory)" if side == "client" else "storage0"
    assert "pagepool is more than 80% of the" in lines[0]["message"] and host in lines[0]["message"]


@pytest.mark.parametrize(("client", "refused"), [("153.6 GiB", False), ("154 GiB", True), ("190 GiB", True)])
def test_a_pagepool_above_80_percent_of_memory_is_refused(tmp_path, client: str, refused: bool) -> None:
    # Session 24's architect ran a 190 GiB pagepool on the 192 GiB clients; GPFS cannot pin more
    # than 80% of real memory (IBM message 6027-329), here 153.6 GiB.
    old = "pagepool: {client: 32 GiB, server: 96 GiB}"
    topology = _variant(tmp_path, "pixstor-large", [(old, old.replace("32 GiB", client))])
    result = run_cli("validate", str(topology))
    if not refused:
        assert result.code == 0, result.stdout
        return
    lines = _located(result)
    assert [m["path"] for m in lines] == ["filesystem.pagepool.client"], lines
    assert "cannot be more than 80% of real memory (153.6 GiB here" in lines[0]["message"]


def test_a_beegfs_metadata_service_has_one_target(tmp_path) -> None:
    topology = _variant(
        tmp_path, "beegfs-edr-2019", [("{kind: beegfs-meta, count: 6}", "{kind: beegfs-meta, count: 3}")]
    )
    lines = _located(run_cli("validate", str(topology)))
    assert len(lines) == 1 and lines[0]["path"].endswith(".count"), lines
    assert "6 metadata targets for 3 beegfs-meta services" in lines[0]["message"]
    assert "set count: 6" in lines[0]["message"]


@pytest.mark.parametrize(
    ("overrides", "fragment"),
    [("{split_ports: 80, split_link: null}", "go together"), ("{split_ports: 60}", "must be a multiple of ports (40)")],
)
def test_switch_split_ports_are_consistent(tmp_path, overrides: str, fragment: str) -> None:
    switch = "{name: ib, part: mellanox-qm8790}"
    topology = _variant(tmp_path, "beegfs-hdr100", [(switch, switch.replace("}", f", overrides: {overrides}}}"))])
    lines = _located(run_cli("validate", str(topology)))
    assert lines[0]["path"] == "network.switches[0].overrides" and fragment in lines[0]["message"], lines


HCA = "{part: connectx5-edr, switch: storage-switch}"
VOLUME = "{count: 3, level: 0, members: 4, stripe_unit: 512 KiB, filesystem: xfs}"
EDR_ZONE = "templates.r740xd-nvme.numa[0]"
EDR = "beegfs-edr-2019"
ME4084, ME484 = "    part: powervault-me4084\n", "      part: powervault-me484\n"


@pytest.mark.parametrize(
    ("system", "old", "new", "path", "fragment"),
    [
        (EDR, HCA, HCA[:-1] + ", overrides: {host: {bus: sas3, lanes: 1}}}", f"{EDR_ZONE}.hcas[0]", "into a PCIe slot"),
        (EDR, HCA, HCA[:-1] + ", overrides: {ports: 2}}", f"{EDR_ZONE}.hcas[0]", "pfssim cables one port per HCA"),
        (EDR, VOLUME, VOLUME[:-1] + ", owner: A}", f"{EDR_ZONE}.raid_groups[0].owner", "has no controllers"),
        (EDR, VOLUME, VOLUME.replace("xfs", "ntfs"), f"{EDR_ZONE}.raid_groups[0].filesystem", "'xfs'"),
        (
            "beegfs-high-capacity",
            ME4084,
            ME4084 + "    overrides: {io_modules: 2}\n",
            "enclosures[0].overrides",
            "io_modules describe an expansion enclosure",
        ),
        (
            "pixstor-large-expansion",
            ME484,
            ME484 + "      overrides: {array_seq_read: 9 GB/s}\n",
            "enclosures[0].expansion.overrides",
            "array_seq_read describes a controller enclosure",
        ),
    ],
    ids=[
        "HCA on SAS",
        "dual-port HCA",
        "owner in a server",
        "unknown local fs",
        "controller io_modules",
        "ME484 rates",
    ],
)
def test_fields_that_would_be_ignored_are_refused(
    tmp_path, system: str, old: str, new: str, path: str, fragment: str
) -> None:
    topology = _variant(tmp_path, system, [(old, new)])
    lines = _located(run_cli("validate", str(topology)))
    assert lines and lines[0]["path"] == path and fragment in lines[0]["message"], lines
    assert int(lines[0]["line"]) == _line_of(topology.read_text(), new.strip().splitlines()[-1])


def test_more_clients_than_threads_are_refused(tmp_path) -> None:
    old = "  - name: r840-{i}\n    count: 8\n"
    topology = _variant(tmp_path, "beegfs-hdr100", [(old, old.replace("count: 8", "count: 65530"))])
    lines = _located(run_cli("validate", str(topology)))
    assert [m["path"] for m in lines] == ["clients"] and "65,538 clients in all" in lines[0]["message"], lines


def test_a_misspelt_required_key_is_said_once_with_the_key_it_resembles(tmp_path) -> None:
    # A newcomer's walk-through: `cuont: 12` gave "missing required key 'count'" and "unknown key
    # 'cuont'" for each drive set. It is now one line at the misspelling; a key too far from any
    # missing one (or a misspelt optional key) is still only unknown.
    drives = "drives: {part: intel-p4610-3.2tb, count: 12}"
    typo = _variant(tmp_path, "beegfs-hdr100", [(drives, drives.replace("count", "cuont"))])
    lines = _located(run_cli("validate", str(typo)))
    assert [m["message"] for m in lines] == ["unknown key 'cuont' (did you mean 'count'? it is required)"]
    assert lines[0]["path"].endswith("drives.cuont")
    far = tmp_path / "far"
    far.mkdir()
    other = _variant(far, "beegfs-hdr100", [(drives, drives.replace("count", "quantity"))])
    messages = {m["message"] for m in _located(run_cli("validate", str(other)))}
    assert messages == {"unknown key 'quantity'", "missing required key 'count'"}


def test_a_misspelt_optional_key_is_told_the_key_it_resembles_there(tmp_path) -> None:
    # A misspelt optional key was only "unknown": the suggestion comes from the schema's keys at that
    # place (inside a list, a template's mapping, a discriminated union's member, a parts catalogue),
    # less those the mapping already has, and every problem of the file is listed in line order.
    hca = "{part: connectx6-hdr100, switch: ib}"
    typo = _variant(
        tmp_path,
        "beegfs-hdr100",
        [
            ("    memory: 192 GiB", "    memroy: 192 GiB"),  # a client's
            ("- {kind: beegfs-storage}", "- {kind: beegfs-storage, workerz: 3}"),  # a template's service
            ('  version: "7.2"', '  verison: "7.2"'),  # the filesystem's (a discriminated union)
            (hca, hca.replace("}", ", name: a, nmae: b}")),  # name is written: not suggested again
        ],
    )
    drives = tmp_path / "parts" / "drives.yaml"
    drives.write_text(drives.read_text().replace("    parallelism:", "    paralelism:", 1))
    lines = _located(run_cli("validate", str(typo)))
    found = {m["path"].rsplit(".", 1)[-1]: m["message"] for m in lines}
    assert found["memroy"] == "unknown key 'memroy' (did you mean 'memory'?)", lines
    assert found["workerz"] == "unknown key 'workerz' (did you mean 'workers'?)"
    assert found["verison"] == "unknown key 'verison' (did you mean 'version'?)"
    assert found["nmae"] == "unknown key 'nmae'"
    assert found["paralelism"] == "unknown key 'paralelism' (did you mean 'parallelism'?)"
    assert len(lines) == 5
    for file in {m["file"] for m in lines}:
        numbers = [int(m["line"]) for m in lines if m["file"] == file]
        assert numbers == sorted(numbers), lines
    # In a part's overrides, which are checked merged into the catalogue entry: every key of the
    # part is a candidate (a commit review found 'seq_wrte' told 'inner_seq_rate').
    drives = "drives: {part: intel-p4610-3.2tb, count: 12}"
    overridden = tmp_path / "overrides"
    overridden.mkdir()
    topology = _variant(overridden, "beegfs-hdr100", [(drives, drives[:-1] + ", overrides: {seq_wrte: 1.2 GB/s}}")])
    lines = _located(run_cli("validate", str(topology)))
    assert [m["message"] for m in lines] == ["unknown key 'seq_wrte' (did you mean 'seq_write'?)"], lines
    workload = tmp_path / "pixstor-iozone-seq.yaml"
    workload.write_text((ROOT / "workloads" / "pixstor-iozone-seq.yaml").read_text().replace("placement:", "placment:"))
    lines = _located(run_cli("validate", str(workload)))
    assert [m["message"] for m in lines] == ["unknown key 'placment' (did you mean 'placement'?)"]


def test_workload_and_topology_files_are_told_apart(tmp_path) -> None:
    from tests.conftest import ROOT

    workload = ROOT / "workloads" / "mdtest-pixstor-empty.yaml"
    result = run_cli("run", str(workload))
    assert result.code == 2 and "Traceback" not in result.stderr
    assert "this is a workload file (it has benchmark:), not a topology" in result.stderr
    assert "parts catalogue" not in result.stderr  # one finding, not the topology schema's echoes
    typo = _variant(tmp_path, "beegfs-hdr100", [("benchmarks:", "benchmark:")])
    lines = _located(run_cli("validate", str(typo)))  # a topology with one key mistyped is still a topology
    # Its misspelt required key is said once, with the key it resembles.
    messages = {m["message"] for m in lines}
    assert "unknown key 'benchmark' (did you mean 'benchmarks'? it is required)" in messages
    assert "missing required key 'benchmarks'" not in messages
    # A workload with a topology's section is told so at its first workload key, not searched for
    # the parts folder and the keys a topology needs (the fuzz review of session 31).
    text = workload.read_text()
    assert text.count("\nbenchmark: ") == 1
    mixed = tmp_path / "mixed.yaml"
    mixed.write_text(text.replace("\nbenchmark: ", "\nservers: []\nbenchmark: ", 1))
    lines = _located(run_cli("validate", str(mixed)))
    assert len(lines) == 1 and lines[0]["path"] == "benchmark", lines
    assert lines[0]["message"].startswith("this file has both a workload's keys (benchmark:, command:, ops:")
    assert lines[0]["message"].endswith("and a topology's (servers:); a workload and a topology are files of their own")


def test_every_target_pattern_must_match(tmp_path) -> None:
    old = 'targets: ["me4084-*.vd[0-3]"]'
    topology = _variant(tmp_path, "beegfs-high-capacity", [(old, 'targets: ["me4084-*.vd[0-3]", "me4048-*"]')])
    lines = _located(run_cli("validate", str(topology)))
    assert [(m["path"], m["message"]) for m in lines] == [
        ("servers[3].services[0].targets[1]", "no RAID group matches 'me4048-*'")
    ], lines


THREE_HCAS = "        hcas:\n" + ("          - " + HCA + "\n") * 3


@pytest.mark.parametrize(
    ("old", "new", "path", "fragment"),
    [
        (
            HCA,
            HCA[:-1] + ", overrides: {host: {bus: pcie3, lanes: 64}}}",
            f"{EDR_ZONE}.hcas[0].overrides.host",
            "not x64",
        ),
        ("        hcas:\n          - " + HCA + "\n", THREE_HCAS, EDR_ZONE, "take 64 PCIe lanes, but its CPU socket"),
        ("    part: poweredge-c6420\n", "    part: poweredge-c6420\n    cores: 41\n", "clients[0].cores", "have 40"),
    ],
    ids=["x64 card", "three x16 cards and an x16 switch on 48 lanes", "client cores"],
)
def test_pcie_lanes_and_cores_are_within_the_hardware(tmp_path, old: str, new: str, path: str, fragment: str) -> None:
    topology = _variant(tmp_path, EDR, [(old, new)])
    lines = _located(run_cli("validate", str(topology)))  # in line order: three HCAs also fill the switch
    assert any(m["path"] == path and fragment in m["message"] for m in lines), lines


def test_unserved_raid_groups_are_located_at_their_declaration(tmp_path) -> None:
    nsd = '    - {luns: "me4024-*.vd*", usage: metadata, servers: [hdmd0, hdmd1]}\n'
    topology = _variant(tmp_path, "pixstor-large", [(nsd, "")])
    lines = _located(run_cli("validate", str(topology)))
    assert [m["path"] for m in lines] == ["enclosures[1].raid_groups[0]"], lines
    message = lines[0]["message"]
    assert "me4024-0.vd0, me4024-0.vd1, me4024-0.vd2 and 9 more (role metadata) are served by no service" in message
    assert "an nsds entry whose luns match them" in message


def test_unreachable_metadata_targets_are_reported(bad_topology) -> None:
    # The metadata zone's port goes to a switch no client is on: its six MDTs are unreachable.
    topology = bad_topology(
        "    - {name: cluster-fabric, part: mellanox-cs7500}",
        "    - {name: cluster-fabric, part: mellanox-cs7500}\n    - {name: island, part: mellanox-sb7890}",
    )
    text = topology.read_text()
    old = "    numa:\n      - hcas:\n          - {part: connectx5-edr, switch: storage-switch}\n        pcie_switches:"
    assert text.count(old) == 1, "test fixture out of date"
    topology.write_text(text.replace(old, old.replace("storage-switch", "island")))
    lines = _located(run_cli("validate", str(topology)))
    assert len(lines) == 1, lines
    assert "6 targets (meta.numa0.mdt0" in lines[0]["message"]
    assert "cannot be reached from 32 of 32 clients" in lines[0]["message"]


def test_clients_that_cannot_reach_are_counted_apart_from_those_that_can(bad_topology) -> None:
    # Four of the 32 clients hang off a switch of their own: only they are reported, by name.
    topology = bad_topology(
        "    - {name: cluster-fabric, part: mellanox-cs7500}",
        "    - {name: cluster-fabric, part: mellanox-cs7500}\n    - {name: island, part: mellanox-sb7890}",
    )
    text = topology.read_text()
    old = (
        "    count: 32\n    start: 1\n    part: poweredge-c6420\n"
        "    hcas:\n      - {part: connectx4-edr, switch: cluster-fabric}\n"
    )
    assert text.count(old) == 1, "test fixture out of date"
    new = old.replace("count: 32", "count: 28") + (
        "  - name: lonely{i}\n    count: 4\n    part: poweredge-c6420\n"
        "    hcas:\n      - {part: connectx4-edr, switch: island}\n"
    )
    topology.write_text(text.replace(old, new))
    lines = _located(run_cli("validate", str(topology)))
    assert lines, "an island of clients must be reported"
    assert all("from 4 of 32 clients (first: 'lonely0')" in m["message"] for m in lines), lines


def test_server_memory_from_a_template_or_its_entry_is_used(tmp_path) -> None:
    """memory: may be set in a template and overridden in the entry that uses it (both valid); a
    server memory too small for the 96 GiB server pagepool is refused at the line that set it."""
    fine = _variant(
        tmp_path / "fine",
        "pixstor-large",
        [("    part: poweredge-r750\n", "    part: poweredge-r750\n    memory: 384 GiB\n")],
    )
    assert run_cli("validate", str(fine)).code == 0
    small = _variant(
        tmp_path / "small",
        "pixstor-large",
        [
            ("    part: poweredge-r750\n", "    part: poweredge-r750\n    memory: 384 GiB\n"),
            ("    template: r750-sas\n", "    template: r750-sas\n    memory: 64 GiB\n"),
        ],
    )
    lines = _located(run_cli("validate", str(small)))
    assert len(lines) == 1 and "pagepool" in lines[0]["message"]
    assert lines[0]["path"] == "filesystem.pagepool.server"
    assert "(memory set at servers[0].memory)" in lines[0]["message"]


def test_a_topology_without_its_parts_folder_says_where_parts_are_read(tmp_path) -> None:
    from tests.conftest import ROOT

    copy = tmp_path / "beegfs-hdr100.yaml"
    copy.write_text((ROOT / "topologies" / "beegfs-hdr100.yaml").read_text())
    result = run_cli("validate", str(copy))
    assert result.code == 2 and "Traceback" not in result.stdout + result.stderr
    assert f"{tmp_path / 'parts'}: parts catalogue folder not found (beegfs-hdr100.yaml reads its parts from the" in (
        result.stdout
    )
    # Said once: the parts it names are not each "unknown" too (a newcomer's review found 11 such).
    assert result.stdout.count("\n") == 1 and "copy the pfssim checkout's topologies/parts/ there" in result.stdout


def test_names_are_text_not_markup(bad_topology) -> None:  # noqa: ANN001 - the conftest fixture
    # A name with square brackets is shown as written: the reports do not read it as rich markup.
    path = bad_topology("name: beegfs-edr-2019", 'name: "[/x] [red]edr"')
    shown = run_cli("show", str(path))
    assert shown.code == 0 and "[/x] [red]edr" in shown.stdout
    ran = run_cli("run", str(path), "--cmd", "iozone -i 0 -r 1m -s 1g -t 2 -I -e", "--workers", "1")
    assert ran.code == 0 and "[/x] [red]edr" in ran.stdout


def test_an_override_of_a_field_no_model_reads_is_refused(bad_topology) -> None:  # noqa: ANN001 - the fixture
    # An ME4084's expansion ports are recorded from its datasheet, but nothing is modelled from
    # them: overriding them would be silently meaningless.
    old = "    part: powervault-me4084\n"
    path = bad_topology(old, old + "    overrides: {expansion_ports_per_controller: 2}\n", of="pixstor-large")
    result = run_cli("validate", str(path))
    assert result.code == 2
    (line,) = [x for x in (result.stdout + result.stderr).splitlines() if "expansion_ports_per_controller" in x]
    assert "no model reads it" in line and "enclosures[0].overrides.expansion_ports_per_controller" in line


def test_a_number_where_text_is_wanted_is_told_to_be_quoted(tmp_path) -> None:
    # It read "Input should be a valid string".
    path = _variant(tmp_path, "beegfs-hdr100", [('version: "7.2"', "version: 7.2")])
    problems = _located(run_cli("validate", str(path)))
    assert [(m["path"], int(m["line"])) for m in problems] == [
        ("filesystem.version", _line_of(path.read_text(), "version: 7.2"))
    ]
    assert problems[0]["message"] == "expected text, got a number (7.2); put it in quotes to keep it as written"


def test_a_parts_catalogue_file_given_as_a_topology_is_said_to_be_one() -> None:
    # It answered "parts/parts: parts catalogue folder not found" and seven missing keys.
    for command in ("validate", "show"):
        result = run_cli(command, str(ROOT / "topologies" / "parts" / "drives.yaml"))
        assert result.code == 2, command
        text = (result.stdout + result.stderr).strip()
        assert len(text.splitlines()) == 1, text
        drives = ROOT / "topologies" / "parts" / "drives.yaml"
        line = drives.read_text().splitlines().index("drives:") + 1
        assert f"drives.yaml:{line} drives: this is a parts catalogue file (drives), not a topology" in text


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ("[hca0]", "'hca0' names several HCAs of server 'meta' (numa0.hca0, numa1.hca0); give one of these"),
        ("[hca9]", "server 'meta' has no HCA 'hca9' (its HCAs: numa0.hca0, numa1.hca0; a name may also be given"),
        ("[numa0.hca0]", None),
        ("[meta.numa1.hca0]", None),
    ],
)
def test_a_service_interface_is_named_exactly_once(tmp_path, given: str, message: str | None) -> None:
    # hca0 alone matched numa0's and numa1's and silently took the first; the HCAs a server has are
    # listed as they may be written.
    old = "      - {kind: beegfs-meta, count: 6}"
    path = _variant(tmp_path, "beegfs-hdr100", [(old, old.replace("6}", "6, interfaces: " + given + "}"))])
    result = run_cli("validate", str(path))
    if message is None:
        assert result.code == 0, result.stdout
        return
    problems = _located(result)
    assert [m["path"] for m in problems] == ["servers[1].numa[0].services[0].interfaces[0]"], result.stdout
    assert problems[0]["message"].startswith(message), problems[0]["message"]


def test_a_sourced_value_written_as_a_bare_number_is_told_its_keys(tmp_path) -> None:
    # "expected a mapping of keys to values, got float" did not say which keys.
    text = (ROOT / "topologies" / "beegfs-hdr100.yaml").read_text()
    start = text.index("  capacity_efficiency:\n")
    lines = text[start:].split("\n")[1:]
    while lines[0].startswith("    "):  # the mapping's value and its folded source
        lines.pop(0)
    (tmp_path / "parts").symlink_to(ROOT / "topologies" / "parts")
    path = tmp_path / "beegfs-hdr100.yaml"
    path.write_text(text[:start] + "  capacity_efficiency: 0.99\n" + "\n".join(lines))
    problems = _located(run_cli("validate", str(path)))
    assert [m["path"] for m in problems] == ["filesystem.capacity_efficiency"]
    assert problems[0]["message"].endswith("got a number (0.99) (it takes value, source: {value: ..., source: ...})")


def test_a_second_bundle_between_the_same_switches_is_refused(bad_topology) -> None:
    # A request takes one path, so a second bundle sat idle in the simulation while the max-flow
    # ceiling counted it (24.8 GB/s shown, 12.4 GB/s simulated).
    old = "    - {between: [storage-switch, cluster-fabric], count: 24, link: edr}"
    topology = bad_topology(old, old + "\n    - {between: [cluster-fabric, storage-switch], count: 1, link: edr}")
    problems = _located(run_cli("validate", str(topology)))
    assert [m["path"] for m in problems] == ["network.links[1].between"]
    assert problems[0]["message"].startswith("cluster-fabric and storage-switch are already joined by network.links[0]")


def test_a_quoted_true_is_told_to_lose_its_quotes(tmp_path) -> None:
    from sim.benchmarks.workloads import load_workload

    text = (ROOT / "workloads" / "pixstor-iozone-seq.yaml").read_text()
    path = tmp_path / "pixstor-iozone-seq.yaml"
    path.write_text(text.replace("fsync: true", 'fsync: "true"'))
    with pytest.raises(PfssimError) as info:
        load_workload(path)
    (problem,) = [p for p in info.value.problems if p.path == "fsync"]
    assert problem.message == "expected true or false, got the text 'true' (in quotes); write it without quotes"


def test_a_topology_draft_of_servers_and_enclosures_is_not_taken_for_a_catalogue(tmp_path) -> None:
    (tmp_path / "parts").symlink_to(ROOT / "topologies" / "parts")
    path = tmp_path / "draft.yaml"
    path.write_text("servers:\n  - {name: s, part: poweredge-r740xd}\nenclosures: []\n")
    result = run_cli("validate", str(path))
    assert result.code == 2 and "parts catalogue" not in result.stdout
    assert "missing required key 'name'" in result.stdout, result.stdout


def test_an_override_of_an_hdd_figure_its_model_derives_is_refused(bad_topology) -> None:  # noqa: ANN001
    # An HDD's random IOPS and latency come from its seek curve, rotation and queueing: an override
    # of the datasheet's IOPS was accepted and changed nothing (an architect's audit, session 24).
    old = "part: nl-sas-12tb-7200, count: 84"
    new = old + ", overrides: {rand_write_iops: 50 IOPS, seq_write: 200 MB/s}"
    result = run_cli("validate", str(bad_topology(old, new, of="beegfs-high-capacity")))
    assert result.code == 2
    lines = [x for x in result.stdout.splitlines() if "overrides" in x]
    assert len(lines) == 1, lines  # seq_write is modelled and accepted
    said = ".overrides.rand_write_iops: rand_write_iops is recorded from the datasheet, but an HDD's random IOPS"
    assert said in lines[0]
    assert "override avg_seek or rpm instead" in lines[0]


def test_a_templates_mistake_is_given_once_for_all_its_servers(bad_topology) -> None:  # noqa: ANN001
    # The messages named each server built from the template (storage1 ... storage5), so the lines
    # differed and each was printed (an architect's audit, session 24): at a template's key they
    # now name no server.
    old = "          - {kind: beegfs-storage}\n"
    path = bad_topology(old, "          - {kind: beegfs-storage, interfaces: [numa0.hca1]}\n", of="beegfs-hdr100")
    result = run_cli("validate", str(path))
    assert result.code == 2
    lines = [x for x in result.stdout.splitlines() if "numa0.hca1" in x]
    assert len(lines) == 1, lines
    assert (
        "interfaces[0]: a server of this template has no HCA 'numa0.hca1' (its HCAs: numa0.hca0, numa1.hca0" in lines[0]
    )
    old = "            drives: {part: intel-p4610-3.2tb, count: 12}\n"
    path = bad_topology(old, old + "        drives: {part: intel-p4610-3.2tb, count: 3}\n", of="beegfs-hdr100")
    lines = [x for x in run_cli("validate", str(path)).stdout.splitlines() if "templates." in x]
    assert len(lines) == 1, lines
    assert "raid_groups: this zone has 3 drives in no RAID group but 0 spares" in lines[0]


def test_sizes_in_pagepool_messages_are_written_as_given(tmp_path) -> None:
    # A fuzz review: a 1 B pagepool was "a 9.53674e-07 MiB pagepool", a 1 PiB one "1.04858e+06 GiB".
    old = "pagepool: {client: 32 GiB, server: 96 GiB}"
    topology = _variant(tmp_path, "pixstor-large", [(old, "pagepool: {client: 1 B, server: 1 PiB}")])
    messages = [m["message"] for m in _located(run_cli("validate", str(topology)))]
    assert any(m.startswith("a 1 B pagepool cannot hold one 8 MiB file-system block") for m in messages), messages
    assert any(m.startswith("a 1 PiB pagepool is more than 80% of the ") for m in messages), messages
    assert not any("e+0" in m or "e-0" in m for m in messages), messages


@pytest.mark.parametrize(
    ("name", "fragment"),
    [
        ("c6420 {i}", "may not contain spaces"),
        ("c-{i}-{x}", "only placeholder"),
        ("{0}-{i}", "only placeholder"),
        ("c6420-{i}*", "target patterns match with"),  # a commit review: glob characters in a name
    ],
)
def test_part_names_are_one_word_with_only_the_index_placeholder(tmp_path, name: str, fragment: str) -> None:
    # A fuzz review: c-{i}-{x} gave parts named c-0-{x}, and names with spaces were taken.
    topology = _variant(tmp_path, "beegfs-hdr100", [("name: c6420-{i}", f"name: '{name}'")])
    lines = _located(run_cli("validate", str(topology)))
    assert [m["path"] for m in lines] == ["clients[1].name"] and fragment in lines[0]["message"], lines


def test_a_duplicate_key_is_reported_with_the_files_other_problems(tmp_path) -> None:
    # A fuzz review: a duplicate key hid every other problem of its file until it was fixed.
    topology = _variant(tmp_path, "beegfs-hdr100", [("  num_targets: 3\n", "  num_targets: 0\n  chunk_size: 1 MiB\n")])
    lines = _located(run_cli("validate", str(topology)))
    assert [(m["path"], m["message"].split(" (")[0]) for m in lines] == [
        ("filesystem.num_targets", "must be at least 1, got 0"),
        ("filesystem.chunk_size", "duplicate key 'chunk_size'"),
    ], lines
    # A duplicate's first value is the one kept, and its own problem is said too (a commit review).
    again = tmp_path / "again"
    again.mkdir()
    topology = _variant(again, "beegfs-hdr100", [("  num_targets: 3\n", "  num_targets: 0\n  num_targets: 3\n")])
    lines = _located(run_cli("validate", str(topology)))
    assert [m["message"].split(" (")[0] for m in lines] == [
        "must be at least 1, got 0",
        "duplicate key 'num_targets'",
    ], lines
    workload = tmp_path / "pixstor-iozone-seq.yaml"
    text = (ROOT / "workloads" / "pixstor-iozone-seq.yaml").read_text()
    workload.write_text(text.replace("fsync: true", "fsync: true\nfsync: false").replace("placement:", "placment:"))
    lines = _located(run_cli("validate", str(workload)))  # still a workload, and both problems said
    assert [m["path"] for m in lines] == ["fsync", "placment"], lines
    # A value whose tag pfssim does not read is said once, not also as the schema's missing value.
    workload.write_text(text.replace("fsync: true", "fsync: !!binary dHJ1ZQ=="))
    lines = _located(run_cli("validate", str(workload)))
    assert [(m["path"], "tag !!binary" in m["message"]) for m in lines] == [("fsync", True)], lines


def test_unknown_part_and_switch_names_are_said_with_the_schemas_problems(tmp_path) -> None:
    # A fuzz review: num_targets: 0, an unknown client part and an unknown switch took three rounds of
    # validate, each showing one problem; they are now said in one.
    topology = _variant(
        tmp_path,
        "beegfs-hdr100",
        [
            ("  num_targets: 3", "  num_targets: 0"),
            ("    part: poweredge-r840", "    part: poweredge-r84"),
            ("switch: ib}", "switch: ibx}"),
        ],
    )
    lines = _located(run_cli("validate", str(topology)))
    assert [(m["path"], m["message"]) for m in lines] == [
        (
            "clients[0].part",
            "unknown part 'poweredge-r84': the catalogue has none (did you mean 'poweredge-r840' or 'poweredge-r740'?)",
        ),
        ("clients[0].hcas[0].switch", "unknown switch 'ibx' (switches: ib)"),
        ("filesystem.num_targets", "must be at least 1, got 0"),
    ], lines


def test_an_unreadable_catalogue_file_is_said_once_without_its_parts_missing_elsewhere(tmp_path) -> None:
    # A fuzz review: an undefined alias in parts/buses.yaml also gave five "unknown bus part 'pcie3'
    # (known: none defined)" lines from the drives and network files that name its buses.
    topology = _variant(tmp_path, "beegfs-hdr100", [])
    buses = tmp_path / "parts" / "buses.yaml"
    text = buses.read_text()
    first = text.index("lane_rate:")
    buses.write_text(text[:first] + "lane_rate: *nowhere\n" + text[text.index("\n", first) + 1 :])
    lines = _located(run_cli("validate", str(topology)))
    assert [(m["file"].rsplit("/", 1)[-1], m["message"]) for m in lines] == [
        ("buses.yaml", "malformed YAML: found undefined alias 'nowhere'")
    ], lines


def test_a_switch_is_declared_alone_so_its_name_has_no_index(tmp_path) -> None:
    # A commit review: name: "ib{i}" on a switch (which has no count) made a switch named ib{i}.
    topology = _variant(
        tmp_path, "beegfs-hdr100", [("{name: ib, part: mellanox-qm8790}", "{name: 'ib{i}', part: mellanox-qm8790}")]
    )
    lines = _located(run_cli("validate", str(topology)))
    assert [m["path"] for m in lines][:1] == ["network.switches[0].name"] and "declared alone" in lines[0]["message"], (
        lines
    )


TEMPLATED = "    template: r750-sas\n"  # pixstor-large's first server entry


def test_a_cpu_takes_overrides_as_other_parts_do(tmp_path) -> None:
    # A lecturer's one-core server for an M/M/1 lab: `cpu: {part: ..., overrides: {cores: 1}}` read
    # "Input should be a valid string" (a server's cpu took a part name only, unlike its drives).
    from sim.topology.build import load_system

    path = _variant(
        tmp_path,
        "pixstor-large",
        [
            (TEMPLATED, TEMPLATED + "    cpu: {part: xeon-gold-6330, overrides: {cores: 2}}\n"),
            ("    cpu: xeon-gold-6230\n", "    cpu: {part: xeon-gold-6230, overrides: {cores: 4}}\n"),
        ],
    )
    system = load_system(path)
    assert {system.zone_cores[zone] for zone in system.zone_cores if zone.startswith("storage")} == {2}
    assert {cores for client, cores in system.client_cores.items() if client.startswith("c6230")} == {2 * 4}


@pytest.mark.parametrize(
    ("cpu", "message"),
    [
        (
            "{part: xeon-gold-6330, overides: {cores: 1}}",
            "cpu.overides: unknown key 'overides' (did you mean 'overrides'?)",
        ),  # noqa: E501
        ("{part: 7}", "cpu.part: expected text, got a number (7); put it in quotes to keep it as written"),
        ("{overrides: {cores: 1}}", "cpu.part: missing required key 'part'"),
        ("[xeon-gold-6330]", "cpu: expected text or a mapping ({part: ...}), got a list"),
        ("{part: xeon-gold-6330, overrides: {cores: 0}}", "cpu.overrides.cores: must be at least 1, got 0"),
        (
            "{part: xeon-gold-6330, overrides: {cores: 1.5}}",
            "cpu.overrides.cores: expected a whole number, got a number (1.5)",
        ),  # noqa: E501
    ],
)
def test_a_cpu_given_wrong_gets_one_problem_in_pfssims_words(tmp_path, cpu: str, message: str) -> None:
    # A part name or a part with overrides: pydantic reports both of the union's members, and each
    # of its problems once said "Input should be a valid string" beside the real one.
    path = _variant(tmp_path, "pixstor-large", [(TEMPLATED, f"{TEMPLATED}    cpu: {cpu}\n")])
    problems = _located(run_cli("validate", str(path)))
    assert [f"{m['path']}: {m['message']}" for m in problems] == [f"servers[0].{message}"]
    assert int(problems[0]["line"]) == _line_of(path.read_text(), f"cpu: {cpu}")
