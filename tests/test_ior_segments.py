"""IOR ``-s`` on a shared file: the tasks' blocks interleave segment by segment, in both models."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from sim.benchmarks.cmdline import parse_command
from sim.benchmarks.driver import run_point
from sim.topology.build import load_system
from tests.conftest import ROOT, beegfs_file_offsets, build_model, run_cli

MiB = 2**20
HDR100 = ROOT / "topologies" / "beegfs-hdr100.yaml"
PIXSTOR = ROOT / "topologies" / "pixstor-large.yaml"


def _offset_model(command: str, tasks: int):  # noqa: ANN202 - a model whose context maps offsets
    return build_model(load_system(HDR100), parse_command(command), "write", tasks)


def test_shared_file_offsets_follow_ior_by_hand() -> None:
    # 3 tasks, -b 2m -s 2: segment 0 holds the blocks of tasks 0, 1, 2 (0-2, 2-4, 4-6 MiB), segment
    # 1 the same again from 6 MiB; task 1's 4 MiB are 2-4 MiB then 8-10 MiB (ior.c: segment x
    # tasks x block + rank x block + transfer offset).
    ctx = _offset_model("mpirun -np 3 ior -w -B -t 1m -b 2m -s 2", 3).ctx
    share = 4 * MiB
    assert [ctx.file_offset(1, p * MiB, share) / MiB for p in range(4)] == [2, 3, 8, 9]
    assert [ctx.file_offset(2, p * MiB, share) / MiB for p in range(4)] == [4, 5, 10, 11]
    # One segment: task t's share in one piece from t x share.
    one = _offset_model("mpirun -np 3 ior -w -B -t 1m -b 4m -s 1", 3).ctx
    assert [one.file_offset(1, p * MiB, share) / MiB for p in range(4)] == [4, 5, 6, 7]
    # A file per task: positions are its own file's.
    own = _offset_model("mpirun -np 3 ior -w -B -F -t 1m -b 2m -s 2", 3).ctx
    assert own.file_offset(2, 3 * MiB, share) == 3 * MiB


@given(tasks=st.integers(1, 6), segments=st.integers(1, 5), transfers=st.integers(1, 4))
def test_shared_file_layout_covers_the_file_once(tasks: int, segments: int, transfers: int) -> None:
    # Every transfer of every task lands on its own place, and together they fill the file from 0
    # to tasks x share without a gap: the layout is a bijection, whatever -s and -b are.
    command = f"mpirun -np {tasks} ior -w -B -t 1m -b {transfers}m -s {segments}"
    ctx = _offset_model(command, tasks).ctx
    share = transfers * segments * MiB
    places = sorted(ctx.file_offset(t, p * MiB, share) for t in range(tasks) for p in range(transfers * segments))
    assert places == [i * MiB for i in range(tasks * transfers * segments)]


def test_beegfs_tasks_write_only_their_own_blocks_of_each_segment() -> None:
    # A trace of the chunk pieces BeeGFS sends: turned back into file offsets, each task's pieces
    # lie in its own blocks (block number modulo the task count is the task), and they reach into
    # more than one segment within the run.
    tasks, block = 4, 2 * MiB
    model = _offset_model(f"mpirun -np {tasks} ior -w -B -t 1m -b 2m -s 64", tasks)
    sent = beegfs_file_offsets(model)
    assert len(sent) > 40
    assert all(int(offset // block) % tasks == t for t, offset in sent)
    for t in range(tasks):
        segments = {int(offset // (block * tasks)) for task, offset in sent if task == t}
        assert len(segments) >= 2


def test_gpfs_block_shared_by_two_tasks_has_one_place() -> None:
    # -b 4m on 8 MiB GPFS blocks: tasks 0 and 1 each write half of file block 0. Scattered blocks
    # are placed by the block, so both halves go to the same NSD and the same slot on it.
    model = build_model(load_system(PIXSTOR), parse_command("mpirun -np 2 ior -w -B -t 4m -b 4m -s 16"), "write", 2)
    # Each task's 16 units (-b 4m x -s 16) from wherever its sequence starts: its whole share.
    units = []
    for t in range(2):
        sequence = model._units(t, model.ctx.streams(f"test{t}"))
        units.append([next(sequence) for _ in range(16)])
    by_block: dict[tuple[str, int], set[tuple[int, float]]] = {}
    for t in range(2):
        for nsd, offset, _size in units[t]:
            slot = int(offset // model.block)
            by_block.setdefault((nsd, slot), set()).add((t, offset - slot * model.block))
    # Every place holds one half from each task: task 0 at 0, task 1 at 4 MiB within the block.
    assert by_block and all(halves == {(0, 0.0), (1, 4.0 * MiB)} for halves in by_block.values())
    assert len(by_block) == 16  # 16 segments, one file block each


def test_gpfs_buffered_segments_sharing_blocks_are_refused() -> None:
    result = run_cli("run", str(PIXSTOR), "--cmd", "mpirun -np 64 ior -a POSIX -w -e -s 64 -t 2m -b 4m -o /f")
    assert result.code == 2
    assert "--cmd -s:" in result.stderr and "8 MiB GPFS blocks" in result.stderr and "-B" in result.stderr
    assert "Traceback" not in result.stderr


def test_gpfs_buffered_tasks_starting_within_a_block_are_refused() -> None:
    # -s 1 with -b 65540m (not a whole number of 8 MiB blocks): the block at each task boundary holds
    # two tasks' data and every later task's 8 MiB buffered blocks straddle two of the file's (a
    # GPFS review found it predicted as an aligned -b). One task shares nothing and runs.
    line = "mpirun --map-by node -np 16 ior -a POSIX -w -e -s 1 -t 4m -b 65540m -o /f"
    result = run_cli("run", str(PIXSTOR), "--cmd", line)
    assert result.code == 2 and "Traceback" not in result.stderr
    assert "--cmd -b:" in result.stderr and "boundary between two tasks" in result.stderr
    one = run_cli("run", str(PIXSTOR), "--cmd", line.replace("-np 16", "-np 1"), "--precision", "0.1")
    assert one.code == 0, one.stderr


def test_gpfs_buffered_segments_of_whole_blocks_run() -> None:
    # -b 16m is two whole 8 MiB blocks per task per segment: nothing is shared, the run goes ahead
    # and, with 64 streams over 16 nodes, the arrays' write paths (4 x 5.5 GB/s) are the limit.
    workload = parse_command("mpirun -np 64 ior -a POSIX -w -e -s 64 -t 16m -b 16m -o /f")
    point = run_point(load_system(PIXSTOR), workload, "write", 64, seed=1)
    assert 0.9 * 22e9 < point.value <= 22e9 * 1.001
