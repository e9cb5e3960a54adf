"""Which runs with no end are still crawling, and which were killed before their close.

A crawl writes its run's end at its close (farm.extensions.runs); one killed before (SIGKILL, a lost
machine, the OOM killer) leaves its row with no end forever. A run with no end is alive while:

- its crawler holds a ``crawling`` keyword whose heartbeat (farm.extensions.reaper) is fresher than
  FARM_LEASE_TIMEOUT; or
- it runs on this machine and the process its crawler id names (``host:pid``, farm's default) runs; or
- it runs elsewhere, holds no lease, and started less than FARM_LEASE_TIMEOUT ago (too soon to tell).

Otherwise its crawler is gone: `farm check` fails it, `farm stats` gives no ETA for its site.
"""

import os
import socket
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Protocol

from sqlalchemy import select
from sqlalchemy.engine import Engine

from farm.state.models import Keyword


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


def alive_runs(engine: Engine, runs: Sequence[Run], now: datetime, lease_timeout: float) -> set[int]:
    """The ids of ``runs`` that have no end and whose crawler is still crawling."""
    open_runs = [run for run in runs if run.ended_at is None]
    if not open_runs:
        return set()
    fresh = now - timedelta(seconds=lease_timeout)
    k = Keyword.__table__.c
    holders = select(k.crawler_id).where(
        k.crawl_status == "crawling",
        k.heartbeat_at >= fresh,
        k.crawler_id.in_({run.crawler_id for run in open_runs}),
    )
    with engine.connect() as connection:
        beating = set(connection.execute(holders.distinct()).scalars())
    host = socket.gethostname()
    return {run.id for run in open_runs if run.crawler_id in beating or _alive(run, host, fresh)}


def _alive(run: Run, host: str, fresh: datetime) -> bool:
    """Without a fresh lease: its process, when it runs here; else whether it is too soon to tell."""
    if run.machine == host:
        named, _, pid = run.crawler_id.rpartition(":")
        if named == host and pid.isdigit():
            return process_runs(int(pid))
    return run.started_at >= fresh


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
