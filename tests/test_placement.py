"""Where MPI ranks run: ``-npernode N`` and its synonyms fill the clients N at a time."""

from __future__ import annotations

import pytest
import yaml

from sim.benchmarks.cmdline import parse_command
from sim.benchmarks.driver import run_point
from sim.benchmarks.workloads import load_workload
from sim.errors import WorkloadError
from sim.topology.build import load_system
from tests.conftest import ROOT, build_model, run_cli

HDR100 = ROOT / "topologies" / "beegfs-hdr100.yaml"
IOR = "ior -a POSIX -w -e -B -F -t 1m -b 16g -o /f"


@pytest.mark.parametrize("launcher", ["-npernode 4", "--npernode 4", "-N 4", "-ppn 4", "--map-by ppr:4:node"])
def test_ranks_per_node_options(launcher: str) -> None:
    w = parse_command(f"mpirun -np 16 {launcher} {IOR}")
    assert (w.placement, w.per_node) == ("per_node", 4)
    assert w.title.startswith("IOR sequential N-N")


@pytest.mark.parametrize("launcher", ["", "--map-by node", "-bynode", "--bynode"])
def test_round_robin_options(launcher: str) -> None:
    w = parse_command(f"mpirun -np 16 {launcher} {IOR}")
    assert (w.placement, w.per_node) == ("round_robin", None)


def test_per_node_deals_consecutive_ranks_to_each_client() -> None:
    # 10 ranks, 4 per node on 16 clients: ranks 0-3 on the first client, 4-7 on the second, 8-9 on
    # the third; each client's ranks take its HCAs in turn by their index on the client.
    system = load_system(HDR100)
    ctx = build_model(system, parse_command(f"mpirun -np 10 -npernode 4 {IOR}"), "write", 10).ctx
    first, second, third = system.clients[:3]
    assert [ctx.client_of(t) for t in range(10)] == [first] * 4 + [second] * 4 + [third] * 2
    assert [ctx.threads_on(c) for c in system.clients[:4]] == [4, 4, 2, 0]
    assert ctx.placed_clients == [first, second, third]
    hcas = system.client_hcas[first]
    service = next(s for s in system.services.values() if s.kind == "beegfs-storage")
    picked = [ctx.client_hca(t, service.hcas) for t in range(4)]
    assert set(picked) <= set(hcas)
    # Round robin (the same ranks, --map-by node): one rank per client on the first ten.
    spread = build_model(system, parse_command(f"mpirun -np 10 {IOR}"), "write", 10).ctx
    assert [spread.threads_on(c) for c in system.clients[:11]] == [1] * 10 + [0]


def test_sixteen_ranks_on_one_client_are_held_by_its_link() -> None:
    # 16 O_DIRECT writers packed on one HDR100 client are bound by that client's link (12.5 GB/s);
    # dealt round robin over 16 clients the same ranks are several times faster.
    system = load_system(HDR100)
    packed = run_point(system, parse_command(f"mpirun -np 16 -npernode 16 {IOR}"), "write", 16, seed=2)
    spread = run_point(system, parse_command(f"mpirun -np 16 --map-by node {IOR}"), "write", 16, seed=2)
    first = system.clients[0]
    assert packed.bottleneck.startswith(f"{first}.hca") and packed.bottleneck_utilization > 0.98
    assert not any(name.startswith(system.clients[1] + ".") for name in packed.utilization)
    assert packed.value <= 12.5e9 * 1.001
    assert spread.value > 3 * packed.value


def test_more_ranks_than_the_mapping_places_are_refused() -> None:
    result = run_cli("run", str(HDR100), "--cmd", f"mpirun -np 512 -N 4 {IOR}")
    assert result.code == 2
    assert "--cmd -N: at 512 threads the tasks, 4 per client, need more clients than the 16" in result.stderr
    assert "Traceback" not in result.stderr


def test_workload_file_per_node_needs_its_placement(tmp_path) -> None:  # noqa: ANN001 - pytest's tmp_path
    data = yaml.safe_load((ROOT / "workloads" / "beegfs-hc-ior-n1.yaml").read_text())
    del data["command"]  # its mpirun line says --map-by node
    base = yaml.safe_dump(data, sort_keys=False)
    given = tmp_path / "beegfs-hc-ior-n1.yaml"
    given.write_text(base + "per_node: 8\n")
    with pytest.raises(WorkloadError) as info:
        load_workload(given)
    (problem,) = info.value.problems
    assert problem.path == "per_node" and "is for placement: per_node, not round_robin" in problem.message
    given.write_text(base.replace("placement: round_robin", "placement: per_node"))
    with pytest.raises(WorkloadError) as info:
        load_workload(given)
    (problem,) = info.value.problems
    assert problem.path == "placement" and "per_node: N (threads per client) is missing" in problem.message
    given.write_text(base.replace("placement: round_robin", "placement: per_node\nper_node: 8"))
    assert load_workload(given).per_node == 8


def test_mdtest_per_node() -> None:
    w = parse_command("mpirun -np 64 -npernode 8 mdtest -F -u -I 1024 -z 1 -b 8 -L -C -d /x")
    assert (w.placement, w.per_node) == ("per_node", 8)
    system = load_system(HDR100)
    ctx = build_model(system, w, "create", 64).ctx
    assert [ctx.threads_on(c) for c in system.clients] == [8] * 8 + [0] * 8


