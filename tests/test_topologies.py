"""Every shipped topology loads; its summary is pinned; the published figures are reproduced.

Golden files live in tests/golden/show/. After an intended change, regenerate them with
``PFSSIM_UPDATE_GOLDEN=1 pytest tests/test_topologies.py`` and review the diff: a golden file is a
record of what changed, not proof of correctness (the explicit checks below are that).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from sim.benchmarks.driver import Precision, run_point
from sim.benchmarks.suite import default_workloads
from sim.benchmarks.workloads import find_workload
from sim.params import value
from sim.report.show import show_json
from sim.topology.build import load_system
from sim.topology.summary import summarize
from tests.conftest import ROOT, TOPOLOGIES, UPDATE_GOLDEN, CliResult, build_model, run_cli

GOLDEN = Path(__file__).parent / "golden" / "show"
TIB = 2**40


def _summary(name: str) -> dict:
    data = summarize(load_system(ROOT / "topologies" / f"{name}.yaml")).to_json()
    data.pop("file")
    return data


def test_five_published_systems_ship() -> None:
    names = {p.stem for p in TOPOLOGIES}
    assert {
        "beegfs-edr-2019",
        "beegfs-hdr100",
        "beegfs-high-capacity",
        "pixstor-large",
        "pixstor-large-expansion",
    } <= names


@pytest.mark.parametrize("path", TOPOLOGIES, ids=lambda p: p.stem)
def test_summary_is_pinned(path: Path) -> None:
    data = _summary(path.stem)
    # Component names are a contract (results and errors use them): pin them, one "kind name" each.
    data["components"] = [f"{c['kind']} {c['name']}" for c in data["components"]]
    # The same for every system (a constant of pfssim's, checked against runs in test_cli.py).
    assert data.pop("owned_names")
    golden = GOLDEN / f"{path.stem}.json"
    assert golden.exists() or UPDATE_GOLDEN, f"no golden summary for {path.stem}; run with PFSSIM_UPDATE_GOLDEN=1"
    if UPDATE_GOLDEN:
        golden.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
        pytest.skip(f"wrote {golden.name}: review the diff (a regenerated golden cannot check anything)")
    assert data == json.loads(golden.read_text())


def test_beegfs_edr_2019_published_figures() -> None:
    s = _summary("beegfs-edr-2019")
    assert (s["storage_targets"], s["metadata_targets"]) == (33, 6)
    assert s["capacity"]["raw_bytes"] == pytest.approx(132 * 1.6e12)  # 211.2 TB
    assert s["capacity"]["usable_bytes"] / TIB == pytest.approx(132 * 1.6 * 0.99 * 1e12 / TIB)  # ~190 TiB
    assert s["capacity"]["usable_bytes"] / TIB == pytest.approx(190, abs=0.5)
    assert s["bounds"]["read_Bps"] == pytest.approx(136.4e9)
    assert s["bounds"]["write_Bps"] == pytest.approx(136.4e9)
    assert len(s["bounds"]["read_bottleneck_parts"]) == 11
    assert all(p.endswith(".hca0") for p in s["bounds"]["write_bottleneck_parts"])
    assert "meta.numa0.hca0" not in s["bounds"]["read_bottleneck_parts"]  # metadata-only port


def test_pixstor_large_published_capacity() -> None:
    s = _summary("pixstor-large")
    assert s["capacity"]["raw_bytes"] == pytest.approx(4032e12)
    assert s["capacity"]["usable_bytes"] == pytest.approx(3072e12)
    assert (s["storage_targets"], s["metadata_targets"]) == (32, 12)


def test_pixstor_large_expansion_published_capacity() -> None:
    s = _summary("pixstor-large-expansion")
    assert s["capacity"]["raw_bytes"] == pytest.approx(8064e12)
    assert s["capacity"]["usable_bytes"] == pytest.approx(6144e12)
    assert s["storage_targets"] == 64


def test_beegfs_high_capacity_usable_formula() -> None:
    s = _summary("beegfs-high-capacity")
    assert s["capacity"]["usable_bytes"] == pytest.approx(0.99 * 4 * 80 * 0.8 * 12e12)
    assert s["storage_targets"] == 32


def test_every_system_names_its_default_suite() -> None:
    for path in TOPOLOGIES:
        system = load_system(path)
        assert system.spec.benchmarks, path.stem
        # Each name resolves to a shipped workload file of that name.
        assert [w.name for w in default_workloads(system)] == list(system.spec.benchmarks), path.stem


def test_names_are_dotted_and_stable() -> None:
    system = load_system(ROOT / "topologies" / "beegfs-edr-2019.yaml")
    assert "storage3.numa1.target2" in system.groups
    assert "meta.numa0.mdt5" in system.groups
    assert system.groups["storage3.numa1.target2"].members == tuple(f"storage3.numa1.drive{i}" for i in range(8, 12))
    pixstor = load_system(ROOT / "topologies" / "pixstor-large.yaml")
    # ME4084 virtual disks take even then odd slots in blocks of 20.
    assert pixstor.groups["me4084-0.vd1"].members[:3] == ("me4084-0.drive1", "me4084-0.drive3", "me4084-0.drive5")
    assert pixstor.groups["me4024-0.vd3"].members == ("me4024-0.drive3", "me4024-0.drive15")
    assert {pixstor.groups[f"me4084-2.vd{i}"].owner for i in range(8)} == {"me4084-2.ctrlA", "me4084-2.ctrlB"}


def test_one_sas_entry_per_enclosure_cables_like_one_entry_for_all(tmp_path: Path) -> None:
    """A server's `sas:` list may name its enclosures one entry at a time; the HBA ports already
    cabled by earlier entries stay taken, so the wiring is the same as one pattern for all (each
    port to one controller), not every enclosure on port 0."""
    import shutil

    shutil.copytree(ROOT / "topologies" / "parts", tmp_path / "parts")
    text = (ROOT / "topologies" / "pixstor-large.yaml").read_text()
    one = '      - {enclosures: "me4084-*"}\n'
    assert text.count(one) == 1
    split = "".join(f'      - {{enclosures: "me4084-{i}"}}\n' for i in range(4))
    (tmp_path / "split.yaml").write_text(text.replace(one, split))
    shipped = load_system(ROOT / "topologies" / "pixstor-large.yaml")
    variant = load_system(tmp_path / "split.yaml")
    assert sorted(map(sorted, variant.graph.edges)) == sorted(map(sorted, shipped.graph.edges))
    ports = [n for n in variant.graph if n.startswith("storage0.") and ".port" in n]
    assert ports and all(variant.graph.degree(p) == 2 for p in ports)  # its HBA and one controller


def test_each_gpfs_lun_goes_to_its_own_primary_nsd_server() -> None:
    """LUN k of an nsds entry has server k mod n as its primary (services_of lists it first): the
    PixStor data LUNs alternate between storage0 and storage1, the metadata LUNs between hdmd0 and
    hdmd1, and each server is the other's backup."""
    system = load_system(ROOT / "topologies" / "pixstor-large.yaml")
    data = [[s.server for s in system.services_of(lun)] for lun in system.storage_targets]
    assert data[:4] == [["storage0", "storage1"], ["storage1", "storage0"]] * 2
    assert sum(servers[0] == "storage1" for servers in data) == len(data) // 2
    meta = [system.services_of(lun)[0].server for lun in system.metadata_targets]
    assert meta.count("hdmd0") == meta.count("hdmd1") == len(meta) // 2


