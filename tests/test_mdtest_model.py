"""The metadata models behind mdtest: hand-computed single-thread cases and properties of the model."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sim.benchmarks.driver import Precision, run_point
from sim.cli.main import main
from sim.config.workload import MdtestWorkload
from sim.params import value
from sim.topology.build import load_system
from sim.topology.model import System
from tests.conftest import ROOT, build_model

TINY = Path(__file__).parent / "data" / "tiny.yaml"
PIXSTOR = ROOT / "topologies" / "pixstor-large.yaml"
TIGHT = Precision(rel_precision=0.01, min_batches=20, max_batches=200)
QUICK = Precision(min_batches=5, max_batches=10)


def _mdtest(
    write: str = "0 B",
    unique: bool = True,
    threads: int = 1,
    *,
    flat: bool = False,
    items: int = 256,
    stride: int = 0,
) -> MdtestWorkload:
    """Files only, 4 leaf directories (or, ``flat``, the top directory alone) of ``items`` files."""
    return MdtestWorkload(
        name="md",
        title="md",
        source="test",
        benchmark="mdtest",
        threads=[threads],
        files_only=True,
        unique_dir=unique,
        depth=0 if flat else 1,
        branching=1 if flat else 4,
        leaf_only=not flat,
        items_per_dir=items,
        write_bytes=write,
        read_bytes=write,
        stride=stride,
    )


def _tiny_with(tmp_path: Path, *edits: tuple[str, str]) -> Path:
    """tests/data/tiny.yaml with text replacements, written beside a link to the parts catalogue."""
    text = TINY.read_text()
    for old, new in edits:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    (tmp_path / "parts").symlink_to(ROOT / "topologies" / "parts")
    path = tmp_path / "tiny.yaml"
    path.write_text(text)
    return path


META_DRIVES = "drives: {part: intel-p4600-1.6tb, count: 2}}]"


def _mdt_write(system: System, name: str) -> float:
    """One MDT update on drive ``name`` at one thread: the drive's random write latency and the bytes
    crossing its link into its write buffer at its read rate (never full at one thread), the flash
    programming them behind."""
    assert system.drive_parts[name].write_buffer, "test fixture out of date"
    rate = system.components[name].read_Bps or 1.0
    return system.drive_parts[name].write_latency + value("beegfs_mdt_update_bytes") / rate


def test_beegfs_one_thread_one_metadata_service_by_hand() -> None:
    """Mean time per operation, written out from the model's stages and the MDT drives' datasheet."""
    system = load_system(TINY)
    request = value("beegfs_client_request_cpu_s") + 2 * value("network_latency_s") + value("beegfs_meta_request_cpu_s")
    # One ext4 block to the RAID1 MDT: both NVMe members write it at once (the PCIe hop is faster);
    # a drive takes a small write into its buffer across its link, the flash programming it behind.
    mdt_write = _mdt_write(system, "meta.numa0.drive0")
    expected = {
        "stat": request,
        "read": 2 * request,  # open + close, no data
        "create": 2 * request + mdt_write,  # open(O_CREAT) writes the MDT block, then close
        "remove": request + mdt_write,  # the chunk unlinks run after the (early) reply
    }
    for op, seconds in expected.items():
        point = run_point(system, _mdtest(), op, 1, seed=5, precision=TIGHT, whole_phase=False)
        assert point.unit == "op/s" and point.file_bytes == 0
        assert point.value == pytest.approx(1 / seconds, rel=0.02), op
        assert point.ci_low <= 1.02 / seconds and point.ci_high >= 0.98 / seconds, op


def test_gpfs_stat_and_read_one_thread_by_hand() -> None:
    """Cached stat is one call to the node's daemon, open+close of an empty file two."""
    system = load_system(PIXSTOR)
    call = value("gpfs_node_meta_call_s")
    for op, calls in (("stat", 1), ("read", 2)):
        point = run_point(system, _mdtest(), op, 1, seed=5, precision=TIGHT, whole_phase=False)
        assert point.value == pytest.approx(1 / (calls * call), rel=0.02), op
        assert point.bottleneck.endswith(".gpfs-daemon")


def test_gpfs_create_one_thread_by_hand() -> None:
    """creat + close on the node, and the inode written to two metadata NSDs at once.

    Each replica: two message latencies (the 4 KiB transfer is shorter), the NSD server's CPU
    (exponential, mean gpfs_nsd_block_cpu_s), the ME4024 controller's command time and write path,
    then the write-back cache. The slower of two exponential CPU times has mean 1.5 x theirs; the
    SAS hops and the wait for a cache slot (the cache is full, 32 SSD destages in flight) are
    below a microsecond each.
    """
    system = load_system(PIXSTOR)
    controller = system.components["me4024-0.ctrlA"]
    iops_write = system.enclosure_iops["me4024-0"][1] / 2  # per controller
    inode = 4096.0
    replica = 2 * value("network_latency_s") + 1 / iops_write + inode / (controller.write_Bps or 1)
    seconds = 2 * value("gpfs_node_meta_call_s") + replica + 1.5 * value("gpfs_nsd_block_cpu_s")
    point = run_point(system, _mdtest(), "create", 1, seed=5, precision=TIGHT, whole_phase=False)
    assert point.value == pytest.approx(1 / seconds, rel=0.02)


def test_gpfs_creates_never_beat_the_metadata_arrays_write_ceiling() -> None:
    """Every create writes its inode on two metadata NSDs: the ME4024's write IOPS / 2 is the ceiling."""
    system = load_system(PIXSTOR)
    ceiling = system.enclosure_iops["me4024-0"][1] / 2
    for threads in (64, 256):
        point = run_point(system, _mdtest(threads=threads), "create", threads, seed=1, precision=QUICK)
        assert ceiling * 0.9 <= point.value <= ceiling * 1.02
        assert point.bottleneck.startswith("me4024-0.ctrl")


def test_beegfs_creates_never_beat_the_mdt_write_capacity(tmp_path: Path) -> None:
    """With slow MDT drives, creates saturate at the MDT's write IOPS (one block per create) and never pass it."""
    path = _tiny_with(
        tmp_path,
        (
            META_DRIVES,
            "drives: {part: intel-p4600-1.6tb, count: 2, "
            "overrides: {rand_write_iops: 3000 IOPS, write_latency: 333 us}}}]",
        ),
    )
    system = load_system(path)
    capacity = 3000.0  # RAID1: every block goes to both members, so the pair writes what one drive does
    rates = [run_point(system, _mdtest(), "create", t, seed=1, whole_phase=False).value for t in (1, 4, 16)]
    assert all(r <= capacity * 1.03 for r in rates)
    assert rates[-1] >= capacity * 0.9  # and the drives are what binds
    assert (
        run_point(system, _mdtest(), "stat", 16, seed=1, whole_phase=False).value > 5 * capacity
    )  # stat writes nothing


