"""Engines for the state database: SQLite (embedded default) or MySQL/MariaDB."""

from sqlalchemy import create_engine, event
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.exc import ArgumentError


class DatabaseUrlError(ValueError):
    pass


def make_engine(url: str) -> Engine:
    """An engine tuned for farm's short transactions, for ``FARM_DB_URL``."""
    try:
        parsed = make_url(url)
    except ArgumentError as exc:
        raise DatabaseUrlError(
            f"FARM_DB_URL={url!r} is not a database URL "
            "(e.g. sqlite:///farm.db or mysql+pymysql://user@host:3306/farm)"
        ) from exc
    backend = parsed.get_backend_name()
    if backend == "sqlite":
        engine = create_engine(parsed, connect_args={"timeout": 30})
        event.listen(engine, "connect", _sqlite_pragmas)
        # pysqlite's own BEGIN handling defers the write lock; take it at BEGIN instead
        event.listen(engine, "begin", lambda conn: conn.exec_driver_sql("BEGIN IMMEDIATE"))
        return engine
    if backend == "mysql":
        query = dict(parsed.query)
        query.setdefault("charset", "utf8mb4")
        return create_engine(
            parsed.set(query=query),
            pool_pre_ping=True,
            pool_recycle=3600,
            # no gap locks: SKIP LOCKED claims stay row-local
            isolation_level="READ COMMITTED",
        )
    return create_engine(parsed, pool_pre_ping=True)


def _sqlite_pragmas(dbapi_connection, connection_record):
    # let SQLAlchemy's "begin" event issue BEGIN IMMEDIATE itself
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.close()
