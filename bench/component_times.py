"""An extension that times farm's parts inside a crawl, for bench/crawl_breakdown.py.

A sampling profiler slows the crawl by a fifth and blurs what is short; this
times each of farm's entry points (and the parse both sides share) with
perf_counter, on the crawl's thread, while the crawl runs at its own speed.
Times are exclusive: a part called from another (the outbox's send from a
writer's answer) counts in its own row only, so the rows add up. At the
crawl's close it prints one ``component-times`` line of JSON to stderr: the
crawl thread's CPU seconds from open to close, and seconds and calls by part.
"""

import functools
import importlib
import sys
import time

import orjson
from scrapy import signals

# (module, class or None for a module function, function): what each side of the bench runs
PARTS = [
    ("farm.sites.qcwy.spider", "QcwySpider", "parse_page"),
    ("farm.spiders.parsing", None, "response_json"),
    ("farm.pipelines.sql", "SqlPostingsPipeline", "process_item"),
    ("farm.middlewares.blocks", "SiteBlockMiddleware", "process_response"),
    ("farm.middlewares.signing", "RequestSigningMiddleware", "process_request"),
    ("farm.crawl.leases", "KeywordLeaseMiddleware", "process_request"),
    ("farm.crawl.scheduler", "FarmScheduler", "enqueue_request"),
    ("farm.crawl.scheduler", "FarmScheduler", "next_request"),
    ("farm.crawl.paging", "KeywordPaging", "next_pages"),
    ("farm.spiders.base", "LeaseSpider", "page_request"),
    ("farm.crawl.progress", "PageProgress", "page_parsed"),
    ("farm.crawl.progress", "PageProgress", "_page_written"),
    ("farm.crawl.outbox", "Outbox", "_send"),
    ("farm.crawl.outbox", "Outbox", "_written"),
    ("farm.writer.process", "StateWriter", "write"),
    ("farm.writer.process", "StateWriter", "outReceived"),
]

_totals: dict[str, list] = {}  # part -> [exclusive seconds, calls]
_stack: list[list[float]] = []  # time spent in parts called from each part running
_installed: list[bool] = []


def _timed(function, name):
    @functools.wraps(function)
    def timed(*args, **kwargs):
        _stack.append([0.0])
        started = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            spent = time.perf_counter() - started
            inner = _stack.pop()[0]
            if _stack:
                _stack[-1][0] += spent
            total = _totals.setdefault(name, [0.0, 0])
            total[0] += spent - inner
            total[1] += 1

    return timed


def _install():
    if _installed:
        return  # a second crawl in this process: its parts are timed already, not twice
    _installed.append(True)
    for module_name, class_name, function_name in PARTS:
        module = importlib.import_module(module_name)
        owner = getattr(module, class_name) if class_name else module
        name = f"{class_name or module_name.rsplit('.', 1)[-1]}.{function_name}"
        timed = _timed(getattr(owner, function_name), name)
        setattr(owner, function_name, timed)
        if class_name is None:  # the spiders call it by the name they imported
            for spider in ("farm.sites.qcwy.spider", "farm.sites.boss.spider"):
                setattr(importlib.import_module(spider), function_name, timed)


class ComponentTimes:
    def __init__(self, crawler):
        crawler.signals.connect(self.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(self.spider_closed, signal=signals.spider_closed)
        self.started = 0.0

    @classmethod
    def from_crawler(cls, crawler):
        _install()  # before the engine binds the middlewares' and pipelines' methods
        return cls(crawler)

    def spider_opened(self, spider):
        _totals.clear()
        self.started = time.thread_time()

    def spider_closed(self, spider):
        report = {"cpu": time.thread_time() - self.started, "parts": _totals}
        print("component-times " + orjson.dumps(report).decode(), file=sys.stderr, flush=True)
