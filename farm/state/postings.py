"""The postings upsert: a new (source, job_id) inserts, a known one updates in place.

This is the crawl's hottest write (every posting of every page), so it skips
SQLAlchemy's per-row bind processing: the statement is written once per
dialect and the rows go to the driver's ``executemany`` as plain tuples.
"""

import json
from datetime import datetime, timezone

from sqlalchemy.dialects import postgresql
from sqlalchemy.engine import Engine

from farm.state.models import JobPostingRow

TABLE = JobPostingRow.__table__

# What a posting row carries; id, first_seen_at and last_seen_at are the store's.
FIELDS = tuple(c.name for c in TABLE.columns if c.name not in ("id", "first_seen_at", "last_seen_at"))
COLUMNS = FIELDS + ("first_seen_at", "last_seen_at")
# What a later sighting overwrites; first_seen_at and keyword_id stay as first found.
UPDATED = (
    "title", "salary", "company", "city", "area", "experience", "degree",
    "tags", "published_at", "url", "raw", "last_seen_at",
)
JSON_FIELDS = ("tags", "raw")
TIME_FIELDS = ("published_at", "first_seen_at", "last_seen_at")


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


def _time_value(dialect_name: str):
    """How the driver wants an aware datetime: naive UTC (as models.UtcDateTime stores it)."""

    def convert(value):
        if value is None:
            return None
        naive = value.astimezone(timezone.utc).replace(tzinfo=None)
        # SQLAlchemy's SQLite DATETIME format, so the models read it back
        return naive.strftime("%Y-%m-%d %H:%M:%S.%f") if dialect_name == "sqlite" else naive

    return convert


def upsert_postings(engine: Engine, rows: list[dict], now: datetime) -> int:
    """Insert or update ``rows`` in one transaction; returns how many rows were written.

    A batch holding one (source, job_id) twice keeps the later row. Rows are written
    in key order so that two concurrent batches lock in the same order.
    """
    latest: dict[tuple[str, str], dict] = {}
    for row in rows:
        values = {name: row.get(name) for name in FIELDS}
        values["job_id"] = str(values["job_id"])
        values["first_seen_at"] = values["last_seen_at"] = now
        latest[(values["source"], values["job_id"])] = values
    if not latest:
        return 0
    ordered = [latest[key] for key in sorted(latest)]
    dialect_name = engine.dialect.name
    sql = _sql(dialect_name)
    with engine.begin() as conn:
        if sql is None:  # another dialect: SQLAlchemy's own ON CONFLICT
            stmt = postgresql.insert(TABLE)
            stmt = stmt.on_conflict_do_update(
                index_elements=["source", "job_id"], set_={name: stmt.excluded[name] for name in UPDATED}
            )
            conn.execute(stmt, ordered)
            return len(ordered)
        to_time = _time_value(dialect_name)
        params = [
            tuple(
                json.dumps(values[name], ensure_ascii=False) if name in JSON_FIELDS and values[name] is not None
                else to_time(values[name]) if name in TIME_FIELDS
                else values[name]
                for name in COLUMNS
            )
            for values in ordered
        ]  # fmt: skip
        conn.exec_driver_sql(sql, params)
    return len(ordered)
