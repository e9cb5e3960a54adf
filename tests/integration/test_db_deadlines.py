"""A MariaDB that accepts connections but stops answering: every call ends within its deadline.

The database is reached through a TCP relay the test owns; ``stall()`` keeps every
connection open and accepts new ones, but passes no byte until ``resume()``.
"""

import logging
import threading
import time

import pytest
from sqlalchemy import event
from sqlalchemy.engine import Engine
from sqlalchemy.exc import OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout

from farm.state import KeywordStore
from farm.state.db import make_engine
from farm.state.migrate import upgrade
from tests.migrated import migrated
from tests.relay import relay_to_database

pytestmark = pytest.mark.mariadb


def in_thread(call):
    """Run ``call`` on a daemon thread; a function giving (done, result or exception) within a wait."""
    outcome = {}
    finished = threading.Event()

    def run():
        try:
            outcome["result"] = call()
        except BaseException as exc:
            outcome["error"] = exc
        finished.set()

    threading.Thread(target=run, daemon=True).start()

    def wait(seconds):
        finished.wait(seconds)
        return finished.is_set(), outcome.get("error", outcome.get("result"))

    return wait


@pytest.fixture
def deadlines(monkeypatch):
    """FARM_DB_TIMEOUT and FARM_DB_POOL_TIMEOUT as the environment would set them."""

    def set_to(timeout, pool_timeout):
        monkeypatch.setenv("FARM_DB_TIMEOUT", str(timeout))
        monkeypatch.setenv("FARM_DB_POOL_TIMEOUT", str(pool_timeout))

    return set_to


def test_a_silent_database_is_an_outage_within_the_deadline_and_a_call_rides_it_out(mariadb_url, deadlines, caplog):
    migrated(mariadb_url)
    relay, url = relay_to_database(mariadb_url)
    deadlines(1, 1)
    engine = make_engine(url)
    try:
        store = KeywordStore(engine, outage_grace=0)
        store.add_keywords([("boss", "北京", "python")])
        [lease] = store.claim("boss", "me")

        relay.stall()
        started = time.monotonic()
        done, error = in_thread(lambda: store.heartbeat(lease))(10)
        assert done, "a call waited on a silent database past its deadline"
        assert isinstance(error, OperationalError) and error.orig.args[0] == 2013, error
        # the pool's ping and a reconnect may each wait out the deadline: never more
        assert time.monotonic() - started < 4

        # a crawl's store rides it out for the outage grace, and the call goes through once it answers
        riding = KeywordStore(engine, outage_grace=30)
        with caplog.at_level(logging.WARNING, logger="farm.state.store"):
            wait = in_thread(lambda: riding.heartbeat(lease))
            deadline = time.monotonic() + 10
            while "the database is unreachable" not in caplog.text:
                assert time.monotonic() < deadline, "no outage was logged"
                time.sleep(0.05)
            relay.resume()
            assert wait(20) == (True, True)
        assert "Lost connection to MySQL server during query (timed out)" in caplog.text
    finally:
        relay.stop()
        engine.dispose()


def test_no_free_pooled_connection_is_an_outage_ridden_out_for_the_grace(mariadb_url, deadlines, caplog):
    migrated(mariadb_url)
    deadlines(1, 0.2)
    engine = make_engine(mariadb_url)
    held = []
    try:
        store = KeywordStore(engine, outage_grace=30)
        store.add_keywords([("boss", "北京", "python")])
        [lease] = store.claim("boss", "me")
        size = engine.pool.size() + engine.pool._max_overflow
        held = [engine.connect() for _ in range(size)]  # every connection busy
        with pytest.raises(PoolTimeout):
            KeywordStore(engine, outage_grace=0).heartbeat(lease)
        with caplog.at_level(logging.WARNING, logger="farm.state.store"):
            wait = in_thread(lambda: store.heartbeat(lease))
            deadline = time.monotonic() + 10
            while "the database is unreachable" not in caplog.text:
                assert time.monotonic() < deadline, "no outage was logged"
                time.sleep(0.05)
            held.pop().close()
            assert wait(20) == (True, True)
    finally:
        for connection in held:
            connection.close()
        engine.dispose()


def test_migrations_have_no_read_deadline_and_every_other_call_has(mariadb_url):
    engine = make_engine(mariadb_url, timeout=1)
    try:
        with engine.connect() as connection:
            driver = connection.connection.dbapi_connection
            assert (driver._read_timeout, driver._write_timeout, driver.connect_timeout) == (1, 1, 1)
            # a statement the server takes longer than the deadline to answer is cut off
            with pytest.raises(OperationalError, match="timed out"):
                connection.exec_driver_sql("SELECT SLEEP(1.5)")
        seen = []

        def migrating(conn, cursor, statement, parameters, context, executemany):
            driver = conn.connection.dbapi_connection
            seen.append((driver._read_timeout, driver.connect_timeout))

        event.listen(Engine, "before_cursor_execute", migrating)  # the migration's own engine too
        try:
            upgrade(engine)
        finally:
            event.remove(Engine, "before_cursor_execute", migrating)
        assert seen and set(seen) == {(None, 1)}
    finally:
        engine.dispose()
