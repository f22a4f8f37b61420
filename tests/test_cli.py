"""The CLI is a thin adapter: its JSON equals the library's result; exit codes follow the contract."""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from sim.topology.build import load_system
from sim.topology.summary import summarize
from tests.conftest import ROOT, TOPOLOGIES, run_cli


def test_show_json_has_the_promised_fields() -> None:
    result = run_cli("show", str(ROOT / "topologies" / "beegfs-edr-2019.yaml"), "--json")
    assert result.code == 0
    data = json.loads(result.stdout)
    for key in ("name", "storage_targets", "metadata_targets", "capacity", "bounds"):
        assert key in data
    assert set(data["capacity"]) >= {"raw_bytes", "usable_bytes"}
    assert set(data["bounds"]) >= {"read_Bps", "write_Bps", "read_bottleneck", "write_bottleneck"}


def test_show_json_gives_the_figures_worked_out_by_hand() -> None:
    # pixstor-large: 4 ME4084 arrays of 84 12 TB drives, each with 8 RAID6 8+2 data groups, and two
    # controllers of 3.5 GB/s read and 2.75 GB/s write (each half the array's rate).
    result = run_cli("show", str(ROOT / "topologies" / "pixstor-large.yaml"), "--json")
    assert result.code == 0
    data = json.loads(result.stdout)
    assert data["capacity"]["raw_bytes"] == pytest.approx(4 * 84 * 12e12, rel=1e-12)
    assert data["capacity"]["usable_bytes"] == pytest.approx(4 * 8 * 8 * 12e12, rel=1e-12)
    assert data["storage_targets"] == 4 * 8
    assert data["bounds"]["read_Bps"] == pytest.approx(4 * 2 * 3.5e9, rel=1e-12)
    assert data["bounds"]["write_Bps"] == pytest.approx(4 * 2 * 2.75e9, rel=1e-12)
    assert data["bounds"]["write_bottleneck"].startswith("8 x controller")


def test_show_table_names_the_bottleneck() -> None:
    result = run_cli("show", str(ROOT / "topologies" / "pixstor-large.yaml"))
    assert result.code == 0
    # The ceiling table itself (the parts table also says "controller"): each row's value and its cut.
    ceiling = " ".join(result.stdout.split("Hardware ceiling")[1].replace("│", " ").split())
    assert "read 28 GB/s 8 x controller Dell EMC PowerVault ME4084" in ceiling
    assert "write 22 GB/s 8 x controller Dell EMC PowerVault ME4084" in ceiling
    # Hard disks are in the cut at their sequential rate: the table says a run can find them busy below it.
    assert "hard disks count here at their datasheet sequential rate" in ceiling
    # GPFS's scattered blocks make even one stream seek (a teaching review: one reader of one RAID6
    # at 5% of the ceiling, the note naming only interleaved streams); BeeGFS on ME4 says nothing of it.
    assert "with scattered allocation every 8 MiB block lies at a random place on its LUN" in ceiling
    beegfs = run_cli("show", str(ROOT / "topologies" / "beegfs-high-capacity.yaml"))
    assert "hard disks count here" in beegfs.stdout and "scattered" not in beegfs.stdout
    flash = run_cli("show", str(ROOT / "topologies" / "beegfs-hdr100.yaml"))
    assert flash.code == 0 and "hard disks" not in flash.stdout


def test_validate_all_shipped() -> None:
    result = run_cli("validate", *map(str, TOPOLOGIES))
    assert result.code == 0
    assert result.stdout.count(": ok") == len(TOPOLOGIES)


def test_usage_error_is_exit_2() -> None:
    assert run_cli("show").code == 2
    assert run_cli("frobnicate").code == 2


TINY = str(ROOT / "tests" / "data" / "tiny.yaml")


def test_run_json_points_carry_the_promised_fields(tmp_path) -> None:
    plot = tmp_path / "curves.svg"
    result = run_cli(
        "run",
        TINY,
        "--workload",
        "beegfs-hp-iozone-seq",
        "--threads",
        "1,4",
        "--json",
        "--plot",
        str(plot),
        "--seed",
        "3",
    )
    assert result.code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["schema_version"] == 3 and data["seed"] == 3
    assert data["inputs"]["topology"]["name"] == "tiny" and len(data["inputs"]["topology"]["sha256"]) == 64
    assert [(p["op"], p["threads"]) for p in data["points"]] == [("write", 1), ("write", 4), ("read", 1), ("read", 4)]
    for point in data["points"]:
        assert point["benchmark"] == "iozone_seq_nn" and point["workload"] == "beegfs-hp-iozone-seq"
        # The interval holds the value and is not empty unless the bottleneck is saturated (a drive
        # streaming at its full rate gives every batch the same rate); a point that says it
        # converged met the default 2%.
        assert point["ci_low"] <= point["value"] <= point["ci_high"]
        if point["bottleneck_utilization"] < 0.999:
            assert point["ci_low"] < point["ci_high"]
        if point["converged"]:
            assert point["ci_high"] - point["ci_low"] <= 2 * 0.02 * point["value"] * (1 + 1e-9)
        assert point["bottleneck"] in point["utilization"]
        assert point["limit"] == ("capacity" if point["bottleneck_utilization"] >= 0.5 else "latency")
    assert plot.read_text().lstrip().startswith("<?xml")


def test_run_is_deterministic() -> None:
    args = ("run", TINY, "--workload", "beegfs-hp-iozone-random", "--threads", "8", "--json")
    first, second = json.loads(run_cli(*args).stdout), json.loads(run_cli(*args).stdout)
    assert first["points"] == second["points"]


def test_run_in_two_processes_gives_the_same_points_in_the_same_order() -> None:
    args = ("run", TINY, "--workload", "beegfs-hp-iozone-seq", "--threads", "1,4,16", "--json")
    one = json.loads(run_cli(*args, "--workers", "1").stdout)["points"]
    two = json.loads(run_cli(*args, "--workers", "2").stdout)["points"]
    keys = ("workload", "op", "threads", "value", "ci_low", "ci_high", "bottleneck", "utilization")
    assert [[p[k] for k in keys] for p in one] == [[p[k] for k in keys] for p in two]
    assert [(p["op"], p["threads"]) for p in two] == [(op, t) for op in ("write", "read") for t in (1, 4, 16)]


def test_run_cmd_line() -> None:
    result = run_cli("run", TINY, "--cmd", "iozone -i 0 -c -e -w -r 1m -I -s 8g -t 2 -+n", "--json")
    assert result.code == 0, result.stderr
    (point,) = json.loads(result.stdout)["points"]
    assert (point["benchmark"], point["op"], point["threads"]) == ("iozone_seq_nn", "write", 2)


def test_run_table() -> None:
    result = run_cli("run", TINY, "--workload", "beegfs-hp-iozone-seq", "--threads", "2")
    assert result.code == 0
    assert "beegfs-hp-iozone-seq" in result.stdout and "GB/s" in result.stdout and "storage" in result.stdout


def test_run_bad_inputs_exit_2_before_simulating(tmp_path) -> None:
    unsupported = run_cli("run", TINY, "--cmd", "iozone -i 0 -r 1m -s 1g -t 2 -x")
    assert unsupported.code == 2 and "-x" in unsupported.stderr and unsupported.stdout == ""
    unknown = run_cli("run", TINY, "--workload", "no-such-workload")
    assert unknown.code == 2 and "no-such-workload" in unknown.stderr
    bad_plot = run_cli("run", TINY, "--workload", "beegfs-hp-iozone-seq", "--plot", str(tmp_path / "x.gif"))
    assert (
        bad_plot.code == 2
        and f"{tmp_path / 'x.gif'}: --plot: the plot file must end in .png or .svg" in bad_plot.stderr
    )
    empty = run_cli("run", TINY, "--workload", "beegfs-hp-iozone-seq", "--plot", "")
    assert empty.code == 2 and "--plot: an empty path; give a file name" in empty.stderr
    assert not (tmp_path / "x.gif").exists()
    assert run_cli("run", TINY, "--threads", "0").code == 2
    assert run_cli("run", TINY, "--workers", "0").code == 2
    a_file = tmp_path / "a-file"
    a_file.write_text("")
    under_a_file = run_cli("run", TINY, "--workload", "beegfs-hp-iozone-seq", "--plot", str(a_file / "x.png"))
    assert under_a_file.code == 2 and under_a_file.stdout == "" and "is a file" in under_a_file.stderr
    assert run_cli("reproduce", "--plots", str(a_file / "figures")).code == 2
    assert run_cli("reproduce", "--report", str(a_file / "report.md")).code == 2
    same = run_cli("reproduce", "--report", str(tmp_path / "r.md"), "--plots", str(tmp_path / "r.md"))
    assert same.code == 2 and "--plots and --report name the same path" in same.stderr
    assert not (tmp_path / "r.md").exists()
    several = run_cli(
        "run", TINY, "--cmd", "iozone -i 0 -r 0 -s 1g -t 2", "--cmd", "iozone -i 0 -r 1m -s 1g -t 2",
        "--cmd", "mpirun -np 2 ior -w -t 1m", "--workload", "no-such-workload",
    )  # fmt: skip
    assert several.code == 2 and several.stdout == ""
    assert "--cmd #1 -r:" in several.stderr and "--cmd #3 -b:" in several.stderr and "#2" not in several.stderr
    assert "no-such-workload" in several.stderr
    twice = run_cli("run", TINY, "--workload", "beegfs-hp-iozone-seq", "--workload", "beegfs-hp-iozone-seq")
    assert twice.code == 2 and "selected twice" in twice.stderr
    negative_seed = run_cli("run", TINY, "--workload", "beegfs-hp-iozone-seq", "--threads", "1", "--seed", "-1")
    assert negative_seed.code == 2 and "the seed must be an integer from 0 to 2^53 - 1" in negative_seed.stderr
    assert "Traceback" not in negative_seed.stderr
    huge_seed = run_cli("run", TINY, "--threads", "1", "--seed", "9" * 5000)  # longer than int() reads
    assert huge_seed.code == 2 and "from 0 to 2^53 - 1" in huge_seed.stderr and "9" * 50 not in huge_seed.stderr
    # The largest seed a double holds exactly is taken; one above it is refused, as JSON readers
    # that hold numbers as doubles would round it.
    assert run_cli("run", TINY, "--threads", "1", "--seed", str(2**53), "--json").code == 2
    seq = ("--workload", "beegfs-hp-iozone-seq", "--threads", "1")
    top = run_cli("run", TINY, *seq, "--seed", str(2**53 - 1), "--json")
    assert top.code == 0 and json.loads(top.stdout)["seed"] == 2**53 - 1


