"""IOzone's -e and -c put each child's fsync and close inside its timing; IOR's -e its fsyncs."""

from __future__ import annotations

from pathlib import Path

import pytest

from sim.benchmarks import driver
from sim.benchmarks.cmdline import parse_command
from sim.benchmarks.driver import run_point
from sim.config.workload import Workload
from sim.fs.handles import handle_seconds, handle_steps
from sim.params import value
from sim.topology.build import load_system
from tests.conftest import ROOT, run_cli

HDR100 = ROOT / "topologies" / "beegfs-hdr100.yaml"
PIXSTOR = ROOT / "topologies" / "pixstor-large.yaml"


def _iozone(flags: str, size: str = "64k", threads: int = 16) -> Workload:
    workload = parse_command(f"iozone -i 0 -i 1 {flags} -r 4k -s {size} -t {threads} -+m hosts")
    assert isinstance(workload, Workload)
    return workload


def test_c_flag_sets_timed_close() -> None:
    assert _iozone("-I -c").timed_close
    assert _iozone("-Ice").timed_close and _iozone("-Ice").fsync
    assert not _iozone("-I").timed_close


def test_timed_close_is_refused_for_ior(tmp_path: Path) -> None:
    text = (ROOT / "workloads" / "pixstor-ior-n1.yaml").read_text()
    bad = tmp_path / "ior.yaml"
    bad.write_text(text.replace("fsync: true ", "timed_close: true\nfsync: true "))
    result = run_cli("validate", str(bad))
    assert result.code == 2
    assert "timed_close (IOzone's -c) is an IOzone setting" in result.stderr + result.stdout
    # At the key's own line, not the file's first key.
    line = bad.read_text().splitlines().index("timed_close: true") + 1
    assert f"{bad}:{line} timed_close: " in result.stderr + result.stdout


def test_iozone_times_nothing_without_e_or_c() -> None:
    system = load_system(HDR100)
    assert handle_steps(system, _iozone("-I"), "write", 16) is None
    point = run_point(system, _iozone("-I"), "write", 16, seed=3)
    assert point.open_close_s is None


def test_each_child_adds_its_own_close(monkeypatch: pytest.MonkeyPatch) -> None:
    # IOzone sums its children's rates, each over its records plus its own close: with the closes
    # taken out the point is the bare rate, and with them every child's rate is its records' time
    # over that time plus its close.
    system = load_system(HDR100)
    workload = _iozone("-I -c")
    times = handle_seconds(system, workload, "write", 16, driver._replica_seed(5, -1))
    assert times is not None and len(times) == 16
    point = run_point(system, workload, "write", 16, seed=5)
    monkeypatch.setattr(driver, "_handle_seconds", lambda *args: None)
    bare = run_point(system, workload, "write", 16, seed=5)
    span = 16 * 65536 / bare.value
    assert point.value == pytest.approx(bare.value * sum(span / (span + c) for c in times) / 16, rel=1e-12)
    assert point.open_close_s == pytest.approx(sum(times) / 16, rel=1e-12)
    # Two metadata round trips at least (the close's request and its chunk-file message).
    assert min(times) >= 4 * value("network_latency_s")
    assert point.value < bare.value * 0.95  # 64 KiB files: the close is a visible part of the time


def test_large_files_hide_the_close() -> None:
    system = load_system(HDR100)
    small = run_point(system, _iozone("-I -c"), "write", 16, seed=2)
    large = run_point(system, _iozone("-I -c", size="1g"), "write", 16, seed=2)
    assert large.open_close_share < small.open_close_share / 100


def test_beegfs_close_reaches_the_targets_the_data_touched() -> None:
    # A 4 KiB file is in its first chunk, on one target; 64 MiB spans a whole stripe set: the close
    # (and -e's fsync) message every target used.
    system = load_system(HDR100)
    tiny = handle_steps(system, _iozone("-I -c -e", size="4k"), "write", 16)
    wide = handle_steps(system, _iozone("-I -c -e", size="64m"), "write", 16)
    assert tiny is not None and wide is not None
    stripe = system.spec.filesystem.num_targets
    assert stripe > 1
    assert (tiny.targets, wide.targets) == (1, stripe)
    assert tiny.fsync and tiny.close and tiny.open == ""
    seed = driver._replica_seed(1, -1)
    one = handle_seconds(system, _iozone("-I -c", size="4k"), "write", 1, seed)
    both = handle_seconds(system, _iozone("-I -c -e", size="4k"), "write", 1, seed)
    assert one is not None and both is not None
    # The fsync is one more round trip from the client to the target, at least.
    assert both[0] >= one[0] + 2 * value("network_latency_s")


def test_ior_fsync_only_on_writes() -> None:
    system = load_system(HDR100)
    ior = parse_command("mpirun -np 4 ior -a POSIX -w -r -e -B -F -t 1m -b 4m")
    assert isinstance(ior, Workload)
    write, read = handle_steps(system, ior, "write", 4), handle_steps(system, ior, "read", 4)
    assert write is not None and read is not None
    assert (write.open, write.fsync, write.close) == ("create", True, True)
    assert (read.open, read.fsync, read.close) == ("open", False, True)


