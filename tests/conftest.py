"""Shared fixtures: a fresh database per test, on SQLite and on the machine's real MariaDB (and, for
the state's own tests and a few crawls, its real PostgreSQL); a Redis key prefix per test."""

import os
import uuid

import pytest

pytest.register_assert_rewrite("tests.unit.spider_helpers", "tests.e2e.harness")
from bench.mariadb import throwaway_database  # noqa: E402 - after the assert rewrite it registers
from tests.order import load_costs, longest_first  # noqa: E402

MARIADB_SERVER = os.environ.get("FARM_TEST_MYSQL", "mysql+pymysql://root@127.0.0.1:3306")
POSTGRESQL_SERVER = os.environ.get("FARM_TEST_POSTGRESQL", "postgresql+psycopg://postgres@127.0.0.1:5432")
REDIS_URL = os.environ.get("FARM_TEST_REDIS", "redis://127.0.0.1:6379/0")


# each database server: (its URL, the database to connect to first, how to create and drop one)
SERVERS = {
    "mariadb": (
        MARIADB_SERVER,
        "test",
        "CREATE DATABASE `{name}` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin",
        "DROP DATABASE IF EXISTS `{name}`",
    ),
    "postgresql": (
        POSTGRESQL_SERVER,
        "postgres",
        "CREATE DATABASE \"{name}\" ENCODING 'UTF8' TEMPLATE template0",
        'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)',  # a killed crawl's connections may linger
    ),
}


def pytest_collection_modifyitems(items):
    """The longest tests first (tests/order.py): a worker's last test is a short one."""
    items[:] = longest_first(items, load_costs())


def _server_database(kind: str):
    """A new, empty database on the server of ``kind``: its URL, dropped afterwards."""
    server, first, create, drop = SERVERS[kind]
    with throwaway_database(server, first, create, drop, prefix="farm_t_") as url:
        yield url


@pytest.fixture
def sqlite_url(tmp_path):
    return f"sqlite:///{tmp_path / 'farm.db'}"


@pytest.fixture
def mariadb_url():
    yield from _server_database("mariadb")


@pytest.fixture
def postgresql_url():
    yield from _server_database("postgresql")


def _database(kind: str, tmp_path):
    """An empty database (no tables) of ``kind``, dropped afterwards."""
    if kind == "sqlite":
        yield f"sqlite:///{tmp_path / 'farm.db'}"
    else:
        yield from _server_database(kind)


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


def _running_loops() -> set:
    """The repeating timers (LoopingCall) now waiting in the reactor the tests share."""
    from twisted.internet.task import LoopingCall

    from tests.unit.components import pending_timers  # not before pytest-twisted installs the reactor

    return {timer for timer in pending_timers() if isinstance(timer, LoopingCall)}


@pytest.fixture(autouse=True)
def stop_loops_left_running():
    """A test that opens a spider without running a crawl (a ``spider_opened`` sent by hand) starts the
    extensions' loops (the heartbeat, the progress line, the checkpoint's save) and no engine closes
    them: they are stopped here, as the crawl's close would, so none ticks into a later test."""
    before = _running_loops()
    yield
    for loop in _running_loops() - before:
        loop.stop()
