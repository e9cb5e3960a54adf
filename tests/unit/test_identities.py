"""A site's identities on a fixed clock: each proxy at its own pace, a refusal the identity's alone, the
learned pace (multiplicative decrease, slow additive increase, floor and setting), the growing cool-down."""

import pytest
from scrapy import Request

from farm.crawl.identities import DIRECT, FLOOR, INCREASE, Identities, IdentityPace
from farm.crawl.proxies import ProxyPool, parse_proxies

PROXIES = parse_proxies("http://alice:s3cret@10.0.0.1:3128,http://10.0.0.2:3128,http://10.0.0.3:3128")


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def identities(rate=2.0, proxies=PROXIES, quarantine=10.0, learned=None, clock=None):
    clock = clock or Clock()
    pool = ProxyPool(proxies, quarantine, clock=clock) if proxies else None
    learned = learned or {}

    def make_pace(identity):
        return IdentityPace(rate, 1.0, 8.0, learned.get(identity), clock=clock, jitter=lambda: 0.5)

    return Identities(pool, make_pace, clock=clock), clock


def sent(ids, n):
    """The proxies (ids) of ``n`` requests taken now; None for one that must wait."""
    out = []
    for _ in range(n):
        request = Request("http://example.com/")
        out.append(request.meta.get("farm_identity") if ids.take(request) == 0 else None)
    return out


def test_each_proxy_keeps_its_own_pace_so_the_take_grows_with_the_proxies():
    ids, clock = identities(rate=2.0)  # one request every 0.5 s from each
    first = sent(ids, 4)
    assert first[:3] == [p.id for p in PROXIES] and first[3] is None  # three at once, the fourth waits
    assert ids.take(Request("http://example.com/")) == pytest.approx(0.5)
    clock.now += 0.5
    assert sent(ids, 3) == [p.id for p in PROXIES]


def test_without_proxies_this_machines_own_address_is_the_one_identity():
    ids, clock = identities(rate=2.0, proxies=[])
    request = Request("http://example.com/")
    assert ids.take(request) == 0 and request.meta["farm_identity"] == DIRECT and "proxy" not in request.meta
    assert ids.take(Request("http://example.com/")) == pytest.approx(0.5)
    ids.refused(request, "a slider")  # backed off and slowed, never quarantined: nothing else to send through
    assert [row["state"] for row in ids.seen()] == ["cooling"]
    assert ids.pool is None


def test_a_refusal_backs_off_slows_and_quarantines_only_the_identity_that_drew_it():
    ids, clock = identities(rate=2.0)
    requests = [Request("http://example.com/") for _ in PROXIES]
    for request in requests:
        assert ids.take(request) == 0
    ids.refused(requests[0], "HTTP 403")
    bad, *good = ids.identities
    assert bad.pace.learned == 1.0 and bad.pace.penalty == 1.0 and ids.quarantined_for(bad, clock.now) == 10.0
    assert all(i.pace.learned == 2.0 and i.pace.penalty == 0 for i in good)
    assert [row["state"] for row in ids.seen()] == ["quarantined", "working", "working"]
    clock.now += 0.5
    assert sent(ids, 3) == [good[0].id, good[1].id, None]  # the others go on at their pace
    assert "s3cret" not in repr(ids.seen())  # passwords masked in what is seen


def test_the_learned_pace_drops_by_half_creeps_back_slowly_and_stays_within_the_floor_and_the_setting():
    pace = IdentityPace(2.0, 1.0, 8.0)
    for _ in range(10):
        pace.slowed()
    assert pace.learned == pytest.approx(2.0 * FLOOR) and pace.interval == pytest.approx(1 / (2.0 * FLOOR))
    pace.recovered()
    assert pace.learned == pytest.approx(2.0 * FLOOR + 2.0 * INCREASE)
    for _ in range(1000):
        pace.recovered()
    assert pace.learned == 2.0
    assert IdentityPace(2.0, 1.0, 8.0, learned=0.5).interval == 2.0  # a past run's lesson is where it starts
    assert IdentityPace(2.0, 1.0, 8.0, learned=50).learned == 2.0  # never above the setting
    assert IdentityPace(0, 1.0, 8.0, learned=0.5).interval == 0  # no limit stays no limit


def test_the_cool_down_grows_with_quarantines_in_a_row_and_a_good_answer_resets_it():
    ids, clock = identities(rate=0, quarantine=10.0)
    bad = ids.identities[0]
    waits = []
    for _ in range(6):
        request = Request("http://example.com/")
        request.meta["farm_identity"] = bad.id
        ids.refused(request, "HTTP 403")
        waits.append(ids.quarantined_for(bad, clock.now))
        clock.now += 1000
    assert waits == [10.0, 20.0, 40.0, 80.0, 160.0, 160.0]  # at most 16 times FARM_PROXY_QUARANTINE
    request = Request("http://example.com/")
    request.meta["farm_identity"] = bad.id
    ids.answered(request)
    ids.refused(request, "HTTP 403")
    assert ids.quarantined_for(bad, clock.now) == 10.0


def test_a_good_answer_eases_the_identity_and_counts_its_page():
    ids, clock = identities(rate=2.0, learned={PROXIES[0].id: 1.0})
    request = Request("http://example.com/")
    request.meta["farm_identity"] = PROXIES[0].id
    first = ids.identities[0]
    first.pace.back_off()
    ids.answered(request)
    assert first.pages == 1 and first.pace.penalty == 0.5 and first.pace.learned == pytest.approx(1.02)
    assert ids.learned_paces()[PROXIES[0].id] == pytest.approx(1.02)
    assert [row["state"] for row in ids.seen()] == ["cooling", "working", "working"]


def test_with_every_proxy_quarantined_the_wait_is_until_the_first_comes_back():
    ids, clock = identities(rate=0, quarantine=10.0)
    for proxy in PROXIES:
        request = Request("http://example.com/")
        request.meta["farm_identity"] = proxy.id
        ids.refused(request, "HTTP 403")
        clock.now += 1
    assert ids.take(Request("http://example.com/")) == pytest.approx(7.0)  # the first, quarantined 3 s ago


def test_a_crawl_starts_each_identity_from_the_pace_a_past_run_learned_and_keeps_what_it_learns(sqlite_url):
    from farm.crawl.parts import CrawlParts
    from farm.state.db import make_engine
    from farm.state.identities import keep_learned_paces, learned_paces
    from tests.migrated import migrated
    from tests.unit.components import make_crawler

    migrated(sqlite_url)
    engine = make_engine(sqlite_url)
    keep_learned_paces(engine, "qcwy", {PROXIES[1].id: 0.5, "direct": 0.1})
    keep_learned_paces(engine, "boss", {PROXIES[0].id: 0.05})  # another site's lesson is its own
    proxies = ",".join(proxy.url for proxy in PROXIES)
    crawler = make_crawler(sqlite_url, [("qcwy", "北京", "python")], FARM_QCWY_RATE=2, FARM_PROXIES=proxies)
    parts = crawler.get_extension(CrawlParts)
    try:
        assert [i.pace.learned for i in parts.identities] == [2.0, 0.5, 2.0]
        assert parts.identities.identities[1].pace.interval == 2.0
    finally:
        parts.close()
    keep_learned_paces(engine, "qcwy", parts.identities.learned_paces())
    assert learned_paces(engine, "qcwy") == {PROXIES[0].id: 2.0, PROXIES[1].id: 0.5, PROXIES[2].id: 2.0, "direct": 0.1}
    engine.dispose()
