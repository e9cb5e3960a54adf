"""KeywordStore on real databases: every test runs on SQLite and on MariaDB."""

from dataclasses import replace
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import func, select

from farm.state import KeywordError, KeywordStore
from farm.state.db import make_engine
from farm.state.models import JobPostingRow
from tests.migrated import migrated

SHANGHAI = ZoneInfo("Asia/Shanghai")


class FakeClock:
    """A clock the test moves by hand; whole seconds so MySQL DATETIME keeps them exactly."""

    def __init__(self, now: datetime):
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def set_local(self, y, m, d, hh, mm, ss=0):
        self.now = datetime(y, m, d, hh, mm, ss, tzinfo=SHANGHAI).astimezone(UTC)

    def advance(self, **kw):
        self.now += timedelta(**kw)


@pytest.fixture
def clock():
    return FakeClock(datetime(2025, 3, 10, 12, 0, 0, tzinfo=SHANGHAI).astimezone(UTC))


@pytest.fixture
def store(every_db_url, clock):
    migrated(every_db_url)
    engine = make_engine(every_db_url)
    # failed rows are due again at once unless a test says otherwise
    store = KeywordStore(
        engine,
        timezone="Asia/Shanghai",
        lease_timeout=600,
        max_retries=3,
        retry_delay=0,
        max_blocked_claims=3,
        clock=clock,
    )
    yield store
    engine.dispose()


def row(store, kid):
    [r] = [r for r in store.list_keywords() if r["id"] == kid]
    return r


def ids(leases):
    return [lease.id for lease in leases]


def add(store, *jobs, source="boss", city="北京"):
    store.add_keywords([(source, city, job) for job in jobs])
    return {r["job"]: r["id"] for r in store.list_keywords(source=source)}


# --- claims -----------------------------------------------------------------------


def test_claim_order_partial_then_failed_with_retries_then_fresh(store):
    kid = add(store, "a", "b", "c", "d", "e")
    first = store.claim("boss", "w1", n=4)  # a, b, c, d
    by_job = {lease.job: lease for lease in first}
    assert store.fail(by_job["a"], "boom")
    assert store.release(by_job["b"], "blocked")
    assert store.complete(by_job["c"])
    # d stays crawling; e is still fresh
    claimed = store.claim("boss", "w2", n=5)
    assert [(lease.job, lease.from_status) for lease in claimed] == [
        ("b", "partial"),
        ("a", "failed"),
        ("e", "fresh"),
    ]
    assert ids(claimed) == [kid["b"], kid["a"], kid["e"]]
    assert store.claim("boss", "w3") == []


def test_claim_sets_fields_and_a_new_token(store, clock):
    kid = add(store, "python")
    [lease] = store.claim("boss", "host:1")
    assert (lease.id, lease.source, lease.city, lease.job) == (kid["python"], "boss", "北京", "python")
    assert (lease.start_page, lease.from_status) == (1, "fresh") and 0 < lease.lease_token < 2**53
    assert (lease.total_pages, lease.pages_ahead, lease.retry_count) == (None, frozenset(), 0)
    r = row(store, lease.id)
    assert r["crawl_status"] == "crawling"
    assert r["last_requested_date"] == date(2025, 3, 10)
    assert r["last_requested_at"] == clock.now
    assert r["crawl_started_at"] == clock.now
    assert r["heartbeat_at"] == clock.now
    assert r["updated_at"] == clock.now
    assert r["crawler_id"] == "host:1"
    assert r["lease_token"] == lease.lease_token


def test_claim_only_its_source_and_at_most_n(store):
    add(store, "a", "b", "c")
    add(store, "x", source="qcwy")
    assert [lease.job for lease in store.claim("boss", "w", n=2)] == ["a", "b"]
    assert [lease.job for lease in store.claim("qcwy", "w", n=5)] == ["x"]
    assert [lease.job for lease in store.claim("boss", "w", n=5)] == ["c"]
    assert store.claim("zhilian", "w", n=5) == []
    assert store.claim("boss", "w", n=0) == []


