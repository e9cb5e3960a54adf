"""Running a site spider's parse against recorded responses, without a crawl.

Each ``farm/sites/<site>/fixtures/<name>.(json|html)`` page (``fixtures(site)``: the site package's
recorded answers) has a ``<name>.expected.json`` beside it: the lease and page it answers, the pages its
keyword had asked for before it (``asked``, beside those its claim asked for), the items it must yield
(datetimes as ISO strings), the keyword's last page as the page tells it (``page_parsed.last_page``), the
postings the site says the keyword holds (``page_parsed.site_total``, absent when the page tells none),
and the next requests. ``fixtures/blocks/blocks.json`` lists the block responses and their reasons;
``fixtures/malformed/malformed.json`` the responses that are neither a page nor a block, and the parse
error each must fail its keyword with.
"""

import json
from importlib import import_module
from pathlib import Path
from types import SimpleNamespace

from scrapy.http import HtmlResponse, TextResponse
from scrapy.utils.test import get_crawler

from farm import settings as farm_settings
from farm.crawl.keywordrun import Outcome
from farm.crawl.paging import KeywordPaging
from farm.crawl.registry import KeywordRegistry
from farm.items import JobPosting
from farm.sites import get
from farm.state.lease import Lease

CONTENT_TYPES = {".json": "application/json;charset=UTF-8", ".html": "text/html; charset=utf-8"}


def fixtures(site: str) -> Path:
    """The recorded answers of ``site``: the ``fixtures/`` of its package (farm/sites/<site>/fixtures/)."""
    package = import_module(get(site).spider_module.rpartition(".")[0])
    return Path(package.__file__).parent / "fixtures"


class PageRecorder:
    """Stands in for the crawl's page progress (the paging's): records each page parsed."""

    def __init__(self, sent):
        self.sent = sent

    def page_parsed(self, lease, page, postings, spider):
        self.sent.append(("page_parsed", {"lease": lease, "page": page, "postings": postings, "spider": spider}))


class OwnQueue:
    """The work backend as the registry asks it of a run: this process fetches what it enqueues."""

    def fetches_what_it_enqueues(self):
        return True


class EndRecorder(KeywordRegistry):
    """Stands in for the crawl's keyword registry (the paging's): holds the keywords' runs
    and records each end."""

    def __init__(self, crawler, sent):
        super().__init__(crawler, parts=SimpleNamespace(backend=OwnQueue()))
        self.sent = sent

    def end(self, lease, outcome):
        self.sent.append(("end", {"lease": lease, "outcome": outcome}))


def make_spider(spidercls, clock=None, **overrides):
    """The spider built by from_crawler with farm's default settings, and what it reports:
    the pages it parsed (to its progress) and the keywords it ends (through its registry)."""
    settings = {name: getattr(farm_settings, name) for name in dir(farm_settings) if name.startswith("FARM_")}
    crawler = get_crawler(spidercls, {**settings, **overrides})
    spider = spidercls.from_crawler(crawler)
    if clock is not None:
        spider.clock = lambda: clock
    sent = []
    crawler.spider = spider
    spider.crawl_paging = KeywordPaging(crawler, EndRecorder(crawler, sent), PageRecorder(sent))
    crawler.stats.open_spider()
    return spider, sent


def make_lease(source, id=1, city="北京", job="python", start_page=1, total_pages=None, pages_ahead=()):
    return Lease(
        id=id,
        source=source,
        city=city,
        job=job,
        lease_token=1,
        start_page=start_page,
        from_status="fresh" if start_page == 1 else "partial",
        total_pages=total_pages,
        pages_ahead=frozenset(pages_ahead),
    )


def request_for(spider, lease, page, asked=()):
    """The request for ``page`` of a keyword the spider holds (claimed, with ``asked`` asked for too)."""
    if lease.key not in spider.crawl_paging.registry.runs:
        spider.crawl_paging.first_requests(lease)
    run = spider.crawl_paging.registry.runs[lease.key]
    run.ask([*asked, page])
    run.taken(page)
    return spider.page_request(lease, page)


def response_for(request, path=None, body=b"", status=200, headers=None, url=None):
    """A response to ``request`` carrying a recorded body (HTML for .html, JSON otherwise)."""
    if path is not None:
        body = path.read_bytes()
    suffix = path.suffix if path is not None else ".html"
    headers = {"Content-Type": CONTENT_TYPES.get(suffix, "text/html"), **(headers or {})}
    cls = HtmlResponse if "html" in headers["Content-Type"] else TextResponse
    return cls(url=url or request.url, body=body, status=status, headers=headers, request=request, encoding="utf-8")


