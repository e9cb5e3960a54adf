"""Texts from users and sites on the report page are data: a keyword written like matplotlib's
math is drawn as it is written, a company named like markup leaves the page's figures whole."""

import json
import re

import pytest
from click.testing import CliRunner
from sqlalchemy import update

from farm.cli import farm
from farm.state.db import make_engine
from farm.state.models import JobPostingRow, Keyword
from tests.migrated import migrated
from tests.report_data import DAY, fill

MATH = r"$\notacommand{x}$开发"  # matplotlib's mathtext refuses it: an unknown command
DOLLARS = "$5 to $10 a day"
MARKUP = "<!--<script>&amp;\u2028\u2029"  # an HTML comment opened, a script opened, JavaScript's line ends
FIGURES = re.compile(r'<script type="application/json" id="farm-figures">(.*?)</script>', re.DOTALL)


@pytest.fixture
def odd_texts(sqlite_url):
    """The report's database with a keyword named MATH, a city DOLLARS and a company MARKUP (the
    commonest company of the day, so that the chart and the table both show it)."""
    migrated(sqlite_url)
    engine = make_engine(sqlite_url)
    fill(engine)
    k, p = Keyword.__table__.c, JobPostingRow.__table__.c
    with engine.begin() as conn:
        conn.execute(update(Keyword.__table__).where(k.job == "python").values(job=MATH))
        conn.execute(update(JobPostingRow.__table__).where(p.id % 2 == 0).values(company=MARKUP))
        conn.execute(update(JobPostingRow.__table__).where(p.id % 3 == 0).values(city=DOLLARS))
        conn.execute(update(Keyword.__table__).where(k.crawl_status == "failed").values(error_message=MARKUP))
    engine.dispose()
    return sqlite_url


def write_report(db_url, out) -> str:
    result = CliRunner().invoke(farm, ["--db-url", db_url, "report", "--date", str(DAY), "--out", str(out)])
    assert result.exit_code == 0, result.output
    return out.read_text(encoding="utf-8")


def test_a_label_written_like_matplotlib_math_is_drawn_as_written(odd_texts, tmp_path):
    page = write_report(odd_texts, tmp_path / "report.html")
    svgs = "".join(re.findall(r"<svg.*?</svg>", page, re.DOTALL))
    assert r"$\notacommand{x}$开发" in svgs  # the salary chart's label, as the text it is
    assert "$5 to $10 a day" in svgs
    assert "notacommand" not in svgs.replace(r"$\notacommand{x}$开发", "")  # drawn once, never as glyphs


def test_markup_in_a_posting_leaves_the_embedded_figures_whole(odd_texts, tmp_path):
    page = write_report(odd_texts, tmp_path / "report.html")
    [block] = FIGURES.findall(page)
    assert not set(block) & {"<", ">", "&", "\u2028", "\u2029"}, "the block holds what an HTML parser reads"
    figures = json.loads(block)
    assert MARKUP in {row["company"] for row in figures["companies"]}
    assert MARKUP in {row["reason"] for row in figures["failures"]}
    assert MATH in {row["job"] for row in figures["salary"]}
    assert page.rstrip().endswith("</script></body></html>")
