"""Output paths given on the command line, checked before anything is simulated.

A run can take minutes; a plot or report path that cannot be written must fail at once with exit 2,
not after the simulation with a traceback. Missing folders are created when the file is written,
so the check is that the nearest existing one is a folder this process may write into.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from sim.errors import PfssimError


def _creatable(folder: Path, path: Path, option: str) -> None:
    existing = folder
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise PfssimError(f"{path}: {option}: {existing} is a file, so the folder {folder} cannot be made")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise PfssimError(f"{path}: {option}: the folder {existing} is not writable")
    try:  # access() says yes to root everywhere, even on /proc or a read-only export: try it
        with tempfile.TemporaryFile(dir=existing):
            pass
    except OSError as exc:
        raise PfssimError(f"{path}: {option}: cannot write in the folder {existing}: {exc.strerror or exc}") from None


def check_output_file(path: Path, option: str) -> None:
    """Refuse a file path that is a folder, or whose folder cannot be written or made."""
    if path.is_dir():
        raise PfssimError(f"{path}: {option}: this is a folder; give a file name")
    _creatable(path.absolute().parent, path, option)


def check_output_folder(path: Path, option: str) -> None:
    """Refuse a folder path that is a file, or that cannot be written or made."""
    if path.exists() and not path.is_dir():
        raise PfssimError(f"{path}: {option} needs a folder, and this is a file")
    _creatable(path.absolute(), path, option)