@pytest.mark.parametrize("where", ["zone", "pcie_switch"])
def test_a_pcie4_drive_on_pcie3_lanes_moves_no_more_than_pcie3_carries(tmp_path: Path, where: str) -> None:
    # A PCIe 4 x4 drive rated 6.8 GB/s in the PowerEdge R740xd (Xeon Scalable, PCIe 3), on the CPU's
    # own lanes or behind the backplane's PCIe 3 switch, links at PCIe 3: 4 x 0.985 = 3.94 GB/s.
    # Its reads (3.2 GB/s, under the link) keep their rating; the ceiling and the run see the cap.
    text = (ROOT / "tests" / "data" / "tiny.yaml").read_text()
    drives = "drives: {part: intel-p4600-1.6tb, count: 1, overrides: {capacity: 16 TB}}"
    fast = "drives: {part: intel-p4600-1.6tb, count: 1, overrides: {capacity: 16 TB, seq_write: 6.8 GB/s, "
    fast += "interface: {bus: pcie4, lanes: 4}}}"
    assert text.count(drives) == 1, "test fixture out of date"
    if where == "zone":
        switch = "        pcie_switches:\n          - part: r740xd-nvme-switch\n            " + drives
        assert text.count(switch) == 1, "test fixture out of date"
        text = text.replace(switch, "        " + fast)
    else:
        text = text.replace(drives, fast)
    (tmp_path / "parts").symlink_to(ROOT / "topologies" / "parts")
    path = tmp_path / "tiny.yaml"
    path.write_text(text)
    system = load_system(path)
    drive = next(c for n, c in system.components.items() if c.kind == "drive" and n.startswith("storage."))
    assert drive.write_Bps == pytest.approx(4 * 0.985e9)
    assert drive.read_Bps == pytest.approx(3.2e9)
    assert "pcie4 x4 drive on pcie3 lanes" in drive.note
    assert summarize(system).write.Bps == pytest.approx(4 * 0.985e9)