@settings(max_examples=12, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    op=st.sampled_from(["create", "stat", "read", "remove"]),
    threads=st.sampled_from([1, 3, 8, 32]),
    four_k=st.booleans(),
    gpfs=st.booleans(),
)
def test_rates_are_positive_finite_and_reproducible(op: str, threads: int, four_k: bool, gpfs: bool) -> None:
    system = load_system(PIXSTOR if gpfs else TINY)
    workload = _mdtest("4 KiB" if four_k else "0 B", threads=threads)
    first = run_point(system, workload, op, threads, seed=7, precision=QUICK)
    again = run_point(system, workload, op, threads, seed=7, precision=QUICK)
    assert math.isfinite(first.value) and first.value > 0
    assert 0 < first.ci_low < first.value < first.ci_high  # exponential CPU times: never a zero width
    if first.converged and first.last_task_factor is None:  # "converged" is about the aggregate's interval
        assert first.ci_high - first.ci_low <= 2 * QUICK.rel_precision * first.value * (1 + 1e-9)
    assert all(0.0 < u <= 1.0 for u in first.utilization.values())
    assert all(0.0 < u <= 1.0 for u in first.pool_occupancy.values())
    assert (first.value, first.ci_low, first.ci_high) == (again.value, again.ci_low, again.ci_high)


@pytest.mark.parametrize("op", ["create", "stat", "read", "remove"])
@pytest.mark.parametrize("threads", [1, 4, 16, 64])
def test_more_metadata_services_never_slower_with_unique_dirs(tmp_path_factory, op: str, threads: int) -> None:  # noqa: ANN001
    """A second metadata service (and MDT) on the same server: directories spread over both. Never
    slower; and once 16 or more tasks keep the one service's workers busy, clearly faster (the
    directories really are spread: with every directory on the first service the rate is the same)."""
    two = _tiny_with(
        tmp_path_factory.mktemp("two-meta"),
        (META_DRIVES, "drives: {part: intel-p4600-1.6tb, count: 4}}]"),
        ("raid_groups: [{level: 1, members: 2,", "raid_groups: [{count: 2, level: 1, members: 2,"),
        ("services: [{kind: beegfs-meta}]", "services: [{kind: beegfs-meta, count: 2}]"),
    )
    workload = _mdtest(threads=threads)
    one_meta = run_point(load_system(TINY), workload, op, threads, seed=3, whole_phase=False)
    two_meta = run_point(load_system(two), workload, op, threads, seed=3, whole_phase=False)
    assert two_meta.value >= one_meta.value * 0.98
    if threads >= 16:
        assert two_meta.value > 1.25 * one_meta.value, (two_meta.value, one_meta.value)


def test_gpfs_shared_directory_is_slower_than_unique_directories() -> None:
    """Without -u the tasks of 16 nodes pass each directory's token around for every create."""
    system = load_system(PIXSTOR)
    unique = run_point(system, _mdtest(unique=True, threads=64), "create", 64, seed=2, precision=QUICK)
    shared = run_point(system, _mdtest(unique=False, threads=64), "create", 64, seed=2, precision=QUICK)
    assert shared.value < 0.8 * unique.value


@pytest.mark.parametrize("threads", [4, 16])
def test_gpfs_shared_directory_takes_one_token_handoff_per_create(threads: int) -> None:
    """One directory shared by tasks on ``threads`` nodes (no -u, no tree): every create finds the
    token on another node, and takeovers of a directory are one at a time, so the rate is one
    create per takeover whatever the thread count. A takeover is four message latencies (revoke
    and grant) and the old holder's flush of the directory block, one replicated 4 KiB metadata
    write as in test_gpfs_create_one_thread_by_hand."""
    system = load_system(PIXSTOR)
    controller = system.components["me4024-0.ctrlA"]
    iops_write = system.enclosure_iops["me4024-0"][1] / 2
    replica = 2 * value("network_latency_s") + 1 / iops_write + 4096.0 / (controller.write_Bps or 1)
    takeover = 4 * value("network_latency_s") + replica + 1.5 * value("gpfs_nsd_block_cpu_s")
    workload = _mdtest(unique=False, threads=threads, flat=True, items=1024)
    point = run_point(system, workload, "create", threads, seed=5, precision=TIGHT, whole_phase=False)
    assert point.value == pytest.approx(1 / takeover, rel=0.03)
    assert point.bottleneck == "mdtest.tree0.dir0.token"  # a dotted name, as every part has


def test_gpfs_small_files_use_data_nsds_only_when_they_do_not_fit_the_inode() -> None:
    system = load_system(PIXSTOR)

    def data_busy(write: str) -> float:
        point = run_point(system, _mdtest(write, threads=16), "create", 16, seed=2, precision=QUICK, whole_phase=False)
        return max((u for name, u in point.utilization.items() if name.startswith("me4084")), default=0.0)

    assert data_busy("3 KiB") == 0.0  # fits in the 4 KiB inode (128-byte header)
    assert data_busy("4 KiB") > 0.05  # needs a 16 KiB subblock on an ME4084 data LUN


def test_pfssim_run_mdtest_json_points(capsys: pytest.CaptureFixture[str]) -> None:
    cmd = "mpirun -np 2 mdtest -F -u -n 512 -w 4K -e 4K -d /mnt/beegfs/md"
    code = main(["run", str(TINY), "--cmd", cmd, "--threads", "1,2", "--json", "--precision", "0.05"])
    assert code == 0
    points = json.loads(capsys.readouterr().out)["points"]
    assert [(p["op"], p["threads"]) for p in points] == [
        (op, t) for op in ("create", "stat", "read", "remove") for t in (1, 2)
    ]
    assert all(p["benchmark"] == "mdtest" and p["file_bytes"] == 4096 and p["unit"] == "op/s" for p in points)
    assert all(0 < p["ci_low"] < p["value"] < p["ci_high"] for p in points)
    rate = {(p["op"], p["threads"]): p["value"] for p in points}
    for t in (1, 2):  # a stat is one metadata request; a create also writes the MDT and 4 KiB of data
        assert rate[("stat", t)] > rate[("create", t)]
    assert rate[("create", 2)] > rate[("create", 1)]  # two tasks keep more in flight than one


@pytest.mark.parametrize(("op", "threads"), [("create", 4), ("stat", 8), ("remove", 2)])
def test_whole_phase_agrees_with_the_steady_state_for_alike_tasks(op: str, threads: int) -> None:
    """A phase simulated whole (mdtest's own arithmetic: slowest task x tasks) and the steady state
    agree when every task is alike; the whole phase is at most a little lower (its last task sets it)."""
    system = load_system(TINY)
    workload = _mdtest(threads=threads)
    assert workload.total_items(threads) <= 20_000
    whole = run_point(system, workload, op, threads, seed=4)
    steady = run_point(system, workload, op, threads, seed=4, whole_phase=False)
    assert whole.batches == 5 and whole.requests == 5 * workload.total_items(threads)
    # The simulated time covers the same five repetitions as the requests (it was the last one's
    # alone, so simulated_requests / simulated_seconds in the JSON read five times the rate).
    assert whole.requests / whole.simulated_s == pytest.approx(whole.value, rel=0.15)
    assert whole.ci_low < whole.value < whole.ci_high  # five repetitions on seeds of their own differ
    assert steady.value * 0.93 <= whole.value <= steady.value * 1.03


def test_whole_phase_uses_the_slowest_task() -> None:
    """17 tasks on 16 client nodes: the node with two finishes last, and mdtest counts from it."""
    system = load_system(PIXSTOR)
    workload = _mdtest(threads=17)  # 17 tasks on 16 nodes: one node runs two and finishes last
    whole = run_point(system, workload, "stat", 17, seed=4)
    steady = run_point(system, workload, "stat", 17, seed=4, whole_phase=False)
    call = value("gpfs_node_meta_call_s")
    # The doubled node serves two tasks at its one-call-at-a-time ceiling: each task gets half.
    assert whole.value == pytest.approx(17 / (2 * call), rel=0.05)
    # The steady state's aggregate counts all 16 nodes busy; its last-task rule, made for alike
    # tasks, sees the doubled node only as spread and so lands between the aggregate and mdtest.
    assert steady.last_task_factor is not None
    assert steady.value / steady.last_task_factor == pytest.approx(16 / call, rel=0.03)
    assert whole.value < steady.value < 16 / call


