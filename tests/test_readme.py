"""The README is the newcomer's contract: its two commands are the ones CI and users run."""

from __future__ import annotations

import re

from tests.conftest import ROOT


def _commands() -> list[str]:
    readme = (ROOT / "README.md").read_text()
    quick = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```\n(.+?)\n```", quick)


def test_quick_start_has_exactly_two_commands() -> None:
    commands = _commands()
    assert len(commands) == 2
    assert "pfssim" in commands[0] and "pytest" in commands[1]


def test_ci_runs_the_readme_test_command_verbatim() -> None:
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert _commands()[1] in ci


def test_readme_main_command_uses_a_shipped_topology() -> None:
    target = _commands()[0].rsplit(" ", 1)[-1]
    assert (ROOT / target).is_file()
