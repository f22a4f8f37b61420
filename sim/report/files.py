"""Output files: paths given on the command line, checked before anything is simulated, and
written whole or not at all.

A run can take minutes; a plot or report path that cannot be written must fail at once with exit 2,
not after the simulation with a traceback. Missing folders are created when the file is written,
so the check is that the nearest existing one is a folder this process may write into.
"""

from __future__ import annotations

import contextlib
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
        raise PfssimError(
            f"{path}: {option}: cannot write in the folder {existing} (a test file could not be made there: "
            f"{exc.strerror or exc})"
        ) from None


# What :func:`write_all` adds to a file's name for its temporary twin: a dot before, and a dot
# and mkstemp's eight random characters after.
_TEMPORARY_EXTRA = len(".") + len(".") + 8


def _name_max(folder: Path) -> int:
    existing = folder
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    try:
        return os.pathconf(existing, "PC_NAME_MAX")
    except (OSError, ValueError):
        return 255  # the common limit (ext4, XFS, tmpfs)


def check_output_names(folder: Path, names: list[str], option: str) -> None:
    """Refuse file names in ``folder`` that cannot be written: a folder of the same name in the
    way, or a name too long for the file system once :func:`write_all` makes its temporary twin."""
    limit = _name_max(folder.absolute())
    for name in names:
        path = folder / name
        if len(os.fsencode(name)) + _TEMPORARY_EXTRA > limit:
            raise PfssimError(
                f"{path}: {option}: the file name is too long to write ({len(os.fsencode(name))} bytes; pfssim "
                f"needs {_TEMPORARY_EXTRA} more than the name for its temporary file, within {limit})"
            )
        if path.is_dir():
            raise PfssimError(f"{path}: {option}: a folder of this name is in the way")


def check_output_file(path: Path, option: str) -> None:
    """Refuse a file path that is a folder, whose name is too long to write, or whose folder cannot
    be written or made."""
    check_output_names(path.parent, [path.name], option)  # first: a name too long fails is_dir()
    if path.is_dir():
        raise PfssimError(f"{path}: {option}: this is a folder; give a file name")
    # An existing file is replaced by renaming a new one over it, which its folder's permissions
    # allow even when the file itself is read-only: refuse it, as a shell's > would.
    if path.exists() and not os.access(path, os.W_OK):
        raise PfssimError(f"{path}: {option}: the file is not writable")
    _creatable(path.absolute().parent, path, option)


def check_output_folder(path: Path, option: str) -> None:
    """Refuse a folder path that is a file, or that cannot be written or made."""
    if path.exists() and not path.is_dir():
        raise PfssimError(f"{path}: {option} needs a folder, and this is a file")
    _creatable(path.absolute(), path, option)


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` whole or not at all (see :func:`write_all`)."""
    write_all({path: data})


def write_all(files: dict[Path, bytes]) -> None:
    """Write several files all or none: each goes to a temporary file in its folder first, and only
    when every one is written are they renamed into place (over a link's target, for a link). On
    any failure (a full disk, a folder where a file should go) nothing is left behind, not even the
    folders this call made, and the error is a :class:`PfssimError` naming the file."""
    # A symbolic link is written through: its target is replaced and the link stays a link (the
    # temporary file renamed over the link itself would replace the link with a plain file).
    files = {Path(os.path.realpath(path)) if path.is_symlink() else path: data for path, data in files.items()}
    made: list[Path] = []  # folders created here, outermost first
    temporaries: dict[Path, str] = {}
    complete = False
    try:
        for path in files:
            if path.is_dir():
                raise PfssimError(f"{path}: cannot write: a folder of this name is in the way")
        for path, data in files.items():
            missing = [p for p in (path.parent, *path.parent.parents) if not p.exists()]
            for folder in reversed(missing):
                try:
                    folder.mkdir()
                except FileExistsError:  # made meanwhile by another process: it is not ours to remove
                    continue
                made.append(folder)
            fd, temporaries[path] = tempfile.mkstemp(prefix=f".{path.name}.", dir=str(path.parent))
            try:
                with os.fdopen(fd, "wb") as handle:
                    handle.write(data)
            except OSError as error:
                raise PfssimError(f"{path}: cannot write: {error.strerror or error}") from None
            # mkstemp makes the file private: keep the mode of the file replaced, or give a new one
            # the usual permissions (those of the umask).
            umask = os.umask(0)
            os.umask(umask)
            mode = path.stat().st_mode & 0o7777 if path.is_file() else 0o666 & ~umask
            os.chmod(temporaries[path], mode)
        for path, temporary in list(temporaries.items()):
            os.replace(temporary, path)
            del temporaries[path]
        complete = True
    except OSError as error:
        name = error.filename or next(iter(files), "")
        raise PfssimError(f"{name}: cannot write: {error.strerror or error}") from None
    finally:
        for temporary in temporaries.values():
            if os.path.exists(temporary):
                os.unlink(temporary)
        if not complete:  # failed: remove the folders made for the files too
            for folder in reversed(made):
                with contextlib.suppress(OSError):  # not empty: something else put a file there
                    folder.rmdir()
