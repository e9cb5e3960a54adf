"""Salary numbers in the database: filled by `farm db upgrade` for postings already stored,
and by the store as postings arrive, on SQLite and MariaDB."""

from datetime import UTC, datetime

import pytest
from click.testing import CliRunner
from sqlalchemy import select, text

from farm.cli import farm
from farm.salary import backfill as backfill_module
from farm.state.db import make_engine
from farm.state.migrate import upgrade
from farm.state.models import JobPostingRow
from farm.state.store import KeywordStore

T = JobPostingRow.__table__
NOW = datetime(2026, 12, 3, 2, 0, tzinfo=UTC)
STORED = [  # (source, job_id, salary) stored before the table had salary numbers
    ("boss", "b1", "15-25K·13薪"),
    ("qcwy", "q1", "8千-1.2万"),
    ("qcwy", "q2", "200-300元/天"),
    ("zhilian", "z1", "面议"),
    ("zhilian", "z2", "8000-16000元"),
    ("boss", "b2", "薪资保密"),
    ("boss", "b3", None),
]
EXPECTED = {
    "b1": (15000, 25000, 13, "month"),
    "q1": (8000, 12000, None, "month"),
    "q2": (4350, 6525, None, "day"),
    "z1": (None, None, None, None),
    "z2": (8000, 16000, None, "month"),
    "b2": (None, None, None, None),
    "b3": (None, None, None, None),
}


@pytest.fixture
def store(db_url):
    upgrade(db_url)
    engine = make_engine(db_url)
    yield KeywordStore(engine, timezone="Asia/Shanghai")
    engine.dispose()


def _numbers(engine) -> dict:
    with engine.connect() as conn:
        rows = conn.execute(select(T.c.job_id, T.c.salary_min, T.c.salary_max, T.c.salary_months, T.c.salary_unit))
        return {job_id: tuple(values) for job_id, *values in rows}


def test_db_upgrade_fills_the_salary_numbers_of_postings_already_stored_in_batches(db_url, monkeypatch):
    engine = make_engine(db_url)
    try:
        upgrade(engine, revision="0003")
        with engine.begin() as conn:
            conn.execute(
                text(
                    "INSERT INTO job_posting (source, job_id, salary, first_seen_at, last_seen_at) "
                    "VALUES (:source, :job_id, :salary, :now, :now)"
                ),
                [
                    {"source": s, "job_id": j, "salary": salary, "now": NOW.replace(tzinfo=None)}
                    for s, j, salary in STORED
                ],
            )
        monkeypatch.setattr(backfill_module.backfill, "__defaults__", (2,))  # batches of 2, the last one short
        result = CliRunner().invoke(farm, ["--db-url", db_url, "db", "upgrade"])
        assert result.exit_code == 0, result.output
        assert _numbers(engine) == EXPECTED
    finally:
        engine.dispose()


def test_the_store_writes_the_salary_numbers_as_postings_arrive_and_as_their_text_changes(store):
    posting = {"source": "qcwy", "job_id": "q1", "salary": "1-1.5万", "title": "python"}
    store.upsert_postings([posting], NOW)
    assert _numbers(store.engine)["q1"] == (10000, 15000, None, "month")
    store.upsert_postings([{**posting, "salary": "10-20万/年"}], NOW)
    assert _numbers(store.engine)["q1"] == (8333, 16667, None, "year")
    store.upsert_postings([{**posting, "salary": "面议"}], NOW)
    assert _numbers(store.engine)["q1"] == (None, None, None, None)
