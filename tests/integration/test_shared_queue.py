"""The shared queue on the machine's real Redis, each test under its own key prefix."""

import time
import uuid
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import orjson
import pytest
import redis

from farm.crawl.backends.redis.codec import BadPayload
from farm.crawl.backends.redis.dupefilter import DayDupeFilter
from farm.crawl.backends.redis.queue import SharedQueue
from farm.sites.qcwy.spider import QcwySpider
from tests.conftest import REDIS_URL
from tests.unit.spider_helpers import make_lease, make_spider

pytestmark = pytest.mark.redis
SHANGHAI = ZoneInfo("Asia/Shanghai")


@pytest.fixture
def server():
    client = redis.Redis.from_url(REDIS_URL)
    prefix = f"farm-test-{uuid.uuid4().hex[:10]}"
    client.prefix = prefix
    yield client
    keys = list(client.scan_iter(f"{prefix}:*"))
    if keys:
        client.delete(*keys)
    client.close()


@pytest.fixture
def spider():
    spider, _ = make_spider(QcwySpider, clock=1750000000)
    return spider


def queue_for(server, spider, worker, clock=lambda: datetime.now(UTC)):
    key = f"{server.prefix}:qcwy"
    return SharedQueue(server, spider, key, worker, DayDupeFilter(server, f"{key}:seen", SHANGHAI, clock))


def pages(spider, lease, *numbers, **replace):
    return [spider.page_request(lease, n).replace(**replace) for n in numbers]


def taken_pages(taken):
    return [t.request.meta["farm_page"] for t in taken]


def test_a_request_goes_round_as_data_and_its_page_is_queued_once_a_day(server, spider):
    queue = queue_for(server, spider, "w1")
    lease = make_lease("qcwy")
    assert queue.push_many(pages(spider, lease, 1, 2, 2)) == [True, True, False]
    assert queue.push_many(pages(spider, lease, 1)) == [False]  # another worker learnt of it too
    [again] = pages(spider, lease, 1)
    again.meta["farm_again"] = True
    assert queue.push_many([again]) == [True]  # a page lost on the way, asked for anew
    wait, taken = queue.pop_many(10)
    assert wait == 0 and taken_pages(taken) == [1, 2, 1]
    first = taken[0].request
    assert first.meta["farm_lease"] == lease and first.callback == spider.parse_search
    assert taken[0].lease == lease.name == "1:1"
    assert queue.open_requests("1:1") == 3


def test_a_taken_request_stays_in_flight_until_acknowledged(server, spider):
    queue = queue_for(server, spider, "w1")
    lease = make_lease("qcwy")
    queue.push_many(pages(spider, lease, 1, 2))
    queue.heartbeat()
    _, taken = queue.pop_many(10)
    assert len(queue) == 0 and server.zcard(queue.k("taken:w1")) == 2 and queue.busy()
    assert queue.ack([taken[0].id]) == [("1:1", 1)]
    assert queue.ack([taken[0].id]) == []  # once
    assert queue.ack([taken[1].id]) == [("1:1", 0)]
    assert not queue.busy() and server.hlen(queue.k("req")) == 0 and queue.open_requests("1:1") == 0


def test_a_dead_workers_in_flight_requests_go_back_with_their_priority_and_its_keywords_to_a_survivor(server, spider):
    dead, alive = queue_for(server, spider, "dead"), queue_for(server, spider, "alive")
    lease = make_lease("qcwy")
    dead.push_many(pages(spider, lease, 1) + pages(spider, lease, 2, priority=5))
    dead.heartbeat()
    dead.hold([lease.name])
    _, taken = dead.pop_many(10)
    assert taken_pages(taken) == [2, 1]  # priority first
    alive.heartbeat()
    assert alive.requeue_dead(timeout=5) == (0, [], [])  # not silent long enough
    time.sleep(0.05)
    # and what the keyword table says "dead" holds is now "alive"'s to look up
    assert alive.requeue_dead(timeout=0.01) == (2, ["1:1"], ["dead"])
    assert server.hget(alive.k("owner"), "1:1") == b"alive"
    _, again = alive.pop_many(10)
    assert taken_pages(again) == [2, 1] and {t.id for t in again} == {t.id for t in taken}
    assert dead.ack([t.id for t in taken]) == []  # the dead worker's late acks change nothing
    assert server.zcard(alive.k("taken:alive")) == 2
    assert server.zscore(alive.k("live"), "dead") is None


