"""The report says what happened: a crawl's length as people say it, a site with keywords and no crawl
named, a failure's reason readable, the days before the first crawl as no data, exported times with
their offset."""

import csv
import io
import re
from datetime import timedelta

import pytest
from sqlalchemy import update

from farm.report.reasons import short_reason
from farm.state.db import make_engine
from farm.state.models import JobPostingRow, Keyword
from tests.integration.test_report import report
from tests.migrated import migrated
from tests.report_data import DAY, fill, utc

LONG_URL = "https://we.51job.com/api/job/search-pc?" + "&".join(f"param{n}=" + "x" * 30 for n in range(11))


@pytest.fixture
def filled(sqlite_url):
    migrated(sqlite_url)
    engine = make_engine(sqlite_url)
    fill(engine)
    yield sqlite_url, engine
    engine.dispose()


def cells(page, first):
    """The cells of the crawl table's row that begins with ``first``."""
    crawl = page[page.index("<h2 id=crawl>") : page.index("<h2 id=caps>")]
    row = re.search(rf"<tr(?: class=none)?><td>{first}</td>(.*?)</tr>", crawl).group(0)
    return re.findall(r"<td[^>]*>(.*?)</td>", row)


def test_a_crawl_of_seconds_is_told_in_seconds_and_a_site_not_crawled_is_named(filled, tmp_path):
    url, engine = filled
    k = Keyword.__table__.c
    with engine.begin() as conn:  # zhilian's day: 42 seconds from its first claim to its last write
        conn.execute(
            update(Keyword.__table__)
            .where(k.source == "zhilian", k.last_requested_date == DAY)
            .values(last_requested_at=utc(DAY, 9), updated_at=utc(DAY, 9) + timedelta(seconds=42))
        )
        conn.execute(update(Keyword.__table__).where(k.source == "boss").values(last_requested_date=DAY - timedelta(1)))
    page, figures = report(url, tmp_path, "--date", str(DAY))
    zhilian = cells(page, "zhilian")
    assert zhilian[-2:] == ["09:00", "42 s"]  # the first claim on the report's day, its time alone
    assert cells(page, "boss") == ["boss", f"not crawled on {DAY}: it holds keywords, none was requested"]
    assert figures["not_crawled"] == ["boss"]


def test_a_failure_reason_is_one_readable_line_and_whole_in_the_figures(filled, tmp_path):
    url, engine = filled
    reason = f"twisted.web._newclient.ResponseNeverReceived: [<twisted.python.failure.Failure …>]\n  at {LONG_URL}"
    k = Keyword.__table__.c
    with engine.begin() as conn:
        conn.execute(update(Keyword.__table__).where(k.source == "zhilian").values(error_message=reason))
    page, figures = report(url, tmp_path, "--date", str(DAY))
    shown = short_reason(reason)
    assert shown.endswith("at https://we.51job.com/api/job/search-pc?…") and len(shown) <= 160
    assert ">" + shown.replace("<", "&lt;").replace(">", "&gt;") + "<" in page.replace("&#x27;", "'")
    assert LONG_URL not in page.split('id="farm-figures"')[0]  # not in the page people read
    assert reason in [failure["reason"] for failure in figures["failures"]]


def test_the_days_before_the_first_posting_seen_are_no_data_not_none(filled, tmp_path):
    url, engine = filled
    p = JobPostingRow.__table__.c
    with engine.begin() as conn:  # the first crawl: three days before the report's day
        conn.execute(
            update(JobPostingRow.__table__)
            .where(p.first_seen_at < utc(DAY - timedelta(days=3)))
            .values(first_seen_at=utc(DAY - timedelta(days=3), 8))
        )
    page, figures = report(url, tmp_path, "--date", str(DAY))
    assert figures["first_seen"] == str(DAY - timedelta(days=3))
    new = page[page.index("<h2 id=new>") :]
    assert f"No data before {DAY - timedelta(days=3)}" in new
    table = new[new.index("<table>") : new.index("</table>")]
    first_row = re.findall(r"<td[^>]*>(.*?)</td>", table[table.index("<tbody>") :])[:8]
    assert first_row[1:4] == ["–", "–", "–"] and first_row[4] != "–"  # 7 days shown: 3 before, then data


def test_csv_times_are_local_with_their_offset(filled, tmp_path):
    from click.testing import CliRunner

    from farm.cli import farm

    url, _ = filled
    out = tmp_path / "day.csv"
    result = CliRunner().invoke(
        farm, ["--db-url", url, "export", "--date", str(DAY), "--format", "csv", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO(out.read_text(encoding="utf-8-sig"))))
    assert rows and all(re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\+08:00", row["first_seen_at"]) for row in rows)
