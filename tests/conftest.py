"""Shared fixtures: paths of the shipped topologies and a way to run the CLI in-process."""

from __future__ import annotations

import io
import os
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest
from hypothesis import settings

from sim.cli.main import main

# Every Hypothesis test draws the same examples on every run and machine ("seed every statistical
# test"): a failure seen once is seen again, and CI never goes red by chance. No example has a
# deadline: speed is measured by bench/, not asserted, and a loaded machine made a 200 ms deadline
# fail on a layout check that took 205 ms (session 22).
settings.register_profile("pfssim", derandomize=True, deadline=None)
settings.load_profile("pfssim")

ROOT = Path(__file__).resolve().parent.parent
TOPOLOGIES = sorted((ROOT / "topologies").glob("*.yaml"))
UPDATE_GOLDEN = os.environ.get("PFSSIM_UPDATE_GOLDEN") == "1"


def build_model(system, workload, op: str, threads: int, seed: int = 1):  # noqa: ANN001, ANN201 - a model
    """The file-system model of one point, built as ``run_point`` builds it, before anything runs
    (its ``ctx`` holds the environment, platform and system)."""
    import simpy

    from sim.engine.meter import Meter
    from sim.engine.rng import Streams
    from sim.fs.common import RunContext
    from sim.fs.models import model_for
    from sim.fs.platform import Platform

    env = simpy.Environment()
    streams = Streams(seed)
    platform = Platform(env, system, streams)
    return model_for(RunContext(env, system, platform, streams, workload, op, threads, Meter(env, threads)))


def hdr100_with_two_hcas_per_zone(folder: Path) -> Path:
    """beegfs-hdr100 with a second HDR100 HCA on the same switch in every server zone, written to
    ``folder`` (with the parts catalogue beside it): a what-if in which HCAs must be dealt."""
    one = "hcas:\n          - {part: connectx6-hdr100, switch: ib}\n"  # a server zone's (deeper than a client's)
    text = (ROOT / "topologies" / "beegfs-hdr100.yaml").read_text()
    assert text.count(one) == 3, "test fixture out of date"
    (folder / "parts").symlink_to(ROOT / "topologies" / "parts")
    path = folder / "two-hcas.yaml"
    path.write_text(text.replace(one, one + "          - {part: connectx6-hdr100, switch: ib}\n"))
    return path


def beegfs_file_offsets(model, until: float = 0.05) -> list[tuple[int, float]]:  # noqa: ANN001 - a BeeGFS model
    """Run a BeeGFS data model for ``until`` simulated seconds and return every chunk piece it sent
    as (task, offset in the task's file), turned back from (stripe index, chunk-file offset)."""
    sent: list[tuple[int, float]] = []
    original = model._piece

    def traced(t, client, f, index, chunk_offset, length, *rest):  # noqa: ANN001, ANN202 - wraps _piece
        stripe = chunk_offset // model.chunk
        sent.append((t, (stripe * model.num_targets + index) * model.chunk + chunk_offset % model.chunk))
        return original(t, client, f, index, chunk_offset, length, *rest)

    model._piece = traced
    model.start()
    model.ctx.env.run(until=until)
    return sent


class CliResult:
    """Exit code and captured output of one ``pfssim`` invocation."""

    def __init__(self, code: int, stdout: str, stderr: str) -> None:
        self.code = code
        self.stdout = stdout
        self.stderr = stderr


def run_cli(*args: str) -> CliResult:
    """Run ``pfssim ARGS`` in this process and capture everything it prints."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = main(list(args))
        except SystemExit as exc:  # argparse usage errors
            code = int(exc.code or 0)
    return CliResult(code, out.getvalue(), err.getvalue())


@pytest.fixture
def bad_topology(tmp_path: Path):
    """Write a variant of the EDR topology, or with ``of=`` another shipped one (with its own copy of
    the catalogue), and return its path."""
    import shutil

    shutil.copytree(ROOT / "topologies" / "parts", tmp_path / "parts")

    def make(old: str, new: str, name: str = "bad.yaml", of: str = "beegfs-edr-2019") -> Path:
        base = (ROOT / "topologies" / f"{of}.yaml").read_text()
        assert old in base, f"test fixture out of date: {old!r} not in {of}"
        path = tmp_path / name
        path.write_text(base.replace(old, new, 1))
        return path

    return make


def problem_about(file: Path, fragment: str):  # noqa: ANN201 - a sim.errors.Problem
    """The first problem loading the workload ``file`` reports whose message holds ``fragment``
    (the load must fail, and some problem must hold it)."""
    from sim.benchmarks.workloads import load_workload
    from sim.errors import WorkloadError

    with pytest.raises(WorkloadError) as info:
        load_workload(file)
    hits = [p for p in info.value.problems if fragment in p.message]
    assert hits, info.value.problems
    return hits[0]