def test_validate_checks_workload_files_and_default_suites(tmp_path) -> None:
    assert run_cli("validate", str(ROOT / "workloads" / "pixstor-ior-n1.yaml")).code == 0
    import shutil

    shutil.copytree(ROOT / "topologies" / "parts", tmp_path / "parts")
    topology = tmp_path / "t.yaml"
    topology.write_text(
        (ROOT / "topologies" / "beegfs-edr-2019.yaml")
        .read_text()
        .replace("benchmarks: [beegfs-hp-iozone-seq,", "benchmarks: [beegfs-hp-iozone-sequential,")
    )
    result = run_cli("validate", str(topology))
    assert result.code == 2 and "beegfs-hp-iozone-sequential" in result.stdout
    line = topology.read_text()[: topology.read_text().index("benchmarks:")].count("\n") + 1
    assert f"{topology}:{line} benchmarks[0]:" in result.stdout


def test_run_plot_makes_missing_folders(tmp_path) -> None:
    import os

    target = tmp_path / "new" / "folder" / "curves.svg"
    result = run_cli("run", TINY, "--workload", "beegfs-hp-iozone-seq", "--threads", "1", "--plot", str(target))
    assert result.code == 0 and target.read_text().lstrip().startswith("<?xml")
    umask = os.umask(0)
    os.umask(umask)
    assert target.stat().st_mode & 0o777 == 0o666 & ~umask  # not the private mode of a temporary file


def test_plot_keeps_the_mode_of_the_file_it_replaces_and_takes_any_name(tmp_path) -> None:
    topology = tmp_path / "dollar.yaml"
    text = Path(TINY).read_text()
    topology.write_text(text.replace("name: tiny", "name: 'tiny$ $ and $\\badcmd{$'", 1))
    (tmp_path / "parts").symlink_to(ROOT / "tests" / "data" / "parts")
    target = tmp_path / "curves.png"
    target.write_bytes(b"old")
    target.chmod(0o640)
    cmd = "iozone -i 0 -r 1m -s 64m -t 1"
    result = run_cli("run", str(topology), "--cmd", cmd, "--precision", "0.2", "--plot", str(target), "--json")
    assert result.code == 0, result.stderr  # a '$' in a name used to start matplotlib's math mode and crash
    assert target.read_bytes().startswith(b"\x89PNG") and target.stat().st_mode & 0o777 == 0o640


def test_run_table_shows_the_last_task_cost_for_ior_only() -> None:
    edr = str(ROOT / "topologies" / "beegfs-edr-2019.yaml")
    for per_process in ("", " -F"):  # IOR's bandwidth is set by its last task with or without -F
        cmd = f"mpirun -np 8 ior -a POSIX -w -e -s 1 -t 1m -b 1g -o /mnt/f{per_process}"
        ior = run_cli("run", edr, "--cmd", cmd, "--threads", "8")
        assert ior.code == 0, ior.stderr
        assert "last task" in ior.stdout and "%" in ior.stdout.split("last task")[1], per_process
    iozone = run_cli("run", edr, "--workload", "beegfs-hp-iozone-seq", "--threads", "2")
    assert iozone.code == 0 and "last task" not in iozone.stdout


def test_run_refuses_the_same_command_twice() -> None:
    # Two spellings of one IOzone run: a benchmark selected twice, as with --workload.
    result = run_cli(
        "run", TINY, "--cmd", "iozone -i 0 -r 1m -s 1g -t 2", "--cmd", "iozone -t 2 -i0 -r 1024 -s 1g", "--threads", "1"
    )
    assert result.code == 2 and result.stdout == ""
    assert "--cmd #2: runs the same benchmark as --cmd #1 (selected twice)" in result.stderr
    # Lines that differ only in -t are one benchmark once --threads gives them the same counts.
    result = run_cli(
        "run", TINY, "--cmd", "iozone -i 0 -r 1m -s 1g -t 2", "--cmd", "iozone -i 0 -r 1m -s 1g -t 4", "--threads", "1"
    )
    assert result.code == 2 and result.stdout == ""
    assert "--cmd #2: runs the same benchmark as --cmd #1 once --threads replaces their thread counts" in result.stderr


def test_thread_lists_are_plain_comma_separated_numbers() -> None:
    for bad in ("1,,2", "1,2,", "1_000", "\u0664", "+4", "1e3"):
        result = run_cli("run", TINY, "--workload", "beegfs-hp-iozone-seq", "--threads", bad)
        assert result.code == 2 and "comma-separated list of whole numbers" in result.stderr, bad
    assert run_cli("run", TINY, "--workload", "beegfs-hp-iozone-seq", "--threads", "1", "--seed", "1_0").code == 2


def test_an_unwritable_plot_folder_is_refused_before_simulating(monkeypatch) -> None:
    import sys
    import tempfile
    from pathlib import Path

    import pytest

    import sim.benchmarks.suite as suite

    if not sys.platform.startswith("linux"):
        pytest.skip("needs /proc")

    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("simulated before checking --plot")

    monkeypatch.setattr(suite, "run_suite", never)
    # root may write anywhere as far as access() can tell, /proc included: the check must try.
    result = run_cli("run", TINY, "--workload", "beegfs-hp-iozone-seq", "--threads", "1", "--plot", "/proc/p.png")
    assert result.code == 2 and result.stdout == "" and "--plot" in result.stderr
    # A legal name that leaves no room for the temporary file it is written through.
    long = Path(tempfile.gettempdir()) / ("p" * 246 + ".png")
    result = run_cli("run", TINY, "--workload", "beegfs-hp-iozone-seq", "--threads", "1", "--plot", str(long))
    assert result.code == 2 and f"{long}: --plot: the file name is too long" in result.stderr


def test_an_output_file_named_with_a_trailing_slash_is_refused(tmp_path) -> None:
    # "x.png/" names a folder; Path() drops the slash, and the plot was written as the file x.png.
    given = f"{tmp_path}/x.png/"
    result = run_cli("run", TINY, "--workload", "beegfs-hp-iozone-seq", "--threads", "1", "--plot", given)
    assert result.code == 2 and "ends in a slash, which names a folder" in result.stderr
    result = run_cli("reproduce", "--report", f"{tmp_path}/r.md/")
    assert result.code == 2 and "ends in a slash, which names a folder" in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_plot_shows_the_ceiling_and_which_points_are_latency_bound() -> None:
    from matplotlib.colors import to_rgba

    from sim.benchmarks.suite import run_suite
    from sim.benchmarks.workloads import find_workload
    from sim.report.plot import figure
    from sim.topology.bounds import max_flow_bound

    system = load_system(ROOT / "topologies" / "beegfs-edr-2019.yaml")
    workload = find_workload("beegfs-hp-iozone-seq").with_threads([1, 64])  # one stream; the links full
    result = run_suite(system, [workload], seed=3)
    ax = figure(result).axes[0]
    # One thread runs on one client, whose HCA is its ceiling; 64 threads use every client, and the
    # ceiling is pfssim show's.
    ceiling = {line.get_label(): line for line in ax.get_lines() if "ceiling" in str(line.get_label())}
    one = max_flow_bound(system, "read", [system.clients[0]]).Bps
    two = max_flow_bound(system, "read", list(system.clients[:2])).Bps
    assert one == pytest.approx(12.4e9) and two == pytest.approx(24.8e9)  # EDR client ports
    clients = len(system.clients)
    for op in ("write", "read"):
        # A step at every thread count that adds a client (1, 2, 3, ... until every client has a
        # thread), held from there to the next (steps-post): at 2 threads the ceiling of two clients
        # (drawn between the simulated counts 1 and 64, it showed one client's until 8).
        line = ceiling[f"{op} ceiling of the clients used (pfssim show: all {clients})"]
        x, y = list(line.get_xdata()), list(line.get_ydata())
        assert line.get_drawstyle() == "steps-post" and x[:3] == [1, 2, 3] and x[-1] == 64
        assert y[0] == pytest.approx(one / 1e9) and y[1] == pytest.approx(two / 1e9)
        assert y[-1] == pytest.approx(getattr(summarize(system), op).Bps / 1e9) and y == sorted(y)
    # Threads that leave no client out are drawn against pfssim show's ceiling, a level line.
    wide = run_suite(system, [workload.with_threads([64])], seed=3)
    labels = {line.get_label() for line in figure(wide).axes[0].get_lines()}
    assert {"write ceiling (pfssim show)", "read ceiling (pfssim show)"} <= labels
    markers = {line.get_gid(): line for line in ax.get_lines() if line.get_gid()}
    for op in ("write", "read"):
        points = result.curve(workload.name, op)
        for limit in ("capacity", "latency"):
            drawn = markers.get(f"{op}-{limit}")
            threads = [p.threads for p in points if p.limit == limit]
            assert (list(drawn.get_xdata()) if drawn else []) == threads
            if drawn:  # hollow exactly when latency-bound
                assert (to_rgba(drawn.get_markerfacecolor())[3] == 0) == (limit == "latency")
    assert {p.limit for p in result.points} == {"capacity", "latency"}  # both kinds are drawn here
    # A point that is not converged is ringed, as the tables mark it *, once in the legend.
    from dataclasses import replace

    assert all(p.converged for p in result.points)
    result.points = [replace(p, converged=False) if p.threads == 64 else p for p in result.points]
    ax = figure(result).axes[0]
    rings = {line.get_gid(): line for line in ax.get_lines() if str(line.get_gid()).endswith("-not-converged")}
    assert sorted(rings) == ["read-not-converged", "write-not-converged"]
    assert all(list(line.get_xdata()) == [64] for line in rings.values())
    assert [line.get_label() for line in ax.get_lines()].count("not converged (*)") == 1
    # A bandwidth axis starts at zero, and threads are written as numbers (1, 64), not powers of two.
    assert ax.get_ylim()[0] == 0
    assert ax.xaxis.get_major_formatter()(64, 0) == "64"
    assert ax.get_title() == "beegfs-edr-2019: beegfs-hp-iozone-seq"