def test_a_worker_taking_keywords_on_keeps_the_others_and_whoever_finds_it_stopped_takes_that_on(server, spider):
    claimer, other, survivor = (queue_for(server, spider, name) for name in ("claimer", "other", "survivor"))
    other.heartbeat()
    survivor.heartbeat()
    assert not other.busy()
    claimer.claiming()  # then its claim commits in the keyword table; it is killed before it lists it here
    assert other.busy() and not claimer.busy()  # the others wait; its own taking-on is not work it waits for
    time.sleep(0.05)
    other.heartbeat()
    survivor.heartbeat()
    assert survivor.requeue_dead(timeout=0.04) == (0, [], ["claimer"])
    assert server.zscore(survivor.k("live"), "claimer") is None
    assert other.busy()  # the survivor now takes it on
    survivor.hold(["7:1"], taken_from="claimer")  # what the keyword table listed for it
    assert not other.busy() and survivor.taking() == set()
    assert server.hget(survivor.k("owner"), "7:1") == b"survivor"


def test_a_worker_that_leaves_while_taking_on_a_stopped_ones_keywords_is_left_for_a_survivor(server, spider):
    stopped, leaving, survivor = (queue_for(server, spider, name) for name in ("stopped", "leaving", "survivor"))
    stopped.claiming()
    time.sleep(0.05)
    leaving.heartbeat()
    assert leaving.requeue_dead(timeout=0.04) == (0, [], ["stopped"])
    leaving.claiming()
    leaving.leave()  # a clean close before it looked "stopped" up: it stays listed, as silent
    assert server.zscore(leaving.k("live"), "leaving") is not None
    time.sleep(0.05)
    survivor.heartbeat()
    _, _, look_up = survivor.requeue_dead(timeout=0.04)
    assert sorted(look_up) == ["leaving", "stopped"]
    quiet = queue_for(server, spider, "quiet")
    quiet.claiming()
    quiet.hold([], taken_from="quiet")  # its claim found nothing
    quiet.leave()  # nothing taken on: no longer live
    assert server.zscore(quiet.k("live"), "quiet") is None


def test_an_ended_keywords_queued_requests_are_dropped_at_the_pop_and_its_owner_told(server, spider):
    owner, other = queue_for(server, spider, "owner"), queue_for(server, spider, "other")
    lease, another = make_lease("qcwy"), make_lease("qcwy", id=2)
    owner.push_many(pages(spider, lease, 1, 2, 3) + pages(spider, another, 1))
    owner.hold([lease.name, another.name])
    assert other.ended(lease.name, "failed") == "owner"
    _, taken = other.pop_many(10)
    assert [t.lease for t in taken] == ["2:1"] and owner.open_requests("1:1") == 0
    assert owner.inbox() == [("1:1", "failed")] and owner.inbox() == []
    assert other.push_many(pages(spider, lease, 4)) == [False]  # nor are new ones queued


def test_the_shared_pace_spaces_pops_across_workers_and_backs_off_for_all(server, spider):
    one, two = queue_for(server, spider, "one"), queue_for(server, spider, "two")
    one.set_rate(2)  # one request every 500 ms, jittered to 250-750 ms
    one.push_many(pages(spider, make_lease("qcwy"), *range(1, 6)))
    wait, taken = one.pop_many(10)
    assert wait == 0 and len(taken) == 1  # paced: one per turn
    wait, taken = two.pop_many(10)
    assert 0.2 <= wait <= 0.75 and taken == []
    one.back_off(base=2, most=60)
    wait, _ = two.pop_many(10)
    assert 1.9 <= wait <= 2.0
    assert one.ease(base=2, most=60) == 1000


