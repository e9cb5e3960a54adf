"""`farm openings explain` over the postings stored in job_posting."""

from datetime import UTC, datetime, timedelta

from click.testing import CliRunner

from farm.cli import farm
from farm.state.db import make_engine
from farm.state.posting_fields import POSTING_FIELDS
from farm.state.store import KeywordStore
from tests.migrated import migrated

NOW = datetime(2026, 5, 8, 2, tzinfo=UTC)


def posting(source, job_id, title, company, salary, raw=None, city="北京·朝阳区"):
    row = dict.fromkeys(POSTING_FIELDS)
    row.update(source=source, job_id=job_id, title=title, company=company, salary=salary, city=city, tags=[])
    row["raw"] = raw or {}
    return row


def test_explain_names_the_opening_and_why_each_posting_joined_it(sqlite_url):
    migrated(sqlite_url)
    store = KeywordStore(make_engine(sqlite_url))
    store.upsert_postings([posting("boss", "b1", "Python开发工程师", "抖音", "20-30K")], NOW)
    qcwy_item = {"companyName": "抖音", "fullCompanyName": "北京字节跳动科技有限公司"}
    rows = [
        posting("qcwy", "q1", "【急招】Python开发工程师（双休）", "北京字节跳动科技有限公司", "2.5-3.5万", qcwy_item),
        posting("zhilian", "z1", "Python开发工程师", "北京字节跳动科技有限公司", "25000-35000元", city="上海"),
    ]
    store.upsert_postings(rows, NOW + timedelta(hours=1))
    store.close()
    waiting = CliRunner().invoke(farm, ["--db-url", sqlite_url, "openings", "explain", "qcwy", "q1"])
    assert waiting.exit_code == 1 and "is in no opening yet: run `farm openings update`" in waiting.output
    updated = CliRunner().invoke(farm, ["--db-url", sqlite_url, "openings", "update"])
    assert updated.output == "3 postings put in openings, 2 openings opened; 2 stored\n"
    # boss's brand 抖音 meets the legal name only through the pair qcwy's item carries
    result = CliRunner().invoke(farm, ["--db-url", sqlite_url, "openings", "explain", "qcwy", "q1"])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == [
        "qcwy q1: 【急招】Python开发工程师（双休） · 北京字节跳动科技有限公司 · 北京",
        "joined opening 1: company equal ('字节跳动' ~ '字节跳动'), title 1.00 alike "
        "('python开发工程师' ~ 'python开发工程师'), salary 25000-35000 ~ 20000-30000; evidence +2.5: company "
        "equal +0.5, title equal +1.5, place unknown +0, pay agree +0, degree unknown +0, experience unknown +0",
        "  with boss b1: opened opening 1: no opening in its city of company '字节跳动' with a title like "
        "'python开发工程师' that the evidence joins it to",
    ]
    missing = CliRunner().invoke(farm, ["--db-url", sqlite_url, "openings", "explain", "qcwy", "nope"])
    assert missing.exit_code == 1 and "no posting qcwy 'nope' in job_posting" in missing.output


def test_explain_escapes_the_control_characters_of_crawled_text(sqlite_url):
    migrated(sqlite_url)
    store = KeywordStore(make_engine(sqlite_url))
    title = "Python开发\x1b]0;owned\x07工程师"
    store.upsert_postings([posting("boss", "b1", title, "抖音\x1b[2J", "20-30K")], NOW)
    store.close()
    CliRunner().invoke(farm, ["--db-url", sqlite_url, "openings", "update"])
    result = CliRunner().invoke(farm, ["--db-url", sqlite_url, "openings", "explain", "boss", "b1"])
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.output and "\x07" not in result.output
    assert result.output.splitlines()[0] == "boss b1: Python开发\\e]0;owned\\x07工程师 · 抖音\\e[2J · 北京"
