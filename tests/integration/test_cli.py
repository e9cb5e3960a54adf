"""The `farm` command, run through click's CliRunner on SQLite and on the real MariaDB."""

import json
import sqlite3
import subprocess
import sys
import time
import unicodedata
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlalchemy import insert, select, update

import farm.cli.context
import farm.cli.keywordtable
from farm.cli import farm as farm_command
from farm.sites.cities import accepted_cities
from farm.state.db import URL_EXAMPLES, make_engine
from farm.state.migrate import head_revision, require_current
from farm.state.models import Keyword
from farm.state.store import KeywordStore

REPO = Path(__file__).resolve().parents[2]
DEMO_KEYWORDS = REPO / "farm" / "demo" / "keywords.csv"
K = Keyword.__table__
DAY = date(2024, 5, 1)


def run(url, *args):
    # catch_exceptions=False: an unexpected exception fails the test instead of hiding in result
    result = CliRunner(catch_exceptions=False).invoke(farm_command, ["--db-url", url, *args])
    assert "Traceback" not in result.output
    return result


def upgraded(url):
    result = run(url, "db", "upgrade")
    assert result.exit_code == 0, result.output
    return url


def keyword_rows(url):
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            return [tuple(r) for r in conn.execute(select(K).order_by(K.c.id))]
    finally:
        engine.dispose()


def set_rows(url, where, **values):
    engine = make_engine(url)
    try:
        with engine.begin() as conn:
            conn.execute(update(K).where(*where).values(**values))
    finally:
        engine.dispose()


def key(source, city, job):
    return (K.c.source == source, K.c.city == city, K.c.job == job)


def display_width(ch):
    """Terminal columns of one character, as a CJK-aware terminal draws it."""
    return 2 if unicodedata.east_asian_width(ch) in "WF" else 1


def parse_table(text):
    """Rows of the first aligned table as dicts, cut at the display columns its rule line marks.

    If CJK text were padded by characters instead of display columns, the cuts would
    fall inside cells and the values would not match.
    """
    lines = text.rstrip("\n").split("\n")
    rule_at = next(i for i, line in enumerate(lines) if set(line) <= {"-", " "} and line)
    spans, col = [], 0
    for dashes in lines[rule_at].split("  "):
        spans.append((col, col + len(dashes)))
        col += len(dashes) + 2

    def cut(line):
        cells, col = [""] * len(spans), 0
        for ch in line:
            for i, (start, end) in enumerate(spans):
                if start <= col < end:
                    cells[i] += ch
                    break
            else:
                assert ch == " ", f"{line!r}: {ch!r} falls between columns"
            col += display_width(ch)
        return [c.strip() for c in cells]

    headers = cut(lines[rule_at - 1])
    body = lines[rule_at + 1 :]
    if "" in body:  # a blank line ends the table
        body = body[: body.index("")]
    return [dict(zip(headers, cut(line))) for line in body]


def write_csv(tmp_path, content, name="keywords.csv"):
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    return path


# --- farm db upgrade --------------------------------------------------------


def test_db_upgrade_brings_the_database_to_head_and_says_so(db_url):
    masked = db_url  # no password in the test URLs
    for _ in range(2):  # a second upgrade is a no-op
        result = run(db_url, "db", "upgrade")
        assert result.exit_code == 0
        assert result.output == f"database at {masked} is at revision {head_revision()} (head)\n"
    engine = make_engine(db_url)
    try:
        require_current(engine)  # raises if not at head
    finally:
        engine.dispose()


@pytest.mark.parametrize(
    "args",
    [
        ["keywords", "list"],
        ["keywords", "add", "boss", "北京", "python"],
        ["keywords", "import", str(DEMO_KEYWORDS)],
        ["stats"],
        ["stats", "--json"],
        ["reap"],
    ],
)
def test_commands_refuse_a_database_that_is_not_upgraded(sqlite_url, args):
    result = run(sqlite_url, *args)
    assert result.exit_code == 1
    assert result.output.startswith(f"Error: the database at {sqlite_url} is empty (no farm schema)")
    assert "run `farm db upgrade`" in result.output
    assert result.output.count("\n") == 1


def test_not_upgraded_mariadb_is_refused(mariadb_url):
    result = run(mariadb_url, "keywords", "import", str(DEMO_KEYWORDS))
    assert result.exit_code == 1
    assert "run `farm db upgrade`" in result.output
    assert result.output.count("\n") == 1


# --- farm keywords import ---------------------------------------------------