def test_a_payload_that_is_not_farms_json_is_refused_never_run(server, spider):
    queue = queue_for(server, spider, "w1")
    for rid, payload in (
        ("66", b"\x80\x04\x95pickle"),
        ("67", orjson.dumps({"url": "http://x", "farm": 1, "callback": "parse_search", "_class": "os.system"})),
    ):
        server.zadd(queue.k("queue"), {rid: 0})
        server.hset(queue.k("req"), rid, payload)
    _, taken = queue.pop_many(10)
    assert [type(t.request) for t in taken] == [BadPayload, BadPayload]
    assert "not JSON" in str(taken[0].request) and "class" in str(taken[1].request)


def test_a_keywords_fingerprints_are_its_leases_and_those_without_a_keyword_expire_with_the_day(server, spider):
    clock = lambda: datetime(2026, 11, 30, 23, 0, tzinfo=SHANGHAI)  # noqa: E731
    queue = queue_for(server, spider, "w1", clock)
    no_keyword = spider.page_request(make_lease("qcwy"), 1).replace(meta={}, dont_filter=False)
    queue.push_many(pages(spider, make_lease("qcwy"), 1) + [no_keyword])
    lease_key, day_key = f"{server.prefix}:qcwy:seen:1:1", f"{server.prefix}:qcwy:seen:2026-11-30"
    assert server.smembers(lease_key) == {b"1"}
    assert timedelta(hours=23) <= timedelta(seconds=server.ttl(lease_key)) <= timedelta(days=1)
    assert server.scard(day_key) == 1
    assert timedelta(minutes=119) <= timedelta(seconds=server.ttl(day_key)) <= timedelta(hours=2)


def test_a_keyword_in_flight_at_midnight_keeps_its_fingerprints_and_no_worker_queues_its_pages_again(server, spider):
    now = [datetime(2026, 11, 30, 23, 59, 30, tzinfo=SHANGHAI)]
    owner, other = (queue_for(server, spider, name, lambda: now[0]) for name in ("owner", "other"))
    lease = make_lease("qcwy")
    assert owner.push_many(pages(spider, lease, 1, 2, 3)) == [True, True, True]
    now[0] += timedelta(minutes=1)  # midnight: the keyword is still in flight
    # another worker that parses page 1 learns of pages 2 to 4: only 4 is new
    assert other.push_many(pages(spider, lease, 2, 3, 4)) == [False, False, True]
    assert owner.push_many(pages(spider, lease, 3)) == [False]
    assert len(owner) == 4


def test_each_end_keeps_its_own_lifetime_and_lapsed_ones_are_trimmed(server, spider):
    now = [datetime(2026, 11, 30, 23, 59, 30, tzinfo=SHANGHAI)]  # the day's fingerprints have a minute left
    queue = queue_for(server, spider, "w1", lambda: now[0])
    lease, later, lapsed = make_lease("qcwy"), make_lease("qcwy", id=2), make_lease("qcwy", id=3)
    queue.push_many(pages(spider, lease, 1) + pages(spider, later, 1) + pages(spider, lapsed, 1))
    queue.ended(lease.name, "completed")
    now[0] += timedelta(hours=8)
    queue.ended(later.name, "completed")
    # each end is kept a day from when it was written, not from the first end or the day's end
    ends = queue.k("ends")
    seconds, micros = server.time()
    redis_now = seconds * 1000 + micros // 1000
    for name in (lease.name, later.name):
        assert timedelta(hours=23) <= timedelta(milliseconds=server.zscore(ends, name) - redis_now) <= timedelta(days=1)
    assert timedelta(hours=23) <= timedelta(milliseconds=server.pttl(ends)) <= timedelta(days=1)
    # an end whose lifetime is over (written a day ago) drops nothing, and a worker's maintenance trims it
    server.zadd(ends, {lapsed.name: redis_now - 1000})
    queue.ended("9:1", "failed")
    assert timedelta(hours=23) <= timedelta(milliseconds=server.pttl(ends)) <= timedelta(days=1)
    queue.requeue_dead(timeout=30)
    assert server.zscore(ends, lapsed.name) is None
    _, taken = queue.pop_many(10)
    assert [t.lease for t in taken] == [lapsed.name]