def test_a_client_entry_without_a_count_is_one_client(tmp_path: Path) -> None:
    # As a server or an enclosure entry is: a student's first topology wrote one client without it.
    text = (ROOT / "tests" / "data" / "tiny.yaml").read_text()
    assert text.count("count: 2, part: poweredge-c6420") == 1, "test fixture out of date"
    (tmp_path / "parts").symlink_to(ROOT / "topologies" / "parts")
    path = tmp_path / "tiny.yaml"
    path.write_text(text.replace("count: 2, part: poweredge-c6420", "part: poweredge-c6420"))
    assert load_system(path).clients == ["client0"]


def test_show_gives_every_filesystem_setting_with_its_origin_and_the_model_runs_them(tmp_path: Path) -> None:
    # beegfs-hdr100 without its workers and conn_max_internode: show names the defaults taken and
    # why, and the data and metadata models build their pools with those very numbers.
    shutil.copytree(ROOT / "topologies" / "parts", tmp_path / "parts")
    text = (ROOT / "topologies" / "beegfs-hdr100.yaml").read_text()
    old = "  workers: {meta: 24, storage: 32}\n  conn_max_internode: {meta: 32, storage: 12, client: 24}\n"
    assert old in text
    (tmp_path / "defaults.yaml").write_text(text.replace(old, "  workers: {}\n  conn_max_internode: {}\n"))
    system = load_system(tmp_path / "defaults.yaml")
    settings = {s["key"]: s for s in show_json(summarize(system))["filesystem_settings"]}
    assert settings["chunk_size"] == {"key": "chunk_size", "value": 2 * 2**20, "origin": "topology"}
    assert settings["conn_max_internode.client"]["value"] == 12
    assert settings["conn_max_internode.client"]["origin"] == "default: the shipped beegfs-client.conf"
    assert settings["conn_max_internode.meta"]["value"] == 32
    assert settings["workers.storage"]["value"] == 12
    meta_zone_cores = {system.zone_cores[s.zone or ""] for s in system.services.values() if s.kind == "beegfs-meta"}
    assert settings["workers.meta"]["value"] == 2 * meta_zone_cores.pop()
    assert "tuneNumWorkers" in settings["workers.meta"]["origin"]

    data = build_model(system, find_workload("beegfs-hp-iozone-seq"), "write", 16)
    meta = build_model(system, find_workload("mdtest-beegfs-hp"), "remove", 16)
    for model in (data, meta):
        model.start()
        model.ctx.env.run(until=0.01)
    pools = {**data.ctx.platform.pools, **meta.ctx.platform.pools}
    clients = set(system.clients)
    meta_names = {s.name for s in system.services.values() if s.kind == "beegfs-meta"}
    connections = {p.size for n, p in pools.items() if "->" in n and n.split("->")[0] in clients}
    meta_links = {p.size for n, p in pools.items() if "->" in n and n.split("->")[0] in meta_names}
    meta_workers = {pools[f"{n}.workers"].size for n in meta_names if f"{n}.workers" in pools}
    targets = set(system.storage_targets)
    storage_workers = {p.size for n, p in pools.items() if n.removesuffix(".workers") in targets}
    assert connections == {settings["conn_max_internode.client"]["value"]}
    assert meta_links == {settings["conn_max_internode.meta"]["value"]}
    assert meta_workers == {settings["workers.meta"]["value"]}
    assert storage_workers == {settings["workers.storage"]["value"]}