def test_a_command_lines_panel_and_table_show_the_command() -> None:
    # A --cmd workload is named cmd1: its table and plot panel also show the line its user typed.
    from sim.benchmarks.cmdline import parse_command
    from sim.benchmarks.suite import run_suite
    from sim.report.plot import figure

    line = "iozone -i 0 -I -e -r 1m -s 1g -t 1"
    system = load_system(TINY)
    result = run_suite(system, [parse_command(line, name="cmd1")], seed=1)
    assert figure(result).axes[0].get_title() == f"tiny: cmd1 ({line})"
    table = run_cli("run", TINY, "--cmd", line).stdout
    assert f"tiny: cmd1 ({line}), iozone_seq_nn" in " ".join(table.split())


def test_a_plot_path_naming_a_folder_is_refused(tmp_path) -> None:
    result = run_cli("run", TINY, "--cmd", "iozone -i 0 -I -e -r 1m -s 1g -t 1", "--plot", str(tmp_path))
    assert result.code == 2
    assert f"{tmp_path}: --plot: this is a folder; give a file name ending in .png or .svg" in result.stderr


def test_single_valued_options_are_given_once() -> None:
    for option, values in (("--threads", ("1", "2")), ("--seed", ("1", "9")), ("--precision", ("0.5", "0.2"))):
        result = run_cli("run", TINY, option, values[0], option, values[1])
        assert result.code == 2 and f"{option} is given twice" in result.stderr, option
    twice = run_cli("run", TINY, "--threads", "4,2,4")
    assert twice.code == 2 and "4 listed twice" in twice.stderr
    extra = run_cli("reproduce", "--parameters", "--json", "beegfs-edr-2019", "--workers", "3")
    assert extra.code == 2 and "it takes --json only, not SYSTEM, --workers" in extra.stderr
    assert run_cli("reproduce", "--parameters", "--json").code == 0


def _named_by(name: str, components: dict[str, str], owned: list[dict]) -> bool:
    """Whether a run's part name is a component of ``pfssim show --json`` or fits one of its
    ``owned_names`` patterns, with every part the pattern names of a kind it allows."""
    if name in components:
        return True
    for entry in owned:
        regex = re.escape(entry["pattern"])
        for field in ("part", "a", "b"):
            regex = regex.replace(re.escape("{" + field + "}"), f"(?P<{field}>.+?)")
        for number in ("n", "i", "j"):
            regex = regex.replace(re.escape("{" + number + "}"), r"\d+")
        match = re.fullmatch(regex, name)
        if match and all(components.get(part) in entry["of"] for part in match.groupdict().values()):
            return True
    return False


@pytest.mark.parametrize(
    ("topology", "args"),
    [
        # 64 mdtest tasks hold tiny's 4 metadata workers: a pool is the named bottleneck there.
        (TINY, ["--workload", "beegfs-hp-iozone-seq", "--cmd", "mpirun -np 64 mdtest -n 64 -u -F -d /mnt/x"]),
        (
            str(ROOT / "topologies" / "pixstor-large.yaml"),
            ["--workload", "pixstor-iozone-seq", "--workload", "mdtest-pixstor-4k", "--threads", "2"],
        ),
    ],
    ids=["beegfs", "gpfs"],
)
def test_every_part_a_run_names_is_a_component_that_show_lists(topology: str, args: list[str]) -> None:
    shown = json.loads(run_cli("show", topology, "--json").stdout)
    components = {c["name"]: c["kind"] for c in shown["components"]}
    assert len(components) == len(shown["components"]), "component names are unique"
    owned = shown["owned_names"]
    run = run_cli("run", topology, *args, "--precision", "0.1", "--json")
    assert run.code == 0, run.stderr
    points = json.loads(run.stdout)["points"]
    names = {n for p in points for n in [p["bottleneck"], *p["utilization"]]}
    if topology == TINY:
        assert any(p["bottleneck"].endswith(".workers") for p in points), "the pool rule is exercised"
    assert [n for n in names if not _named_by(n, components, owned)] == []
    hca = next(name for name, kind in components.items() if kind == "hca")
    assert not _named_by(f"{hca}.workers", components, owned), "a suffix on a kind that does not own it"
    assert _named_by(f"{hca}.tx", components, owned)


def _pfssim(*args: str, **popen: object) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "sim.cli.main", *args], stderr=subprocess.PIPE, text=True, **popen)


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_a_full_standard_output_is_a_message_not_a_traceback() -> None:
    with open("/dev/full", "w") as full:
        process = _pfssim("show", str(ROOT / "topologies" / "beegfs-hdr100.yaml"), "--json", stdout=full)
        _, err = process.communicate(timeout=120)
    assert process.returncode == 2
    assert err.strip() == "standard output: cannot write: No space left on device"


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
@pytest.mark.parametrize("args", [("--version",), ("--help",), ("run", "--help")])
def test_help_or_version_that_cannot_be_written_is_exit_2(args: tuple[str, ...]) -> None:
    # argparse drops a failed write of its help and version text and exits 0.
    with open("/dev/full", "w") as full:
        process = _pfssim(*args, stdout=full)
        _, err = process.communicate(timeout=120)
    assert process.returncode == 2
    assert err.strip() == "standard output: cannot write: No space left on device"


@pytest.mark.parametrize("args", [("run", "/no/such/topology.yaml"), ("run", "--no-such-option"), ("show",)])
def test_with_standard_error_closed_messages_do_not_reach_standard_output(args: tuple[str, ...]) -> None:
    # pfssim ... 2>&- : Python starts with sys.stderr None, and print(file=None) or argparse's usage
    # would write to standard output, into what a script reads as the result.
    process = subprocess.run(
        [sys.executable, "-m", "sim.cli.main", *args],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, timeout=120,
        preexec_fn=lambda: os.close(2),
    )  # fmt: skip
    assert process.returncode == 2
    assert process.stdout == ""


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_a_message_that_cannot_be_written_still_exits_2() -> None:
    with open("/dev/full", "w") as full:
        process = subprocess.run(
            [sys.executable, "-m", "sim.cli.main", "run", "/no/such/topology.yaml"],
            stdout=subprocess.PIPE, stderr=full, text=True, timeout=120,
        )  # fmt: skip
    assert process.returncode == 2 and process.stdout == ""


def test_a_closed_standard_output_is_refused_before_running() -> None:
    # pfssim ... >&- : Python starts with sys.stdout None; nothing is simulated and nothing is lost.
    process = subprocess.run(
        ["bash", "-c", f'"{sys.executable}" -m sim.cli.main run "{TINY}" --threads 1 >&-'],
        stderr=subprocess.PIPE, text=True, timeout=120,
    )  # fmt: skip
    assert process.returncode == 2
    assert process.stderr.strip() == "pfssim: standard output is closed; nothing could be written"


def test_a_reader_that_stops_early_gets_no_traceback() -> None:
    # 165 kB of JSON: more than a pipe holds, so the writer meets the closed pipe.
    topology = str(ROOT / "topologies" / "pixstor-large-expansion.yaml")
    process = _pfssim("show", topology, "--json", stdout=subprocess.PIPE)
    assert process.stdout is not None
    process.stdout.readline()
    process.stdout.close()  # like | head -1
    _, err = process.communicate(timeout=120)
    assert process.returncode == 2 and err == ""


@pytest.mark.parametrize("command", [("show",), ("show", "--json"), ("validate",)])
def test_a_reader_gone_before_the_output_ends_each_command_alike(command: tuple[str, ...]) -> None:
    # The pipe's reading end is closed before pfssim writes: every write meets it. rich's console
    # would end the table with its own exit 1, which pfssim uses for a failed check.
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        topology = str(ROOT / "topologies" / "beegfs-hdr100.yaml")
        process = _pfssim(command[0], topology, *command[1:], stdout=write_end)
        _, err = process.communicate(timeout=120)
    finally:
        os.close(write_end)
    assert process.returncode == 2 and err == "", err


def test_output_files_are_written_all_or_none(tmp_path: Path, monkeypatch) -> None:
    from sim.errors import PfssimError
    from sim.report.files import write_all

    report, figure = tmp_path / "new" / "deep" / "r.md", tmp_path / "new" / "deep" / "r-a.png"
    write_all({report: b"text", figure: b"png"})
    assert (report.read_bytes(), figure.read_bytes()) == (b"text", b"png")
    # A folder where the second file should go: nothing is written, nothing replaced.
    (tmp_path / "in-the-way.png").mkdir()
    with pytest.raises(PfssimError, match="in-the-way.png: cannot write: a folder of this name is in the way"):
        write_all({report: b"new text", tmp_path / "in-the-way.png": b"png"})
    assert report.read_bytes() == b"text"
    # A full disk on the second file: the first is not replaced, and the folders made are removed.
    real_fdopen = os.fdopen
    calls = []

    def fdopen(fd: int, mode: str):  # noqa: ANN202 - a file object that fails on the second file
        calls.append(fd)
        if len(calls) == 2:
            os.close(fd)
            raise OSError(28, "No space left on device")
        return real_fdopen(fd, mode)

    monkeypatch.setattr(os, "fdopen", fdopen)
    target = tmp_path / "made" / "here"
    with pytest.raises(PfssimError, match="cannot write: No space left on device"):
        write_all({report: b"newer", target / "f.png": b"png"})
    monkeypatch.undo()
    assert report.read_bytes() == b"text"
    assert not (tmp_path / "made").exists()
    assert sorted(p.name for p in report.parent.iterdir()) == ["r-a.png", "r.md"]  # no temporary left


