"""The one rooted exception hierarchy of pfssim.

Every problem a user can cause is a :class:`PfssimError`; the CLI turns them into exit code 2 with
messages that name the file, the line and the YAML path. Anything else is a bug in pfssim.
"""

from __future__ import annotations

from dataclasses import dataclass, field


class PfssimError(Exception):
    """Base of every error pfssim reports to a user."""


@dataclass(frozen=True)
class Problem:
    """One thing wrong with an input file, located as precisely as the input allows."""

    file: str
    line: int | None
    path: str
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line is not None else self.file
        # One problem, one line: a line break or control character in a name the user gave (a YAML
        # key, a file name) is shown escaped, so it cannot start what reads as another report.
        path, message = _one_line(self.path), _one_line(self.message)
        if not where:
            return f"{path}: {message}" if path else message
        return f"{_one_line(where)} {path}: {message}" if path else f"{_one_line(where)}: {message}"


def _one_line(text: str) -> str:
    """``text`` with its control, format and line-separator characters escaped (``\\n``, ``\\u2028``)."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


@dataclass
class ConfigError(PfssimError):
    """One or more problems in user-supplied YAML (topology, parts catalogue or workload)."""

    problems: list[Problem] = field(default_factory=list)

    def __post_init__(self) -> None:
        super().__init__(str(self))

    def __str__(self) -> str:
        return "\n".join(str(p) for p in self.problems)


class TopologyError(ConfigError):
    """A topology that parses but describes an impossible or unreachable system."""


class WorkloadError(ConfigError):
    """A workload or benchmark command line pfssim cannot run."""
