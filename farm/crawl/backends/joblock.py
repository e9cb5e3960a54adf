"""One crawl per JOBDIR: an OS file lock on ``JOBDIR/farm.lock``, held for the crawl's life.

Two crawls on one JOBDIR (a jobid scheduled again on scrapyd while it runs, the same
command started twice) would each take the other's keywords back from the checkpoint
and either would delete it at its end. The second is refused at start, with one line
naming the holder.

The lock is ``flock(LOCK_EX | LOCK_NB)`` on an open file: the kernel releases it when
the holder's process ends, however it ends (a kill -9 included), so a lock is never
left stale. The file holds the holder's pid, host, crawler id and start time, for
the refusal to name; it is never deleted (a crawl that unlinked it could leave a second
crawl holding the lock of a name a third then makes anew). The descriptor is not
inherited by the processes a crawl starts (Python opens files close-on-exec), so the
lock ends with the crawl itself.
"""

import fcntl
import json
import os
import socket
from datetime import datetime
from pathlib import Path
from typing import Any

from farm.errors import JobdirInUse

FILE_NAME = "farm.lock"


class JobdirLock:
    def __init__(self, jobdir: str | os.PathLike[str], fd: int):
        self.jobdir = str(jobdir)
        self.path = Path(jobdir) / FILE_NAME
        self._fd: int | None = fd

    @classmethod
    def take(cls, jobdir: str | os.PathLike[str]) -> "JobdirLock":
        """The lock of ``jobdir`` (made if need be); JobdirInUse when a live crawl holds it."""
        Path(jobdir).mkdir(parents=True, exist_ok=True)
        fd = os.open(Path(jobdir) / FILE_NAME, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read(fd)
            os.close(fd)
            raise JobdirInUse(
                f"JOBDIR={jobdir} is in use by {describe(holder)}: one crawl per JOBDIR; wait for "
                "it to end or stop it, or give this crawl its own JOBDIR"
            ) from None
        except BaseException:
            os.close(fd)
            raise
        return cls(jobdir, fd)

    def note(self, crawler_id: str) -> None:
        """Write who holds the lock, for a crawl that is refused to name."""
        record = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "crawler_id": crawler_id,
            "since": datetime.now().astimezone().isoformat(timespec="seconds"),
        }
        data = json.dumps(record).encode()
        fd = self._fd
        assert fd is not None, "the lock is noted while held, before its release"
        os.ftruncate(fd, 0)
        os.pwrite(fd, data, 0)

    @property
    def held(self) -> bool:
        return self._fd is not None

    def release(self) -> None:
        """Give the JOBDIR up (the record is cleared; the file stays). Idempotent."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        try:
            os.ftruncate(fd, 0)
        finally:
            os.close(fd)  # closing the last descriptor of the open file releases the flock


def _read(fd: int) -> dict[str, Any]:
    try:
        data = os.pread(fd, 4096, 0)
        record = json.loads(data) if data.strip() else {}
    except (OSError, ValueError):
        return {}
    return record if isinstance(record, dict) else {}


def describe(holder: dict[str, Any]) -> str:
    """The holder as the refusal names it."""
    if not holder.get("pid"):
        return "another crawl (starting: it has not written its name yet)"
    return (
        f"pid {holder['pid']} on host {holder.get('host', '?')} (crawler id {holder.get('crawler_id', '?')}, "
        f"since {holder.get('since', '?')})"
    )
