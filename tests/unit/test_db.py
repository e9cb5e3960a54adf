"""Database URLs (masked wherever they are shown; a malformed one is one clear error), and SQLite reads."""

import sqlite3
import threading
import time

import pytest
from sqlalchemy import select

from farm.display import mask_url
from farm.state.db import DatabaseUrlError, make_engine, reader
from farm.state.migrate import upgrade
from farm.state.models import Keyword
from farm.state.store import KeywordStore


@pytest.mark.parametrize(
    "url, masked",
    [
        ("mysql+pymysql://u:secret@host:3306/farm", "mysql+pymysql://u:***@host:3306/farm"),
        ("mysql+pymysql://u:secret@host:notaport/db", "mysql+pymysql://u:***@host:notaport/db"),
        ("mysql+pymysql://u:sec@ret@host/db", "mysql+pymysql://u:***@host/db"),  # an @ in the password
        ("mysql+pymysql://u:se/c?ret@host/db", "mysql+pymysql://u:***@host/db"),  # a / and a ? in it
        ("mysql+pymysql://:secret@host/db", "mysql+pymysql://:***@host/db"),
        ("mysql+pymysql://root:secret/farm", "mysql+pymysql://root:***/farm"),  # no @host: not a port
        ("u:secret@host/db", "u:***@host/db"),  # no scheme
        (
            "mysql+pymysql://u@h/db?password=secret&charset=utf8mb4",
            "mysql+pymysql://u@h/db?password=***&charset=utf8mb4",
        ),
        ("mysql+pymysql://u@h/db?charset=utf8mb4&passwd=secret", "mysql+pymysql://u@h/db?charset=utf8mb4&passwd=***"),
        # nothing to hide
        ("mysql+pymysql://host:3306/farm", "mysql+pymysql://host:3306/farm"),
        ("mysql+pymysql://u@[::1]:3306/farm", "mysql+pymysql://u@[::1]:3306/farm"),
        ("mysql+pymysql://[::1]:3306/farm", "mysql+pymysql://[::1]:3306/farm"),
        ("sqlite:///farm.db", "sqlite:///farm.db"),
        ("sqlite:///C:/farm.db", "sqlite:///C:/farm.db"),
        ("not a url", "not a url"),
    ],
)
def test_mask_url_hides_the_password_of_any_text(url, masked):
    assert mask_url(url) == masked


@pytest.mark.parametrize(
    "url, problem",
    [
        ("mysql+pymysql://u:secret@host:notaport/db", "has a port that is not a number (1 to 65535)"),
        ("mysql+pymysql://u:secret@host:/db", "has a port that is not a number (1 to 65535)"),
        ("mysql+pymysql://u:secret@host:99999/db", "has port 99999, outside 1 to 65535"),
        ("mysql+pymysql://u:secret@host:0/db", "has port 0, outside 1 to 65535"),
        ("mysql+pymysql://root:secret/farm", "has a port that is not a number (1 to 65535)"),
        ("u:secret@host/db", "is not a database URL"),
        ("nosuchdb://u:secret@host/db", "cannot be used: Can't load plugin: sqlalchemy.dialects:nosuchdb"),
        ("sqlite://u:secret@/x.db", "cannot be used: Invalid SQLite URL"),
    ],
)
def test_a_malformed_url_is_one_masked_line_naming_the_setting_and_the_problem(url, problem):
    with pytest.raises(DatabaseUrlError) as info:
        make_engine(url)
    message = str(info.value)
    assert message.startswith(f"FARM_DB_URL={mask_url(url)!r} {problem}")
    assert message.endswith(
        "(e.g. sqlite:///farm.db, mysql+pymysql://user:password@host:3306/farm "
        "or postgresql+psycopg://user:password@host:5432/farm)"
    )
    assert "secret" not in message and "\n" not in message
    # nothing chained that would print the raw URL, or a part of it, under a traceback
    error = info.value
    assert error.__cause__ is None and (error.__context__ is None or error.__suppress_context__)


