"""mdtest input: real mdtest command lines, the shipped mdtest workload files and their located errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from sim.benchmarks.cmdline import MDTEST_NO_EFFECT, MDTEST_NO_EFFECT_WITH_VALUE, parse_command
from sim.benchmarks.workloads import find_workload, is_workload_file, load_workload
from sim.config.workload import MdtestWorkload, Workload
from sim.errors import WorkloadError
from sim.topology.build import load_system
from tests.conftest import ROOT, problem_about, run_cli

MDTEST_FILES = ["mdtest-pixstor-empty", "mdtest-pixstor-4k", "mdtest-beegfs-hp", "mdtest-beegfs-hc"]
POWERS = [2**k for k in range(11)]  # 1 .. 1024
TOTAL = 2**21

# PixStor Table 3, "MDtest distribution of files on directories": threads -> directories per thread.
TABLE_3 = {1: 2048, 2: 1024, 4: 512, 8: 256, 16: 128, 32: 64, 64: 32, 128: 16, 256: 8, 512: 4, 1024: 2}

# The PixStor empty-file command as printed (en dash before map-by, "--oversubscribe" rejoined),
# with $Threads = 64 and $Directories = 2048 / 64 = 32 filled in.
PIXSTOR_PRINTED = (
    "mpirun --allow-run-as-root -np 64 --hostfile my_hosts.64 \u2013map-by node --mca btl_openib_allow_ib 1 "
    "--oversubscribe --prefix /usr/mpi/gcc/openmpi-4.1.2a1 /usr/local/bin/mdtest -v -d /mmfs1/perf/mdtest "
    "-P -i 1 -b 32 -z 1 -L -I 1024 -u -t -F"
)
BASE = "mpirun -np 2 mdtest -F -u -I 16"

GOOD = """\
name: {name}
title: a test mdtest workload
source: written by a test
benchmark: mdtest
ops: [create, stat, read, remove]
threads: [1, 2, 4]
files_only: true
unique_dir: true
depth: 1
leaf_only: true
items_per_dir: 1024
total_files: 2097152
write_bytes: 4 KiB
read_bytes: 4 KiB
"""


def _problem(command: str):
    with pytest.raises(WorkloadError) as info:
        parse_command(command)
    problems = info.value.problems
    assert problems and all(p.file == "--cmd" and p.line is None for p in problems)
    return problems[0]


def _mdtest(command: str) -> MdtestWorkload:
    workload = parse_command(command)
    assert isinstance(workload, MdtestWorkload)
    return workload


def _filled(command: str, threads: int, directories: int) -> str:
    """The document's command with its shell variables replaced by one point's numbers."""
    for variable in ("$Threads", "$threads"):
        command = command.replace(variable, str(threads))
    return command.replace("$Directories", str(directories))


# ------------------------------------------------------------------------------------------ command lines


def test_pixstor_command_as_printed_asks_for_double_dash() -> None:
    problem = _problem(PIXSTOR_PRINTED)
    assert problem.path == "\u2013map-by"
    assert "en dash" in problem.message and "--map-by" in problem.message


def test_pixstor_command_parses() -> None:
    w = _mdtest(PIXSTOR_PRINTED.replace("\u2013map-by", "--map-by"))
    assert (w.benchmark, w.ops, w.threads, w.placement) == (
        "mdtest",
        ["create", "stat", "read", "remove"],
        [64],
        "round_robin",
    )
    assert (w.files_only, w.unique_dir, w.leaf_only, w.sync) == (True, True, True, False)
    assert (w.branching, w.depth, w.items_per_dir, w.items, w.total_files) == (32, 1, 1024, None, None)
    assert (w.write_bytes, w.read_bytes, w.file_bytes, w.iterations) == (0, 0, 0, 1)
    assert (w.dirs_per_task(64), w.tree_dirs(64), w.items_per_task(64), w.total_items(64)) == (32, 33, 32768, TOTAL)
    assert w.source == "--cmd" and w.command is not None and "mdtest" in w.command


def test_pixstor_small_files_are_4_kib() -> None:
    w = _mdtest(PIXSTOR_PRINTED.replace("\u2013map-by", "--map-by") + " -w 4K -e 4K")
    assert (w.write_bytes, w.read_bytes, w.file_bytes) == (4096, 4096, 4096)
    assert w.title == "mdtest create, stat, read, remove of 4096 B files from --cmd"


def test_beegfs_high_performance_command() -> None:
    command = "mpirun --map-by node -np 1024 mdtest -i 3 -b 2 -z 1 -L -I 1024 -y -u -t -F"
    w = _mdtest(command)
    assert (w.threads, w.iterations, w.sync, w.fsync_per_file) == ([1024], 3, True, False)  # -y without -w
    assert w.items_per_task(1024) * 1024 == TOTAL
    assert _mdtest(command + " -w 4096").fsync_per_file is True


@pytest.mark.parametrize("name", [n for n in MDTEST_FILES if n != "mdtest-beegfs-hc"])
def test_file_commands_match_the_fields_at_every_thread_count(name: str) -> None:
    workload = find_workload(name)
    assert isinstance(workload, MdtestWorkload) and workload.command is not None
    for threads in workload.threads:
        parsed = _mdtest(_filled(workload.command, threads, workload.dirs_per_task(threads)))
        assert parsed.threads == [threads]
        assert parsed.branching == workload.branching_for(threads)
        assert parsed.items_per_task(threads) == workload.items_per_task(threads)
        same = ["ops", "files_only", "unique_dir", "depth", "leaf_only", "items_per_dir", "write_bytes"]
        same += ["read_bytes", "sync", "iterations", "placement", "stride"]
        assert {k: getattr(parsed, k) for k in same} == {k: getattr(workload, k) for k in same}


def test_phase_selection_keeps_mdtest_order() -> None:
    assert _mdtest(f"{BASE} -r -C").ops == ["create", "remove"]
    assert _mdtest(f"{BASE} -T").ops == ["stat"]
    assert _mdtest(f"{BASE} -E -T").ops == ["stat", "read"]
    assert _mdtest(BASE).ops == ["create", "stat", "read", "remove"]


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        ("-w 4K -e 4K", (4096, 4096)),
        ("-w 4096 -e 100", (4096, 100)),
        ("-w=4k -e=2k", (4096, 2048)),
        ("-w4k -e1k", (4096, 1024)),
        ("-w 1m", (2**20, 0)),
        ("-w 0 -e 0", (0, 0)),
    ],
)
def test_sizes_are_bytes_with_binary_suffixes(flags: str, expected: tuple[int, int]) -> None:
    w = _mdtest(f"{BASE} {flags}")
    assert (w.write_bytes, w.read_bytes) == expected


def test_numbers_take_suffixes_and_glued_values() -> None:
    w = _mdtest("mpiexec -n 4 /opt/ior/bin/mdtest -F -u -I1k -b=2 -z 1 -i2")
    assert (w.items_per_dir, w.branching, w.depth, w.iterations, w.threads) == (1024, 2, 1, 2, [4])


def test_items_per_task_spread_over_the_tree() -> None:
    # -n 100 over a binary tree of depth 2: 7 directories, 14 files each (mdtest rounds down) = 98.
    w = _mdtest("mpirun -np 2 mdtest -F -n 100 -b 2 -z 2")
    assert (w.tree_dirs(2), w.dirs_per_task(2), w.files_per_dir(2), w.items_per_task(2)) == (7, 7, 14, 98)
    # With -L only the 4 leaves hold files: 25 each.
    w = _mdtest("mpirun -np 2 mdtest -F -n 100 -b 2 -z 2 -L")
    assert (w.tree_dirs(2), w.dirs_per_task(2), w.files_per_dir(2), w.items_per_task(2)) == (7, 4, 25, 100)
    # No tree: one directory; -b 1 -z 3 is a chain of 4 directories.
    assert _mdtest("mpirun -np 2 mdtest -F -n 10").dirs_per_task(2) == 1
    assert _mdtest("mpirun -np 2 mdtest -F -I 5 -z 3").items_per_task(2) == 20


def test_stride_is_read_from_n() -> None:
    assert (_mdtest(f"{BASE} -N 4").stride, _mdtest(BASE).stride, _mdtest(f"{BASE} -N0").stride) == (4, 0, 0)


def test_accepted_flags_say_why_and_change_nothing() -> None:
    assert all(reason.strip() for table in (MDTEST_NO_EFFECT, MDTEST_NO_EFFECT_WITH_VALUE) for reason in table.values())
    base = _mdtest(BASE).model_dump(exclude={"command"})
    for extra in [*MDTEST_NO_EFFECT, *(f"{flag} 3" for flag in MDTEST_NO_EFFECT_WITH_VALUE), "-v", "-vvv", "-N 0"]:
        assert _mdtest(f"{BASE} {extra}").model_dump(exclude={"command"}) == base, extra
    assert _mdtest(f"{BASE} -a POSIX").model_dump(exclude={"command"}) == base


@pytest.mark.parametrize(
    ("command", "path", "fragment"),
    [
        (f"{BASE} -D", "-D", "directories only"),
        ("mpirun -np 2 mdtest -D -n 8 -w 4096", "-w", "no file data to write, read or sync"),
        ("mpirun -np 2 mdtest -D -n 8 -y", "-y", "no file data to write, read or sync"),
        (f"{BASE} -B", "-B", "barriers"),
        (f"{BASE} -R", "-R", "random order"),
        (f"{BASE} -W 30", "-W", "stonewall"),
        (f"{BASE} -Y", "-Y", "syncs the whole client"),
        (f"{BASE} -N x", "-N", "cannot read 'x'"),
        (f"{BASE} -S", "-S", "shared file"),
        (f"{BASE} -f 1 -l 8", "-f", "one command per task count"),
        (f"{BASE} -uL", "-uL", "give each flag on its own"),
        (f"{BASE} -a MPIIO", "-a", "MPIIO"),
        (f"{BASE} -w 1.5k", "-w", "cannot read '1.5k'"),
        (f"{BASE} -z", "-z", "needs a value"),
        (f"{BASE} -b 0", "-b", "at least 1"),
        (f"{BASE} -i 1 -i 3", "-i", "given twice"),
        (f"{BASE} -G 4", "-G", "unsupported flag -G"),
        (f"{BASE} extra", "extra", "takes only flags"),
        ("mpirun -np 2 mdtest -F -u", "-I", "missing -I or -n"),
        ("mpirun -np 2 mdtest -F -I 16 -n 64", "-n", "not both"),
        ("mpirun -np 2 mdtest -F -n 3 -b 2 -z 2", "-n", "fewer than the 7 directories"),
        (f"{BASE} -w 4 -e 8", "-e", "more than write_bytes"),
        ("mpirun -np 2 mdtest -F -I 16 -E -e 4k", "-e", "the files are an earlier run's"),
        ("mdtest -F -I 16", "-np", "MPI launcher"),
        ("mpirun --map-by node mdtest -F -I 16", "-np", "no -np"),
        ("mpirun -np 2 \u2013map-by node mdtest -F -I 16", "\u2013map-by", "type it as --map-by"),
    ],
)
def test_unsupported_mdtest_input_names_the_flag(command: str, path: str, fragment: str) -> None:
    problem = _problem(command)
    assert problem.path == path
    assert fragment in problem.message, problem.message


def test_every_placeholder_is_reported() -> None:
    command = (
        "mpirun --allow-run-as-root -np $Threads --hostfile my_hosts.$Threads --map-by node /usr/local/bin/mdtest "
        "-v -d $working_dir -P -i ${repetitions} -b $n_directories -z 1 -L -I 1024 -u -t -F"
    )
    with pytest.raises(WorkloadError) as info:
        parse_command(command)
    problems = info.value.problems
    assert [p.path for p in problems] == ["-np", "--hostfile", "-d", "-i", "-b"]
    assert all("substitute" in p.message for p in problems)


# ------------------------------------------------------------------------------------------ workload files


@pytest.mark.parametrize("name", MDTEST_FILES)
def test_mdtest_files_load(name: str) -> None:
    path = ROOT / "workloads" / f"{name}.yaml"
    workload = load_workload(path)
    assert isinstance(workload, MdtestWorkload) and is_workload_file(path)
    assert workload.name == name and workload.benchmark == "mdtest"
    assert workload.ops == ["create", "stat", "read", "remove"]
    assert (workload.files_only, workload.unique_dir, workload.depth, workload.leaf_only) == (True, True, 1, True)
    assert (workload.items_per_dir, workload.total_files, workload.branching) == (1024, TOTAL, None)
    assert workload.threads == (POWERS if name == "mdtest-beegfs-hp" else POWERS[:10])
    assert all(workload.total_items(t) == TOTAL for t in workload.threads)
    assert workload.file_bytes == (4096 if name == "mdtest-pixstor-4k" else 0)
    assert workload.read_bytes == workload.write_bytes
    assert (workload.iterations, workload.sync) == ((1, False) if name.startswith("mdtest-pixstor") else (3, True))
    assert workload.fsync_per_file is False


def test_find_workload_tells_mdtest_from_the_rest() -> None:
    assert isinstance(find_workload("mdtest-pixstor-empty"), MdtestWorkload)
    assert isinstance(find_workload("pixstor-ior-n1"), Workload)


@pytest.mark.parametrize("name", MDTEST_FILES)
def test_directories_per_thread_follow_table_3(name: str) -> None:
    workload = find_workload(name)
    assert isinstance(workload, MdtestWorkload)
    for threads in workload.threads:
        assert workload.dirs_per_task(threads) == TABLE_3[threads]
        assert workload.branching_for(threads) == TABLE_3[threads]  # -b $Directories with -z 1 -L
        assert workload.files_per_dir(threads) == 1024
        assert workload.items_per_task(threads) == TABLE_3[threads] * 1024


def test_with_threads_checks_the_rule() -> None:
    workload = find_workload("mdtest-pixstor-empty")
    assert workload.with_threads([1024, 8]).threads == [8, 1024]  # 2 directories per task at 1024
    with pytest.raises(WorkloadError) as info:
        workload.with_threads([64, 4096])
    (problem,) = info.value.problems
    assert problem.file == "--threads" and "at 4096 threads" in problem.message and "0.5" in problem.message


def test_phase_rate_is_the_slowest_task_times_the_tasks() -> None:
    workload = _mdtest("mpirun -np 4 mdtest -F -u -I 100")
    # 100 files per task; the slowest task takes 2 s: 50 files/s x 4 tasks.
    assert workload.phase_rate(4, [1.0, 2.0, 1.5, 0.5]) == 200.0
    with pytest.raises(ValueError, match="one positive phase time per task"):
        workload.phase_rate(4, [1.0])


def _line_of(text: str, fragment: str) -> int:
    return text[: text.index(fragment)].count("\n") + 1


@pytest.mark.parametrize(
    ("old", "new", "path", "fragment", "marker"),
    [
        ("threads: [1, 2, 4]", "threads: [1, 2, 4096]", "threads", "at 4096 threads", "threads"),
        ("threads: [1, 2, 4]", "threads: [4, 2]", "threads", "increasing", "threads"),
        ("items_per_dir: 1024", "items_per_dir: 1024\nitems: 4096", "items", "not items", "items:"),
        ("depth: 1", "depth: 1\nbranching: 4", "branching", "leave branching out", "branching"),
        ("depth: 1", "depth: 2", "depth", "depth: 1 and leaf_only", "depth"),
        ("leaf_only: true", "leaf_only: false", "leaf_only", "depth: 1 and leaf_only", "leaf_only"),
        ("read_bytes: 4 KiB", "read_bytes: 8 KiB", "read_bytes", "more than write_bytes", "read_bytes"),
        ("write_bytes: 4 KiB", "write_bytes: 1.5 B", "write_bytes", "whole number of bytes", "write_bytes"),
        ("write_bytes: 4 KiB", "write_bytes: 4096", "write_bytes", "has no unit", "write_bytes"),
        ("ops: [create, stat, read, remove]", "ops: [stat, create]", "ops", "order mdtest runs", "ops"),
        ("ops: [create, stat, read, remove]", "ops: [create, mkdir]", "ops[1]", "mkdir", "ops"),
        ("total_files: 2097152", "total_files: 2097152\nstonewall: 30", "stonewall", "unknown key", "stonewall"),
        ("files_only: true\n", "", "files_only", "missing required key", None),
        ("name: {name}", "name: other", "name", "differs from the file name", "name:"),
        ("leaf_only: true", 'leaf_only: "yes"', "leaf_only", "expected true or false", "leaf_only"),
        ("leaf_only: true", "leaf_only: 1", "leaf_only", "expected true or false", "leaf_only"),
        # The quotient is shown with its fraction (it read "= 2048" and called that not whole).
        ("total_files: 2097152", "total_files: 2097153", "threads", "2097153 / 1 / 1024 = 2048.00097656)", "threads"),
    ],
)
def test_bad_mdtest_file_is_located(
    tmp_path: Path, old: str, new: str, path: str, fragment: str, marker: str | None
) -> None:
    assert old in GOOD
    text = GOOD.replace(old, new).format(name="bad")
    file = tmp_path / "bad.yaml"
    file.write_text(text)
    problem = problem_about(file, fragment)
    assert problem.file == str(file)
    assert problem.path == path
    if marker is not None:
        assert problem.line == _line_of(text, marker)


def test_files_per_task_must_be_given(tmp_path: Path) -> None:
    text = GOOD.replace("total_files: 2097152\n", "").replace("items_per_dir: 1024\n", "").format(name="none")
    file = tmp_path / "none.yaml"
    file.write_text(text)
    with pytest.raises(WorkloadError) as info:
        load_workload(file)
    (problem,) = info.value.problems
    assert problem.file == str(file) and "items_per_dir (-I), items (-n), or total_files" in problem.message


def test_files_beyond_the_metadata_capacity_are_refused() -> None:
    # beegfs-hdr100: 19.2 TB of metadata targets at 500 GB per 150 million files (BeeGFS's rule of
    # thumb) hold 5.76e9 files. Two tasks with a directory each (4 entries per directory) and 2.8e9
    # files each fit; 2.9e9 each do not, and the refusal names -n.
    from sim.benchmarks.runnable import check_runnable
    from sim.topology.capacity import capacity

    system = load_system(ROOT / "topologies" / "beegfs-hdr100.yaml")
    room, bound = capacity(system).metadata_files, capacity(system).metadata_basis
    assert room == pytest.approx(19.2e12 / (500e9 / 150e6), rel=1e-9) and "19.2 TB" in bound
    check_runnable(system, parse_command("mpirun -np 2 mdtest -F -u -n 2800000000 -d /x"))
    with pytest.raises(WorkloadError) as info:
        check_runnable(system, parse_command("mpirun -np 2 mdtest -F -u -n 2900000000 -d /x"))
    (problem,) = info.value.problems
    assert problem.path == "items" and "5,800,000,008 metadata entries" in problem.message
    result = run_cli(
        "run",
        str(ROOT / "topologies" / "beegfs-hdr100.yaml"),
        "--cmd",
        "mpirun -np 2 mdtest -F -n 99999999999999999999999",
    )
    assert result.code == 2 and "--cmd -n:" in result.stderr and "metadata entries" in result.stderr


def test_a_tree_of_depth_zero_is_read_from_z_0() -> None:
    # mdtest -z 0 (its default) is a tree of the top directory alone: a depth of 0 is valid, unlike
    # -b 0 or -I 0, which are refused as below 1.
    w = parse_command("mpirun -np 4 mdtest -F -u -I 16 -z 0 -b 2 -C")
    assert isinstance(w, MdtestWorkload)
    assert (w.depth, w.branching, w.items_per_dir) == (0, 2, 16)


def test_an_iozone_record_as_large_as_the_file_is_accepted_and_one_larger_refused() -> None:
    # IOzone moves a file of -s in records of -r: a record equal to the file is one record a file;
    # only a record larger than the file is refused.
    w = parse_command("iozone -i 0 -I -r 1m -s 1m -t 2")
    assert isinstance(w, Workload)
    assert (w.record_size, w.file_size) == (2**20, 2**20)
    with pytest.raises(WorkloadError) as info:
        parse_command("iozone -i 0 -I -r 2m -s 1m -t 2")
    (problem,) = info.value.problems
    assert problem.path == "-r" and "is larger than the file size per thread" in problem.message
