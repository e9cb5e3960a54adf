"""The postings upsert on real databases, strict: a row the database refuses is reported and the
rest of its batch stored; an error that is not about a row's data still fails the write."""

import sqlite3
import threading
from datetime import UTC, datetime

import pytest
from sqlalchemy import create_engine, event, func, select, text
from sqlalchemy.exc import OperationalError

from farm.state import KeywordStore
from farm.state.db import make_engine
from farm.state.models import JobPostingRow
from farm.state.postings import upsert_postings
from tests.integration.strict import strict
from tests.migrated import migrated

NOW = datetime(2026, 11, 30, 4, 0, tzinfo=UTC)
SQLITE_MAX_LENGTH = 20_000  # bytes of a value, lowered so that SQLite too refuses one


def posting(job_id, **fields):
    row = {
        "source": "qcwy",
        "job_id": job_id,
        "title": f"title {job_id}",
        "keyword_id": 1,
        "published_at": datetime(2026, 11, 30, 9, 30, tzinfo=UTC),
        "raw": {"jobId": job_id},
    }
    return {**row, **fields}


def deep(levels):
    value = 1
    for _ in range(levels):
        value = [value]
    return value


@pytest.fixture
def store(every_db_url):
    url = strict(every_db_url)
    migrated(url)
    engine = make_engine(url)
    if engine.dialect.name == "sqlite":
        event.listen(engine, "connect", lambda dbapi, _: dbapi.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, SQLITE_MAX_LENGTH))
    store = KeywordStore(engine)
    store.add_keywords([("qcwy", "北京", "python")])
    yield store
    store.close()


def refused(store):
    """Rows this database refuses for their data, though normalisation would have fitted them."""
    if store.engine.dialect.name == "sqlite":
        return [posting("bad1", raw={"jobId": "bad1", "text": "x" * SQLITE_MAX_LENGTH})]  # string or blob too big
    if store.engine.dialect.name == "postgresql":
        return [
            posting("bad1", title="t" * 300),  # 22001 value too long
            posting("bad2", company="a\x00b"),  # text holds no NUL character
        ]
    return [
        posting("bad1", title="t" * 300),  # 1406 data too long
        posting("bad2", raw=deep(40)),  # 4025 CONSTRAINT raw failed: JSON_VALID refuses 32 levels
    ]


def stored(store):
    with store.engine.connect() as conn:
        return dict(conn.execute(select(JobPostingRow.job_id, JobPostingRow.title)).all())


def test_a_refused_row_is_reported_and_the_rest_of_its_batch_stored(store):
    bad = refused(store)
    with store.engine.begin() as conn:
        written, rejected = upsert_postings(conn, [posting("a"), *bad, posting("z")], NOW)
    assert written == 2
    assert [(source, job_id) for source, job_id, _ in rejected] == [("qcwy", row["job_id"]) for row in bad]
    reasons = [reason for _, _, reason in rejected]
    if store.engine.dialect.name == "sqlite":
        assert reasons == ["string or blob too big"]
    elif store.engine.dialect.name == "postgresql":
        assert reasons[0].startswith("22001 value too long for type character varying")
        assert "NUL" in reasons[1]
    else:
        assert reasons[0].startswith("1406 Data too long for column 'title'")
        assert reasons[1].startswith("4025 CONSTRAINT") and "raw" in reasons[1]
    assert stored(store) == {"a": "title a", "z": "title z"}


def test_a_page_whose_batch_held_a_refused_row_still_counts_done(store):
    [lease] = store.claim("qcwy", "test", 1)
    result = store.write_batch([posting("a"), *refused(store)], [(lease, 1, 3, 1)], NOW)
    assert result.postings == 1 and len(result.rejected) == len(refused(store))
    assert result.pages[0].applied and result.pages[0].completed
    assert stored(store) == {"a": "title a"}
    row = next(k for k in store.list_keywords() if k["id"] == lease.id)
    assert (row["crawl_status"], row["last_completed_page"]) == ("completed", 1)


