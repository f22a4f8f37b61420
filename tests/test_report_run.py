"""The ``pfssim run`` tables (sim/report/run.py) on hand-made points: every cell and note a reader
relies on, with values chosen so that each formatting rule shows."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console

from sim.benchmarks.cmdline import parse_command
from sim.benchmarks.driver import DEFAULT_PRECISION, PointResult
from sim.benchmarks.result import RunResult
from sim.benchmarks.workloads import find_workload
from sim.config.workload import StripeOverride
from sim.report.run import bottleneck_text, break_at_dots, format_value, render_run
from sim.topology.build import load_system
from tests.conftest import ROOT

RANDOM = parse_command("iozone -i 2 -r 4k -I -s 1g -t 4 -+m hosts", name="rand")
IOR = parse_command("mpirun -np 4 ior -w -t 1m -b 1g", name="shared")
MDTEST = parse_command("mpirun -np 4 mdtest -d /d -F -C -u -I 16 -b 1 -z 0", name="meta")


def _point(workload, op: str, threads: int, value: float, unit: str, **fields) -> PointResult:  # noqa: ANN001
    settings = {
        "ci_low": value * 0.95,
        "ci_high": value * 1.05,
        "bottleneck": "storage.numa0.target0",
        "bottleneck_utilization": 0.9,
        "converged": True,
    } | fields
    return PointResult(workload.name, workload.benchmark, op, threads, value, unit=unit, **settings)


def _render(points: list[PointResult], workloads: list, width: int = 200, topology: Path | None = None) -> str:  # noqa: ANN001
    system = load_system(topology or ROOT / "tests" / "data" / "tiny.yaml")
    result = RunResult(system, workloads, 7, DEFAULT_PRECISION, points, wall_s=1.25)
    out = io.StringIO()
    render_run(result, Console(file=out, width=width, color_system=None))
    return out.getvalue()


def _row(text: str, *cells: str) -> str:
    """The table line holding every one of ``cells``."""
    rows = [line for line in text.splitlines() if line.startswith("│") and all(cell in line for cell in cells)]
    assert len(rows) == 1, f"expected one row with {cells}:\n{text}"
    return rows[0]


def test_each_benchmark_shows_its_own_unit() -> None:
    assert format_value(12.5e9, "B/s", "iozone_seq_nn") == "12.5 GB/s"
    assert format_value(3.6e6, "op/s", "iozone_random_nn") == "3.6 M IOPS"
    assert format_value(232.2e3, "op/s", "mdtest") == "232.2 K op/s"


@pytest.mark.parametrize(
    ("utilization", "shown"),
    [(0.3, "latency; busiest storage.hca0"), (0.9, "storage.hca0"), (0.5, "storage.hca0")],
)
def test_a_point_below_half_busy_is_latency_bound(utilization: float, shown: str) -> None:
    assert bottleneck_text("storage.hca0", utilization) == shown
    assert bottleneck_text("", 0.1) == "latency"


def test_the_tables_cells_and_notes() -> None:
    points = [
        _point(RANDOM, "random_read", 4, 20_000.0, "op/s", ci_low=19_000.0, ci_high=21_000.0),
        _point(RANDOM, "random_write", 4, 10_000.0, "op/s", bottleneck_utilization=0.3, converged=False),
        _point(IOR, "write", 4, 2.0e9, "B/s", last_task_factor=0.99),
        _point(MDTEST, "create", 4, 5_000.0, "op/s"),
    ]
    text = _render(points, [RANDOM, IOR, MDTEST])
    # Values, with the interval as a half width relative to the value.
    assert "20 K IOPS" in _row(text, "random_read")
    assert "± 5.0%" in _row(text, "random_read")
    assert "5 K op/s" in _row(text, "create")
    # Latency-bound and non-converged marks go on their own rows only.
    assert "latency; busiest storage.numa0.target0" in _row(text, "random_write")
    assert "30%" in _row(text, "random_write")
    assert "± 5.0% *" in _row(text, "random_write")
    assert "latency" not in _row(text, "random_read")
    assert "*" not in _row(text, "random_read")
    # The last-task column exists for IOR only, signed.
    assert "-1.0%" in _row(text, "│ write")
    assert text.count("last task:") == 1
    # The notes explain what the rows use, and the footer counts the points.
    assert "latency-bound: no part is half busy" in text
    assert "* not converged, rand random_write at 4: its interval is wider than the requested precision" in text
    assert text.rstrip().endswith("seed 7; 4 points in 1.2 s")


def test_a_pool_as_full_behind_the_named_one_gets_a_note() -> None:
    pool = "client0->storage.numa0.storage0"
    points = [
        _point(RANDOM, "random_read", 4, 20_000.0, "op/s", bottleneck=pool, bottleneck_utilization=1.0,
               pool_occupancy={pool: 1.0}, full_behind=("storage.numa0.target0.workers",)),
    ]  # fmt: skip
    text = " ".join(_render(points, [RANDOM]).split())
    assert "as full behind a named pool: storage.numa0.target0.workers behind client0->storage.numa0.storage0" in text
    assert "raise both" in text


def test_a_beegfs_shared_file_says_the_stripe_it_takes() -> None:
    # IOR N-1 puts one file on one stripe: with the topology's own stripe of few targets, that is the
    # rate of those targets (a newcomer's README example ran 64 tasks on 1 of 32 at 1.8 GB/s).
    text = " ".join(_render([_point(IOR, "write", 4, 2.0e9, "B/s")], [IOR]).split())
    note = "shared's one shared file is striped over the topology's num_targets: 1 of 1 targets, in 2 MiB chunks"
    assert note in text
    # A file per task, or a workload that sets its own num_targets, gets no such note.
    assert "topology's num_targets:" not in _render([_point(RANDOM, "random_read", 4, 1e4, "op/s")], [RANDOM])
    # One that sets only its own chunk size keeps the topology's count, and is told it (the review
    # of session 36), with its own chunks.
    chunked = IOR.model_copy(update={"stripe": StripeOverride(chunk_size="1 MiB")})
    text = " ".join(_render([_point(chunked, "write", 4, 2.0e9, "B/s")], [chunked]).split())
    assert "shared file is striped over the topology's num_targets: 1 of 1 targets, in 1 MiB chunks" in text


def test_a_command_line_swept_over_other_thread_counts_says_which() -> None:
    line = parse_command("iozone -i 2 -r 4k -I -s 1g -t 4 -+m hosts", name="cmd1")
    swept = line.with_threads([1, 16])
    assert "(iozone -i 2 -r 4k -I -s 1g -t 4 -+m hosts, at 1, 16 threads)" in " ".join(_render([], [swept]).split())
    assert "-t 4 -+m hosts)" in " ".join(_render([], [line]).split())  # run at its own -t: the line says it
    assert "-+m hosts, at 1 thread)" in " ".join(_render([], [line.with_threads([1])]).split())  # not "1 threads"


def test_notes_appear_only_when_a_point_needs_them() -> None:
    text = _render([_point(RANDOM, "random_read", 4, 20_000.0, "op/s")], [RANDOM])
    assert "latency-bound" not in text
    assert "interval is wider" not in text
    assert "last task" not in text
    assert "± 0.0%:" not in text
    assert "<group>.drives" not in text
    assert "as full behind" not in text
    assert text.rstrip().endswith("seed 7; 1 point in 1.2 s")


def test_a_raid_groups_drives_named_as_the_bottleneck_are_explained() -> None:
    point = _point(RANDOM, "random_read", 4, 20_000.0, "op/s", bottleneck="storage.numa0.target0.drives")
    text = _render([point], [RANDOM])
    assert "storage.numa0.target0.drives" in _row(text, "│ random_read")
    assert "<group>.drives: the drives of a RAID group (a target or virtual disk), by their mean utilisation" in text
    assert "hard disks busy all the time" not in text  # tiny.yaml's targets are NVMe drives
    # On hard disks, a deeper queue serves more per busy second: more requests in flight per
    # target can raise a drive-bound rate (an architect's review: PixStor reads 17.5, 23.1 and
    # 26.2 GB/s at 4, 16 and 64 NSD queue threads, drives named at 94-100% in each).
    hdd = _render([point], [RANDOM], topology=ROOT / "topologies" / "pixstor-large.yaml")
    assert "hard disks busy all the time still serve more per busy second with more commands queued" in hdd


def test_a_full_pool_named_as_the_bottleneck_is_explained() -> None:
    pool = "client0->storage.numa0.storage0"
    full = _point(RANDOM, "random_read", 4, 9_000.0, "op/s", bottleneck=pool, pool_occupancy={pool: 0.97})
    text = _render([full], [RANDOM])
    assert "a pool as bottleneck (a->b: a client's connections to a service" in text
    assert "more slots would raise the rate" in text
    # A part named is not a pool, and gets no such note.
    assert "a pool as bottleneck" not in _render([_point(RANDOM, "random_read", 4, 9_000.0, "op/s")], [RANDOM])


def test_drives_busier_than_the_bottleneck_off_the_request_path_are_explained() -> None:
    # A write cache that keeps up: its drives destage at 92% while the controller path, at 79%, is
    # what the writes wait for. The group is shown rather than its drives; a group less busy than
    # the bottleneck is not mentioned.
    off = ("vd0.drive0", "vd0.drive1", "vd0.drives", "vd1.drives")
    utilization = {"ctrlA.write": 0.79, "vd0.drive0": 0.92, "vd0.drive1": 0.92, "vd0.drives": 0.92, "vd1.drives": 0.4}
    point = _point(
        IOR,
        "write",
        4,
        2.1e9,
        "B/s",
        bottleneck="ctrlA.write",
        bottleneck_utilization=0.79,
        utilization=utilization,
        off_path=off,
    )
    text = _render([point], [IOR])
    assert "busier than the bottleneck but not named: vd0.drives: drives behind a write-back cache" in text
    assert "vd1.drives" not in text and "vd0.drive0" not in text
    calm = _point(IOR, "write", 4, 2.1e9, "B/s", utilization={"vd0.drives": 0.5}, off_path=("vd0.drives",))
    assert "busier than the bottleneck" not in _render([calm], [IOR])


def test_a_workloads_own_striping_over_the_topologys_is_said() -> None:
    # A tuner who changes the topology's chunk_size must see that this workload keeps its own:
    # beegfs-hc-iozone-seq sets 1 target of 1 MiB chunks (beegfs-ctl --setpattern in its document);
    # tiny's file system has 1 target of 2 MiB chunks, so only the chunk size is said.
    seq = find_workload("beegfs-hc-iozone-seq")
    text = " ".join(_render([_point(seq, "write", 8, 5.5e9, "B/s")], [seq]).split())
    assert (
        "beegfs-hc-iozone-seq runs with its own chunk_size 1 MiB (the topology's 2 MiB), as its benchmark "
        "was run (the workload file's stripe:)"
    ) in text
    assert "num_targets" not in text
    assert "runs with its own" not in _render([_point(IOR, "write", 4, 2.0e9, "B/s")], [IOR])


def test_a_stripe_wider_than_the_system_says_how_many_targets_it_gets() -> None:
    # BeeGFS gives a file the targets there are: a stripe of 32 on tiny's targets uses them all
    # (an architect's audit: "num_targets 32 (the topology's 3)" on a system of 21 targets).
    seq = parse_command("iozone -i 0 -r 1m -I -e -s 1g -t 2").model_copy(
        update={"stripe": StripeOverride(num_targets=32)}
    )
    targets = len(load_system(ROOT / "tests" / "data" / "tiny.yaml").storage_targets)
    assert targets < 32
    text = " ".join(_render([_point(seq, "write", 2, 5.5e9, "B/s")], [seq]).split())
    assert targets == 1
    assert "num_targets 32, 1 used: tiny has 1 target (the topology's 1)" in text


def test_a_shared_file_striped_over_fewer_targets_than_the_system_has_says_so() -> None:
    # An architect's what-if: twice the ME4 arrays gave beegfs-high-capacity's IOR N-1 the same
    # figures, its workload's stripe of 32 targets leaving the 32 new ones idle, and the note only
    # said "num_targets 32 (the topology's 1)".
    ior = find_workload("beegfs-hc-ior-n1")
    assert ior.shared_file and ior.stripe is not None and ior.stripe.num_targets == 32
    system = ROOT / "topologies" / "beegfs-high-capacity.yaml"
    text = " ".join(_render([_point(ior, "write", 16, 20e9, "B/s")], [ior], topology=system).split())
    assert "num_targets 32 (the topology's" in text and "of beegfs-high-capacity's" not in text  # all 32 used
    fewer = ior.model_copy(update={"stripe": StripeOverride(num_targets=8, chunk_size=ior.stripe.chunk_size)})
    text = " ".join(_render([_point(fewer, "write", 16, 20e9, "B/s")], [fewer], topology=system).split())
    assert "num_targets 8, its one shared file on 8 of beegfs-high-capacity's 32 targets (the topology's" in text


def test_a_zero_width_interval_is_explained() -> None:
    # A point at a link's or a controller's fixed rate moves the same amount every batch.
    fixed = _point(IOR, "write", 4, 2.0e9, "B/s", ci_low=2.0e9, ci_high=2.0e9, bottleneck_utilization=1.0)
    text = _render([fixed], [IOR])
    assert "± 0.0%" in _row(text, "│ write")
    assert "± 0.0%: the bottleneck is busy all the time at a fixed rate" in text


def test_a_zero_rate_point_is_shown_not_a_crash() -> None:
    text = _render([_point(RANDOM, "random_read", 4, 0.0, "op/s", ci_low=0.0, ci_high=0.0)], [RANDOM])
    assert "± inf%" in _row(text, "random_read")


@pytest.mark.parametrize(
    ("width", "lines"),
    [
        (60, ["latency; busiest storage3.numa1.target2.drive11"]),
        (40, ["latency; busiest", "storage3.numa1.target2.drive11"]),
        (23, ["latency; busiest", "storage3.numa1.target2.", "drive11"]),
        (10, ["latency;", "busiest", "storage3.", "numa1.", "target2.", "drive11"]),
        (3, ["latency;", "busiest", "storage3.", "numa1.", "target2.", "drive11"]),
    ],
)
def test_long_names_break_at_spaces_then_after_dots(width: int, lines: list[str]) -> None:
    assert break_at_dots("latency; busiest storage3.numa1.target2.drive11", width).split("\n") == lines


def test_a_narrow_table_breaks_part_names_between_their_parts() -> None:
    name = "storage3.numa1.nvme-raid2.drive11"
    points = [_point(MDTEST, "create", 1024, 157_000.0, "op/s", bottleneck=name, last_task_factor=0.97)]
    wide = _render(points, [MDTEST])
    assert name in _row(wide, "create")
    narrow = _render(points, [MDTEST], width=80)
    cells = [line.split("│")[5].strip() for line in narrow.splitlines() if line.startswith("│")]
    assert "".join(cells) == name  # every piece of the name, in order, none cut mid-word
    assert all(cell.endswith(".") for cell in cells[:-1]) and len(cells) > 1
    assert max(len(line) for line in narrow.splitlines()) <= 80


def test_a_one_client_run_says_so_in_its_title() -> None:
    local = parse_command("iozone -i 2 -r 4k -I -s 1g -t 4", name="local")
    text = _render([_point(local, "random_read", 4, 20_000.0, "op/s")], [local])
    assert "local, iozone_random_nn, every thread on " in text
    spread = _render([_point(RANDOM, "random_read", 4, 20_000.0, "op/s")], [RANDOM])
    assert "every thread on" not in spread
    clients = len(load_system(ROOT / "tests" / "data" / "tiny.yaml").clients)
    assert clients > 1 and f", dealt round robin over {clients} clients" in spread


def test_ior_opens_and_closes_get_a_column_once_they_show() -> None:
    # 16 tasks x 1 MiB at 10 GB/s take 1.68 ms; 1 ms of opens and closes is 37.3% of 2.68 ms. At
    # 0.1 us they are 0.006%, under the 0.5% a column needs.
    ior = parse_command("mpirun -np 16 ior -w -B -F -t 1m -b 1m", name="small")
    total = 16 * 2**20

    def point(seconds: float) -> PointResult:
        rate = total / (total / 10e9 + seconds)
        return _point(ior, "write", 16, rate, "B/s", work_per_task=2**20, open_close_s=seconds, last_task_factor=1.0)

    shown = _render([point(1e-3)], [ior])
    assert "open/close" in shown and "-37.3%" in _row(shown, "write", "16")
    assert "first open to the last close" in shown
    assert "open/close" not in _render([point(1e-7)], [ior])


def test_a_last_task_slower_or_faster_than_the_aggregate_is_signed() -> None:
    # The column is the change the benchmark's arithmetic makes: +2.0% for a factor of 1.02, -3.0% for
    # 0.97; a sign always, so that a gain is not read as a loss.
    # A factor that rounds to no change is 0.0%, without a sign (it read -0.0%).
    points = [
        _point(IOR, "write", 4, 2.0e9, "B/s", last_task_factor=1.02),
        _point(IOR, "write", 8, 2.0e9, "B/s", last_task_factor=0.97),
        _point(IOR, "write", 16, 2.0e9, "B/s", last_task_factor=0.99996),
    ]
    text = _render(points, [IOR])
    assert "+2.0%" in _row(text, "│ write", "│       4 │")
    assert "-3.0%" in _row(text, "│ write", "│       8 │")
    row = _row(text, "│ write", "│      16 │")
    assert "0.0%" in row and "-0.0%" not in row and "+0.0%" not in row


@pytest.mark.parametrize(("replications", "said"), [(2, "1 degree of freedom"), (3, "2 degrees of freedom")])
def test_replications_are_said_with_their_degrees_of_freedom(replications: int, said: str) -> None:
    # N independent runs give a Student t interval of N - 1 degrees of freedom.
    text = " ".join(
        _render([_point(RANDOM, "random_read", 4, 20_000.0, "op/s", replications=replications)], [RANDOM]).split()
    )
    assert (
        f"each point is the mean of {replications} independent runs (seeds derived from seed 7: another file "
        f"layout, other start points and drive phases); its interval comes from their spread (Student t, {said})"
    ) in text


def test_the_zero_width_note_is_for_intervals_shown_as_zero_only() -> None:
    # +-0.06% is shown as "± 0.1%": it is not a fixed rate, and gets no "± 0.0%" note.
    narrow = _point(IOR, "write", 4, 2.0e9, "B/s", ci_low=2.0e9 * 0.9994, ci_high=2.0e9 * 1.0006)
    text = _render([narrow], [IOR])
    assert "± 0.1%" in _row(text, "│ write")
    assert "± 0.0%" not in text


def test_a_one_client_run_names_the_first_client() -> None:
    # A workload run on one client (no -+m hosts file) runs every thread on the system's first client.
    local = parse_command("iozone -i 2 -r 4k -I -s 1g -t 4", name="local")
    text = " ".join(_render([_point(local, "random_read", 4, 20_000.0, "op/s")], [local]).split())
    assert "tiny: local, iozone_random_nn, every thread on client0" in text


def _busier(names: list[str]) -> str:
    point = _point(
        IOR, "write", 4, 2.1e9, "B/s", bottleneck="ctrlA.write", bottleneck_utilization=0.79,
        utilization={"ctrlA.write": 0.79} | {name: 0.92 for name in names}, off_path=tuple(names),
    )  # fmt: skip
    return " ".join(_render([point], [IOR]).split())


def test_parts_busier_than_the_bottleneck_are_listed_up_to_three_then_counted() -> None:
    # Three names are listed in full; a fourth is counted ("and 1 more"), in name order.
    three = _busier(["vd2.drives", "vd0.drives", "vd1.drives"])
    assert "busier than the bottleneck but not named: vd0.drives, vd1.drives, vd2.drives: drives behind" in three
    four = _busier(["vd3.drives", "vd2.drives", "vd0.drives", "vd1.drives"])
    assert "not named: vd0.drives, vd1.drives, vd2.drives and 1 more: drives behind" in four


def test_an_open_close_share_of_exactly_half_a_percent_gets_its_column() -> None:
    # 5 ms of opens and closes against 1 s of transfer (1 thread moving 1 B at 1 B/s) is 0.5%, the
    # share from which the column shows.
    point = _point(IOR, "write", 1, 1.0, "B/s", work_per_task=1.0, open_close_s=0.005)
    assert point.open_close_share == 0.005
    text = _render([point], [IOR])
    assert "open/close" in text and "-0.5%" in _row(text, "│ write")


def test_a_panel_whose_values_span_more_than_a_hundredfold_is_drawn_on_a_log_axis() -> None:
    # Random IOPS from one thread to 1024 (8.6K to 3.5M) sat in the bottom seventh of a linear axis
    # below 64 threads (a review of the plots); bandwidth from 3 to 136 GB/s stays linear from zero,
    # and mdtest is always logarithmic.
    from sim.report.plot import log_values

    def curve(benchmark: str, values: list[float]) -> list[PointResult]:
        return [PointResult("w", benchmark, "x", 2**i, v, v, v, "op/s", "part", 0.9) for i, v in enumerate(values)]

    assert log_values([curve("iozone_random_nn", [8.6e3, 3.5e6])])
    assert not log_values([curve("iozone_seq_nn", [3e9, 136e9])])
    assert log_values([curve("mdtest", [5e3, 3e5])]) and log_values([curve("mdtest", [1e5, 1.1e5])])
    assert not log_values([curve("iozone_random_nn", [0.0, 5.0])])  # no positive pair to span


def test_an_interval_is_shown_rounded_up_so_a_wide_one_never_reads_as_within_the_precision() -> None:
    # +-2.025% (not converged, task_spread) read "± 2.0% *" beside the 2% target: a newcomer's review.
    from sim.report.run import interval_text

    assert interval_text(100.0, 97.975, 102.025) == "± 2.1%"
    assert interval_text(100.0, 98.0, 102.0) == "± 2.0%"  # exactly the precision stays
    assert interval_text(3e9, 3e9 * (1 - 0.0166), 3e9 * (1 + 0.0166)) == "± 1.7%"
    assert interval_text(100.0, 99.99, 100.01) == "± 0.0%"  # below 0.05%: as before
    assert interval_text(100.0, 100.0, 100.0) == "± 0.0%"


def test_a_latency_bound_points_utilisation_is_never_shown_as_half() -> None:
    # 0.498 showed as "50%" beside "latency-bound: no part is half busy" (a newcomer's review).
    from sim.report.run import utilization_text

    assert [utilization_text(u) for u in (0.498, 0.5, 0.304, 0.996, 1.0)] == ["49%", "50%", "30%", "100%", "100%"]


def test_a_copy_that_kept_its_originals_name_is_told_apart_by_its_file(tmp_path: Path) -> None:
    # An architect's what-if: a copy of beegfs-hdr100 that kept `name: beegfs-hdr100` printed tables
    # that read exactly as the original's.
    import shutil

    from sim.report.run import system_label

    shutil.copytree(ROOT / "topologies" / "parts", tmp_path / "parts")
    copy = tmp_path / "more-links.yaml"
    copy.write_text((ROOT / "tests" / "data" / "tiny.yaml").read_text())
    seq = parse_command("iozone -i 0 -r 1m -I -e -s 1g -t 2")
    text = _render([_point(seq, "write", 2, 2.0e9, "B/s")], [seq], topology=copy)
    assert "tiny (more-links.yaml): cmd, iozone_seq_nn" in " ".join(text.split())
    assert system_label(load_system(ROOT / "tests" / "data" / "tiny.yaml")) == "tiny"


def test_a_bottleneck_below_90_percent_says_how_much_room_the_utilisation_law_leaves() -> None:
    # A lecturer's review: one stream's drive named at 65%, and more threads gave +54%.
    seq = parse_command("iozone -i 0 -r 1m -I -e -s 1g -t 4")
    points = [
        _point(seq, "write", 1, 1.0e9, "B/s", bottleneck_utilization=0.65),
        _point(seq, "write", 4, 1.3e9, "B/s", bottleneck_utilization=1.0),
    ]
    text = " ".join(_render(points, [seq]).split())
    assert "holds its point only in part" in text and "(at 65%, up to +53%)" in text
    busy = " ".join(_render([_point(seq, "write", 4, 1.3e9, "B/s", bottleneck_utilization=0.95)], [seq]).split())
    assert "only in part" not in busy
