"""IOR -z: transfers at random offsets, counted as IOR's IOPS column counts them."""

from __future__ import annotations

import pytest

from sim.benchmarks.cmdline import parse_command
from sim.benchmarks.driver import run_point
from sim.config.workload import Workload
from sim.errors import WorkloadError
from sim.topology.build import load_system
from tests.conftest import ROOT, beegfs_file_offsets, build_model

HDR100 = ROOT / "topologies" / "beegfs-hdr100.yaml"
MiB = 2**20


def test_z_reads_as_the_random_benchmarks() -> None:
    per_task = parse_command("mpirun -np 8 ior -a POSIX -w -r -e -B -z -F -t 4k -b 1g")
    shared = parse_command("mpirun -np 8 ior -w -B -z -t 4k -b 1g")
    assert (per_task.benchmark, per_task.ops) == ("ior_random_nn", ["random_write", "random_read"])
    assert (shared.benchmark, shared.ops) == ("ior_random_n1", ["random_write"])
    assert shared.title.startswith("IOR random N-1 (shared file)") and shared.shared_file


def test_workload_files_keep_iors_phase_order() -> None:
    fields = {
        "name": "r",
        "title": "r",
        "source": "test",
        "benchmark": "ior_random_nn",
        "record_size": "4 KiB",
        "direct_io": True,
        "fsync": True,
        "file_size": "1 GiB",
        "threads": [4],
    }
    assert Workload.model_validate(fields | {"ops": ["random_write", "random_read"]}).ops[0] == "random_write"
    with pytest.raises(ValueError, match="random_write, random_read"):
        Workload.model_validate(fields | {"ops": ["random_read", "random_write"]})
    with pytest.raises(ValueError, match="runs random_write / random_read only"):
        Workload.model_validate(fields | {"ops": ["write"]})
    with pytest.raises(WorkloadError):
        parse_command("mpirun -np 8 ior -w -B -z -zz -t 4k -b 1g")


def test_a_file_per_task_at_random_is_iozones_random_test() -> None:
    # One task, one 1 GiB file, 4 KiB O_DIRECT transfers at random offsets: the same requests as
    # IOzone -i 2 with one thread. IOR adds its open and close (a fraction of a millisecond
    # against a minute of transfers) and its last-task rule (one task: nothing).
    system = load_system(HDR100)
    ior = parse_command("mpirun -np 1 ior -a POSIX -w -e -B -z -F -t 4k -b 1g")
    iozone = parse_command("iozone -i 2 -w -e -I -r 4k -s 1g -t 1 -+m hosts")
    a = run_point(system, ior, "random_write", 1, seed=6)
    b = run_point(system, iozone, "random_write", 1, seed=6)
    assert a.unit == b.unit == "op/s"
    assert a.value == pytest.approx(b.value, rel=0.01)


def test_a_shared_file_at_random_spreads_every_task_over_the_whole_file() -> None:
    # ior.c deals each transfer slot of the shared file to a task at random: a task's transfers
    # fall in every task's blocks, not only its own (with -F, only in its own file).
    tasks, block = 4, 64 * MiB
    model = build_model(
        load_system(HDR100), parse_command(f"mpirun -np {tasks} ior -w -B -z -t 1m -b 64m"), "random_write", tasks
    )
    sent = beegfs_file_offsets(model)
    assert len(sent) > 40
    for t in range(tasks):
        owners = {int(offset // block) for task, offset in sent if task == t}
        assert len(owners) == tasks  # every task's block is reached
    assert all(0 <= offset < tasks * block for _, offset in sent)


PIXSTOR = ROOT / "topologies" / "pixstor-large.yaml"


def test_gpfs_buffered_random_reads_of_a_file_in_the_pagepool_are_memory_copies() -> None:
    # pixstor-large: one task on a node with a 32 GiB pagepool reads its 1 GiB file at random:
    # every read hits the pagepool (its share / file size >= 1) and costs the task one 4 KiB copy
    # at client_memcpy_Bps, 4096 / 1e10 s, and nothing else. (The CLI refuses such a point, since
    # pfssim does not model the call's own cost; the model is run directly here.)
    from sim.params import value

    workload = parse_command("mpirun -np 1 ior -a POSIX -r -z -F -t 4k -b 1g")
    model = build_model(load_system(PIXSTOR), workload, "random_read", 1)
    env, meter = model.ctx.env, model.ctx.meter
    model.start()
    env.run(until=1e-4)  # the task starts within 1e-4 s
    before = meter.count
    env.run(until=1.1e-3)
    assert meter.count - before == pytest.approx(1e-3 / (4096 / value("client_memcpy_Bps")), abs=1)


def test_gpfs_random_read_hits_share_the_pagepool_among_the_nodes_tasks() -> None:
    # 64 tasks over 16 nodes, 4 to a node, each reading its own 16 GiB file: a task's share of the
    # 32 GiB pagepool is 8 GiB, so half its reads miss and go to the HDD arrays (milliseconds
    # each), far below the 64 x 1e10 / 4096 reads a second of all hits.
    from sim.params import value

    workload = parse_command("mpirun -np 64 ior -a POSIX -r -z -F -t 4k -b 16g")
    point = run_point(load_system(PIXSTOR), workload, "random_read", 64, seed=3)
    assert point.value < 0.1 * 64 * value("client_memcpy_Bps") / 4096
