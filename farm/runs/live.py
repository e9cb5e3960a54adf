"""Which runs with no end are still crawling, and which were killed before their close.

A crawl writes its run's end at its close (farm.extensions.runs); one killed before (SIGKILL, a lost
machine, the OOM killer) leaves its row with no end forever. A crawl heartbeats the keywords it holds
every FARM_REAP_INTERVAL (farm.extensions.reaper). A run with no end is alive while:

- it runs on this machine and the process its crawler id names (``host:pid``, farm's default) runs; or,
  that process gone, its crawler id still heartbeats a ``crawling`` keyword within three
  FARM_REAP_INTERVALs (a crawl resumed from its JOBDIR keeps the id of the process that began it);
- it runs elsewhere (or under an id of another form) and its crawler heartbeats a ``crawling`` keyword
  within FARM_LEASE_TIMEOUT, as the reaper judges a lease, or it started less than FARM_LEASE_TIMEOUT
  ago (too soon to tell).

Otherwise its crawler is gone: `farm check` fails it, `farm stats` gives no ETA for its site. A crawl
killed on this machine is told within three heartbeats; one killed elsewhere, once its leases go stale.
"""

import os
import socket
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Protocol

from sqlalchemy import func, select
from sqlalchemy.engine import Engine

from farm.config import default
from farm.state.models import Keyword

BEATS = 3  # heartbeats missed before a crawler on this machine whose process is gone is called gone


class Run(Protocol):
    """What liveness reads of a run (farm.runs.history.KeptRun, farm.state.tallies' spans)."""

    @property
    def id(self) -> int: ...
    @property
    def crawler_id(self) -> str: ...
    @property
    def machine(self) -> str: ...
    @property
    def started_at(self) -> datetime: ...
    @property
    def ended_at(self) -> datetime | None: ...


def alive_runs(
    engine: Engine,
    runs: Sequence[Run],
    now: datetime,
    lease_timeout: float,
    reap_interval: float = default("reap_interval"),
) -> set[int]:
    """The ids of ``runs`` that have no end and whose crawler is still crawling."""
    open_runs = [run for run in runs if run.ended_at is None]
    if not open_runs:
        return set()
    k = Keyword.__table__.c
    beats = select(k.crawler_id, func.max(k.heartbeat_at)).where(
        k.crawl_status == "crawling", k.crawler_id.in_({run.crawler_id for run in open_runs})
    )
    with engine.connect() as connection:
        last_beat = dict(connection.execute(beats.group_by(k.crawler_id)).all())
    host = socket.gethostname()
    lease = now - timedelta(seconds=lease_timeout)
    recent = now - timedelta(seconds=BEATS * reap_interval)
    alive = set()
    for run in open_runs:
        beat = _aware(last_beat.get(run.crawler_id))
        pid = _local_pid(run, host)
        if pid is not None:
            living = process_runs(pid) or (beat is not None and beat >= recent)
        else:
            living = (beat is not None and beat >= lease) or run.started_at >= lease
        if living:
            alive.add(run.id)
    return alive


def _aware(when: datetime | None) -> datetime | None:
    """A time func.max read raw: UTC, made aware."""
    return when.replace(tzinfo=UTC) if when is not None and when.tzinfo is None else when


def _local_pid(run: Run, host: str) -> int | None:
    """The pid its crawler id names, when it runs on this machine under farm's ``host:pid`` id."""
    named, _, pid = run.crawler_id.rpartition(":")
    return int(pid) if run.machine == host and named == host and pid.isdigit() else None


def process_runs(pid: int) -> bool:
    """Whether a process ``pid`` runs on this machine (a zombie, ended but not reaped, does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as stat:
            return stat.read().rpartition(")")[2].split()[0] != "Z"
    except OSError:
        return True
