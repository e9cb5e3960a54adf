"""Keywords added to the table: each validated, all in one transaction, those present skipped.

A keyword is one search (farm.state.validation.search_key): ``boss,北京,Python`` and ``boss,北京,python``,
or ``zhilian,530,Java`` and ``zhilian,北京,Java``, are stored once, as the first given (its city in the one
spelling farm keeps). A row that is the same search as one stored, or as one before it in the same call,
is not inserted, and the caller is told which it matched (``Added.same_search``).

The unique key is (source, city, job), the city canonical: a row of the same search but another case is
found here, by reading the rows of its source and city (in any spelling of it) in the insert's
transaction. Rows stored before cities were kept in one spelling (``530``) are matched by their code and
kept as they are.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, Insert, select

from farm.sites import get
from farm.sites.cities import city_code
from farm.state.models import Keyword
from farm.state.validation import cleaned, search_key, validate_keyword

if TYPE_CHECKING:
    from farm.state.storeview import StoreView

K = Keyword.__table__

INSERT_CHUNK = 5000  # keyword rows per executemany
Row = tuple[str, str, str]


@dataclass
class Added:
    """What an add did: the rows inserted, and each row left out as the same search as another, both as
    written, with the row it matched: the one stored, or the one of the same call that is stored now; a
    row given twice exactly, or exactly as stored, is neither."""

    inserted: int = 0
    same_search: list[tuple[Row, Row]] = field(default_factory=list)


def add_keywords(store: StoreView, rows: Iterable[Row]) -> int:
    """Insert the keywords not yet in the table (as one search), all in one transaction; how many were new.

    Every row is validated first (KeywordError names the first bad one, and nothing is written).
    """
    return import_keywords(store, rows).inserted


def import_keywords(store: StoreView, rows: Iterable[Row]) -> Added:
    """``add_keywords``, telling which rows were left out as the same search as another."""
    added = Added()
    # search key -> its rows as given (their city as written), distinct, in order; the first's keyword
    given: dict[tuple[str, str, str], list[Row]] = {}
    first: dict[tuple[str, str, str], Row] = {}
    for row in rows:
        keyword = validate_keyword(*row)
        key = search_key(*keyword)
        same = given.setdefault(key, [])
        first.setdefault(key, keyword)
        written = (keyword[0], cleaned(row[1]), keyword[2])
        if written not in same:
            same.append(written)
    if not given:
        return added
    now = store.clock()
    stmt: Insert
    # each dialect's insert imported where it is used: a process imports its database's dialect alone
    # (PostgreSQL's is some 17 ms of a start)
    if store.is_mysql:
        from sqlalchemy.dialects import mysql

        stmt = mysql.insert(K).prefix_with("IGNORE")
    elif store.engine.dialect.name == "sqlite":
        from sqlalchemy.dialects import sqlite

        stmt = sqlite.insert(K).on_conflict_do_nothing(index_elements=["source", "city", "job"])
    else:
        from sqlalchemy.dialects import postgresql

        # psycopg's executemany counts no rows: the inserted ones are counted by their ids
        stmt = postgresql.insert(K).on_conflict_do_nothing(index_elements=["source", "city", "job"]).returning(K.c.id)
    with store.engine.begin() as conn:
        stored = _stored(conn, list(first.values()))
        params: list[dict[str, Any]] = []
        for key, same in given.items():
            kept = stored.get(key)
            if kept is None:  # the first given is stored, its city in farm's spelling
                source, city, job = first[key]
                params.append({"source": source, "city": city, "job": job, "created_at": now, "updated_at": now})
                kept, same = same[0], same[1:]
            added.same_search += [(row, kept) for row in same if row != kept]
        for start in range(0, len(params), INSERT_CHUNK):
            result = conn.execute(stmt, params[start : start + INSERT_CHUNK])
            added.inserted += len(result.all()) if result.returns_rows else max(result.rowcount, 0)
    return added


def _stored(conn: Connection, keywords: list[Row]) -> dict[tuple[str, str, str], Row]:
    """The stored rows of the same source and city (in any spelling of it) as ``keywords``, by search key
    (the oldest of a key, when rows stored before were of one search)."""
    spellings: dict[str, set[str]] = {}
    for source, city, _ in keywords:
        code = city_code(source, city)
        names = {name for name, named in get(source).cities.items() if named == code}
        spellings.setdefault(source, set()).update({city, *names, *([code] if code else [])})
    found: dict[tuple[str, str, str], Row] = {}
    for source, cities in spellings.items():
        picked = select(K.c.source, K.c.city, K.c.job).where(K.c.source == source, K.c.city.in_(sorted(cities)))
        for row in conn.execute(picked.order_by(K.c.id)):
            found.setdefault(search_key(row.source, row.city, row.job), (row.source, row.city, row.job))
    return found