def test_gpfs_fsync_after_writes_forces_the_inode_to_a_metadata_nsd() -> None:
    # After a write the fsync writes the file's inode to a metadata NSD (an NSD request through a
    # server to the ME4024); after a read it is a cached call of the node's daemon.
    system = load_system(PIXSTOR)
    workload = _iozone("-e", size="64m")
    seed = driver._replica_seed(1, -1)
    wrote = handle_seconds(system, workload, "write", 1, seed)
    read = handle_seconds(system, workload, "read", 1, seed)
    assert wrote is not None and read is not None
    assert wrote[0] > read[0] + 2 * value("network_latency_s")


def test_beegfs_fsync_messages_take_the_clients_connections(bad_topology) -> None:  # noqa: ANN001 - fixture
    # With one connection per service, a client's fsync messages to the targets of one storage
    # service go one after another: each one a round trip more than with the documents' 24.
    seed = driver._replica_seed(1, -1)
    workload = _iozone("-I -e", size="64m")
    times = {}
    for conns in (1, 24):
        system = load_system(bad_topology("client: 24}", f"client: {conns}}}", name=f"c{conns}.yaml"))
        steps = handle_steps(system, workload, "write", 1)
        assert steps is not None and steps.targets > 1 and not steps.close
        result = handle_seconds(system, workload, "write", 1, seed)
        assert result is not None
        times[conns] = result[0]
    # The EDR file's targets: how many share a storage service sets how many round trips queue.
    assert times[1] > times[24] + value("network_latency_s")


def test_ior_creates_a_file_per_task_but_opens_a_shared_file() -> None:
    # IOR's write phase opens with O_CREAT: with -F each task creates its own file (a create on the
    # metadata model); without -F the tasks share one file, which task 0's single create is not told
    # apart from, so every task's open is an open. Reads open in both cases.
    system = load_system(HDR100)
    per_task = parse_command("mpirun -np 4 ior -a POSIX -w -r -e -B -F -t 1m -b 4m")
    shared = parse_command("mpirun -np 4 ior -a POSIX -w -r -e -B -t 1m -b 4m")
    assert isinstance(per_task, Workload) and isinstance(shared, Workload)
    assert (per_task.shared_file, shared.shared_file) == (False, True)
    opens = {}
    for name, ior in (("per_task", per_task), ("shared", shared)):
        for op in ("write", "read"):
            steps = handle_steps(system, ior, op, 4)
            assert steps is not None
            opens[name, op] = steps.open
    assert opens == {
        ("per_task", "write"): "create",
        ("per_task", "read"): "open",
        ("shared", "write"): "open",
        ("shared", "read"): "open",
    }


def _gpfs_inode_writers(monkeypatch: pytest.MonkeyPatch, command: str, tasks: int) -> tuple[list[int], list[float]]:
    """The task of every replicated inode write in an IOR write phase's timed handles on
    pixstor-large, and the tasks' times."""
    from sim.fs.gpfs_meta import GpfsMetadataModel

    writers: list[int] = []
    original = GpfsMetadataModel._inode_write

    def traced(self, t, stream):  # noqa: ANN001, ANN202 - records whose operation writes
        writers.append(t)
        return original(self, t, stream)

    monkeypatch.setattr(GpfsMetadataModel, "_inode_write", traced)
    times = handle_seconds(load_system(PIXSTOR), parse_command(command), "write", tasks, driver._replica_seed(1, -1))
    assert times is not None
    return sorted(writers), times


def test_gpfs_timed_creates_in_one_directory_take_its_token_in_turn(monkeypatch: pytest.MonkeyPatch) -> None:
    # IOR -F's write phase, 2 tasks on 2 nodes: both create their file in IOR's one test directory.
    # The first node to get there holds the directory's token; the other takes it over, and the
    # old holder flushes the directory block (one replicated metadata write). Each task also writes
    # its new inode (create) and forces it at the fsync (-e after writes): 2 + 2 + 1 = 5 writes.
    writers, times = _gpfs_inode_writers(monkeypatch, "mpirun -np 2 ior -a POSIX -w -e -B -F -t 1m -b 4m", 2)
    assert writers == [0, 0, 1, 1, 1]
    # The token's move: four message latencies and a metadata write more for task 1.
    assert times[1] > times[0] + 4 * value("network_latency_s")


def test_gpfs_timed_creates_of_tasks_on_one_node_need_no_token_move(monkeypatch: pytest.MonkeyPatch) -> None:
    # The same phase with both tasks on one node (-npernode 2): the node holds the directory's token
    # for both, so nothing is flushed: the two creates' and two fsyncs' inode writes only.
    writers, _ = _gpfs_inode_writers(monkeypatch, "mpirun -np 2 -npernode 2 ior -a POSIX -w -e -B -F -t 1m -b 4m", 2)
    assert writers == [0, 0, 1, 1]


def test_fsync_after_writes_starts_the_metadata_caches_as_a_create_phase(monkeypatch: pytest.MonkeyPatch) -> None:
    # IOzone -e on GPFS: after the write test the fsync forces each file's inode to a metadata NSD,
    # so the metadata arrays' write caches start full of small writes as in a create phase; after
    # the read test the fsync writes nothing and they start empty. No open is timed either way.
    from sim.fs.mdtest import MetadataModelBase

    filled: list[bool] = []
    monkeypatch.setattr(MetadataModelBase, "prefill_caches", lambda self: filled.append(self.handle_steps.wrote))
    system = load_system(PIXSTOR)
    workload = _iozone("-e", size="64m")
    seed = driver._replica_seed(1, -1)
    for op in ("write", "read"):
        assert handle_steps(system, workload, op, 1).open == ""
        handle_seconds(system, workload, op, 1, seed)
    assert filled == [True]
