"""The report in a real browser: headless Chromium opens it from disk with no console error,
no request leaving the page, and every chart drawn."""

import os

import pytest
from click.testing import CliRunner

from farm.cli import farm
from farm.state.db import make_engine
from tests.browser import CHROMIUM, Browser
from tests.migrated import migrated
from tests.report_data import DAY, fill

pytestmark = [
    pytest.mark.e2e,
    # CI installs chromium (.ci/run): only a machine without it may skip
    pytest.mark.skipif(CHROMIUM is None and not os.environ.get("CI"), reason="no chromium on this machine"),
]

CHARTS = 5


def test_the_report_opens_from_disk_with_no_error_no_request_out_and_every_chart_drawn(sqlite_url, tmp_path):
    migrated(sqlite_url)
    engine = make_engine(sqlite_url)
    fill(engine)
    engine.dispose()
    out = tmp_path / "report.html"
    result = CliRunner().invoke(farm, ["--db-url", sqlite_url, "report", "--date", str(DAY), "--out", str(out)])
    assert result.exit_code == 0, result.output
    with Browser() as browser:
        browser.open(out)
        charts = browser.evaluate("""Array.from(document.querySelectorAll('figure.chart svg')).map(svg => {
            const box = svg.getBoundingClientRect();
            return {width: box.width, height: box.height, marks: svg.querySelectorAll('path, use, rect').length,
                    text: svg.querySelectorAll('text').length};
        })""")
        title = browser.evaluate("document.title")
        errors, requests = browser.errors(), browser.requests()
    assert title == f"farm report {DAY}"
    assert errors == []
    assert requests == [out.resolve().as_uri()]  # the page itself, nothing else
    assert len(charts) == CHARTS
    for chart in charts:
        assert chart["width"] > 100 and chart["height"] > 50 and chart["marks"] > 5 and chart["text"] > 2, chart


def test_the_browser_check_sees_a_request_leaving_the_page_and_a_console_error(tmp_path):
    """The test above could not pass a page that fetched or failed: shown on one that does both."""
    page = tmp_path / "bad.html"
    page.write_text(
        '<html><body><img src="http://127.0.0.1:9/x.png"><script>console.error("boom")</script></body></html>'
    )
    with Browser() as browser:
        browser.open(page)
        errors, requests = browser.errors(), browser.requests()
    assert any("boom" in error for error in errors)
    assert "http://127.0.0.1:9/x.png" in requests


def test_long_names_wrap_and_markup_in_a_name_leaves_the_figures_whole(sqlite_url, tmp_path):
    from sqlalchemy import update

    from farm.state.models import JobPostingRow, Keyword

    company = "深圳市" + "前海" * 60 + "<!--<script>有限公司"  # no space to break at
    job = "python" + "x" * 120
    migrated(sqlite_url)
    engine = make_engine(sqlite_url)
    fill(engine)
    k, p = Keyword.__table__.c, JobPostingRow.__table__.c
    with engine.begin() as conn:
        conn.execute(update(Keyword.__table__).where(k.job == "python").values(job=job))
        conn.execute(update(JobPostingRow.__table__).where(p.id % 2 == 0).values(company=company))
    engine.dispose()
    out = tmp_path / "report.html"
    result = CliRunner().invoke(farm, ["--db-url", sqlite_url, "report", "--date", str(DAY), "--out", str(out)])
    assert result.exit_code == 0, result.output
    with Browser(width=800) as browser:
        browser.open(out)
        widths = browser.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
        companies = browser.evaluate(
            "JSON.parse(document.getElementById('farm-figures').textContent).companies.map(row => row.company)"
        )
        last = browser.evaluate("document.body.lastElementChild.id")
        errors = browser.errors()
    assert errors == []
    assert widths[0] <= widths[1], f"the page is {widths[0]} px wide in a window of {widths[1]}"
    assert company in companies and last == "farm-figures"


def test_at_1280_px_every_table_fits_and_no_setting_name_breaks(sqlite_url, tmp_path):
    from sqlalchemy import update

    from farm.state.models import Keyword

    migrated(sqlite_url)
    engine = make_engine(sqlite_url)
    fill(engine)
    k = Keyword.__table__.c
    with engine.begin() as conn:  # boss's completed keyword held back by its page cap: the caps table shows
        conn.execute(update(Keyword.__table__).where(k.id == 1).values(total_pages=10, site_total=900))
    engine.dispose()
    out = tmp_path / "report.html"
    result = CliRunner().invoke(farm, ["--db-url", sqlite_url, "report", "--date", str(DAY), "--out", str(out)])
    assert result.exit_code == 0, result.output
    with Browser(width=1280) as browser:
        browser.open(out)
        tables = browser.evaluate(
            "Array.from(document.querySelectorAll('table')).map(t => [t.scrollWidth, t.clientWidth,"
            " t.querySelector('th').parentNode.textContent])"
        )
        settings = browser.evaluate(
            "Array.from(document.querySelectorAll('td.w')).filter(td => td.textContent.startsWith('FARM_'))"
            ".map(td => [td.textContent, td.getClientRects().length, td.getBoundingClientRect().height,"
            " parseFloat(getComputedStyle(td).lineHeight)])"
        )
        errors = browser.errors()
    assert errors == []
    for scroll, client, head in tables:
        assert scroll <= client, f"the table of {head!r} is cut: {scroll} px in a box of {client}"
    assert settings and all(name == "FARM_BOSS_MAX_PAGES" for name, *_ in settings)
    for name, _, height, line in settings:
        assert height < 1.5 * line + 8, f"{name} breaks over lines ({height} px, lines of {line} px)"
