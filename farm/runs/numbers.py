"""A crawl's stats read into the run table's numbers (a pure function: tested without a crawl)."""

from collections.abc import Mapping

from farm.runs.record import RunNumbers

ENDS = ("completed", "failed", "blocked", "released", "lost")
CLAIMS = ("fresh", "partial", "failed")
# farm/block/<shape> counts one refusal of that shape; these are tallies over the shapes
BLOCK_TALLIES = {"count", "gave_up"}
# the fields whose coverage the checks watch, as farm.extensions.runs counts them
FIELDS = ("salary", "company", "city", "published_at")
# Scrapy's own stats kept beside farm's
SCRAPY_STATS = ("item_scraped_count", "response_received_count", "finish_reason", "elapsed_time_seconds")


def run_numbers(stats: Mapping, coverage: Mapping) -> RunNumbers:
    """The run's numbers from the crawl's stats and its postings' field counts."""
    refusals = {
        name.removeprefix("farm/block/"): value
        for name, value in stats.items()
        if name.startswith("farm/block/")
        and "/" not in name.removeprefix("farm/block/")
        and name.removeprefix("farm/block/") not in BLOCK_TALLIES
    }
    errors = stats.get("farm/site/errors", 0)
    if errors:
        refusals["site_error"] = errors
    kept = {name: value for name, value in stats.items() if name.startswith("farm/") or name in SCRAPY_STATS}
    return RunNumbers(
        keywords_claimed=sum(stats.get(f"farm/lease/claimed/{kind}", 0) for kind in CLAIMS),
        keywords_ended=sum(stats.get(f"farm/keyword/{end}", 0) for end in ENDS),
        pages=stats.get("farm/progress/pages", 0),
        postings=stats.get("farm/sql/upserted", 0),
        refusals=refusals,
        coverage={"items": coverage.get("items", 0), **{name: coverage.get(name, 0) for name in FIELDS}},
        stats=kept,
    )
