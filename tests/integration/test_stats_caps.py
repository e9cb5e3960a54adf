"""What the page caps left behind, on SQLite and MariaDB: the keyword table's site_total against what
each cap let farm take, in `farm stats` (text and --json), in the report and in farm.state.caps's query."""

import json
from datetime import UTC, datetime, timedelta

import pytest

from farm.state import caps
from farm.state.db import make_engine
from tests.integration.test_cli import DEMO_KEYWORDS, key, run, set_rows, upgraded
from tests.integration.test_report import report
from tests.integration.test_stats_report import today

DEFAULT_CAPS = {"boss": 3, "qcwy": 50, "zhilian": 15}


@pytest.fixture
def day(db_url):
    """boss today: 北京/python held back (the site holds 385, 3 pages took 45), 北京/java at its cap
    with nothing more on the site, 上海/python ended by the site below the cap, 上海/java partial at
    the cap; 深圳/python held back yesterday. qcwy 北京/python held back at 50 pages. zhilian: nothing."""
    upgraded(db_url)
    run(db_url, "keywords", "import", str(DEMO_KEYWORDS))
    day = today(db_url)
    now = datetime.now(UTC)
    for source, city, job, status, pages, took, told, when in [
        ("boss", "北京", "python", "completed", 3, 45, 385, day),
        ("boss", "北京", "java", "completed", 3, 45, 45, day),
        ("boss", "上海", "python", "completed", 2, 20, 100, day),
        ("boss", "上海", "java", "partial", 3, 30, 300, day),
        ("boss", "深圳", "python", "completed", 3, 45, 500, day - timedelta(days=1)),
        ("qcwy", "北京", "python", "completed", 50, 1000, 1234, day),
    ]:
        set_rows(
            db_url,
            key(source, city, job),
            crawl_status=status,
            last_requested_date=when,
            last_completed_page=pages,
            total_pages=pages,
            jobs_found=took,
            site_total=told,
            updated_at=now,
        )
    return day


def test_the_query_finds_only_the_completed_keywords_of_the_day_their_cap_held_back(db_url, day):
    engine = make_engine(db_url)
    try:
        with engine.connect() as conn:
            capped = caps.capped_keywords(conn, day, DEFAULT_CAPS)
            raised = caps.capped_keywords(conn, day, {"boss": 4, "qcwy": 50})
    finally:
        engine.dispose()
    assert capped == [
        caps.Capped("boss", "北京", "python", 385, 45, 3),
        caps.Capped("qcwy", "北京", "python", 1234, 1000, 50),
    ]
    assert [k.left for k in capped] == [340, 234]  # the most left behind first
    assert raised == [caps.Capped("qcwy", "北京", "python", 1234, 1000, 50)]  # 3 pages are under a cap of 4


def test_stats_says_what_each_cap_left_behind(db_url, day):
    result = run(db_url, "stats")
    assert result.exit_code == 0, result.output
    text = result.output
    assert f"page caps on {day.isoformat()}: what the sites said they hold beyond what the caps let farm take" in text
    assert (
        "boss: 1 keyword(s) held back by FARM_BOSS_MAX_PAGES=3: the site holds 385, farm took 45, 340 left behind"
    ) in text
    assert "  boss 北京/python: the site holds 385, the cap of 3 pages took 45 — FARM_BOSS_MAX_PAGES" in text
    assert "  qcwy 北京/python: the site holds 1,234, the cap of 50 pages took 1,000 — FARM_QCWY_MAX_PAGES" in text
    assert "zhilian: no keyword held back by FARM_ZHILIAN_MAX_PAGES=15" in text
    assert "上海/python" not in text and "深圳/python" not in text


def test_stats_json_gives_each_sites_caps_and_keywords(db_url, day):
    rows = {row["source"]: row for row in json.loads(run(db_url, "stats", "--json").output)}
    assert rows["boss"]["caps"] == {
        "setting": "FARM_BOSS_MAX_PAGES",
        "cap": 3,
        "keywords": 1,
        "site_total": 385,
        "took": 45,
        "left_behind": 340,
        "capped": [{"city": "北京", "job": "python", "site_total": 385, "took": 45, "left_behind": 340}],
    }
    assert rows["qcwy"]["caps"]["left_behind"] == 234
    assert rows["zhilian"]["caps"] == {
        "setting": "FARM_ZHILIAN_MAX_PAGES",
        "cap": 15,
        "keywords": 0,
        "site_total": 0,
        "took": 0,
        "left_behind": 0,
        "capped": [],
    }


def test_the_report_shows_each_sites_cap_and_the_keywords_it_held_back(db_url, day, tmp_path):
    page, figures = report(db_url, tmp_path, "--date", day.isoformat())
    assert figures["caps"] == [
        {
            "source": "boss",
            "setting": "FARM_BOSS_MAX_PAGES",
            "cap": 3,
            "keywords": 1,
            "site_total": 385,
            "took": 45,
            "left_behind": 340,
        },
        {
            "source": "qcwy",
            "setting": "FARM_QCWY_MAX_PAGES",
            "cap": 50,
            "keywords": 1,
            "site_total": 1234,
            "took": 1000,
            "left_behind": 234,
        },
    ]
    assert [(k["source"], k["city"], k["job"], k["left_behind"]) for k in figures["capped"]] == [
        ("boss", "北京", "python", 340),
        ("qcwy", "北京", "python", 234),
    ]
    section = page[page.index("<h2 id=caps>") : page.index("<h2", page.index("<h2 id=caps>") + 1)]
    assert "<td>boss</td><td class=w>FARM_BOSS_MAX_PAGES</td><td class=n>3</td><td class=n>1</td>" in section
    assert (
        "<td>boss</td><td>北京</td><td>python</td><td class=n>385</td><td class=n>45</td><td class=n>340</td>"
        in section
    )