def test_importing_the_same_file_twice_adds_nothing(db_url):
    upgraded(db_url)
    first = run(db_url, "keywords", "import", str(DEMO_KEYWORDS))
    assert first.exit_code == 0
    assert first.output == "imported 36 new keywords (0 already present)\n"
    rows = keyword_rows(db_url)
    assert len(rows) == 36
    second = run(db_url, "keywords", "import", str(DEMO_KEYWORDS))
    assert second.exit_code == 0
    assert second.output == "imported 0 new keywords (36 already present)\n"
    assert keyword_rows(db_url) == rows


def test_import_counts_new_and_present_and_strips_blanks(sqlite_url, tmp_path):
    upgraded(sqlite_url)
    assert run(sqlite_url, "keywords", "add", "boss", "北京", "python").exit_code == 0
    path = write_csv(tmp_path, "\ufeffsource , city , job\n boss , 北京 , python \nqcwy,上海,前端\n")
    result = run(sqlite_url, "keywords", "import", str(path))
    assert result.output == "imported 1 new keywords (1 already present)\n"
    listed = [(r["source"], r["city"], r["job"]) for r in parse_table(run(sqlite_url, "keywords", "list").output)]
    assert listed == [("boss", "北京", "python"), ("qcwy", "上海", "前端")]


def test_import_writes_in_chunks_after_checking_the_whole_file(sqlite_url, tmp_path, monkeypatch):
    upgraded(sqlite_url)
    monkeypatch.setattr(farm.cli.keywordtable, "IMPORT_CHUNK", 7)
    calls = []
    real_add = KeywordStore.import_keywords

    def spy(self, rows):
        rows = list(rows)
        calls.append(len(rows))
        return real_add(self, rows)

    monkeypatch.setattr(KeywordStore, "import_keywords", spy)
    lines = ["source,city,job"] + [f"zhilian,杭州,job{i}" for i in range(30)]
    result = run(sqlite_url, "keywords", "import", str(write_csv(tmp_path, "\n".join(lines))))
    assert result.output == "imported 30 new keywords (0 already present)\n"
    assert calls == [7, 7, 7, 7, 2]

    calls.clear()
    bad = lines + [f"zhilian,杭州,more{i}" for i in range(20)] + ["zhilian,杭州"]
    result = run(sqlite_url, "keywords", "import", str(write_csv(tmp_path, "\n".join(bad))))
    assert result.exit_code == 1
    assert calls == []  # the bad last line stopped the import before any write
    assert len(keyword_rows(sqlite_url)) == 30


def test_one_search_is_stored_once_whatever_its_case_or_its_citys_spelling(every_db_url, tmp_path):
    upgraded(every_db_url)
    content = (
        "source,city,job\nboss,北京,Python\nboss,北京,python\nzhilian,530,Java\nzhilian,北京,Java\n"
        "zhilian,北京,JAVA\nqcwy,上海,Ｇｏ\nboss,北京,Python\n"
    )
    result = run(every_db_url, "keywords", "import", str(write_csv(tmp_path, content)))
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == [
        "imported 3 new keywords (0 already present, 1 repeated in the file, 3 the same search as another)",
        "  boss,北京,python is the same search as boss,北京,Python: stored once",
        "  zhilian,北京,Java is the same search as zhilian,530,Java: stored once",
        "  zhilian,北京,JAVA is the same search as zhilian,530,Java: stored once",
    ]
    stored = [(r[1], r[2], r[3]) for r in keyword_rows(every_db_url)]
    assert stored == [("boss", "北京", "Python"), ("zhilian", "北京", "Java"), ("qcwy", "上海", "Ｇｏ")]

    again = write_csv(tmp_path, "source,city,job\nboss,101010100,PYTHON\nqcwy,020000,go\nboss,北京,Python\n", "b.csv")
    result = run(every_db_url, "keywords", "import", str(again))
    assert result.output.splitlines() == [
        "imported 0 new keywords (1 already present, 2 the same search as another)",
        "  boss,101010100,PYTHON is the same search as boss,北京,Python: stored once",
        "  qcwy,020000,go is the same search as qcwy,上海,Ｇｏ: stored once",
    ]
    result = run(every_db_url, "keywords", "add", "zhilian", "530", "java")
    assert result.output == "already present as the same search: zhilian, 北京, Java\n"
    assert [(r[1], r[2], r[3]) for r in keyword_rows(every_db_url)] == stored


