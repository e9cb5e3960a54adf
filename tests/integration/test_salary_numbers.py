"""Salary numbers in the database, in each posting's own pay period: filled by `farm db upgrade`
for postings already stored (and read again for those stored as CNY a month), and by the store as
postings arrive, on SQLite and MariaDB."""

import json
import os
import statistics
import subprocess
import sys
from datetime import UTC, date, datetime
from zoneinfo import ZoneInfo

import pytest
from click.testing import CliRunner
from sqlalchemy import select, text

from farm.cli import farm
from farm.report.build import write_report
from farm.salary import COLUMNS as SALARY
from farm.salary import backfill as backfill_module
from farm.salary import columns
from farm.salary.monthly import Conversion
from farm.state.db import make_engine
from farm.state.migrate import upgrade
from farm.state.models import JobPostingRow, Keyword
from farm.state.store import KeywordStore
from tests.migrated import migrated

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
    ("boss", "b4", "500元/时"),
    ("qcwy", "q3", "年薪28-42万·14薪"),
]
EXPECTED = {
    "b1": (15000, 25000, 13, "month"),
    "q1": (8000, 12000, None, "month"),
    "q2": (200, 300, None, "day"),
    "z1": (None, None, None, "none"),
    "z2": (8000, 16000, None, "month"),
    "b2": (None, None, None, None),  # no rule reads it
    "b3": (None, None, None, "none"),
    "b4": (500, 500, None, "hour"),
    "q3": (280000, 420000, 14, "year"),
}
# what 0006 stored for them: CNY a month at a fixed 21.75 days of 8 hours
AS_0006 = {
    "b1": (15000, 25000, 13, "month"),
    "q1": (8000, 12000, None, "month"),
    "q2": (4350, 6525, None, "day"),
    "z1": (None, None, None, None),
    "z2": (8000, 16000, None, "month"),
    "b2": (None, None, None, None),
    "b3": (None, None, None, None),
    "b4": (87000, 87000, None, "hour"),
    "q3": (23333, 35000, 14, "year"),
}


@pytest.fixture
def store(db_url):
    migrated(db_url)
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


def test_db_upgrade_reads_again_the_numbers_stored_as_cny_a_month_into_their_own_period(db_url):
    engine = make_engine(db_url)
    try:
        upgrade(engine, revision="0007")
        with engine.begin() as conn:
            conn.execute(
                T.insert(),
                [
                    {
                        "source": source,
                        "job_id": job_id,
                        "salary": salary,
                        "first_seen_at": NOW,
                        "last_seen_at": NOW,
                        **dict(zip(("salary_min", "salary_max", "salary_months", "salary_unit"), AS_0006[job_id])),
                    }
                    for source, job_id, salary in STORED
                ],
            )
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
    assert _numbers(store.engine)["q1"] == (100000, 200000, None, "year")
    store.upsert_postings([{**posting, "salary": "面议"}], NOW)
    assert _numbers(store.engine)["q1"] == (None, None, None, "none")
    store.upsert_postings([{**posting, "salary": "薪资保密"}], NOW)
    assert _numbers(store.engine)["q1"] == (None, None, None, None)


# one keyword's postings seen on DAY, one of each pay period, as the store writes them
DAY = date(2026, 12, 2)
TZ = ZoneInfo("Asia/Shanghai")
SEEN = [
    "15-25K",  # 20,000 a month
    "10-20K",  # 15,000
    "500元/时",  # 500 an hour: never 87,000 a month unasked
    "200-300元/天",  # 250 a day
    "年薪28-42万·14薪",  # 350,000 a year paid as 14 months: 25,000 a month
    "面议",
    "薪资保密",  # no rule reads it
]


@pytest.fixture
def seen_day(db_url):
    migrated(db_url)
    engine = make_engine(db_url)
    seen = datetime(2026, 12, 2, 4, tzinfo=UTC)
    keyword = {"id": 1, "source": "qcwy", "city": "北京", "job": "python", "created_at": seen, "updated_at": seen}
    rows = [
        {
            "source": "qcwy",
            "job_id": str(at),
            "salary": text,
            "city": "北京",
            "keyword_id": 1,
            "first_seen_at": seen,
            "last_seen_at": seen,
            **dict(zip(SALARY, columns("qcwy", text))),
        }
        for at, text in enumerate(SEEN)
    ]
    with engine.begin() as conn:
        conn.execute(Keyword.__table__.insert(), [keyword])
        conn.execute(T.insert(), rows)
    yield engine
    engine.dispose()