def test_show_gives_gpfs_nsd_threads_from_the_parameters_when_left_out() -> None:
    settings = {
        s["key"]: s
        for s in show_json(summarize(load_system(ROOT / "topologies" / "pixstor-large.yaml")))["filesystem_settings"]
    }
    assert settings["nsd_threads.per_queue"]["value"] == value("gpfs_nsd_threads_per_queue")
    assert settings["nsd_threads.per_queue"]["origin"] == "default: the model parameter gpfs_nsd_threads_per_queue"
    assert settings["pagepool.client"]["value"] == 32 * 2**30


UNEVEN_ZONES = """
name: uneven
title: 4 servers whose second zone is reached over one slow UPI link
source: test
benchmarks: [beegfs-hp-iozone-seq]
parts:
  cpus:
    one-upi:
      {model: a CPU with one 5 GB/s UPI link, cores: 32, base_clock: 2.2 GHz, upi_links: 1, max_sockets: 2,
       upi_link_rate: 5 GB/s, pcie_bus: pcie4, pcie_lanes: 64, source: test}
network:
  switches: [{name: ib, part: mellanox-qm8700}]
clients:
  - {name: "client{i}", count: 16, part: poweredge-c6420, hcas: [{part: connectx6-hdr, switch: ib}]}
templates:
  zones:
    part: poweredge-r750
    role: storage
    cpu: one-upi
    numa:
      - hcas: [{part: connectx6-hdr, switch: ib}]
        drives: {part: intel-p4610-3.2tb, count: 8}
        raid_groups: [{count: 2, level: 0, members: 4, stripe_unit: 256 KiB, filesystem: xfs}]
        services: [{kind: beegfs-storage}]
      - drives: {part: intel-p4610-3.2tb, count: 8}
        raid_groups: [{count: 2, level: 0, members: 4, stripe_unit: 256 KiB, filesystem: xfs}]
        services: [{kind: beegfs-storage, interfaces: [numa0.hca0]}]
servers:
  - {name: mgmt, part: poweredge-r640, role: management, services: [{kind: beegfs-mgmt}]}
  - name: meta
    part: poweredge-r750
    role: metadata
    numa:
      - hcas: [{part: connectx6-hdr, switch: ib}]
        drives: {part: intel-p4610-3.2tb, count: 4}
        raid_groups: [{count: 2, level: 1, members: 2, stripe_unit: 512 KiB, role: metadata, filesystem: ext4}]
        services: [{kind: beegfs-meta, count: 2}]
  - {name: "storage{i}", count: 4, template: zones}
filesystem:
  kind: beegfs
  chunk_size: 2 MiB
  num_targets: 4
  target_chooser: roundrobin
  workers: {meta: 24, storage: 32}
  conn_max_internode: {}
  capacity_efficiency: {value: 0.99, source: test}
"""


