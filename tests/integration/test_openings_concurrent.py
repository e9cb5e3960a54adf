"""Openings while a crawl writes postings, on the database servers (READ COMMITTED): an update reads the
postings in no opening once, so a posting committed while it runs waits for the next update; and `farm
report` run by an account that may only read gives the openings stored, the new postings left waiting."""

import uuid
from datetime import timedelta

from click.testing import CliRunner
from sqlalchemy import event, func, select, text
from sqlalchemy.engine import Engine, make_url

from farm.cli import farm
from farm.openings.stored import update_openings
from farm.state.db import make_engine
from farm.state.models import OpeningPosting
from farm.state.store import KeywordStore
from tests.integration.test_openings_stored import DAY_1, FIRST, SECOND
from tests.migrated import migrated


def test_postings_a_crawl_commits_during_an_update_wait_for_the_next(server_db_url):
    migrated(server_db_url)
    engine = make_engine(server_db_url)
    store = KeywordStore(engine)
    store.upsert_postings(FIRST, DAY_1)
    crawl = KeywordStore(make_engine(server_db_url))
    committed = []

    def crawl_commits(conn, cursor, statement, parameters, context, executemany):
        # right after the update's read of the postings waiting, the crawl commits three more
        if not committed and statement.lstrip().upper().startswith("SELECT") and "FROM opening_waiting" in statement:
            committed.append(crawl.upsert_postings(SECOND, DAY_1 + timedelta(hours=1)))

    event.listen(Engine, "after_cursor_execute", crawl_commits)  # the update's own engine (no read deadline)
    try:
        first = update_openings(engine)
    finally:
        event.remove(Engine, "after_cursor_execute", crawl_commits)
    assert committed and first.postings == 3
    assert update_openings(engine).postings == 3
    with engine.connect() as connection:
        assert connection.execute(select(func.count()).select_from(OpeningPosting)).scalar_one() == 6
    crawl.close()
    store.close()


def _read_only_account(url: str):
    """A new account that may only read ``url``'s database: its URL, and how to drop it."""
    parsed = make_url(url)
    name = f"farm_ro_{uuid.uuid4().hex[:8]}"
    admin = make_engine(url)
    with admin.begin() as connection:
        if parsed.get_backend_name() == "postgresql":
            connection.execute(text(f"CREATE ROLE {name} LOGIN PASSWORD 'ro'"))
            connection.execute(text(f"GRANT USAGE ON SCHEMA public TO {name}"))
            connection.execute(text(f"GRANT SELECT ON ALL TABLES IN SCHEMA public TO {name}"))
        else:
            connection.execute(text(f"CREATE USER '{name}'@'%' IDENTIFIED BY 'ro'"))
            connection.execute(text(f"CREATE USER '{name}'@'localhost' IDENTIFIED BY 'ro'"))
            for host in ("%", "localhost"):
                connection.execute(text(f"GRANT SELECT ON `{parsed.database}`.* TO '{name}'@'{host}'"))

    def drop():
        with admin.begin() as connection:
            if parsed.get_backend_name() == "postgresql":
                connection.execute(text(f"DROP OWNED BY {name}"))
                connection.execute(text(f"DROP ROLE {name}"))
            else:
                for host in ("%", "localhost"):
                    connection.execute(text(f"DROP USER '{name}'@'{host}'"))
        admin.dispose()

    return parsed.set(username=name, password="ro").render_as_string(hide_password=False), drop


def test_report_by_an_account_that_may_only_read_gives_the_openings_stored(server_db_url, tmp_path):
    migrated(server_db_url)
    engine = make_engine(server_db_url)
    store = KeywordStore(engine)
    store.upsert_postings(FIRST, DAY_1)
    update_openings(engine)
    store.upsert_postings(SECOND, DAY_1 + timedelta(hours=1))
    reader_url, drop = _read_only_account(server_db_url)
    try:
        out = tmp_path / "report.html"
        args = ["--db-url", reader_url, "report", "--date", "2026-05-08", "--out", str(out)]
        result = CliRunner().invoke(farm, args)
        assert result.exit_code == 0, result.output
        page = out.read_text(encoding="utf-8")
        assert "2 openings from 6 postings" in page and "Posted on two sites: 1 openings; on three: 0." in page
        assert "3 postings are in no opening yet" in page
        stats = CliRunner().invoke(farm, ["--db-url", reader_url, "stats"])
        assert stats.exit_code == 0, stats.output
    finally:
        drop()
        store.close()