def test_a_keyword_stored_under_a_city_code_is_kept_and_matched(sqlite_url, tmp_path):
    # a row stored before cities had one spelling: kept as it is, and the same search is not stored again
    upgraded(sqlite_url)
    engine = make_engine(sqlite_url)
    now = datetime.now(UTC)
    with engine.begin() as conn:
        conn.execute(insert(K).values(source="zhilian", city="530", job="java", created_at=now, updated_at=now))
    engine.dispose()
    before = keyword_rows(sqlite_url)
    result = run(sqlite_url, "keywords", "import", str(write_csv(tmp_path, "source,city,job\nzhilian,北京,Java\n")))
    assert result.output.splitlines()[1] == "  zhilian,北京,Java is the same search as zhilian,530,java: stored once"
    assert keyword_rows(sqlite_url) == before


def test_an_import_names_every_bad_line_at_once_and_writes_nothing(sqlite_url, tmp_path):
    upgraded(sqlite_url)
    path = write_csv(tmp_path, "source,city,job\nboss,北京,go\nlagou,北京,go\nboss,拉萨,go\nqcwy,上海\nqcwy,上海,go\n")
    result = run(sqlite_url, "keywords", "import", str(path))
    assert result.exit_code == 1
    assert result.output.splitlines() == [
        f"Error: {path}: 3 bad lines, the file refused whole:",
        "  line 3: unknown source 'lagou' (expected one of: boss, qcwy, zhilian)",
        f"  line 4: unknown city '拉萨' for boss: use {accepted_cities('boss')}",
        "  line 5: expected 3 fields (source,city,job), found 2",
    ]
    assert keyword_rows(sqlite_url) == []


BAD_FILES = [
    pytest.param(
        "source,city,job\nboss,北京,go\nqcwy,上海,go\nlagou,北京,java\n",
        "line 4: unknown source 'lagou' (expected one of: boss, qcwy, zhilian)",
        id="unknown-source",
    ),
    pytest.param("source,city,job\nboss,北京,go\nboss,,go\n", "line 3: empty city", id="empty-field"),
    pytest.param(
        "source,city,job\nboss,北京,go\nboss,北京," + "j" * 200 + "\n",
        "line 3: job is 200 characters long (at most 128)",
        id="over-long",
    ),
    pytest.param(
        "source,city,job\nboss,北京,go\nboss,上海\n",
        "line 3: expected 3 fields (source,city,job), found 2",
        id="column-count",
    ),
    pytest.param(
        "source,city,job\nboss,101020100,go\nboss,北京,go\n".encode("gbk"),
        "line 3: not UTF-8 text (byte 0xb1 at byte 6); save the file as UTF-8",
        id="gbk",
    ),
    pytest.param(
        b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03\xed\xc1\x01\r\x00\x00\x00\xc2\xa0\xf7Om",
        "line 1: binary data (a NUL byte): not a CSV text file",
        id="binary",
    ),
    pytest.param(
        "boss,北京,go\nqcwy,上海,go\n",
        "line 1: expected the header 'source,city,job', found 'boss,北京,go'",
        id="missing-header",
    ),
    pytest.param(
        "source,town,job\nboss,北京,go\n",
        "line 1: expected the header 'source,city,job', found 'source,town,job'",
        id="wrong-header",
    ),
    pytest.param("", "line 1: the file is empty (expected the header source,city,job)", id="empty"),
    pytest.param(
        "source,city,job\nboss,北京,go\nzhilian,拉萨,go\n",
        "line 3: unknown city '拉萨' for zhilian: use one of 全国, 北京, 上海, 广州, 深圳, 杭州, 成都, 武汉, 南京, "
        "苏州, 天津, 重庆, 西安, 佛山 or a zhilian city code (3 to 6 digits, e.g. 530)",
        id="unknown-city",
    ),
    pytest.param(
        "source,city,job\nboss,北京,go\nqcwy,101010100,go\n",
        "line 3: unknown city '101010100' for qcwy: use one of 全国, 北京, 上海, 广州, 深圳, 杭州, 天津, 重庆, "
        "成都, 南京, 广东, 广东省, 江苏, 江苏省, 浙江, 浙江省, 苏州, 武汉, 西安, 佛山 or a qcwy city code "
        "(6 digits, e.g. 010000)",
        id="another-sites-code",
    ),
    pytest.param(
        "source,city,job\nboss,北京,go\nboss,北京,java\x1b[2J\n",
        "line 3: job 'java\\x1b[2J' has a control character, U+001B, at character 5: remove it",
        id="escape",
    ),
    pytest.param(
        "source,city,job\nboss,北京,go\nboss,北京,\u202etsetnoc\n",
        "line 3: job '\\u202etsetnoc' has a format character (invisible, or reordering the text), "
        "U+202E RIGHT-TO-LEFT OVERRIDE, at character 1: remove it",
        id="bidi-override",
    ),
    pytest.param(
        "source,city,job\nboss,北京,go\nboss,北\u200b京,go\n",
        "line 3: city '北\\u200b京' has a format character (invisible, or reordering the text), "
        "U+200B ZERO WIDTH SPACE, at character 2: remove it",
        id="zero-width",
    ),
]