def test_a_refused_row_leaves_what_the_transaction_wrote_before_it(store):
    [lease] = store.claim("qcwy", "test", 1)
    with store.engine.begin() as conn:
        assert upsert_postings(conn, [posting("a")], NOW) == (1, [])
        _, rejected = upsert_postings(conn, [posting("a", title="updated"), *refused(store)], NOW)
        assert rejected
    assert stored(store) == {"a": "updated"}
    assert store.page_done(lease, 1, 1, 2).applied  # the connection is fine afterwards


def test_ids_that_differ_by_a_trailing_space_are_two_postings_on_every_database(store):
    [lease] = store.claim("qcwy", "test", 1)
    store.write_batch(
        [posting("a", title="plain"), posting("a ", title="spaced"), posting("a  ", title="two")],
        [(lease, 1, 3, 1)],
        NOW,
    )
    assert stored(store) == {"a": "plain", "a ": "spaced", "a  ": "two"}
    store.upsert_postings([posting("a ", title="spaced again")], NOW)  # a sighting of one updates that one
    assert stored(store) == {"a": "plain", "a ": "spaced again", "a  ": "two"}
    with store.engine.connect() as conn:  # and a lookup by id finds that one only
        found = conn.execute(select(JobPostingRow.title).where(JobPostingRow.job_id == "a")).scalars().all()
    assert found == ["plain"]


@pytest.fixture
def mariadb_store(mariadb_url):
    url = strict(mariadb_url)
    migrated(url)
    store = KeywordStore(make_engine(url))
    admin = create_engine(url)
    yield store, admin
    admin.dispose()
    store.close()


def test_a_lost_connection_still_fails_the_write(mariadb_store):
    store, admin = mariadb_store
    store.add_keywords([("qcwy", "北京", "python")])
    [lease] = store.claim("qcwy", "test", 1)

    def kill_before_the_upsert(conn, cursor, statement, parameters, context, executemany):
        if statement.startswith("INSERT INTO job_posting"):
            with admin.begin() as other:
                other.execute(text(f"KILL {conn.connection.dbapi_connection.thread_id()}"))

    event.listen(store.engine, "before_cursor_execute", kill_before_the_upsert)
    with pytest.raises(OperationalError) as caught:
        store.write_batch([posting("a"), posting("b", title="t" * 300)], [(lease, 1, 2, 1)], NOW)
    assert caught.value.orig.args[0] in (2006, 2013)  # lost connection, server gone away
    event.remove(store.engine, "before_cursor_execute", kill_before_the_upsert)
    assert stored(store) == {}
    assert next(k for k in store.list_keywords() if k["id"] == lease.id)["last_completed_page"] == 0


def test_a_deadlock_still_fails_the_write_for_the_store_to_retry_it(mariadb_store):
    store, _ = mariadb_store
    with store.engine.begin() as conn:
        upsert_postings(conn, [posting("x"), posting("y")], NOW)
    first, second = store.engine.connect(), store.engine.connect()
    errors = []

    def upsert(conn, job_id):
        try:
            upsert_postings(conn, [posting(job_id, title="again")], NOW)
        except OperationalError as exc:
            errors.append(exc)
            conn.rollback()  # the victim: the server rolled its transaction back

    try:
        for conn in (first, second):  # each in its own transaction (autobegun)
            conn.exec_driver_sql("SET SESSION innodb_lock_wait_timeout = 20")
        upsert(first, "x")
        upsert(second, "y")
        crossing = threading.Thread(target=upsert, args=(first, "y"))  # waits for second's lock
        crossing.start()
        upsert(second, "x")  # and second for first's: one of them is the deadlock's victim
        crossing.join(30)
        [error] = errors
        assert error.orig.args[0] == 1213  # what KeywordStore.retrying retries, unmasked
    finally:
        for conn in (first, second):
            conn.rollback()
            conn.close()
    with store.engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(JobPostingRow)).scalar() == 2
