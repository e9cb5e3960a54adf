"""`farm stats` and `farm doctor` read a large keyword table through its indexes: on SQLite,
no query of theirs scans the table or an index for the day's rows (a 1M-row table answers
in a tenth of a second, where a scan costs seconds on a busy machine)."""

from datetime import UTC, date, datetime
from zoneinfo import ZoneInfo

from sqlalchemy import event

from farm.state import tallies
from farm.state.db import make_engine
from farm.state.migrate import upgrade
from farm.state.store import KeywordStore


def _plans(engine, read) -> list[str]:
    """The query plans (EXPLAIN QUERY PLAN's details) of the keyword queries ``read`` runs."""
    statements = []

    def note(conn, cursor, statement, parameters, context, executemany):
        if "FROM keyword" in statement and not statement.startswith("EXPLAIN"):
            statements.append((statement, parameters))

    event.listen(engine, "before_cursor_execute", note)
    try:
        read()
    finally:
        event.remove(engine, "before_cursor_execute", note)
    assert statements
    with engine.connect() as conn:
        return [
            " ".join(row[3] for row in conn.exec_driver_sql("EXPLAIN QUERY PLAN " + sql, params))
            for sql, params in statements
        ]


def test_the_days_rows_are_searched_not_scanned(tmp_path):
    engine = make_engine(f"sqlite:///{tmp_path}/plans.db")
    upgrade(engine)
    store = KeywordStore(engine)
    day = date(2026, 12, 3)
    stats = store.stats(day=day)

    def reads():
        store.stats(day=day)
        tallies.progress(engine, stats, now=datetime(2026, 12, 3, 8, tzinfo=UTC), tz=ZoneInfo("Asia/Shanghai"))
        tallies.failing_keywords(engine, day, tallies.Limits())

    for plan in _plans(engine, reads):
        assert "SCAN keyword" not in plan, plan
        if "last_requested_date=?" not in plan and "crawl_status=?" not in plan:
            # only the day's totals read every row of a source, through the narrowest index
            assert "COVERING INDEX ix_keyword_fresh (source=?)" in plan, plan
    engine.dispose()