def test_an_output_file_that_is_a_link_is_written_through_the_link(tmp_path: Path) -> None:
    from sim.report.files import write_all

    target, link = tmp_path / "kept" / "curves.png", tmp_path / "curves.png"
    target.parent.mkdir()
    target.write_bytes(b"old")
    link.symlink_to(target)
    write_all({link: b"new"})
    assert link.is_symlink() and target.read_bytes() == b"new"
    assert sorted(p.name for p in target.parent.iterdir()) == ["curves.png"]  # no temporary left
    # A link to a file not yet there: the file is made where the link points.
    dangling = tmp_path / "later.png"
    dangling.symlink_to(tmp_path / "kept" / "later.png")
    write_all({dangling: b"png"})
    assert dangling.is_symlink() and (tmp_path / "kept" / "later.png").read_bytes() == b"png"


def test_cmd_workloads_are_named_around_the_files_given(tmp_path: Path) -> None:
    """--cmd workloads are cmd1, cmd2, ...: a --workload file already named cmd1 keeps its name."""
    text = (ROOT / "workloads" / "beegfs-hp-iozone-seq.yaml").read_text()
    mine = tmp_path / "cmd1.yaml"
    mine.write_text(text.replace("name: beegfs-hp-iozone-seq", "name: cmd1"))
    result = run_cli(
        "run", TINY, "--workload", str(mine), "--cmd", "iozone -i 0 -I -r 1m -s 1g -t 2", "--threads", "1", "--json"
    )
    assert result.code == 0, result.stderr
    assert [w["name"] for w in json.loads(result.stdout)["inputs"]["workloads"]] == ["cmd1", "cmd2"]