def test_fresh_claim_zeroes_yesterdays_progress(store, clock):
    add(store, "python")
    [lease] = store.claim("boss", "w")
    store.page_done(lease, 1, 15, total_pages=3)
    store.page_done(lease, 3, 15)
    assert store.fail(lease, "boom")
    clock.advance(days=1)
    [again] = store.claim("boss", "w")
    assert (again.from_status, again.start_page) == ("fresh", 1) and again.lease_token != lease.lease_token
    assert again.total_pages is None and again.pages_ahead == frozenset()
    r = row(store, again.id)
    assert (r["last_completed_page"], r["total_pages"], r["jobs_found"]) == (0, None, 0)
    assert (r["error_message"], r["retry_count"], r["pages_ahead"]) == (None, 0, "")
    assert r["last_requested_date"] == date(2025, 3, 11)


def test_partial_claim_keeps_progress_and_resumes_after_watermark(store):
    add(store, "python")
    [lease] = store.claim("boss", "w1")
    store.page_done(lease, 1, 15, total_pages=5)
    store.page_done(lease, 2, 15)
    store.page_done(lease, 4, 15)
    assert store.release(lease, "blocked by site")
    [resumed] = store.claim("boss", "w2")
    assert resumed.from_status == "partial"
    assert resumed.start_page == 3
    assert resumed.total_pages == 5
    assert resumed.pages_ahead == frozenset({4})
    assert resumed.pages_to_fetch(5) == [3, 5]
    r = row(store, resumed.id)
    assert (r["last_completed_page"], r["jobs_found"], r["crawler_id"]) == (2, 45, "w2")
    # the new holder finishes: completion comes with the stored total
    assert not store.page_done(resumed, 3, 15).completed
    done = store.page_done(resumed, 5, 15)
    assert done.completed and done.last_completed_page == 5
    assert row(store, resumed.id)["crawl_status"] == "completed"


def test_retries_are_bounded(store):
    add(store, "always-fails")
    attempts = 0
    while leases := store.claim("boss", "w"):
        [lease] = leases
        attempts += 1
        assert lease.retry_count == attempts - 1
        assert store.fail(lease, f"attempt {attempts} failed")
        assert attempts < 10, "a failing keyword must not be claimed forever"
    assert attempts == 4
    r = row(store, lease.id)
    assert (r["crawl_status"], r["retry_count"]) == ("failed", 3)
    assert r["error_message"] == "attempt 4 failed"
    assert store.claimable("boss") == 0


def test_fail_truncates_long_messages(store):
    add(store, "python")
    [lease] = store.claim("boss", "w")
    assert store.fail(lease, "x" * 100_000)
    message = row(store, lease.id)["error_message"]
    assert 100 < len(message) <= 2000


# --- fencing ----------------------------------------------------------------------


def test_old_holder_is_fenced_after_reap_and_new_claim(store, clock):
    add(store, "python")
    [old] = store.claim("boss", "w1")
    store.page_done(old, 1, 10, total_pages=4)
    clock.advance(seconds=601)
    assert store.reap() == 1
    [new] = store.claim("boss", "w2")
    assert new.lease_token != old.lease_token
    # the old holder cannot guess the new token from its own
    for guess in (old.lease_token + 1, old.lease_token + 2, old.lease_token - 1):
        assert store.heartbeat(replace(old, lease_token=guess)) is False
    store.page_done(new, 2, 10)
    before = row(store, new.id)

    write = store.page_done(old, 3, 99, total_pages=3)
    assert (write.applied, write.counted, write.completed) == (False, False, False)
    assert store.heartbeat(old) is False
    assert store.complete(old) is False
    assert store.fail(old, "late failure") is False
    assert store.release(old, "late release") is False
    assert row(store, new.id) == before
    assert before["crawl_status"] == "crawling" and before["crawler_id"] == "w2"
    assert (before["last_completed_page"], before["jobs_found"]) == (2, 20)


