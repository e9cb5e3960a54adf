"""The store's retry policy: a short transaction run again after a deadlock or lock wait
timeout, and again while the database is unreachable, for up to FARM_OUTAGE_GRACE seconds."""

import logging
import time
from collections.abc import Callable
from typing import TypeVar

from sqlalchemy.exc import OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout

from farm.state.engine import RETRYABLE_POSTGRESQL, postgresql_state, postgresql_unreachable

logger = logging.getLogger(__name__)

T = TypeVar("T")

# MySQL errors worth retrying the whole (short) transaction for: deadlock, lock wait timeout
RETRYABLE_MYSQL = (1213, 1205)
# The database went away (refused, gone, lost mid-query): ridden out for the outage grace
CONNECTION_LOST_MYSQL = (2002, 2003, 2006, 2013, 2055)


def retrying(fn: Callable[[], T], *, dialect: str, outage_grace: float, attempts: int = 5) -> T:
    """Run one short transaction, again after a deadlock or lock wait timeout (PostgreSQL: or a
    serialization failure), and again while the database is unreachable, for up to
    ``outage_grace`` seconds (then the error stands).

    Unreachable: refused, gone, lost mid-query, silent past FARM_DB_TIMEOUT (PyMySQL's read
    deadline is a lost connection), or no pooled connection free within FARM_DB_POOL_TIMEOUT
    (every one of them waiting on a server that does not answer)."""
    mysql, postgresql = dialect in ("mysql", "mariadb"), dialect == "postgresql"
    deadline: float | None = None
    pause = 0.2
    failures = 0
    while True:
        try:
            return fn()
        except (OperationalError, PoolTimeout) as exc:
            failures += 1
            code = _mysql_code(exc) if mysql else postgresql_state(exc)
            conflict = code in RETRYABLE_MYSQL if mysql else code in RETRYABLE_POSTGRESQL
            if (mysql or postgresql) and conflict and failures < attempts:
                logger.debug("retrying after database error %s (attempt %d)", code, failures)
                time.sleep(0.01 * failures)
                continue
            unreachable = (
                isinstance(exc, PoolTimeout)
                or exc.connection_invalidated
                or (mysql and code in CONNECTION_LOST_MYSQL)
                or (postgresql and postgresql_unreachable(exc))
            )
            if not unreachable:
                raise
            deadline = deadline or time.monotonic() + outage_grace
            if time.monotonic() >= deadline:
                raise
            logger.warning("the database is unreachable (%s); trying again in %.1fs", _first_line(exc), pause)
            time.sleep(pause)
            pause = min(pause * 2, 5.0)


def _mysql_code(exc: OperationalError | PoolTimeout) -> int | None:
    orig = getattr(exc, "orig", None)  # a pool timeout has none
    return orig.args[0] if orig is not None and orig.args else None


def _first_line(exc: OperationalError | PoolTimeout) -> str:
    orig = getattr(exc, "orig", None)  # a pool timeout has none
    if orig is None:
        orig = exc
    return (str(orig).strip().splitlines() or [type(orig).__name__])[0]
