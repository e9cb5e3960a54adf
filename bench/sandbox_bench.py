"""Is the sandbox fast enough not to be a crawl's bottleneck?

Measures, against one sandbox process:
  (a) pages/s it serves to a concurrent keep-alive load client (aiohttp, in another process), from its
      page cache; and the same for pages never served before ("cold", each rendered on request, which is
      what a real crawl asks for);
  (b) pages/s one plain Scrapy process fetches from it (cold qcwy pages, JSON parsed; no pipelines);
  (c) the ratios a / b, which should be at least 3.

    .venv/bin/python bench/sandbox_bench.py [--seconds 5]

Each measurement runs in its own process so the three never share a CPU core's event loop (the box has 2).
"""

import argparse
import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from farm.sandbox.testing import SandboxProcess  # noqa: E402

KEYWORDS = [f"kw{i}" for i in range(200)]
PAGES = 50  # every keyword gets 1000 postings, so 50 full qcwy pages
CITY = "010000"


def qcwy_url(base, keyword, page):
    return (f"{base}/api/job/search-pc?api_key=51job&timestamp=1700000000&keyword={keyword}&searchType=2"
            f"&jobArea={CITY}&pageNum={page}&pageSize=20&sortType=0&source=1&pageCode=sou%7Csou%7Csoulb")


# --- (a) load client --------------------------------------------------------------------------------


async def _load(base, seconds, concurrency, cold=False):
    """Warm: 1000 pages requested over and over (served from the page cache). Cold: every request is a page
    not served before, keyword by keyword, as in a real crawl (each page rendered on request)."""
    import aiohttp

    if cold:
        urls = [qcwy_url(base, f"cold{k}", p) for k in range(2000) for p in range(1, PAGES + 1)]
    else:
        urls = [qcwy_url(base, k, p) for p in range(1, PAGES + 1) for k in KEYWORDS[:20]]
    done, errors, cursor = 0, 0, 0
    deadline = 0.0

    async def worker(session):
        nonlocal done, errors, cursor
        while time.perf_counter() < deadline:
            url = urls[cursor % len(urls)]
            cursor += 1
            async with session.get(url) as response:
                await response.read()
                if response.status == 200:
                    done += 1
                else:
                    errors += 1

    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector) as session:
        if not cold:
            for url in urls:  # warm the page cache
                async with session.get(url) as response:
                    await response.read()
        started = time.perf_counter()
        deadline = started + seconds
        await asyncio.gather(*(worker(session) for _ in range(concurrency)))
        return {"pages": done, "errors": errors, "seconds": time.perf_counter() - started}


# --- (b) one plain Scrapy process -------------------------------------------------------------------


def _scrapy(base, seconds):
    import scrapy
    from scrapy.crawler import CrawlerProcess

    result = {}

    class QcwyBench(scrapy.Spider):
        name = "sandbox_bench"

        async def start(self):
            for page in range(1, PAGES + 1):
                for keyword in KEYWORDS:  # keywords no load run asked for: every page is rendered fresh
                    yield scrapy.Request(qcwy_url(base, f"scrapy-{keyword}", page), dont_filter=True)

        def parse(self, response):
            items = json.loads(response.text)["resultbody"]["job"]["items"]
            now = time.perf_counter()
            result.setdefault("first", now)
            result["last"] = now
            result["pages"] = result.get("pages", 0) + 1
            result["items"] = result.get("items", 0) + len(items)

    process = CrawlerProcess(settings={
        "REMOTE_CONTROL_ENABLED": False, "TELNETCONSOLE_ENABLED": False, "LOG_LEVEL": "WARNING",
        "CONCURRENT_REQUESTS": 16, "CONCURRENT_REQUESTS_PER_DOMAIN": 16, "ROBOTSTXT_OBEY": False,
        "CLOSESPIDER_TIMEOUT": seconds + 1, "COOKIES_ENABLED": False,
    })
    process.crawl(QcwyBench)
    process.start()
    # The first response is the clock's start, so start-up time does not count against Scrapy.
    return {"pages": result.get("pages", 1) - 1, "seconds": result.get("last", 0) - result.get("first", 0)}


def _child(mode, base, seconds, *extra):
    """Run one measurement in a fresh process; returns its JSON result."""
    out = subprocess.run([sys.executable, __file__, f"--{mode}", base, "--seconds", str(seconds), *extra],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def run(seconds=5.0):
    """[(name, value, unit)]: sandbox pages/s, Scrapy pages/s, and their ratio."""
    with SandboxProcess(seed=1, postings=(1000, 1000)) as sandbox:
        served = _child("load", sandbox.url, seconds)
        cold = _child("load", sandbox.url, seconds, "--cold")
        fetched = _child("scrapy", sandbox.url, seconds)
    serve_rate = served["pages"] / served["seconds"]
    cold_rate = cold["pages"] / cold["seconds"]
    fetch_rate = fetched["pages"] / fetched["seconds"] if fetched["seconds"] else 0.0

    def ratio(rate):
        return round(rate / fetch_rate, 2) if fetch_rate else float("inf")

    return [
        ("sandbox_serve_rate", round(serve_rate, 1), "pages/s"),
        ("scrapy_fetch_rate", round(fetch_rate, 1), "pages/s"),
        ("serve_to_fetch_ratio", ratio(serve_rate), "x"),
        ("sandbox_cold_serve_rate", round(cold_rate, 1), "pages/s"),
        ("cold_serve_to_fetch_ratio", ratio(cold_rate), "x"),
    ]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--load", metavar="URL", help=argparse.SUPPRESS)
    parser.add_argument("--scrapy", metavar="URL", help=argparse.SUPPRESS)
    parser.add_argument("--cold", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.load:
        print(json.dumps(asyncio.run(_load(args.load, args.seconds, args.concurrency, args.cold))))
    elif args.scrapy:
        print(json.dumps(_scrapy(args.scrapy, args.seconds)))
    else:
        for name, value, unit in run(args.seconds):
            print(f"{name:<24}{value:>10} {unit}")


if __name__ == "__main__":
    main()