def test_reaped_lease_is_fenced_before_any_new_claim(store, clock):
    add(store, "python")
    [lease] = store.claim("boss", "w1")
    clock.advance(seconds=601)
    assert store.reap() == 1
    assert store.page_done(lease, 1, 10).applied is False
    assert store.complete(lease) is False
    r = row(store, lease.id)
    assert (r["crawl_status"], r["last_completed_page"], r["jobs_found"]) == ("partial", 0, 0)
    assert "reaped" in r["error_message"]


def test_writes_after_complete_are_fenced(store):
    add(store, "python")
    [lease] = store.claim("boss", "w1")
    assert store.complete(lease)
    assert store.complete(lease) is True  # same lease, already completed: idempotent
    assert store.fail(lease, "late") is False
    assert store.page_done(lease, 1, 5).applied is False
    r = row(store, lease.id)
    assert (r["crawl_status"], r["jobs_found"], r["error_message"]) == ("completed", 0, None)


# --- watermark --------------------------------------------------------------------


def test_watermark_out_of_order_pages_2_1_3(store):
    add(store, "python")
    [lease] = store.claim("boss", "w")
    assert store.page_done(lease, 2, 10).last_completed_page == 0
    assert row(store, lease.id)["pages_ahead"] == "2"
    assert store.page_done(lease, 1, 10).last_completed_page == 2
    assert store.page_done(lease, 3, 10).last_completed_page == 3
    r = row(store, lease.id)
    assert (r["last_completed_page"], r["pages_ahead"], r["jobs_found"]) == (3, "", 30)
    assert r["crawl_status"] == "crawling"  # total unknown: not complete yet


def test_watermark_with_gap_pages_1_3(store):
    add(store, "python")
    [lease] = store.claim("boss", "w")
    store.page_done(lease, 1, 10)
    write = store.page_done(lease, 3, 7)
    assert (write.applied, write.counted, write.last_completed_page) == (True, True, 1)
    r = row(store, lease.id)
    assert (r["last_completed_page"], r["pages_ahead"], r["jobs_found"]) == (1, "3", 17)


def test_page_reported_twice_counts_jobs_once(store):
    add(store, "python")
    [lease] = store.claim("boss", "w")
    assert store.page_done(lease, 1, 10).counted
    assert store.page_done(lease, 3, 5).counted
    again_below = store.page_done(lease, 1, 10)
    again_ahead = store.page_done(lease, 3, 5)
    assert (again_below.applied, again_below.counted) == (True, False)
    assert (again_ahead.applied, again_ahead.counted) == (True, False)
    assert row(store, lease.id)["jobs_found"] == 15


def test_completion_is_atomic_with_the_last_page(store):
    add(store, "python")
    [lease] = store.claim("boss", "w")
    first = store.page_done(lease, 1, 15, total_pages=2)
    assert (first.completed, first.total_pages) == (False, 2)
    assert row(store, lease.id)["crawl_status"] == "crawling"
    last = store.page_done(lease, 2, 4)
    assert (last.applied, last.completed, last.last_completed_page, last.total_pages) == (True, True, 2, 2)
    r = row(store, lease.id)
    assert (r["crawl_status"], r["last_completed_page"], r["jobs_found"]) == ("completed", 2, 19)
    assert store.complete(lease) is True  # the spider's own complete() after it is harmless


def test_single_page_keyword_completes_on_its_only_page(store):
    add(store, "rare")
    [lease] = store.claim("boss", "w")
    assert store.page_done(lease, 1, 3, total_pages=1).completed
    assert row(store, lease.id)["crawl_status"] == "completed"


# --- staleness --------------------------------------------------------------------


