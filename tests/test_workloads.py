"""Shipped workload files load, hold the documents' values, and bad workload YAML gives located problems."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sim.benchmarks.cmdline import command_mismatches, parse_command
from sim.benchmarks.workloads import find_workload, is_workload_file, load_workload, workload_dir
from sim.config.units import Dimension, parse_quantity
from sim.config.workload import StripeOverride, size_text, workload_file
from sim.errors import WorkloadError
from tests.conftest import ROOT, problem_about, run_cli

KiB, MiB, GiB, TiB = 2**10, 2**20, 2**30, 2**40
POWERS = [2**k for k in range(11)]  # 1 .. 1024

# MDtest workloads have their own schema and tests (tests/test_mdtest_input.py).
WORKLOAD_FILES = sorted(p for p in (ROOT / "workloads").glob("*.yaml") if "mdtest" not in p.stem)

# name: (benchmark, ops, record, direct, fsync, aggregate, file size, threads)
EXPECTED = {
    "beegfs-hp-iozone-seq": ("iozone_seq_nn", ["write", "read"], MiB, True, True, 8e12, None, POWERS),
    "beegfs-hp-iozone-random": (
        "iozone_random_nn",
        ["random_read", "random_write"],
        4 * KiB,
        True,
        False,
        8e12,
        None,
        POWERS[2:],
    ),
    "beegfs-hc-iozone-seq": ("iozone_seq_nn", ["write", "read"], MiB, True, True, 8e12, None, POWERS[:10]),
    "beegfs-hc-iozone-random": (
        "iozone_random_nn",
        ["random_read", "random_write"],
        4 * KiB,
        True,
        False,
        8e12,
        None,
        POWERS[4:10],
    ),
    "beegfs-hc-ior-n1": ("ior_seq_n1", ["write", "read"], 8 * MiB, False, True, 6 * TiB, None, POWERS[:10]),
    "pixstor-iozone-seq": ("iozone_seq_nn", ["write", "read"], 16 * MiB, False, True, 8 * TiB, None, POWERS),
    "pixstor-ior-n1": ("ior_seq_n1", ["write", "read"], 16 * MiB, False, True, 8 * TiB, None, POWERS[:10]),
    "pixstor-iozone-random": (
        "iozone_random_nn",
        ["random_read", "random_write"],
        4 * KiB,
        False,
        False,
        None,
        32 * GiB,
        POWERS[:10],
    ),
}

GOOD = """\
name: {name}
title: a test workload
source: written by a test
benchmark: iozone_seq_nn
ops: [write, read]
record_size: 1 MiB
direct_io: true
fsync: true
file_size: 1 GiB
threads: [1, 2]
"""


def test_workload_dir_is_the_repository_folder() -> None:
    assert workload_dir() == ROOT / "workloads"
    assert {p.stem for p in WORKLOAD_FILES} == set(EXPECTED)


@pytest.mark.parametrize("path", WORKLOAD_FILES, ids=lambda p: p.stem)
def test_shipped_workload_loads(path: Path) -> None:
    workload = load_workload(path)
    assert workload.name == path.stem
    assert is_workload_file(path)
    benchmark, ops, record, direct, fsync, aggregate, file_size, threads = EXPECTED[path.stem]
    assert workload.benchmark == benchmark
    assert workload.ops == ops
    assert workload.record_size == record
    assert (workload.direct_io, workload.fsync) == (direct, fsync)
    assert (workload.aggregate_size, workload.file_size) == (aggregate, file_size)
    if path.stem == "beegfs-hc-iozone-seq":
        # 768 GB per thread below 16 threads, 8 TB split from 16 on, in whole 1 MiB records as
        # IOzone writes them (768 GB is 732,421.875 MiB: 732,421 records)
        assert [workload.file_size_for(n) for n in (1, 8, 16, 512)] == [
            732421 * MiB,
            732421 * MiB,
            476837 * MiB,
            14901 * MiB,
        ]
    elif path.stem == "beegfs-hc-ior-n1":
        assert [workload.file_size_for(n) for n in (1, 4, 8, 512)] == [768 * 2**30] * 3 + [6 * 2**40 / 512]
    else:
        assert workload.max_file_size is None
    assert workload.threads == threads
    assert workload.placement == "round_robin"


def test_stripe_overrides() -> None:
    for name in ("beegfs-hc-iozone-seq", "beegfs-hc-iozone-random"):
        stripe = find_workload(name).stripe
        assert stripe is not None and (stripe.num_targets, stripe.chunk_size) == (1, MiB)
    stripe = find_workload("beegfs-hc-ior-n1").stripe
    assert stripe is not None and (stripe.num_targets, stripe.chunk_size) == (32, None)
    assert find_workload("beegfs-hp-iozone-seq").stripe is None


def test_sizes_follow_the_documents_rules() -> None:
    pixstor = find_workload("pixstor-iozone-seq")
    assert all(pixstor.file_size_for(t) == 8192 * GiB / t for t in pixstor.threads)  # ${FileSize} = 8192 / Threads
    # (the high-capacity rules, 768 GB per thread until the 8 TB split takes over, are in test_shipped_workload_loads)
    assert find_workload("pixstor-iozone-random").file_size_for(512) == 32 * GiB


@pytest.mark.parametrize("path", sorted((ROOT / "workloads").glob("*.yaml")), ids=lambda p: p.stem)
def test_shipped_commands_are_read_and_agree_with_the_settings(path: Path) -> None:
    workload = load_workload(path)  # a disagreement would be a WorkloadError
    if workload.command is None:
        pytest.skip("the document gives no command line")
    assert command_mismatches(workload) == []


@pytest.mark.parametrize(
    ("name", "old", "new", "fragment"),
    [
        (
            "pixstor-iozone-seq",
            "record_size: 16 MiB",
            "record_size: 8 MiB",
            "line 2 of the command gives record_size 16 MiB, the workload 8 MiB",
        ),
        (
            "beegfs-hp-iozone-seq",
            "direct_io: true",
            "direct_io: false",
            "the command gives direct_io yes, the workload no",
        ),
        ("beegfs-hc-iozone-random", "fsync: false", "fsync: true", "gives fsync no, the workload yes"),
        (
            "beegfs-hc-ior-n1",
            "ops: [write, read]",
            "ops: [write]",
            "the command runs write, read; the workload lists ops write",
        ),
        ("beegfs-hc-ior-n1", "-t 8m", "-t 8x", "-t: cannot read '8x' as a size"),
        ("pixstor-iozone-seq", "-r 16M", "-r $Record", "-r: cannot read '$Record' (a shell variable"),
        ("mdtest-pixstor-4k", "sync: false", "sync: true", "the command gives sync no, the workload yes"),
        # IOzone's -c puts each close inside the timing: the setting and the command must agree.
        (
            "beegfs-hp-iozone-random",
            "timed_close: true",
            "timed_close: false",
            "gives timed_close yes, the workload no",
        ),
        ("pixstor-iozone-random", "timed_close: false", "timed_close: true", "timed_close no, the workload yes"),
        # A variable joined to other text, or a flag given twice as variables, has no one value.
        ("beegfs-hc-iozone-random", "-t $Thread", "-t 1$Thread", "-t 1$Thread: a shell variable joined to other"),
        ("beegfs-hc-iozone-random", "-s $Size", "-s $Size$Size", "-s $Size$Size: a shell variable joined to other"),
        ("beegfs-hc-iozone-random", "-t $Thread", "-t $Thread -t $Other", "-t is given twice as a shell variable"),
        ("beegfs-hc-iozone-random", "-+m threadlist", "-+m $a -+m $b", "-+m is given twice as a shell variable"),
        # A variable beside a number is two values everywhere but at the number (16, the first count).
        (
            "beegfs-hc-iozone-random",
            "-t $Thread",
            "-t $Thread -t 16",
            "at 32 threads: -t: -t is given twice (32 and 16)",
        ),
        ("mdtest-beegfs-hp", "-I 1024", "-I 512", "gives items_per_dir 512, the workload 1024"),
        ("mdtest-beegfs-hp", "-u -t -F", "-t -F", "gives unique_dir no, the workload yes"),
        # A count or size written as a number holds at every point of the sweep (these were accepted).
        (
            "beegfs-hc-iozone-random",
            "-t $Thread",
            "-t 16",
            "the command runs 16 threads (a number, not a variable), the workload threads 16, 32, 64",
        ),
        (
            "beegfs-hc-iozone-random",
            "-s $Size",
            "-s 1g",
            "the command gives 1 GiB per thread (a number, not a variable), the workload 465.7 GiB at 16 threads",
        ),
        ("pixstor-ior-n1", "-b ${FileSize}G", "-b 16g", "the command gives 16 GiB per thread (a number"),
        ("mdtest-pixstor-4k", "-np $Threads", "-np 64", "the command runs 64 threads (a number, not a variable)"),
        # total_files derives -b for each count (2048 at 1 task, 1024 at 2, ...): a number fits none or one.
        ("mdtest-pixstor-4k", "-b $Directories", "-b 7", "gives -b 7 (a number, not a variable), the workload 2048"),
        (
            "mdtest-pixstor-4k",
            "-b $Directories",
            "-b 2048",
            "gives -b 2048 (a number, not a variable), the workload 1024",
        ),
        (
            "beegfs-hp-iozone-seq",
            "command: iozone -i 0 -i 1 -c -e -w -r 1m -I -s $Size -t $Thread -+n -+m /path/to/threadlist",
            "command: mpirun -np $T ior -w -r -e -t 1m -b $B -B -F",
            "the command runs ior, the workload is iozone_seq_nn",
        ),
        (
            "beegfs-hp-iozone-random",
            "command: iozone -i 2 -w -c -O -I -r 4K -s $Size -t $Thread -+n -+m /path/to/threadlist",
            'command: "   "',
            "the command is blank",
        ),
    ],
)
def test_a_command_that_disagrees_with_the_settings_is_located(
    tmp_path: Path, name: str, old: str, new: str, fragment: str
) -> None:
    text = (ROOT / "workloads" / f"{name}.yaml").read_text()
    assert old in text
    file = tmp_path / f"{name}.yaml"
    at = text.index("\ncommand:")  # change the command, not the source above it that quotes it
    file.write_text(text[:at] + text[at:].replace(old, new, 1))
    problem = problem_about(file, fragment)
    assert (problem.path, problem.line) == ("command", _line_of(text, "\ncommand:") + 1)
    assert "the settings are what pfssim simulates" in problem.message


@pytest.mark.parametrize(
    ("old", "new", "key", "fragment"),
    [
        # The message names GPFS, which "runs" O_SYNC I/O: it was once put at ops:.
        ("record_size: 1 MiB", "record_size: 1 MB", "record_size", "whole number of 512-byte sectors"),
        ("threads: [", "threads: [4, 2, ", "threads", "increasing and distinct"),
        ("ops: [write, read]", "ops: [read, write]", "ops", "in the order the benchmark runs them"),
        ("name: beegfs-hp-iozone-seq", 'name: "beegfs-hp-iozone-seq\\nx"', "name", "a name is printable text"),
        ("name: beegfs-hp-iozone-seq", 'name: "beegfs-hp-iozone-seq\\u2028x"', "name", "a name is printable text"),
    ],
)
def test_a_settings_problem_is_located_at_its_key(tmp_path: Path, old: str, new: str, key: str, fragment: str) -> None:
    text = (ROOT / "workloads" / "beegfs-hp-iozone-seq.yaml").read_text()
    assert old in text
    text = text.replace(old, new, 1)
    file = tmp_path / "beegfs-hp-iozone-seq.yaml"
    file.write_text(text)
    problem = problem_about(file, fragment)
    assert (problem.path, problem.line) == (key, _line_of(text, f"\n{key}:") + 1)


def test_find_by_path_and_unknown_name(tmp_path: Path) -> None:
    path = tmp_path / "mine.yaml"
    path.write_text(GOOD.format(name="mine"))
    assert find_workload(str(path)).name == "mine"
    with pytest.raises(WorkloadError) as info:
        find_workload("no-such-workload")
    (problem,) = info.value.problems
    assert "unknown workload 'no-such-workload'" in problem.message
    assert "beegfs-hp-iozone-seq" in problem.message and "pixstor-ior-n1" in problem.message


def test_a_workload_beside_its_topology_is_named_by_its_file_and_the_error_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Names are looked up only in workloads/ folders: a student's mine.yaml beside the topology,
    # written as `mine` in its benchmarks list, is unknown, and the message says to write mine.yaml.
    (tmp_path / "mine.yaml").write_text(GOOD.format(name="mine"))
    topology = tmp_path / "class.yaml"
    topology.write_text("name: class\n")
    with pytest.raises(WorkloadError) as info:
        find_workload("mine", topology, base=tmp_path)  # the topology's benchmarks list
    (problem,) = info.value.problems
    assert "unknown workload 'mine'" in problem.message
    hint = f"{tmp_path / 'mine.yaml'} is not in a workloads/ folder, so give its path, mine.yaml (relative to the "
    assert hint + "topology's folder)" in problem.message
    assert find_workload("mine.yaml", topology, base=tmp_path).name == "mine"
    # On the command line (no base) the path is the one that works from the current folder.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    with pytest.raises(WorkloadError) as info:
        find_workload("mine", topology)
    assert "so give its path, ../mine.yaml (relative to the current folder)" in info.value.problems[0].message
    assert find_workload("../mine.yaml", topology).name == "mine"
    # A file of that name that is not a workload gets no such hint.
    (tmp_path / "mine.yaml").write_text("name: mine\nservers: []\n")
    with pytest.raises(WorkloadError) as info:
        find_workload("mine", topology)
    assert "give its path" not in info.value.problems[0].message


def test_is_workload_file_rejects_topologies_and_bad_yaml(tmp_path: Path) -> None:
    assert not is_workload_file(ROOT / "topologies" / "beegfs-edr-2019.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("benchmark: [iozone\n")
    assert not is_workload_file(bad)
    assert not is_workload_file(tmp_path / "missing.yaml")
    # A workload that lost its benchmark: is still a workload, and validate says what it lacks.
    lost = tmp_path / "lost.yaml"
    lost.write_text(GOOD.format(name="lost").replace("benchmark: iozone_seq_nn\n", ""))
    assert is_workload_file(lost)
    result = run_cli("validate", str(lost))
    assert result.code == 2 and result.stdout.strip().endswith("benchmark: missing required key 'benchmark'")


def _line_of(text: str, fragment: str) -> int:
    return text[: text.index(fragment)].count("\n") + 1


@pytest.mark.parametrize(
    ("old", "new", "path", "fragment", "marker"),
    [
        ("record_size: 1 MiB", "record_size: 1 MiB\nrecrod_size: 1 MiB", "recrod_size", "unknown key", "recrod_size"),
        ("record_size: 1 MiB", "record_size: 1048576", "record_size", "has no unit", "record_size"),
        ("fsync: true\n", "", "fsync", "missing required key 'fsync'", "name:"),
        ("ops: [write, read]", "ops: [read, write]", "ops", "in the order the benchmark runs them: write, read", "ops"),
        (
            "fsync: true\n",
            "fsync: true\ngpfs_pagepool_client: 16 GiB\n",
            "gpfs_pagepool_client",
            "O_DIRECT data bypasses the GPFS pagepool",
            "gpfs_pagepool",
        ),
        ("file_size: 1 GiB", "file_size: 1 GiB\naggregate_size: 8 TB", "aggregate_size", "exactly one", "aggregate"),
        ("file_size: 1 GiB\n", "", "file_size", "exactly one", "name:"),  # neither: it had no path
        ("threads: [1, 2]", "threads: [2, 1]", "threads", "increasing", "threads"),
        ("ops: [write, read]", "ops: [write, random_read]", "ops", "write / read only", "ops"),
        ("name: {name}", "name: other", "name", "differs from the file name", "name:"),
        ("benchmark: iozone_seq_nn", "benchmark: fio", "benchmark", "fio", "benchmark"),
        ("file_size: 1 GiB", "file_size: 512 KiB", "file_size", "less than one record", "file_size"),
        (
            "benchmark: iozone_seq_nn\nops: [write, read]\nrecord_size: 1 MiB",
            "benchmark: ior_seq_n1\nops: [write, read]\nrecord_size: 24 MiB",
            "file_size",
            "must be a whole number of 24 MiB transfers",
            "file_size",
        ),
        (
            "benchmark: iozone_seq_nn\nops: [write, read]\nrecord_size: 1 MiB\ndirect_io: true\nfsync: true\n"
            "file_size: 1 GiB\nthreads: [1, 2]",
            "benchmark: ior_seq_n1\nops: [write, read]\nrecord_size: 1 MiB\ndirect_io: true\nfsync: true\n"
            "aggregate_size: 1 GiB\nthreads: [1, 3]",
            "threads",
            "at 3 threads each task's block (357913941.3 B at 3) is not a whole number of 1 MiB transfers",
            "threads",
        ),
        ("file_size: 1 GiB", "file_size: 1 GiB\nsegments: 4", "segments", "an IOR setting", "segments"),
        (
            "benchmark: iozone_seq_nn\nops: [write, read]\nrecord_size: 1 MiB",
            "benchmark: ior_seq_n1\nsegments: 3\nops: [write, read]\nrecord_size: 1 MiB",
            "file_size",
            "whole number of 1 MiB transfers in each of its 3 blocks",
            "file_size",
        ),
        ("record_size: 1 MiB", "record_size: 32 MiB", "record_size", "Maximum record length", "record_size"),
        ("record_size: 1 MiB", "record_size: 64 B", "record_size", "128 B to 16 MiB", "record_size"),
        ("record_size: 1 MiB", "record_size: 1000.5 B", "record_size", "whole number of bytes", "record_size"),
        (
            "benchmark: iozone_seq_nn\nops: [write, read]\nrecord_size: 1 MiB",
            "benchmark: ior_seq_nn\nops: [write, read]\nrecord_size: 1001 B",
            "record_size",
            "multiple of 8 B",
            "record_size",
        ),
        ("file_size: 1 GiB", "file_size: 1 GiB\nmax_file_size: 2 GiB", "max_file_size", "caps an aggregate", "max_"),
        ("threads: [1, 2]", "threads: [1, 100000]", "threads[1]", "must be at most 65536", "threads"),
        (
            "file_size: 1 GiB",
            "file_size: 1 GiB\nstripe:\n  chunk_size: 3 MiB",
            "stripe.chunk_size",
            "power of two",
            "chunk_size",
        ),
    ],
)
def test_bad_workload_is_located(tmp_path: Path, old: str, new: str, path: str, fragment: str, marker: str) -> None:
    assert old in GOOD
    text = GOOD.replace(old, new).format(name="bad")
    file = tmp_path / "bad.yaml"
    file.write_text(text)
    with pytest.raises(WorkloadError) as info:
        load_workload(file)
    hits = [p for p in info.value.problems if fragment in p.message]
    assert hits, info.value.problems
    problem = hits[0]
    assert problem.file == str(file)
    assert problem.path == path
    assert problem.line == _line_of(text, marker)


def test_a_topology_given_as_a_workload_says_so(tmp_path: Path) -> None:
    with pytest.raises(WorkloadError) as info:
        find_workload(str(ROOT / "topologies" / "pixstor-large.yaml"))
    (problem,) = info.value.problems
    assert problem.file.endswith("pixstor-large.yaml") and problem.line is not None
    assert "this is a topology file" in problem.message and "TOPOLOGY argument" in problem.message


def test_malformed_workload_is_a_workload_error(tmp_path: Path) -> None:
    file = tmp_path / "broken.yaml"
    file.write_text("name: broken\nops: [write\n")
    with pytest.raises(WorkloadError) as info:
        load_workload(file)
    assert info.value.problems[0].file == str(file)
    assert "malformed YAML" in info.value.problems[0].message


def test_names_resolve_beside_the_topology_when_installed(tmp_path, monkeypatch) -> None:
    """An installed pfssim (package in site-packages) finds workloads/ next to topologies/."""
    import shutil

    import sim.benchmarks.workloads as module
    from sim.benchmarks.suite import default_workloads
    from sim.topology.build import load_system
    from tests.conftest import ROOT

    monkeypatch.setattr(module, "REPOSITORY_WORKLOADS", tmp_path / "nowhere")
    monkeypatch.chdir(tmp_path)
    site = tmp_path / "site"
    shutil.copytree(ROOT / "topologies", site / "topologies")
    shutil.copytree(ROOT / "workloads", site / "workloads")
    system = load_system(site / "topologies" / "beegfs-hdr100.yaml")
    assert [w.name for w in default_workloads(system)] == list(system.spec.benchmarks)
    shutil.rmtree(site / "workloads")
    with pytest.raises(WorkloadError, match="unknown workload 'beegfs-hp-iozone-seq'"):
        default_workloads(load_system(site / "topologies" / "beegfs-hdr100.yaml"))


def test_thread_override_checks_the_file_holds_a_record() -> None:
    # 8 TB over 16M threads leaves each file under one 1 MiB record: refused, not simulated forever.
    workload = find_workload("beegfs-hp-iozone-seq")
    with pytest.raises(WorkloadError, match="less than one record"):
        workload.with_threads([1, 60000 * 256])
    assert workload.with_threads([2, 1]).threads == [1, 2]


def test_settings_of_another_file_system_are_refused() -> None:
    from sim.benchmarks.runnable import check_runnable
    from sim.errors import PfssimError
    from sim.topology.build import load_system

    gpfs = load_system(ROOT / "topologies" / "pixstor-large.yaml")
    beegfs = load_system(ROOT / "topologies" / "beegfs-hdr100.yaml")
    with pytest.raises(WorkloadError) as info:
        check_runnable(gpfs, find_workload("beegfs-hc-iozone-seq"))
    problem = info.value.problems[0]  # located in the workload file, at the key
    text = (ROOT / "workloads" / "beegfs-hc-iozone-seq.yaml").read_text()
    assert problem.file.endswith("beegfs-hc-iozone-seq.yaml") and problem.path == "stripe"
    assert problem.line == text[: text.index("stripe:")].count("\n") + 1
    assert "a BeeGFS setting (beegfs-ctl --setpattern); pixstor-large runs gpfs" in problem.message
    with pytest.raises(PfssimError, match="a GPFS setting; beegfs-hdr100 runs beegfs"):
        check_runnable(beegfs, find_workload("pixstor-iozone-random"))
    check_runnable(gpfs, find_workload("pixstor-iozone-random"))
    huge = find_workload("pixstor-iozone-random").model_copy(update={"gpfs_pagepool_client": 100 * 2.0**40})
    with pytest.raises(PfssimError, match="is more than 80% of the 192 GiB"):
        check_runnable(gpfs, huge)
    # 80% of the clients' 192 GiB is what GPFS can pin (IBM message 6027-329): 154 GiB is refused.
    above = find_workload("pixstor-iozone-random").model_copy(update={"gpfs_pagepool_client": 154 * 2.0**30})
    with pytest.raises(PfssimError, match=r"cannot be more than 80% of real memory \(153.6 GiB here"):
        check_runnable(gpfs, above)
    tiny = find_workload("pixstor-iozone-random").model_copy(update={"gpfs_pagepool_client": 3.0})
    with pytest.raises(PfssimError, match="a client pagepool of 3 B cannot hold one 8 MiB file-system block"):
        check_runnable(gpfs, tiny)


def test_unknown_benchmark_is_the_only_finding(tmp_path: Path) -> None:
    # A typo in an mdtest file's benchmark must not list every mdtest key as unknown to IOzone.
    text = (ROOT / "workloads" / "mdtest-beegfs-hp.yaml").read_text()
    assert "benchmark: mdtest\n" in text
    file = tmp_path / "mdtest-beegfs-hp.yaml"
    file.write_text(text.replace("benchmark: mdtest\n", "benchmark: mdtest3\n"))
    with pytest.raises(WorkloadError) as info:
        load_workload(file)
    assert [p.path for p in info.value.problems] == ["benchmark"]
    # Every choice in one list, mdtest's too, and the likeliest (a newcomer's review found mdtest
    # tacked on after the list of the others).
    assert info.value.problems[0].message == (
        "unknown benchmark 'mdtest3' (did you mean 'mdtest'?); it is one of iozone_seq_nn, iozone_random_nn, "
        "ior_seq_n1, ior_seq_nn, ior_random_n1, ior_random_nn, mdtest"
    )


def test_files_larger_than_the_file_system_are_refused() -> None:
    """256 threads x 1000 GiB is 275 TB; the EDR system holds 209 TB (pfssim show). N-1 counts one
    block per task, GPFS data replicas halve the usable capacity."""
    from sim.benchmarks.runnable import check_runnable, data_bytes
    from sim.errors import PfssimError
    from sim.topology.build import load_system
    from sim.topology.capacity import capacity

    edr = load_system(ROOT / "topologies" / "beegfs-edr-2019.yaml")
    result = run_cli(
        "run", str(ROOT / "topologies" / "beegfs-edr-2019.yaml"), "--cmd", "iozone -i 0 -r 1m -s 1000g -t 256"
    )
    assert result.code == 2 and "Traceback" not in result.stdout + result.stderr
    assert (
        "--cmd -s: at 256 threads the files of cmd1 need 274.9 TB, more than the 209.1 TB beegfs-edr-2019 holds"
        in result.stderr
    )
    fits = parse_command("iozone -i 0 -r 1m -s 700g -t 256")  # 188 TB
    check_runnable(edr, fits)
    ior = parse_command("mpirun -np 64 ior -w -t 16m -b 4096g")
    assert data_bytes(edr, ior, 64) == 64 * 4 * 2**40
    with pytest.raises(PfssimError, match="at 64 threads the files of .* need 281.5 TB"):
        check_runnable(edr, ior)
    pixstor = load_system(ROOT / "topologies" / "pixstor-large.yaml")
    twice = pixstor.spec.filesystem.model_copy(update={"data_replicas": 2})
    replicated = pixstor.spec.model_copy(update={"filesystem": twice})
    workload = find_workload("pixstor-iozone-random")
    assert data_bytes(pixstor, workload, 8) == 8 * 32 * 2**30
    single = capacity(pixstor).usable_B
    pixstor.spec = replicated
    assert data_bytes(pixstor, workload, 8) == 8 * 32 * 2**30
    assert capacity(pixstor).usable_B == single / 2 > data_bytes(pixstor, workload, 512)


def test_beegfs_files_that_fit_the_file_system_but_not_their_targets_are_refused() -> None:
    """A BeeGFS file is k chunk files of 1/k of it on k distinct targets: beegfs-hdr100 holds 418 TB
    over 33 targets of 12.67 TB, so one 50,000 GiB file on a stripe of 3 (17.9 TB a target) cannot
    be written, nor 30 stripe-1 files of 12 TiB (13.2 TB each, 396 TB in all), while 33 of 11 TiB
    (12.1 TB each) fit, one a target."""
    from sim.benchmarks.runnable import check_runnable
    from sim.errors import PfssimError
    from sim.topology.build import load_system

    hdr = load_system(ROOT / "topologies" / "beegfs-hdr100.yaml")
    result = run_cli(
        "run", str(ROOT / "topologies" / "beegfs-hdr100.yaml"), "--cmd", "iozone -i 0 -r 1m -I -e -s 50000g -t 1"
    )
    assert result.code == 2 and "Traceback" not in result.stdout + result.stderr
    assert result.stderr.startswith(
        "--cmd -s: at 1 thread its file puts 17.9 TB on each of 3 targets (its stripe), and the 33 targets of "
        "beegfs-hdr100 (12.67 TB usable at most) have room for 0 of those 3 chunk files: BeeGFS would fail"
    )
    check_runnable(hdr, parse_command("iozone -i 0 -r 1m -I -e -s 12000g -t 1"))  # 4.3 TB a target
    one_target = parse_command("iozone -i 0 -r 1m -I -e -s 12288g -t 30").model_copy(
        update={"stripe": StripeOverride(num_targets=1)}
    )
    with pytest.raises(
        PfssimError,
        match=r"each of its 30 files puts 13.19 TB on 1 target \(its stripe\).* room for 0 of those 30 chunk files",
    ):
        check_runnable(hdr, one_target)
    # 11 TiB (12.09 TB) stripe-1 files: each target holds one, so 33 fit and 34 do not (414 TB and
    # 423 TB in all: the second is over the total too, which is reported first).
    eleven = parse_command("iozone -i 0 -r 1m -I -e -s 11264g -t 33").model_copy(
        update={"stripe": StripeOverride(num_targets=1)}
    )
    check_runnable(hdr, eleven)
    # The shared file of IOR N-1 is one file over its stripe: 3 targets of 12.67 TB hold 38 TB of it.
    shared = parse_command("mpirun -np 4 ior -w -e -B -t 1m -b 10240g -o /mnt/f")  # 44 TB on 3 targets
    with pytest.raises(PfssimError, match="at 4 threads its file puts 14.66 TB on each of 3 targets"):
        check_runnable(hdr, shared)


def test_every_refusal_comes_before_any_simulation(tmp_path: Path, monkeypatch) -> None:
    """Two workloads the system cannot run, after one it can: both refusals are listed, each at
    its file's line (capacity at the size key), and no point of the first is simulated first."""
    import sim.benchmarks.driver as driver

    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("simulated before every workload was checked")

    monkeypatch.setattr(driver, "run_point", never)
    text = (ROOT / "workloads" / "beegfs-hp-iozone-seq.yaml").read_text()
    assert "aggregate_size: 8 TB" in text
    huge = tmp_path / "huge.yaml"
    huge.write_text(text.replace("aggregate_size: 8 TB", "aggregate_size: 8000 TB").replace(
        "name: beegfs-hp-iozone-seq", "name: huge"))  # fmt: skip
    topology = str(ROOT / "topologies" / "beegfs-hdr100.yaml")
    result = run_cli(
        "run", topology, "--workers", "1", "--threads", "1", "--workload", "beegfs-hp-iozone-random",
        "--workload", str(huge), "--cmd", "iozone -i 2 -r 4k -s 1g -t 1",
    )  # fmt: skip
    assert result.code == 2 and "Traceback" not in result.stdout + result.stderr
    lines = result.stderr.splitlines()
    line = next(n for n, row in enumerate(huge.read_text().splitlines(), 1) if row.startswith("aggregate_size:"))
    assert any(
        row.startswith(f"{huge}:{line} aggregate_size: at 1 thread the files of huge need 8 PB") for row in lines
    )
    assert any(row.startswith("--cmd -I: buffered calls of 4 KiB") for row in lines)


