"""The KeywordStore as its jobs see it: what claims, page writes, upkeep, reads and keyword imports
use of the store they are handed.

A Protocol, so that each job names the store's type without importing farm.state.store, which
imports every job (KeywordStore is the one class that has these).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from datetime import date, datetime, timedelta
from typing import Protocol, TypeVar
from zoneinfo import ZoneInfo

from sqlalchemy import Update
from sqlalchemy.engine import Engine

from farm.state.claimrules import Pick
from farm.state.lease import Lease

T = TypeVar("T")


class StoreView(Protocol):
    engine: Engine
    reader: Engine  # reads that must not wait behind writers
    clock: Callable[[], datetime]
    tz: ZoneInfo
    lease_timeout: int
    max_retries: int
    retry_delay: timedelta
    max_blocked_claims: int
    is_mysql: bool  # MySQL or MariaDB
    row_locks: bool  # SELECT … FOR UPDATE locks rows (MySQL, MariaDB, PostgreSQL), not the whole file (SQLite)
    picks: Sequence[Pick]  # the claim's statements, locking
    peeks: Sequence[Pick]  # the same rules, reading only
    takes: dict[str, Update]  # by claim kind, the UPDATE that takes a picked row

    def today(self) -> date: ...

    def retrying(self, fn: Callable[[], T]) -> T: ...  # one short transaction, under the retry policy

    def claim_once(self, source: str, crawler_id: str, n: int, skip_partial: Iterable[int]) -> list[Lease]: ...