@pytest.mark.parametrize("content, problem", BAD_FILES)
def test_rejected_file_writes_no_row(sqlite_url, tmp_path, content, problem):
    upgraded(sqlite_url)
    run(sqlite_url, "keywords", "add", "zhilian", "深圳", "java")
    before = keyword_rows(sqlite_url)
    path = write_csv(tmp_path, content)
    result = run(sqlite_url, "keywords", "import", str(path))
    assert result.exit_code == 1
    assert result.output == f"Error: {path} line {problem.split('line ', 1)[1]}\n"
    assert keyword_rows(sqlite_url) == before


def test_rejected_file_writes_no_row_on_mariadb(mariadb_url, tmp_path):
    upgraded(mariadb_url)
    run(mariadb_url, "keywords", "import", str(DEMO_KEYWORDS))
    before = keyword_rows(mariadb_url)
    lines = ["source,city,job"] + [f"boss,成都,job{i}" for i in range(50)] + ["boss,成都,"]
    path = write_csv(tmp_path, "\n".join(lines) + "\n", name="more.csv")
    result = run(mariadb_url, "keywords", "import", str(path))
    assert result.exit_code == 1
    assert result.output == f"Error: {path} line 52: empty job\n"
    assert keyword_rows(mariadb_url) == before


def test_import_of_a_missing_file_is_a_usage_error(sqlite_url, tmp_path):
    upgraded(sqlite_url)
    result = run(sqlite_url, "keywords", "import", str(tmp_path / "nope.csv"))
    assert result.exit_code == 2
    assert "does not exist" in result.output


# --- farm keywords add / list -----------------------------------------------


def test_add_says_added_or_already_present(db_url):
    upgraded(db_url)
    first = run(db_url, "keywords", "add", "boss", " 北京 ", "python")
    assert (first.exit_code, first.output) == (0, "added: boss, 北京, python\n")
    again = run(db_url, "keywords", "add", "boss", "北京", "python")
    assert (again.exit_code, again.output) == (0, "already present: boss, 北京, python\n")
    assert [(r[1], r[2], r[3]) for r in keyword_rows(db_url)] == [("boss", "北京", "python")]


@pytest.mark.parametrize(
    "args, message",
    [
        (["lagou", "北京", "python"], "unknown source 'lagou' (expected one of: boss, qcwy, zhilian)"),
        (["boss", "", "python"], "empty city"),
        (["boss", "北京", "x" * 129], "job is 129 characters long (at most 128)"),
        (
            ["boss", "火星", "python"],
            "unknown city '火星' for boss: use one of 全国, 北京, 上海, 广州, 深圳, 杭州, "
            "成都, 武汉, 南京, 天津, 重庆, 西安, 苏州, 佛山 or a boss city code "
            "(9 digits, e.g. 101010100)",
        ),
        (["zhilian", "101010100", "python"], "unknown city '101010100' for zhilian: use one of "),
        (["boss", "北京", "py\tthon"], "job 'py\\tthon' has a control character, U+0009, at character 3: remove it"),
        (["boss", "北京", "py\nthon"], "job 'py\\nthon' has a control character, U+000A, at character 3: remove it"),
        (["boss", "北京", "java\x00"], "job 'java\\x00' has a control character, U+0000, at character 5: remove it"),
        (
            ["qcwy", "北京\u2069", "go"],
            "city '北京\\u2069' has a format character (invisible, or reordering the "
            "text), U+2069 POP DIRECTIONAL ISOLATE, at character 3: remove it",
        ),
    ],
)
def test_add_refuses_a_bad_keyword(sqlite_url, args, message):
    upgraded(sqlite_url)
    result = run(sqlite_url, "keywords", "add", *args)
    assert result.exit_code == 1
    assert result.output.startswith(f"Error: {message}") and result.output.count("\n") == 1
    assert keyword_rows(sqlite_url) == []