def _four_zone_servers(tmp_path: Path, cpu: str = "    cpu: one-upi\n") -> tuple[str, CliResult]:
    """UNEVEN_ZONES with 4-socket R840 storage servers of four zones (``cpu`` the template's cpu
    line, empty for the chassis's own), and what ``validate`` says of it (refused, no traceback)."""
    four = UNEVEN_ZONES.replace("r750\n    role: storage", "r840\n    role: storage").replace("    cpu: one-upi\n", cpu)
    zone = "      - drives: {part: intel-p4610-3.2tb, count: 8}"
    four = four.replace(zone, "      - count: 3\n" + zone.replace("- ", "  "))
    (tmp_path / "four.yaml").write_text(four)
    result = run_cli("validate", str(tmp_path / "four.yaml"))
    assert result.code == 2 and "Traceback" not in result.stdout + result.stderr
    return four, result


def test_a_server_with_more_sockets_than_its_cpu_scales_to_is_refused(tmp_path: Path) -> None:
    # Session 24's architect built a 4-socket server of 2-socket CPUs and pfssim ran it.
    shutil.copytree(ROOT / "topologies" / "parts", tmp_path / "parts")
    four, result = _four_zone_servers(tmp_path)
    line = four.splitlines().index("    cpu: one-upi") + 1
    assert result.stdout.strip() == (
        f"{tmp_path / 'four.yaml'}:{line} templates.zones.cpu: 4 NUMA zones (one a socket) but the a CPU with "
        "one 5 GB/s UPI link populates at most 2 sockets of a server (its max_sockets)"
    )
    (tmp_path / "four.yaml").write_text(four.replace("max_sockets: 2", "max_sockets: 4"))
    assert run_cli("validate", str(tmp_path / "four.yaml")).code == 0


def test_a_chassis_cpu_that_cannot_fill_its_sockets_is_refused_for_servers_and_clients(tmp_path: Path) -> None:
    # The CPU comes from the chassis (no cpu: key), so a server's problem is at its numa list; a
    # client's sockets are its chassis's (beegfs-hdr100's 4-socket R840 clients).
    shutil.copytree(ROOT / "topologies" / "parts", tmp_path / "parts")
    parts = tmp_path / "parts" / "servers.yaml"
    text = parts.read_text()
    old = "    cpu: xeon-platinum-8260\n"
    assert old in text
    parts.write_text(text.replace(old, "    cpu: xeon-gold-6330\n"))  # an Ice Lake part: 2 sockets
    topology = (ROOT / "topologies" / "beegfs-hdr100.yaml").read_text()
    (tmp_path / "hdr.yaml").write_text(topology)
    result = run_cli("validate", str(tmp_path / "hdr.yaml"))
    assert result.code == 2 and "Traceback" not in result.stdout + result.stderr
    line = topology.splitlines().index("    part: poweredge-r840") + 1
    assert result.stdout.strip() == (
        f"{tmp_path / 'hdr.yaml'}:{line} clients[0].part: the Dell EMC PowerEdge R840 (2U, 4 sockets) has 4 sockets "
        "but the Intel Xeon Gold 6330 (Ice Lake-SP) populates at most 2 sockets of a server (its max_sockets)"
    )
    four, result = _four_zone_servers(tmp_path, cpu="")
    numa = four.splitlines().index("    numa:") + 1
    wanted = f"four.yaml:{numa} templates.zones.numa: 4 NUMA zones (one a socket) but the Intel Xeon Gold 6330"
    assert wanted in result.stdout, result.stdout


