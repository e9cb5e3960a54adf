"""FARM_PROXIES: parsing with masked errors, round robin, quarantine on a fixed clock, none free → wait."""

import traceback

import pytest
from scrapy import Request

from farm.crawl.proxies import Proxy, ProxyPool, parse_proxies

A = "http://alice:s3cret@10.0.0.1:3128"
B = "https://10.0.0.2:8443"
C = "http://bob:hunter2@proxy.example:8080"


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def urls(proxies):
    return [proxy.url for proxy in proxies]


def test_a_list_a_comma_separated_string_and_a_file_give_the_same_proxies(tmp_path):
    path = tmp_path / "proxies.txt"
    path.write_text(f"# our pool\n{A}\n\n   {B}  \n# {C} is down\n{C}\n{A}\n")
    assert urls(parse_proxies([A, B, C])) == [A, B, C]
    assert urls(parse_proxies(f"{A}, {B},{C}")) == [A, B, C]
    assert urls(parse_proxies(str(path))) == [A, B, C]  # comments, blanks and the repeated A skipped
    assert parse_proxies("") == [] and parse_proxies(None) == [] and parse_proxies([]) == []


@pytest.mark.parametrize(
    "entry, problem",
    [
        ("socks5://carol:pa55word@10.0.0.3:1080", "is not an http:// or https:// proxy URL"),
        ("http://carol:pa55word@:3128", "has no host"),
        ("http://carol:pa55word@10.0.0.3", "has no port"),
        ("http://carol:pa55word@10.0.0.3:99999", "has a port that is not a number"),
        ("http://carol:pa55word@10.0.0.3:3128/path", "has a path, query or fragment"),
        ("carol:pa55word@10.0.0.3:3128", "is not an http:// or https:// proxy URL"),
    ],
)
def test_a_bad_entry_is_named_with_its_password_masked(entry, problem):
    with pytest.raises(ValueError) as caught:
        parse_proxies([A, entry])
    message = str(caught.value)
    assert message.startswith("FARM_PROXIES: ") and problem in message
    assert "pa55word" not in message and "carol:***@" in message
    printed = "".join(traceback.format_exception(caught.value))  # what Scrapy would print at start
    assert "pa55word" not in printed


def test_a_bad_line_of_a_file_is_named_by_its_line(tmp_path):
    path = tmp_path / "proxies.txt"
    path.write_text(f"{A}\nftp://dave:letmein@10.0.0.4:21\n")
    with pytest.raises(ValueError, match=r"FARM_PROXIES='.*proxies.txt', line 2: is not an http") as caught:
        parse_proxies(str(path))
    assert "dave" not in str(caught.value)  # a file's content is never shown: it may be any file


def test_a_missing_file_is_an_error_naming_the_setting(tmp_path):
    with pytest.raises(ValueError, match="FARM_PROXIES=.*neither a proxy URL .* nor a readable file"):
        parse_proxies(str(tmp_path / "nowhere.txt"))


def test_a_proxy_shows_no_password_in_its_label_or_repr():
    proxy = Proxy.of(A)
    assert proxy.label == "http://alice:***@10.0.0.1:3128"
    assert "s3cret" not in repr(proxy) and "s3cret" not in proxy.id
    assert Proxy.of(A).id == proxy.id != Proxy.of(C).id  # the same name in every worker


def test_round_robin_takes_the_proxies_in_turn():
    pool = ProxyPool(parse_proxies([A, B, C]), 60, clock=Clock())
    assert [pool.next()[0].url for _ in range(7)] == [A, B, C, A, B, C, A]


def test_a_quarantined_proxy_is_skipped_until_its_quarantine_ends():
    clock = Clock()
    pool = ProxyPool(parse_proxies([A, B, C]), 60, clock=clock)
    assert pool.quarantine(Proxy.of(B).id, "http_403")
    assert [pool.next()[0].url for _ in range(4)] == [A, C, A, C]
    clock.now += 59.9
    assert pool.next()[0].url == A and pool.next()[0].url == C
    clock.now += 0.1  # the quarantine is over
    assert [pool.next()[0].url for _ in range(3)] == [A, B, C]


def test_with_every_proxy_quarantined_assign_says_how_long_to_wait():
    from scrapy.statscollectors import MemoryStatsCollector
    from scrapy.utils.test import get_crawler

    clock = Clock()
    stats = MemoryStatsCollector(get_crawler())
    pool = ProxyPool(parse_proxies([A, B]), 60, stats, clock=clock)
    pool.quarantine(Proxy.of(A).id, "http_403")
    clock.now += 10
    pool.quarantine(Proxy.of(B).id, "http_403")
    request = Request("http://site.invalid/1")
    assert pool.assign(request) == pytest.approx(50.0)  # A comes back first
    assert "proxy" not in request.meta
    clock.now += 50
    assert pool.assign(request) == 0.0
    assert request.meta["proxy"] == A and request.meta["farm_proxy"] == Proxy.of(A).id
    assert stats.get_value("farm/proxy/none_free") == 1
    assert stats.get_value("farm/proxy/quarantined") == 2
    assert stats.get_value("farm/proxy/used/http://alice:***@10.0.0.1:3128") == 1
    assert not any("s3cret" in key for key in stats.get_stats())


def test_a_request_through_no_proxy_of_the_pool_quarantines_nothing():
    pool = ProxyPool(parse_proxies([A]), 60, clock=Clock())
    assert not pool.quarantine(None, "http_403") and not pool.quarantine("unknown", "http_403")
    assert pool.next()[0].url == A


def test_a_request_is_written_for_redis_without_its_proxy_or_its_credentials():
    from scrapy.downloadermiddlewares.httpproxy import HttpProxyMiddleware

    from farm.crawl.backends.redis.codec import decode, encode
    from farm.sites.qcwy.spider import QcwySpider
    from tests.unit.spider_helpers import make_lease, make_spider

    spider, _ = make_spider(QcwySpider, clock=1750000000)
    request = spider.page_request(make_lease("qcwy"), 2)
    ProxyPool(parse_proxies([A]), 60, clock=Clock()).assign(request)
    HttpProxyMiddleware().process_request(request)  # what a retry carries back: a header, the bare proxy
    assert request.headers[b"Proxy-Authorization"] and request.meta["proxy"] == "http://10.0.0.1:3128"
    payload = encode(request, spider)
    assert b"s3cret" not in payload and b"Proxy-Authorization" not in payload and b"10.0.0.1" not in payload
    again = decode(payload, spider)
    assert "proxy" not in again.meta and "farm_proxy" not in again.meta and again.meta["farm_page"] == 2