def _report(engine, tmp_path, conversion=None):
    out = tmp_path / "report.html"
    figures = write_report(engine, out, DAY, TZ, conversion=conversion)
    return figures, out.read_text(encoding="utf-8")


def test_the_reports_salaries_are_of_monthly_pay_alone_unless_a_conversion_is_switched_on(seen_day, tmp_path):
    figures, page = _report(seen_day, tmp_path)
    (row,) = figures.salary
    assert row["n"] == 2 and row["median"] == pytest.approx(statistics.median([20000, 15000]))
    assert "Monthly pay only" in page and "FARM_SALARY_CONVERT=1" in page

    factors = Conversion(days_a_month=21.75, hours_a_month=160)
    figures, page = _report(seen_day, tmp_path, factors)
    (row,) = figures.salary
    months = sorted([20000, 15000, 500 * 160, 250 * 21.75, 350000 / 14])
    assert row["n"] == 5
    assert [row["q1"], row["median"], row["q3"]] == pytest.approx(statistics.quantiles(months, n=4, method="inclusive"))
    basis = page.split("id=salary-basis>", 1)[1].split("</p>", 1)[0]
    assert "× 21.75 days" in basis and "× 160 hours" in basis and "the months it is paid as" in basis


def test_the_report_shows_each_sites_share_of_salary_texts_no_rule_reads(seen_day, tmp_path):
    figures, page = _report(seen_day, tmp_path)
    assert figures.salary_unread == [{"source": "qcwy", "seen": len(SEEN), "unread": 1}]
    assert f"<td>qcwy</td><td class=n>{len(SEEN)}</td><td class=n>1</td><td>14.3%</td>" in page


# the command reads its settings alike on any database (the report's figures on each: the tests above);
# `make soak` (FARM_SOAK=1) runs it on MariaDB too
@pytest.mark.parametrize("db_url", ["sqlite", "mariadb"] if os.environ.get("FARM_SOAK") else ["sqlite"], indirect=True)
def test_farm_report_converts_with_the_factors_its_settings_name(seen_day, db_url, tmp_path):
    out = tmp_path / "report.html"
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("FARM_")},
        "FARM_SALARY_CONVERT": "1",
        "FARM_SALARY_HOURS_A_MONTH": "160",
    }
    command = [sys.executable, "-m", "farm", "--db-url", db_url, "report", "--date", str(DAY), "--out", str(out)]
    done = subprocess.run(command, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    data = json.loads(out.read_text(encoding="utf-8").split('id="farm-figures">', 1)[1].split("</script>", 1)[0])
    assert data["salary"][0]["n"] == 5
    assert "× 160 hours" in data["salary_conversion"] and "× 21.75 days" in data["salary_conversion"]
    bad = subprocess.run(
        command,
        env={**env, "FARM_SALARY_HOURS_A_MONTH": "-3"},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert bad.returncode != 0 and "FARM_SALARY_HOURS_A_MONTH='-3'" in bad.stderr


def test_farm_stats_shows_each_sites_share_of_salary_texts_no_rule_reads(seen_day, db_url):
    args = ["--db-url", db_url, "stats", "--date", str(DAY)]
    result = CliRunner().invoke(farm, [*args, "--json"])
    assert result.exit_code == 0, result.output
    rows = {row["source"]: row["salary"] for row in json.loads(result.output)}
    assert rows["qcwy"] == {"seen": len(SEEN), "unread": 1}
    assert rows["boss"] == {"seen": 0, "unread": 0}
    result = CliRunner().invoke(farm, args)
    assert result.exit_code == 0, result.output
    table = result.output.split("salary texts no rule reads", 1)[1].split("\n\n", 1)[0]  # the table alone
    assert [line.split() for line in table.splitlines() if line.startswith("qcwy")] == [
        ["qcwy", str(len(SEEN)), "1", "14.3%"]
    ]