def test_the_even_share_ceiling_finds_a_part_only_some_targets_cross(tmp_path: Path) -> None:
    # An architect's what-if (session 24): each server's second zone is reached over one 5 GB/s
    # UPI link. The free max-flow sends everything to the first zones' targets, 4 x 24.8 GB/s HDR
    # ports; striping gives every target an equal share, so each server moves twice what crosses
    # its UPI link: 4 x 2 x 5 = 40 GB/s, as the simulation does.
    shutil.copytree(ROOT / "topologies" / "parts", tmp_path / "parts")
    (tmp_path / "uneven.yaml").write_text(UNEVEN_ZONES)
    system = load_system(tmp_path / "uneven.yaml")
    summary = summarize(system)
    assert summary.read.Bps == pytest.approx(4 * 24.8e9) and summary.write.Bps == pytest.approx(4 * 24.8e9)
    for even in (summary.read_even, summary.write_even):
        assert even.Bps == pytest.approx(4 * 2 * 5e9)
        assert [b.kind for b in even.bottlenecks] == ["upi"] and even.held == (8, 16)
    assert summary.even_differs("read") and summary.even_differs("write")
    shown = run_cli("show", str(tmp_path / "uneven.yaml"), "--json")
    bounds = json.loads(shown.stdout)["bounds"]
    assert bounds["read_even_Bps"] == pytest.approx(40e9) and len(bounds["read_even_bottleneck_parts"]) == 4
    assert "which 8 of the 16 targets are behind" in bounds["write_even_bottleneck"]
    assert "an equal share per" in run_cli("show", str(tmp_path / "uneven.yaml")).stdout  # its row, wrapped
    seq = find_workload("beegfs-hp-iozone-seq")
    point = run_point(system, seq, "read", 64, precision=Precision(rel_precision=0.05))
    assert 0.9 * 40e9 < point.value <= 40e9 * 1.02 and point.bottleneck.endswith(".upi.numa1->numa0")
    # The shipped systems spread evenly: both ceilings agree.
    for path in TOPOLOGIES:
        shipped = summarize(load_system(path))
        assert shipped.read_even.Bps == pytest.approx(shipped.read.Bps, rel=1e-9), path.stem
        assert shipped.write_even.Bps == pytest.approx(shipped.write.Bps, rel=1e-9), path.stem


def test_show_says_which_settings_were_left_out(bad_topology) -> None:  # noqa: ANN001 - the conftest fixture
    old = "  metadata_replicas: 2\n  data_replicas: 1\n"
    path = bad_topology(old, "", of="pixstor-large")
    settings = {s["key"]: s for s in show_json(summarize(load_system(path)))["filesystem_settings"]}
    assert settings["data_replicas"]["value"] == 1 and settings["metadata_replicas"]["value"] == 1
    assert settings["data_replicas"]["origin"].startswith("default: GPFS's, one copy")
    shipped = {
        s["key"]: s
        for s in show_json(summarize(load_system(ROOT / "topologies" / "pixstor-large.yaml")))["filesystem_settings"]
    }
    assert shipped["metadata_replicas"] == {"key": "metadata_replicas", "value": 2, "origin": "topology"}


def test_an_hca_switch_list_is_dealt_by_client_and_server_index(tmp_path: Path) -> None:
    # pixstor-large's clients each have one CX6 with switch: [ib0, ib1]: client k of an entry goes to
    # ib0 for even k and ib1 for odd k, in both entries. A variant gives the servers' two zones lists as
    # well, [ib0, ib1] and [ib1, ib0]: server 0 of an entry keeps numa0 on ib0 and numa1 on ib1, server 1
    # of the entry swaps them (each storage and metadata pair counts from 0).
    shipped = load_system(ROOT / "topologies" / "pixstor-large.yaml")
    for entry in ("c6230", "c6148"):
        assert [shipped.hca_switch[f"{entry}-{k}.hca0"] for k in range(8)] == ["ib0", "ib1"] * 4
    shutil.copytree(ROOT / "topologies" / "parts", tmp_path / "parts")
    text = (ROOT / "topologies" / "pixstor-large.yaml").read_text()
    for old, new in (("switch: ib0}", "switch: [ib0, ib1]}"), ("switch: ib1}", "switch: [ib1, ib0]}")):
        assert text.count(old) == 1
        text = text.replace(old, new)
    (tmp_path / "dealt.yaml").write_text(text)
    system = load_system(tmp_path / "dealt.yaml")
    dealt = {hca: switch for hca, switch in system.hca_switch.items() if ".numa" in hca}
    assert dealt == {
        f"{server}{k}.numa{z}.hca0": ("ib0", "ib1")[(z + k) % 2]
        for server in ("storage", "hdmd")
        for k in (0, 1)
        for z in (0, 1)
    }


