"""What differs on PostgreSQL: its deadlines, and which of its errors the store retries or rides out."""

import logging
import socket
import time

import pytest
from sqlalchemy import event
from sqlalchemy.engine import Engine
from sqlalchemy.exc import OperationalError

from farm.state import KeywordStore
from farm.state.db import make_engine, postgresql_state, postgresql_unreachable
from farm.state.migrate import upgrade
from tests.migrated import migrated

pytestmark = pytest.mark.postgresql


def raising(engine, state: str):
    """A transaction that fails with PostgreSQL's ``state``, as the server reports it."""

    def run():
        with engine.begin() as conn:
            conn.exec_driver_sql(f"DO $$ BEGIN RAISE EXCEPTION 'as told' USING ERRCODE = '{state}'; END $$")

    return run


def failing_then(engine, states):
    """A call that fails with each of ``states`` in turn, then answers "done"; and its attempts."""
    attempts = []

    def call():
        attempts.append(len(attempts))
        if len(attempts) <= len(states):
            raising(engine, states[len(attempts) - 1])()
        return "done"

    return call, attempts


@pytest.fixture
def store(postgresql_url):
    migrated(postgresql_url)
    store = KeywordStore(make_engine(postgresql_url, timeout=1), outage_grace=0)
    yield store
    store.close()


@pytest.mark.parametrize("state", ["40P01", "40001", "55P03"])  # deadlock, serialization failure, lock
def test_a_deadlock_or_serialization_failure_is_retried_at_once(store, state):
    call, attempts = failing_then(store.engine, [state, state])
    assert store.retrying(call) == "done" and len(attempts) == 3


def test_an_error_that_is_neither_a_conflict_nor_an_outage_is_raised_at_once(store):
    call, attempts = failing_then(store.engine, ["53100"])  # disk full
    with pytest.raises(OperationalError) as caught:
        store.retrying(call)
    assert len(attempts) == 1 and postgresql_state(caught.value) == "53100"
    assert not postgresql_unreachable(caught.value)


@pytest.mark.parametrize("state", ["57P01", "57P03", "08006"])  # shut down, starting, connection failure
def test_a_server_going_away_is_an_outage_ridden_out_for_the_grace(store, state, caplog):
    call, attempts = failing_then(store.engine, [state])
    with pytest.raises(OperationalError):
        KeywordStore(store.engine, outage_grace=0).retrying(call)
    call, attempts = failing_then(store.engine, [state])
    riding = KeywordStore(store.engine, outage_grace=30)
    with caplog.at_level(logging.WARNING, logger="farm.state.store"):
        assert riding.retrying(call) == "done" and len(attempts) == 2
    assert "the database is unreachable" in caplog.text


def test_a_refused_connection_is_an_outage(postgresql_url):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    engine = make_engine(f"postgresql+psycopg://postgres@127.0.0.1:{port}/farm", timeout=1)
    try:
        with pytest.raises(OperationalError) as caught:
            KeywordStore(engine, outage_grace=0).reap()
        assert postgresql_unreachable(caught.value)
        started = time.monotonic()
        with pytest.raises(OperationalError):
            KeywordStore(engine, outage_grace=1).reap()  # tried again for a second, then it stands
        assert 1 <= time.monotonic() - started < 10
    finally:
        engine.dispose()


def test_a_statement_past_the_deadline_is_cut_off_and_migrations_have_no_deadline(postgresql_url):
    engine = make_engine(postgresql_url, timeout=1)
    try:
        with engine.connect() as conn:
            assert conn.exec_driver_sql("SHOW statement_timeout").scalar() == "1s"
            with pytest.raises(OperationalError) as caught:
                conn.exec_driver_sql("SELECT pg_sleep(1.5)")
        assert postgresql_state(caught.value) == "57014" and postgresql_unreachable(caught.value)
        seen = []

        def migrating(conn, cursor, statement, parameters, context, executemany):
            seen.append(conn.connection.dbapi_connection.execute("SHOW statement_timeout").fetchone()[0])

        event.listen(Engine, "before_cursor_execute", migrating)  # the migration's own engine too
        try:
            upgrade(engine)
        finally:
            event.remove(Engine, "before_cursor_execute", migrating)
        assert seen and set(seen) == {"0"}
    finally:
        engine.dispose()


def test_a_timeout_named_in_the_url_takes_precedence(postgresql_url):
    engine = make_engine(f"{postgresql_url}?options=-c%20statement_timeout%3D7000", timeout=1)
    try:
        with engine.connect() as conn:
            assert conn.exec_driver_sql("SHOW statement_timeout").scalar() == "7s"
    finally:
        engine.dispose()