def test_validate_refuses_a_default_suite_the_system_cannot_run(tmp_path: Path) -> None:
    import shutil

    shutil.copytree(ROOT / "topologies" / "parts", tmp_path / "parts")
    text = (ROOT / "topologies" / "beegfs-hdr100.yaml").read_text()
    start = text.index("benchmarks: [")
    end = text.index("]", start) + 1
    topology = tmp_path / "gpfs-suite.yaml"
    topology.write_text(text[:start] + "benchmarks: [pixstor-iozone-random]" + text[end:])
    result = run_cli("validate", str(topology))
    assert result.code == 2
    assert "gpfs_pagepool_client: a GPFS setting; beegfs-hdr100 runs beegfs" in result.stdout
    assert "pixstor-iozone-random.yaml:" in result.stdout


def test_small_buffered_calls_on_beegfs_are_refused_not_guessed() -> None:
    from sim.benchmarks.runnable import check_runnable
    from sim.topology.build import load_system

    beegfs = load_system(ROOT / "topologies" / "beegfs-hdr100.yaml")
    with pytest.raises(WorkloadError) as info:
        check_runnable(beegfs, parse_command("iozone -i 2 -r 4k -s 1g -t 2"))
    assert info.value.problems[0].path == "direct_io" and "buffer cache" in info.value.problems[0].message
    check_runnable(beegfs, parse_command("iozone -i 2 -I -r 4k -s 1g -t 2"))  # O_DIRECT
    check_runnable(beegfs, parse_command("mpirun -np 2 ior -w -t 512k -b 1g"))  # bypasses the cache
    gpfs = load_system(ROOT / "topologies" / "pixstor-large.yaml")
    check_runnable(gpfs, parse_command("iozone -i 2 -r 4k -s 64g -t 2"))  # the pagepool is modelled


