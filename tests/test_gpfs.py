"""GPFS data path: pagepool copies, prefetch and write-behind threads (hand-computed cases)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from sim.benchmarks.driver import run_point
from sim.benchmarks.workloads import find_workload
from sim.params import PARAMETERS, value
from sim.topology.build import load_system
from sim.topology.summary import summarize
from tests.conftest import ROOT, build_model, run_cli

PIXSTOR = ROOT / "topologies" / "pixstor-large.yaml"


@pytest.mark.parametrize("op", ["write", "read"])
def test_one_buffered_stream_runs_at_its_own_copy_rate(op: str) -> None:
    # One IOzone thread on one client: the node's 72 threads move blocks faster than one core
    # copies them between the application's buffer and the pagepool, so the copy sets the rate.
    system = load_system(PIXSTOR)
    point = run_point(system, find_workload("pixstor-iozone-seq"), op, 1, seed=2)
    assert point.value == pytest.approx(value("client_memcpy_Bps"), rel=0.01)
    assert point.utilization[f"{system.clients[0]}.thread0"] == pytest.approx(1.0, abs=0.01)
    assert point.bottleneck == f"{system.clients[0]}.thread0"
    if op == "read":
        # The reader's prefetch fills its 4096-block window for longer than the point runs, so the
        # drives are busier in the window than in the long run, where they only keep up with the
        # copy: their utilisations are scaled to that (they read 100% busy before).
        assert max(u for name, u in point.utilization.items() if ".drive" in name) < 0.8


def test_write_behind_keeps_the_arrays_busy_with_one_stream_per_node() -> None:
    # 16 threads, one per client: each stream may have its node's 72 write-behind threads busy, so
    # 16 x 72 block writes are in flight and the arrays' write paths (4 x 5.5 GB/s) are the limit.
    system = load_system(PIXSTOR)
    point = run_point(system, find_workload("pixstor-iozone-seq"), "write", 16, seed=2)
    assert point.value == pytest.approx(22e9, rel=0.02)
    assert ".ctrl" in point.bottleneck or ".drive" in point.bottleneck


def test_small_buffered_records_are_flushed_as_whole_blocks() -> None:
    # 64 KiB records through the pagepool: write-behind flushes whole 8 MiB blocks, so the arrays
    # see block writes and 16 streams reach the arrays' 22 GB/s as 16 MiB records do. (Each record
    # used to be its own NSD request at a random place on the LUN: 0.5-2 MB/s per thread.)
    from sim.benchmarks.cmdline import parse_command

    system = load_system(PIXSTOR)
    small = parse_command("iozone -i 0 -c -e -w -r 64k -s 64g -t 16 -+m hosts")
    point = run_point(system, small, "write", 16, seed=2, check=False)  # refused by pfssim run (< 2 MiB)
    assert point.value == pytest.approx(22e9, rel=0.02)


def test_direct_records_of_one_block_share_its_place_on_the_lun() -> None:
    # O_DIRECT 1 MiB reads of an 8 MiB block: the block is at one (scattered) place on its LUN, so
    # its records are consecutive there and the ME4 reads ahead of them: faster than with the
    # read-ahead disabled, where each record pays its own positioning.
    from sim.benchmarks.cmdline import parse_command

    system = load_system(PIXSTOR)
    direct = parse_command("iozone -i 1 -c -e -w -I -r 1m -s 64g -t 1")
    ahead = run_point(system, direct, "read", 1, seed=2)
    for enclosure in system.enclosure_read_ahead:
        system.enclosure_read_ahead[enclosure] = "disabled"
    plain = run_point(system, direct, "read", 1, seed=2)
    assert ahead.value > 2 * plain.value


def test_random_reads_of_a_file_held_in_the_pagepool_name_the_thread_copying_them() -> None:
    # A 4 KiB file fits in the 16 GiB pagepool: every read is a hit, a 4 KiB copy by the thread at
    # client_memcpy_Bps; no device is visited, so the thread is what the rate waits on (it used to
    # be named nothing, with no utilisation at all).
    from sim.benchmarks.cmdline import parse_command

    system = load_system(PIXSTOR)
    workload = parse_command("iozone -i 2 -w -O -r 4k -s 4k -t 1")
    point = run_point(system, workload, "random_read", 1, seed=2, check=False)  # its write is refused
    assert point.value == pytest.approx(value("client_memcpy_Bps") / 4096, rel=0.01)
    assert point.bottleneck == f"{system.clients[0]}.thread0"
    assert point.bottleneck_utilization == pytest.approx(1.0)
    assert all(u <= 1.0 for u in point.utilization.values())


@pytest.mark.parametrize(("threads", "hits"), [(16, 0.5), (32, 0.25)])
def test_random_reads_hit_the_pagepool_in_proportion_to_the_streams_share(threads: int, hits: float) -> None:
    # PixStor's random test: 16 GiB pagepools, 32 GiB files. One stream per node holds half its
    # file in the pagepool; two share it, a quarter each. A hit is a 4 KiB copy by the thread.
    system = load_system(PIXSTOR)
    point = run_point(system, find_workload("pixstor-iozone-random"), "random_read", threads, seed=2)
    copy = 4096 / value("client_memcpy_Bps")
    copied = sum(u for name, u in point.utilization.items() if ".thread" in name) * point.simulated_s / copy
    assert copied / point.requests == pytest.approx(hits, abs=0.03)


@pytest.mark.parametrize(("op", "window"), [("write", 2 * 18), ("read", 32 * 2**30 // 4 // 2**23)])
def test_stream_windows(op: str, window: int) -> None:
    # 64 threads on 16 nodes: 4 streams a node. A reader may run its share of the 32 GiB pagepool
    # ahead (1024 blocks of 8 MiB); a writer's bound is twice its share of the 72 threads (2 x 18).
    model = build_model(load_system(PIXSTOR), find_workload("pixstor-iozone-seq"), op, 64)
    assert set(model.window) == {window}


def test_prefetched_blocks_are_supplied_ahead_of_the_reader_within_its_window() -> None:
    # Conservation: a stream's reader takes only blocks that have arrived, and what has arrived and
    # not been read is bounded by the stream's window (so both have one long-run rate).
    system = load_system(PIXSTOR)
    model = build_model(system, find_workload("pixstor-iozone-seq"), "read", 8)
    model.start()
    meter, env, unit = model.ctx.meter, model.ctx.env, model.unit
    for until in (0.05, 0.2, 0.5, 1.0):
        env.run(until=until)
        assert meter.by_supply
        for t in range(8):
            ahead = meter.supplied_per_thread[t] - meter.per_thread[t]
            assert 0.0 <= ahead <= model.window[t] * unit
    assert meter.amount > 0 and meter.supplied >= meter.amount


def test_prefetched_reads_are_estimated_from_their_supply(monkeypatch: pytest.MonkeyPatch) -> None:
    # Eight streams reading: the reader's in-order stalls make batches of its completions swing
    # widely, so within the drive budget the direct estimate is loose (about +-15%); the supply
    # gives a 2% interval from the same budget, and its value lies within the direct interval.
    from sim.engine.meter import Meter

    system = load_system(PIXSTOR)
    workload = find_workload("pixstor-iozone-seq")
    supplied = run_point(system, workload, "read", 8, seed=3)
    assert supplied.converged and supplied.ci_high - supplied.ci_low <= 0.04 * supplied.value
    monkeypatch.setattr(Meter, "supply", lambda self, thread, amount: None)  # no supply: the direct estimate
    direct = run_point(system, workload, "read", 8, seed=3)
    assert direct.ci_high - direct.ci_low > 2 * (supplied.ci_high - supplied.ci_low)
    assert direct.ci_low <= supplied.value <= direct.ci_high


def _pixstor_variant(tmp_path: Path, old: str, new: str, name: str):  # noqa: ANN202 - the System
    """pixstor-large with ``old`` replaced by ``new``, loaded from ``tmp_path`` (with a copy of the
    parts catalogue beside it)."""
    import shutil

    shutil.copytree(ROOT / "topologies" / "parts", tmp_path / "parts", dirs_exist_ok=True)
    text = PIXSTOR.read_text()
    assert old in text
    path = tmp_path / name
    path.write_text(text.replace(old, new))
    return load_system(path)


def _replicated(tmp_path, replicas: int):  # noqa: ANN202 - the System
    return _pixstor_variant(
        tmp_path, "  data_replicas: 1\n", f"  data_replicas: {replicas}\n", f"replicas{replicas}.yaml"
    )


def test_data_replicas_write_every_block_on_that_many_nsds(tmp_path) -> None:  # noqa: ANN001
    """GPFS data replication: the client writes each copy, so with 2 replicas the usable capacity
    and the write ceiling halve, a write at 64 threads (array-bound, 22 GB/s with one copy) halves,
    and reads are unchanged (one copy is read)."""
    from sim.topology.bounds import max_flow_bound
    from sim.topology.capacity import capacity

    one, two = load_system(PIXSTOR), _replicated(tmp_path, 2)
    assert capacity(two).usable_B == pytest.approx(capacity(one).usable_B / 2)
    assert max_flow_bound(two, "write").Bps == pytest.approx(max_flow_bound(one, "write").Bps / 2)
    assert max_flow_bound(two, "read").Bps == max_flow_bound(one, "read").Bps
    # The ceiling with every NSD taking an equal share (striping's) halves too.
    from sim.topology.bounds import even_share_bound

    assert even_share_bound(two, "write").Bps == pytest.approx(even_share_bound(one, "write").Bps / 2)
    assert even_share_bound(two, "read").Bps == pytest.approx(even_share_bound(one, "read").Bps)
    workload = find_workload("pixstor-iozone-seq")
    write = run_point(two, workload, "write", 64, seed=2)
    assert write.value == pytest.approx(22e9 / 2, rel=0.02)
    read = run_point(two, workload, "read", 64, seed=2)
    assert read.value == pytest.approx(run_point(one, workload, "read", 64, seed=2).value, rel=0.03)


def test_data_replicas_copies_sit_on_distinct_nsds_in_the_same_block_slot_order(tmp_path) -> None:  # noqa: ANN001
    """Copy k of a block goes k / replicas of the way round the NSD list, at the block's slot moved
    by the same fraction of the NSD, with the offset within the block kept."""
    system = _replicated(tmp_path, 3)
    model = build_model(system, find_workload("pixstor-iozone-seq"), "write", 1)
    nsds = system.storage_targets
    block = model.block
    copies = model._copies(nsds[1], 5 * block + 4096)
    assert [n for n, _ in copies] == [nsds[1], nsds[1 + len(nsds) // 3], nsds[1 + 2 * len(nsds) // 3]]
    assert all(offset % block == 4096 for _, offset in copies)
    assert len({offset // block for _, offset in copies}) == 3


def test_more_data_replicas_than_data_nsds_is_refused_at_the_key(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    """Three copies of every block need three data NSDs; with two the system is refused, located
    at filesystem.data_replicas (its line in the topology)."""
    from sim.benchmarks.runnable import check_runnable
    from sim.errors import WorkloadError
    from sim.topology.model import System

    system = _replicated(tmp_path, 3)
    monkeypatch.setattr(System, "storage_targets", property(lambda self: ["me4084-0.vd0", "me4084-0.vd1"]))
    with pytest.raises(WorkloadError) as caught:
        check_runnable(system, find_workload("pixstor-iozone-seq"))
    (problem,) = caught.value.problems
    assert problem.path == "filesystem.data_replicas" and problem.line is not None
    assert "data_replicas 3 needs as many data NSDs" in problem.message and "has 2" in problem.message


PIXSTOR_CLIENTS = """clients:
  - name: c6230-{i}
    count: 8
    part: poweredge-c6420
    cpu: xeon-gold-6230
    memory: 192 GiB
    hcas:
      - {part: connectx6-hdr, switch: [ib0, ib1]}
  - name: c6148-{i}
    count: 8
    part: poweredge-c6420
    cpu: xeon-gold-6148
    memory: 192 GiB
    hcas:
      - {part: connectx6-hdr, switch: [ib0, ib1]}
