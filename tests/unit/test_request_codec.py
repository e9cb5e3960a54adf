"""Requests as JSON for the shared queue (farm.crawl.backends.redis.codec): what Request.to_dict says, found cheaply."""

import inspect

import orjson
import pytest
import redis

from farm.crawl.backends.redis.codec import _dumps, decode, encode, request_dict
from farm.crawl.backends.redis.queue import SharedQueue
from farm.crawl.meta import FarmMeta
from farm.sites.qcwy.spider import QcwySpider
from tests.unit.spider_helpers import make_lease, make_spider


@pytest.fixture
def spider():
    return make_spider(QcwySpider, clock=1750000000)[0]


def test_a_request_is_encoded_as_scrapys_own_to_dict_says(spider):
    request = spider.page_request(make_lease("qcwy"), 3)
    assert callable(request.callback) and callable(request.errback)
    assert request_dict(request, spider, {}) == request.to_dict(spider=spider)
    names = {}
    assert encode(request, spider, names) == _dumps(request.to_dict(spider=spider))
    assert decode(encode(request, spider, names), spider).meta["farm_page"] == 3


def test_a_spiders_callback_names_are_looked_up_once_not_for_every_request(spider, monkeypatch):
    # Request.to_dict scans every member of the spider for each callback: 0.1 ms, twice a request
    scans = []
    getmembers = inspect.getmembers
    monkeypatch.setattr(inspect, "getmembers", lambda *a, **k: scans.append(a) or getmembers(*a, **k))
    queue = SharedQueue(redis.Redis(), spider, "farm-test:%(spider)s", "w1", dupefilter=None)  # no connection yet
    lease = make_lease("qcwy")
    payloads = [queue._encode_request(spider.page_request(lease, page)) for page in range(1, 21)]
    assert len(scans) == 2  # the page callback and errback, once each
    assert [decode(payload, spider).meta["farm_page"] for payload in payloads] == list(range(1, 21))


def test_a_callback_that_is_not_the_spiders_method_is_refused_as_to_dict_refuses_it(spider):
    other = make_spider(QcwySpider, clock=1750000000)[0]
    request = spider.page_request(make_lease("qcwy"), 1).replace(callback=lambda response: None)
    with pytest.raises(ValueError, match="is not an instance method"):
        request.to_dict(spider=spider)
    with pytest.raises(ValueError, match="is not an instance method"):
        request_dict(request, spider, {})
    names = {}
    ours = spider.page_request(make_lease("qcwy"), 1)
    request_dict(ours, spider, names)  # names now holds the page callback's name
    # the same function bound to another spider is named as to_dict names it
    theirs = ours.replace(callback=getattr(other, names[ours.callback.__func__]))
    assert request_dict(theirs, spider, names)["callback"] == theirs.to_dict(spider=spider)["callback"]


# a page request as a worker queued it before its farm meta had one owner (farm.crawl.meta): the same keys
QUEUED = (
    '{"url":"https://we.51job.com/api/job/search-pc?pageNum=3","callback":"_page_callback",'
    '"errback":"_page_errback","headers":{},"meta":{"farm_lease":[1,"qcwy","北京","python",1,1,"fresh",null,[],0],'
    '"farm_page":3,"dont_retry":true,"farm_again":"stall2","farm_session":7,"farm_session_sends":[1,2],'
    '"farm_unserved":[1,"https://x/wall"],"farm_identity":"p1"},"dont_filter":true,"farm":1}'
).encode()


def test_a_request_queued_with_the_farm_meta_keys_of_before_reads_the_same(spider):
    request = decode(QUEUED, spider)
    farm = FarmMeta.of(request)
    assert farm.lease_page() == (make_lease("qcwy"), 3)
    assert (farm.again, farm.session, farm.identity) == ("stall2", 7, "p1")
    # tuples come back from JSON as lists: read as the tuples they were written as
    assert farm.session_sends == (1, 2) and farm.unserved == (1, "https://x/wall")
    assert encode(request, spider) == QUEUED  # and written again as it was


def test_a_request_is_queued_under_the_farm_meta_keys_it_always_had_and_without_its_proxy(spider):
    request = spider.page_request(make_lease("qcwy"), 2)
    farm = FarmMeta.of(request)
    farm.again, farm.identity, farm.proxy, farm.session = True, "p1", "p1", 4
    request.meta["proxy"] = "http://user:secret@proxy:8080"
    meta = orjson.loads(encode(request, spider))["meta"]
    assert {key for key in meta if key.startswith("farm_")} == {
        "farm_lease",
        "farm_page",
        "farm_again",
        "farm_identity",
        "farm_session",
    }
    assert "proxy" not in meta
