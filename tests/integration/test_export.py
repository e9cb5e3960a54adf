"""`farm export`: the day's postings as CSV, JSON lines and Parquet, the same rows in each, on
SQLite and MariaDB; streamed, so memory does not grow with the number of postings."""

import csv
import io
import json
import tracemalloc
from datetime import UTC, datetime, timedelta

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from sqlalchemy import insert, select

from farm.cli import farm
from farm.report import export
from farm.report.days import day_span
from farm.state.db import make_engine
from farm.state.migrate import upgrade
from farm.state.models import JobPostingRow
from tests.report_data import DAY, TZ, fill

INTS = ("id", "salary_min", "salary_max", "salary_months", "keyword_id")
TIMES = ("published_at", "first_seen_at", "last_seen_at")


def _expected(engine) -> list[dict]:
    span = day_span(DAY, TZ)
    T = JobPostingRow.__table__
    with engine.connect() as conn:
        rows = conn.execute(
            select(*(T.c[name] for name in export.COLUMNS))
            .where(T.c.first_seen_at < span.end, T.c.last_seen_at >= span.start)
            .order_by(T.c.id)
        )
        return [dict(row._mapping) for row in rows]


def _from_csv(data: bytes) -> list[dict]:
    rows = []
    for row in csv.DictReader(io.StringIO(data.decode("utf-8"), newline="")):
        row = {name: (None if value == "" else value) for name, value in row.items()}
        for name in INTS:
            row[name] = None if row[name] is None else int(row[name])
        for name in TIMES:
            row[name] = None if row[name] is None else datetime.fromisoformat(row[name])
        row["tags"] = None if row["tags"] is None else json.loads(row["tags"])
        rows.append(row)
    return rows


def _from_jsonl(data: bytes) -> list[dict]:
    rows = [json.loads(line) for line in data.decode("utf-8").splitlines()]
    for row in rows:
        for name in TIMES:
            row[name] = None if row[name] is None else datetime.fromisoformat(row[name])
    return rows


def _from_parquet(path) -> list[dict]:
    rows = pq.read_table(path).to_pylist()
    for row in rows:
        row["tags"] = None if row["tags"] is None else json.loads(row["tags"])
    return rows


def test_csv_jsonl_and_parquet_hold_the_same_rows_the_days_postings_with_salary_numbers(every_db_url, tmp_path):
    upgrade(every_db_url)
    engine = make_engine(every_db_url)
    try:
        fill(engine)
        expected = _expected(engine)
    finally:
        engine.dispose()
    assert len(expected) > 50 and any(row["salary_min"] for row in expected)
    read = {
        "csv": lambda path: _from_csv(path.read_bytes()),
        "jsonl": lambda path: _from_jsonl(path.read_bytes()),
        "parquet": _from_parquet,
    }
    for fmt, reader in read.items():
        out = tmp_path / f"day.{fmt}"
        result = CliRunner().invoke(
            farm, ["--db-url", every_db_url, "export", "--date", str(DAY), "--format", fmt, "--out", str(out)]
        )
        assert result.exit_code == 0, result.output
        assert f"{len(expected)} postings seen on {DAY}" in result.output
        assert reader(out) == expected, fmt


def test_csv_goes_to_standard_output_with_dash(sqlite_url, tmp_path):
    upgrade(sqlite_url)
    result = CliRunner().invoke(
        farm, ["--db-url", sqlite_url, "export", "--date", str(DAY), "--format", "csv", "--out", "-"]
    )
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[0] == ",".join(export.COLUMNS)
    assert result.stderr.strip() == f"0 postings seen on {DAY} written to standard output"


def _many(engine, count: int) -> None:
    seen = datetime(2026, 12, 2, 4, tzinfo=UTC)
    rows = [
        {
            "source": "qcwy",
            "job_id": str(at),
            "title": "数据工程师 " * 8,
            "salary": "1.5-2.5万·13薪",
            "salary_min": 15000,
            "salary_max": 25000,
            "salary_months": 13,
            "salary_unit": "month",
            "company": "某科技有限公司",
            "city": "上海",
            "tags": ["Python", "Spark"],
            "url": f"https://x.invalid/{at}",
            "first_seen_at": seen - timedelta(days=at % 5),
            "last_seen_at": seen,
        }
        for at in range(count)
    ]
    with engine.begin() as conn:
        conn.execute(insert(JobPostingRow.__table__), rows)


def _peak(engine, fmt: str, path) -> int:
    tracemalloc.start()
    try:
        with open(path, "wb") as out:
            export.write(engine, out, DAY, TZ, fmt, chunk=100)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("fmt", export.FORMATS)
def test_memory_stays_flat_however_many_postings(tmp_path, fmt):
    engines = {}
    try:
        for count in (500, 2000):
            url = f"sqlite:///{tmp_path / f'{count}.db'}"
            upgrade(url)
            engines[count] = make_engine(url)
            _many(engines[count], count)
        _peak(engines[500], fmt, tmp_path / "warm")  # the first run compiles and caches: not what is measured
        peaks = {count: _peak(engine, fmt, tmp_path / f"{count}.{fmt}") for count, engine in engines.items()}
    finally:
        for engine in engines.values():
            engine.dispose()
    # four times the postings, not four times the memory: a chunk's worth either way
    assert peaks[2000] < peaks[500] * 1.3, peaks