def test_a_upi_carries_each_direction_at_its_rate(tmp_path: Path) -> None:
    # UNEVEN_ZONES with an HCA in each zone and each zone's service using the other zone's: every
    # byte crosses the 5 GB/s UPI, the zone-0 service's one way and the zone-1 service's the other.
    # The links are full duplex, so a server moves 2 x 5 GB/s, 40 GB/s in all, in the bound and
    # in the simulation. Until session 34 the simulation's UPI had one station per operation, so
    # both services' writes shared one direction's 5 GB/s (20 GB/s); a review's mutation giving
    # the bound one node for both directions (20 GB/s too) passed every test.
    (tmp_path / "parts").symlink_to(ROOT / "topologies" / "parts")
    own = "        services: [{kind: beegfs-storage}]\n      - drives: {part: intel-p4610-3.2tb, count: 8}\n"
    assert own in UNEVEN_ZONES, "test fixture out of date"
    crossed = (
        "        services: [{kind: beegfs-storage, interfaces: [numa1.hca0]}]\n"
        "      - hcas: [{part: connectx6-hdr, switch: ib}]\n        drives: {part: intel-p4610-3.2tb, count: 8}\n"
    )
    (tmp_path / "crossed.yaml").write_text(UNEVEN_ZONES.replace(own, crossed))
    system = load_system(tmp_path / "crossed.yaml")
    summary = summarize(system)
    for bound in (summary.read, summary.write, summary.read_even, summary.write_even):
        assert bound.Bps == pytest.approx(4 * 2 * 5e9) and [b.kind for b in bound.bottlenecks] == ["upi"]
    seq = find_workload("beegfs-hp-iozone-seq")
    for op in ("write", "read"):
        point = run_point(system, seq, op, 64, precision=Precision(rel_precision=0.05))
        assert 0.95 * 40e9 < point.value <= 40e9 * 1.02, (op, point.value)
        both = [point.utilization[f"storage0.upi.{way}"] for way in ("numa0->numa1", "numa1->numa0")]
        assert min(both) > 0.9 and ".upi.numa" in point.bottleneck, (op, both, point.bottleneck)


def test_a_upi_carries_its_links_times_the_link_rate() -> None:
    # pixstor-large's R750 servers have two Xeon Platinum 8352Y sockets (parts/servers.yaml: 3 UPI
    # links of 22.4 GB/s each per direction): 3 x 22.4 = 67.2 GB/s between the zones, each way.
    system = load_system(ROOT / "topologies" / "pixstor-large.yaml")
    for server in ("storage0", "storage1", "hdmd0", "hdmd1"):
        upi = system.components[f"{server}.upi"]
        assert (upi.kind, upi.read_Bps, upi.write_Bps) == ("upi", pytest.approx(67.2e9), pytest.approx(67.2e9))


def test_gpfs_metadata_files_are_the_metadata_space_over_inode_size_times_replicas() -> None:
    # pixstor-large's metadata NSDs: the ME4024's 12 RAID1 pairs of 960 GB SSDs, one drive's worth of
    # space each, 12 x 960e9 = 11.52e12 bytes, holding 4 KiB inodes kept twice (metadata_replicas: 2):
    # 11.52e12 / (4096 x 2) = 1.40625e9 files.
    from sim.topology.capacity import capacity

    system = load_system(ROOT / "topologies" / "pixstor-large.yaml")
    assert len(system.metadata_targets) == 12
    assert capacity(system).metadata_files == pytest.approx(12 * 960e9 / (4096 * 2))


