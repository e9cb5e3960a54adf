"""The postings upsert: a new (source, job_id) inserts, a known one updates in place.

This is the crawl's hottest write (every posting of every page), so it skips
SQLAlchemy's per-row bind processing: the statement is written once per
dialect and the rows go to the driver's ``executemany`` as plain tuples.

The rows come fitted to their columns (farm.state.normalise). Should the
database still refuse a batch because of one row's data, the batch is written
again a row at a time, each in a SAVEPOINT: every row the database takes is
stored, the others are reported. Any other error (a lost connection, a deadlock,
a missing table) is raised: the transaction is lost whole, and the store retries
it or the crawl closes.
"""

from collections.abc import Callable
from datetime import UTC, datetime
from functools import cache
from typing import Any

import orjson
from sqlalchemy.engine import Connection
from sqlalchemy.exc import DataError, DBAPIError, IntegrityError

from farm.salary import COLUMNS as SALARY
from farm.salary import columns as salary_columns
from farm.state.models import JobPostingRow
from farm.state.posting_fields import BY_NAME, JSON, POSTING_FIELDS, STORE_FIELDS, TIME, UPDATED

TABLE = JobPostingRow.__table__

# What a posting row carries; id, first_seen_at and last_seen_at are the store's.
FIELDS = POSTING_FIELDS
# the INSERT's order; the salary numbers are read from the posting's salary text (farm.salary)
COLUMNS = FIELDS + STORE_FIELDS + SALARY
SET = UPDATED + SALARY  # what a known posting's new sighting overwrites
# MySQL/MariaDB errors about one row's data: a column cannot be null, out of range, data
# truncated, incorrect datetime, incorrect string value, data too long, invalid JSON text
# (MySQL), a CHECK constraint (MariaDB's JSON_VALID)
ROW_DATA_MYSQL = frozenset((1048, 1264, 1265, 1292, 1366, 1406, 3140, 4025))
_JSON_AT = tuple(at for at, name in enumerate(FIELDS) if BY_NAME[name].kind == JSON)
_TIME_AT = tuple(at for at, name in enumerate(FIELDS) if BY_NAME[name].kind == TIME)
REASON_MAX = 300  # characters of a database's refusal kept in a rejection


@cache
def _sql(dialect_name: str) -> str | None:
    names = ", ".join(COLUMNS)
    if dialect_name in ("mysql", "mariadb"):
        # PyMySQL turns executemany of this form into multi-row INSERTs
        marks = ", ".join(["%s"] * len(COLUMNS))
        updates = ", ".join(f"{name} = VALUES({name})" for name in SET)
        return f"INSERT INTO job_posting ({names}) VALUES ({marks}) ON DUPLICATE KEY UPDATE {updates}"
    if dialect_name in ("sqlite", "postgresql"):
        # psycopg sends an executemany's rows in one pipeline
        marks = ", ".join(["?" if dialect_name == "sqlite" else "%s"] * len(COLUMNS))
        updates = ", ".join(f"{name} = excluded.{name}" for name in SET)
        return (
            f"INSERT INTO job_posting ({names}) VALUES ({marks}) ON CONFLICT (source, job_id) DO UPDATE SET {updates}"
        )
    return None


def _json(value: object) -> str | None:
    # compact UTF-8, like json.dumps(ensure_ascii=False)
    return None if value is None else orjson.dumps(value).decode()


def _naive_utc(value: datetime | None) -> datetime | None:
    return None if value is None else value.astimezone(UTC).replace(tzinfo=None)


def _sqlite_time(value: datetime | None) -> str | None:
    # SQLAlchemy's SQLite DATETIME format ("%Y-%m-%d %H:%M:%S.%f"), so that the models read it back
    return None if value is None else value.astimezone(UTC).replace(tzinfo=None).isoformat(" ", "microseconds")


def _params(rows: list[dict[str, Any]], now: datetime, dialect_name: str) -> list[tuple[Any, ...]]:
    """The driver's parameters, in COLUMNS order: one tuple a row, JSON as text, times as naive UTC."""
    to_time: Callable[[datetime | None], object] = _sqlite_time if dialect_name == "sqlite" else _naive_utc
    seen = to_time(now)
    params = []
    for row in rows:
        values: list[Any] = [*map(row.get, FIELDS), seen, seen, *salary_columns(row["source"], row.get("salary"))]
        for at in _JSON_AT:
            values[at] = _json(values[at])
        for at in _TIME_AT:
            values[at] = to_time(values[at])
        params.append(tuple(values))
    return params