def _metadata_model(system_path: Path, workload: MdtestWorkload, op: str = "create"):  # noqa: ANN202
    return build_model(load_system(system_path), workload, op, 1)


def test_beegfs_file_data_goes_chunk_by_chunk_over_the_stripe_targets() -> None:
    model = _metadata_model(ROOT / "topologies" / "beegfs-hdr100.yaml", _mdtest("6 MiB"))
    env = model.ctx.env
    stream = model.ctx.streams("test")
    used: dict[float, list[str]] = {}

    def write(size: float):  # noqa: ANN202 - a SimPy process
        used[size] = yield from model._file_data(0, model.ctx.system.clients[0], "write", size, stream)

    for size in (6 * 2**20, 2**20):
        env.process(write(size))
    env.run()
    assert len(set(used[6 * 2**20])) == 3  # 2 MiB chunks on the file's three targets
    assert len(used[2**20]) == 1  # within one chunk: its first target only


def test_beegfs_sync_per_file_sends_an_fsync_to_the_targets_of_the_files_data() -> None:
    # mdtest -y with -w on BeeGFS: the client's FSyncLocalFileMsg to each target the data is on, as
    # for IOR's -e (a tuning review found -y changing nothing on BeeGFS while it slowed GPFS's creates).
    system = load_system(ROOT / "topologies" / "beegfs-hdr100.yaml")
    rates = {}
    for write in ("0 B", "4 KiB"):
        for sync in (False, True):
            workload = _mdtest(write).model_copy(update={"sync": sync})
            rates[write, sync] = run_point(system, workload, "create", 1, seed=1, precision=TIGHT).value
    assert rates["0 B", True] == rates["0 B", False]  # nothing written, nothing to sync
    added = 1 / rates["4 KiB", True] - 1 / rates["4 KiB", False]
    # One message: the storage service's CPU for it and its round trip on the network.
    assert value("beegfs_storage_request_cpu_s") < added < value("beegfs_storage_request_cpu_s") + 20e-6


def test_gpfs_file_data_is_blocks_round_robin_and_a_subblock_tail() -> None:
    model = _metadata_model(PIXSTOR, _mdtest("20 MiB"))
    pieces = model._data_pieces("c6230-0", model.ctx.streams("test"))
    assert [size for _, _, size in pieces] == [8 * 2**20, 8 * 2**20, 4 * 2**20]
    assert len({nsd for nsd, _, _ in pieces}) == 3
    small = _metadata_model(PIXSTOR, _mdtest("4 KiB"))
    stream = small.ctx.streams("test")
    first, second = small._data_pieces("c6230-0", stream), small._data_pieces("c6230-0", stream)
    assert first[0][2] == second[0][2] == 16 * 2**10  # one 16 KiB subblock each
    assert (second[0][0], second[0][1]) == (first[0][0], first[0][1] + 16 * 2**10)  # the next one in the block


def test_gpfs_small_file_blocks_follow_the_allocation_setting(tmp_path: Path) -> None:
    """A node's new blocks for small files: at random places with scattered allocation, each right
    after the node's previous block on that NSD with cluster allocation."""
    text = PIXSTOR.read_text()
    assert text.count("allocation: scattered") == 1, "test fixture out of date"
    (tmp_path / "parts").symlink_to(ROOT / "topologies" / "parts")
    clustered = tmp_path / "pixstor-cluster.yaml"
    clustered.write_text(text.replace("allocation: scattered", "allocation: cluster"))

    def block_places(path: Path) -> dict[str, list[float]]:
        model = _metadata_model(path, _mdtest("8 MiB"))  # one whole block per file
        stream = model.ctx.streams("test")
        places: dict[str, list[float]] = {}
        for _ in range(3 * len(model.data_nsds)):
            ((nsd, offset, size),) = model._data_pieces("c6230-0", stream)
            assert size == 8 * 2**20
            places.setdefault(nsd, []).append(offset)
        return places

    for offsets in block_places(clustered).values():
        assert [b - a for a, b in zip(offsets[:-1], offsets[1:], strict=True)] == [8 * 2**20] * (len(offsets) - 1)
    scattered = block_places(PIXSTOR)
    assert any(
        b - a != 8 * 2**20 for offsets in scattered.values() for a, b in zip(offsets[:-1], offsets[1:], strict=True)
    )


def test_mdtest_without_f_runs_directory_phases_first(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["run", str(TINY), "--cmd", "mpirun -np 2 mdtest -u -n 64", "--json", "--precision", "0.1"])
    assert code == 0
    points = json.loads(capsys.readouterr().out)["points"]
    assert [p["op"] for p in points] == ["dir_create", "dir_stat", "dir_remove", "create", "stat", "read", "remove"]
    assert all(("file_bytes" in p) == (not p["op"].startswith("dir_")) for p in points)
    code = main(["run", str(TINY), "--cmd", "mpirun -np 2 mdtest -D -C -T -u -n 64", "--json", "--precision", "0.1"])
    assert code == 0
    assert [p["op"] for p in json.loads(capsys.readouterr().out)["points"]] == ["dir_create", "dir_stat"]


@pytest.mark.parametrize(
    ("flags", "message"),
    [("-D -F", "exclude each other"), ("-D -E", "directories have no read phase")],
)
def test_mdtest_phase_selections_that_run_nothing_are_refused(
    flags: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["run", str(TINY), "--cmd", f"mpirun -np 2 mdtest {flags} -u -n 64"])
    captured = capsys.readouterr()
    assert code == 2 and message in captured.err and captured.out == ""


def test_directory_phases_one_thread_by_hand() -> None:
    """BeeGFS mkdir/rmdir: the parent's owner writes the dentry and messages the new directory's owner
    (here the same, only service), which writes the inode; a directory stat is one request. GPFS:
    one call and one replicated inode write, i.e. a file create without its close."""
    system = load_system(TINY)
    latency = value("network_latency_s")
    meta_cpu = value("beegfs_meta_request_cpu_s")
    request = value("beegfs_client_request_cpu_s") + 2 * latency + meta_cpu
    mdt_write = _mdt_write(system, "meta.numa0.drive0")
    expected = {"dir_stat": request, "dir_create": request + mdt_write + 2 * latency + meta_cpu + mdt_write}
    expected["dir_remove"] = expected["dir_create"]
    workload = _mdtest()
    for op, seconds in expected.items():
        point = run_point(system, workload, op, 1, seed=5, precision=TIGHT, whole_phase=False)
        assert point.value == pytest.approx(1 / seconds, rel=0.02), op
        assert point.file_bytes is None
    pixstor = load_system(PIXSTOR)
    mkdir = run_point(pixstor, workload, "dir_create", 1, seed=5, precision=TIGHT, whole_phase=False)
    create = run_point(pixstor, workload, "create", 1, seed=5, precision=TIGHT, whole_phase=False)
    assert 1 / mkdir.value == pytest.approx(1 / create.value - value("gpfs_node_meta_call_s"), rel=0.02)