def test_unflushed_gpfs_writes_with_a_large_untimed_tail_are_refused() -> None:
    """Without -e IOzone times writes until they are in the pagepool: the last pagepool share of each
    file is written untimed, so unless that is a small part of the file (2%) the benchmark reports
    more than the write-behind steady state pfssim predicts (S / (S - P) times it), and a file that
    fits is timed as memory copies. -e, O_DIRECT or reads are fine."""
    from sim.benchmarks.runnable import check_runnable
    from sim.topology.build import load_system

    gpfs = load_system(ROOT / "topologies" / "pixstor-large.yaml")  # 16 clients, 32 GiB pagepools
    with pytest.raises(WorkloadError) as info:
        check_runnable(gpfs, parse_command("iozone -i 0 -c -w -r 16m -s 8g -t 64 -+n -+m hosts"))  # 4 streams a node
    problem = info.value.problems[0]
    assert problem.path == "fsync"
    assert "at 64 threads each file fits in its stream's share of the 32 GiB client pagepool" in problem.message
    assert "the writes would be timed as copies into memory" in problem.message
    assert problem.message.endswith("add fsync (-e), or use files of at least 400 GiB")  # it reads nothing
    # A file just larger than its share (the tuning audit's 33 GiB under 32 GiB) is refused too.
    with pytest.raises(WorkloadError) as info:
        check_runnable(gpfs, parse_command("iozone -i 0 -c -w -r 16m -s 33g -t 16 -+n -+m hosts"))
    assert "would report about 33 times the write-behind rate" in info.value.problems[0].message
    assert "use files of at least 1600 GiB" in info.value.problems[0].message
    check_runnable(gpfs, parse_command("iozone -i 0 -c -w -r 16m -s 1600g -t 16 -+n -+m hosts"))  # 2% exactly
    # On IOR's shared file a stream's data is its task's blocks, and the message says so.
    with pytest.raises(WorkloadError) as info:
        check_runnable(gpfs, parse_command("mpirun -np 64 ior -a POSIX -w -s 1 -t 16m -b 4g -o /f"))
    assert "each task's blocks (-b x -s) fit in its stream's share" in info.value.problems[0].message
    check_runnable(gpfs, parse_command("iozone -i 0 -c -e -w -r 16m -s 8g -t 64 -+n -+m hosts"))  # -e: flushes timed
    check_runnable(gpfs, parse_command("iozone -i 0 -c -I -w -r 16m -s 8g -t 64 -+n -+m hosts"))  # O_DIRECT
    # Reads write nothing (of files larger than the share: smaller ones are read from the pagepool).
    check_runnable(gpfs, parse_command("iozone -i 1 -c -w -r 16m -s 9g -t 64 -+n -+m hosts"))
    # Without -+m IOzone forks all 64 threads on one node: 64 streams share its pagepool, 0.5 GiB each.
    check_runnable(gpfs, parse_command("iozone -i 0 -c -w -r 16m -s 25g -t 64 -+n"))
    with pytest.raises(WorkloadError):
        check_runnable(gpfs, parse_command("iozone -i 0 -c -w -r 16m -s 24g -t 64 -+n"))
    # Random writes are refused only when the file fits in its share (PixStor's measured random
    # writes, 32 GiB files over 16 GiB pagepools without -e, show no untimed tail).
    with pytest.raises(WorkloadError) as info:
        check_runnable(gpfs, parse_command("iozone -i 2 -O -w -r 4k -s 8g -t 64 -+n -+m hosts"))
    # Its reads would find the files in the pagepool too: fsync alone is not offered (it was, and
    # the run then met the cached-read refusal: a tuning review).
    assert info.value.problems[0].message.endswith(
        "use files larger than 8 GiB (with fsync alone, the reads would find the files in the pagepool)"
    )
    with pytest.raises(WorkloadError, match="the random_read phase finds it there"):
        check_runnable(gpfs, parse_command("iozone -i 2 -O -w -e -r 4k -s 8g -t 64 -+n -+m hosts"))
    check_runnable(gpfs, parse_command("iozone -i 2 -O -w -r 4k -s 9g -t 64 -+n -+m hosts"))
    beegfs = load_system(ROOT / "topologies" / "beegfs-hdr100.yaml")
    check_runnable(beegfs, parse_command("mpirun -np 2 ior -w -t 1m -b 1g"))  # calls bypass the client cache


