"""Upkeep of leases: a holder's heartbeat, and the reap of leases whose holder went silent."""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import TYPE_CHECKING

from sqlalchemy import and_, or_, select, update

from farm.state.lease import Lease
from farm.state.models import Keyword
from farm.state.pagewrites import fenced_update

if TYPE_CHECKING:
    from farm.state.storeview import StoreView

logger = logging.getLogger(__name__)

K = Keyword.__table__
c = K.c


def heartbeat(store: StoreView, lease: Lease) -> bool:
    """The holder is alive; keeps the reaper away."""
    return fenced_update(store, lease, heartbeat_at=store.clock())


def reap(store: StoreView) -> int:
    """Crawling rows without a heartbeat for lease_timeout seconds become partial.

    On MySQL/MariaDB and PostgreSQL the stale rows are picked with SKIP LOCKED, like claims: a row
    another crawler holds locked is being claimed or written right now, and a reap
    must not wait behind it (nor hold a crawler's database thread while it waits).
    """
    now = store.clock()
    cutoff = now - timedelta(seconds=store.lease_timeout)
    message = f"reaped at {now.isoformat(timespec='seconds')}: no heartbeat for {store.lease_timeout}s"
    stale = and_(c.crawl_status == "crawling", or_(c.heartbeat_at.is_(None), c.heartbeat_at < cutoff))

    def write() -> int:
        with store.engine.begin() as conn:
            if store.row_locks:
                pick = select(c.id).where(stale).with_for_update(skip_locked=True)
                ids = conn.execute(pick).scalars().all()
                if not ids:
                    return 0
                where = and_(c.id.in_(ids), stale)
            else:
                where = stale
            stmt = update(K).where(where).values(crawl_status="partial", error_message=message, updated_at=now)
            return conn.execute(stmt).rowcount

    reaped = store.retrying(write)
    if reaped:
        logger.info("reaped %d stale lease(s) (no heartbeat for %ss)", reaped, store.lease_timeout)
    return reaped
