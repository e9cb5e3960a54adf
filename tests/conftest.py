"""Shared fixtures: a fresh database per test, on SQLite and on the machine's real MariaDB (and, for
the state's own tests and a few crawls, its real PostgreSQL); a Redis key prefix per test."""

import os
import uuid

import pytest

pytest.register_assert_rewrite("tests.unit.spider_helpers", "tests.e2e.harness")
from sqlalchemy import create_engine, text  # noqa: E402 - after the assert rewrite it registers

MARIADB_SERVER = os.environ.get("FARM_TEST_MYSQL", "mysql+pymysql://root@127.0.0.1:3306")
POSTGRESQL_SERVER = os.environ.get("FARM_TEST_POSTGRESQL", "postgresql+psycopg://postgres@127.0.0.1:5432")
REDIS_URL = os.environ.get("FARM_TEST_REDIS", "redis://127.0.0.1:6379/0")


def _new_mariadb_database():
    name = f"farm_t_{uuid.uuid4().hex[:12]}"
    admin = create_engine(f"{MARIADB_SERVER}/test")
    with admin.begin() as conn:
        conn.execute(text(f"CREATE DATABASE `{name}` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin"))
    return admin, name


def _drop_mariadb_database(admin, name):
    with admin.begin() as conn:
        conn.execute(text(f"DROP DATABASE IF EXISTS `{name}`"))
    admin.dispose()


def _new_postgresql_database():
    name = f"farm_t_{uuid.uuid4().hex[:12]}"
    # CREATE DATABASE runs outside a transaction
    admin = create_engine(f"{POSTGRESQL_SERVER}/postgres", isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f"CREATE DATABASE \"{name}\" ENCODING 'UTF8' TEMPLATE template0"))
    return admin, name


def _drop_postgresql_database(admin, name):
    with admin.connect() as conn:  # FORCE: a killed crawl's connections may linger
        conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()


@pytest.fixture
def sqlite_url(tmp_path):
    return f"sqlite:///{tmp_path / 'farm.db'}"


@pytest.fixture
def mariadb_url():
    admin, name = _new_mariadb_database()
    try:
        yield f"{MARIADB_SERVER}/{name}"
    finally:
        _drop_mariadb_database(admin, name)


@pytest.fixture
def postgresql_url():
    admin, name = _new_postgresql_database()
    try:
        yield f"{POSTGRESQL_SERVER}/{name}"
    finally:
        _drop_postgresql_database(admin, name)


def _database(kind: str, tmp_path):
    """An empty database (no tables) of ``kind``, dropped afterwards."""
    if kind == "sqlite":
        yield f"sqlite:///{tmp_path / 'farm.db'}"
        return
    if kind == "mariadb":
        admin, name = _new_mariadb_database()
        server, drop = MARIADB_SERVER, _drop_mariadb_database
    else:
        admin, name = _new_postgresql_database()
        server, drop = POSTGRESQL_SERVER, _drop_postgresql_database
    try:
        yield f"{server}/{name}"
    finally:
        drop(admin, name)


@pytest.fixture(params=["sqlite", "mariadb"])
def db_url(request, tmp_path):
    """An empty database (no tables), once on SQLite and once on MariaDB."""
    yield from _database(request.param, tmp_path)


@pytest.fixture(params=["sqlite", "mariadb", "postgresql"])
def every_db_url(request, tmp_path):
    """An empty database (no tables) on each database farm is tested on: SQLite, MariaDB and
    PostgreSQL. The state's own tests (claims, progress, postings, migrations) take it."""
    yield from _database(request.param, tmp_path)


@pytest.fixture
def database_url(request, tmp_path):
    """An empty database of the kind a test names by indirect parametrization
    (``@pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)``)."""
    yield from _database(request.param, tmp_path)


@pytest.fixture(params=["mariadb", "postgresql"])
def server_db_url(request, tmp_path):
    """An empty database on each database server farm is tested on (MariaDB, PostgreSQL): what
    SQLite has not, row locks and SKIP LOCKED."""
    yield from _database(request.param, tmp_path)


@pytest.fixture
def shared():
    """(Redis URL, a key prefix of this test's own) for crawls sharing work; its keys are deleted afterwards."""
    import redis

    prefix = f"farm-test-{uuid.uuid4().hex[:10]}"
    yield REDIS_URL, prefix
    client = redis.Redis.from_url(REDIS_URL)
    keys = list(client.scan_iter(f"{prefix}:*"))
    if keys:
        client.delete(*keys)
    client.close()
