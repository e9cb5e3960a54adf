"""A throwaway database on the machine's MariaDB, for one benchmark run."""

import os
import uuid
from contextlib import contextmanager

from sqlalchemy import text

from farm.state.db import make_engine

SERVER = os.environ.get("FARM_BENCH_MYSQL", "mysql+pymysql://root@127.0.0.1:3306")


@contextmanager
def mariadb_database():
    """The URL of a new, empty database; dropped afterwards."""
    name = f"farm_bench_{uuid.uuid4().hex[:8]}"
    admin = make_engine(f"{SERVER}/test")
    with admin.begin() as conn:
        conn.execute(text(f"CREATE DATABASE `{name}` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin"))
    try:
        yield f"{SERVER}/{name}"
    finally:
        with admin.begin() as conn:
            conn.execute(text(f"DROP DATABASE IF EXISTS `{name}`"))
        admin.dispose()
