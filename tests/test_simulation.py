"""Whole-system simulation: hand-computed small cases, properties that follow from the model, determinism."""

from __future__ import annotations

import gc
import math
import shutil
from dataclasses import replace
from pathlib import Path

import pytest
import simpy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sim.benchmarks.driver import Precision, run_point
from sim.benchmarks.workloads import find_workload
from sim.config.workload import Workload
from sim.params import value
from sim.topology.build import load_system
from sim.topology.summary import summarize
from tests.conftest import ROOT, build_model, hdr100_with_two_hcas_per_zone

TINY = Path(__file__).parent / "data" / "tiny.yaml"
EDR = ROOT / "topologies" / "beegfs-edr-2019.yaml"
MIB = 2**20


def _workload(benchmark: str = "iozone_seq_nn", record: str = "1 MiB", ops: list[str] | None = None) -> Workload:
    random = benchmark == "iozone_random_nn"
    return Workload(
        name="w",
        title="w",
        source="test",
        benchmark=benchmark,
        ops=ops or (["random_read", "random_write"] if random else ["write", "read"]),
        record_size=record,
        direct_io=True,
        fsync=True,
        aggregate_size="1 TB",
        threads=[1],
    )


def _writes(benchmark: str, record: str, file_size: str, **settings: object) -> Workload:
    """A write-only workload with a fixed file size per thread."""
    fields: dict[str, object] = {"name": "w", "title": "w", "source": "test", "benchmark": benchmark}
    fields |= {"ops": ["write"], "record_size": record, "direct_io": False, "fsync": True}
    fields |= {"file_size": file_size, "threads": [1]}
    return Workload.model_validate(fields | settings)


def test_one_thread_one_link_one_drive_by_hand() -> None:
    """Mean time per 1 MiB request, written out from the model's stages and the parts' datasheets.

    The thread's records follow one another on the drive, so each continues the one before and
    pays the sequential access latency. A write is in the drive's buffer once it has crossed the
    drive's link, so one thread alone would write faster than the flash programs (1 MiB every
    0.50 ms against 0.81 ms at 1.3 GB/s): the buffer fills and the flash's sustained rate is what
    the thread gets."""
    system = load_system(TINY)
    drive = system.drive_parts["storage.numa0.drive0"]
    intake = system.components["storage.numa0.drive0"].read_Bps or 1.0  # the link, at the drive's read rate
    link = system.components["storage.numa0.hca0"].write_Bps
    pcie = system.components["storage.numa0.pcie0"].write_Bps
    cpu = value("beegfs_storage_request_cpu_s")
    network = max(MIB / link, 2 * value("network_latency_s"))  # client CPU time rides along (<< 84 us)
    assert drive.write_buffer and drive.seq_read_latency and drive.seq_write_latency, "test fixture out of date"
    buffered = network + cpu + max(MIB / pcie, MIB / intake + drive.seq_write_latency)
    assert MIB / buffered > drive.seq_write  # the buffer fills
    read = cpu + max(MIB / pcie, MIB / drive.seq_read + drive.seq_read_latency) + network
    tight = Precision(rel_precision=0.01, min_batches=20, max_batches=200, max_device_ops=400_000)
    for op, rate in (("write", drive.seq_write), ("read", MIB / read)):
        point = run_point(system, _workload(), op, 1, seed=3, precision=tight)
        assert point.value == pytest.approx(rate, rel=0.02), op
        assert point.ci_low <= rate * 1.02 and point.ci_high >= rate * 0.98


@pytest.mark.parametrize("op", ["random_read", "random_write"])
def test_one_thread_of_4k_requests_by_hand(op: str) -> None:
    """Mean time per 4 KiB O_DIRECT request at one thread, where latencies rather than rates count:
    the client's CPU and the request and reply messages (one network latency each; the 4 KiB
    transfer, 0.3 us, hides under them), the storage server's CPU, and the drive's access latency
    plus its engine time (a read: 4 KiB at the sequential rate or one IOPS slot, whichever is
    longer; a write: 4 KiB across the drive's link into its buffer at its read rate, the flash programming it
    behind). The two latencies are 2-4% of the total, so the 1.5% band (the estimate is within
    0.5%) checks them."""
    system = load_system(TINY)
    drive = system.drive_parts["storage.numa0.drive0"]
    pcie = system.components["storage.numa0.pcie0"]
    kib4 = 4096.0
    if op == "random_read":
        device = drive.read_latency + max(kib4 / drive.seq_read, 1 / drive.rand_read_iops)
        pcie_s = kib4 / (pcie.read_Bps or 1)
    else:
        device = drive.write_latency + kib4 / (system.components["storage.numa0.drive0"].read_Bps or 1.0)
        pcie_s = kib4 / (pcie.write_Bps or 1)
    messages = value("beegfs_client_request_cpu_s") + 2 * value("network_latency_s")
    seconds = messages + value("beegfs_storage_request_cpu_s") + max(pcie_s, device)
    tight = Precision(rel_precision=0.005, min_batches=20, max_batches=400, max_device_ops=400_000)
    point = run_point(system, _workload("iozone_random_nn", "4 KiB"), op, 1, seed=3, precision=tight)
    assert point.value == pytest.approx(1 / seconds, rel=0.015)


def test_a_large_write_buffer_does_not_pass_for_a_fast_drive(tmp_path: Path) -> None:
    # A point's warm-up runs on until every drive's buffer has been seen full or empty between
    # bursts (SsdDrive.buffer_settled). Before, a 1 GiB buffer took the whole measurement at the
    # link's rate: 3.9 GB/s with a +-0.0% interval from a drive whose flash programs 1.3 GB/s.
    system = load_system(_tiny_with(tmp_path, "overrides: {write_buffer: 1 GiB}"))
    drive = system.drive_parts["storage.numa0.drive0"]
    point = run_point(system, _workload(), "write", 4, seed=3)
    assert point.value == pytest.approx(drive.seq_write, rel=0.02)
    assert point.bottleneck == "storage.numa0.drive0"


def test_a_point_above_the_ceiling_runs_on_until_its_transient_is_cut(tmp_path: Path) -> None:
    # beegfs-hdr100 with drives that program 1.0 GB/s behind their 4 MiB write buffers: 132 GB/s of
    # RAID0 groups under 136 GB/s of storage links. At 128 writers the buffers fill for about half
    # a second; the point used to stop after 10 ms at 135 GB/s +-1.4%, wholly above the ceiling, and
    # name an HCA. It now runs on until its interval reaches the drives' rate (an architect's what-if).
    (tmp_path / "parts").symlink_to(ROOT / "topologies" / "parts")
    text = (ROOT / "topologies" / "beegfs-hdr100.yaml").read_text()
    drives = "drives: {part: intel-p4610-3.2tb, count: 12}"
    assert text.count(drives) == 3, "test fixture out of date"
    path = tmp_path / "slow-flash.yaml"
    path.write_text(text.replace(drives, drives[:-1] + ", overrides: {seq_write: 1.0 GB/s}}"))
    system = load_system(path)
    point = run_point(system, find_workload("beegfs-hp-iozone-seq", path), "write", 128, seed=1)
    ceiling = summarize(system).write.Bps
    assert ceiling == pytest.approx(132e9)
    assert point.ci_low <= ceiling and not point.above_ceiling and point.converged, point


def test_an_ssd_whose_write_buffer_keeps_up_is_off_the_path(tmp_path: Path) -> None:
    # One O_DIRECT writer on tiny.yaml. Its P4600 programs 1.3 GB/s: the writer outruns the flash,
    # the buffer stays full, writes wait for room, and the drive is the bottleneck. With flash of
    # 2.6 or 3.9 GB/s the buffer takes every write at the drive's link rate and the flash programs
    # behind: the rate does not change with the flash, so the flash is not what holds it, however
    # busy (a teaching review found the drive named at 85% for a rate its flash did not set).
    system = load_system(TINY)
    full = run_point(system, _workload(), "write", 1, seed=1)
    assert full.bottleneck == "storage.numa0.drive0" and full.off_path == ()
    rates = []
    for flash in ("2.6 GB/s", "3.9 GB/s"):
        folder = tmp_path / flash.split()[0]
        folder.mkdir()
        point = run_point(
            load_system(_tiny_with(folder, f"overrides: {{seq_write: {flash}}}")), _workload(), "write", 1
        )
        assert point.off_path == ("storage.numa0.drive0",) and point.bottleneck != "storage.numa0.drive0", point
        rates.append(point.value)
    assert rates[0] == pytest.approx(rates[1], rel=0.01) and rates[0] > 1.5 * full.value


def test_a_pool_as_full_behind_the_named_one_is_reported(tmp_path: Path) -> None:
    # tiny.yaml with one client: its 8 connections to the storage service meet the target's 8
    # workers. 16 random readers wait for a connection, and a request that holds one always finds a
    # worker free, so the connections are named; but the workers are as full, and doubling the
    # connections alone only moves the wait to them (a teaching review: the same 49.4K IOPS).
    (tmp_path / "parts").symlink_to(ROOT / "topologies" / "parts")
    two = '{name: "client{i}", count: 2,'
    assert two in TINY.read_text(), "test fixture out of date"
    path = tmp_path / "one-client.yaml"
    path.write_text(TINY.read_text().replace(two, two.replace("2", "1")))
    reads = _workload("iozone_random_nn", "4 KiB", ops=["random_read"])
    point = run_point(load_system(path), reads, "random_read", 16, seed=1)
    assert point.bottleneck == "client0->storage.numa0.storage0"
    assert point.full_behind == ("storage.numa0.target0.workers",)
    assert point.to_json()["full_behind"] == ["storage.numa0.target0.workers"]
    more = tmp_path / "more-connections.yaml"
    more.write_text(path.read_text().replace("client: 8}", "client: 16}"))
    wider = run_point(load_system(more), reads, "random_read", 16, seed=1)
    assert wider.bottleneck == "storage.numa0.target0.workers" and wider.full_behind == ()
    assert wider.value == pytest.approx(point.value, rel=0.03)


def test_saturated_drive_is_the_bottleneck() -> None:
    system = load_system(TINY)
    point = run_point(system, _workload(), "write", 8, seed=3)
    drive = system.drive_parts["storage.numa0.drive0"]
    assert point.bottleneck == "storage.numa0.drive0"
    assert point.value == pytest.approx(drive.seq_write, rel=0.03)
    assert point.bottleneck_utilization == pytest.approx(1.0, abs=0.02)
    assert point.limit == "capacity"


def test_one_small_synchronous_stream_is_latency_bound() -> None:
    """One thread of 4 KiB random writes keeps no part of the EDR system half busy: the busiest part
    is still reported, but the point is named latency-bound, and 16 threads indeed go faster."""
    system = load_system(EDR)
    w = _workload("iozone_random_nn", "4 KiB")
    one = run_point(system, w, "random_write", 1, seed=3)
    assert one.limit == "latency" and one.bottleneck_utilization < 0.5
    assert one.bottleneck in one.utilization
    assert run_point(system, w, "random_write", 16, seed=3).value > 8 * one.value


def test_link_shared_by_many_clients_caps_at_its_rate() -> None:
    system = load_system(EDR)
    point = run_point(system, _workload(), "read", 256, seed=3)
    ceiling = summarize(system).read.Bps
    assert point.value == pytest.approx(ceiling, rel=0.02)
    assert point.bottleneck.endswith(".hca0.tx")


