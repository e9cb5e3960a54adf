"""A file replaced whole or not at all: written under a temporary name in its own folder, then renamed.

A rename within one folder is atomic (``os.replace``): whoever opens the path finds the previous
file or the new one whole, never a part. A write that fails or is interrupted (an exception,
Ctrl-C) removes its temporary file and leaves the previous one as it was; a process killed outright
(SIGKILL, a power cut) leaves the previous one too, and its temporary file, ``.NAME.XXXXXXXX.part``,
beside it. The new file has the permissions of the one it replaces (a new one: 0o666 less the umask).
"""

import os
import secrets
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO


def temporary_name(path: Path) -> Path:
    """Where the new ``path`` is written: a hidden name in the same folder, unique to this write."""
    return path.with_name(f".{path.name}.{secrets.token_hex(4)}.part")


@contextmanager
def replacing(path: str | os.PathLike) -> Iterator[BinaryIO]:
    """A binary file to write the new ``path`` into; ``path`` is replaced when the block ends without error."""
    path = Path(path)
    temporary = temporary_name(path)
    # created as open() creates a file (0o666 less the umask), never over another one
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        try:
            os.fchmod(descriptor, stat.S_IMODE(os.stat(path).st_mode))  # the file replaced keeps its permissions
        except FileNotFoundError:
            pass
        with os.fdopen(descriptor, "wb") as out:
            yield out
            out.flush()
            os.fsync(out.fileno())  # the data on disk before the name points at it
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    _sync_folder(path.parent)


def _sync_folder(folder: Path) -> None:
    """The rename itself on disk (POSIX: a folder's entries are synced through the folder)."""
    if os.name != "posix":
        return
    descriptor = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