def as_plain(result):
    """An item as the expected files write it."""
    item = dict(result)
    if item.get("published_at") is not None:
        item["published_at"] = item["published_at"].isoformat()
    return item


def page_fixtures(site):
    return sorted(p.name.removesuffix(".expected.json") for p in fixtures(site).glob("*.expected.json"))


def check_recorded_page(spidercls, name):
    """Parse one recorded page as its expected file says, and compare everything."""
    site = spidercls.name
    expected = json.loads((fixtures(site) / f"{name}.expected.json").read_text())
    [path] = [p for p in fixtures(site).glob(f"{name}.*") if not p.name.endswith(".expected.json")]
    spider, sent = make_spider(spidercls, clock=expected.get("clock"), **expected.get("settings", {}))
    lease = make_lease(site, **expected["lease"])
    request = request_for(spider, lease, expected["page"], expected.get("asked", ()))
    sent.clear()
    for header, value in expected.get("request_headers", {}).items():
        assert request.headers.get(header).decode() == value
    response = response_for(request, path)

    assert spider.block_reason(response) is None
    results = list(spider.parse_search(response))

    items = [as_plain(r) for r in results if isinstance(r, JobPosting)]
    requests = results[len(items) :]
    assert all(isinstance(r, JobPosting) for r in results[: len(items)])
    assert items == expected["items"]
    assert [r.url for r in requests] == [r["url"] for r in expected["next_requests"]]
    for got, want in zip(requests, expected["next_requests"]):
        assert got.meta["farm_page"] == want["page"]
        assert got.meta["farm_lease"] is lease
        assert got.callback == spider.parse_search
        assert got.dont_filter
        for header, value in want.get("headers", {}).items():
            assert got.headers.get(header).decode() == value
    page_parsed = dict(expected["page_parsed"])
    assert spider.crawl_paging.registry.runs[lease.key].last == page_parsed.pop("last_page")
    assert spider.crawl_paging.registry.runs[lease.key].site_total == page_parsed.pop("site_total", None)
    assert sent == [("page_parsed", {"lease": lease, "page": expected["page"], "spider": spider, **page_parsed})]
    assert spider.crawler.stats.get_value("farm/page/parsed") == 1


def block_cases(site):
    return json.loads((fixtures(site) / "blocks" / "blocks.json").read_text())


def check_block(spidercls, case):
    spider, _ = make_spider(spidercls, clock=1750000000)
    request = spider.page_request(make_lease(spidercls.name), 1)
    path = fixtures(spidercls.name) / "blocks" / case["file"] if case["file"] else None
    response = response_for(
        request, path, status=case.get("status", 200), headers=case.get("headers"), url=case.get("url")
    )
    assert spider.block_reason(response) == case["reason"]


def check_unparsable(spidercls, body, content_type, reason):
    """A body that is not a page is a refusal, named by the site (retried with the back-off by
    farm.middlewares.blocks, never a page); a callback that gets it all the same fails the keyword, naming the URL."""
    spider, sent = make_spider(spidercls, clock=1750000000)
    lease = make_lease(spidercls.name)
    request = request_for(spider, lease, 1)
    response = response_for(request, body=body, headers={"Content-Type": content_type})
    assert spider.refusal(response).startswith(f"{spidercls.name}_")
    assert list(spider.parse_search(response)) == []
    assert sent == [
        (
            "end",
            {"lease": lease, "outcome": Outcome("failed", f"{reason} at {request.url}", 1)},
        )
    ]
    assert spider.crawler.stats.get_value("farm/page/unparsable") == 1


def malformed_cases(site):
    return json.loads((fixtures(site) / "malformed" / "malformed.json").read_text())


def check_malformed(spidercls, case):
    """A recorded response that is not a page fails the keyword with the case's parse error."""
    path = fixtures(spidercls.name) / "malformed" / case["file"]
    check_unparsable(spidercls, path.read_bytes(), CONTENT_TYPES[path.suffix], case["reason"])


def check_unknown_city(spidercls):
    spider, sent = make_spider(spidercls)
    lease = make_lease(spidercls.name, city="拉萨")
    assert spider.crawl_paging.first_requests(lease) == []
    [(name, kwargs)] = sent
    assert (name, kwargs["outcome"].kind) == ("end", "failed")
    assert kwargs["lease"] is lease
    assert "拉萨" in kwargs["outcome"].reason and spidercls.name in kwargs["outcome"].reason
