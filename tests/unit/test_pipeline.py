"""The postings pipeline: a posting becomes one JSON row in the outbox, or is dropped with the reason."""

from datetime import UTC, datetime, timedelta, timezone

import orjson
import pytest
from scrapy.exceptions import DropItem

from farm.crawl.parts import CrawlParts
from farm.items import JobPosting
from farm.pipelines.sql import SqlPostingsPipeline
from tests.unit.components import make_crawler


@pytest.fixture
def pipeline(sqlite_url):
    crawler = make_crawler(sqlite_url, [("qcwy", "北京", "python")])
    yield SqlPostingsPipeline.from_crawler(crawler)
    crawler.get_extension(CrawlParts).close()


def posting(**fields):
    values = {
        "source": "qcwy",
        "job_id": "j1",
        "title": "Python 工程师",
        "keyword_id": 1,
        "published_at": datetime(2026, 11, 30, 9, 30, tzinfo=UTC),
        "raw": {"jobId": "j1"},
    }
    return JobPosting(**{**values, **fields})


def test_a_posting_is_queued_as_one_json_row(pipeline):
    item = posting()
    assert pipeline.process_item(item) is item
    [row] = [orjson.loads(encoded) for encoded in pipeline.outbox.postings]
    assert row == {
        "source": "qcwy",
        "job_id": "j1",
        "title": "Python 工程师",
        "keyword_id": 1,
        "published_at": "2026-11-30T09:30:00+00:00",
        "raw": {"jobId": "j1"},
    }


@pytest.mark.parametrize(
    "fields, reason",
    [
        ({"job_id": ""}, "posting without job_id"),
        ({"source": None, "job_id": None}, "posting without source, job_id"),
        # never cut: two postings would merge into one row
        ({"job_id": "x" * 65}, "posting job_id of 65 characters, longer than its column \\(64\\)"),
        ({"job_id": "j\x001"}, "posting job_id holds a NUL character"),
    ],
)
def test_a_posting_that_cannot_be_stored_is_dropped_with_the_reason(pipeline, fields, reason):
    with pytest.raises(DropItem, match=reason):
        pipeline.process_item(posting(**fields))
    assert pipeline.outbox.postings == []
    assert pipeline.stats.get_value("farm/sql/dropped") == 1


def test_a_posting_orjson_refuses_is_queued_from_an_encodable_copy(pipeline):
    raw = {"big": 2**70, "small": -(2**70), "nan": float("nan"), 1: "x", "deep": [[[[]]]]}
    for _ in range(1000):
        raw["deep"] = [raw["deep"]]
    item = posting(raw=raw, published_at=datetime(1, 1, 1, tzinfo=timezone(timedelta(hours=8))))
    assert pipeline.process_item(item) is item
    [row] = [orjson.loads(encoded) for encoded in pipeline.outbox.postings]
    assert row["raw"]["big"] == str(2**70) and row["raw"]["small"] == str(-(2**70))
    assert (row["raw"]["nan"], row["raw"]["1"], row["published_at"]) == (None, "x", None)
    assert pipeline.stats.get_value("farm/posting/normalised/encoding") == 1
    assert pipeline.stats.get_value("farm/sql/dropped") is None


def test_a_time_that_is_not_a_datetime_is_left_to_the_writer(pipeline):
    # the writer stores what is not an aware time in range as NULL (farm.state.normalise.to_time)
    pipeline.process_item(posting(published_at="昨天"))
    [row] = [orjson.loads(encoded) for encoded in pipeline.outbox.postings]
    assert row["published_at"] == "昨天"
    assert pipeline.stats.get_value("farm/sql/dropped") is None


@pytest.mark.parametrize("setting, value", [("FARM_SQL_BATCH_SIZE", 0), ("FARM_SQL_FLUSH_INTERVAL", -1)])
def test_bad_batch_settings_are_refused_by_name(sqlite_url, setting, value):
    with pytest.raises(ValueError, match=setting):  # when the crawl's components are built
        make_crawler(sqlite_url, [], **{setting: value})