def test_the_pace_and_the_back_off_hold_after_redis_lost_them(server, spider):
    one, two = queue_for(server, spider, "one"), queue_for(server, spider, "two")
    one.set_rate(2)  # one request every 500 ms
    one.push_many(pages(spider, make_lease("qcwy"), *range(1, 9)))
    for key in server.scan_iter(f"{server.prefix}:*:pace"):
        server.delete(key)  # as a FLUSHALL or a restart without persistence would
    # every pop carries the site's interval: the first after the loss writes it back
    wait, taken = one.pop_many(10, interval=0.5)
    assert wait == 0 and len(taken) == 1
    wait, taken = two.pop_many(10, interval=0.5)
    assert 0.2 <= wait <= 0.75 and taken == []
    # and this worker's back-off: after the loss, the site is still backed off
    one.back_off(base=2, most=60)
    for key in server.scan_iter(f"{server.prefix}:*:pace"):
        server.delete(key)
    wait, taken = two.pop_many(10, interval=0.5, penalty=0)  # two knows of no back-off
    assert len(taken) == 1 and server.hget(two.k("pace"), "penalty") is None
    server.delete(two.k("pace"))
    wait, taken = one.pop_many(10, interval=0.5, penalty=2)
    assert len(taken) == 1 and server.hget(one.k("pace"), "penalty") == b"2000"
    server.hdel(one.k("pace"), "penalty")  # the interval written again (a worker started), the back-off lost
    assert one.pop_many(10, interval=0.5, penalty=2)[0] > 0 and server.hget(one.k("pace"), "penalty") == b"2000"
    wait, _ = two.pop_many(10, interval=0.5)
    assert 0.9 <= wait <= 3.0  # the gap is the back-off's 2 s, jittered


def test_a_call_made_again_under_its_id_answers_as_it_did_and_runs_once(server, spider):
    queue = queue_for(server, spider, "w1")
    lease = make_lease("qcwy")
    again = pages(spider, lease, 1, 2)
    for request in again:
        request.meta["farm_again"] = True  # no fingerprint: a second run would queue them twice
    call = queue.new_call()
    assert queue.push_many(again, call) == queue.push_many(again, call) == [True, True]
    assert len(queue) == 2
    call = queue.new_call()
    first = queue.pop_many(10, call=call)[1]
    ids = [t.id for t in first]
    assert [t.id for t in queue.pop_many(10, call=call)[1]] == ids and len(set(ids)) == 2
    call = queue.new_call()
    assert queue.ack(ids, call) == queue.ack(ids, call) == [("1:1", 1), ("1:1", 0)]
    call = queue.new_call()
    assert queue.back_off(2, 60, call=call) == queue.back_off(2, 60, call=call) == 2000
    # only a worker's last calls are kept, and nothing once it leaves
    for _ in range(300):
        queue.ack(["none"])
    assert server.hlen(queue.k("calls:w1")) <= 256
    queue.leave()
    assert not server.exists(queue.k("calls:w1"))


def test_a_clean_leave_puts_back_what_it_took_and_deletes_nothing_shared(server, spider):
    leaving, staying = queue_for(server, spider, "leaving"), queue_for(server, spider, "staying")
    lease = make_lease("qcwy")
    leaving.push_many(pages(spider, lease, 1, 2, 3))
    leaving.heartbeat()
    staying.heartbeat()
    _, mine = leaving.pop_many(1)
    _, theirs = staying.pop_many(1)
    assert leaving.leave() == 1
    assert server.zscore(leaving.k("live"), "leaving") is None
    assert server.zcard(staying.k("taken:staying")) == 1  # another worker's in-flight set is intact
    _, again = staying.pop_many(10)
    assert taken_pages(again) == [1, 3] and again[0].id == mine[0].id  # what it took, back in the queue
    assert server.scard(leaving.dupefilter.lease_key(lease.name)) == 3  # the keyword's fingerprints stay


