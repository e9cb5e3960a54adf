"""`farm report` on a small known database (SQLite and MariaDB): the day's checks come first, the failed
on top, then the openings new, gone and back each day, their days open per city and keyword and the
reposted, as worked out by hand; `farm openings days` counts the reposted alike."""

import json
import re

from click.testing import CliRunner

from farm.cli import farm
from farm.state.db import make_engine
from tests.migrated import migrated
from tests.openings_data import DAY_1, DAY_2, DAY_3, GONE_AFTER, fill

FIGURES = re.compile(r'<script type="application/json" id="farm-figures">(.*?)</script>', re.DOTALL)


def report(db_url, tmp_path) -> tuple[str, dict]:
    out = tmp_path / "report.html"
    result = CliRunner().invoke(
        farm, ["--db-url", db_url, "report", "--date", str(DAY_3), "--gone-after", str(GONE_AFTER), "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    page = out.read_text(encoding="utf-8")
    return page, json.loads(FIGURES.search(page).group(1))


def test_the_report_leads_with_the_checks_and_counts_the_openings(db_url, tmp_path):
    migrated(db_url)
    engine = make_engine(db_url)
    fill(engine)
    engine.dispose()
    page, figures = report(db_url, tmp_path)

    # qcwy 北京/python found 10 against a median of 40; qcwy 上海/java ended the day partial
    checks = [(c["name"], c["subject"], c["ok"]) for c in figures["checks"]]
    # the run table holds no run of the day: each site with keywords fails site_crawled
    per_site = [check for check in checks if check[0] == "site_crawled"]
    assert per_site == [("site_crawled", site, False) for site in ("boss", "qcwy", "zhilian")]
    checks = [check for check in checks if check[0] != "site_crawled"]
    assert checks[:2] == [("keyword_partial", "qcwy 上海/java", False), ("postings_drop", "qcwy 北京/python", False)]
    assert sorted(checks[2:]) == [
        ("postings_drop", "boss 北京/python", True),
        ("postings_drop", "zhilian 北京/python", True),
    ]
    sections = re.findall(r"<h2 id=([\w-]+)>", page)
    assert sections[0] == "checks" and sections.index("openings") > sections.index("postings")
    assert "5 of 7 checks failed" in page

    # openings: b1+q1 (北京, open), b2 (gone day 2), q2+z1 (gone day 3), z2 (new day 3), b3 (gone day 2,
    # back day 3), q3 (上海, gone day 2), q4 (上海, open: its keyword ended day 3 partial, which proves
    # nothing gone)
    openings = figures["openings"]
    assert (openings["openings"], openings["postings"], openings["reposted"]) == (7, 9, 1)
    days = {row["day"]: row for row in openings["per_day"]}
    names = ("new_openings", "gone_openings", "back_openings", "new_postings", "gone_postings", "back_postings")
    counted = [tuple(days[str(day)][name] for name in names) for day in (DAY_1, DAY_2, DAY_3)]
    assert counted == [(6, 0, 0, 8, 0, 0), (0, 3, 0, 0, 3, 0), (1, 1, 1, 1, 2, 1)]
    assert openings["by_keyword"] == [
        {"city": "上海", "job": "java", "gone": 1, "median_days_open": 1, "open": 1, "reposted": 0},
        {"city": "北京", "job": "python", "gone": 2, "median_days_open": 1.5, "open": 3, "reposted": 1},
    ]
    row = "<td>北京</td><td>python</td><td class=n>2</td><td class=n>1.5</td><td class=n>3</td><td class=n>1</td>"
    assert row in page


def test_openings_days_counts_the_opening_gone_and_back(sqlite_url):
    migrated(sqlite_url)
    engine = make_engine(sqlite_url)
    fill(engine)
    engine.dispose()
    assert CliRunner().invoke(farm, ["--db-url", sqlite_url, "openings", "update"]).exit_code == 0
    result = CliRunner().invoke(
        farm,
        [
            "--db-url",
            sqlite_url,
            "openings",
            "days",
            "--date",
            str(DAY_3),
            "--days",
            "3",
            "--gone-after",
            "1",
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    counted = json.loads(result.output)
    assert counted["waiting"] == 0
    # b3 went on day 2 (boss 北京/python completed without it) and was seen again on day 3
    assert [(d["gone_openings"], d["back_openings"], d["back_postings"]) for d in counted["days"]] == [
        (0, 0, 0),
        (3, 0, 0),
        (1, 1, 1),
    ]
