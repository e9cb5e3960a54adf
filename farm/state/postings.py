"""The postings upsert: a new (source, job_id) inserts, a known one updates in place.

This is the crawl's hottest write (every posting of every page), so it skips
SQLAlchemy's per-row bind processing: the statement is written once per
dialect and the rows go to the driver's ``executemany`` as plain tuples.
"""

from datetime import datetime, timezone
from functools import cache

import orjson
from sqlalchemy.dialects import postgresql
from sqlalchemy.engine import Connection

from farm.state.models import JobPostingRow
from farm.state.posting_fields import BY_NAME, JSON, POSTING_FIELDS, STORE_FIELDS, TIME, UPDATED

TABLE = JobPostingRow.__table__

# What a posting row carries; id, first_seen_at and last_seen_at are the store's.
FIELDS = POSTING_FIELDS
COLUMNS = FIELDS + STORE_FIELDS  # the INSERT's order
_JSON_AT = tuple(at for at, name in enumerate(FIELDS) if BY_NAME[name].kind == JSON)
_TIME_AT = tuple(at for at, name in enumerate(FIELDS) if BY_NAME[name].kind == TIME)


@cache
def _sql(dialect_name: str) -> str | None:
    names = ", ".join(COLUMNS)
    if dialect_name in ("mysql", "mariadb"):
        # PyMySQL turns executemany of this form into multi-row INSERTs
        marks = ", ".join(["%s"] * len(COLUMNS))
        updates = ", ".join(f"{name} = VALUES({name})" for name in UPDATED)
        return f"INSERT INTO job_posting ({names}) VALUES ({marks}) ON DUPLICATE KEY UPDATE {updates}"
    if dialect_name == "sqlite":
        marks = ", ".join(["?"] * len(COLUMNS))
        updates = ", ".join(f"{name} = excluded.{name}" for name in UPDATED)
        return (
            f"INSERT INTO job_posting ({names}) VALUES ({marks}) "
            f"ON CONFLICT (source, job_id) DO UPDATE SET {updates}"
        )
    return None


def _json(value):
    # compact UTF-8, like json.dumps(ensure_ascii=False)
    return None if value is None else orjson.dumps(value).decode()


def _naive_utc(value):
    return None if value is None else value.astimezone(timezone.utc).replace(tzinfo=None)


def _sqlite_time(value):
    # SQLAlchemy's SQLite DATETIME format ("%Y-%m-%d %H:%M:%S.%f"), so that the models read it back
    return None if value is None else _naive_utc(value).isoformat(" ", "microseconds")


def _params(rows: list[dict], now: datetime, dialect_name: str) -> list[tuple]:
    """The driver's parameters, in COLUMNS order: one tuple a row, JSON as text, times as naive UTC."""
    to_time = _sqlite_time if dialect_name == "sqlite" else _naive_utc
    seen = to_time(now)
    params = []
    for row in rows:
        values = [*map(row.get, FIELDS), seen, seen]
        for at in _JSON_AT:
            values[at] = _json(values[at])
        for at in _TIME_AT:
            values[at] = to_time(values[at])
        params.append(tuple(values))
    return params


def upsert_postings(conn: Connection, rows: list[dict], now: datetime) -> tuple[int, list]:
    """Insert or update ``rows`` in the connection's transaction; returns (rows written, rejected).

    A batch holding one (source, job_id) twice keeps the later row. Rows are written
    in key order so that two concurrent batches lock in the same order.
    """
    latest: dict[tuple[str, str], dict] = {}
    for row in rows:
        job_id = row["job_id"]
        if not isinstance(job_id, str):
            row = {**row, "job_id": str(job_id)}
        latest[(row["source"], row["job_id"])] = row
    if not latest:
        return 0, []
    ordered = [latest[key] for key in sorted(latest)]
    _execute(conn, ordered, now)
    return len(ordered), []


def _execute(conn: Connection, rows: list[dict], now: datetime) -> None:
    dialect_name = conn.dialect.name
    sql = _sql(dialect_name)
    if sql is None:  # another dialect: SQLAlchemy's own ON CONFLICT
        stmt = postgresql.insert(TABLE)
        stmt = stmt.on_conflict_do_update(
            index_elements=["source", "job_id"], set_={name: stmt.excluded[name] for name in UPDATED}
        )
        values = [{**{name: row.get(name) for name in FIELDS}, "first_seen_at": now, "last_seen_at": now}
                  for row in rows]  # fmt: skip
        conn.execute(stmt, values)
    else:
        conn.exec_driver_sql(sql, _params(rows, now, dialect_name))