def test_staleness_is_judged_by_heartbeat_not_start(store, clock):
    add(store, "long", "stuck")
    long, stuck = store.claim("boss", "w", n=2)
    for page in range(1, 8):  # an hour of steady progress on "long"
        clock.advance(seconds=500)
        assert store.page_done(long, page, 10).applied
    assert store.reap() == 1  # only "stuck": its heartbeat is the claim, an hour ago
    assert row(store, long.id)["crawl_status"] == "crawling"
    assert row(store, stuck.id)["crawl_status"] == "partial"
    clock.advance(seconds=500)
    assert store.heartbeat(long)
    clock.advance(seconds=500)
    assert store.reap() == 0  # 500 s since the heartbeat, timeout is 600
    clock.advance(seconds=101)
    assert store.reap() == 1
    assert row(store, long.id)["crawl_status"] == "partial"


# --- day rollover -----------------------------------------------------------------


def test_day_rollover_in_shanghai(store, clock):
    add(store, "yesterday", "today")
    clock.set_local(2025, 3, 10, 23, 59)
    assert store.today() == date(2025, 3, 10)
    [y] = store.claim("boss", "w")
    assert y.job == "yesterday"
    assert store.complete(y)
    clock.set_local(2025, 3, 11, 0, 1)  # 16:01 UTC on the 10th: already the 11th in Shanghai
    assert clock.now.date() == date(2025, 3, 10)
    assert store.today() == date(2025, 3, 11)
    first = store.claim("boss", "w", n=1)
    assert [lease.job for lease in first] == ["today"]  # never requested sorts first
    assert store.complete(first[0])
    [again] = store.claim("boss", "w")  # yesterday's completed row is fresh again
    assert (again.job, again.from_status) == ("yesterday", "fresh") and again.lease_token != y.lease_token
    assert store.complete(again)
    assert store.claim("boss", "w") == []  # today's completed rows are not claimable
    assert store.claimable("boss") == 0


# --- stats and claimable ----------------------------------------------------------


def test_stats_shape_and_numbers(store, clock):
    add(store, "a", "b", "c", "d", "e", "f")
    add(store, "x", source="zhilian")
    a, b, c, d = store.claim("boss", "w", n=4)
    store.page_done(a, 1, 15, total_pages=1)  # completed, 15
    store.page_done(b, 1, 7)
    store.release(b, "blocked")  # partial, 7
    store.fail(c, "boom")  # failed
    store.page_done(d, 1, 3)  # crawling, 3
    stats = store.stats()
    assert [s["source"] for s in stats] == ["boss", "qcwy", "zhilian"]
    assert stats[0] == {
        "date": "2025-03-10",
        "source": "boss",
        "total": 6,
        "used": 4,
        "unused": 2,
        "crawl_status": {"crawling": 1, "completed": 1, "failed": 1, "partial": 1},
        "jobs_found": 25,
    }
    assert stats[1] == {
        "date": "2025-03-10",
        "source": "qcwy",
        "total": 0,
        "used": 0,
        "unused": 0,
        "crawl_status": {"crawling": 0, "completed": 0, "failed": 0, "partial": 0},
        "jobs_found": 0,
    }
    assert (stats[2]["total"], stats[2]["used"], stats[2]["unused"]) == (1, 0, 1)
    assert store.stats("zhilian") == [stats[2]]
    # another day: nothing used on it
    [other] = store.stats("boss", day=date(2025, 3, 9))
    assert (other["date"], other["used"], other["unused"], other["jobs_found"]) == ("2025-03-09", 0, 6, 0)
    assert store.stats("boss", day="2025-03-10") == [stats[0]]
    clock.advance(days=1)
    [tomorrow] = store.stats("boss")
    assert (tomorrow["date"], tomorrow["used"], tomorrow["unused"]) == ("2025-03-11", 0, 6)


def test_claimable_counts_fresh_partial_and_retryable_failed(store):
    add(store, "a", "b", "c", "d", "e")
    assert store.claimable("boss") == 5
    a, b, c, d = store.claim("boss", "w", n=4)
    assert store.claimable("boss") == 1  # only e; four are crawling
    store.release(a, "stop")
    store.fail(b, "boom")
    store.complete(c)
    assert store.claimable("boss") == 3  # e, partial a, failed b
    assert store.claimable("qcwy") == 0
    claimed = store.claim("boss", "w", n=10)
    assert len(claimed) == 3 and store.claimable("boss") == 0