def test_small_buffered_sequential_gpfs_calls_are_refused() -> None:
    """A buffered sequential GPFS call is charged only its copy into or out of the pagepool (10 GB/s),
    not its system call: below 2 MiB that cost (a few microseconds, as a cached GPFS call's 3.85 us)
    would be more than 2% of the call, and 4 KiB records were predicted at 10 GB/s a thread."""
    from sim.benchmarks.runnable import check_runnable, smallest_buffered_gpfs_call
    from sim.topology.build import load_system

    assert smallest_buffered_gpfs_call() == 2 * 2**20  # 3.85 us x 10 GB/s / 2% = 1.9 MB, rounded up
    gpfs = load_system(ROOT / "topologies" / "pixstor-large.yaml")
    for line in ("iozone -i 0 -i 1 -c -e -w -r 4k -s 64g -t 16 -+n -+m hosts", "mpirun -np 16 ior -w -e -t 1m -b 64g"):
        with pytest.raises(WorkloadError) as info:
            check_runnable(gpfs, parse_command(line))
        (problem,) = info.value.problems
        assert problem.path == "record_size" and "records of at least 2 MiB" in problem.message, line
    check_runnable(gpfs, parse_command("iozone -i 0 -i 1 -c -e -w -r 2m -s 64g -t 16 -+n -+m hosts"))
    check_runnable(gpfs, parse_command("iozone -i 0 -i 1 -c -e -w -I -r 4k -s 64g -t 16 -+n -+m hosts"))  # O_DIRECT
    check_runnable(gpfs, parse_command("iozone -i 2 -r 4k -s 64g -t 16 -+n -+m hosts"))  # random: drive-bound
    beegfs = load_system(ROOT / "topologies" / "beegfs-hdr100.yaml")
    check_runnable(beegfs, parse_command("mpirun -np 2 ior -w -t 1m -b 1g"))  # BeeGFS has its own rule (512 KiB)