@pytest.mark.parametrize("tasks", [4, 16])
def test_mkdirs_never_deadlock_on_their_own_workers(tasks: int) -> None:
    """tiny's metadata service has 4 workers: with 4 or more tasks every worker can hold a mkdir that
    waits for the MkLocalDirMsg it sent to the same service. BeeGFS queues server-to-server messages
    as direct work, which its direct worker takes when no regular worker is idle, so the mkdirs go on
    (this used to stall the simulation), at no more than the workers plus the direct worker allow."""
    system = load_system(TINY)
    workload = _mdtest().model_copy(update={"files_only": False, "threads": [tasks]})
    for op in ("dir_create", "dir_remove"):
        point = run_point(system, workload, op, tasks, seed=5, precision=QUICK, whole_phase=False)
        # Each mkdir holds a regular worker for two CPU slices and two MDT writes at least.
        drive = system.drive_parts["meta.numa0.drive0"]
        hold = 2 * value("beegfs_meta_request_cpu_s") + 2 * min(drive.write_latency, drive.seq_write_latency or 1.0)
        assert 0 < point.value <= 4 / hold * 1.1, op


def test_beegfs_stat_saturates_at_the_metadata_service_workers_or_cores() -> None:
    """A closed network whose bottleneck is a c-server station: the rate tends to c / service time,
    c the smaller of the service's workers (each holds a request for its CPU time) and the zone's
    cores, once the tasks far outnumber them."""
    system = load_system(TINY)
    workers = system.spec.filesystem.workers["meta"]  # type: ignore[union-attr]
    servers = min(system.zone_cores["meta.numa0"], workers)
    point = run_point(system, _mdtest(threads=64), "stat", 64, seed=3, whole_phase=False)
    assert point.value == pytest.approx(servers / value("beegfs_meta_request_cpu_s"), rel=0.03)


def test_a_full_worker_pool_is_named_as_the_bottleneck() -> None:
    """tiny's metadata service has 4 workers: 64 tasks keep all of them held while its CPU and MDT
    are far from busy. The point is limited by the pool (capacity), not by latency, and the pool
    of 4 workers is named rather than the client's connections (8), which only wait for them."""
    from sim.benchmarks.driver import limit_of

    system = load_system(TINY)
    workload = _mdtest(threads=64)
    point = run_point(system, workload, "create", 64, seed=5, precision=QUICK, whole_phase=False)
    assert point.bottleneck == "meta.numa0.meta0.workers"
    assert point.bottleneck_utilization >= 0.9 and limit_of(point.bottleneck_utilization) == "capacity"
    assert max(u for name, u in point.utilization.items() if name != point.bottleneck) < 0.5
    # Every pool's occupancy is reported; the connections that wait for the workers look full too.
    assert point.pool_occupancy[point.bottleneck] == point.bottleneck_utilization
    connections = [u for name, u in point.pool_occupancy.items() if "->meta.numa0.meta0" in name]
    assert connections and min(connections) >= 0.9
    one = run_point(system, workload, "create", 1, seed=5, precision=QUICK, whole_phase=False)
    assert not one.bottleneck.endswith(".workers")  # one task never fills a pool


def _built(path: Path, workload: MdtestWorkload, op: str, threads: int):  # noqa: ANN202 - (model, env)
    model = build_model(load_system(path), workload, op, threads, seed=4)
    return model, model.ctx.env


def test_metadata_workers_default_to_beegfs_rule(tmp_path: Path) -> None:
    """Without workers.meta a metadata service gets tuneNumWorkers = 0's default: twice its zone's
    cores, at least 4."""
    import shutil

    shutil.copytree(TINY.parent / "parts", tmp_path / "parts")
    text = TINY.read_text()
    assert "workers: {meta: 4, storage: 8}" in text
    variant = tmp_path / "tiny.yaml"
    variant.write_text(text.replace("workers: {meta: 4, storage: 8}", "workers: {storage: 8}"))
    model, _ = _built(variant, _mdtest(threads=1), "create", 1)
    system = model.ctx.system
    for service in model.meta:
        cores = system.zone_cores[model._zone(service)]
        assert model.meta_workers[service.name].size == max(2 * cores, 4) > 4
    assert _built(TINY, _mdtest(threads=1), "create", 1)[0].meta_workers[model.meta[0].name].size == 4


def test_gpfs_metadata_replicas_go_to_different_nsds() -> None:
    """Each inode write goes to metadata_replicas distinct metadata NSDs (different failure groups):
    pixstor-large has 12 metadata NSDs and metadata_replicas 2, so an inode write's second copy is
    12 / 2 = 6 places round the NSD list from its first (failure groups spread over the list), not
    the next NSD, and the first copy is drawn over the list."""
    model, env = _built(PIXSTOR, _mdtest(threads=1), "create", 1)
    n = len(model.meta_nsds)
    assert model.replicas == 2 and n == 12
    written: list[str] = []

    def request(t, nsd, op, offset, size, stream):  # noqa: ANN001, ANN202 - records the NSD
        written.append(nsd)
        yield env.timeout(0)

    model.paths.request = request
    stream = model.ctx.streams("test")
    firsts = set()
    for _ in range(50):
        written.clear()
        model._inode_write(0, stream)
        env.run()
        assert len(written) == 2 and written[0] != written[1]
        first, second = (model.meta_nsds.index(nsd) for nsd in written)
        assert second == (first + 6) % n
        firsts.add(first)
    assert len(firsts) > 6


def test_gpfs_stat_of_another_nodes_file_by_hand() -> None:
    """mdtest -N 1 with two tasks on two nodes: each stats the other's files. The inode token is on
    the other node (revoke and grant, four message latencies) and the inode is read from one
    metadata NSD: two latencies, the NSD server's CPU, the ME4024 controller's read command,
    the SSD (its 1 / read IOPS floor and access latency) and the controller's read path; then the
    node's cached call as without -N."""
    system = load_system(PIXSTOR)
    controller = system.components["me4024-0.ctrlA"]
    iops_read = system.enclosure_iops["me4024-0"][0] / 2  # per controller
    ssd = system.drive_parts["me4024-0.drive0"]
    inode = 4096.0
    media = max(inode / ssd.seq_read, 1 / ssd.rand_read_iops) + ssd.read_latency
    read = 2 * value("network_latency_s") + value("gpfs_nsd_block_cpu_s") + 1 / iops_read + media
    read += inode / (controller.read_Bps or 1)
    seconds = 4 * value("network_latency_s") + read + value("gpfs_node_meta_call_s")
    workload = _mdtest(threads=2, stride=1)
    point = run_point(system, workload, "stat", 2, seed=5, precision=TIGHT, whole_phase=False)
    assert point.value == pytest.approx(2 / seconds, rel=0.03)
    own = run_point(system, _mdtest(threads=2), "stat", 2, seed=5, precision=TIGHT, whole_phase=False)
    assert own.value > 50 * point.value  # cached calls only


@pytest.mark.parametrize("op", ["stat", "read", "remove"])
def test_gpfs_stride_to_a_task_on_the_same_node_changes_nothing(op: str) -> None:
    """32 tasks dealt over 16 nodes: task t and t + 16 share a node, so -N 16 works on files this
    node made, as -N 0 does: the same numbers. A task alone (-N 1 with one task) is its own
    stride target."""
    system = load_system(PIXSTOR)
    base = run_point(system, _mdtest(threads=32), op, 32, seed=3, precision=QUICK, whole_phase=False)
    same = run_point(system, _mdtest(threads=32, stride=16), op, 32, seed=3, precision=QUICK, whole_phase=False)
    assert same.value == base.value
    alone = run_point(system, _mdtest(stride=1), op, 1, seed=3, precision=QUICK, whole_phase=False)
    assert alone.value == run_point(system, _mdtest(), op, 1, seed=3, precision=QUICK, whole_phase=False).value