# --- keywords ---------------------------------------------------------------------


def test_add_keywords_is_idempotent(store):
    rows = [("boss", "北京", "python"), ("boss", "上海", "python"), ("qcwy", "北京", "python")]
    assert store.add_keywords(rows) == 3
    assert store.add_keywords(rows) == 0
    assert store.add_keywords(rows + [(" zhilian ", " 765 ", " java ")]) == 1
    assert store.add_keywords([("boss", "北京", "go"), ("boss", "北京", "go")]) == 1
    listed = store.list_keywords()
    assert [(r["source"], r["city"], r["job"]) for r in listed] == rows + [
        ("zhilian", "深圳", "java"),  # 智联's code of 深圳: one city, one spelling
        ("boss", "北京", "go"),
    ]
    r = listed[0]
    assert (r["crawl_status"], r["last_completed_page"], r["jobs_found"], r["retry_count"]) == ("idle", 0, 0, 0)
    assert (r["lease_token"], r["pages_ahead"], r["last_requested_date"]) == (0, "", None)


def test_add_keywords_is_all_or_nothing_on_a_bad_row(store):
    rows = [("boss", "北京", "python"), ("nowhere", "北京", "java"), ("boss", "上海", "go")]
    with pytest.raises(KeywordError, match="nowhere"):
        store.add_keywords(rows)
    with pytest.raises(KeywordError, match="job"):
        store.add_keywords([("boss", "北京", "python"), ("boss", "北京", "x" * 129)])
    with pytest.raises(KeywordError, match="unknown city '拉萨' for qcwy"):
        store.add_keywords([("boss", "北京", "python"), ("qcwy", "拉萨", "java")])
    with pytest.raises(KeywordError, match=r"U\+202E RIGHT-TO-LEFT OVERRIDE"):
        store.add_keywords([("boss", "北京", "python"), ("boss", "北京", "\u202ejava")])
    assert store.list_keywords() == []


def test_add_keywords_in_many_chunks(store):
    rows = [("qcwy", f"{i % 50:06d}", f"job{i}") for i in range(12_345)]  # city codes pass validation
    assert store.add_keywords(rows) == 12_345
    assert store.add_keywords(rows[:100] + [("qcwy", "北京", "new")]) == 1
    assert store.stats("qcwy")[0]["total"] == 12_346


def test_list_keywords_filters(store):
    add(store, "a", "b", "c")
    add(store, "x", source="qcwy")
    [lease] = store.claim("boss", "w")
    store.complete(lease)
    assert [r["job"] for r in store.list_keywords(source="boss")] == ["a", "b", "c"]
    assert [r["job"] for r in store.list_keywords(status="completed")] == ["a"]
    assert [r["job"] for r in store.list_keywords(limit=2)] == ["a", "b"]


def test_from_config(every_db_url, clock):
    from scrapy.settings import Settings

    from farm.config import FarmConfig

    migrated(every_db_url)
    store = KeywordStore.from_config(
        FarmConfig.from_settings(
            Settings(
                {
                    "FARM_DB_URL": every_db_url,
                    "FARM_TIMEZONE": "UTC",
                    "FARM_LEASE_TIMEOUT": "60",
                    "FARM_MAX_RETRIES": "1",
                }
            )
        )
    )
    try:
        assert (store.lease_timeout, store.max_retries, str(store.tz)) == (60, 1, "UTC")
        assert store.add_keywords([("boss", "北京", "python")]) == 1
    finally:
        store.close()


# --- postings ---------------------------------------------------------------------