def test_list_filters_and_aligns_cjk(sqlite_url):
    upgraded(sqlite_url)
    run(sqlite_url, "keywords", "import", str(DEMO_KEYWORDS))
    set_rows(
        sqlite_url,
        key("qcwy", "上海", "前端"),
        crawl_status="failed",
        last_requested_date=DAY,
        last_completed_page=2,
        total_pages=9,
        jobs_found=40,
        retry_count=1,
        error_message="HTTP 500\non page 3",
    )
    set_rows(sqlite_url, key("qcwy", "深圳", "java"), crawl_status="completed", last_requested_date=DAY)

    everything = parse_table(run(sqlite_url, "keywords", "list").output)
    assert len(everything) == 36
    assert list(everything[0]) == [
        "id",
        "source",
        "city",
        "job",
        "status",
        "page/total",
        "jobs",
        "retries",
        "last requested",
        "error",
    ]
    assert everything[0] == {
        "id": "1",
        "source": "boss",
        "city": "北京",
        "job": "python",
        "status": "idle",
        "page/total": "0/-",
        "jobs": "0",
        "retries": "0",
        "last requested": "-",
        "error": "-",
    }

    qcwy = parse_table(run(sqlite_url, "keywords", "list", "--source", "qcwy").output)
    assert len(qcwy) == 12 and {r["source"] for r in qcwy} == {"qcwy"}

    failed = parse_table(run(sqlite_url, "keywords", "list", "--status", "failed").output)
    assert failed == [
        {
            "id": failed[0]["id"],
            "source": "qcwy",
            "city": "上海",
            "job": "前端",
            "status": "failed",
            "page/total": "2/9",
            "jobs": "40",
            "retries": "1",
            "last requested": "2024-05-01",
            "error": "HTTP 500 on page 3",
        }
    ]

    both = run(sqlite_url, "keywords", "list", "--source", "qcwy", "--status", "completed")
    assert [(r["city"], r["job"]) for r in parse_table(both.output)] == [("深圳", "java")]

    limited = parse_table(run(sqlite_url, "keywords", "list", "--limit", "2").output)
    assert [r["id"] for r in limited] == ["1", "2"]

    none = run(sqlite_url, "keywords", "list", "--source", "zhilian", "--status", "partial")
    assert none.output == "no keywords\n"

    bad = run(sqlite_url, "keywords", "list", "--status", "done")
    assert bad.exit_code == 2


# --- farm stats -------------------------------------------------------------


def seed_day(url):
    """Demo keywords; on DAY: boss 2 completed (10+5 jobs), 1 failed, 1 partial (3 jobs), 1 crawling."""
    upgraded(url)
    run(url, "keywords", "import", str(DEMO_KEYWORDS))
    for (city, job), status, jobs in [
        (("北京", "python"), "completed", 10),
        (("北京", "java"), "completed", 5),
        (("北京", "前端"), "failed", 0),
        (("上海", "python"), "partial", 3),
        (("上海", "java"), "crawling", 0),
    ]:
        set_rows(url, key("boss", city, job), crawl_status=status, last_requested_date=DAY, jobs_found=jobs)
    # another day's work is not counted on DAY
    set_rows(
        url,
        key("qcwy", "北京", "python"),
        crawl_status="completed",
        last_requested_date=DAY - timedelta(days=1),
        jobs_found=99,
    )


def stat(source, total, used, crawling=0, completed=0, failed=0, partial=0, jobs=0):
    return {
        "date": DAY.isoformat(),
        "source": source,
        "total": total,
        "used": used,
        "unused": total - used,
        "crawl_status": {
            "crawling": crawling,
            "completed": completed,
            "failed": failed,
            "partial": partial,
        },
        "jobs_found": jobs,
    }


def test_stats_json_has_the_design_shape_and_numbers(db_url):
    seed_day(db_url)
    result = run(db_url, "stats", "--date", DAY.isoformat(), "--json")
    assert result.exit_code == 0
    # the design's fields, as they were; the fields added since are tested in test_stats_report.py
    assert [design_fields(row) for row in json.loads(result.output)] == [
        stat("boss", 12, 5, crawling=1, completed=2, failed=1, partial=1, jobs=18),
        stat("qcwy", 12, 0),
        stat("zhilian", 12, 0),
    ]
    one = run(db_url, "stats", "--date", DAY.isoformat(), "--json", "--source", "boss")
    assert [design_fields(row) for row in json.loads(one.output)] == [
        stat("boss", 12, 5, crawling=1, completed=2, failed=1, partial=1, jobs=18)
    ]


def design_fields(row):
    return {name: row[name] for name in ("date", "source", "total", "used", "unused", "crawl_status", "jobs_found")}