def test_same_seed_same_numbers_other_seed_other_numbers() -> None:
    system = load_system(EDR)
    w = _workload("iozone_random_nn", "4 KiB")
    a = run_point(system, w, "random_write", 64, seed=9)
    b = run_point(system, w, "random_write", 64, seed=9)
    c = run_point(system, w, "random_write", 64, seed=10)
    assert (a.value, a.ci_low, a.ci_high, a.utilization) == (b.value, b.ci_low, b.ci_high, b.utilization)
    # The engine's cost in events (what bench/ reports per request) is reproducible too, and a
    # request costs at least one event.
    assert a.events_total == b.events_total >= a.requests_total > 0
    assert a.value != c.value


@settings(max_examples=8, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(
    threads=st.sampled_from([1, 3, 16, 40, 128, 512]), op=st.sampled_from(["write", "read"]), seed=st.integers(1, 1000)
)
def test_never_above_the_max_flow_ceiling(threads: int, op: str, seed: int) -> None:
    system = load_system(EDR)
    ceiling = getattr(summarize(system), op).Bps
    point = run_point(system, _workload(), op, threads, seed=seed)
    assert point.ci_low <= ceiling * 1.001
    # The estimate itself, not only its interval, and against the tighter ceiling of the clients the
    # threads run on (one EDR HCA for one thread): within the 0.5% a point settles to at the ceiling.
    assert point.ceiling_Bps is not None and point.ceiling_Bps <= ceiling * (1 + 1e-9)
    assert point.value <= point.ceiling_Bps * 1.005, (point.value, point.ceiling_Bps)


@settings(max_examples=6, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(
    threads=st.sampled_from([1, 4, 32, 256]),
    record=st.sampled_from(["1 MiB", "4 MiB", "256 KiB"]),
    op=st.sampled_from(["write", "read"]),
)
def test_utilisation_and_bytes_conserved(threads: int, record: str, op: str) -> None:
    system = load_system(EDR)
    point = run_point(system, _workload(record=record), op, threads, seed=5)
    assert point.utilization and all(0.0 < u <= 1.0 for u in point.utilization.values())
    assert point.pool_occupancy and all(0.0 < u <= 1.0 for u in point.pool_occupancy.values())
    # Every byte the benchmark completed crossed a client HCA and a server HCA, and the same bytes
    # (give or take the requests in flight at the window's edges) reached the drives.
    direction = ("tx", "rx") if op == "write" else ("rx", "tx")

    def through(suffix: str, kind: str) -> float:  # what the HCAs of one kind of host carried
        return sum(
            u * point.simulated_s * system.components[name.rsplit(".", 1)[0]].write_Bps
            for name, u in point.utilization.items()
            if name.endswith(suffix)
            and name.split(".")[0].startswith(kind)
            and system.components[name.rsplit(".", 1)[0]].kind == "hca"  # not storage-switch~cluster-fabric
        )

    client_bytes = through("." + direction[0], "client")
    server_bytes = through("." + direction[1], "meta") + through("." + direction[1], "storage")
    slack = 2 * threads * _workload(record=record).record_size  # requests in flight at either edge
    assert client_bytes == pytest.approx(point.bytes_moved, abs=slack)
    assert server_bytes == pytest.approx(point.bytes_moved, abs=slack)


def _tiny_with(tmp_path: Path, overrides: str) -> Path:
    """tiny.yaml with more overrides of its storage drive (``overrides: {field: value}``)."""
    original = "overrides: {capacity: 16 TB}"
    assert original in TINY.read_text(), "test fixture out of date"
    text = TINY.read_text().replace(original, original[:-1] + ", " + overrides.removeprefix("overrides: {"))
    (tmp_path / "parts").symlink_to(ROOT / "topologies" / "parts")
    path = tmp_path / "tiny.yaml"
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("override", "op", "threads"),
    [
        ("overrides: {seq_write: 2.6 GB/s}", "write", 4),  # rate-bound at 4 threads
        ("overrides: {seq_read: 3.9 GB/s}", "read", 4),
        ("overrides: {read_latency: 10 us}", "random_read", 1),  # latency-bound at 1 thread
    ],
)
def test_faster_part_is_never_slower(tmp_path: Path, override: str, op: str, threads: int) -> None:
    workload = _workload("iozone_random_nn", "4 KiB") if op.startswith("random") else _workload()
    base = run_point(load_system(TINY), workload, op, threads, seed=2)
    faster = run_point(load_system(_tiny_with(tmp_path, override)), workload, op, threads, seed=2)
    assert faster.ci_high >= base.ci_low
    assert faster.value > base.value * 1.02  # these parts were the bottleneck, so it must show


IMPROVEMENTS = {  # a drive field and how to make it better by a factor
    "seq_read": "{:.4g} GB/s",
    "seq_write": "{:.4g} GB/s",
    "rand_read_iops": "{:.6g} IOPS",
    "rand_write_iops": "{:.6g} IOPS",
    "read_latency": "{:.4g} us",
    "write_latency": "{:.4g} us",
    "seq_read_latency": "{:.4g} us",
}
#: The sequential latency that must stay at or below each random one (a part with it above is refused).
SEQUENTIAL = {"read_latency": "seq_read_latency", "write_latency": "seq_write_latency"}


# Each drive field with the operations whose requests use it: a field paired with an operation
# that never reads it would leave the improved run identical to the base run, a test of nothing.
# One thread's sequential records continue one another on the drive (the sequential latency);
# its writes fill the drive's buffer even alone, so the flash's rate is all they see of the drive,
# and the write latencies and the buffer's size are paired with random writes or with nothing.
USES = [
    ("seq_read", "read"),
    ("seq_write", "write"),
    ("rand_read_iops", "random_read"),
    ("rand_write_iops", "random_write"),
    ("seq_read_latency", "read"),
    ("read_latency", "random_read"),
    ("write_latency", "random_write"),
]


def _drive_link_rate(drive: object) -> float:
    """What a drive part's own interface carries (lanes x its bus's lane rate), rounded down to the
    4 significant digits an override is written with."""
    from sim.config.load import load_catalogue

    catalogue, _ = load_catalogue(ROOT / "topologies" / "parts")
    bus = catalogue.get("buses", drive.interface.bus).part  # type: ignore[attr-defined]
    rate = drive.interface.lanes * bus.lane_rate  # type: ignore[attr-defined]
    return math.floor(rate / 1e6) * 1e6


@settings(max_examples=12, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    use=st.sampled_from(USES),
    factor=st.floats(1.2, 4.0),
    threads=st.sampled_from([1, 4, 32]),
)
def test_no_point_gets_slower_when_a_drive_gets_better(
    tmp_path_factory: pytest.TempPathFactory, use: tuple[str, str], factor: float, threads: int
) -> None:
    """Raising any rate of the storage drive (or cutting a latency) never lowers a prediction:
    the improved system's interval reaches the base system's, same seed. One thread keeps one
    request in flight, which meets no queue: each of its requests is at least as quick with the
    better drive, so its rate is not lower at all."""
    field, op = use
    drive = load_system(TINY).drive_parts["storage.numa0.drive0"]
    current = getattr(drive, field)
    extra = ""
    if field.endswith("latency"):
        better = IMPROVEMENTS[field].format(current / factor * 1e6)
        sequential = SEQUENTIAL.get(field)
        if sequential is not None and getattr(drive, sequential) > current / factor:
            extra = f", {sequential}: {better}"  # a sequential access no slower than a random one
    elif field.startswith("seq"):
        # No faster than the drive's own PCIe link carries: pfssim refuses such a part.
        better = IMPROVEMENTS[field].format(min(current * factor, _drive_link_rate(drive)) / 1e9)
    else:
        better = IMPROVEMENTS[field].format(current * factor)
    path = _tiny_with(tmp_path_factory.mktemp("better"), f"overrides: {{{field}: {better}{extra}}}")
    random = op.startswith("random")
    workload = _workload("iozone_random_nn", "4 KiB") if random else _workload()
    base = run_point(load_system(TINY), workload, op, threads, seed=4)
    improved = run_point(load_system(path), workload, op, threads, seed=4)
    # The improved estimate lies at or above the base's interval's lower end (an overlap of the two
    # intervals alone would let it fall by two of their half-widths).
    assert improved.value >= base.ci_low, (field, better, base.value, improved.value)
    if threads == 1:
        assert improved.value >= base.value * (1 - 1e-12), (field, better, base.value, improved.value)


def test_a_lone_request_is_quicker_with_a_quicker_drive(tmp_path: Path) -> None:
    # One thread, so no queue: its 4 KiB random reads and writes wait out the drive's latency every
    # time, and a quarter of it must show (the property above only says "not lower").
    faster = _tiny_with(tmp_path, "overrides: {read_latency: 20 us, write_latency: 4 us, seq_write_latency: 4 us}")
    workload = _workload("iozone_random_nn", "4 KiB")
    drive = load_system(TINY).drive_parts["storage.numa0.drive0"]
    assert drive.read_latency > 4 * 20e-6 and drive.write_latency >= 5 * 4e-6, "test fixture out of date"
    for op in ("random_read", "random_write"):
        base = run_point(load_system(TINY), workload, op, 1, seed=4)
        quick = run_point(load_system(faster), workload, op, 1, seed=4)
        assert quick.ci_low > base.ci_high, (op, base.value, quick.value)


def _hc_model(workload: str, op: str, threads: int, seed: int):  # noqa: ANN202 - a BeeGFSModel and its platform
    """The beegfs-high-capacity model of one point, built but not run."""
    from sim.benchmarks.workloads import find_workload

    system = load_system(ROOT / "topologies" / "beegfs-high-capacity.yaml")
    model = build_model(system, find_workload(workload), op, threads, seed)
    return model, model.ctx.platform


def _prefilled_spans(op: str, threads: int) -> list[tuple[float, float]]:
    """(span of the held dirty extents, size of the file region) per ME4 virtual disk the workload uses."""
    name = "beegfs-hc-iozone-random" if op.startswith("random") else "beegfs-hc-iozone-seq"
    model, platform = _hc_model(name, op, threads, 5)
    model.prefill_caches()
    used = {target for f in model.files for target in f.targets}
    region = model.file_size * threads / len(used)
    spans = []
    for controller in platform.controllers.values():
        for vdisk, cache in controller.caches.items():
            if vdisk in used:
                starts = [span[0] for span in cache.extent.values()]
                ends = [span[1] for span in cache.extent.values()]
                spans.append((max(ends) - min(starts), region))
    return spans


def test_sequential_writes_start_with_recent_stripes_in_the_cache() -> None:
    # A long sequential run leaves each stream's latest records in the cache, not pieces from
    # anywhere in its files: the held data spans a few GiB behind the start, not the file region.
    sequential, random = _prefilled_spans("write", 2), _prefilled_spans("random_write", 2)
    assert sequential and random  # caches were prefilled at all
    for span, region in sequential:
        assert span < 0.01 * region
    for span, region in random:
        assert span > 0.5 * region


def test_chunk_files_start_on_stripe_unit_boundaries_of_parity_targets() -> None:
    # 8 TB over 512 threads in 4 KiB records is no whole number of MiB per file; XFS still starts
    # each file's data on a stripe unit, so a file's records never straddle a RAID6 stripe that
    # the file before it ends in. (Sequential IOzone files are whole 1 MiB records since session 31.)
    model, platform = _hc_model("beegfs-hc-iozone-random", "random_write", 512, 1)
    assert model.file_size % MIB != 0
    for f in model.files:
        for target, base in zip(f.targets, f.bases, strict=True):
            assert base % platform.raids[target].su == 0


def test_me4_read_ahead_carries_a_single_sequential_stream() -> None:
    # One thread reading 1 MiB records (O_DIRECT, one target per file): without read-ahead each
    # record waits for its two member drives (about 2.5 ms of transfer each, plus rotational
    # misses); with the default one-stripe read-ahead the drives read whole stripes ahead of it and
    # the record waits only for the host path. The white paper measured 717 MB/s for this point
    # (modeling-facts 5.8), far above what the drives give one synchronous stream.
    from sim.benchmarks.workloads import find_workload

    system = load_system(ROOT / "topologies" / "beegfs-high-capacity.yaml")
    workload = find_workload("beegfs-hc-iozone-seq")
    assert set(system.enclosure_read_ahead.values()) == {"stripe"}  # "adaptive", as modelled
    ahead = run_point(system, workload, "read", 1, seed=3)
    for enclosure in system.enclosure_read_ahead:
        system.enclosure_read_ahead[enclosure] = "disabled"
    plain = run_point(system, workload, "read", 1, seed=3)
    assert plain.value < 0.4e9
    assert ahead.value > 2.5 * plain.value


def test_read_ahead_prestart_lands_where_each_stream_first_reads() -> None:
    """IOR N-1 reads on beegfs-high-capacity: the read-ahead streams prestarted for the (task,
    target) pairs are exactly where each pair's first read of its target begins."""
    from sim.benchmarks.workloads import find_workload
    from sim.engine.meter import Meter
    from sim.engine.rng import Streams
    from sim.fs.common import RunContext
    from sim.fs.models import model_for
    from sim.fs.platform import Platform

    system = load_system(ROOT / "topologies" / "beegfs-high-capacity.yaml")
    workload = find_workload("beegfs-hc-ior-n1")
    env = simpy.Environment()
    streams = Streams(2)
    platform = Platform(env, system, streams)
    model = model_for(RunContext(env, system, platform, streams, workload, "read", 4, Meter(env, 4)))
    model.prestart_read_ahead()
    readers = {vdisk: r for c in platform.controllers.values() for vdisk, r in c.readers.items()}
    prestarted = {(vdisk, offset) for vdisk, r in readers.items() for offset in r.streams}
    assert len(prestarted) == 4 * model.num_targets  # 4 tasks x 32 targets, all within the budget
    first: dict[tuple[int, str], float] = {}
    piece = model._piece

    def spy(t, client, f, index, chunk_offset, size, *rest):  # noqa: ANN001, ANN202
        target = f.targets[index % len(f.targets)]
        first.setdefault((t, target), f.bases[index % len(f.bases)] + chunk_offset)
        return piece(t, client, f, index, chunk_offset, size, *rest)

    model._piece = spy  # type: ignore[method-assign]
    model.start()
    env.run(until=0.2)
    assert len(first) == 4 * model.num_targets
    assert {(target, offset) for (_t, target), offset in first.items()} == prestarted
    assert sum(r.hits for r in readers.values()) > 0


def test_huge_calls_fit_the_budget() -> None:
    """IOR with 1 GiB transfers on 2 MiB chunks: 512 pieces a call. Warm-up and batches shrink to
    what one budget of drive commands affords (never below one call per task in flight), so the
    point costs a few hundred calls instead of 200 + 10 x 100, and still finds the drive's rate."""
    system = load_system(TINY)
    w = _writes("ior_seq_n1", "1 GiB", "64 GiB", direct_io=True)
    point = run_point(system, w, "write", 4, seed=3)
    assert point.requests_total < 400
    assert point.value == pytest.approx(system.drive_parts["storage.numa0.drive0"].seq_write, rel=0.02)


def test_a_latency_bound_point_names_the_part_its_requests_wait_on() -> None:
    """PixStor, 8 threads of 4 KiB random reads: each read waits on one HDD, and no part is half busy.
    The drives each serve fewer than the 20 visits a saturated part must show, but a latency-bound
    point does not claim saturation, so its busiest part is named: a drive, not the NSD servers'
    CPU that every read crosses for a few microseconds. The drives are judged by RAID group: the
    busiest group's drives are named, at their mean."""
    from sim.benchmarks.driver import limit_of
    from sim.benchmarks.workloads import find_workload

    system = load_system(ROOT / "topologies" / "pixstor-large.yaml")
    workload = find_workload("pixstor-iozone-random")
    point = run_point(system, workload, "random_read", 8, seed=1, precision=Precision(min_batches=5, max_batches=10))
    assert limit_of(point.bottleneck_utilization) == "latency"
    assert point.bottleneck.endswith(".drives"), point.bottleneck
    grouped = {m for group in system.groups.values() if len(group.members) > 1 for m in group.members}
    candidates = [u for name, u in point.utilization.items() if name not in grouped]
    assert point.bottleneck_utilization == max(candidates)


def test_files_smaller_than_their_stripe_width_run_and_start_only_their_targets_caches() -> None:
    """A 16 MiB file striped over 32 targets in 1 MiB chunks reaches 16 of them: the cache prefill
    must not loop looking for pieces of the others (it did, forever), nor fill the caches of
    targets no file reaches or of the metadata array."""
    system = load_system(ROOT / "topologies" / "beegfs-high-capacity.yaml")
    workload = _writes("ior_seq_nn", "8 MiB", "16 MiB", stripe={"num_targets": 32, "chunk_size": "1 MiB"})
    point = run_point(system, workload, "write", 1, seed=2, precision=Precision(rel_precision=0.1))
    assert point.value > 0
    model = build_model(system, workload, "write", 1, seed=2)
    model.prefill_caches()
    held = {vdisk for c in model.ctx.platform.controllers.values() for vdisk, cache in c.caches.items() if cache.held}
    assert held and held <= set(model.files[0].targets) and not held & set(system.metadata_targets)


def test_a_part_with_few_visits_is_not_named_saturated() -> None:
    """The capacity bottleneck is named among parts with at least MIN_BOTTLENECK_VISITS visits: a
    part 90% busy from 3 long jobs loses to one 70% busy from 100 short ones."""
    import simpy

    from sim.benchmarks.driver import MIN_BOTTLENECK_VISITS, _utilization
    from sim.engine.core import Station

    env = simpy.Environment()
    few, many = Station(env, "few", 1), Station(env, "many", 1)
    for _ in range(3):
        few.reserve(0.3)
    for _ in range(100):
        many.reserve(0.007)
    env.run(until=1.0)

    class Parts:  # the two stations and no pools, as a Platform shows them to _utilization
        pools: dict = {}
        raids: dict = {}  # no RAID groups

        @staticmethod
        def all_stations() -> dict[str, Station]:
            return {"few": few, "many": many}

    utilization, bottleneck, _, _ = _utilization(Parts(), {}, {}, 1.0)  # type: ignore[arg-type]
    assert utilization == pytest.approx({"few": 0.9, "many": 0.7})
    assert 3 < MIN_BOTTLENECK_VISITS <= 100 and bottleneck == "many"


def test_beegfs_stripes_a_file_over_its_targets_chunk_by_chunk() -> None:
    """Offset x is in chunk x // chunk on target (chunk mod n), at (chunk // n) x chunk + x mod chunk
    in that target's chunk file; a call crossing a chunk boundary is cut there."""
    from sim.fs.beegfs import BeeGFSModel

    model = BeeGFSModel.__new__(BeeGFSModel)  # only the layout arithmetic, no system
    model.chunk, model.num_targets = MIB, 4
    assert model._pieces(5 * MIB, MIB) == [(1, MIB, MIB)]
    assert model._pieces(1.5 * MIB, MIB) == [(1, 0.5 * MIB, 0.5 * MIB), (2, 0.0, 0.5 * MIB)]
    assert model._pieces(3.5 * MIB, MIB) == [(3, 0.5 * MIB, 0.5 * MIB), (0, MIB, 0.5 * MIB)]


@pytest.mark.parametrize(("op", "prefilled"), [("write", True), ("random_write", True), ("read", False)])
def test_write_points_start_with_the_caches_a_long_write_leaves(op: str, prefilled: bool, monkeypatch) -> None:
    """A write point starts from the controller caches' steady state, not from empty ones (whose
    filling would be measured as write speed): first at their flush watermark, and again full if a
    write finds one full (here, with the prefill itself replaced by nothing, the caches start empty
    and fill). A read point starts with nothing dirty."""
    from sim.fs.beegfs import BeeGFSModel

    calls: list[tuple[str, float]] = []
    monkeypatch.setattr(
        BeeGFSModel, "prefill_caches", lambda self: calls.append((self.ctx.op, self.ctx.platform.cache_fill))
    )
    system = load_system(ROOT / "topologies" / "beegfs-high-capacity.yaml")
    random = op.startswith("random")
    workload = _workload("iozone_random_nn" if random else "iozone_seq_nn", "4 KiB" if random else "1 MiB")
    run_point(system, workload, op, 1, seed=1, precision=Precision(rel_precision=0.2, max_device_ops=2000))
    assert calls == ([(op, 0.5), (op, 1.0)] if prefilled else [])


def test_a_point_started_with_full_random_write_caches_measures_only_after_they_turned_over(monkeypatch) -> None:
    """The pilot at the flush watermark finds the caches filling; the point starts again with them
    full of drawn random writes and measures nothing until every cache has destaged as many entries
    as it started with."""
    from sim.benchmarks import driver

    seen: list[tuple[float, bool, int, int]] = []  # (cache fill, turned over, destages, entries started with)
    take = driver._Mark.take.__func__  # type: ignore[attr-defined]

    def spy(cls, env, meter, platform):  # noqa: ANN001, ANN202 - records the first mark of each run
        if meter.count and (not seen or seen[-1][0] != platform.cache_fill):
            caches = [cache for c in platform.controllers.values() for cache in c.caches.values()]
            seen.append(
                (
                    platform.cache_fill,
                    platform.caches_turned_over(),
                    min(cache.destages for cache in caches if cache.swept_start),
                    max(cache.swept_start for cache in caches),
                )
            )
        return take(cls, env, meter, platform)

    monkeypatch.setattr(driver._Mark, "take", classmethod(spy))
    system = load_system(ROOT / "topologies" / "beegfs-high-capacity.yaml")
    workload = _workload("iozone_random_nn", "4 KiB")
    run_point(
        system, workload, "random_write", 1, seed=1, precision=Precision(rel_precision=0.2, max_device_ops=20_000)
    )
    [(full, turned, destages, started)] = seen  # the pilot stopped in its warm-up
    # A cache's start (512 entries) outlasts the usual warm-up (200 completions) by itself.
    assert full == 1.0 and started > 200 and turned and destages >= started


def test_a_point_whose_caches_could_not_turn_over_in_its_budget_is_not_converged() -> None:
    """A budget too small for the turnover (500 drive commands a budget, four in all: 2,000, where
    each cache's 512 read-modify-writes take six commands each) ends the warm-up anyway; the point
    then measures from a start still partly guessed and says so, whatever its interval. Eight
    threads, so that the pilot at the flush watermark soon finds a cache full and the point runs
    again with its caches full."""
    system = load_system(ROOT / "topologies" / "beegfs-high-capacity.yaml")
    workload = _workload("iozone_random_nn", "4 KiB")
    loose = Precision(rel_precision=10.0, min_batches=2, max_batches=6, min_batch=10)
    cut = run_point(system, workload, "random_write", 8, seed=1, precision=replace(loose, max_device_ops=500))
    whole = run_point(system, workload, "random_write", 8, seed=1, precision=replace(loose, max_device_ops=20_000))
    assert (cut.turned_over, cut.converged) == (False, False)
    assert (whole.turned_over, whole.converged) == (True, True)


SLOW_UPI_CPU = """
cpus:
  test-slow-upi:
    model: "test CPU with one slow UPI link"
    cores: 24
    base_clock: "2.9 GHz"
    upi_links: 1
    max_sockets: 2
    upi_link_rate: "2 GB/s"
    pcie_bus: pcie3
    pcie_lanes: 48
    source: test
"""


def _slow_upi_tiny(tmp_path: Path, *, drive_on_socket1: bool) -> Path:
    """tiny.yaml on a two-socket CPU with one 2 GB/s UPI link; the HCA is on socket 0, the drive and
    its service on socket 1 or, with ``drive_on_socket1`` false, on socket 0 beside the HCA."""
    parts = tmp_path / "parts"
    parts.mkdir()
    for catalogue in (ROOT / "topologies" / "parts").glob("*.yaml"):
        text = catalogue.read_text()
        if catalogue.name == "servers.yaml":
            assert text.count("\ncpus:\n") == 1, "test fixture out of date"
            text = text.replace("\ncpus:\n", SLOW_UPI_CPU, 1)
        (parts / catalogue.name).write_text(text)
    edits = [
        (
            "  - name: storage\n    part: poweredge-r740xd\n",
            "  - name: storage\n    part: poweredge-r740xd\n    cpu: test-slow-upi\n",
        ),
        ("services: [{kind: beegfs-storage}]", "services: [{kind: beegfs-storage, interfaces: all}]"),
    ]
    if drive_on_socket1:
        edits.append(("edr, switch: ib}]\n        # 16 TB", "edr, switch: ib}]\n      - # 16 TB"))
    else:  # an empty socket 1, so that the server has a UPI
        edits.append(("interfaces: all}]\n", "interfaces: all}]\n      - {}\n"))
    text = TINY.read_text()
    for old, new in edits:
        assert text.count(old) == 1, "test fixture out of date"
        text = text.replace(old, new)
    (tmp_path / "tiny.yaml").write_text(text)
    return tmp_path / "tiny.yaml"


def test_a_slow_upi_between_the_hca_and_the_drive_sets_the_ceiling_and_the_rate(tmp_path: Path) -> None:
    """tiny.yaml with the storage server's HCA on socket 0 and its drive and service on socket 1,
    joined by one 2 GB/s UPI link: every byte read crosses the UPI, which is slower than the drive
    (3.2 GB/s) and the link (12.4 GB/s). The max-flow ceiling is the UPI's rate, with the UPI as
    its minimum cut, and the simulated reads reach it and name it without going past it."""
    system = load_system(_slow_upi_tiny(tmp_path, drive_on_socket1=True))
    assert system.zone_of["storage.numa0.hca0"] == "storage.numa0"
    assert "storage.numa1.target0" in system.storage_targets
    bound = summarize(system).read
    assert bound.Bps == pytest.approx(2e9)
    assert [b.kind for b in bound.bottlenecks] == ["upi"]
    point = run_point(system, _workload(), "read", 16, seed=2)
    assert point.bottleneck == "storage.upi.numa1->numa0"  # reads cross from the drive's socket to the HCA's
    assert 0.95 * 2e9 <= point.value <= 2e9 * 1.001


def test_traffic_within_a_socket_does_not_cross_the_upi(tmp_path: Path) -> None:
    """The same slow UPI with the drive beside the HCA on socket 0: no byte crosses the UPI, so the
    drive (3.2 GB/s), not the 2 GB/s UPI, sets the ceiling and the simulated reads pass 2 GB/s."""
    system = load_system(_slow_upi_tiny(tmp_path, drive_on_socket1=False))
    assert set(system.upi_of) == {"storage.numa0", "storage.numa1"}
    assert system.zone_of["storage.numa0.hca0"] == "storage.numa0"
    assert "storage.numa0.target0" in system.storage_targets
    bound = summarize(system).read
    assert "upi" not in [b.kind for b in bound.bottlenecks]
    assert bound.Bps > 3e9
    point = run_point(system, _workload(), "read", 16, seed=2)
    assert "upi" not in point.bottleneck
    assert point.value > 2.5e9


# A client HCA in a PCIe Gen3 x1 slot: 0.985 GB/s, a third of the P4600's 3.2 GB/s reads, so one or
# two of them, not the storage server, set the rate of tiny.yaml's reads.
NARROW_HCA = "{part: connectx4-edr, switch: %s, overrides: {host: {bus: pcie3, lanes: 1}}}"


def _tiny_client_with_hcas(tmp_path: Path, *switches: str) -> Path:
    """tiny.yaml with one client whose narrow HCAs are cabled to ``switches`` (``island``: a switch
    joined to nothing)."""
    hcas = ", ".join(NARROW_HCA % switch for switch in switches)
    edits = [
        (
            "count: 2, part: poweredge-c6420, hcas: [{part: connectx4-edr, switch: ib}]}",
            f"count: 1, part: poweredge-c6420, hcas: [{hcas}]}}",
        ),
        (
            "    - {name: ib, part: mellanox-sb7890}\n",
            "    - {name: ib, part: mellanox-sb7890}\n    - {name: island, part: mellanox-sb7890}\n",
        ),
    ]
    text = TINY.read_text()
    for old, new in edits:
        assert text.count(old) == 1, "test fixture out of date"
        text = text.replace(old, new)
    (tmp_path / "parts").symlink_to(TINY.parent / "parts")
    (tmp_path / "tiny.yaml").write_text(text)
    return tmp_path / "tiny.yaml"


def test_a_client_spreads_its_threads_over_its_hcas(tmp_path: Path) -> None:
    """16 reading threads on one client whose HCAs are its bottleneck: with two HCAs the client's
    threads are dealt to them in turn, so both carry half the bytes and the rate doubles, as the
    max-flow ceiling says (every thread used to take the first HCA: 0.985 GB/s with two). An HCA on
    a switch that reaches no server is left out."""
    rate = 0.985e9
    for switches, used in ((["ib"], 1), (["ib", "ib"], 2), (["ib", "island"], 1)):
        path = tmp_path / "-".join(switches)
        path.mkdir()
        system = load_system(_tiny_client_with_hcas(path, *switches))
        assert summarize(system).read.Bps == pytest.approx(used * rate)
        point = run_point(system, _workload(), "read", 16, seed=3)
        assert point.value == pytest.approx(used * rate, rel=0.02), switches
        busy = {name: u for name, u in point.utilization.items() if name.startswith("client0.hca")}
        assert sorted(busy) == [f"client0.hca{h}.rx" for h in range(used)], switches
        assert all(u == pytest.approx(1.0, abs=0.02) for u in busy.values())


def test_threads_are_counted_per_client_round_robin() -> None:
    """18 threads on 16 clients: threads 0-15 take one client each and 16-17 the first two again."""
    from sim.benchmarks.workloads import find_workload

    system = load_system(ROOT / "topologies" / "beegfs-hdr100.yaml")
    ctx = build_model(system, find_workload("beegfs-hp-iozone-seq"), "write", 18).ctx
    clients = system.clients
    assert len(clients) == 16
    assert [ctx.threads_on(c) for c in clients] == [2, 2] + [1] * 14
    assert [ctx.client_of(t) for t in (0, 15, 16, 17)] == [clients[0], clients[15], clients[0], clients[1]]


def test_a_point_out_of_batches_with_budget_left_doubles_its_batches() -> None:
    # Random reads (noisy batches) held to a precision no point can reach: each doubling merges the
    # 10 batches into 5 and runs 5 more of twice the size, so it simulates twice the requests that
    # followed the warm-up before it.
    system = load_system(TINY)
    runs = [
        run_point(
            system,
            _workload("iozone_random_nn", "4 KiB"),
            "random_read",
            4,
            seed=2,
            precision=Precision(
                rel_precision=1e-12, min_batches=5, max_batches=10, max_doublings=d, max_device_ops=10**9
            ),
        )
        for d in (0, 1, 2)
    ]
    assert [p.batches + p.transient_batches for p in runs] == [10, 10, 10]
    assert not any(p.converged for p in runs)
    first, second, third = (p.requests_total for p in runs)
    assert second > first
    assert third - second == 2 * (second - first)


def test_precision_wants_an_even_batch_cap_of_at_least_two_sets() -> None:
    with pytest.raises(ValueError, match="even"):
        Precision(min_batches=5, max_batches=9)
    with pytest.raises(ValueError, match="twice"):
        Precision(min_batches=10, max_batches=12)


def test_a_drive_bound_point_with_few_visits_per_drive_names_a_drive_group() -> None:
    """PixStor, 256 threads of 4 KiB random reads: the rate is the drives' (most of the 320 HDDs
    more than half busy), but the point's short window gives each drive fewer than the 20 visits
    the bottleneck rule asks of a part. The drives of the busiest RAID group are named, at their
    mean utilisation, not the NSD server CPU (a few percent busy)."""
    from sim.benchmarks.driver import limit_of
    from sim.benchmarks.workloads import find_workload

    system = load_system(ROOT / "topologies" / "pixstor-large.yaml")
    workload = find_workload("pixstor-iozone-random")
    point = run_point(system, workload, "random_read", 256, seed=1)
    drives = [u for name, u in point.utilization.items() if ".drive" in name and not name.endswith(".drives")]
    assert sum(u > 0.5 for u in drives) > len(drives) / 2
    assert point.bottleneck.endswith(".drives"), point.bottleneck
    assert limit_of(point.bottleneck_utilization) == "capacity"
    groups = {name: u for name, u in point.utilization.items() if name.endswith(".drives")}
    assert point.bottleneck_utilization == max(groups.values())
    # The group's figure is its ten drives' mean.
    members = system.groups[point.bottleneck.removesuffix(".drives")].members
    assert len(members) == 10 and len(groups) == 32
    mean = sum(point.utilization.get(m, 0.0) for m in members) / len(members)
    assert point.bottleneck_utilization == pytest.approx(mean, rel=1e-12)


def test_a_server_hca_on_a_fabric_the_client_cannot_reach_is_not_picked(monkeypatch: pytest.MonkeyPatch) -> None:
    """With no service HCA on the client HCA's own switch, the pick is among the HCAs a switch path
    reaches: one on an isolated fabric is left out whatever the thread index."""
    import simpy

    from sim.engine.rng import Streams
    from sim.fs.platform import Platform

    system = load_system(ROOT / "topologies" / "beegfs-edr-2019.yaml")
    platform = Platform(simpy.Environment(), system, Streams(1))
    client_hca = system.client_hcas[system.clients[0]][0]
    service = next(s for s in system.services.values() if s.kind == "beegfs-storage")
    reachable = service.hcas[0]
    assert system.hca_switch[reachable] != system.hca_switch[client_hca]  # no local pick possible
    monkeypatch.setitem(system.hca_switch, "isolated.hca0", "isolated-switch")
    picks = {platform.pick_server_hca(client_hca, ("isolated.hca0", reachable), t) for t in range(4)}
    assert picks == {reachable}


def test_iozone_without_a_host_list_runs_every_thread_on_one_client() -> None:
    # IOzone forks its threads on its own node unless -+m lists hosts: 64 O_DIRECT writers on one
    # HDR100 client are held by that client's link, where the same line with -+m spreads them over
    # the clients and reaches the storage servers' links.
    from sim.benchmarks.cmdline import parse_command

    system = load_system(ROOT / "topologies" / "beegfs-hdr100.yaml")
    line = "iozone -i 0 -c -e -w -r 1m -I -s 8g -t 64 -+n"
    local = parse_command(line)
    cluster = parse_command(line + " -+m hosts")
    assert (local.placement, cluster.placement) == ("one_client", "round_robin")
    one = run_point(system, local, "write", 64, seed=3)
    spread = run_point(system, cluster, "write", 64, seed=3)
    first = system.clients[0]
    assert one.bottleneck.startswith(f"{first}.hca") and one.bottleneck_utilization > 0.98
    second = system.clients[1] + "."
    assert any(name.startswith(second) for name in spread.utilization)  # parts that did work are listed
    assert not any(name.startswith(second) for name in one.utilization)
    assert spread.value > 5 * one.value


@pytest.mark.parametrize("op", ["write", "read"])
def test_warm_start_does_not_walk_every_record_of_huge_chunks(op: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # 2 GiB chunks over 16 targets hold 32 GiB per stripe set, 32 million 1 KiB records: the cache
    # prefill and the read-ahead warm start skip the records inside another target's chunk and
    # cut only a handful of records into pieces (once they cut one per record: minutes per point).
    from sim.fs.beegfs import BeeGFSModel

    system = load_system(ROOT / "topologies" / "beegfs-high-capacity.yaml")
    workload = Workload.model_validate(
        {
            "name": "huge-chunks",
            "title": "1 KiB records in 2 GiB chunks",
            "source": "test",
            "benchmark": "iozone_seq_nn",
            "ops": [op],
            "record_size": "1 KiB",
            "direct_io": True,
            "fsync": True,
            "file_size": "64 GiB",
            "threads": [2],
            "stripe": {"num_targets": 16, "chunk_size": "2 GiB"},
        }
    )
    model = build_model(system, workload, op, 2)
    calls = []
    original = BeeGFSModel._pieces
    monkeypatch.setattr(BeeGFSModel, "_pieces", lambda self, *a: calls.append(a) or original(self, *a))
    started: dict[str, list[float]] = {}
    monkeypatch.setattr(model.ctx.platform, "prestart_read_ahead", started.update)
    model.prefill_caches() if op == "write" else model.prestart_read_ahead()
    assert 0 < len(calls) < 1_000_000  # the caches take tens of thousands of 1 KiB pieces
    if op == "read":  # yet every target of each thread's file got its warm stream
        assert set(started) == {t for f in model.files for t in f.targets}
        for target, offsets in started.items():  # one per thread whose file is on it
            assert len(offsets) == sum(target in f.targets for f in model.files)


def _shipped_variant(tmp_path: Path, name: str, old: str, new: str) -> Path:
    """A shipped topology with ``old`` replaced once by ``new`` (its catalogue linked beside it)."""
    text = (ROOT / "topologies" / f"{name}.yaml").read_text()
    assert old in text, "test fixture out of date"
    (tmp_path / "parts").symlink_to(ROOT / "topologies" / "parts")
    path = tmp_path / f"{name}.yaml"
    path.write_text(text.replace(old, new, 1))
    return path


def test_a_one_slot_pool_that_nobody_waits_for_is_not_the_bottleneck(tmp_path: Path) -> None:
    # One connection per client and storage service: at 16 threads (one per client, one 4 KiB read
    # in flight each) every connection is held all the time, yet no read ever waits for one; the
    # rate is exactly the shipped system's, latency-bound. At 256 threads the reads queue for it;
    # batches of 600 reads give each of the ~180 (client, storage service) connections the 20 visits
    # in the window that the bottleneck rule asks of a part (MIN_BOTTLENECK_VISITS): the default
    # batches of 256 give about 15, and whether one connection reaches 20 is then up to the seed.
    from sim.benchmarks.workloads import find_workload

    one = _shipped_variant(
        tmp_path,
        "beegfs-edr-2019",
        "conn_max_internode: {meta: 32, storage: 12, client: 24}",
        "conn_max_internode: {meta: 32, storage: 12, client: 1}",
    )
    workload = find_workload("beegfs-hp-iozone-random")
    shipped = run_point(load_system(ROOT / "topologies" / "beegfs-edr-2019.yaml"), workload, "random_read", 16)
    few = run_point(load_system(one), workload, "random_read", 16)
    assert few.value == shipped.value and few.bottleneck == shipped.bottleneck
    assert "->" not in few.bottleneck and few.bottleneck_utilization < 0.5
    many = run_point(load_system(one), workload, "random_read", 256, precision=Precision(min_batch=600))
    assert "->" in many.bottleneck and many.bottleneck_utilization > 0.9


def test_a_write_cache_whose_drives_never_rest_runs_full(tmp_path: Path) -> None:
    # Controllers twice as fast as beegfs-high-capacity's: one IOzone writer then loads its RAID6
    # 8+2 (8 data drives of 261 MB/s at the outer zone) past what its destages take, and its cache
    # fills, a few stripes a second. Started at the watermark, the point once converged in the
    # fraction of a second before that showed: 2.81 GB/s, 351 MB/s a drive. In the long run the
    # drives set the rate: at most 8 x 261 MB/s.
    from sim.benchmarks.workloads import find_workload

    fast = _shipped_variant(
        tmp_path,
        "beegfs-high-capacity",
        "    part: powervault-me4084\n",
        "    part: powervault-me4084\n    overrides: {array_seq_write: 11 GB/s, array_seq_read: 14 GB/s}\n",
    )
    system = load_system(fast)
    point = run_point(system, find_workload("beegfs-hc-iozone-seq"), "write", 1)
    drive = system.drive_parts["me4084-0.drive0"]
    assert point.ci_low <= 8 * drive.seq_write * 1.001, point.value
    assert ".drive" in point.bottleneck and point.bottleneck_utilization > 0.99


def test_a_pilot_whose_caches_fill_during_its_warm_up_stops_within_it(monkeypatch: pytest.MonkeyPatch) -> None:
    # beegfs-high-capacity's IOR N-1 write at 512 tasks outruns its destages from the start: a
    # cache started at the watermark gains about 40 entries (a round of destages) a warm-up quarter.
    # Its growth is measured from the warm-up's first quarter, so the pilot stops inside the
    # warm-up and takes no batch. Measured from the warm-up's end (before session 21) it stopped
    # only at the first batch, and the pilot ran the whole warm-up: 1,024 calls of 8 MiB.
    from sim.benchmarks import driver
    from sim.benchmarks.workloads import find_workload

    marks = []
    take = driver._Mark.take
    monkeypatch.setattr(driver._Mark, "take", classmethod(lambda cls, *a: marks.append(1) or take(*a)))
    system = load_system(ROOT / "topologies" / "beegfs-high-capacity.yaml")
    with pytest.raises(driver._CacheFilled) as caught:
        driver._steady_point(system, find_workload("beegfs-hc-ior-n1"), "write", 512, 1, driver.DEFAULT_PRECISION, 0.5)
    assert marks == []
    assert 512 // 2 < caught.value.requests < 2 * 512  # past the first quarter (of 256 calls), short of the end


def test_software_raid10_writes_are_held_by_the_switch_uplink_they_cross_twice(tmp_path: Path) -> None:
    # The tiny system's target as a RAID10 of 12 NVMe drives (written at 3 GB/s) behind one PCIe
    # switch (a Gen3 x16 uplink, 15.76 GB/s each way): each written byte crosses the uplink once
    # per copy, so writes top out at half of it, below the server's EDR port (12.4 GB/s) and the
    # drives (6 pairs at 3 GB/s). The ceiling says so, and the simulation runs at it; reads cross
    # it once.
    from sim.benchmarks.workloads import find_workload
    from sim.topology.bounds import max_flow_bound

    text = TINY.read_text()
    text = text.replace(
        "drives: {part: intel-p4600-1.6tb, count: 1, overrides: {capacity: 16 TB}}",
        "drives: {part: intel-p4600-1.6tb, count: 12, overrides: {seq_write: 3 GB/s}}",
    ).replace("{level: 0, members: 1, stripe_unit: 256 KiB}", "{level: 10, members: 12, stripe_unit: 256 KiB}")
    path = tmp_path / "raid10.yaml"
    path.write_text(text)
    shutil.copytree(TINY.parent / "parts", tmp_path / "parts")
    system = load_system(path)
    switch = system.components["storage.numa0.pcie0"]
    write = max_flow_bound(system, "write")
    assert write.Bps == pytest.approx(switch.write_Bps / 2)
    assert "software RAID writes cross it 2 times" in write.describe()
    assert max_flow_bound(system, "read").Bps > switch.read_Bps / 2
    point = run_point(system, find_workload("beegfs-hp-iozone-seq"), "write", 16)
    assert point.bottleneck == "storage.numa0.pcie0.down"
    assert point.ci_low <= write.Bps and point.value == pytest.approx(write.Bps, rel=0.02)


def test_a_full_pool_is_named_over_a_part_with_room(tmp_path: Path) -> None:
    # beegfs-hdr100 with 8 storage workers per target instead of 32: at 512 threads of 4 KiB random
    # writes the workers are held nearly all the time and waited for, while the busiest part, a
    # storage server's CPU, is idle a quarter of the time. The workers hold the rate (32 give
    # +37%), so they are named, not the CPU (before session 21 a pool was named only when no part
    # was half busy).
    from sim.benchmarks.workloads import find_workload

    few = _shipped_variant(tmp_path, "beegfs-hdr100", "storage: 32}", "storage: 8}")
    point = run_point(load_system(few), find_workload("beegfs-hp-iozone-random"), "random_write", 512)
    assert point.bottleneck.endswith(".workers"), point.bottleneck
    assert point.bottleneck_utilization >= 0.9
    cpus = [u for name, u in point.utilization.items() if name.endswith(".cpu")]
    assert 0.5 <= max(cpus) < 0.9


def test_drives_behind_a_cache_that_keeps_up_are_not_named() -> None:
    # One IOzone writer on beegfs-high-capacity: its caches hold at their flush watermark, its
    # writes are acknowledged from them, and the drives destage what arrives, most of the time busy.
    # No write waits for them, and faster drives leave the rate as it is; the controller's write
    # path, which every write crosses, is named.
    from sim.benchmarks.workloads import find_workload

    system = load_system(ROOT / "topologies" / "beegfs-high-capacity.yaml")
    point = run_point(system, find_workload("beegfs-hc-iozone-seq"), "write", 1)
    drives = [u for name, u in point.utilization.items() if ".drive" in name]
    assert max(drives) > 0.5
    assert point.bottleneck.endswith(".write") and ".ctrl" in point.bottleneck, point.bottleneck
    # They are listed as off the request path (the run table explains those busier than the
    # bottleneck): every drive that worked, and its group's ".drives".
    assert set(point.off_path) == {name for name in point.utilization if ".drive" in name}
    assert any(name.endswith(".drives") for name in point.off_path)
    assert point.to_json()["off_path"] == list(point.off_path)


@pytest.mark.parametrize("tasks", [64, 256])
def test_a_call_of_several_pieces_counts_each_piece_as_it_arrives(tasks: int) -> None:
    # IOR N-1 reads of 8 MiB on beegfs-hdr100's default stripe (3 targets of 2 MiB chunks, all
    # behind one server port): every call is four pieces in two stripe sets, the port is busy all the
    # time, and the tasks, started together, finish their calls in waves. Counted per call, a
    # window's estimate swung with how far the 2 GiB in flight had got: 256 tasks gave 12.01 GB/s at
    # seed 1 (3% under the port's rate, with +-1.2%), 64 tasks +-7.4% and unconverged after 3.4 s of
    # simulated time. Counted piece by piece, the aggregate is the port's rate.
    from sim.benchmarks.cmdline import parse_command

    system = load_system(ROOT / "topologies" / "beegfs-hdr100.yaml")
    command = f"mpirun --map-by node -np {tasks} ior -a POSIX -r -e -s 1 -t 8m -b 16g -o /mnt/f"
    point = run_point(system, parse_command(command), "read", tasks)
    assert point.bottleneck.endswith(".hca0.tx") and point.bottleneck_utilization > 0.999
    port = system.components[point.bottleneck.removesuffix(".tx")].read_Bps
    assert point.converged
    assert point.last_task_factor is not None
    assert point.value / point.last_task_factor == pytest.approx(port, rel=0.01)


def _two_switch_hdr100(tmp_path: Path, links: str) -> Path:
    """beegfs-hdr100 on two switches joined by ``links``: the R840 clients and the metadata server
    (3 storage targets) on ``ib``, the C6420 clients and storage1-5 (15 targets) on ``ib2``."""
    switch = "    - {name: ib, part: mellanox-qm8790}\n"
    path = _shipped_variant(
        tmp_path, "beegfs-hdr100", switch, switch + "    - {name: ib2, part: mellanox-qm8790}\n  links:\n" + links
    )
    text = path.read_text()
    c6420 = "    memory: 192 GiB\n    hcas:\n      - {part: connectx6-hdr100, switch: ib}\n"
    template = "        hcas:\n          - {part: connectx6-hdr100, switch: ib}\n        pcie_switches:"
    assert c6420 in text and template in text, "test fixture out of date"
    text = text.replace(c6420, c6420.replace("switch: ib}", "switch: ib2}"))
    path.write_text(text.replace(template, template.replace("switch: ib}", "switch: ib2}"), 1))
    return path


@pytest.mark.parametrize("declared", ["[ib, ib2]", "[ib2, ib]"])
def test_an_inter_switch_bundle_is_full_duplex(tmp_path: Path, declared: str) -> None:
    # R840 writes to storage1-5 cross from ib to ib2 and C6420 writes to the metadata server's
    # targets from ib2 to ib (at 64 threads about 45% and 5% of all writes). Five HDR100 links carry
    # 62 GB/s each way, so the ib -> ib2 direction lets the clients write as fast as the server
    # links take (136 GB/s) with nothing to spare. Booked on one station for both directions, as
    # writes were until session 22, the bundle carried half of all writes in one direction's time
    # and held them to 124 GB/s.
    bundle_line = "    - {between: " + declared + ", count: 5, link: hdr100}\n"
    system = load_system(_two_switch_hdr100(tmp_path, bundle_line))
    point = run_point(system, _workload(), "write", 64, seed=1)
    bundle = "ib~ib2" if declared == "[ib, ib2]" else "ib2~ib"
    # tx is the direction from the first switch named to the second.
    forward, backward = (".tx", ".rx") if bundle == "ib~ib2" else (".rx", ".tx")
    assert point.value > 131e9, point.value
    assert point.utilization[bundle + forward] > 0.9
    assert 0.05 < point.utilization[bundle + backward] < 0.15
    # Together more than one direction's time: each direction has its own.
    assert point.utilization[bundle + forward] + point.utilization[bundle + backward] > 1.0


def test_a_drive_busy_by_the_luck_of_a_short_window_is_not_named_over_a_full_pool() -> None:
    # beegfs-high-capacity, 512 threads of 4 KiB random reads: a window of about 0.1 s gives each of
    # the 320 drives some 17 reads. One of them is busy nearly all the window, but the drives of
    # each RAID group together have room, while the client connections to the storage services are
    # held all the time and waited for (more connections raise the rate): a connection pool is named.
    from sim.benchmarks.workloads import find_workload

    system = load_system(ROOT / "topologies" / "beegfs-high-capacity.yaml")
    point = run_point(system, find_workload("beegfs-hc-iozone-random"), "random_read", 512, seed=1)
    drives = {n: u for n, u in point.utilization.items() if ".drive" in n and not n.endswith(".drives")}
    groups = {n: u for n, u in point.utilization.items() if n.endswith(".drives")}
    assert max(drives.values()) > 0.95
    assert max(groups.values()) < 0.9
    assert "->" in point.bottleneck, point.bottleneck
    assert point.pool_occupancy[point.bottleneck] >= 0.9


def test_run_point_refuses_what_pfssim_run_refuses() -> None:
    # The library's point is held to the CLI's rules: buffered 4 KiB calls on BeeGFS (its client's
    # buffer cache is not modelled) and an operation the workload does not run are refused.
    from sim.benchmarks.cmdline import parse_command
    from sim.errors import WorkloadError

    system = load_system(ROOT / "tests" / "data" / "tiny.yaml")
    with pytest.raises(WorkloadError, match="buffer cache"):
        run_point(system, parse_command("iozone -i 0 -r 4k -s 1g -t 2"), "write", 2)
    with pytest.raises(WorkloadError, match="has no 'random_read' point"):
        run_point(system, parse_command("iozone -i 0 -I -r 1m -s 1g -t 2"), "random_read", 2)


def test_a_finished_point_leaves_little_for_the_cycle_collector() -> None:
    # The run's queued drive commands, cache entries and pending events are dropped when it ends
    # (Platform.drop, Environment.drop), so that reference counting frees them: left to the cycle
    # collector, this point's 138,000 objects were walked after it (0.39 s after the expansion's
    # random write at 64 threads); about 11,000 remain in cycles of their own.
    path = ROOT / "topologies" / "pixstor-large.yaml"
    system, workload = load_system(path), find_workload("pixstor-iozone-random", path)
    short = Precision(max_device_ops=4000, min_batches=4, transient_budget_factor=1)
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    try:
        run_point(system, workload, "random_write", 4, seed=1, precision=short)
        left = gc.collect()
    finally:
        if enabled:
            gc.enable()
    assert left < 30_000


def test_an_interval_above_the_hardware_ceiling_is_not_converged(tmp_path: Path) -> None:
    """Two parts within 1% of each other: beegfs-edr-2019 with RAID1 pairs of 1.3 GB/s drives
    (85.8 GB/s in all) under PCIe switches that allow 86.6. The switches' start-up backlog drains
    at the 0.9% difference, and the writes at 256 threads measured 86.8 GB/s +-0.7% when the point
    stopped at its precision (docs/design.md, Open questions). A point whose interval lies wholly
    above the ceiling now runs on (session 34) and outlasts that transient; one whose allowance
    runs out first says it has no steady state instead of claiming its interval."""
    (tmp_path / "parts").symlink_to(ROOT / "topologies" / "parts")
    old = "{count: 3, level: 0, members: 4, stripe_unit: 512 KiB, filesystem: xfs}"
    text = EDR.read_text()
    assert old in text, "test fixture out of date"
    path = tmp_path / "edr-raid1.yaml"
    path.write_text(text.replace(old, "{count: 6, level: 1, members: 2, stripe_unit: 512 KiB, filesystem: xfs}"))
    system = load_system(path)
    point = run_point(system, _workload(), "write", 256, seed=1)
    assert point.ceiling_Bps == pytest.approx(66 * 1.3e9)  # every client in use: pfssim show's
    assert point.converged and point.ci_low <= point.ceiling_Bps and point.transient_batches > 0
    assert point.value == pytest.approx(point.ceiling_Bps, rel=0.005) and point.bottleneck.endswith(".drives")
    # With the allowance of one budget of 10,000 drive commands, the backlog is still draining.
    short = Precision(max_device_ops=10_000, transient_budget_factor=1)
    cut = run_point(system, _workload(), "write", 256, seed=1, precision=short)
    assert cut.above_ceiling and not cut.converged and "above_ceiling" in cut.not_converged
    assert cut.to_json()["hardware_ceiling"] == cut.ceiling_Bps
    assert cut.to_json()["not_converged"] == list(cut.not_converged)
    assert point.not_converged == () and "not_converged" not in point.to_json()
    # IOR's reported rate is the window's less the last task's and the opens' and closes' cost: here
    # below the ceiling while the window's own rate is still above it, which is what is judged.
    from sim.benchmarks.cmdline.command import parse_command

    ior = parse_command("mpirun -np 256 ior -a POSIX -w -t 1m -b 2g -F -e -o /mnt/f")
    scaled = run_point(system, ior, "write", 256, seed=1, precision=short)
    assert scaled.ci_low < scaled.ceiling_Bps and scaled.not_converged == ("above_ceiling",)
    # One thread runs on one client: its ceiling is that client's (one EDR HCA), as the plots' step line.
    one = run_point(system, _workload(), "write", 1, seed=1)
    assert one.ceiling_Bps == pytest.approx(12.4e9) and one.converged and not one.above_ceiling
    # A rate of operations has no ceiling in bytes.
    random = run_point(load_system(EDR), _workload("iozone_random_nn", "4 KiB"), "random_write", 4, seed=1)
    assert random.ceiling_Bps is None and "hardware_ceiling" not in random.to_json()


def test_replications_above_the_ceiling_are_not_converged() -> None:
    from dataclasses import replace

    from sim.benchmarks.driver import PointResult, Precision, combine_replications

    base = PointResult("w", "iozone_seq_nn", "write", 8, 100.0, 99.0, 101.0, "B/s", "x", 1.0, converged=True)
    runs = [replace(base, value=v, ci_low=v, ci_high=v, ceiling_Bps=95.0) for v in (100.0, 100.5, 99.5)]
    above = combine_replications(runs, Precision(replications=3))  # 100 +- 1.2, all above 95
    assert not above.converged and above.not_converged == ("above_ceiling",)
    runs = [replace(run, ceiling_Bps=200.0) for run in runs]
    assert combine_replications(runs, Precision(replications=3)).converged
    # Runs that differ by more than the precision allows say so as their own reason.
    spread = [replace(run, value=v) for run, v in zip(runs, (90.0, 100.0, 110.0), strict=True)]
    assert combine_replications(spread, Precision(replications=3)).not_converged == ("runs_spread",)


def _edited(tmp_path: Path, source: Path, folder: str, edits: list[tuple[str, str]]) -> Path:
    """``source`` with each of ``edits`` (old, new) made once, written in a folder of its own beside a
    link to the parts catalogue."""
    text = source.read_text()
    for old, new in edits:
        assert text.count(old) == 1, f"test fixture out of date: {old!r}"
        text = text.replace(old, new)
    (tmp_path / folder).mkdir()
    (tmp_path / folder / "parts").symlink_to(ROOT / "topologies" / "parts")
    path = tmp_path / folder / source.name
    path.write_text(text)
    return path


def _tiny_pools(tmp_path: Path, connections: int, workers: int) -> Path:
    """tiny.yaml with ``connections`` per client to the storage service and ``workers`` on its target."""
    edits = [
        ("workers: {meta: 4, storage: 8}", f"workers: {{meta: 4, storage: {workers}}}"),
        ("client: 8}", f"client: {connections}}}"),
    ]
    return _edited(tmp_path, TINY, f"c{connections}w{workers}", edits)


def test_the_innermost_full_pool_is_named(tmp_path: Path) -> None:
    # Two clients of 6 connections each (12) onto one target of 8 workers, 64 random readers: both
    # kinds of pool are full and waited for. A connection holds its slot while its request queues
    # for a worker, so the workers hold the rate: more connections change nothing, more workers
    # raise it. The workers are named, though a client's pool has fewer slots (6 < 8), which the
    # rule before session 32 named.
    workload = _workload("iozone_random_nn", "4 KiB")
    base = run_point(load_system(_tiny_pools(tmp_path, 6, 8)), workload, "random_read", 64, seed=1)
    assert base.bottleneck == "storage.numa0.target0.workers", base.bottleneck
    assert base.pool_occupancy["client0->storage.numa0.storage0"] >= 0.9  # full too, and not named
    more_connections = run_point(load_system(_tiny_pools(tmp_path, 12, 8)), workload, "random_read", 64, seed=1)
    assert more_connections.value == pytest.approx(base.value, rel=0.03)
    more_workers = run_point(load_system(_tiny_pools(tmp_path, 6, 16)), workload, "random_read", 64, seed=1)
    assert more_workers.value > 1.3 * base.value
    assert more_workers.bottleneck.startswith("client"), more_workers.bottleneck  # now the connections


def test_no_step_where_the_threads_outgrow_the_client_cores(tmp_path: Path) -> None:
    # Two 40-core clients: at 80 threads each client's CPU time is a plain delay, at 82 a queue of
    # 40 servers that never fills. Both come before the call takes a connection or a worker, so a
    # rate held by the workers is the same on both sides (until session 32 the delay rode on the
    # call's transfer, holding the connection and, for a read, the worker: 46.8K then 49.8K IOPS).
    system = load_system(_tiny_pools(tmp_path, 6, 8))
    assert system.client_cores == {"client0": 40, "client1": 40}, "test fixture out of date"
    workload = _workload("iozone_random_nn", "4 KiB")
    below = run_point(system, workload, "random_read", 80, seed=1)
    above = run_point(system, workload, "random_read", 82, seed=1)
    assert below.bottleneck == above.bottleneck == "storage.numa0.target0.workers"
    assert below.value == pytest.approx(above.value, rel=0.02)


def test_a_zone_with_two_hcas_deals_them_to_the_threads_that_reach_it(tmp_path: Path) -> None:
    # beegfs-hdr100 with two HCAs in every server zone, 64 IOzone writers: the round-robin stripes
    # of three targets put only odd threads (11, 19, 31, 39, 51, 59) on the metadata server's
    # storage zone. Dealt by the thread's own index, all of them took the zone's second HCA and the
    # first carried nothing (until session 32); dealt by their turn among the threads that reach
    # the service, each HCA takes three.
    from sim.benchmarks.workloads import find_workload

    path = hdr100_with_two_hcas_per_zone(tmp_path)
    point = run_point(load_system(path), find_workload("beegfs-hp-iozone-seq"), "write", 64, seed=1)
    servers = {n: u for n, u in point.utilization.items() if n.endswith(".rx") and n.split(".")[0] != "mgmt"}
    servers = {n: u for n, u in servers.items() if not n.startswith(("r840", "c6420"))}
    assert len(servers) == 22  # 11 storage zones x 2 HCAs (the metadata zone moves no file data)
    assert servers["meta.numa1.hca0.rx"] == pytest.approx(servers["meta.numa1.hca1.rx"], rel=0.2)
    assert min(servers.values()) > 0.3, servers


SPLIT_CLIENTS = """\
name: split
title: two client switches, a storage zone with two HCAs on a third
source: test fixture
benchmarks: [beegfs-hp-iozone-seq]
network:
  switches:
    - {name: ib, part: mellanox-sb7890}
    - {name: a, part: mellanox-sb7890}
    - {name: b, part: mellanox-sb7890}
  links:
    - {between: [ib, a], count: 4, link: edr}
    - {between: [ib, b], count: 4, link: edr}
clients:
  - {name: "ca{i}", count: 1, part: poweredge-c6420, hcas: [{part: connectx4-edr, switch: a}]}
  - {name: "cb{i}", count: 1, part: poweredge-c6420, hcas: [{part: connectx4-edr, switch: b}]}
servers:
  - name: meta
    part: poweredge-r740xd
    services: [{kind: beegfs-mgmt}]
    numa:
      - hcas: [{part: connectx5-edr, switch: ib}]
        pcie_switches: [{part: r740xd-nvme-switch, drives: {part: intel-p4600-1.6tb, count: 2}}]
        raid_groups: [{level: 1, members: 2, stripe_unit: 256 KiB, role: metadata}]
        services: [{kind: beegfs-meta}]
  - name: storage
    part: poweredge-r740xd
    numa:
      - hcas: [{part: connectx5-edr, switch: ib}, {part: connectx5-edr, switch: ib}]
        pcie_switches:
          - part: r740xd-nvme-switch
            drives: {part: intel-p4600-1.6tb, count: 4, overrides: {capacity: 16 TB}}
        raid_groups: [{level: 0, members: 4, stripe_unit: 256 KiB}]
        services: [{kind: beegfs-storage}]
filesystem:
  kind: beegfs
  chunk_size: 2 MiB
  num_targets: 1
  target_chooser: roundrobin
  workers: {meta: 4, storage: 8}
  conn_max_internode: {meta: 8, storage: 8, client: 8}
  capacity_efficiency: {value: 1.0, source: test}
"""


def test_clients_on_two_switches_are_dealt_the_hcas_of_a_zone_on_a_third_together(tmp_path: Path) -> None:
    # One client on switch a, one on b, the storage zone's two HCAs on ib: both clients' requests
    # may arrive by either HCA, so the two threads are dealt one each. Counting the turns per client
    # switch (the first version of session 32) gave both threads the first HCA and left the other
    # idle; dealing by the thread's index (before) was balanced here.
    from sim.benchmarks.workloads import find_workload

    (tmp_path / "parts").symlink_to(ROOT / "topologies" / "parts")
    path = tmp_path / "split.yaml"
    path.write_text(SPLIT_CLIENTS)
    point = run_point(load_system(path), find_workload("beegfs-hp-iozone-seq"), "read", 2, seed=1)
    hca0, hca1 = (point.utilization.get(f"storage.numa0.hca{i}.tx", 0.0) for i in (0, 1))
    assert hca0 > 0.2 and hca1 > 0.2, (hca0, hca1)
    assert hca0 == pytest.approx(hca1, rel=0.1)


def test_services_sharing_a_zones_hcas_deal_them_over_their_paths_together(tmp_path: Path) -> None:
    # beegfs-hdr100 with two HCAs in every server zone: the metadata server's storage zone runs
    # three one-target services on the same two HCAs. At 32 writers nine (thread, target) paths
    # reach them; dealt per service and thread, each service took its first HCA for two of its
    # three threads, 6 paths against 3 (0.44 and 0.23 busy, until session 33); dealt over the
    # paths to every service on the same HCAs, the split is 5 against 4.
    from sim.benchmarks.workloads import find_workload

    path = hdr100_with_two_hcas_per_zone(tmp_path)
    system = load_system(path)
    for threads in (16, 32, 64):
        model = build_model(system, find_workload("beegfs-hp-iozone-seq"), "write", threads)
        for hcas in {s.hcas for s in model.service_of.values()}:
            picks = [
                model.ctx.platform.pick_server_hca(
                    model.ctx.client_hca(u, hcas), hcas, model._server_hca_turn(u, target, model.service_of[target])
                )
                for u, f in enumerate(model.files)
                for target in dict.fromkeys(f.targets)
                if model.service_of[target].hcas == hcas
            ]
            counts = [picks.count(h) for h in hcas]
            assert max(counts) - min(counts) <= 1, (threads, hcas, counts)
            if hcas[0].startswith("meta.") and threads == 32:
                assert sorted(counts) == [4, 5]


def _chooser_model(chooser: str, stripe: int):  # noqa: ANN202 - a BeeGFS model
    """A BeeGFS model of beegfs-hdr100 (33 targets, 3 on each of 11 services) choosing ``stripe``
    targets a file with ``chooser``."""
    from sim.benchmarks.workloads import find_workload

    model = build_model(
        load_system(ROOT / "topologies" / "beegfs-hdr100.yaml"), find_workload("beegfs-hp-iozone-seq"), "write", 1
    )
    assert len(model.targets) == 33, "test fixture out of date"
    model.chooser, model.num_targets = chooser, stripe
    return model


def test_the_randomized_chooser_takes_one_target_from_each_slice_of_the_ring() -> None:
    """BeeGFS's randomized chooser as pfssim models it: from a random place on the ring of 33
    targets, a stripe of 4 takes one target at random from each of four consecutive slices of 8,
    8, 8 and 9 targets (the last slice takes the rest). So the last pick lies 17 to 32 places
    round from the first, every such distance occurs, and every target is taken."""
    model = _chooser_model("randomized", 4)
    index = {t: i for i, t in enumerate(model.targets)}
    distances: set[int] = set()
    taken: set[str] = set()
    for _ in range(3000):
        picks = model._choose(0, [0])
        assert len(picks) == len(set(picks)) == 4
        order = [index[t] for t in picks]
        distances.add((order[3] - order[0]) % 33)
        taken.update(picks)
    assert distances == set(range(17, 33))
    assert taken == set(model.targets)


def test_the_randominternode_chooser_puts_a_files_targets_on_distinct_servers() -> None:
    model = _chooser_model("randominternode", 4)
    servers = [model.service_of[t].server for t in model._choose(0, [0])]
    assert len(servers) == len(set(servers)) == 4
    spread = {model.service_of[t].server for _ in range(500) for t in model._choose(0, [0])}
    assert len(spread) == len({model.service_of[t].server for t in model.targets})  # every server is used


def test_the_randomrobin_chooser_takes_roundrobins_targets_in_a_shuffled_order() -> None:
    robin, shuffled = _chooser_model("roundrobin", 4), _chooser_model("randomrobin", 4)
    state_a, state_b = [0], [0]
    orders = set()
    for _ in range(50):
        a, b = robin._choose(0, state_a), shuffled._choose(0, state_b)
        assert sorted(a) == sorted(b) and len(set(b)) == 4
        orders.add(tuple(a.index(t) for t in b))
    assert len(orders) > 5  # the order is drawn
    assert state_a == state_b == [(50 * 4) % 33]


SETTINGS = "  workers: {meta: 24, storage: 32}\n  conn_max_internode: {meta: 32, storage: 12, client: 24}\n"


def _hdr100_pools(tmp_path: Path, workers: int, connections: int, meta_server_workers: int | None = None) -> Path:
    """beegfs-hdr100 with ``workers`` per storage target, ``connections`` per client and storage
    service, and optionally workers of their own for the metadata server's three storage services."""
    settings = SETTINGS.replace("storage: 32}", f"storage: {workers}}}").replace(
        "client: 24}", f"client: {connections}}}"
    )
    edits = [(SETTINGS, settings)]
    if meta_server_workers is not None:
        services = "          - {kind: beegfs-storage, count: 3}\n"
        edits.append((services, services.replace("count: 3}", f"count: 3, workers: {meta_server_workers}}}")))
    source = ROOT / "topologies" / "beegfs-hdr100.yaml"
    return _edited(tmp_path, source, f"w{workers}c{connections}m{meta_server_workers}", edits)


def test_a_few_hot_pools_are_not_named_over_the_family_that_holds_most_requests(tmp_path: Path) -> None:
    # beegfs-hdr100 with 2 connections per client and storage service and 12 workers per target,
    # 512 random readers. The metadata server's three storage services have one target each, so
    # their targets' workers fill (and are waited for) while the connections hold the rate for the
    # rest: most connection pools are full, 3 of 33 targets' workers are. The innermost-pool rule
    # alone (session 32's first version) named those workers; more connections raise the rate far
    # more than more workers. (The fewest-slots rule before it named a connection pool here too.)
    from sim.benchmarks.workloads import find_workload

    workload = find_workload("beegfs-hp-iozone-random")
    base = run_point(load_system(_hdr100_pools(tmp_path, 12, 2)), workload, "random_read", 512, seed=1)
    assert "->" in base.bottleneck, base.bottleneck  # a client's connections to a storage service
    hot = [n for n, held in base.pool_occupancy.items() if n.endswith(".workers") and held >= 0.9]
    assert hot and all(n.startswith("meta.") for n in hot), hot
    connections = run_point(load_system(_hdr100_pools(tmp_path, 12, 4)), workload, "random_read", 512, seed=1)
    workers = run_point(load_system(_hdr100_pools(tmp_path, 24, 2)), workload, "random_read", 512, seed=1)
    assert connections.value > 1.12 * base.value
    assert workers.value < 1.08 * base.value


def test_a_family_of_full_pools_is_named_by_a_typical_pool_not_its_smallest(tmp_path: Path) -> None:
    # 8 workers per target, 4 on the metadata server's three one-target storage services: at 1024
    # random readers every target's workers are full. The 4-worker pools have the fewest slots
    # (the rule before session 32 named them), but the setting that holds the rate is the 8 of the
    # other 30 targets: doubling those raises the rate by far more than doubling the 4.
    from sim.benchmarks.workloads import find_workload

    workload = find_workload("beegfs-hp-iozone-random")
    base = run_point(load_system(_hdr100_pools(tmp_path, 8, 24, 4)), workload, "random_read", 1024, seed=1)
    assert base.bottleneck.endswith(".workers") and not base.bottleneck.startswith("meta."), base.bottleneck
    assert base.pool_occupancy["meta.numa1.target0.workers"] >= 0.9  # full too, not named
    others = run_point(load_system(_hdr100_pools(tmp_path, 16, 24, 4)), workload, "random_read", 1024, seed=1)
    meta = run_point(load_system(_hdr100_pools(tmp_path, 8, 24, 8)), workload, "random_read", 1024, seed=1)
    assert others.value > 1.5 * base.value
    assert meta.value < 1.1 * base.value


def test_beegfs_runs_the_pieces_of_one_stripe_set_of_a_call_together() -> None:
    """beegfs-hdr100 files striped over 2 targets in 1 MiB chunks, one thread of 2 MiB sequential
    writes: every call is one stripe set of two pieces, one per target. With each piece taking
    exactly 1 s, both pieces of a call start at the same instant and the calls start 1 s apart
    (plus the client's CPU time): 5 calls, 10 pieces by 5 s (one at a time it is 2.5 calls)."""
    from itertools import pairwise

    system = load_system(ROOT / "topologies" / "beegfs-hdr100.yaml")
    workload = _writes("ior_seq_nn", "2 MiB", "1 GiB", stripe={"num_targets": 2, "chunk_size": "1 MiB"})
    model = build_model(system, workload, "write", 1, seed=2)
    assert model.num_targets == 2 and model.chunk == MIB
    env = model.ctx.env
    pieces: list[tuple[float, int, float]] = []

    def piece(t, client, f, index, chunk_offset, length, stream):  # noqa: ANN001, ANN202 - stands in for _piece
        pieces.append((env.now, index, length))
        yield env.timeout(1.0)

    model._piece = piece
    model.start()
    env.run(until=5.0)
    assert len(pieces) == 10
    for first, second in zip(pieces[0::2], pieces[1::2], strict=True):
        assert first[0] == second[0] and {first[1], second[1]} == {0, 1} and first[2] == second[2] == MIB
    calls = [start for start, _index, _length in pieces[0::2]]
    assert all(1.0 <= b - a < 1.01 for a, b in pairwise(calls))


def test_a_beegfs_read_piece_reads_the_target_before_it_crosses_the_network() -> None:
    """tiny.yaml, one thread of 1 MiB reads, the network latency raised to 10 s: a read piece's
    request goes to the server, whose target reads the chunk, and only then does the reply carry
    the data back. The first storage read therefore starts before the reply could have crossed
    (at most the request's 10 s after the thread's start jitter and CPU times: the model charges
    both latencies with the reply, a real request would arrive after one), and no call finishes
    before the 20 s of the two messages."""
    model = build_model(load_system(TINY), _workload(), "read", 1)
    model.ctx.platform.latency = 10.0
    env = model.ctx.env
    reads: list[float] = []
    storage = model._storage

    def traced(target, op, offset, size, route):  # noqa: ANN001, ANN202 - wraps BeeGFSModel._storage
        reads.append(env.now)
        return storage(target, op, offset, size, route)

    model._storage = traced
    model.start()
    env.run(until=15.0)
    assert len(reads) == 1 and reads[0] < 10.0 + 1e-3
    assert model.ctx.meter.per_thread[0] == 0.0
    env.run(until=25.0)
    assert model.ctx.meter.per_thread[0] == MIB


def test_beegfs_metadata_workers_are_named_over_the_client_connections_that_wait_for_them(tmp_path: Path) -> None:
    # beegfs-hdr100 with 2 metadata workers and 1 connection per client and service, 1024 mdtest
    # tasks stat-ing: a request holds its client's connection while it queues for a metadata worker,
    # so both are full; the workers hold the rate (twice the workers: about twice the stats; twice
    # the connections: the same). With every mdtest pool at one stage, the tie went to the fewest
    # slots and named a client's one connection (session 32's review).
    from sim.benchmarks.workloads import find_workload

    def variant(workers: int, connections: int) -> Path:
        settings = SETTINGS.replace("meta: 24,", f"meta: {workers},").replace("client: 24}", f"client: {connections}}}")
        source = ROOT / "topologies" / "beegfs-hdr100.yaml"
        return _edited(tmp_path, source, f"meta{workers}c{connections}", [(SETTINGS, settings)])

    workload = find_workload("mdtest-beegfs-hp")
    base = run_point(load_system(variant(2, 1)), workload, "stat", 1024, seed=1)
    assert base.bottleneck.startswith("meta.") and base.bottleneck.endswith(".workers"), base.bottleneck
    assert max(held for name, held in base.pool_occupancy.items() if "->meta." in name) >= 0.9  # full too
    connections = run_point(load_system(variant(2, 2)), workload, "stat", 1024, seed=1)
    workers = run_point(load_system(variant(4, 1)), workload, "stat", 1024, seed=1)
    assert connections.value < 1.05 * base.value
    assert workers.value > 1.8 * base.value


def test_the_pool_rule_by_hand() -> None:
    """`_tightest_pool` on made-up pools (slots taken in the window as ``visits``): families first,
    by the share of their traffic through their full pools; of those with at least half, the
    innermost (then the larger share, then the fewest slots); if none has half, the largest share;
    within the family, the full pool that took the most requests."""
    from types import SimpleNamespace

    from sim.benchmarks.driver import _tightest_pool
    from sim.engine.core import Pool

    def rule(pools: list[tuple[str, int, int, str, int]], full: list[str]) -> str:
        made = {}
        for name, size, stage, family, visits in pools:
            made[name] = Pool(None, name, size, stage, family)  # type: ignore[arg-type]
            made[name].visits = visits
        return _tightest_pool(SimpleNamespace(pools=made), full, {})  # type: ignore[arg-type]

    outer = [("c0", 8, 0, "conns", 400), ("c1", 8, 0, "conns", 400), ("c2", 8, 0, "conns", 200)]
    inner = [("w0", 4, 1, "workers", 600), ("w1", 8, 1, "workers", 100), ("w2", 8, 1, "workers", 300)]
    # Both families hold most of their traffic in full pools (conns all of it, workers 900 of 1000):
    # the inner one is named, by its full pool that took the most requests (w0, 600), not its
    # largest (w2).
    assert rule(outer + inner, ["c0", "c1", "c2", "w0", "w2"]) == "w0"
    # The inner family's full pool carries 100 of its 1000 requests, the outer's 800 of 1000: a hot
    # inner pool does not hold the rate, the outer family does.
    assert rule(outer + inner, ["c0", "c1", "w1"]) in {"c0", "c1"}
    # Neither reaches half (conns 400 of 1000, workers 300 of 1000): the larger share is named.
    assert rule(outer + inner, ["c0", "w2"]) == "c0"
    assert rule(outer + inner, ["c2", "w2"]) == "w2"  # conns 200 of 1000 against 300 of 1000
    # One stage, both families wholly full: the larger share, then the fewest slots in a pool.
    same = [("a0", 8, 0, "a", 100), ("b0", 4, 0, "b", 100)]
    assert rule(same, ["a0", "b0"]) == "b0"
    assert rule([("a0", 8, 0, "a", 100), ("a1", 8, 0, "a", 100), ("b0", 4, 0, "b", 100)], ["a0", "b0", "a1"]) == "b0"
    assert rule([("a0", 8, 0, "a", 100), ("b0", 4, 0, "b", 100), ("b1", 4, 0, "b", 100)], ["a0", "b0"]) == "a0"


def test_a_service_declared_on_its_server_runs_on_all_its_cores(tmp_path: Path) -> None:
    # beegfs-high-capacity declares one storage service per server, not per zone, and the R740s
    # have two zones. With SSDs in its arrays the 4 KiB random reads are held by the servers'
    # CPUs: both zones' cores serve them (a daemon not bound to a zone is scheduled on all of
    # them), so the rate is what all four zones' cores give. Until session 33 such a service ran
    # on its first HCA's zone alone, at half the rate, with the other socket idle.
    from sim.benchmarks.workloads import find_workload
    from sim.fs.settings import service_cores

    text = (ROOT / "topologies" / "beegfs-high-capacity.yaml").read_text()
    hdd = "drives: {part: nl-sas-12tb-7200, count: 84}"
    assert text.count(hdd) == 1, "test fixture out of date"
    (tmp_path / "parts").symlink_to(ROOT / "topologies" / "parts")
    path = tmp_path / "ssd.yaml"
    path.write_text(text.replace(hdd, "drives: {part: ssd-960gb-sas3, count: 84}"))
    system = load_system(path)
    storage = [s for s in system.services.values() if s.kind == "beegfs-storage"]
    assert all(s.zone is None and len(service_cores(system, s)) == 2 for s in storage)
    cores = sum(system.zone_cores[z] for s in storage for z in service_cores(system, s))
    point = run_point(system, find_workload("beegfs-hc-iozone-random"), "random_read", 512, seed=1)
    busy = {n: u for n, u in point.utilization.items() if n.startswith("storage") and n.endswith(".cpu")}
    assert len(busy) == 4 and all(u > 0.97 for u in busy.values()), busy
    assert point.value == pytest.approx(cores / value("beegfs_storage_request_cpu_s"), rel=0.05)


def test_an_unpinned_services_data_crosses_the_upi_link_only_to_reach_the_other_zones_disks() -> None:
    # A transfer of a service declared on its server goes through the memory of the zone whose HCA
    # it arrives by: a path by the second zone's HCA to a target whose HBA is in that zone crosses
    # no UPI link (until session 33 it went to the first HCA's zone and back), and no path crosses
    # it twice.
    from sim.benchmarks.workloads import find_workload

    system = load_system(ROOT / "topologies" / "beegfs-high-capacity.yaml")
    model = build_model(system, find_workload("beegfs-hc-iozone-random"), "random_write", 64)
    platform = model.ctx.platform
    crossings = []
    for t, f in enumerate(model.files):
        for target in f.targets:
            route = model._route(t, model.ctx.client_of(t), target)
            names = [station.name for station, _ in route.network + route.storage]
            crossings.append(sum(".upi" in n for n in names))
    assert max(crossings) == 1 and 0 in crossings and 1 in crossings
    assert (
        platform.service_cpu(model.service_of[model.files[0].targets[0]]).servers
        == 2 * system.zone_cores["storage0.numa0"]
    )