def test_a_fixed_mdtest_tree_is_checked_against_the_command(tmp_path: Path) -> None:
    """Without the total_files rule, -b and -n are fixed settings, so the command must give them."""
    text = (
        "name: md\ntitle: t\nsource: s\nbenchmark: mdtest\n"
        "command: mpirun -np $T mdtest -n 64 -b 2 -z 1 -u -F -d /x\n"
        "threads: [4]\nfiles_only: true\nunique_dir: true\nbranching: 2\ndepth: 1\nitems: 64\n"
    )
    file = tmp_path / "md.yaml"
    file.write_text(text)
    assert load_workload(file).branching == 2
    file.write_text(text.replace("branching: 2", "branching: 4"))
    with pytest.raises(WorkloadError, match="the command gives branching 2, the workload 4"):
        load_workload(file)


def test_a_name_that_differs_from_the_file_is_reported_with_the_other_problems(tmp_path: Path) -> None:
    # All problems of a file are reported together: the name used to be checked only once the
    # rest of the file was valid, so fixing one problem revealed the next.
    file = tmp_path / "mine.yaml"
    file.write_text(GOOD.format(name="other").replace("record_size: 1 MiB", "record_size: 1048576"))
    with pytest.raises(WorkloadError) as info:
        load_workload(file)
    assert [p.path for p in info.value.problems] == ["record_size", "name"]
    assert "differs from the file name 'mine.yaml'" in info.value.problems[1].message
    assert info.value.problems[1].line == 1