def posting(job_id, keyword_id, **fields):
    base = dict(
        source="boss",
        job_id=job_id,
        title="Python 开发",
        salary="15-25K",
        company="甲公司",
        city="北京",
        area="海淀区",
        experience="3-5年",
        degree="本科",
        tags=["Python", "Django"],
        published_at=None,
        url=f"https://www.zhipin.com/job_detail/{job_id}.html",
        keyword_id=keyword_id,
        raw={"encryptJobId": job_id},
    )
    base.update(fields)
    return base


def postings(store):
    with store.engine.connect() as conn:
        rows = conn.execute(select(JobPostingRow.__table__).order_by("id")).all()
    return [dict(r._mapping) for r in rows]


def test_upsert_postings_inserts_then_updates_in_place(store, clock):
    first_seen = clock.now
    assert store.upsert_postings([posting("j1", 1), posting("j2", 1)], first_seen) == 2
    later = first_seen + timedelta(hours=3)
    published = datetime(2025, 3, 9, 8, 0, tzinfo=UTC)
    # a second keyword finds j1 again, changed
    assert (
        store.upsert_postings(
            [posting("j1", 2, title="高级 Python", salary="20-30K", tags=["Go"], published_at=published, raw={"v": 2})],
            later,
        )
        == 1
    )
    rows = postings(store)
    assert [(r["source"], r["job_id"]) for r in rows] == [("boss", "j1"), ("boss", "j2")]
    j1, j2 = rows
    assert (j1["title"], j1["salary"], j1["tags"], j1["raw"]) == ("高级 Python", "20-30K", ["Go"], {"v": 2})
    assert j1["published_at"] == published
    assert j1["first_seen_at"] == first_seen and j1["last_seen_at"] == later
    assert j1["keyword_id"] == 1  # the keyword that found it first
    assert (j2["first_seen_at"], j2["last_seen_at"], j2["title"]) == (first_seen, first_seen, "Python 开发")


def test_upsert_postings_one_row_per_source_and_job_id(store, clock):
    store.upsert_postings([posting("j1", 1), posting("j1", 2, title="later")], clock.now)
    store.upsert_postings([posting("j1", 3), dict(posting("j1", 3), source="qcwy")], clock.now)
    with store.engine.connect() as conn:
        count = conn.execute(select(func.count()).select_from(JobPostingRow.__table__)).scalar_one()
    assert count == 2
    assert store.upsert_postings([], clock.now) == 0


def test_ids_differing_only_in_case_are_distinct_keywords_are_one_search(store, clock):
    """Boss's encryptJobId mixes case: a case-blind unique key would merge two postings. A keyword's
    job is searched case-blind by the sites: Java and java are one search, stored once."""
    assert store.add_keywords([("boss", "北京", "Java"), ("boss", "北京", "java")]) == 1
    row = {
        "source": "boss",
        "title": "t",
        "salary": None,
        "company": None,
        "city": None,
        "area": None,
        "experience": None,
        "degree": None,
        "tags": [],
        "published_at": None,
        "url": None,
        "keyword_id": 1,
        "raw": {},
    }
    store.upsert_postings([{**row, "job_id": "abcEVRW"}, {**row, "job_id": "abcevrw"}], clock())
    with store.engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(JobPostingRow)).scalar() == 2


def test_a_failed_keyword_is_not_claimed_again_before_the_retry_delay(every_db_url, clock):
    migrated(every_db_url)
    store = KeywordStore(make_engine(every_db_url), lease_timeout=600, retry_delay=600, clock=clock)
    add(store, "flaky")
    [lease] = store.claim("boss", "w")
    assert store.fail(lease, "timeout")
    assert row(store, lease.id)["retry_at"] == clock.now + timedelta(seconds=600)
    assert store.claim("boss", "w") == []
    outlook = store.outlook("boss")
    assert (outlook.claimable, outlook.next_retry_at) == (0, clock.now + timedelta(seconds=600))
    clock.advance(seconds=599)
    assert store.claim("boss", "w") == []
    clock.advance(seconds=1)
    [again] = store.claim("boss", "w")
    assert (again.id, again.from_status, again.retry_count) == (lease.id, "failed", 1)
    assert store.outlook("boss") == type(outlook)(0, None)
    store.engine.dispose()