def test_stats_json_keeps_non_ascii(sqlite_url):
    upgraded(sqlite_url)
    run(sqlite_url, "keywords", "add", "boss", "北京", "python")
    result = run(sqlite_url, "stats", "--json", "--date", "2024-05-01")
    assert result.output.startswith("[")
    json.loads(result.output)  # one document
    assert "\\u" not in result.output


def test_stats_table(sqlite_url):
    seed_day(sqlite_url)
    result = run(sqlite_url, "stats", "--date", DAY.isoformat())
    assert result.exit_code == 0
    assert result.output.splitlines()[0].startswith("keywords on 2024-05-01")
    rows = parse_table(result.output)
    columns = ["total", "used", "unused", "crawling", "completed", "failed", "partial", "jobs found"]
    assert [r["source"] for r in rows] == ["boss", "qcwy", "zhilian", "all"]
    assert [rows[0][c] for c in columns] == ["12", "5", "7", "1", "2", "1", "1", "18"]
    assert [rows[1][c] for c in columns] == ["12", "0", "12", "0", "0", "0", "0", "0"]
    assert [rows[3][c] for c in columns] == ["36", "5", "31", "1", "2", "1", "1", "18"]

    boss = parse_table(run(sqlite_url, "stats", "--date", "2024-05-01", "--source", "boss").output)
    assert [r["source"] for r in boss] == ["boss"]


def test_stats_defaults_to_today(sqlite_url):
    upgraded(sqlite_url)
    run(sqlite_url, "keywords", "import", str(DEMO_KEYWORDS))
    engine = make_engine(sqlite_url)
    settings = farm.cli.context.project_settings()
    today = KeywordStore(engine, timezone=settings.get("FARM_TIMEZONE")).today()
    engine.dispose()
    set_rows(sqlite_url, key("zhilian", "杭州", "前端"), crawl_status="completed", last_requested_date=today)
    result = run(sqlite_url, "stats", "--json", "--source", "zhilian")
    assert json.loads(result.output)[0]["date"] == today.isoformat()
    assert json.loads(result.output)[0]["crawl_status"]["completed"] == 1
    assert run(sqlite_url, "stats").output.startswith(f"keywords on {today.isoformat()} (")


@pytest.mark.parametrize("bad", ["2024-13-01", "yesterday", "2024/05/01", "20240501"])
def test_stats_bad_date_is_a_clear_error(sqlite_url, bad):
    upgraded(sqlite_url)
    result = run(sqlite_url, "stats", "--date", bad)
    assert result.exit_code == 2
    assert f"'{bad}' is not a date: use YYYY-MM-DD" in result.output


@pytest.mark.parametrize("args", [["stats"], ["stats", "--json"], ["keywords", "list"]])
def test_stats_and_list_answer_at_once_while_a_crawl_writes_to_sqlite(sqlite_url, tmp_path, args):
    upgraded(sqlite_url)
    run(sqlite_url, "keywords", "add", "boss", "北京", "python")
    writer = sqlite3.connect(sqlite_url.removeprefix("sqlite:///"), isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")  # a crawl's writer, in the middle of a transaction
    writer.execute("UPDATE keyword SET jobs_found = 99")
    try:
        started = time.monotonic()
        # a read behind the writer would wait for SQLite's 30 s busy timeout: the timeout fails the test
        done = run_module(["--db-url", sqlite_url, *args], cwd=tmp_path, timeout=25)
        assert done.returncode == 0, done.stderr
        assert time.monotonic() - started < 20
        if "--json" in args:
            assert json.loads(done.stdout)[0]["total"] == 1
        elif args == ["stats"]:
            assert parse_table(done.stdout)[0]["total"] == "1"
        else:  # the last committed state, not the writer's uncommitted one
            assert [(r["job"], r["jobs"]) for r in parse_table(done.stdout)] == [("python", "0")]
    finally:
        writer.execute("ROLLBACK")
        writer.close()


# --- farm reap --------------------------------------------------------------


def test_reap_turns_stale_leases_partial(db_url):
    upgraded(db_url)
    run(db_url, "keywords", "import", str(DEMO_KEYWORDS))
    now = datetime.now(UTC)
    set_rows(db_url, key("boss", "北京", "python"), crawl_status="crawling", heartbeat_at=now - timedelta(days=2))
    set_rows(db_url, key("boss", "北京", "java"), crawl_status="crawling", heartbeat_at=now)
    result = run(db_url, "reap")
    assert (result.exit_code, result.output) == (0, "1 stale lease became partial\n")
    statuses = {r["job"]: r["status"] for r in parse_table(run(db_url, "keywords", "list", "--limit", "2").output)}
    assert statuses == {"python": "partial", "java": "crawling"}
    assert run(db_url, "reap").output == "0 stale leases became partial\n"


# --- database errors --------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [["db", "upgrade"], ["keywords", "list"], ["keywords", "import", str(DEMO_KEYWORDS)], ["stats"], ["reap"]],
)
def test_unreachable_database_is_one_line_without_the_password(args):
    result = run("mysql+pymysql://root:s3cret@127.0.0.1:1/x", *args)
    assert result.exit_code == 1
    assert result.output.startswith(
        "Error: cannot connect to the database at mysql+pymysql://root:***@127.0.0.1:1/x: Can't connect to MySQL server"
    )
    assert result.output.count("\n") == 1
    assert "s3cret" not in result.output


