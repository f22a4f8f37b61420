"""The CLI is a thin adapter: its JSON equals the library's result; exit codes follow the contract."""

from __future__ import annotations

import json

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


def test_show_json_is_the_library_result() -> None:
    path = ROOT / "topologies" / "pixstor-large.yaml"
    result = run_cli("show", str(path), "--json")
    assert json.loads(result.stdout) == summarize(load_system(path)).to_json()


def test_show_table_names_the_bottleneck() -> None:
    result = run_cli("show", str(ROOT / "topologies" / "pixstor-large.yaml"))
    assert result.code == 0
    assert "controller" in result.stdout and "GB/s" in result.stdout


def test_validate_all_shipped() -> None:
    result = run_cli("validate", *map(str, TOPOLOGIES))
    assert result.code == 0
    assert result.stdout.count(": ok") == len(TOPOLOGIES)


def test_usage_error_is_exit_2() -> None:
    assert run_cli("show").code == 2
    assert run_cli("frobnicate").code == 2