@pytest.mark.parametrize(("level", "data"), [(0, 10), (1, 1), (5, 9), (6, 8), (10, 5)])
def test_a_raid_group_of_ten_members_holds_data_on_its_non_redundant_members(level: int, data: float) -> None:
    # Ten members: RAID0 stripes over all 10, RAID1 mirrors one member's worth, RAID5 gives one to
    # parity (9), RAID6 two (8), RAID10 half (5). A pixstor-large ME4084 virtual disk is such a group
    # (RAID6 8+2 of 12 TB drives): its usable space is data x 12e12, its raw space 10 x 12e12.
    from dataclasses import replace

    group = load_system(ROOT / "topologies" / "pixstor-large.yaml").groups["me4084-0.vd0"]
    assert (group.level, len(group.members)) == (6, 10)
    group = replace(group, level=level)
    assert group.data_members == data
    assert (group.usable_B, group.raw_B) == (pytest.approx(data * 12e12), pytest.approx(10 * 12e12))


def _expansion_variant(tmp_path: Path, old: str, new: str) -> Path:
    """pixstor-large-expansion with ``old`` (the ME4084's own RAID groups) replaced by ``new``."""
    text = (ROOT / "topologies" / "pixstor-large-expansion.yaml").read_text()
    assert text.count(old) == 1, "test fixture out of date"
    shutil.copytree(ROOT / "topologies" / "parts", tmp_path / "parts")
    path = tmp_path / "variant.yaml"
    path.write_text(text.replace(old, new))
    return path


GROUPS = "      - {count: 8, level: 6, members: 10, interleave: 2, stripe_unit: 512 KiB}\n    spares: 4\n    expansion:"


def test_expansion_virtual_disks_continue_their_arrays_controller_alternation(tmp_path: Path) -> None:
    # An ME4084 with 7 virtual disks owns them A, B, A, B, A, B, A; its ME484's virtual disks
    # continue the alternation (the topology's stated assumption), so the first is B's. (With the
    # shipped 8 the alternation ends on B, and continuing it or starting again at A agree.)
    seven = GROUPS.replace("count: 8", "count: 7").replace("spares: 4", "spares: 14")  # 84 - 70 drives
    path = _expansion_variant(tmp_path, GROUPS, seven)
    system = load_system(path)
    owners = [system.groups[f"me4084-0.vd{k}"].controller for k in range(7)]
    assert owners == ["me4084-0.ctrlA", "me4084-0.ctrlB"] * 3 + ["me4084-0.ctrlA"]
    assert [system.groups[f"me4084-0.exp.vd{k}"].controller for k in range(2)] == ["me4084-0.ctrlB", "me4084-0.ctrlA"]


def test_interleaved_groups_take_whole_blocks_of_slots_before_the_next_groups(tmp_path: Path) -> None:
    # Three RAID6 groups of 10 interleaved by 2 take whole blocks of 20 slots: groups 0 and 1 share
    # slots 0-19 (even and odd), group 2 takes the even slots 20-38 of the second block, whose odd
    # slots stay unused; the next entry's group starts at slot 40, not 20, where it would take
    # group 2's drives.
    three = "      - {count: 3, level: 6, members: 10, interleave: 2, stripe_unit: 512 KiB}\n"
    one = "      - {count: 1, level: 6, members: 10, stripe_unit: 512 KiB}\n"
    path = _expansion_variant(tmp_path, GROUPS, three + one + "    spares: 44\n    expansion:")  # 84 - 40 drives
    system = load_system(path)
    members = {k: system.groups[f"me4084-0.vd{k}"].members for k in range(4)}
    assert members[2] == tuple(f"me4084-0.drive{20 + 2 * m}" for m in range(10))
    assert members[3] == tuple(f"me4084-0.drive{40 + m}" for m in range(10))
    assert len({d for group in members.values() for d in group}) == 40