def test_missing_mysql_database_cannot_connect(mariadb_url):
    url = mariadb_url + "_missing"
    result = run(url, "db", "upgrade")
    assert result.exit_code == 1
    assert result.output.startswith(f"Error: cannot connect to the database at {url}: Unknown database")
    assert result.output.count("\n") == 1


def test_unparsable_url_names_the_option():
    result = run("not a url", "stats")
    assert result.exit_code == 2
    assert result.output.startswith("Error: --db-url='not a url' is not a database URL (e.g. ")
    assert result.output.count("\n") == 1


def test_unknown_dialect_is_one_line():
    result = run("nosuchdb://host/x", "reap")
    assert result.exit_code == 2
    assert result.output.startswith("Error: --db-url='nosuchdb://host/x' cannot be used: ")
    assert result.output.count("\n") == 1


MALFORMED_URLS = [
    (
        "mysql+pymysql://u:s3cret@host:notaport/db",
        "'mysql+pymysql://u:***@host:notaport/db' has a port that is not a number",
    ),
    (
        "mysql+pymysql://u:s3cret@127.0.0.1:99999/db",
        "'mysql+pymysql://u:***@127.0.0.1:99999/db' has port 99999, outside 1 to 65535",
    ),
    ("mysql+pymysql://u:s3cret@host:/db", "'mysql+pymysql://u:***@host:/db' has a port that is not a number"),
    ("mysql+pymysql://root:s3cret/farm", "'mysql+pymysql://root:***/farm' has a port that is not a number"),
    ("root:s3cret@host/farm", "'root:***@host/farm' is not a database URL"),
    ("nosuchdb://u:s3cret@host/db", "'nosuchdb://u:***@host/db' cannot be used: Can't load plugin"),
]
EVERY_DATABASE_COMMAND = [
    ["db", "upgrade"],
    ["keywords", "list"],
    ["keywords", "add", "boss", "北京", "python"],
    ["keywords", "import", str(DEMO_KEYWORDS)],
    ["stats"],
    ["stats", "--json"],
    ["reap"],
    ["demo"],
]


@pytest.mark.parametrize("url, problem", MALFORMED_URLS)
def test_a_malformed_url_is_one_line_naming_the_problem_without_the_password(url, problem, tmp_path):
    for args in EVERY_DATABASE_COMMAND:
        result = run(url, *args)
        assert (result.exit_code, result.output.count("\n")) == (2, 1), (args, result.output)
        assert result.output.startswith(f"Error: --db-url={problem}"), (args, result.output)
        assert "s3cret" not in result.output


def test_a_malformed_farm_db_url_from_the_environment_is_named(tmp_path):
    url, problem = MALFORMED_URLS[0]
    done = run_module(["stats"], cwd=tmp_path, FARM_DB_URL=url)
    assert done.returncode == 2
    assert done.stderr == f"Error: FARM_DB_URL={problem} (1 to 65535) ({URL_EXAMPLES})\n"
    assert "s3cret" not in done.stdout + done.stderr