def test_benchmarks_paths_are_relative_to_the_topology(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A topology's `benchmarks:` may name a workload file by a path relative to the topology's
    folder (as its parts/ folder is), whatever the current folder; a problem inside that file is
    reported with the file's own name and line."""
    import shutil

    (tmp_path / "systems").mkdir()
    (tmp_path / "mine").mkdir()
    shutil.copytree(ROOT / "topologies" / "parts", tmp_path / "systems" / "parts")
    text = (ROOT / "topologies" / "beegfs-edr-2019.yaml").read_text()
    old = "benchmarks: [beegfs-hp-iozone-seq, beegfs-hp-iozone-random]"
    assert old in text
    topology = tmp_path / "systems" / "t.yaml"
    topology.write_text(text.replace(old, "benchmarks: [../mine/small.yaml]"))
    workload = (ROOT / "workloads" / "beegfs-hp-iozone-seq.yaml").read_text()
    workload = workload.replace("name: beegfs-hp-iozone-seq", "name: small")
    (tmp_path / "mine" / "small.yaml").write_text(workload)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert run_cli("validate", str(topology)).code == 0
    (tmp_path / "mine" / "small.yaml").write_text(workload.replace("record_size: 1 MiB", "record_size: 1 parsec"))
    result = run_cli("validate", str(topology))
    assert result.code == 2
    assert "small.yaml:" in result.stdout + result.stderr and "record_size" in result.stdout + result.stderr


def test_a_cmd_workloads_problem_names_the_option_typed() -> None:
    # Found only against the system (the pagepool, the capacity): reported at -e / -s / -b, the
    # options the user wrote, not at the workload settings fsync / file_size they became.
    pixstor = str(ROOT / "topologies" / "pixstor-large.yaml")
    cases = [
        ("iozone -i 0 -c -w -r 16m -s 8g -t 64 -+n -+m hosts", "--cmd -e: at 64 threads each file fits"),
        ("iozone -i 0 -c -e -w -r 16m -s 100000g -t 64 -+n -+m hosts", "--cmd -s: at 64 threads the files of"),
        ("mpirun -np 64 ior -w -e -t 16m -b 100000g", "--cmd -b: at 64 threads the files of"),
        # IOR's bytes a task are -b x -s; the task count and the placement as the launcher was given them.
        ("mpirun -np 64 ior -w -e -t 16m -b 1g -s 100000", "--cmd -b/-s: at 64 threads the files of"),
        ("mpirun -np 128 --map-by ppr:2:node ior -w -e -t 16m -b 1g", "--cmd --map-by: at 128 threads the tasks"),
        ("mpirun -n 128 -ppn 2 ior -w -e -t 16m -b 1g", "--cmd -ppn: at 128 threads the tasks"),
    ]
    for line, expected in cases:
        result = run_cli("run", pixstor, "--cmd", line)
        assert result.code == 2 and result.stdout == ""
        assert result.stderr.startswith(expected), result.stderr
    # Thread counts that --threads gives: it is named beside the placement they exceed.
    result = run_cli("run", pixstor, "--cmd", "mpirun -np 16 -npernode 2 ior -w -e -t 16m -b 1g", "--threads", "1,128")
    assert result.code == 2 and result.stdout == ""
    assert result.stderr.startswith("--cmd -npernode with --threads 1,128: at 128 threads the tasks"), result.stderr


def test_a_parts_catalogue_file_given_as_a_workload_is_said_to_be_one() -> None:
    drives = str(ROOT / "topologies" / "parts" / "drives.yaml")
    result = run_cli("run", str(ROOT / "topologies" / "beegfs-hdr100.yaml"), "--workload", drives)
    assert result.code == 2 and result.stdout == ""
    assert "this is a parts catalogue file (drives), not a workload: give --workload a workload" in result.stderr


def test_the_cli_package_runs_as_a_module() -> None:
    process = subprocess.run([sys.executable, "-m", "sim.cli", "--version"], capture_output=True, text=True, timeout=60)
    assert process.returncode == 0 and process.stdout.startswith("pfssim"), process.stdout + process.stderr


@pytest.mark.parametrize("args", [("reproduce", "--plots", ""), ("reproduce", "--report", " ")])
def test_an_empty_output_path_is_refused(args: tuple[str, ...]) -> None:
    # Path("") is the current folder: an empty option value must not quietly mean it.
    result = run_cli(*args)
    assert result.code == 2
    assert "an empty path" in result.stderr


def test_a_ctrl_c_while_the_command_is_still_being_imported(monkeypatch, capsys) -> None:  # noqa: ANN001
    # The console script starts in sim.cli.entry, which imports the command (a few tenths of a
    # second of rich, pydantic and numpy) inside its own handler: a Ctrl-C then is one line and 130,
    # where it was Python's traceback and death by the signal.
    import importlib.abc

    from sim.cli.entry import run

    class Interrupted(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path, target=None):  # noqa: ANN001, ANN201 - the finder protocol
            if name == "sim.cli.main":
                raise KeyboardInterrupt
            return None

    monkeypatch.delitem(sys.modules, "sim.cli.main")
    monkeypatch.setattr(sys, "meta_path", [Interrupted(), *sys.meta_path])
    with pytest.raises(SystemExit) as stop:
        run()
    assert stop.value.code == 130 and capsys.readouterr().err == "pfssim: interrupted\n"


def test_the_console_script_starts_in_the_entry_module() -> None:
    import tomllib

    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts == {"pfssim": "sim.cli.entry:run"}


@pytest.mark.parametrize("workers", [1, 2])
def test_ctrl_c_stops_a_run_with_a_line_and_exit_130_and_leaves_no_process(tmp_path: Path, workers: int) -> None:
    import signal
    import time

    plot = tmp_path / "curves.png"
    # A run of about half a minute (four runs of a point of about 6 s, so that no machine finishes
    # it before the signal), interrupted as a terminal's Ctrl-C does: SIGINT to the whole process
    # group once it is under way. With one worker the simulation runs in the process the signal
    # stops, and the stop waits for the engine's run to return (sim.engine.core.stop_when_safe).
    args = [sys.executable, "-m", "sim.cli.main", "run", str(ROOT / "topologies" / "beegfs-high-capacity.yaml")]
    args += ["--workload", "beegfs-hc-ior-n1", "--threads", "512", "--replications", "4", "--plot", str(plot)]
    args += ["--workers", str(workers)]
    # As a terminal's foreground job has it, SIGINT at its default: a suite started as a background
    # job of a script (`bash .ci/run &`) ignores SIGINT, and its children inherit that, so the run
    # would ignore the Ctrl-C this test sends and finish (exit 0), as a background job should.
    process = subprocess.Popen(
        args,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # noqa: PLW1509 - only a signal call
    )
    time.sleep(4)
    os.killpg(process.pid, signal.SIGINT)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    assert err.strip() == "pfssim: interrupted" and out == ""
    assert not plot.exists()
    # The workers are gone with their parent: nothing is left in its process group.
    time.sleep(0.5)
    with pytest.raises(ProcessLookupError):
        os.killpg(process.pid, 0)


@pytest.mark.parametrize("how", ["SIGTERM", "SIGKILL"])
def test_a_run_whose_parent_alone_is_stopped_leaves_no_worker(how: str) -> None:
    # A plain `kill PID` (SIGTERM to the parent only, as a notebook's terminate() sends) ends the
    # run as Ctrl-C does, with 128 + 15; a parent killed outright (SIGKILL, no chance to clean up)
    # takes its workers with it (they ask for SIGTERM when their parent exits). Either way no
    # worker is left computing in the process group.
    import signal
    import time

    args = [sys.executable, "-m", "sim.cli.main", "run", str(ROOT / "topologies" / "beegfs-high-capacity.yaml")]
    # Four runs of each of two points of about 6 s: still under way when the signal comes.
    args += ["--workload", "beegfs-hc-ior-n1", "--threads", "256,512", "--replications", "4", "--workers", "2"]
    process = subprocess.Popen(
        args, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    time.sleep(4)
    process.send_signal(getattr(signal, how))
    out, err = process.communicate(timeout=60)
    if how == "SIGTERM":
        assert process.returncode == 128 + signal.SIGTERM, err
        assert err.strip() == "pfssim: terminated (SIGTERM)" and out == ""
    else:
        assert process.returncode == -signal.SIGKILL
    deadline = time.time() + 10
    while time.time() < deadline:
        try:
            os.killpg(process.pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.2)
    else:
        os.killpg(process.pid, signal.SIGKILL)
        pytest.fail("workers were left running after their parent stopped")


def test_main_gives_the_callers_signal_handlers_back() -> None:
    # main installs its own SIGTERM and SIGHUP handlers for a run; a script or a test that calls it
    # keeps its own afterwards. (Left installed, they were inherited by worker processes forked
    # later in the same process, where one raising in a fresh child can send a copy of the
    # caller's code on its way: the likely cause of a session 25 CI run in which pytest-xdist was
    # told of one test twice.)
    import signal

    def mine(number: int, frame: object) -> None:  # pragma: no cover - never delivered
        pass

    before = {n: signal.signal(n, mine) for n in (signal.SIGTERM, signal.SIGHUP)}
    try:
        assert run_cli("validate", str(ROOT / "topologies" / "beegfs-hdr100.yaml")).code == 0
        assert run_cli("show", str(ROOT / "topologies" / "missing.yaml")).code == 2
        assert signal.getsignal(signal.SIGTERM) is mine and signal.getsignal(signal.SIGHUP) is mine
    finally:
        for number, handler in before.items():
            signal.signal(number, handler)


def test_a_worker_pool_stopped_by_an_error_leaves_the_callers_own_processes_alone() -> None:
    import multiprocessing
    import time

    from sim.engine.workers import worker_pool

    own = multiprocessing.get_context("fork").Process(target=time.sleep, args=(30,))
    own.start()
    try:
        with pytest.raises(RuntimeError), worker_pool(1) as pool:
            pool.submit(time.sleep, 0.2)
            raise RuntimeError("stop")
        assert own.is_alive()
    finally:
        own.terminate()
        own.join()


def test_a_stopped_worker_pool_has_closed_its_wakeup_pipe_before_the_error_leaves_it() -> None:
    # At exit, concurrent.futures writes to every live pool's wake-up pipe without the pool's lock;
    # a manager thread still closing that pipe makes Python print an ignored OSError after the
    # run's own "interrupted" line. The pool must therefore have ended its manager thread (and so
    # closed the pipe) before the error reaches the caller.
    import time

    from sim.engine.workers import worker_pool

    seen = {}
    with pytest.raises(KeyboardInterrupt), worker_pool(2) as pool:
        pool.submit(time.sleep, 30)
        seen["manager"] = pool._executor_manager_thread
        seen["wakeup"] = pool._executor_manager_thread_wakeup
        raise KeyboardInterrupt
    assert seen["manager"] is not None and not seen["manager"].is_alive()
    assert seen["wakeup"]._closed


def test_a_results_inputs_name_what_was_simulated_and_by_which_code(tmp_path) -> None:
    # The topology's hash is of the bytes parsed when it was loaded (an edit made while a run goes
    # on, or after, does not change it); every parts file read is hashed; a system changed in
    # memory (a library what-if) changes spec_sha256; model_sha256 names the code exactly.
    import hashlib

    from sim.benchmarks.cmdline import parse_command
    from sim.benchmarks.result import RunResult
    from sim.benchmarks.suite import run_suite
    from sim.topology.build import build_system, load_system

    (tmp_path / "parts").symlink_to(ROOT / "topologies" / "parts")
    path = tmp_path / "tiny.yaml"
    text = (ROOT / "tests" / "data" / "tiny.yaml").read_text()
    path.write_text(text)
    system = load_system(path)
    result = run_suite(system, [parse_command("iozone -i 0 -I -e -r 1m -s 1g -t 1")], seed=1)
    path.write_text(text + "# edited after the run\n")
    topology = result.to_json()["inputs"]["topology"]
    assert topology["sha256"] == hashlib.sha256(text.encode()).hexdigest()
    assert topology["path"] == str(path.absolute())
    assert sorted(topology["parts"]) == sorted(p.name for p in (ROOT / "topologies" / "parts").glob("*.yaml"))
    assert (
        topology["parts"]["drives.yaml"]
        == hashlib.sha256((ROOT / "topologies" / "parts" / "drives.yaml").read_bytes()).hexdigest()
    )
    assert len(result.to_json()["model_sha256"]) == 64
    fs = system.spec.filesystem.model_copy(update={"num_targets": 2})
    changed = build_system(
        system.spec.model_copy(update={"filesystem": fs}), load_system_catalogue(path), system.source_map
    )
    other = RunResult(changed, result.workloads, 1, result.precision).to_json()["inputs"]["topology"]
    assert other["spec_sha256"] != topology["spec_sha256"]


def load_system_catalogue(path):  # noqa: ANN001, ANN201 - the catalogue a topology reads, for build_system
    from sim.config.load import load_system_spec

    return load_system_spec(path)[1]


def test_suites_run_in_workers_from_two_threads_keep_their_own_systems() -> None:
    # Forked workers read the suite to simulate from the module: two threads running suites at once
    # take turns, so neither gets the other's system (one got beegfs-edr-2019's numbers for hdr100).
    import threading

    from sim.benchmarks.cmdline import parse_command
    from sim.benchmarks.suite import run_suite

    workload = parse_command("iozone -i 0 -I -e -r 1m -s 1g -t 1 -+n -+m hosts").with_threads([1, 2])
    systems = [load_system(ROOT / "topologies" / f"{name}.yaml") for name in ("beegfs-edr-2019", "beegfs-hdr100")]
    alone = [[p.value for p in run_suite(s, [workload], seed=1).points] for s in systems]
    together: list[list[float]] = [[], []]

    def run(i: int) -> None:
        together[i] = [p.value for p in run_suite(systems[i], [workload], seed=1, workers=2).points]

    threads = [threading.Thread(target=run, args=(i,)) for i in (0, 1)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert together == alone and alone[0] != alone[1]


def test_a_results_workload_files_run_again_give_the_same_points(tmp_path: Path) -> None:
    first = run_cli(
        "run", TINY, "--cmd", "iozone -i 0 -i 1 -c -e -w -r 1m -I -s 1g -t 2 -+n", "--threads", "1,2", "--seed", "7",
        "--json",
    )  # fmt: skip
    assert first.code == 0, first.stderr
    result = json.loads(first.stdout)
    [written] = result["inputs"]["workload_files"]
    path = tmp_path / f"{written['name']}.yaml"
    path.write_text(json.dumps(written))
    again = run_cli("run", TINY, "--workload", str(path), "--seed", str(result["seed"]), "--json")
    assert again.code == 0, again.stderr

    def points(document: dict) -> list[tuple]:
        return [(p["op"], p["threads"], p["value"], p["ci_low"], p["ci_high"]) for p in document["points"]]

    assert points(json.loads(again.stdout)) == points(result)


def _keys(value: object) -> set[str]:
    """Every key of every object in a JSON document, except those of name-keyed maps."""
    found: set[str] = set()
    if isinstance(value, dict):
        for key, inner in value.items():
            found.add(key)
            if key not in ("utilization", "pool_occupancy", "parameters", "parts", "services") or isinstance(
                inner, list
            ):
                found |= _keys(inner)
    elif isinstance(value, list):
        for inner in value:
            found |= _keys(inner)
    return found


def test_every_key_of_the_json_output_is_documented(tmp_path: Path) -> None:
    documented = set(re.findall(r"`([A-Za-z_0-9]+)`", (ROOT / "docs" / "json.md").read_text()))
    run = run_cli(
        "run", TINY, "--cmd", "mpirun -np 2 ior -a POSIX -w -r -e -B -t 1m -b 1g -o /mnt/f", "--threads", "2",
        "--replications", "2", "--json",
    )  # fmt: skip
    mdtest = run_cli("run", TINY, "--cmd", "mpirun -np 2 mdtest -n 64 -u -F -d /mnt/x -w 4K -e 4K", "--json")
    show = run_cli("show", str(ROOT / "topologies" / "beegfs-high-capacity.yaml"), "--json")
    parameters = run_cli("reproduce", "--parameters", "--json")
    (tmp_path / "run.json").write_text(run.stdout)
    compare = run_cli("compare", str(tmp_path / "run.json"), str(tmp_path / "run.json"), "--json")
    written, workload_keys = set(), set()
    for result in (run, mdtest, show, parameters, compare):
        assert result.code == 0, result.stderr
        document = json.loads(result.stdout)
        written |= _keys(document)
        if "inputs" in document:  # the workload file format's keys, documented in the README
            workload_keys |= _keys(document["inputs"]["workloads"]) | _keys(document["inputs"]["workload_files"])
    assert {
        "last_task_factor",
        "file_bytes",
        "open_close_seconds",
        "owned_names",
        "fitted_on",
        "replications",
    } <= written
    assert sorted(written - workload_keys - documented) == []


def test_a_read_only_output_file_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The report is renamed over an existing file, which the folder allows even when the file is
    read-only: such a file is refused first, as a shell's > refuses it (the fuzz review of session
    31 found --report replacing a mode-444 file; root may write any file, hence the stand-in)."""
    import sim.report.files as files
    from sim.errors import PfssimError

    target = tmp_path / "r.md"
    target.write_text("old")
    files.check_output_file(target, "--report")  # writable: accepted
    monkeypatch.setattr(files.os, "access", lambda path, mode: Path(path) != target)
    with pytest.raises(PfssimError, match=r"r\.md: --report: the file is not writable"):
        files.check_output_file(target, "--report")


def test_an_unreadable_parts_folder_is_said_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """glob() finds nothing in a folder it cannot read: every part then looked unknown (the fuzz
    review of session 31). The folder is named instead."""
    import sim.config.load as load

    (tmp_path / "parts").mkdir()

    def refused(path: object) -> list[str]:
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(load.os, "listdir", refused)
    catalogue, problems = load.load_catalogue(tmp_path / "parts")
    assert [(p.file, p.message) for p in problems] == [
        (str(tmp_path / "parts"), "cannot read the parts catalogue folder: Permission denied")
    ]


def test_empty_paths_and_several_unknown_systems_are_told() -> None:
    for command in (["show", ""], ["validate", str(ROOT / "topologies" / "beegfs-hdr100.yaml"), " "], ["run", ""]):
        result = run_cli(*command)
        assert result.code == 2 and "an empty path; give a YAML file" in result.stderr, result.stderr
    result = run_cli("reproduce", "nosuch", "other")
    assert result.code == 2 and "unknown systems 'nosuch', 'other'" in result.stderr
    result = run_cli("reproduce", "nosuch")
    assert result.code == 2 and "unknown system 'nosuch';" in result.stderr


def test_precision_outside_zero_to_one_is_refused_before_simulating(monkeypatch: pytest.MonkeyPatch) -> None:
    # --precision is a relative half-width: 0 could never be met and 1 (+-100%) or more means nothing,
    # so both ends are refused, with exit 2 and the option named, before any point is simulated.
    import sim.benchmarks.suite as suite

    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("simulated before checking --precision")

    monkeypatch.setattr(suite, "run_suite", never)
    for bad in ("0", "1", "1.5", "-0.02", "nan"):
        result = run_cli("run", TINY, "--workload", "beegfs-hp-iozone-seq", "--threads", "1", "--precision", bad)
        assert result.code == 2 and result.stdout == "", bad
        assert result.stderr.strip() == "--precision: must be above 0 and below 1 (0.02 is +-2%)", bad


def _no_simulation(monkeypatch: pytest.MonkeyPatch) -> list:
    """Replace run_suite by one that records its arguments and returns a result with no points."""
    import sim.benchmarks.suite as suite
    from sim.benchmarks.result import RunResult

    calls: list = []

    def record(system, workloads, seed, precision, progress=None, workers=2):  # noqa: ANN001, ANN202
        calls.append({"seed": seed, "precision": precision, "workers": workers})
        return RunResult(system, workloads, seed, precision)

    monkeypatch.setattr(suite, "run_suite", record)
    return calls


def test_the_largest_replications_and_thread_counts_are_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    # The limits are inclusive: 31 replications (MAX_REPLICATIONS) reach the simulation; 32 are refused.
    from sim.cli.main import MAX_REPLICATIONS, _thread_list
    from sim.config.quantities import MAX_THREADS

    calls = _no_simulation(monkeypatch)
    args = ("run", TINY, "--workload", "beegfs-hp-iozone-seq", "--threads", "1")
    assert MAX_REPLICATIONS == 31
    result = run_cli(*args, "--replications", "31", "--workers", "1")
    assert result.code == 0, result.stderr
    assert [(c["precision"].replications, c["workers"]) for c in calls] == [(31, 1)]
    assert run_cli(*args, "--replications", "32").code == 2 and len(calls) == 1
    # --threads takes up to MAX_THREADS (65536) and gives the counts back in order, once each.
    assert MAX_THREADS == 65536
    assert _thread_list(str(MAX_THREADS)) == [MAX_THREADS]
    assert _thread_list("16, 1,4") == [1, 4, 16]
    refused = run_cli("run", TINY, "--threads", f"1,{MAX_THREADS + 1}")
    assert refused.code == 2 and "pfssim simulates at most 65536 threads, got 65537" in refused.stderr


def _fake_reproduction(monkeypatch: pytest.MonkeyPatch, ok: bool) -> list:
    """Replace the reproduction by a stand-in whose result is ``ok`` (or not); returns its calls."""
    from types import SimpleNamespace

    import sim.validation.report as report
    import sim.validation.run as run

    calls: list = []

    def reproduce(systems, workers=2, progress=None):  # noqa: ANN001, ANN202
        calls.append(workers)
        return SimpleNamespace(ok=ok, benchmarks=[], unscored=[])

    monkeypatch.setattr(run, "reproduce", reproduce)
    monkeypatch.setattr(report, "to_json", lambda result: {"ok": result.ok})
    return calls


@pytest.mark.parametrize(("ok", "code"), [(True, 0), (False, 1)])
def test_reproduce_exits_1_when_a_check_fails(monkeypatch: pytest.MonkeyPatch, ok: bool, code: int) -> None:
    # The exit-code contract: 0 when every point and shape holds, 1 when any misses (2 is bad input).
    calls = _fake_reproduction(monkeypatch, ok)
    result = run_cli("reproduce", "--json", "--workers", "3")
    assert result.code == code and json.loads(result.stdout) == {"ok": ok}
    assert calls == [3]


def test_reproduce_refuses_fewer_than_one_worker_before_simulating(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _fake_reproduction(monkeypatch, True)
    for bad in ("0", "-1"):
        result = run_cli("reproduce", "--json", "--workers", bad)
        assert result.code == 2 and result.stdout == "", bad
        assert result.stderr.strip() == "--workers: must be at least 1"
    assert calls == []


def test_the_report_format_is_chosen_by_its_suffix_in_any_case(tmp_path: Path) -> None:
    # r.MD and r.HTML are the Markdown and HTML a user means; any other suffix is refused, named.
    from sim.errors import PfssimError
    from sim.validation.document import check_report_path

    for name in ("r.md", "r.MD", "r.html", "r.Html"):
        check_report_path(tmp_path / name)
    with pytest.raises(PfssimError, match=r"r\.txt: --report: the report file must end in \.md or \.html$"):
        check_report_path(tmp_path / "r.txt")


def test_report_tables_mark_misses_and_failed_shapes_and_escape_markdown_pipes() -> None:
    # HTML: a row holding a MISS (a point) or a FAIL (a shape) is highlighted, an ok row is not.
    # Markdown: a '|' inside a cell is escaped and line breaks are folded, or the row's columns shift.
    from sim.validation.document import TableBlock, render_html, render_markdown

    table = TableBlock(("id", "verdict", "why"), (("p1", "ok", ""), ("p2", "MISS", "a|b\nc"), ("s1", "FAIL", "")))
    page = render_html([table])
    rows = [line for line in page.splitlines() if line.startswith("<tr")]
    assert [row.split(">")[0] for row in rows] == ["<tr", '<tr class="miss"', '<tr class="miss"']
    text, files = render_markdown([table])
    assert files == {}
    assert text.splitlines() == [
        "| id | verdict | why |",
        "|---|---|---|",
        "| p1 | ok |  |",
        "| p2 | MISS | a\\|b c |",
        "| s1 | FAIL |  |",
    ]


def test_the_longest_output_name_accepted_can_be_written(tmp_path: Path) -> None:
    # A file is written through a temporary twin ".<name>.XXXXXXXX", 10 bytes longer: the longest
    # name accepted is the file system's limit less 10, and that name is indeed writable; one byte
    # more is refused before simulating, with the arithmetic said.
    from sim.errors import PfssimError
    from sim.report.files import check_output_names, write_atomic

    limit = os.pathconf(tmp_path, "PC_NAME_MAX")
    longest = "p" * (limit - 10 - 4) + ".png"
    check_output_names(tmp_path, [longest], "--plot")
    write_atomic(tmp_path / longest, b"png")
    assert [p.name for p in tmp_path.iterdir()] == [longest]
    over = "p" + longest
    with pytest.raises(PfssimError, match=rf"the file name is too long to write \({limit - 9} bytes; pfssim needs 10"):
        check_output_names(tmp_path, [over], "--plot")


def test_show_counts_files_in_words_from_each_round_figure() -> None:
    # The metadata's file count is written for people: a million is "1 million", not "1e+03 thousand".
    from sim.report.show import _count

    assert [_count(n) for n in (999_999, 1e6, 512e6, 1e9, 3.84e9, 1e12)] == [
        "999,999",
        "1 million",
        "512 million",
        "1 billion",
        "3.84 billion",
        "1 trillion",
    ]


def test_optional_point_keys_appear_only_when_they_apply() -> None:
    # docs/json.md: open_close_seconds for IOzone only with -e or -c; hardware_ceiling for bandwidth
    # points only; off_path only for writes behind a write-back cache that kept up (tiny has no ME4,
    # but its P4600's own buffer keeps up with two threads of 4 KiB writes; 1 MiB writes fill it);
    # file_bytes for mdtest; last_task_factor for IOR; replications above 1. An absent key is absent,
    # not null.
    optional = {
        "open_close_seconds",
        "hardware_ceiling",
        "off_path",
        "file_bytes",
        "last_task_factor",
        "replications",
        "not_converged",
        "full_behind",
    }
    expected = {
        "iozone -i 0 -r 1m -I -s 1g -t 2": {"write": {"hardware_ceiling"}},
        "iozone -i 0 -r 1m -I -e -s 1g -t 2": {"write": {"hardware_ceiling", "open_close_seconds"}},
        "iozone -i 2 -r 4k -I -s 1g -t 2": {"random_read": set(), "random_write": {"off_path"}},
    }
    for command, keys in expected.items():
        result = run_cli("run", TINY, "--cmd", command, "--precision", "0.1", "--json")
        assert result.code == 0, result.stderr
        points = json.loads(result.stdout)["points"]
        assert {p["op"]: set(p) & optional for p in points} == keys, command


def _bandwidth_result(threads: list[int]):  # noqa: ANN202 - a RunResult of hand-made points on tiny
    from sim.benchmarks.cmdline import parse_command
    from sim.benchmarks.driver import DEFAULT_PRECISION, PointResult
    from sim.benchmarks.result import RunResult

    seq = parse_command("iozone -i 0 -r 1m -I -s 1g -t 2 -+m hosts", name="seq")
    rand = parse_command("iozone -i 2 -r 4k -I -s 1g -t 2 -+m hosts", name="rand")
    meta = parse_command("mpirun -np 2 mdtest -n 64 -u -F -d /mnt/x", name="meta")

    def point(workload, op: str, t: int, value: float, unit: str) -> PointResult:  # noqa: ANN001
        return PointResult(
            workload.name, workload.benchmark, op, t, value, value * 0.95, value * 1.05, unit=unit,
            bottleneck="storage.numa0.target0", bottleneck_utilization=0.9, converged=True,
        )  # fmt: skip

    points = [point(seq, "write", t, 1e9 * t, "B/s") for t in threads]
    points += [point(rand, "random_read", t, 1e4 * t, "op/s") for t in threads]
    points += [point(meta, "create", t, 1e4 * t, "op/s") for t in threads]
    system = load_system(TINY)
    return RunResult(
        system, [seq.with_threads(threads), rand.with_threads(threads), meta], 1, DEFAULT_PRECISION, points
    )


def test_plot_draws_the_ceiling_of_the_clients_used_as_steps_and_labels_each_unit() -> None:
    # On tiny's 2 clients, 1 thread uses one client: the ceiling is drawn as a step line changing at
    # the thread counts where the clients used change; each panel's axis is in its benchmark's unit,
    # and the legend sits beside the panel, not over its curves.
    from sim.report.plot import figure

    axes = figure(_bandwidth_result([1, 2])).axes
    steps = [line for line in axes[0].get_lines() if "ceiling" in str(line.get_label())]
    assert [line.get_label() for line in steps] == ["write ceiling of the clients used (pfssim show: all 2)"]
    assert steps[0].get_drawstyle() == "steps-post" and list(steps[0].get_xdata()) == [1, 2]
    assert [ax.get_ylabel() for ax in axes] == ["GB/s", "K IOPS", "K op/s"]
    assert all(ax.get_legend().get_bbox_to_anchor().x0 > ax.get_window_extent().x1 - 1 for ax in axes)


def test_show_adds_the_equal_share_ceiling_only_for_the_side_where_it_is_lower(monkeypatch: pytest.MonkeyPatch) -> None:
    # The "an equal share per target" row explains a lower ceiling under striping; where it equals the
    # max-flow (no shipped topology differs on either side) it would only repeat it. Stand-in: the
    # write side alone differs.
    import io

    from rich.console import Console

    from sim.report.show import render_summary
    from sim.topology.summary import Summary

    monkeypatch.setattr(Summary, "even_differs", lambda self, op: op == "write")
    out = io.StringIO()
    render_summary(summarize(load_system(TINY)), Console(file=out, width=200, color_system=None))
    text = out.getvalue()
    assert "write, an equal share per target" in text
    assert "read, an equal share per target" not in text


def test_the_console_script_exits_with_the_commands_code(monkeypatch: pytest.MonkeyPatch, capsys) -> None:  # noqa: ANN001
    # pfssim starts in sim.cli.entry.run, which must pass main's code on: a usage error is exit 2,
    # not the 0 of a script that simply returned.
    from sim.cli.entry import run

    monkeypatch.setattr(sys, "argv", ["pfssim", "show"])
    with pytest.raises(SystemExit) as stop:
        run()
    assert stop.value.code == 2 and "the following arguments are required: topology" in capsys.readouterr().err


def test_reproduce_targets_and_counts_are_worded_at_their_limits() -> None:
    # A median of exactly 5% and a maximum of exactly 15% meet the targets (<=); the points out of
    # tolerance are counted over every point, the fitted ones too; a summary row says how many were
    # fitted on; a parameter fitted on nothing says so.
    from types import SimpleNamespace

    from sim.validation.report import parameter_rows, summary_row, targets_text

    errors = {"median_abs_error": 0.05, "max_abs_error": 0.15, "error_range": (-0.04, 0.12)}
    summary = SimpleNamespace(**errors, n_points=10, n_fitted=2, n_out_of_tolerance=1)
    shapes = [SimpleNamespace(passed=True), SimpleNamespace(passed=False)]
    repro = SimpleNamespace(summary=summary, failed_shapes=shapes[1:], shapes=shapes)
    assert targets_text(repro) == (
        "Median |error| 5.0% (target <= 5%: met) over the 10 predicted points (the 2 points a parameter was fitted "
        "on left out); max |error| 15.0% (target <= 15%: met) and 1 of 12 points out of tolerance, over every "
        "point; 1 of 2 shape checks failing."
    )
    assert summary_row("all", summary, shapes) == {
        "": "all",
        "median |error|": "5.0%",
        "max |error|": "15.0%",
        "error range": "-4.0% to +12.0%",  # which way the predictions err (a review)
        "points": "10 + 2 fitted",
        "out of tolerance": "1",
        "shapes holding": "1/2",
    }
    rows = {row["name"]: row for row in parameter_rows()}
    assert rows["network_latency_s"]["fitted on"] == "not fitted"


def _run_json(tmp_path: Path, topology: str, name: str, *args: str, command: str = "") -> Path:
    command = command or "iozone -i 0 -r 1m -I -e -s 1g -t 8"
    result = run_cli("run", topology, "--cmd", command, "--threads", "1,8", "--json", *args)
    assert result.code == 0, result.stderr
    path = tmp_path / name
    path.write_text(result.stdout)
    return path


def test_compare_sets_two_runs_side_by_side_and_calls_a_change_only_beyond_intervals_and_precision(
    tmp_path: Path,
) -> None:
    # An architect's what-if review: comparing two runs was done by eye. tiny's drive writes
    # 1.3 GB/s; a copy whose drive writes 2.6 GB/s doubles the 8-thread point (drive-bound).
    import shutil

    shutil.copytree(ROOT / "topologies" / "parts", tmp_path / "parts")
    fast = tmp_path / "tiny-fast.yaml"
    text = Path(TINY).read_text()
    old = "overrides: {capacity: 16 TB}"
    assert old in text
    fast.write_text(text.replace(old, "overrides: {capacity: 16 TB, seq_write: 2.6 GB/s}"))
    base = _run_json(tmp_path, TINY, "base.json")
    other = _run_json(tmp_path, str(fast), "other.json")
    result = run_cli("compare", str(base), str(other), "--json")
    assert result.code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["base"]["topology"] == "tiny" and data["other"]["topology"] == "tiny"  # the copy kept its name
    assert data["base"]["result"] == str(base) and data["resolution"] == 0.02
    # What differs between the topologies: the drive's write rate moves the write ceiling.
    changes = data["topology_changes"]
    assert changes["parts"] == [] and changes["filesystem"] == [] and changes["unread"] == []
    assert changes["ceilings"] == {"write": {"base": pytest.approx(1.3e9), "other": pytest.approx(2.6e9)}}
    (eight,) = [p for p in data["points"] if p["threads"] == 8]
    assert eight["base"]["value"] == pytest.approx(1.3e9, rel=1e-4)
    assert eight["other"]["value"] == pytest.approx(2.6e9, rel=1e-4)
    assert eight["change"] == pytest.approx(1.0, rel=1e-3) and eight["verdict"] == "higher"
    # The table names the topology files where the names agree, and the result files where the
    # files agree too.
    table = " ".join(run_cli("compare", str(base), str(other)).stdout.split())
    assert f"cmd1 (iozone_seq_nn: iozone -i 0 -r 1m -I -e -s 1g -t 8): {fast} against {TINY}" in table
    assert "+100.0% │ higher" in table
    table = run_cli("compare", str(base), str(base)).stdout
    assert table.count("the same") == 2 and "│ higher" not in table and str(base) in table
    assert json.loads(run_cli("compare", str(base), str(base), "--json").stdout)["topology_changes"] is None
    # A topology edited since its run is not read as the run's.
    fast.write_text(fast.read_text() + "\n")
    table = " ".join(run_cli("compare", str(base), str(other)).stdout.split())
    assert f"(not compared: {fast} has changed since {other} was run)" in table
    # Both runs' curves drawn; a plot file pfssim cannot write is refused before anything is read.
    plotted = run_cli("compare", str(base), str(other), "--plot", str(tmp_path / "c.png"))
    assert plotted.code == 0 and (tmp_path / "c.png").read_bytes().startswith(b"\x89PNG")
    refused = run_cli("compare", str(tmp_path / "missing.json"), str(other), "--plot", str(tmp_path / "c.txt"))
    assert refused.code == 2 and "the plot file must end in .png or .svg" in refused.stderr
    # Another seed: a drive-bound point has an interval of almost nothing, so the intervals of two
    # seeds need not overlap; a change within the runs' precision is the same (the session's review
    # found "0.0% higher").
    seed2 = _run_json(tmp_path, TINY, "seed2.json", "--seed", "2")
    data = json.loads(run_cli("compare", str(base), str(seed2), "--json").stdout)
    assert {p["verdict"] for p in data["points"]} == {"same"}
    assert "different seeds (1 and 2)" in " ".join(run_cli("compare", str(base), str(seed2)).stdout.split())


def test_compare_sees_a_what_if_made_in_the_parts_files_and_parts_edited_since(tmp_path: Path) -> None:
    # The review of compare: a copy whose only change was a part's figure in its parts/ folder was
    # reported as one system (topology_changes null), and parts edited after a run were read as its.
    import shutil

    shutil.copytree(ROOT / "topologies" / "parts", tmp_path / "parts")
    drives = tmp_path / "parts" / "drives.yaml"
    old = 'seq_write: "1.3 GB/s"'
    assert old in drives.read_text()
    drives.write_text(drives.read_text().replace(old, 'seq_write: "2.6 GB/s"', 1))
    copy = tmp_path / "tiny.yaml"
    copy.write_text(Path(TINY).read_text())
    base = _run_json(tmp_path, TINY, "base.json")
    other = _run_json(tmp_path, str(copy), "other.json")
    changes = json.loads(run_cli("compare", str(base), str(other), "--json").stdout)["topology_changes"]
    assert changes["parts_files"] == ["drives.yaml"] and changes["parts"] == [] and changes["unread"] == []
    assert changes["ceilings"]["write"] == {"base": pytest.approx(1.3e9), "other": pytest.approx(2.6e9)}
    drives.write_text(drives.read_text() + "\n")
    table = " ".join(run_cli("compare", str(base), str(other)).stdout.split())
    assert f"(not compared: parts file drives.yaml beside {copy} has changed since {other} was run)" in table
    assert "parts file drives.yaml differs" in table


def test_a_comparisons_verdict_needs_the_intervals_apart_and_a_change_beyond_the_precision() -> None:
    from sim.report.compare import Comparison, PointPair, RunFile, Side

    def side(value: float, half: float) -> Side:
        return Side(value, value * (1 - half), value * (1 + half), "x", 1.0, True)

    def run(precision: float) -> RunFile:
        return RunFile(Path("r.json"), "t", "t.yaml", 1, precision, {}, {})

    comparison = Comparison(run(0.02), run(0.01))
    assert comparison.resolution == 0.02
    cases = [
        (side(100, 0.01), side(103, 0.01), "higher"),  # apart, +3% > 2%
        (side(100, 0.01), side(97, 0.01), "lower"),
        (side(100, 0.0), side(101.5, 0.0), "same"),  # apart, but within the precision
        (side(100, 0.02), side(103, 0.02), "same"),  # beyond the precision, but the intervals overlap
    ]
    for base, other, verdict in cases:
        assert comparison.verdict(PointPair("w", "iozone_seq_nn", "write", 1, "B/s", base, other)) == verdict
    zero = PointPair("w", "iozone_seq_nn", "write", 1, "B/s", side(0, 0.0), side(1, 0.0))
    assert zero.base.text("B/s", "iozone_seq_nn") == "0 B/s" and math.isinf(zero.change)
    # A bottleneck moves only to a part the base run held less busy (a what-if review found arrows
    # between eleven HCAs all at 100%, or two controllers of one array).
    busy = {"hca1": 1.0, "hca2": 0.995, "drives": 0.7}

    def named(part: str, utilization: float = 1.0, shares: dict | None = None) -> Side:
        return Side(100, 99, 101, part, utilization, True, (), shares or {})

    def moved(base: Side, other: Side) -> bool:
        return PointPair("w", "iozone_seq_nn", "write", 1, "B/s", base, other).moved

    assert not moved(named("hca1", shares=busy), named("hca2"))  # a tie
    assert moved(named("hca1", shares=busy), named("drives"))
    assert not moved(named("hca1", 0.3, busy), named("drives", 0.4))  # latency-bound both
    # What else may have made a change: other code, parameters, seeds, replications.
    plain = run(0.02)
    assert Comparison(plain, plain).cautions() == []
    other = RunFile(Path("o.json"), "t", "t.yaml", 2, 0.02, {}, {}, ("0.1.0", "abc", "{}"), 3)
    said = " ".join(Comparison(plain, other).cautions())
    assert "different pfssim code" in said and "different seeds (1 and 2)" in said and "means of 1 and of 3" in said


def test_compare_refuses_what_is_not_two_comparable_run_results(tmp_path: Path) -> None:
    base = _run_json(tmp_path, TINY, "base.json")
    data = json.loads(base.read_text())

    def variant(name: str, change) -> Path:  # noqa: ANN001 - a function of the result's object
        copy = json.loads(base.read_text())
        change(copy)
        path = tmp_path / name
        path.write_text(json.dumps(copy).replace("NaN-here", "NaN"))
        return path

    show = tmp_path / "show.json"
    show.write_text(run_cli("show", TINY, "--json").stdout)
    broken = tmp_path / "broken.json"
    broken.write_text('{\n  "points": [\n')
    other = tmp_path / "other.json"
    other.write_text(
        run_cli("run", TINY, "--cmd", "iozone -i 0 -r 1m -I -e -s 1g -t 2", "--threads", "2", "--json").stdout
    )
    # Another line under the same name (cmd1): an IOR run of tiny at 1 and 8 tasks.
    ior = _run_json(tmp_path, TINY, "ior.json", command="mpirun -np 8 ior -a POSIX -w -e -t 1m -b 1g -o /mnt/f")
    cases = [
        (tmp_path / "missing.json", "missing.json: cannot read file: No such file or directory"),
        (broken, "broken.json: not JSON (line 3, column 1"),
        (show, "show.json: not a pfssim run --json result"),
        (variant("old.json", lambda d: d.update(schema_version=2)), "old.json: a result of schema version 2"),
        (other, "other.json: no point in common with"),
        (ior, "ior.json: workload cmd1 is not the one of"),
        (variant("topo.json", lambda d: d["inputs"].update(topology="x")), "topo.json: inputs.topology: expected"),
        (variant("nan.json", lambda d: d["points"][0].update(ci_low="NaN-here")), "nan.json: points[0].ci_low: "),
        (variant("twice.json", lambda d: d["points"].append(d["points"][0])), "twice.json: points[2]: cmd1 write at 1"),
        (variant("seed.json", lambda d: d.update(seed="1")), "seed.json: seed: expected a whole number"),
        (variant("none.json", lambda d: d.update(points=[])), "none.json: points: the run has no points to compare"),
        (
            variant("loose.json", lambda d: d["inputs"]["precision"].update(rel_precision=-1)),
            "loose.json: inputs.precision.rel_precision: expected a fraction between 0 and 1, got -1.0",
        ),
    ]
    assert len(data["points"]) == 2
    for path, message in cases:
        result = run_cli("compare", str(base), str(path))
        assert result.code == 2, (path, result.stdout)
        assert message in result.stderr and "Traceback" not in result.stderr, result.stderr


def test_set_replaces_a_topology_value_for_a_what_if_and_says_so(tmp_path: Path) -> None:
    # Two architects' reviews: a what-if took a copy of the topology and of its parts folder.
    from sim.config.overrides import parse_setting
    from sim.topology.build import load_system

    setting = parse_setting("servers[1].numa[0].raid_groups[0].stripe_unit=128 KiB")
    assert setting.path == ("servers", 1, "numa", 0, "raid_groups", 0, "stripe_unit") and setting.value == "128 KiB"
    assert parse_setting("filesystem.workers={meta: 2, storage: 2}").value == {"meta": 2, "storage": 2}
    system = load_system(TINY, [parse_setting("filesystem.workers.storage=2")])
    assert system.spec.filesystem.workers["storage"] == 2 and system.settings == ("filesystem.workers.storage=2",)
    base = _run_json(tmp_path, TINY, "base.json")
    other = _run_json(tmp_path, TINY, "other.json", "--set", "filesystem.workers.storage=2")
    data = json.loads(other.read_text())
    assert data["inputs"]["topology"]["set"] == ["filesystem.workers.storage=2"]
    assert json.loads(base.read_text())["inputs"]["topology"]["set"] == []
    compared = json.loads(run_cli("compare", str(base), str(other), "--json").stdout)
    assert compared["topology_changes"]["filesystem"] == [{"key": "workers.storage", "base": "8", "other": "2"}]
    table = " ".join(run_cli("compare", str(base), str(other)).stdout.split())
    assert (
        "cmd1 (iozone_seq_nn: iozone -i 0 -r 1m -I -e -s 1g -t 8): tiny --set filesystem.workers.storage=2 against tiny"
        in table
    )
    shown = run_cli("run", TINY, "--cmd", "iozone -i 0 -r 1m -I -e -s 1g -t 2", "--set", "filesystem.workers.storage=2")
    assert "tiny --set filesystem.workers.storage=2: cmd1" in " ".join(shown.stdout.split())
    shown = json.loads(run_cli("show", TINY, "--set", "filesystem.workers.storage=2", "--json").stdout)
    assert shown["set"] == ["filesystem.workers.storage=2"]
    origins = {row["key"]: row["origin"] for row in shown["filesystem_settings"]}
    assert origins["workers.storage"] == "--set" and origins["workers.meta"] == "topology"
    # A change that no count, ceiling or setting shows (a client group's cores) is still said.
    cores = _run_json(tmp_path, TINY, "cores.json", "--set", "clients[0].cores=4")
    changes = json.loads(run_cli("compare", str(base), str(cores), "--json").stdout)["topology_changes"]
    assert changes["spec_differs"] and not changes["parts"] and not changes["filesystem"]
    table = " ".join(run_cli("compare", str(base), str(cores)).stdout.split())
    assert "the systems as simulated differ in what no part count" in table
    # A key given twice is refused; settings that overlap apply in order, the last one's value kept.
    twice = run_cli("show", TINY, "--set", "filesystem.num_targets=0", "--set", "filesystem.num_targets=1")
    assert twice.code == 2 and "--set filesystem.num_targets: is given twice; give it once" in twice.stderr
    later = run_cli(
        "show", TINY, "--set", "filesystem.workers.meta=0", "--set", "filesystem.workers={meta: 4, storage: 8}"
    )
    assert later.code == 0, later.stderr


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ("filesystem.num_targets=0", "--set filesystem.num_targets: must be at least 1, got 0"),
        (
            "filesystem.num_target=2",
            "--set filesystem.num_target: unknown key 'num_target' (did you mean 'num_targets'?",
        ),
        ("filesytem.num_targets=2", "has no filesytem (did you mean 'filesystem'?)"),
        ("servers[9].part=x", "--set servers[9].part=x: "),
        ("enclosures[0].count=4", "has no enclosures"),
        ("nonsense", "--set 'nonsense': give KEY=VALUE"),
        ("filesystem..chunk_size=1 MiB", "cannot read 'filesystem..chunk_size' as a YAML path"),
        ("filesystem.num_targets=", "give a value after '='"),
        # A problem the setting causes elsewhere is said with the settings the file was checked with.
        ("servers[1].numa[0].raid_groups[0].count=2", "(with --set servers[1].numa[0].raid_groups[0].count=2)"),
        (
            "filesystem.workers={meta: 0, storage: 8}",
            "--set filesystem.workers.meta: must be at least 1, got 0 (--set filesystem.workers={meta: 0, storage: 8})",
        ),  # noqa: E501
    ],
)
def test_a_set_that_cannot_be_applied_is_refused_as_the_options(given: str, message: str) -> None:
    topology = TINY if not given.startswith("servers[1]") else str(ROOT / "topologies" / "beegfs-hdr100.yaml")
    if given.startswith("servers[1]"):
        given = given.replace("count=2", "count=7")
        message = message.replace("count=2", "count=7")
    result = run_cli("show", topology, "--set", given)
    assert result.code == 2 and "Traceback" not in result.stderr
    assert message in result.stderr, result.stderr
