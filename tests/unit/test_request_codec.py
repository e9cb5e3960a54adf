"""Requests as JSON for the shared queue (farm.crawl.backends.redis.codec): what Request.to_dict says, found cheaply."""

import inspect

import pytest
import redis

from farm.crawl.backends.redis.codec import _dumps, decode, encode, request_dict
from farm.crawl.backends.redis.queue import SharedQueue
from farm.spiders.qcwy import QcwySpider
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