def test_gpfs_stride_to_other_nodes_is_bound_by_metadata_reads() -> None:
    """64 tasks over 16 nodes with -N 1: every stat reads an inode from the ME4024, whose read
    command rate then bounds the phase, far below the cached calls' millions; removes also take
    the other node's directory and inode tokens, so they are slower than without -N."""
    system = load_system(PIXSTOR)
    runs = {
        (op, n): run_point(system, _mdtest(threads=64, stride=n), op, 64, seed=3, precision=QUICK)
        for op in ("stat", "remove")
        for n in (0, 1)
    }
    assert runs["stat", 1].value < 0.1 * runs["stat", 0].value
    assert runs["stat", 1].bottleneck.startswith("me4024-0.")
    assert runs["remove", 1].value < 0.9 * runs["remove", 0].value


def test_gpfs_reads_two_strides_on_find_their_own_nodes_files() -> None:
    """Two tasks on two nodes with -N 1: the stat phase works on the other node's files, the read
    phase (two strides on) on files its own node made, served from its own cache as without -N
    (until session 33 every phase took one stride, and the reads ran 31 times slower)."""
    system = load_system(PIXSTOR)
    rate = {
        (op, n): run_point(
            system, _mdtest(threads=2, stride=n), op, 2, seed=3, precision=QUICK, whole_phase=False
        ).value
        for op in ("stat", "read")
        for n in (0, 1)
    }
    assert rate["read", 1] == rate["read", 0]
    assert rate["stat", 1] < 0.1 * rate["stat", 0]


def test_whole_phase_counts_the_data_requests_of_each_item() -> None:
    # 800 files are a small phase when empty or of 4 KiB, not when each is 1 GiB of 8 MiB blocks
    # (102,400 block writes): such a phase runs in steady state, with its request budget.
    from sim.benchmarks.cmdline import parse_command
    from sim.benchmarks.driver import whole_phase_fits

    system = load_system(ROOT / "topologies" / "pixstor-large.yaml")
    small = parse_command("mpirun -np 4 mdtest -F -u -n 200 -w 4k -e 4k")
    large = parse_command("mpirun -np 4 mdtest -F -u -n 200 -w 1g -e 1g")
    assert whole_phase_fits(system, small, "create", 4) and whole_phase_fits(system, large, "stat", 4)
    assert not whole_phase_fits(system, large, "create", 4) and not whole_phase_fits(system, large, "read", 4)


def test_metadata_service_connections_cap_its_chunk_messages(bad_topology) -> None:  # noqa: ANN001 - fixture
    # conn_max_internode.meta: a metadata service's connections to each storage service. With one,
    # every unlink's messages to the file's targets queue for it; with the documents' 32 they do
    # not hold the removes back at 256 tasks.
    from sim.benchmarks.cmdline import parse_command

    workload = parse_command("mpirun -np 256 mdtest -F -u -n 2000")
    rates = {}
    for links in (1, 32):
        path = bad_topology("{meta: 32,", f"{{meta: {links},", name=f"links{links}.yaml")
        rates[links] = run_point(load_system(path), workload, "remove", 256, seed=2, precision=QUICK)
    assert rates[1].value < 0.8 * rates[32].value
    links = {name: held for name, held in rates[1].pool_occupancy.items() if "->storage" in name}
    assert links and max(links.values()) > 0.5  # the one connection is held most of the time


def test_gpfs_tasks_that_find_their_node_holds_the_token_hand_the_lock_on_without_recursing() -> None:
    """2048 tasks, 256 per node, in one directory: most find the directory's token on their own
    node, take the directory lock and give it straight back, each inside the hand-over that woke
    it. That chain once nested hundreds deep and ended the run in a RecursionError (reported as a
    stall); the engine now schedules such hand-overs beyond a depth (sim/engine/core.py, fire)."""
    system = load_system(PIXSTOR)
    workload = _mdtest(unique=False, threads=2048, flat=True, items=200).model_copy(
        update={"placement": "per_node", "per_node": 256}
    )
    point = run_point(system, workload, "create", 2048, seed=1, precision=QUICK)
    assert 0 < point.value < math.inf and point.bottleneck.endswith(".token")


@pytest.mark.parametrize(
    ("phase", "owners"),
    [
        ("create", [0, 1, 2]),
        ("dir_create", [0, 1, 2]),
        ("stat", [1, 2, 0]),
        ("dir_stat", [1, 2, 0]),
        ("read", [2, 0, 1]),
        ("remove", [0, 1, 2]),
        ("dir_remove", [0, 1, 2]),
    ],
)
def test_mdtest_stride_moves_the_phases_after_the_creates_only(phase: str, owners: list[int]) -> None:
    """mdtest -N 1 with three tasks: each task creates its own items (a create's owner is the task
    itself), stats those of the next rank round, reads those two ranks on and removes those three
    on, its own (mdtest names the k-th phase's items from rank + k x N: stat_name, read_name,
    rm_name)."""
    from types import SimpleNamespace

    from sim.fs.mdtest import MdtestWalk

    walk = MdtestWalk(SimpleNamespace(workload=_mdtest(threads=3, stride=1), op=phase, threads=3))
    assert [walk.owner(t) for t in range(3)] == owners
    assert [walk.directory(t, 2) for t in range(3)] == [(owner, 2) for owner in owners]


@pytest.mark.parametrize("gpfs", [False, True])
def test_a_files_data_pieces_round_up_to_whole_units(gpfs: bool) -> None:
    """A file of 1.5 chunks (BeeGFS) or blocks (GPFS) takes 2 requests; one of exactly a unit 1; an
    empty file still counts 1; one byte past 2 units 3."""
    from sim.fs.mdtest import data_pieces

    system = load_system(PIXSTOR if gpfs else TINY)
    fs = system.spec.filesystem
    unit = fs.block_size if gpfs else fs.chunk_size
    assert [data_pieces(system, size) for size in (0, 1, unit, 1.5 * unit, 2 * unit + 1)] == [1, 1, 1, 2, 3]


def test_beegfs_file_data_runs_each_stripe_sets_pieces_together() -> None:
    """beegfs-hdr100 stripes a file over 3 targets in 2 MiB chunks. With every chunk piece taking
    exactly 1 s, a 6 MiB file (one stripe set of 3 pieces, in parallel) takes 1 s and an 8 MiB
    file (a set of 3, then a set of 1) 2 s: the sets one after the other, a set's pieces together."""
    model = _metadata_model(ROOT / "topologies" / "beegfs-hdr100.yaml", _mdtest("6 MiB"))
    env = model.ctx.env
    stream = model.ctx.streams("test")
    assert model.chunk == 2**21 and len(model._stripe(stream)) == 3

    def piece(t, client, target, op, size, stream):  # noqa: ANN001, ANN202 - stands in for _data
        yield env.timeout(1.0)

    model._data = piece
    took: dict[float, float] = {}

    def write(size: float):  # noqa: ANN202 - a SimPy process
        start = env.now
        yield from model._file_data(0, model.ctx.system.clients[0], "write", size, stream)
        took[size] = env.now - start

    for size in (6 * 2**20, 8 * 2**20):
        env.process(write(size))
    env.run()
    assert took == {6 * 2**20: 1.0, 8 * 2**20: 2.0}