def test_the_setting_named_is_the_one_given():
    with pytest.raises(DatabaseUrlError, match=r"^--db-url='mysql\+pymysql://u:\*\*\*@h:x/db' has a port"):
        make_engine("mysql+pymysql://u:secret@h:x/db", setting="--db-url")


def test_a_good_url_still_makes_an_engine(tmp_path):
    engine = make_engine(f"sqlite:///{tmp_path / 'farm.db'}")
    try:
        with engine.connect() as conn:
            assert conn.exec_driver_sql("select 1").scalar() == 1
    finally:
        engine.dispose()


# --- reads on SQLite ----------------------------------------------------------


class InThread:
    """Run ``fn`` in a thread, so that a read that blocks fails the test instead of hanging it."""

    def __init__(self, fn):
        self.result, self.error = None, None
        self.thread = threading.Thread(target=self._run, args=(fn,), daemon=True)
        self.started = time.monotonic()
        self.thread.start()

    def _run(self, fn):
        try:
            self.result = fn()
        except Exception as exc:  # reported by the test
            self.error = exc

    def done_within(self, seconds):
        self.thread.join(seconds)
        return not self.thread.is_alive()


@pytest.fixture
def held_write_lock(tmp_path):
    """A farm SQLite database with one keyword, and another connection in the middle of a
    write transaction on it (BEGIN IMMEDIATE and an UPDATE, not committed), as a crawl's writer."""
    path = tmp_path / "farm.db"
    url = f"sqlite:///{path}"
    upgrade(url)
    engine = make_engine(url)
    KeywordStore(engine).add_keywords([("boss", "北京", "python")])
    writer = sqlite3.connect(path, isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")
    writer.execute("UPDATE keyword SET job = 'uncommitted', jobs_found = 99")
    try:
        yield engine, writer
    finally:
        writer.execute("ROLLBACK")  # frees a read still waiting, if the test failed
        writer.close()
        engine.dispose()


def keyword_jobs(engine):
    with engine.begin() as conn:
        return conn.execute(select(Keyword.job, Keyword.jobs_found)).all()


def test_a_read_through_reader_does_not_wait_behind_a_writer(held_write_lock):
    engine, writer = held_write_lock
    read = InThread(lambda: keyword_jobs(reader(engine)))
    assert read.done_within(5), "the read waited behind the writer"
    assert read.error is None
    assert time.monotonic() - read.started < 1  # well under the 30 s busy timeout
    assert read.result == [("python", 0)]  # the last committed state

    # the engine itself still takes the write lock at BEGIN: its reads wait, as writes must
    blocked = InThread(lambda: keyword_jobs(engine))
    assert not blocked.done_within(0.5)
    writer.execute("COMMIT")
    assert blocked.done_within(5) and blocked.error is None
    assert blocked.result == [("uncommitted", 99)]
    writer.execute("BEGIN")  # for the fixture's ROLLBACK


def test_the_stores_reads_on_a_reader_answer_while_a_crawl_writes(held_write_lock):
    engine, _ = held_write_lock
    store = KeywordStore(reader(engine))
    read = InThread(lambda: (store.stats("boss"), store.list_keywords(), store.claimable("boss")))
    assert read.done_within(5), "the store's reads waited behind the writer"
    assert read.error is None
    stats, rows, claimable = read.result
    assert (stats[0]["total"], [r["job"] for r in rows], claimable) == (1, ["python"], 1)


def test_reader_shares_the_engines_pool(tmp_path):
    engine = make_engine(f"sqlite:///{tmp_path / 'farm.db'}")
    try:
        assert reader(engine).pool is engine.pool
        assert reader(engine).get_execution_options()["farm_read"] is True
        assert "farm_read" not in engine.get_execution_options()
    finally:
        engine.dispose()