"""


@pytest.mark.parametrize("switches", [["ib0"], ["ib0", "ib1"]])
def test_a_node_spreads_its_nsd_traffic_over_its_hcas(tmp_path: Path, switches: list[str]) -> None:
    # PixStor with one client node whose HDR HCAs sit in PCIe Gen3 x4 slots (3.94 GB/s each, under
    # the arrays' 22 GB/s of writes): 16 writing threads are held by the node's HCAs. With one on
    # each fabric (verbsPorts on ib0 and ib1) its threads are dealt to both, each reaching the NSD
    # servers' HCAs on its own fabric, and the rate doubles (every request used to leave by the
    # first HCA: 3.94 GB/s with two).
    hca = "      - {part: connectx6-hdr, switch: %s, overrides: {host: {bus: pcie4, lanes: 4}}}\n"
    text = PIXSTOR.read_text()
    assert text.count(PIXSTOR_CLIENTS) == 1, "test fixture out of date"
    one_node = "clients:\n  - name: node{i}\n    count: 1\n    part: poweredge-c6420\n    cpu: xeon-gold-6230\n"
    one_node += "    memory: 192 GiB\n    hcas:\n" + "".join(hca % switch for switch in switches)
    (tmp_path / "parts").symlink_to(ROOT / "topologies" / "parts")
    path = tmp_path / "pixstor.yaml"
    path.write_text(text.replace(PIXSTOR_CLIENTS, one_node))
    system = load_system(path)
    link = system.components["node0.hca0"].write_Bps
    assert link == pytest.approx(4 * 0.985e9)
    assert summarize(system).write.Bps == pytest.approx(len(switches) * link)
    point = run_point(system, find_workload("pixstor-iozone-seq"), "write", 16, seed=2)
    assert point.value == pytest.approx(len(switches) * link, rel=0.02)
    busy = {name: u for name, u in point.utilization.items() if name.startswith("node0.hca")}
    assert sorted(busy) == [f"node0.hca{h}.tx" for h in range(len(switches))]
    assert all(u == pytest.approx(1.0, abs=0.02) for u in busy.values())
    servers = {name for name, u in point.utilization.items() if ".hca" in name and not name.startswith("node0.")}
    assert {system.hca_switch[name.rsplit(".", 1)[0]] for name in servers} == set(switches)


SERVER_ZONE_HCA = {
    "ib0": "      - hcas:\n          - {part: connectx6-hdr, switch: ib0}\n",
    "ib1": "      - hcas:\n          - {part: connectx6-hdr, switch: ib1}\n",
}


def test_a_server_zone_with_two_hcas_on_a_switch_carries_on_both(tmp_path: Path) -> None:
    # PixStor with two HDR HCAs in every server zone, each in a PCIe Gen3 x2 slot (1.97 GB/s, so
    # that the eight HCAs of the two data servers, 15.8 GB/s, hold 16 writers under the arrays'
    # 22 GB/s). The clients alternate between ib0 and ib1, so those on one switch are all even (or
    # all odd) threads: picked by the first thread's index, every path from a switch's clients took
    # the same one of a zone's two HCAs, and the rate was half the HCAs' (until session 33). Dealt
    # over the NSDs, each client's paths use both.
    slow = "          - {part: connectx6-hdr, switch: %s, overrides: {host: {bus: pcie3, lanes: 2}}}\n"
    text = PIXSTOR.read_text()
    for switch, zone in SERVER_ZONE_HCA.items():
        assert text.count(zone) == 1, "test fixture out of date"
        text = text.replace(zone, "      - hcas:\n" + 2 * (slow % switch))
    (tmp_path / "parts").symlink_to(ROOT / "topologies" / "parts")
    path = tmp_path / "pixstor.yaml"
    path.write_text(text)
    system = load_system(path)
    link = system.components["storage0.numa0.hca1"].write_Bps
    assert link == pytest.approx(2 * 0.985e9)
    point = run_point(system, find_workload("pixstor-iozone-seq"), "write", 16, seed=2)
    servers = {n: u for n, u in point.utilization.items() if n.startswith("storage") and ".hca" in n}
    assert len(servers) == 8, servers
    assert all(u == pytest.approx(1.0, abs=0.03) for u in servers.values()), servers
    assert point.value == pytest.approx(8 * link, rel=0.03)


def test_paths_resolved_per_device_are_dealt_a_services_hcas_in_turn() -> None:
    # A service with two HCAs on the client's switch: one client HCA's devices alternate between
    # them, and the next client HCA dealt the same pair starts on the other; a client HCA on a
    # switch the service has one HCA on always takes that one.
    import simpy

    from sim.engine.rng import Streams
    from sim.fs.platform import Platform

    system = load_system(PIXSTOR)
    platform = Platform(simpy.Environment(), system, Streams(1))
    ib0 = [h for c in system.clients for h in system.client_hcas[c] if system.hca_switch[h] == "ib0"]
    ib1 = [h for c in system.clients for h in system.client_hcas[c] if system.hca_switch[h] == "ib1"]
    pair = ("x.hca0", "x.hca1", "storage0.numa1.hca0")
    system.hca_switch.update({"x.hca0": "ib0", "x.hca1": "ib0"})
    try:
        first = [platform.deal_server_hca(ib0[0], pair, rank) for rank in range(4)]
        second = [platform.deal_server_hca(ib0[1], pair, rank) for rank in range(4)]
        assert first == ["x.hca0", "x.hca1", "x.hca0", "x.hca1"]
        assert second == ["x.hca1", "x.hca0", "x.hca1", "x.hca0"]
        assert {platform.deal_server_hca(ib1[1], pair, rank) for rank in range(4)} == {"storage0.numa1.hca0"}
    finally:
        del system.hca_switch["x.hca0"], system.hca_switch["x.hca1"]


def test_direct_calls_larger_than_a_block_count_as_one_call_in_flight() -> None:
    # O_DIRECT 256 MiB transfers: each call is 32 block pieces in flight together, but the
    # measurement batches count calls, so a generation of calls in flight is one per task (it was
    # 16 x 32 = 512 calls, 128 GiB a batch; IOR -B -t 1g at 16 tasks ran for more than 5 minutes).
    from sim.benchmarks.cmdline import parse_command

    workload = parse_command("mpirun -np 16 ior -a POSIX -w -e -B -t 256m -b 16g")
    model = build_model(load_system(PIXSTOR), workload, "write", 16)
    assert model.pieces_per_call() == 32
    assert model.outstanding() == 16


@pytest.mark.parametrize(("op", "direction"), [("write", "tx"), ("read", "rx")])
def test_direct_records_of_a_block_and_a_half_move_their_bytes(op: str, direction: str) -> None:
    # O_DIRECT 12 MiB records on 8 MiB blocks are cut at block boundaries (8 + 4 MiB, then 4 + 8):
    # what the point counts is what crossed the client's HCA. Each record used to be one 8 MiB
    # request counted as 12 MiB, so 64 threads wrote 33 GB/s through 22 GB/s of controllers.
    from sim.benchmarks.cmdline import parse_command

    system = load_system(PIXSTOR)
    workload = parse_command("iozone -i 0 -i 1 -e -I -r 12m -s 48g -t 1")
    point = run_point(system, workload, op, 1, seed=2)
    hca = f"{system.clients[0]}.hca0"
    carried = point.utilization[f"{hca}.{direction}"] * system.components[hca].write_Bps
    assert point.value == pytest.approx(carried, rel=0.03)
    model = build_model(system, workload, op, 1)
    pieces = next(model._record_pieces(0, model.ctx.streams("test")))
    assert sorted(size for _, _, size in pieces) == [4 * 2**20, 8 * 2**20]


@pytest.mark.parametrize("op", ["write", "read", "random_write"])
def test_direct_records_that_do_not_divide_a_block_are_cut_at_its_boundary(
    op: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # O_DIRECT 3 MiB records on 8 MiB blocks: every third crosses a block boundary (6-9 MiB), and
    # the next block is on the next NSD. Each record is cut there, so no NSD request spans two
    # blocks (a GPFS review: the crossing records were one request to the first block's NSD, and
    # -r 3m wrote 13.5 GB/s at 16 threads on pixstor-large; cut, 19.2).
    from sim.benchmarks.cmdline import parse_command
    from sim.benchmarks.driver import Precision
    from sim.fs.gpfs import NsdPaths

    sent: list[tuple[float, float]] = []
    request = NsdPaths.request

    def recorded(self, t, nsd, op, offset, size, stream):  # noqa: ANN001, ANN202 - NsdPaths.request's
        sent.append((offset, size))
        return request(self, t, nsd, op, offset, size, stream)

    monkeypatch.setattr(NsdPaths, "request", recorded)
    system = load_system(PIXSTOR)
    workload = parse_command(f"iozone {'-i 2' if op.startswith('random') else '-i 0 -i 1'} -I -r 3m -s 48g -t 1")
    run_point(system, workload, op, 1, seed=2, precision=Precision(max_device_ops=5_000))
    block = 8 * 2**20
    assert len(sent) > 100 and {size for _, size in sent} <= {3 * 2**20, 2 * 2**20, 2**20}
    assert all(offset // block == (offset + size - 1) // block for offset, size in sent)


def test_buffered_random_ops_of_records_larger_than_a_block_count_records() -> None:
    # One thread of buffered 16 MiB random writes copies 16 MiB into the pagepool per op: its rate
    # is the copy rate over 16 MiB. Each 8 MiB block used to count as an op (twice the op/s).
    from sim.benchmarks.cmdline import parse_command

    system = load_system(PIXSTOR)
    workload = parse_command("iozone -i 2 -w -r 16m -s 64g -t 1")
    point = run_point(system, workload, "random_write", 1, seed=2)
    assert point.value == pytest.approx(value("client_memcpy_Bps") / 2**24, rel=0.02)


def _lun_concurrency(
    workload: str, op: str, threads: int, until: float, system: object = None
) -> tuple[dict[str, int], object]:
    """Run a PixStor point's model (or ``system``'s) for ``until`` simulated seconds and return the
    most requests each LUN had at its controller at once, and the model."""
    model = build_model(system or load_system(PIXSTOR), find_workload(workload), op, threads)
    platform = model.ctx.platform
    original = platform.storage_io
    now: dict[str, int] = {}
    most: dict[str, int] = {}

    def counted(nsd, *args):  # noqa: ANN001, ANN202 - wraps Platform.storage_io
        now[nsd] = now.get(nsd, 0) + 1
        most[nsd] = max(most.get(nsd, 0), now[nsd])
        event = original(nsd, *args)
        event.callbacks.append(lambda _event: now.__setitem__(nsd, now[nsd] - 1))
        return event

    platform.storage_io = counted
    model.start()
    model.ctx.env.run(until=until)
    return most, model


def test_a_luns_large_requests_wait_for_its_nsd_queues_threads() -> None:
    # 256 readers keep far more 8 MiB block reads waiting than a LUN's queue has threads
    # (nsdThreadsPerQueue, 16): no LUN ever has more than 16 at its controller, and the busiest
    # reach 16; the queue is a pool named after the LUN, reported with the others.
    k = int(value("gpfs_nsd_threads_per_queue"))
    assert k == 16
    most, model = _lun_concurrency("pixstor-iozone-seq", "read", 256, until=0.5)
    assert len(most) == 32 and max(most.values()) == k
    pools = model.ctx.platform.pools
    assert {name for name in pools if name.endswith(".nsd-queue")} == {f"{nsd}.nsd-queue" for nsd in most}
    assert all(pools[f"{nsd}.nsd-queue"].size == k for nsd in most)


def test_a_topology_sets_the_nsd_servers_threads(tmp_path: Path) -> None:
    # filesystem.nsd_threads (nsdMaxWorkerThreads, nsdThreadsPerQueue) replaces the parameters'
    # 1024 and 16 for that system: 4 threads per LUN queue hold each LUN to 4 block reads at once.
    system = _pixstor_variant(
        tmp_path, "  pagepool: {client: 32 GiB, server: 96 GiB}\n",
        "  pagepool: {client: 32 GiB, server: 96 GiB}\n  nsd_threads: {max_worker: 64, per_queue: 4}\n",
        "nsd-threads.yaml",
    )  # fmt: skip
    most, model = _lun_concurrency("pixstor-iozone-seq", "read", 256, until=0.2, system=system)
    assert max(most.values()) == 4
    pools = model.ctx.platform.pools
    assert {pools[f"{nsd}.nsd-queue"].size for nsd in most} == {4}
    assert {pool.size for name, pool in pools.items() if name.endswith(".threads")} == {64}


def test_nsd_queue_threads_beyond_the_servers_workers_are_refused(tmp_path: Path) -> None:
    import shutil

    shutil.copytree(ROOT / "topologies" / "parts", tmp_path / "parts")
    text = PIXSTOR.read_text().replace(
        "  pagepool: {client: 32 GiB, server: 96 GiB}\n",
        "  pagepool: {client: 32 GiB, server: 96 GiB}\n  nsd_threads: {max_worker: 8, per_queue: 16}\n",
    )
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    line = text.splitlines().index("  nsd_threads: {max_worker: 8, per_queue: 16}") + 1
    result = run_cli("validate", str(path))
    assert result.code == 2
    assert f"{path}:{line} filesystem.nsd_threads: per_queue (16) is more than max_worker (8)" in result.stdout


def test_small_requests_are_not_held_by_the_luns_queue(monkeypatch: pytest.MonkeyPatch) -> None:
    # 4 KiB random reads go to the small-I/O queues: even with one large-I/O thread per LUN, 512
    # readers keep several reads at a LUN at once, and no LUN queue is made for them.
    one = replace(PARAMETERS["gpfs_nsd_threads_per_queue"], value=1)
    monkeypatch.setitem(PARAMETERS, "gpfs_nsd_threads_per_queue", one)
    most, model = _lun_concurrency("pixstor-iozone-random", "random_read", 512, until=0.2)
    assert max(most.values()) > 1
    assert not [name for name in model.ctx.platform.pools if name.endswith(".nsd-queue")]
    # The same single thread per LUN does hold the large reads to one at a time.
    most, _model = _lun_concurrency("pixstor-iozone-seq", "read", 256, until=0.2)
    assert max(most.values()) == 1


@pytest.mark.parametrize("allocation", ["scattered", "cluster"])
def test_sequential_direct_writes_start_with_whole_stripes_in_the_caches(allocation: str, tmp_path: Path) -> None:
    # O_DIRECT 1 MiB records on 8+2 RAID6 with 512 KiB chunks (4 MiB stripes): a long run's streams
    # fill each block's stripes in order, so the caches hold whole stripes, at most the stripe a
    # stream is still filling partly. (Isolated 1 MiB units, the rule before, were all partial
    # stripes: read-modify-writes that lingered for seconds and made the point's value depend on
    # how long it ran.) Random 4 KiB writes hold isolated partial stripes, as their long run does.
    from sim.benchmarks.cmdline import parse_command

    system = _pixstor_variant(tmp_path, "  allocation: scattered\n", f"  allocation: {allocation}\n", "fs.yaml")
    assert system.spec.filesystem.allocation == allocation
    direct = parse_command("iozone -i 0 -c -e -w -r 1m -I -s 8g -t 64 -+n -+m hosts")
    model = build_model(system, direct, "write", 64)
    model.prefill_caches()
    caches = {v: c for ctl in model.ctx.platform.controllers.values() for v, c in ctl.caches.items() if v in model.nsds}
    assert caches and all(c.held + c.active == c.entries for c in caches.values())  # full (destages started)
    # With cluster allocation the caches hold each thread's latest blocks, so a LUN holds the
    # stripe of every thread that goes on writing there, still filling.
    filling = dict.fromkeys(caches, 0)
    if allocation == "cluster":
        positions, _count, step = model._first_positions()
        for t, position in enumerate(positions):
            filling[model._step_pieces(t, position, step)[0][0]] += 1
    for nsd, cache in caches.items():
        # Partial stripes: the ones still filling, and the one whose first unit sized the destages
        # (ME4 ``prefill`` draws a sample for that and does not hold it).
        assert len(cache.order) <= 2 + filling[nsd]
        for _start, entry in cache.full:
            begin, end = cache.extent[entry]
            assert begin % cache.width == 0 and (end - begin) % cache.width == 0

    random = build_model(system, find_workload("pixstor-iozone-random"), "random_write", 64)
    random.prefill_caches()
    partial = [c for ctl in random.ctx.platform.controllers.values() for v, c in ctl.caches.items() if v in random.nsds]
    assert partial and all(not c.full and len(c.order) == c.held for c in partial)


def test_a_write_load_the_destages_keep_up_with_leaves_the_caches_at_their_watermark() -> None:
    # One O_DIRECT 1 MiB writer over 32 LUNs loads no drive much: its rate is its own latency's.
    # Its caches start at the flush watermark and stay there; started full (as every write point
    # was before session 18), the drives destaged the prefilled surplus for the whole point and
    # were reported 100% busy, named the bottleneck of a latency-bound rate.
    from sim.benchmarks.cmdline import parse_command

    system = load_system(PIXSTOR)
    direct = parse_command("iozone -i 0 -c -e -w -r 1m -I -s 8g -t 64 -+n")
    point = run_point(system, direct, "write", 1)
    drives = [u for name, u in point.utilization.items() if ".drive" in name]
    assert drives and max(drives) < 0.5
    assert point.limit == "latency"
    assert ".drive" not in point.bottleneck


def test_a_write_load_that_outruns_the_destages_runs_with_the_caches_full() -> None:
    # 4 KiB random writes: each destage is a read-modify-write, far slower than the writes arrive,
    # so a cache started at its watermark fills within milliseconds and the point starts again
    # full. (Had the half-empty start been kept, the point converged before the caches filled:
    # 1.26M IOPS at 8 threads, the controllers' command rate, instead of the drives' 12K.)
    system = load_system(PIXSTOR)
    point = run_point(system, find_workload("pixstor-iozone-random"), "random_write", 8)
    assert 8e3 < point.value < 20e3
    assert ".drive" in point.bottleneck and point.bottleneck_utilization > 0.95


def test_a_point_started_again_full_is_charged_with_its_pilot() -> None:
    # The point's wall time, requests and events are everything computing it took, the pilot at
    # the watermark included (bench/ reads them; before session 21 the pilot's share, up to 40% of
    # a beegfs-high-capacity IOR write point, went uncounted).
    from sim.benchmarks import driver

    system = load_system(PIXSTOR)
    workload = find_workload("pixstor-iozone-random")
    args = (system, workload, "random_write", 8, 1, driver.DEFAULT_PRECISION)
    with pytest.raises(driver._CacheFilled) as caught:
        driver._steady_point(*args, 0.5)
    pilot = caught.value
    alone = driver._steady_point(*args, 1.0)
    point = run_point(*args)
    assert pilot.requests > 0 and pilot.events > pilot.requests and pilot.wall_s > 0
    assert point.value == alone.value
    assert point.requests_total == alone.requests_total + pilot.requests
    assert point.events_total == alone.events_total + pilot.events
    assert point.wall_s > pilot.wall_s


def test_a_pilot_whose_cache_fills_stops_at_the_first_batch_that_shows_it(monkeypatch: pytest.MonkeyPatch) -> None:
    # The watermark-first run of the point above is a pilot: its caches grow from the first batch
    # on, so it must stop there and not run the batches a converged estimate needs (session 18
    # tested the growth only at the point's end, which ran every such pilot to convergence).
    from sim.benchmarks import driver

    marks = []
    take = driver._Mark.take
    monkeypatch.setattr(driver._Mark, "take", classmethod(lambda cls, *a: marks.append(1) or take(*a)))
    system = load_system(PIXSTOR)
    workload = find_workload("pixstor-iozone-random")
    with pytest.raises(driver._CacheFilled):
        driver._steady_point(system, workload, "random_write", 8, 1, driver.DEFAULT_PRECISION, 0.5)
    assert 1 < len(marks) <= driver.DEFAULT_PRECISION.min_batches // 2


def test_cluster_allocation_lays_each_files_blocks_in_order_on_each_nsd(tmp_path: Path) -> None:
    """With cluster allocation a file's blocks go round the NSDs from the file's first NSD, and on
    each NSD they follow one another: block b of thread t's file sits in slot t x 7919 + b // d of
    its NSD (d NSDs; 7919 keeps different files' runs apart). Scattered allocation draws the slot."""
    system = _pixstor_variant(tmp_path, "  allocation: scattered\n", "  allocation: cluster\n", "cluster.yaml")
    model = build_model(system, find_workload("pixstor-iozone-seq"), "write", 2)
    d = len(model.nsds)
    stream = model.ctx.streams("test")
    nsd = model.nsds[0]
    slots = int(model.ctx.platform.raids[nsd].capacity // model.block)
    assert [model._slot(0, nsd, k * d, None, stream) for k in range(4)] == [0, 1, 2, 3]
    assert [model._slot(1, nsd, k * d + 5, None, stream) for k in range(3)] == [(7919 + k) % slots for k in range(3)]


def test_each_file_starts_on_an_nsd_of_its_own_and_a_shared_file_on_one() -> None:
    """Files created together start their block rounds on NSDs drawn per file (a seed's layout);
    IOR's one shared file has one first NSD for every task."""
    system = load_system(PIXSTOR)
    nn = build_model(system, find_workload("pixstor-iozone-seq"), "write", 64)
    assert len(set(nn.starts)) >= 16  # 64 draws over 32 NSDs
    n1 = build_model(system, find_workload("pixstor-ior-n1"), "write", 64)
    assert n1.shared and len(set(n1.starts)) == 1
    # A thread's block b is on the NSD b places round from its file's first.
    nsds = [nsd for nsd, _offset, _size in _first_blocks(nn, 5)]
    assert nsds == [nn.nsds[(nn.starts[5] + b) % len(nn.nsds)] for b in range(3)]


class _FirstUnit:
    """A stream that always draws 0: a thread's units start at its file's first and slots at 0."""

    def integer(self, count: int) -> int:
        return 0


def _first_blocks(model, t: int) -> list[tuple[str, float, float]]:  # noqa: ANN001 - a GPFS model
    """The first unit of each of thread ``t``'s first three blocks, from the start of its file."""
    from itertools import islice

    per_block = max(int(model.block // model.unit), 1)
    units = list(islice(model._units(t, _FirstUnit()), 3 * per_block))
    return units[::per_block]


@pytest.mark.parametrize(("op", "memcpy_Bps"), [("read", 1e6), ("write", 1e15)])
def test_one_stream_holds_exactly_its_window_of_blocks(
    op: str, memcpy_Bps: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    # One stream on pixstor-large with its window cut to 8 blocks. A reader copying at 1 MB/s (8.4 s
    # a block) leaves its prefetcher free to run ahead: it stops when 8 blocks are issued and not
    # yet taken, never at 9. A writer copying at 1e15 B/s fills the pagepool far faster than the
    # NSDs flush: it stops when 8 blocks are dirty (copied and not yet flushed), never at 9.
    import sim.fs.gpfs as gpfs
    from sim.engine.meter import Meter

    memcpy = replace(PARAMETERS["client_memcpy_Bps"], value=memcpy_Bps)
    monkeypatch.setitem(PARAMETERS, "client_memcpy_Bps", memcpy)
    window = 8
    model = build_model(load_system(PIXSTOR), find_workload("pixstor-iozone-seq"), op, 1)
    model.window = [window]
    peak = [0]
    if op == "read":

        class Ready(gpfs.deque):  # the reader's deque of issued blocks not yet taken
            def append(self, item: object) -> None:
                super().append(item)
                peak[0] = max(peak[0], len(self))

        monkeypatch.setattr(gpfs, "deque", Ready)
    else:
        # Dirty blocks when the writer counts a copied block: copies so far less finished flushes.
        counts = {"copied": 0, "flushed": 0}
        request, add = model.paths.request, Meter.add

        def flush(*args):  # noqa: ANN002, ANN202 - wraps NsdPaths.request
            result = yield from request(*args)
            counts["flushed"] += 1
            return result

        def copied(meter: Meter, t: int, amount: float) -> None:
            counts["copied"] += 1
            peak[0] = max(peak[0], counts["copied"] - counts["flushed"])
            add(meter, t, amount)

        model.paths.request = flush
        monkeypatch.setattr(Meter, "add", copied)
    model.start()
    model.ctx.env.run(until=0.5)
    assert peak[0] == window


ONE_ARRAY = ROOT / "tests" / "data" / "gpfs-one-array.yaml"


def test_cluster_allocated_caches_start_with_the_blocks_just_behind_each_writer(tmp_path: Path) -> None:
    """A long sequential run leaves each thread's latest blocks in the caches, and with cluster
    allocation those lie just behind where the thread writes next, in the same zone of the LUN.
    The prefill repeats the threads' own draws of where they start: the first request each thread
    makes is the step after the newest piece the caches start with for it."""
    from sim.benchmarks.cmdline import parse_command

    system = _pixstor_variant(tmp_path, "  allocation: scattered\n", "  allocation: cluster\n", "cluster.yaml")
    workload = parse_command("iozone -i 0 -c -e -w -I -r 1m -s 8g -t 3")
    model = build_model(system, workload, "write", 3, seed=4)
    positions, count, step = model._first_positions()
    assert step == 2**20 and count == 8 * 1024
    first: dict[int, tuple[str, float, float]] = {}
    request = model.paths.request

    def recording(t, nsd, op, offset, size, stream):  # noqa: ANN001, ANN202 - NsdPaths.request's
        first.setdefault(t, (nsd, offset, size))
        return request(t, nsd, op, offset, size, stream)

    model.paths.request = recording
    model.start()
    model.ctx.env.run(until=0.01)
    assert first == {t: model._step_pieces(t, positions[t], step)[0] for t in range(3)}
    # Newest first, a block of each thread in turn: first the steps of its current block before
    # where it starts, the newest of them just behind its first request.
    walk = model._blocks_behind(0, positions[0], count, step)
    current = next(walk)
    assert current[0] == model._step_pieces(0, positions[0] - 1, step)[0]
    per_block = model.block // step
    assert len(current) == (positions[0] % per_block or per_block)
    older = next(walk)  # the file's block before, whole, on the NSD before in the round
    assert len(older) == per_block and len({(nsd, offset // model.block) for nsd, offset, _size in older}) == 1
    assert older[0][0] == model.nsds[(model.nsd_index[current[0][0]] - 1) % len(model.nsds)]


def test_a_cluster_allocated_writer_gives_the_same_rate_whatever_the_seed() -> None:
    """One O_DIRECT writer on one RAID6 8+2 with cluster allocation: its blocks are whole stripes
    near the outer edge of the LUN, and every seed's interval must hold the others' estimates. The
    caches used to start holding blocks from a random place on the LUN, whose destages ran at the
    inner tracks' rate for longer than the point ran: 1.17, 1.59 and 1.53 GB/s with seeds 1-3,
    each within +-1% (a teaching review; long runs give 1.87)."""
    from sim.benchmarks.cmdline import parse_command

    system = load_system(ONE_ARRAY)
    workload = parse_command("iozone -i 0 -c -e -w -r 1m -I -s 8g -t 1")
    points = [run_point(system, workload, "write", 1, seed=seed) for seed in (1, 2, 3)]
    for point in points:
        assert point.converged
        assert all(point.ci_low <= other.value <= point.ci_high for other in points), [p.value for p in points]
    # Near the data drives' outer-zone rate (8 x the catalogue's sequential write), not the inner one.
    data_rate = 8 * next(iter(system.drive_parts.values())).seq_write
    assert 0.85 * data_rate < points[0].value < data_rate


def test_writes_waiting_for_cache_room_name_the_drives_not_the_queue_holding_them(tmp_path: Path) -> None:
    """An architect's what-if: RAID6 of 16 drives with 64 KiB stripe units under 8 MiB blocks. The
    caches fill and writes wait for their read-modify-write destages, the drives 87% busy; every
    NSD queue is full of threads each holding a write until its cache takes it, and four times the
    threads per queue changed nothing. The queue used to be named; the drives are."""
    from sim.benchmarks.driver import POOL_FULL

    system = _pixstor_variant(
        tmp_path,
        "      - {count: 8, level: 6, members: 10, interleave: 2, stripe_unit: 512 KiB}\n",
        "      - {count: 5, level: 6, members: 16, interleave: 1, stripe_unit: 64 KiB}\n",
        "raid6-16.yaml",
    )
    point = run_point(system, find_workload("pixstor-iozone-seq"), "write", 16, seed=1)
    assert point.bottleneck.endswith(".drives") and point.bottleneck_utilization < POOL_FULL
    queues = [held for name, held in point.pool_occupancy.items() if name.endswith(".nsd-queue")]
    assert max(queues) >= POOL_FULL


def _two_luns(tmp_path: Path, replicas: int = 1):  # noqa: ANN202 - the System
    """tests/data/gpfs-one-array.yaml with two RAID6 8+2 (two NSDs) and ``replicas`` data copies,
    its parts copied beside it."""
    import shutil

    shutil.copytree(ROOT / "topologies" / "parts", tmp_path / "parts", dirs_exist_ok=True)
    text = ONE_ARRAY.read_text()
    for old, new in (
        ("count: 10}", "count: 20}"),
        ("- {level: 6, members: 10,", "- {count: 2, level: 6, members: 10,"),
        ("data_replicas: 1", f"data_replicas: {replicas}"),
    ):
        assert old in text
        text = text.replace(old, new)
    path = tmp_path / "two-luns.yaml"
    path.write_text(text)
    return load_system(path)


def test_a_file_of_fewer_blocks_than_nsds_starts_the_caches_it_reaches_and_no_other(tmp_path: Path) -> None:
    """A buffered writer of a 6 MiB file on 4 MiB blocks walks one whole block (the caches start with
    what whole steps wrote): the other LUN gets none of its pieces, and its cache starts as before,
    from a random place. The first version of the cluster prefill searched that LUN's pieces for
    ever (the review of session 36)."""
    import signal

    from sim.benchmarks.cmdline import parse_command

    system = _two_luns(tmp_path)

    def hung(_number: int, _frame: object) -> None:
        raise TimeoutError("the prefill searched for ever")

    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(60)
    try:
        point = run_point(system, parse_command("iozone -i 0 -r 2m -s 6m -e -t 1"), "write", 1, seed=1)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    assert point.value > 0


def test_cluster_prefill_of_cut_records_and_two_copies_holds_whole_stripes(tmp_path: Path) -> None:
    """3 MiB O_DIRECT records on 4 MiB blocks are cut at block boundaries, and with two data
    replicas every piece has a copy on the other NSD: the caches start with whole stripes but for
    the stripes the threads (and their copies) are still filling."""
    from sim.benchmarks.cmdline import parse_command

    system = _two_luns(tmp_path, replicas=2)
    model = build_model(system, parse_command("iozone -i 0 -r 3m -I -e -s 1g -t 4"), "write", 4)
    assert model.replicas == 2
    model.prefill_caches()
    caches = {v: c for ctl in model.ctx.platform.controllers.values() for v, c in ctl.caches.items() if v in model.nsds}
    positions, _count, step = model._first_positions()
    assert step == 3 * 2**20
    filling = dict.fromkeys(caches, 0)
    for t, position in enumerate(positions):
        for nsd, offset, _size in model._step_pieces(t, position, step):
            for copy, _offset in model._copies(nsd, offset):
                filling[copy] += 1
    for nsd, cache in caches.items():
        assert cache.held + cache.active == cache.entries
        assert len(cache.order) <= 2 + filling[nsd]
        for _start, entry in cache.full:
            begin, end = cache.extent[entry]
            assert begin % cache.width == 0 and (end - begin) % cache.width == 0


def test_a_cache_is_kept_full_when_most_of_its_entry_making_writes_waited() -> None:
    # (waits, writes that needed entries of their own) before and after a window, by LUN.
    from sim.benchmarks.driver import _caches_kept_full

    before = {"full": (10, 20), "burst": (0, 0), "idle": (3, 5)}
    after = {"full": (110, 120), "burst": (1, 100), "idle": (3, 5), "new": (4, 6)}
    assert _caches_kept_full(before, after) == {"full", "new"}