class _MeanStream:
    """A stand-in random stream: every exponential time is its mean, every integer draw the last of
    its range (so a stripe wraps round the target list), every uniform draw 0."""

    def exponential(self, mean: float) -> float:
        return mean

    def integer(self, n: int) -> int:
        return n - 1

    def uniform(self) -> float:
        return 0.0


def _recording_walk(model):  # noqa: ANN001, ANN202 - replaces operate with a 1 s step that records its item
    env = model.ctx.env
    seen: list[tuple[tuple[int, int], int]] = []

    def operate(t, client, directory, item, stream):  # noqa: ANN001, ANN202 - a SimPy process body
        seen.append((directory, item))
        yield env.timeout(1.0)

    model.operate = operate
    return seen


def test_whole_phase_walks_each_directorys_items_then_the_next_directory() -> None:
    # mdtest's phase for task 0 of a tree of 4 leaf directories of 3 files: files 0, 1, 2 of its
    # directory 0, then of directory 1, ... and, asked for 14 items, round again to directory 0.
    # Each operation takes 1 s here, so the task finishes at 14 s.
    model = build_model(load_system(TINY), _mdtest(items=3), "stat", 1)
    assert (model.walk.dirs, model.walk.per_dir) == (4, 3)
    seen = _recording_walk(model)
    model.ctx.env.run(until=model.start_phase(14))
    assert seen == [((0, d), i) for d in range(4) for i in range(3)] + [((0, 0), 0), ((0, 0), 1)]
    assert model.finish == [14.0]


def test_steady_state_task_goes_on_to_its_next_directory_after_the_last_item() -> None:
    # In steady state a task starts anywhere in its walk and then follows it: the next item of the
    # same directory, or item 0 of the next directory (round from the last to the first) after its
    # third item. 20 operations of 1 s (started within 19.5 s, the first after a start offset of at
    # most 10 us) visit all 4 directories.
    model = build_model(load_system(TINY), _mdtest(items=3), "stat", 1)
    seen = _recording_walk(model)
    model.start()
    model.ctx.env.run(until=19.5)
    assert len(seen) == 20
    for ((_, d), i), ((_, d2), i2) in zip(seen[:-1], seen[1:], strict=True):
        assert (d2, i2) == ((d, i + 1) if i < 2 else ((d + 1) % 4, 0))
    assert {d for (_, d), _ in seen} == {0, 1, 2, 3}


def test_cache_prefill_sits_at_the_watermark_on_ssds_and_full_on_hdds() -> None:
    # A LUN of SSDs destages small writes faster than the controller takes them (cache at its
    # half-full flush watermark); one of HDDs does not (full). GPFS data NSDs start at the watermark
    # whatever their drives, as small files add a stripe only every block / subblock files.
    from sim.devices.drives import HddDrive, SsdDrive

    high = build_model(load_system(ROOT / "topologies" / "beegfs-high-capacity.yaml"), _mdtest("4 KiB"), "create", 1)
    raids = high.ctx.platform.raids
    for lun in high.written_luns():
        kinds = {type(m) for m in raids[lun].members}
        assert kinds in ({SsdDrive}, {HddDrive})
        assert high.prefill_fill(lun) == (0.5 if kinds == {SsdDrive} else 1.0), lun
    assert {high.prefill_fill(lun) for lun in high.written_luns()} == {0.5, 1.0}
    gpfs = build_model(load_system(PIXSTOR), _mdtest("4 KiB"), "create", 1)
    data = gpfs.data_nsds[0]
    assert all(isinstance(m, HddDrive) for m in gpfs.ctx.platform.raids[data].members)
    # The data NSDs a create writes file data to start at the watermark whatever the point's fill
    # (a whole phase's is 1.0: following it started them full, -29% for 200 files of 8 KiB a task,
    # a review), and a point watches them alone.
    assert gpfs.pilot_luns() == set(gpfs.data_nsds)
    for fill in (0.5, 1.0):
        gpfs.ctx.platform.cache_fill = fill
        assert gpfs.prefill_fill(data) == 0.5
        assert gpfs.prefill_fill(gpfs.meta_nsds[0]) == 0.5  # SSDs, where their drives keep them
    assert build_model(load_system(PIXSTOR), _mdtest("3 KiB"), "create", 1).pilot_luns() == set()  # in the inode
    assert build_model(load_system(PIXSTOR), _mdtest("4 KiB"), "stat", 1).pilot_luns() == set()


def test_beegfs_inode_message_takes_an_idle_regular_worker_before_the_direct_worker() -> None:
    # A MkLocalDirMsg is direct work: a regular worker of the receiver takes it when one is idle,
    # the one direct worker only when all 4 regular workers are busy.
    model = build_model(load_system(TINY), _mdtest(), "dir_create", 1)
    env = model.ctx.env
    service = model.meta[0]
    regular, direct = model.meta_workers[service.name], model.direct_workers[service.name]
    env.process(model._inode_message(service, service, _MeanStream()))
    env.run()
    assert (regular.visits, direct.visits) == (1, 0)
    for _ in range(4):
        assert regular.try_acquire()
    env.process(model._inode_message(service, service, _MeanStream()))
    env.run()
    assert (regular.visits, direct.visits) == (5, 1)


def test_beegfs_inode_messages_to_another_service_take_the_senders_connections() -> None:
    # beegfs-hdr100 has 6 metadata services. An inode message from one to another holds one of the
    # sender's connections to it (conn_max_internode.meta, 1 here) until the reply is back: two
    # messages sent at once go one after the other. A message to itself takes no connection.
    model = build_model(load_system(ROOT / "topologies" / "beegfs-hdr100.yaml"), _mdtest(), "dir_create", 1)
    env = model.ctx.env
    model.link_limit = 1
    a, b = model.meta[0], model.meta[1]
    ends: list[float] = []

    def message(owner):  # noqa: ANN001, ANN202 - a SimPy process
        yield from model._inode_message(a, owner, _MeanStream())
        ends.append(env.now)

    env.process(message(b))
    env.process(message(b))
    env.run()
    link = model.links[a.name, b.name]
    assert (link.size, link.visits, link.waits) == (1, 2, 1)
    # The second leaves when the first's reply is back: a whole round trip later at least.
    assert ends[1] - ends[0] >= 2 * value("network_latency_s") + value("beegfs_meta_request_cpu_s")
    env.process(message(a))
    env.run()
    assert (a.name, a.name) not in model.links


def test_beegfs_chunk_message_is_a_round_trip_and_a_storage_cpu_slice_by_hand() -> None:
    # One FSyncLocalFileMsg (or close or unlink of a chunk file) with every time at its mean: one
    # latency to the storage service, its CPU slice on an idle core, one latency back.
    model = build_model(load_system(TINY), _mdtest(), "create", 1)
    env = model.ctx.env
    client = model.ctx.system.clients[0]
    env.process(model._messages([model.targets[0]], _MeanStream(), client=client))
    env.run()
    assert env.now == pytest.approx(2 * value("network_latency_s") + value("beegfs_storage_request_cpu_s"), rel=1e-9)


