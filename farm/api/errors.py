"""The one line a database error is logged as, and the 503 of a database that cannot serve (the
API's refusals: farm.errors.ApiRefusal).

No FastAPI or pydantic here: the `farm` command imports this module at start.
"""

import logging

from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout

from farm.api.outcomes import Outcomes

logger = logging.getLogger(__name__)

# what a database that is down, restarting or overloaded raises (a lost connection, a full pool)
UNAVAILABLE = (OperationalError, InterfaceError, PoolTimeout)


def database_reason(exc: Exception) -> str:
    """The driver's own words, on one line, without SQLAlchemy's statement and parameters."""
    orig = exc.orig if isinstance(exc, DBAPIError) and exc.orig is not None else exc
    args = getattr(orig, "args", ())
    if len(args) >= 2 and isinstance(args[0], int):  # PyMySQL: (code, message)
        text = f"({args[0]}) {args[1]}"
    else:
        text = str(orig)
    lines = text.strip().splitlines()
    return lines[0] if lines else type(orig).__name__


def unavailable(method: str, path: str, exc: Exception, retry_after: int, outcomes: Outcomes) -> tuple[dict, dict]:
    """Count and log a request the database could not serve; its 503's body and headers (ask again
    after ``retry_after`` seconds)."""
    outcomes.add("db_unavailable")
    logger.warning("503 %s %s: the database is unavailable: %s", method, path, database_reason(exc))
    return {"detail": f"the database is unavailable; try again in {retry_after}s"}, {"Retry-After": str(retry_after)}