def test_messages_count_one_thread_in_the_singular() -> None:
    from sim.config.workload import at_threads

    assert at_threads([1]) == "at 1 thread"
    assert at_threads([2]) == "at 2 threads"
    assert at_threads([1, 2]) == "at 1, 2 threads"


def test_a_variable_glued_to_its_flag_stands_for_the_same_value(tmp_path: Path) -> None:
    # IOzone reads -t$Thread as -t $Thread (getopt): the glued variable is the workload's value too.
    text = (ROOT / "workloads" / "beegfs-hc-iozone-random.yaml").read_text()
    at = text.index("\ncommand:")
    glued = text[at:].replace("-t $Thread", "-t$Thread", 1).replace("-s $Size", "-s$Size", 1)
    assert "-t$Thread" in glued and "-s$Size" in glued
    file = tmp_path / "beegfs-hc-iozone-random.yaml"
    file.write_text(text[:at] + glued)
    assert command_mismatches(load_workload(file)) == []  # a glued variable read otherwise is a WorkloadError
    # The glued line is read and held against the settings, not passed over: a setting it disagrees
    # with is reported, and that alone (-t$Thread and -s$Size add no "a number, not a variable").
    assert "fsync: false" in glued
    file.write_text(text[:at] + glued.replace("fsync: false", "fsync: true", 1))
    with pytest.raises(WorkloadError) as info:
        load_workload(file)
    assert [(p.path, p.message.split(";")[0]) for p in info.value.problems] == [
        ("command", "the command gives fsync no, the workload yes")
    ]