def test_beegfs_stripe_is_consecutive_targets_from_a_random_start() -> None:
    # beegfs-hdr100: 33 targets, 3 per file. Drawn to start at the last target, a file's stripe
    # wraps round to the first two; a handle's close asks for as many targets as its data touched.
    model = build_model(load_system(ROOT / "topologies" / "beegfs-hdr100.yaml"), _mdtest(), "create", 1)
    targets = model.targets
    assert (len(targets), model.num_targets) == (33, 3)
    assert model._stripe(_MeanStream()) == [targets[32], targets[0], targets[1]]
    assert model._stripe(_MeanStream(), 1) == [targets[32]]
    assert model._stripe(_MeanStream(), 2) == [targets[32], targets[0]]


def test_beegfs_handle_open_writes_the_mdt_only_when_it_creates() -> None:
    # A timed open is one request (client CPU, a latency each way, the metadata CPU); an open with
    # O_CREAT also writes the new inode's block to the MDT before the reply.
    system = load_system(TINY)
    request = value("beegfs_client_request_cpu_s") + 2 * value("network_latency_s") + value("beegfs_meta_request_cpu_s")
    from sim.fs.mdtest import FileHandleSteps

    took = {}
    for kind in ("open", "create"):
        model = build_model(system, _mdtest(), "create", 1)
        env = model.ctx.env
        steps = FileHandleSteps(open=kind, fsync=False, close=False, wrote=False, targets=0)
        env.process(model.handle(0, system.clients[0], (0, 0), steps, _MeanStream()))
        env.run()
        took[kind] = env.now
    assert took["open"] == pytest.approx(request, rel=1e-9)
    assert took["create"] >= request + 0.99 * _mdt_write(system, "meta.numa0.drive0")


def test_gpfs_pagepool_hit_is_the_nodes_share_over_its_small_files() -> None:
    # 64 tasks over pixstor-large's 16 nodes (4 a node), each 4 directories of 512 files of 8 MiB
    # (one whole block each): a node holds 4 x 4 x 512 = 8192 files, 64 GiB, in a 32 GiB pagepool,
    # so half of its reads hit.
    model = build_model(load_system(PIXSTOR), _mdtest("8 MiB", threads=64, items=512), "read", 64)
    assert model.fs.pagepool.client == 32 * 2**30 and model.data_size == 8 * 2**20
    assert model.hit == 0.5


def test_gpfs_reads_of_another_nodes_file_come_from_the_nsds_not_the_pagepool() -> None:
    # -N 1 with three tasks on three nodes: task 0's read phase (two strides on) reads task 2's
    # 4 KiB file (a 16 KiB subblock, not in the inode). Its node took the inode token and read the
    # inode (4 KiB from a metadata NSD); the data is not in its pagepool, whatever the hit rate of
    # its own files: one read of the subblock from a data NSD. Its own file (no -N) is a pagepool
    # copy: no NSD request at all.
    def requests(stride: int) -> list[tuple[bool, str, float]]:
        """(to a metadata NSD, op, bytes) of every NSD request of task 0's read of one file."""
        model = build_model(load_system(PIXSTOR), _mdtest("4 KiB", threads=3, stride=stride), "read", 3)
        env = model.ctx.env
        assert model.hit == 1.0 and not model.in_inode
        sent: list[tuple[bool, str, float]] = []

        def request(t, nsd, op, offset, size, stream):  # noqa: ANN001, ANN202 - records
            sent.append((nsd in model.meta_nsds, op, size))
            yield env.timeout(0)

        model.paths.request = request
        client = model.ctx.client_of(0)
        assert model.walk.owner(0) == 2 * stride and model.ctx.client_of(2) != client
        env.process(model.operate(0, client, model.walk.directory(0, 0), 0, model.ctx.streams("test")))
        env.run()
        return sent

    assert requests(1) == [(True, "read", 4096.0), (False, "read", 16384.0)]
    assert requests(0) == []


def test_beegfs_creates_write_the_storage_targets_only_when_files_get_data() -> None:
    # Empty files (no -w) are made on the metadata service alone (chunk files are made lazily by
    # the first write): only the MDT's cache starts filled. With -w 4k the targets are written too.
    system = load_system(TINY)
    empty = build_model(system, _mdtest(), "create", 1)
    mdts = {s.targets[0] for s in empty.meta}
    assert empty.written_luns() == mdts
    assert build_model(system, _mdtest("4 KiB"), "create", 1).written_luns() == mdts | set(empty.targets)


def test_gpfs_directory_token_takeover_is_four_latencies_and_a_flush_by_hand() -> None:
    # A node takes a directory's token from another: revoke and grant are four message latencies,
    # then the old holder's flush of the directory block (one inode write, made instant here).
    # The node that holds the token already pays nothing.
    model = build_model(load_system(PIXSTOR), _mdtest(unique=False, threads=2), "create", 2)
    env = model.ctx.env
    flushes: list[int] = []

    def instant_write(t, stream):  # noqa: ANN001, ANN202 - the flush, without the NSD
        flushes.append(t)
        return env.timeout(0)

    model._inode_write = instant_write
    a, b = model.ctx.client_of(0), model.ctx.client_of(1)
    assert a != b
    env.process(model._take_directory(0, a, (0, 0), _MeanStream()))
    env.run()
    assert (env.now, flushes, model.holder[0, 0]) == (0.0, [], a)
    env.process(model._take_directory(1, b, (0, 0), _MeanStream()))
    env.run()
    assert env.now == pytest.approx(4 * value("network_latency_s"), rel=1e-12)
    assert (flushes, model.holder[0, 0]) == ([1], b)


def test_gpfs_inode_token_of_another_nodes_item_is_four_latencies_then_the_inode_read() -> None:
    # mdtest -N: the item's inode token is revoked from its maker's node and granted to this one
    # (four message latencies) before the inode is read (an NSD request, made instant here).
    model = build_model(load_system(PIXSTOR), _mdtest(threads=2, stride=1), "stat", 2)
    env = model.ctx.env
    reads: list[float] = []

    def request(t, nsd, op, offset, size, stream):  # noqa: ANN001, ANN202 - notes when the read starts
        reads.append(env.now)
        yield env.timeout(0)

    model.paths.request = request
    env.process(model._inode_read(0, _MeanStream()))
    env.run()
    assert reads == [pytest.approx(4 * value("network_latency_s"), rel=1e-12)]


def test_gpfs_inode_read_of_another_nodes_item_by_hand_at_mean_times() -> None:
    # The stat of another node's item (mdtest -N) with every random time at its mean, from the
    # parts: the token (four latencies); the 4 KiB inode read as an NSD request: two latencies, the
    # NSD server's CPU, the ME4024 controller's read command (1 / its read IOPS, half the array's),
    # the SSD (its 1 / read IOPS floor and access latency) and the controller's read path.
    system = load_system(PIXSTOR)
    # The ME4024 reads and writes 320k commands a second; halve the write rate so that a read's
    # command time tells which one it takes.
    read_all, write_all = system.enclosure_iops["me4024-0"]
    system.enclosure_iops["me4024-0"] = (read_all, write_all / 2)
    model = build_model(system, _mdtest(threads=2, stride=1), "stat", 2)
    controller = system.components["me4024-0.ctrlA"]
    iops_read = system.enclosure_iops["me4024-0"][0] / 2
    ssd = system.drive_parts["me4024-0.drive0"]
    inode = 4096.0
    media = max(inode / ssd.seq_read, 1 / ssd.rand_read_iops) + ssd.read_latency
    latency = value("network_latency_s")
    expected = 6 * latency + value("gpfs_nsd_block_cpu_s") + 1 / iops_read + media + inode / controller.read_Bps
    env = model.ctx.env
    env.process(model._inode_read(0, _MeanStream()))
    env.run()
    assert env.now == pytest.approx(expected, rel=1e-9)


