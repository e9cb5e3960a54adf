"""What two workers sharing work through Redis cost the Redis server, counted by a redis-server of the
test's own (bench/redis_commands_bench.py measures it the same way, on more keywords)."""

import pytest

from bench.redis_commands_bench import figures, measure

pytestmark = [pytest.mark.e2e, pytest.mark.redis]


def test_a_keyword_costs_redis_at_most_20_commands_and_a_page_of_keywords_of_8_pages_at_most_6():
    none, one, eight = measure(keywords=16, timeout=180)
    assert (one.pages, eight.pages) == (16, 128)  # every page fetched once
    executed = figures(none, one, eight, "executed")  # the commands inside scripts counted too
    assert executed.keyword <= 20, executed
    assert executed.page_of_8 <= 6, executed
