"""A throwaway database on the machine's MariaDB, for one benchmark run; and one on any server."""

import os
import uuid
from contextlib import contextmanager

from sqlalchemy import create_engine, text

SERVER = os.environ.get("FARM_BENCH_MYSQL", "mysql+pymysql://root@127.0.0.1:3306")


def mariadb_database():
    """A context giving the URL of a new, empty database; dropped afterwards."""
    create = "CREATE DATABASE `{name}` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin"
    return throwaway_database(SERVER, "test", create, "DROP DATABASE IF EXISTS `{name}`")


@contextmanager
def throwaway_database(server: str, first: str, create: str, drop: str, prefix: str = "farm_bench_"):
    """The URL of a new, empty database on ``server`` (reached through its database ``first``),
    made by the statement ``create`` and dropped afterwards by ``drop`` (each names it ``{name}``).
    The tests make theirs with it too."""
    name = f"{prefix}{uuid.uuid4().hex[:8]}"
    # PostgreSQL creates and drops databases outside a transaction only
    admin = create_engine(f"{server}/{first}", isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(create.format(name=name)))
    try:
        yield f"{server}/{name}"
    finally:
        with admin.connect() as conn:
            conn.execute(text(drop.format(name=name)))
        admin.dispose()
