"""Keywords added to the table: each validated, all in one transaction, those present skipped."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from sqlalchemy import Insert
from sqlalchemy.dialects import mysql, postgresql, sqlite

from farm.state.models import Keyword
from farm.state.validation import validate_keyword

if TYPE_CHECKING:
    from farm.state.storeview import StoreView

K = Keyword.__table__

INSERT_CHUNK = 5000  # keyword rows per executemany


def add_keywords(store: StoreView, rows: Iterable[tuple[str, str, str]]) -> int:
    """Insert the keywords not yet in the table, all in one transaction.

    Every row is validated first (KeywordError names the first bad one, and
    nothing is written); rows already present are skipped. Returns how many
    were inserted.
    """
    seen: set[tuple[str, str, str]] = set()
    params: list[dict[str, Any]] = []
    now = store.clock()
    for row in rows:
        key = validate_keyword(*row)
        if key in seen:
            continue
        seen.add(key)
        params.append({"source": key[0], "city": key[1], "job": key[2], "created_at": now, "updated_at": now})
    if not params:
        return 0
    stmt: Insert
    if store.is_mysql:
        stmt = mysql.insert(K).prefix_with("IGNORE")
    elif store.engine.dialect.name == "sqlite":
        stmt = sqlite.insert(K).on_conflict_do_nothing(index_elements=["source", "city", "job"])
    else:
        # psycopg's executemany counts no rows: the inserted ones are counted by their ids
        stmt = postgresql.insert(K).on_conflict_do_nothing(index_elements=["source", "city", "job"]).returning(K.c.id)
    inserted = 0
    with store.engine.begin() as conn:
        for start in range(0, len(params), INSERT_CHUNK):
            result = conn.execute(stmt, params[start : start + INSERT_CHUNK])
            inserted += len(result.all()) if result.returns_rows else max(result.rowcount, 0)
    return inserted