def test_a_keyword_blocked_in_max_blocked_claims_claims_ends_failed_for_the_day(store):
    add(store, "walled")
    for claims in (1, 2, 3):
        [lease] = store.claim("boss", "w")
        assert lease.from_status == ("fresh" if claims == 1 else "partial")
        assert store.release(lease, f"boss_37 #{claims}", blocked=True)
    r = row(store, lease.id)
    assert (r["crawl_status"], r["blocked_claims"]) == ("failed", 3)
    assert r["error_message"] == "blocked 3 times today; last: boss_37 #3"
    assert store.claim("boss", "w") == [] and store.claimable("boss") == 0  # failed, but not retried today


def test_a_release_for_a_stop_is_not_counted_as_a_block(store):
    add(store, "stopped")
    for _ in range(5):
        [lease] = store.claim("boss", "w")
        assert store.release(lease, "crawl closed")
    assert (row(store, lease.id)["crawl_status"], row(store, lease.id)["blocked_claims"]) == ("partial", 0)


def test_a_keyword_held_under_a_live_heartbeat_is_not_claimed_fresh_after_midnight(store, clock):
    add(store, "across-midnight", "stale-holder")
    clock.set_local(2025, 3, 10, 23, 50)
    live, dead = store.claim("boss", "night-crawler", n=2)
    clock.set_local(2025, 3, 10, 23, 59, 50)
    assert store.page_done(live, 1, 30).applied  # its holder heartbeats at 23:59:50
    clock.set_local(2025, 3, 11, 0, 0, 30)
    # another crawler at 00:00:30: yesterday's rows look fresh, but one is held and alive
    [taken] = store.claim("boss", "morning-crawler", n=2)
    assert taken.id == dead.id  # its holder has been silent since 23:50: past the lease timeout
    assert store.outlook("boss").claimable == 0
    assert store.page_done(live, 2, 30, total_pages=2).completed  # the night crawler finishes it
    assert row(store, live.id)["last_requested_date"] == date(2025, 3, 10)  # yesterday's crawl
    [today] = store.claim("boss", "morning-crawler")  # and today it is crawled again, once
    assert (today.id, today.from_status, today.start_page) == (live.id, "fresh", 1)


def test_ends_are_written_in_the_batch_after_its_pages(store):
    add(store, "a")
    [lease] = store.claim("boss", "w")
    result = store.write_batch(
        [], [(lease, 1, 5, None), (lease, 2, 5, None)], store.clock(), [(lease, "failed", "page 3: HTTP 404")]
    )
    assert [p.applied for p in result.pages] == [True, True] and result.ends == ["failed"]
    r = row(store, lease.id)
    assert (r["crawl_status"], r["last_completed_page"], r["jobs_found"]) == ("failed", 2, 10)


def test_an_end_of_a_lease_no_longer_current_changes_nothing(store):
    add(store, "a")
    [lease] = store.claim("boss", "w")
    assert store.release(lease, "stop")
    [again] = store.claim("boss", "v")
    assert store.end(lease, "failed", "late") is None
    assert store.end(again, "completed") == "completed"
    assert store.end(again, "completed") == "completed"  # completed already by this lease: still true
    with pytest.raises(ValueError, match="unknown end"):
        store.end(again, "vanished")


def test_claim_can_skip_partial_rows_a_crawler_gave_up_on(store):
    store.add_keywords([("qcwy", "北京", "python"), ("qcwy", "上海", "java")])
    first, second = store.claim("qcwy", "a", 2)
    assert store.release(first, "blocked: qcwy_waf_challenge")
    assert store.claim("qcwy", "a", 1, skip_partial={first.id}) == []
    [again] = store.claim("qcwy", "b", 1)
    assert (again.id, again.from_status) == (first.id, "partial")