def run_module(args, cwd, timeout=120, **env):
    import os

    return subprocess.run(
        [sys.executable, "-m", "farm", *args],
        cwd=cwd,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_python_m_farm_reads_farm_db_url_from_the_environment(tmp_path):
    url = f"sqlite:///{tmp_path / 'env.db'}"
    done = run_module(["db", "upgrade"], cwd=tmp_path, FARM_DB_URL=url)  # no scrapy.cfg here
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"database at {url} is at revision {head_revision()} (head)\n"

    bad = run_module(["reap"], cwd=tmp_path, FARM_DB_URL="::nonsense::")
    assert bad.returncode == 2
    assert bad.stderr.startswith("Error: FARM_DB_URL='::nonsense::' is not a database URL")
    assert "Traceback" not in bad.stderr


def test_farm_sandbox_is_a_farm_command_listing_its_fault_kinds():
    result = CliRunner().invoke(farm_command, ["sandbox", "--help"])
    assert result.exit_code == 0
    assert "--fault-kinds" in result.output and "--fail-keyword" in result.output
    bad = CliRunner().invoke(farm_command, ["sandbox", "--postings", "5:1"])
    assert bad.exit_code != 0 and "5:1" in bad.output and "Traceback" not in bad.output


# --- the file read once, repeats, NFC, bad numbers, memory, escapes ------------------


def farm_process(url, *args, stdin=None, shell=False):
    """The real `farm` command (not CliRunner): a pipe or a process substitution is a real file descriptor."""
    argv = (
        f"{sys.executable} -m farm --db-url '{url}' " + " ".join(args)
        if shell
        else [sys.executable, "-m", "farm", "--db-url", url, *args]
    )
    proc = subprocess.run(
        argv,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        shell=shell,
        executable="/bin/bash" if shell else None,
    )
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stderr
    return proc


def test_import_reads_a_pipe_once(sqlite_url, tmp_path):
    upgraded(sqlite_url)
    path = tmp_path / "k.csv"
    path.write_text("source,city,job\nqcwy,北京,python\nqcwy,上海,java\n", encoding="utf-8")
    proc = farm_process(sqlite_url, "keywords", "import", f"<(cat {path})", shell=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("imported 2 new keywords")
    proc = farm_process(sqlite_url, "keywords", "import", "-", stdin=path.read_text(encoding="utf-8"))
    assert proc.returncode == 0 and proc.stdout.startswith("imported 0 new keywords (2 already present")


def test_import_counts_keywords_repeated_in_the_file(sqlite_url, tmp_path):
    upgraded(sqlite_url)
    path = tmp_path / "k.csv"
    path.write_text("source,city,job\n" + "qcwy,北京,python\n" * 3, encoding="utf-8")
    result = run(sqlite_url, "keywords", "import", str(path))
    assert result.exit_code == 0, result.output
    assert result.output.strip() == "imported 1 new keywords (0 already present, 2 repeated in the file)"


def test_import_takes_composed_and_decomposed_forms_as_one_keyword(sqlite_url, tmp_path):
    upgraded(sqlite_url)
    path = tmp_path / "k.csv"
    path.write_text("source,city,job\nqcwy,北京,cafe\u0301\nqcwy,北京,caf\u00e9\n", encoding="utf-8")
    assert run(sqlite_url, "keywords", "import", str(path)).exit_code == 0
    assert [row[3] for row in keyword_rows(sqlite_url)] == ["caf\u00e9"]


@pytest.mark.parametrize(
    "args", [["--window", "inf"], ["--window", "nan"], ["--window", "1e12"], ["--watch", "--interval", "nan"]]
)
def test_stats_refuses_numbers_it_cannot_use(sqlite_url, args):
    upgraded(sqlite_url)
    result = run(sqlite_url, "stats", *args)
    assert result.exit_code == 2
    assert f"Invalid value for '{args[-2]}'" in result.output


@pytest.mark.parametrize("url", ["sqlite://", "sqlite:///:memory:"])
def test_a_database_in_memory_is_refused(url):
    result = run(url, "db", "upgrade")
    assert result.exit_code != 0
    assert "in memory" in result.output and len(result.output.strip().splitlines()) == 1


def test_keywords_list_prints_control_characters_escaped(sqlite_url):
    upgraded(sqlite_url)
    run(sqlite_url, "keywords", "add", "qcwy", "北京", "python")
    set_rows(
        sqlite_url, key("qcwy", "北京", "python"), crawl_status="failed", error_message="\x1b[2J\x1b]0;owned\x07gone"
    )
    result = run(sqlite_url, "keywords", "list")
    assert "\x1b" not in result.output and "\x07" not in result.output
    assert "\\e[2J\\e]0;owned\\x07gone" in result.output


@pytest.mark.parametrize("value", ["0", "-1", "nan"])
def test_a_database_deadline_that_is_not_a_positive_number_is_one_line(value, sqlite_url, monkeypatch):
    import farm.settings

    monkeypatch.setattr(farm.settings, "FARM_DB_TIMEOUT", value)
    result = run(sqlite_url, "db", "upgrade")
    assert result.exit_code == 2
    assert result.output == (
        f"Error: FARM_DB_TIMEOUT={value!r} cannot be used: it takes a number of seconds above 0, e.g. 5\n"
    )
