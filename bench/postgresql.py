"""A throwaway database on the machine's PostgreSQL, for one benchmark run."""

import os
import uuid
from contextlib import contextmanager

from sqlalchemy import create_engine, text

SERVER = os.environ.get("FARM_BENCH_POSTGRESQL", "postgresql+psycopg://postgres@127.0.0.1:5432")


@contextmanager
def postgresql_database():
    """The URL of a new, empty database; dropped afterwards."""
    name = f"farm_bench_{uuid.uuid4().hex[:8]}"
    admin = create_engine(f"{SERVER}/postgres", isolation_level="AUTOCOMMIT")  # CREATE DATABASE: no transaction
    with admin.connect() as conn:
        conn.execute(text(f"CREATE DATABASE \"{name}\" ENCODING 'UTF8' TEMPLATE template0"))
    try:
        yield f"{SERVER}/{name}"
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()
