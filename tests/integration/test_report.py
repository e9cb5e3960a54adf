"""`farm report` on a fixed database: every figure on the page is what the rows say, on SQLite
and MariaDB; an empty database and a day with no crawl give a page that says so."""

import html
import json
import re
import statistics
from collections import Counter, defaultdict
from datetime import UTC, datetime, timedelta

import pytest
from click.testing import CliRunner
from sqlalchemy import insert, select

from farm.cli import farm
from farm.crawl.proxies import Proxy
from farm.state.clock import day_span, last_days
from farm.state.db import make_engine
from farm.state.migrate import upgrade
from farm.state.models import CrawlRun, JobPostingRow, Keyword
from tests.migrated import migrated
from tests.report_data import DAY, GONE_AFTER, KEYWORDS, TZ, fill

DAYS = 30


@pytest.fixture
def filled(db_url):
    migrated(db_url)
    engine = make_engine(db_url)
    fill(engine)
    yield db_url, engine
    engine.dispose()


def report(db_url, tmp_path, *args) -> tuple[str, dict]:
    out = tmp_path / "report.html"
    result = CliRunner().invoke(farm, ["--db-url", db_url, "report", "--out", str(out), *args])
    assert result.exit_code == 0, result.output
    assert str(out) in result.output
    page = out.read_text(encoding="utf-8")
    data = re.search(r'<script type="application/json" id="farm-figures">(.*?)</script>', page, re.DOTALL)
    return page, json.loads(data.group(1).replace("<\\/", "</"))


def _rows(engine):
    with engine.connect() as conn:
        postings = [row._asdict() for row in conn.execute(select(JobPostingRow.__table__))]
        keywords = {row.id: row._asdict() for row in conn.execute(select(Keyword.__table__))}
    return postings, keywords


def _expected_postings(postings):
    span, gone = day_span(DAY, TZ), day_span(DAY - timedelta(days=GONE_AFTER), TZ)
    figures = defaultdict(Counter)
    for p in postings:
        seen = p["first_seen_at"] < span.end and p["last_seen_at"] >= span.start
        new = span.start <= p["first_seen_at"] < span.end
        went = gone.start <= p["last_seen_at"] < gone.end
        for key in (p["source"], (p["source"], p["city"])):
            figures[key].update({"seen": seen, "new": new, "gone": went})
    return figures


def test_every_figure_on_the_page_is_what_the_rows_say(filled, tmp_path):
    db_url, engine = filled
    page, data = report(db_url, tmp_path, "--date", str(DAY), "--days", str(DAYS), "--gone-after", str(GONE_AFTER))
    postings, keywords = _rows(engine)

    # the day's crawl, per site, from the keyword rows of the day
    of_day = [k for k in KEYWORDS if k[3] == DAY]
    for row in data["crawl"]:
        mine = [k for k in of_day if k[0] == row["source"]]
        states = Counter(k[4] for k in mine)
        assert (row["keywords"], row["completed"], row["failed"], row["partial"], row["crawling"]) == (
            len(mine),
            states["completed"],
            states["failed"],
            states["partial"],
            states["crawling"],
        )
        assert (row["pages"], row["jobs_found"], row["blocks"]) == tuple(sum(k[i] for k in mine) for i in (5, 6, 7))
    assert [row["source"] for row in data["crawl"]] == ["boss", "qcwy", "zhilian"]
    reasons = Counter((k[0], k[8]) for k in of_day if k[4] == "failed")
    assert {(r["source"], r["reason"]): r["keywords"] for r in data["failures"]} == reasons
    assert "&lt;timeout&gt; &amp; gone" in page  # a reason is text, not markup

    # postings seen, new and gone, per site and per city
    figures = _expected_postings(postings)
    assert {r["source"]: (r["seen"], r["new"], r["gone"]) for r in data["postings"]} == {
        s: (figures[s]["seen"], figures[s]["new"], figures[s]["gone"]) for s in ("boss", "qcwy", "zhilian")
    }
    assert {(r["source"], r["city"]): (r["seen"], r["new"], r["gone"]) for r in data["cities"]} == {
        key: (c["seen"], c["new"], c["gone"])
        for key, c in figures.items()
        if isinstance(key, tuple) and (c["seen"] or c["new"] or c["gone"])
    }

    # new postings per day over --days, per site
    days = last_days(DAY, DAYS)
    expected_new = defaultdict(lambda: [0] * DAYS)
    for p in postings:
        local = p["first_seen_at"].astimezone(TZ).date()
        if local in days:
            expected_new[p["source"]][days.index(local)] += 1
    assert data["new_per_day"] == dict(expected_new)

    # salary quartiles of the monthly midpoint, per keyword job and city
    span = day_span(DAY, TZ)
    mids = defaultdict(list)
    for p in postings:
        if (
            p["first_seen_at"] < span.end
            and p["last_seen_at"] >= span.start
            and None not in (p["salary_min"], p["salary_max"])
            and p["salary_unit"] == "month"  # monthly pay alone: no conversion switched on
        ):
            mids[(keywords[p["keyword_id"]]["job"], p["city"])].append((p["salary_min"] + p["salary_max"]) / 2)
    assert len(data["salary"]) == len(mids)
    for row in data["salary"]:
        values = sorted(mids[(row["job"], row["city"])])
        quartiles = statistics.quantiles(values, n=4, method="inclusive") if len(values) > 1 else values * 3
        assert row["n"] == len(values)
        assert [row["q1"], row["median"], row["q3"]] == pytest.approx(quartiles)
        assert f"<td class=n>{row['median']:,.0f}</td>" in page
    assert [r["n"] for r in data["salary"]] == sorted((r["n"] for r in data["salary"]), reverse=True)

    # top companies by postings first seen on the day
    companies = Counter(p["company"] for p in postings if span.start <= p["first_seen_at"] < span.end)
    by_count = sorted(companies.items(), key=lambda c: (-c[1], c[0]))
    assert [(r["company"], r["new"]) for r in data["companies"]] == by_count
    assert html.escape("</script><b>x</b>") in page and "<b>x</b>" not in page

    # five charts, drawn by matplotlib as inline SVG; nothing the page would fetch
    assert page.count("<svg") == 5
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page)