def test_gpfs_empty_file_creates_fill_the_metadata_nsds_caches_only() -> None:
    # Creates of empty files write inodes on the metadata NSDs (the ME4024) and nothing on the data
    # NSDs: only the metadata arrays' write caches start holding small writes.
    model = build_model(load_system(PIXSTOR), _mdtest(), "create", 1)
    assert model.written_luns() == set(model.meta_nsds)
    model.prefill_caches()
    held = model.ctx.platform.cache_held()
    assert all(held[lun] > 0 for lun in model.meta_nsds)
    assert all(held[lun] == 0 for lun in model.data_nsds)


def test_one_tasks_file_data_is_dealt_both_hcas_of_each_storage_zone(tmp_path: Path) -> None:
    # beegfs-hdr100 with two HCAs in every server zone, one mdtest task writing 4 KiB files: its
    # files land on every storage target, and each zone's targets are dealt the zone's two HCAs in
    # turn (Platform.deal_server_hca). Picked by the task's index, as until session 33, the one
    # task reached every zone by its first HCA.
    from sim.benchmarks.cmdline import parse_command
    from sim.topology.build import load_system
    from tests.conftest import build_model, hdr100_with_two_hcas_per_zone

    path = hdr100_with_two_hcas_per_zone(tmp_path)
    system = load_system(path)
    workload = parse_command("mpirun -np 1 mdtest -i 1 -b 1 -z 1 -L -I 4096 -u -F -C -w 4096")
    model = build_model(system, workload, "create", 1)
    platform = model.ctx.platform
    reached: dict[str, set[str]] = {}
    hops = platform.network_hops

    def traced(client_hca: str, server_hca: str, op: str):  # noqa: ANN202 - wraps network_hops
        reached.setdefault(server_hca.rsplit(".", 1)[0], set()).add(server_hca)
        return hops(client_hca, server_hca, op)

    platform.network_hops = traced
    model.start()
    model.ctx.env.run(until=0.2)
    storage = [s for s in system.services.values() if s.kind == "beegfs-storage"]
    # Every zone serves at least two targets (the metadata server's storage zone three services of
    # one target each, which share the zone's HCAs).
    assert all(len(s.hcas) == 2 for s in storage)
    assert all(sum(len(s.targets) for s in storage if s.hcas == hcas) >= 2 for hcas in {s.hcas for s in storage})
    zones = {system.zone_of[s.hcas[0]] for s in storage}
    assert set(reached) == zones
    assert all(len(used) == 2 for used in reached.values()), reached


def test_a_metadata_service_declared_on_a_two_zone_server_uses_both_zones(tmp_path: Path) -> None:
    # beegfs-high-capacity's metadata servers declare their services on the server, with one zone.
    # Given a second zone (its own HCA, listed first, so that the ME4024's HBA is in the second):
    # the creates run on both zones' cores (they were CPU-bound on the first alone, an architect's
    # review), and the services write their MDTs from the zone that holds the HBA, with no UPI
    # crossing (they wrote from their first HCA's zone, across the UPI link).
    from sim.benchmarks.workloads import find_workload
    from sim.topology.build import load_system
    from tests.conftest import ROOT, build_model

    one = (
        "    numa:\n      - hcas:\n          - {part: connectx5-edr, switch: ib}\n"
        '        hbas:\n          - {part: dell-12gbps-sas-hba}\n    sas:\n      - {enclosures: "me4024-*"}'
    )
    text = (ROOT / "topologies" / "beegfs-high-capacity.yaml").read_text()
    assert text.count(one) == 1, "test fixture out of date"
    two = one.replace("    numa:\n", "    numa:\n      - hcas: [{part: connectx5-edr, switch: ib}]\n", 1)
    (tmp_path / "parts").symlink_to(ROOT / "topologies" / "parts")
    path = tmp_path / "two-zone-meta.yaml"
    path.write_text(text.replace(one, two))
    system = load_system(path)
    workload = find_workload("mdtest-beegfs-hc")
    model = build_model(system, workload, "create", 64)
    service = model.meta[0]
    assert service.zone is None and system.zone_of[service.hcas[0]] == f"{service.server}.numa0"
    model._mdt_write(service, model.ctx.streams("test"))
    assert not any(".upi" in station.name for station, _ in model._mdt_hops[service.name])
    point = run_point(system, workload, "create", 64, seed=1, precision=QUICK)
    cpus = {n: u for n, u in point.utilization.items() if n.startswith("meta0.") and n.endswith(".cpu")}
    assert set(cpus) == {"meta0.numa0.cpu", "meta0.numa1.cpu"} and min(cpus.values()) > 0.5, cpus


def test_gpfs_small_file_data_caches_are_watched_and_their_drives_off_the_path_while_they_keep_up(
    bad_topology,  # noqa: ANN001 - fixture
) -> None:
    # 64 tasks creating 4 KiB files (16 KiB subblocks on the ME4084 data NSDs): with two metadata
    # replicas the ME4024's commands hold the creates and the data drives keep up, off the path
    # (never named); with one replica the creates double and the data drives behind a cache that
    # started at its watermark are busy all the window, so the cache would fill: the point is not
    # converged and those drives are on its path (a GPFS specialist's review: they were named at a
    # rate reported converged, the caches never watched).
    from sim.benchmarks.cmdline import parse_command

    line = "mpirun --map-by node -np 64 mdtest -d /m -i 1 -b 32 -z 1 -L -I 1024 -u -t -F -C -w 4096"
    two = run_point(load_system(PIXSTOR), parse_command(line), "create", 64, seed=1)
    assert two.converged and two.bottleneck.startswith("me4024-0.")
    data = {n for n in two.off_path if n.startswith("me4084-")}
    assert data and all(not n.startswith("me4024") for n in two.off_path)
    one = bad_topology("metadata_replicas: 2", "metadata_replicas: 1", of="pixstor-large")
    point = run_point(load_system(one), parse_command(line), "create", 64, seed=1)
    assert not point.converged and point.off_path == ()
    assert point.bottleneck.startswith("me4084-") and point.bottleneck_utilization >= 0.99


def test_beegfs_directory_messages_do_not_queue_behind_one_direct_worker() -> None:
    # mkdir sends MkLocalDirMsg to the new directory's owner. With every regular worker busy it
    # waited for the owner's one direct worker, and from 256 tasks mkdir ran at a third of its
    # CPU-bound rate (59K at 1024 tasks against 161K at 64; a BeeGFS metadata review). BeeGFS's
    # regular workers take direct work in turn with the clients': at 1024 tasks the metadata CPU
    # holds the rate, as at 64.
    from sim.benchmarks.cmdline import parse_command

    system = load_system(ROOT / "topologies" / "beegfs-hdr100.yaml")
    workload = parse_command("mpirun --map-by node -np 1024 mdtest -n 200 -u -D")
    few, many = (run_point(system, workload, "dir_create", n, seed=1, precision=QUICK) for n in (64, 1024))
    assert few.bottleneck.endswith(".cpu") and many.bottleneck.endswith(".cpu"), many.bottleneck
    assert many.value > 0.85 * few.value
