"""Where a file a user names is written: a regular file replaced whole, anything else written straight.

- ``/dev/stdout``, ``/dev/stderr``, ``/dev/fd/N`` and ``/proc/self/fd/N`` are the descriptor the
  process already holds: written through it, as a shell writes ``>&N`` (at its offset, in its mode:
  ``>> file`` appends, a pipe is a pipe).
- A device, a FIFO or a socket (the path, or where its symlinks lead) is opened and written as it is:
  never replaced, never created, never truncated (``/dev/full`` gives its error and stays a device).
- A regular file, or a path where none is yet, is replaced whole or not at all (farm.report.atomicfile),
  at the end of its symlinks: the link stays a link and its target gets the new file, with the target's
  permissions.
"""

import os
import re
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from typing import BinaryIO

from farm.report.atomicfile import replacing

_STREAMS = {"/dev/stdin": 0, "/dev/stdout": 1, "/dev/stderr": 2}
_DESCRIPTOR = re.compile(r"/(?:dev/fd|proc/self/fd)/(\d+)")


def descriptor(path: str | os.PathLike) -> int | None:
    """The descriptor ``path`` names (``/dev/stdout``: 1), or None for a path of the file system."""
    name = os.fspath(path)
    if name in _STREAMS:
        return _STREAMS[name]
    match = _DESCRIPTOR.fullmatch(name)
    return int(match.group(1)) if match else None


def is_stream(path: str | os.PathLike) -> bool:
    """Whether ``path`` is written straight (a descriptor, a device, a FIFO, a socket), not replaced."""
    if descriptor(path) is not None:
        return True
    try:
        mode = os.stat(path).st_mode  # through its symlinks
    except OSError:  # none yet, or a dangling link: a regular file is made
        return False
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


@contextmanager
def opened(path: str | os.PathLike) -> Iterator[BinaryIO]:
    """A binary file to write ``path`` through: straight for a stream, else a replacement made whole
    when the block ends without error. OSError (its ``strerror`` one line) when it cannot be written."""
    fd = descriptor(path)
    if fd is not None:
        with os.fdopen(os.dup(fd), "wb") as out:
            yield out
    elif is_stream(path):
        with os.fdopen(os.open(path, os.O_WRONLY), "wb") as out:
            yield out
    else:
        with replacing(os.path.realpath(path)) as out:
            yield out