def test_an_empty_database_gives_a_page_that_says_so(db_url, tmp_path):
    page, data = report(db_url, tmp_path)  # no tables at all
    assert "holds no keywords and no postings yet" in page and data["postings_stored"] == 0
    migrated(db_url)  # tables, no rows
    page, _ = report(db_url, tmp_path)
    assert "holds no keywords and no postings yet" in page and "<svg" not in page


def test_a_day_with_no_crawl_gives_a_page_that_says_so(filled, tmp_path):
    db_url, _ = filled
    page, data = report(db_url, tmp_path, "--date", str(DAY + timedelta(days=60)))
    assert data["crawl"] == [] and data["companies"] == []
    assert f"No keyword was crawled on {DAY + timedelta(days=60)}" in page
    assert "No posting was seen on" in page


def test_a_database_behind_the_code_is_one_line_saying_to_upgrade(db_url, tmp_path):
    upgrade(db_url, revision="0003")
    result = CliRunner().invoke(farm, ["--db-url", db_url, "report", "--out", str(tmp_path / "r.html")])
    assert result.exit_code == 1
    assert "run `farm db upgrade`" in result.output and "Traceback" not in result.output


def test_without_matplotlib_the_report_is_one_line_naming_the_extra(sqlite_url, tmp_path, monkeypatch):
    import importlib.util

    find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "matplotlib" else find_spec(name, *a)
    )
    result = CliRunner().invoke(farm, ["--db-url", sqlite_url, "report", "--out", str(tmp_path / "r.html")])
    assert result.exit_code == 1
    assert "farm report needs matplotlib: pip install 'farm[report]'" in result.output


def test_an_out_file_that_cannot_be_written_is_one_line(sqlite_url, tmp_path):
    migrated(sqlite_url)
    for command in (["report"], ["export", "--format", "csv"]):
        out = tmp_path / "no such directory" / "file"
        result = CliRunner().invoke(farm, ["--db-url", sqlite_url, *command, "--out", str(out)])
        assert result.exit_code == 1, result.output
        assert f"cannot write {out}: No such file or directory" in result.output and "Traceback" not in result.output


def test_the_crawl_section_shows_each_sites_identities_a_running_crawls_too_passwords_masked(filled, tmp_path):
    db_url, engine = filled
    label = Proxy.of("http://alice:s3cret@10.0.0.1:3128").label
    stats = {
        f"farm/identity/{label}/pages": 30,
        f"farm/identity/{label}/blocks": 2,
        f"farm/identity/{label}/sessions": 4,
        f"farm/identity/{label}/session_pages": 30,
        f"farm/identity/{label}/pace": 0.25,
        f"farm/identity/{label}/state": "cooling",
        "farm/identity/direct/pages": 5,
    }
    started = datetime.combine(DAY, datetime.min.time(), UTC)
    with engine.begin() as conn:  # a crawl of boss still running: its row holds what it noted so far
        conn.execute(
            insert(CrawlRun.__table__).values(
                source="boss",
                crawler_id="host:1",
                machine="host",
                started_at=started,
                status="running",
                refusals="{}",
                coverage="{}",
                stats=json.dumps(stats),
            )
        )
    page, data = report(db_url, tmp_path, "--date", str(DAY))
    assert "<h3>Identities</h3>" in page and "s3cret" not in page
    rows = re.findall(r"<tr><td>boss</td><td class=w>([^<]*)</td>((?:<td[^>]*>[^<]*</td>)*)</tr>", page)
    cells = {identity: re.findall(r">([^<]*)</td>", rest) for identity, rest in rows}
    assert cells == {
        "http://alice:***@10.0.0.1:3128": ["30", "2", "4", "7.5", "0.25", "cooling"],
        "direct": ["5", "0", "0", "–", "–", "–"],
    }
    [boss] = data["identities"]
    assert boss["source"] == "boss" and boss["status"] == "running" and boss["ended_at"] is None
