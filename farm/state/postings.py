"""The postings upsert: a new (source, job_id) inserts, a known one updates in place.

This is the crawl's hottest write (every posting of every page), so it skips
SQLAlchemy's per-row bind processing: the statement is written once per
dialect and the rows go to the driver's ``executemany`` as plain tuples.
"""

import orjson
from datetime import datetime, timezone

from sqlalchemy.dialects import postgresql
from sqlalchemy.engine import Connection

from farm.state.models import JobPostingRow

TABLE = JobPostingRow.__table__

# What a posting row carries; id, first_seen_at and last_seen_at are the store's.
FIELDS = tuple(c.name for c in TABLE.columns if c.name not in ("id", "first_seen_at", "last_seen_at"))
COLUMNS = (
    "source", "job_id", "title", "salary", "company", "city", "area", "experience", "degree",
    "tags", "published_at", "url", "keyword_id", "raw", "first_seen_at", "last_seen_at",
)  # fmt: skip
assert set(COLUMNS) == set(FIELDS) | {"first_seen_at", "last_seen_at"}
# What a later sighting overwrites; first_seen_at and keyword_id stay as first found.
UPDATED = (
    "title", "salary", "company", "city", "area", "experience", "degree",
    "tags", "published_at", "url", "raw", "last_seen_at",
)


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


def _json(value) -> str:
    return orjson.dumps(value).decode()  # compact UTF-8, like json.dumps(ensure_ascii=False)


def _naive_utc(value):
    return None if value is None else value.astimezone(timezone.utc).replace(tzinfo=None)


def _sqlite_time(value):
    # SQLAlchemy's SQLite DATETIME format ("%Y-%m-%d %H:%M:%S.%f"), so that the models read it back
    return None if value is None else _naive_utc(value).isoformat(" ", "microseconds")


def _params(rows: list[dict], now: datetime, dialect_name: str) -> list[tuple]:
    """The driver's parameters, in COLUMNS order: one tuple a row, times as naive UTC."""
    to_time = _sqlite_time if dialect_name == "sqlite" else _naive_utc
    seen = to_time(now)
    return [
        (
            row["source"], row["job_id"], row.get("title"), row.get("salary"), row.get("company"),
            row.get("city"), row.get("area"), row.get("experience"), row.get("degree"),
            None if row.get("tags") is None else _json(row["tags"]),
            to_time(row.get("published_at")), row.get("url"), row.get("keyword_id"),
            None if row.get("raw") is None else _json(row["raw"]),
            seen, seen,
        )
        for row in rows
    ]  # fmt: skip


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
    dialect_name = conn.dialect.name
    sql = _sql(dialect_name)
    if sql is None:  # another dialect: SQLAlchemy's own ON CONFLICT
        stmt = postgresql.insert(TABLE)
        stmt = stmt.on_conflict_do_update(
            index_elements=["source", "job_id"], set_={name: stmt.excluded[name] for name in UPDATED}
        )
        values = [{**{name: row.get(name) for name in FIELDS}, "first_seen_at": now, "last_seen_at": now}
                  for row in ordered]  # fmt: skip
        conn.execute(stmt, values)
    else:
        conn.exec_driver_sql(sql, _params(ordered, now, dialect_name))
    return len(ordered), []
