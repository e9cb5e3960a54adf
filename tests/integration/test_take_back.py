"""KeywordStore.take_back (the JOBDIR resume): on SQLite and on MariaDB, with a clock of its own."""

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from farm.state.db import make_engine
from farm.state.store import KeywordStore
from tests.migrated import migrated

SHANGHAI = ZoneInfo("Asia/Shanghai")


class Clock:
    def __init__(self):
        self.now = datetime(2026, 12, 1, 12, 0, 0, tzinfo=SHANGHAI).astimezone(UTC)

    def __call__(self):
        return self.now


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def store(every_db_url, clock):
    migrated(every_db_url)
    store = KeywordStore(make_engine(every_db_url), clock=clock, lease_timeout=1800)
    store.add_keywords([("qcwy", "北京", job) for job in ("a", "b", "c", "d")])
    yield store
    store.close()


def row(store, keyword_id):
    return next(r for r in store.list_keywords() if r["id"] == keyword_id)


def test_a_killed_crawls_keywords_come_back_at_once_under_new_tokens(store, clock):
    held = store.claim("qcwy", "me", 2)
    store.page_done(held[0], 1, 20, total_pages=5)
    store.page_done(held[0], 3, 20, total_pages=5)
    clock.now += timedelta(seconds=5)  # long before FARM_LEASE_TIMEOUT
    back = store.take_back("qcwy", "me", {lease.key for lease in held})
    assert [lease.id for lease in back] == [lease.id for lease in held]
    assert all(new.lease_token != old.lease_token for new, old in zip(back, held))
    first = back[0]
    assert (first.start_page, first.total_pages, first.pages_ahead) == (2, 5, frozenset({3}))
    assert row(store, first.id)["crawl_status"] == "crawling" and row(store, first.id)["heartbeat_at"] == clock.now
    # the old tokens are fenced: a write of the killed crawl changes nothing
    assert not store.page_done(held[0], 2, 20).applied
    assert store.page_done(first, 2, 20).applied


def test_a_keyword_claimed_after_the_last_checkpoint_comes_back_by_its_holder(store):
    [lease] = store.claim("qcwy", "me", 1)
    [back] = store.take_back("qcwy", "me", held=())  # the checkpoint never saw it: still crawling, ours
    assert back.id == lease.id and back.lease_token != lease.lease_token


def test_a_paused_crawls_partial_keywords_come_back_only_under_the_tokens_it_held(store):
    paused, blocked = store.claim("qcwy", "me", 2)
    store.release(paused, "crawl closed (shutdown)")
    store.release(blocked, "site blocked", blocked=True)
    back = store.take_back("qcwy", "me", {paused.key})  # the block ended its lease: not in the checkpoint
    assert [lease.id for lease in back] == [paused.id]
    assert row(store, blocked.id)["crawl_status"] == "partial"


def test_a_keyword_someone_else_took_meanwhile_stays_theirs(store, clock):
    [mine] = store.claim("qcwy", "me", 1)
    store.release(mine, "crawl closed (shutdown)")
    [theirs] = store.claim("qcwy", "other", 1)  # partial first: the same keyword
    assert theirs.id == mine.id
    assert store.take_back("qcwy", "me", {mine.key}) == []
    assert row(store, mine.id)["crawler_id"] == "other" and row(store, mine.id)["lease_token"] == theirs.lease_token


def test_ended_keywords_and_yesterdays_are_not_taken_back(store, clock):
    done, failed, old = store.claim("qcwy", "me", 3)
    store.complete(done)
    store.fail(failed, "HTTP 404")
    clock.now += timedelta(days=1)  # old is still crawling, but from yesterday: today's claim rules decide
    assert store.take_back("qcwy", "me", {done.key, failed.key, old.key}) == []


def test_a_keyword_another_worker_adopted_is_left_to_it(store):
    """Shared through Redis, a survivor adopts a stopped worker's lease without a new claim."""
    adopted, mine = store.claim("qcwy", "me", 2)
    back = store.take_back("qcwy", "me", {adopted.key, mine.key}, others={adopted.key})
    assert [lease.id for lease in back] == [mine.id]
    assert row(store, adopted.id)["lease_token"] == adopted.lease_token
