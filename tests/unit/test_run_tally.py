"""A crawl's stats read into the run table's numbers (farm.runs.numbers)."""

from farm.runs.numbers import run_numbers


def test_run_numbers_add_claims_and_ends_and_split_refusals_by_shape():
    stats = {
        "farm/lease/claimed": 7,
        "farm/lease/claimed/fresh": 5,
        "farm/lease/claimed/partial": 2,
        "farm/keyword/completed": 4,
        "farm/keyword/blocked": 1,
        "farm/keyword/orphan_pages": 9,  # not an end
        "farm/progress/pages": 31,
        "farm/sql/upserted": 400,
        "farm/block/count": 6,
        "farm/block/captcha": 4,
        "farm/block/ratelimit": 2,
        "farm/block/retry/count": 5,
        "farm/block/gave_up": 1,
        "farm/site/errors": 3,
        "finish_reason": "finished",
        "downloader/request_count": 40,  # Scrapy's, not kept
    }
    numbers = run_numbers(stats, {"items": 410, "salary": 400, "company": 410, "city": 409})
    assert (numbers.keywords_claimed, numbers.keywords_ended, numbers.pages, numbers.postings) == (7, 5, 31, 400)
    assert numbers.refusals == {"captcha": 4, "ratelimit": 2, "site_error": 3}
    assert numbers.coverage == {"items": 410, "salary": 400, "company": 410, "city": 409, "published_at": 0}
    assert "downloader/request_count" not in numbers.stats and numbers.stats["finish_reason"] == "finished"
    assert numbers.stats["farm/sql/upserted"] == 400
