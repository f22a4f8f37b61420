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