def test_the_state_found_on_another_redis_server_is_dropped_but_the_pace_and_quarantines(server, spider):
    # Redis restarted from an older snapshot holds the run_id of the server that wrote it, not its own:
    # its queue, in-flight sets and epoch are of some moment past, and read as current they held every
    # worker back for ever
    queue = queue_for(server, spider, "w1")
    assert not queue.went_back()  # the first look: the state is this server's from now on
    run_id = server.get(queue.k("server"))
    assert run_id == server.info("server")["run_id"].encode()
    queue.start_epoch()
    queue.push_many(pages(spider, make_lease("qcwy"), 1, 2))
    queue.pop_many(1)
    queue.set_rate(2)
    server.zadd(queue.k("proxies:quarantined"), {"p1": 1})
    other_site = f"{server.prefix}:boss:queue"
    server.zadd(other_site, {"1": 1})
    assert not queue.went_back()  # the same server: nothing dropped
    assert server.exists(queue.k("epoch"), queue.k("taken:w1"), queue.k("queue")) == 3

    server.set(queue.k("server"), "0" * 40)  # as a snapshot written by another server reads
    assert queue.went_back()
    left = {key.decode() for key in server.scan_iter(f"{server.prefix}:*")}
    assert left == {queue.k("server"), queue.k("pace"), queue.k("proxies:quarantined"), other_site}
    assert server.get(queue.k("server")) == run_id
    assert not queue.went_back()  # dropped once: the workers that connect next find it done


def test_a_key_with_glob_characters_drops_its_own_state_only(server, spider):
    key = f"{server.prefix}:q[cw]y*"
    queue = SharedQueue(server, spider, key, "w1", DayDupeFilter(server, f"{key}:seen", SHANGHAI, datetime.now))
    server.set(f"{server.prefix}:qcy:epoch", "another site's")
    queue.went_back()
    queue.start_epoch()
    server.set(queue.k("server"), "0" * 40)
    assert queue.went_back()
    assert not server.exists(queue.k("epoch")) and server.get(f"{server.prefix}:qcy:epoch") == b"another site's"


def test_an_acknowledgement_of_a_request_taken_before_redis_lost_its_state_settles_none_of_the_next(server, spider):
    # a worker's acknowledgements on their way as Redis lost its state (a flush, a restart from an older
    # snapshot) arrive at the new one: the new state counts its requests again from the start, and an old
    # id that named another request there took it out of the in-flight set and off its keyword's count,
    # which a stall look then read as nothing open, and queued pages in flight again
    queue = queue_for(server, spider, "w1")
    lease, other = make_lease("qcwy"), make_lease("qcwy", id=2, job="java")
    queue.push_many(pages(spider, lease, 1, 2))
    _, before = queue.pop_many(2)
    for key in list(server.scan_iter(f"{server.prefix}:*")):
        server.delete(key)  # Redis lost everything
    queue.push_many(pages(spider, other, 1, 2))  # the rebuild queues the other keyword's pages
    _, after = queue.pop_many(2)
    assert {t.id for t in before}.isdisjoint(t.id for t in after)
    assert queue.ack([t.id for t in before]) == []  # of the lost state: nothing here to settle
    assert server.zcard(queue.k("taken:w1")) == 2 and queue.open_requests(other.name) == 2
    assert queue.ack([t.id for t in after]) == [(other.name, 1), (other.name, 0)]


def test_a_page_asked_for_anew_on_an_occasion_is_not_queued_again_by_a_push_that_did_not_know(server, spider):
    # a stall look queues a keyword's missing pages anew (once per occasion); a worker whose own pushes
    # of those pages come after (held back while Redis was rebuilt, or made by the keyword's window) must
    # not queue each page a second time
    queue = queue_for(server, spider, "w1")
    lease = make_lease("qcwy")
    anew = pages(spider, lease, 2, 3)
    for request in anew:
        request.meta["farm_again"] = "stall1"
    assert queue.push_many(anew) == [True, True]
    assert queue.push_many(anew) == [False, False]  # the same occasion: another worker's look
    assert queue.push_many(pages(spider, lease, 2, 3, 4)) == [False, False, True]
    assert queue.open_requests(lease.name) == 3
