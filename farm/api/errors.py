"""The one line a database error is logged as (the API's refusals: farm.errors.ApiRefusal).

No FastAPI or pydantic here: the `farm` command imports this module at start.
"""

from sqlalchemy.exc import DBAPIError


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
