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
    _mysql: bool
    _row_locks: bool
    _picks: Sequence[Pick]  # the claim's statements, locking
    _peeks: Sequence[Pick]  # the same rules, reading only
    _takes: dict[str, Update]

    def today(self) -> date: ...

    def _retrying(self, fn: Callable[[], T]) -> T: ...

    def _claim(self, source: str, crawler_id: str, n: int, skip_partial: Iterable[int]) -> list[Lease]: ...