@pytest.mark.parametrize("kind", ["dangling link", "folder"])
def test_an_unreadable_workload_under_its_name_is_refused_not_passed_over(tmp_path: Path, kind: str) -> None:
    # The topology's own workloads/ has the name, but not as a readable file: the repository's copy
    # of that workload must not be used in its place.
    (tmp_path / "topologies").mkdir()
    topology = tmp_path / "topologies" / "hc.yaml"
    topology.write_text((ROOT / "topologies" / "beegfs-high-capacity.yaml").read_text())
    (tmp_path / "topologies" / "parts").symlink_to(ROOT / "topologies" / "parts")
    (tmp_path / "workloads").mkdir()
    for shipped in (ROOT / "workloads").glob("*.yaml"):
        (tmp_path / "workloads" / shipped.name).write_text(shipped.read_text())
    broken = tmp_path / "workloads" / "beegfs-hc-ior-n1.yaml"
    broken.unlink()
    if kind == "folder":
        broken.mkdir()
    else:
        broken.symlink_to(tmp_path / "nowhere.yaml")
    result = run_cli("validate", str(topology))
    assert result.code == 2
    assert f"{topology}:" in result.stdout and f"{broken}: cannot read file" in result.stdout, result.stdout


# ------------------------------------------------------------------- a result's workloads, run again

_AS_COMMANDS = [
    "iozone -i 0 -i 1 -c -e -w -r 1m -I -s 8g -t 64 -+n",
    "iozone -i 2 -w -O -I -r 4k -s 1536m -t 4 -+n",
    "mpirun -np 64 ior -a POSIX -w -r -e -s 4 -t 16m -b 3g -F -o /mnt/fs/file",
    "mpirun -npernode 2 -np 8 ior -a POSIX -w -r -e -z -B -t 4k -b 1g -o /mnt/fs/file",
    "mpirun --map-by node -np 64 mdtest -d /mnt/x -i 1 -b 32 -z 1 -L -I 1024 -u -t -F -w 4K -e 4K",
]


@pytest.mark.parametrize(
    "workload",
    [*(load_workload(p) for p in sorted(workload_dir().glob("*.yaml"))), *map(parse_command, _AS_COMMANDS)],
    ids=lambda w: w.name if not w.name.startswith("cmd") else (w.command or "").split()[0],
)
def test_a_workload_written_as_a_file_reads_back_as_the_same_workload(workload, tmp_path: Path) -> None:
    # What a result embeds as inputs.workload_files: saved as <name>.yaml (JSON is YAML), it is the
    # workload that ran, settings and sizes exactly, without the command line.
    written = workload_file(workload)
    assert "command" not in written
    assert all(not isinstance(written[k], float) for k in ("record_size", "write_bytes") if k in written)
    path = tmp_path / f"{workload.name}.yaml"
    path.write_text(json.dumps(written, indent=2))
    again = load_workload(path)
    assert again.model_dump(exclude={"command"}) == workload.model_dump(exclude={"command"})


@settings(max_examples=300, deadline=None, derandomize=True)
@given(
    st.one_of(
        st.integers(min_value=1, max_value=2**53).map(float),  # the parser refuses beyond 2^53 B
        st.floats(min_value=1e-3, max_value=2**53, allow_nan=False, allow_infinity=False),
    )
)
def test_a_size_written_for_a_file_reads_back_exactly(size: float) -> None:
    text = size_text(size)
    assert parse_quantity(text, Dimension.SIZE) == size, text


def test_gpfs_buffered_streams_need_a_block_buffer_each_in_the_pagepool() -> None:
    """A node's buffered streams each hold at least one block of its pagepool (to read ahead into
    or write behind from): 16 streams of 8 MiB blocks on a node do not fit in a 64 MiB pagepool
    (they were predicted at the rate of 32 GiB, a GPFS specialist's review); 8 do, and O_DIRECT
    needs none."""
    from sim.benchmarks.runnable import check_runnable
    from sim.errors import PfssimError
    from sim.topology.build import load_system

    pixstor = load_system(ROOT / "topologies" / "pixstor-large.yaml")
    line = "iozone -i 0 -i 1 -c -e -w -r 16m -s 64g -t {} -+n -+m hosts"
    small = parse_command(line.format(256)).model_copy(update={"gpfs_pagepool_client": 64 * 2**20})
    with pytest.raises(PfssimError, match=r"at 256 threads a node runs 16 buffered streams, which need one 8 MiB"):
        check_runnable(pixstor, small)
    check_runnable(pixstor, small.model_copy(update={"threads": [128]}))  # 8 a node: 64 MiB
    check_runnable(pixstor, small.model_copy(update={"direct_io": True}))
    check_runnable(pixstor, parse_command(line.format(256)))  # 32 GiB