def test_ranks_up_to_the_mapping_run_and_one_more_is_refused() -> None:
    # beegfs-hdr100 has 16 clients: -N 4 places at most 64 ranks; the 65th needs a 17th client.
    from sim.benchmarks.runnable import check_runnable

    system = load_system(HDR100)
    assert len(system.clients) == 16
    check_runnable(system, parse_command(f"mpirun -np 64 -N 4 {IOR}"))
    with pytest.raises(WorkloadError) as info:
        check_runnable(system, parse_command(f"mpirun -np 65 -N 4 {IOR}"))
    (problem,) = info.value.problems
    assert problem.path == "per_node"
    assert "need more clients than the 16 of beegfs-hdr100 (17 at 65;" in problem.message


def test_buffered_beegfs_calls_below_512_kib_are_refused_at_any_size() -> None:
    # BeeGFS's buffered cache takes calls below 512 KiB (tuneFileCacheType = buffered), which pfssim
    # does not model: 256 KiB is refused as 4 KiB is, 512 KiB bypasses the cache and runs.
    from sim.benchmarks.runnable import check_runnable

    system = load_system(HDR100)
    with pytest.raises(WorkloadError) as info:
        check_runnable(system, parse_command("iozone -i 2 -r 256k -s 1g -t 2"))
    (problem,) = info.value.problems
    assert problem.path == "direct_io"
    assert problem.message.startswith("buffered calls of 256 KiB go through the BeeGFS client's buffer cache")
    check_runnable(system, parse_command("iozone -i 2 -r 512k -s 1g -t 2"))


def test_a_client_pagepool_smaller_than_one_block_is_refused_and_one_block_runs() -> None:
    # GPFS stages data through the pagepool a block at a time: on pixstor-large's 8 MiB blocks a
    # 4 MiB pagepool cannot hold one and is refused; exactly 8 MiB can.
    from sim.benchmarks.runnable import check_runnable
    from sim.benchmarks.workloads import find_workload

    system = load_system(ROOT / "topologies" / "pixstor-large.yaml")
    assert system.spec.filesystem.block_size == 8 * 2**20
    workload = find_workload("pixstor-iozone-random")
    with pytest.raises(WorkloadError) as info:
        check_runnable(system, workload.model_copy(update={"gpfs_pagepool_client": 4.0 * 2**20}))
    (problem,) = info.value.problems
    assert problem.path == "gpfs_pagepool_client"
    assert problem.message.startswith("a client pagepool of 4 MiB cannot hold one 8 MiB file-system block")
    check_runnable(system, workload.model_copy(update={"gpfs_pagepool_client": 8.0 * 2**20}))


def test_beegfs_worker_and_connection_counts_come_from_the_service_then_the_file_system_then_the_default() -> None:
    # A service's own workers win over filesystem.workers; without either, storage takes the shipped
    # conf's 12 and meta BeeGFS's rule, twice the cores it runs on but at least 4; conn_max_internode
    # left out is the shipped conf's (client 12, meta 32). show marks a given value "topology".
    from dataclasses import replace

    from sim.fs.settings import (
        beegfs_conn_max,
        beegfs_meta_workers,
        beegfs_storage_workers,
        filesystem_settings,
        service_zone,
    )

    system = load_system(ROOT / "tests" / "data" / "tiny.yaml")
    meta = next(s for s in system.services.values() if s.kind == "beegfs-meta")
    storage = next(s for s in system.services.values() if s.kind == "beegfs-storage")
    assert (beegfs_meta_workers(system, meta), beegfs_storage_workers(system, storage)) == (4, 8)
    assert beegfs_meta_workers(system, replace(meta, workers=7)) == 7
    assert beegfs_storage_workers(system, replace(storage, workers=5)) == 5
    origins = {s.key: s.origin for s in filesystem_settings(system)}
    assert origins["workers.meta"] == origins["workers.storage"] == origins["conn_max_internode.client"] == "topology"
    fs = system.spec.filesystem.model_copy(update={"workers": {}, "conn_max_internode": {}})
    system.spec = system.spec.model_copy(update={"filesystem": fs})
    assert beegfs_storage_workers(system, storage) == 12
    assert (beegfs_conn_max(system, "client"), beegfs_conn_max(system, "meta")) == (12, 32)
    zone = service_zone(system, meta)
    for cores, workers in ((1, 4), (2, 4), (3, 6), (24, 48)):
        system.zone_cores[zone] = cores
        assert beegfs_meta_workers(system, meta) == workers, cores
    # A service declared on a server of two zones runs on both: the rule counts all their cores
    # (BeeGFS's getNumOnlineCPUs), where one pinned to a zone counts that zone's.
    hc = load_system(ROOT / "topologies" / "beegfs-high-capacity.yaml")
    unpinned = next(s for s in hc.services.values() if s.kind == "beegfs-storage")
    assert unpinned.zone is None
    hc_fs = hc.spec.filesystem.model_copy(update={"workers": {}})
    hc.spec = hc.spec.model_copy(update={"filesystem": hc_fs})
    both = hc.zone_cores[f"{unpinned.server}.numa0"] + hc.zone_cores[f"{unpinned.server}.numa1"]
    assert beegfs_meta_workers(hc, unpinned) == 2 * both
    assert beegfs_meta_workers(hc, replace(unpinned, zone=f"{unpinned.server}.numa1")) == both
    origins = {s.key: s.origin for s in filesystem_settings(system)}
    assert origins["conn_max_internode.client"] == "default: the shipped beegfs-client.conf"
    assert origins["workers.storage"] == "default: the shipped beegfs-storage.conf"