def upsert_postings(
    conn: Connection, rows: list[dict[str, Any]], now: datetime
) -> tuple[int, list[tuple[str, str, str]]]:
    """Insert or update ``rows`` in the connection's transaction; returns (rows written,
    rejected), rejected as (source, job_id, reason) of the rows the database refused.

    A batch holding one (source, job_id) twice keeps the later row. Rows are written
    in key order so that two concurrent batches lock in the same order.
    """
    latest: dict[tuple[str, str], dict[str, Any]] = {}
    for row in rows:
        job_id = row["job_id"]
        if not isinstance(job_id, str):
            row = {**row, "job_id": str(job_id)}
        latest[(row["source"], row["job_id"])] = row
    if not latest:
        return 0, []
    ordered = [latest[key] for key in sorted(latest)]
    if _refusal(conn, ordered, now) is None:
        return len(ordered), []
    written = 0
    rejected: list[tuple[str, str, str]] = []
    for row in ordered:
        reason = _refusal(conn, [row], now)
        if reason is None:
            written += 1
        else:
            rejected.append((row["source"], row["job_id"], reason))
    return written, rejected


def _refusal(conn: Connection, rows: list[dict[str, Any]], now: datetime) -> str | None:
    """Write ``rows`` in a SAVEPOINT: None once written, or the database's reason when it
    refused them for a row's data (the savepoint rolled back, the transaction goes on)."""
    savepoint = conn.begin_nested()
    try:
        _execute(conn, rows, now)
    except DBAPIError as exc:
        if not _about_row_data(conn.dialect.name, exc):
            # the transaction is lost whole (its rollback ends the savepoint): a deadlock
            # has already ended it on the server, and must reach the store's retry as it is
            raise
        savepoint.rollback()
        return _reason(exc)
    savepoint.commit()
    return None


def _execute(conn: Connection, rows: list[dict[str, Any]], now: datetime) -> None:
    dialect_name = conn.dialect.name
    sql = _sql(dialect_name)
    if sql is None:  # another dialect: SQLAlchemy's own ON CONFLICT
        # imported here: a crawl on SQLite or MySQL never imports PostgreSQL's dialect (some 17 ms)
        from sqlalchemy.dialects import postgresql

        stmt = postgresql.insert(TABLE)
        stmt = stmt.on_conflict_do_update(
            index_elements=["source", "job_id"], set_={name: stmt.excluded[name] for name in SET}
        )
        values = [
            {
                **{name: row.get(name) for name in FIELDS},
                "first_seen_at": now,
                "last_seen_at": now,
                **dict(zip(SALARY, salary_columns(row["source"], row.get("salary")))),
            }
            for row in rows
        ]
        conn.execute(stmt, values)
    else:
        conn.exec_driver_sql(sql, _params(rows, now, dialect_name))


def _mysql_code(exc: DBAPIError) -> int | None:
    args = getattr(exc.orig, "args", None)
    return args[0] if args and isinstance(args[0], int) else None


def _about_row_data(dialect_name: str, exc: DBAPIError) -> bool:
    """Whether the database refused a row's data (not the connection, the schema or a lock)."""
    if dialect_name in ("mysql", "mariadb"):
        # by code: PyMySQL's classes mix them (DataError holds "field has no default", a
        # schema fault; OperationalError holds 4025, a row's)
        return _mysql_code(exc) in ROW_DATA_MYSQL
    return isinstance(exc, (DataError, IntegrityError))


def _reason(exc: DBAPIError) -> str:
    orig = exc.orig
    args: tuple[Any, ...] = getattr(orig, "args", ())
    diag = getattr(orig, "diag", None)  # psycopg's: its SQLSTATE as MySQL's code, "22001 value too long…"
    sqlstate = getattr(orig, "sqlstate", None)
    if diag is not None and sqlstate:
        text = f"{sqlstate} {diag.message_primary}"
    else:
        text = f"{args[0]} {args[1]}" if len(args) == 2 else str(orig)
    return text if len(text) <= REASON_MAX else text[: REASON_MAX - 1] + "…"