def test_gpfs_reads_of_files_held_in_the_pagepool_are_refused() -> None:
    """A file that fits in its stream's share of the client pagepool is read from memory after the
    benchmark wrote it (pixstor-large: 32 GiB pagepools): 4 KiB random reads ran at 2.4M IOPS from
    one thread and 4 GiB sequential reads at the drives' rate. IOR's -C reads another node's data."""
    from sim.benchmarks.runnable import check_runnable
    from sim.errors import PfssimError
    from sim.topology.build import load_system

    pixstor = load_system(ROOT / "topologies" / "pixstor-large.yaml")
    with pytest.raises(PfssimError, match=r"at 1 thread each file fits in its stream's share of the 32 GiB client"):
        check_runnable(pixstor, parse_command("iozone -i 2 -e -r 4k -s 20g -t 1"))
    with pytest.raises(PfssimError, match=r"each task's blocks \(-b x -s\) fit .* O_DIRECT \(-B\), or -C"):
        check_runnable(pixstor, parse_command("mpirun -np 8 --map-by node ior -w -r -e -t 16m -b 16g -o /f"))
    check_runnable(pixstor, parse_command("mpirun -np 8 --map-by node ior -w -r -e -C -t 16m -b 16g -o /f"))
    # -C reads another node's data only when the tasks span several nodes (IOR's -Q offset).
    for alone in ("-np 1", "-np 16 -npernode 16"):
        with pytest.raises(PfssimError, match="-C reads another node's data only when the tasks span several nodes"):
            check_runnable(pixstor, parse_command(f"mpirun {alone} ior -w -r -e -C -t 16m -b 1g -o /f"))

    # -Q q: task t reads task t + q x (1 when dealt round robin, else the tasks per node)'s data
    # (IOR's rankOffset): on 2 nodes, -Q 2 comes back to each task's own node, -Q 3 does not; 16
    # tasks 8 per node read their own node's data with -Q 2 (16 ranks on), not with -Q 1 or 3.
    def reads_elsewhere(line: str) -> bool:
        try:
            check_runnable(pixstor, parse_command(line))
        except PfssimError as refused:
            assert "the task each reads from (-Q nodes on) runs on another node" in str(refused)
            return False
        return True

    two = "mpirun -np 2 --map-by node ior -r -e -C -t 16m -b 1g -o /f"
    assert [reads_elsewhere(f"{two} -Q {q}") for q in (1, 2, 3, 4)] == [True, False, True, False]
    blocks = "mpirun -np 16 -npernode 8 ior -r -e -C -t 16m -b 1g -o /f"
    assert [reads_elsewhere(f"{blocks} -Q {q}") for q in (1, 2, 3)] == [True, False, True]
    assert parse_command(f"{two} -Q 3").reorder_offset == 3 and parse_command(two).reorder_offset == 1
    check_runnable(pixstor, parse_command("iozone -i 2 -e -I -r 4k -s 20g -t 1"))  # O_DIRECT
    check_runnable(pixstor, parse_command("iozone -i 2 -e -r 4k -s 40g -t 1"))  # larger than the share
    check_runnable(pixstor, parse_command("iozone -i 0 -e -r 16m -s 4g -t 8 -+n -+m h"))  # writes only
    with pytest.raises(PfssimError, match="at 8 threads each file fits"):
        check_runnable(pixstor, parse_command("iozone -i 0 -i 1 -e -r 16m -s 4g -t 8 -+n -+m h"))
    from sim.benchmarks.suite import default_workloads

    for workload in default_workloads(pixstor):
        check_runnable(pixstor, workload)  # the documents' files are twice the pagepool


@pytest.mark.parametrize(
    ("record", "accepted"), [("1 MB", False), ("1000 B", False), ("4 KiB", True), ("1536 B", True)]
)
def test_direct_io_calls_are_whole_sectors(tmp_path: Path, record: str, accepted: bool) -> None:
    # O_DIRECT needs 512-byte multiples (else EINVAL); "1 MB" meant as MiB ran 36% slower, unsaid.
    text = (workload_dir() / "beegfs-hp-iozone-seq.yaml").read_text()
    text = text.replace("record_size: 1 MiB", f"record_size: {record}")
    text = "\n".join(line for line in text.splitlines() if not line.startswith("command:"))  # its -r 1m
    path = tmp_path / "beegfs-hp-iozone-seq.yaml"
    path.write_text(text)
    if accepted:
        assert load_workload(path).record_size == parse_quantity(record, Dimension.SIZE)
        return
    with pytest.raises(WorkloadError) as info:
        load_workload(path)
    said = " ".join(str(p) for p in info.value.problems)
    assert "whole number of 512-byte sectors" in said
    assert ("the power of two is written 1 MiB" in said) == (record == "1 MB")


def test_file_sizes_are_whole_bytes() -> None:
    from pydantic import ValidationError

    from sim.config.workload import Workload

    settings = parse_command("iozone -i 0 -I -e -r 4k -s 1g -t 1").model_dump(mode="json")
    with pytest.raises(ValidationError, match="file_size must be a whole number of bytes"):
        Workload.model_validate(settings | {"record_size": "4 KiB", "file_size": "1258291.2 B"})


def test_an_aggregate_split_short_of_whole_records_by_rounding_keeps_its_records() -> None:
    """IOzone files hold whole records, floored, but an aggregate that is whole records up to float
    rounding keeps them: 3 MiB less one ulp (3145727.9999999995 B) over 3 threads is 1048575.9999999999 B
    each, 0.9999999999999999 records by hand, so one 1 MiB record each, not none. Sizes in a workload
    file are whole bytes, so the aggregate is set on a validated workload with model_copy (no validation)."""
    from sim.config.workload import Workload

    workload = Workload.model_validate(
        {
            "name": "w",
            "title": "t",
            "source": "s",
            "benchmark": "iozone_seq_nn",
            "ops": ["write", "read"],
            "record_size": "1 MiB",
            "direct_io": False,
            "fsync": True,
            "aggregate_size": "3 MiB",
            "threads": [3],
            "placement": "one_client",
        }
    )
    rounded = workload.model_copy(update={"aggregate_size": math.nextafter(3 * MiB, 0)})
    assert rounded.given_size_for(3) < MiB
    assert rounded.file_size_for(3) == MiB
    assert rounded.thread_problems([3]) == []


def test_a_size_in_part_records_is_whole_records_on_both_sides(tmp_path: Path) -> None:
    """IOzone's -s 1500k -r 1m is one record (its files hold whole records): a workload saying
    so, with the document's command line, is consistent, and a split that holds less than a
    record is told in the bytes given, not the 0 B its whole records come to (session 31's review)."""
    text = (
        "name: w1\ntitle: t\nsource: s\nbenchmark: iozone_seq_nn\n"
        "command: ./iozone -i0 -i1 -e -r 1m -s 1500k -t $Threads\n"
        "ops: [write, read]\nrecord_size: 1 MiB\ndirect_io: false\nfsync: true\nfile_size: 1500 KiB\n"
        "threads: [1, 2]\nplacement: one_client\n"
    )
    (tmp_path / "w1.yaml").write_text(text)
    workload = load_workload(tmp_path / "w1.yaml")
    assert workload.file_size_for(2) == 2**20 and workload.given_size_for(2) == 1500 * 1024
    split = text.replace("file_size: 1500 KiB", "aggregate_size: 3 MiB").replace(
        "threads: [1, 2]", "threads: [1, 2, 4]"
    )
    (tmp_path / "w2.yaml").write_text(
        split.replace("name: w1", "name: w2").replace("command: ./iozone -i0 -i1 -e -r 1m -s 1500k -t $Threads\n", "")
    )
    with pytest.raises(WorkloadError) as info:
        load_workload(tmp_path / "w2.yaml")
    assert "less than one record (1 MiB; 768 KiB at 4 threads)" in str(info.value)
