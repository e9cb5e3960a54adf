"""The postings upsert: a new (source, job_id) inserts, a known one updates in place."""

from datetime import datetime

from sqlalchemy.dialects import mysql, sqlite
from sqlalchemy.engine import Engine

from farm.state.models import JobPostingRow

TABLE = JobPostingRow.__table__

# What a posting row carries; id, first_seen_at and last_seen_at are the store's.
FIELDS = tuple(c.name for c in TABLE.columns if c.name not in ("id", "first_seen_at", "last_seen_at"))
# What a later sighting overwrites; first_seen_at and keyword_id stay as first found.
UPDATED = (
    "title", "salary", "company", "city", "area", "experience", "degree",
    "tags", "published_at", "url", "raw", "last_seen_at",
)


def _statement(dialect_name: str):
    if dialect_name in ("mysql", "mariadb"):
        stmt = mysql.insert(TABLE)
        return stmt.on_duplicate_key_update({name: stmt.inserted[name] for name in UPDATED})
    if dialect_name == "sqlite":
        stmt = sqlite.insert(TABLE)
        return stmt.on_conflict_do_update(
            index_elements=["source", "job_id"],
            set_={name: stmt.excluded[name] for name in UPDATED},
        )
    from sqlalchemy.dialects import postgresql

    stmt = postgresql.insert(TABLE)
    return stmt.on_conflict_do_update(
        index_elements=["source", "job_id"],
        set_={name: stmt.excluded[name] for name in UPDATED},
    )


def upsert_postings(engine: Engine, rows: list[dict], now: datetime) -> int:
    """Insert or update ``rows`` in one transaction; returns how many rows were written.

    A batch holding one (source, job_id) twice keeps the later row. Rows are written
    in key order so that two concurrent batches lock in the same order.
    """
    latest: dict[tuple[str, str], dict] = {}
    for row in rows:
        values = {name: row.get(name) for name in FIELDS}
        values["job_id"] = str(values["job_id"])
        values["first_seen_at"] = now
        values["last_seen_at"] = now
        latest[(values["source"], values["job_id"])] = values
    if not latest:
        return 0
    params = [latest[key] for key in sorted(latest)]
    with engine.begin() as conn:
        conn.execute(_statement(engine.dialect.name), params)
    return len(params)
