"""Is the sandbox fast enough not to be a crawl's bottleneck?

Measures, against one sandbox process, side by side (alternating rounds against the same server):
  (a) headline: pages/s it serves to a concurrent keep-alive load client (aiohttp, in another process) when
      every page is *fresh*: a (keyword, page) never requested before in this server process, so each one
      is generated on request, as in a real crawl (each round uses keywords of its own);
  (b) pages/s one plain Scrapy process fetches from it (fresh qcwy pages, JSON parsed; no pipelines);
  (c) the ratio a / b, which should be at least 3 (a crawl must not wait on the sandbox);
and, for reference, the rate for pages served again from the page cache.

    .venv/bin/python bench/sandbox_bench.py [--seconds 5] [--rounds 2]

Each measurement runs in its own process so none shares a CPU core's event loop with the server (the box
has 2). Rates are the median over the rounds; each round's figures are printed too.
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
    return (
        f"{base}/api/job/search-pc?api_key=51job&timestamp=1700000000&keyword={keyword}&searchType=2"
        f"&jobArea={CITY}&pageNum={page}&pageSize=20&sortType=0&source=1&pageCode=sou%7Csou%7Csoulb"
    )


# --- (a) load client --------------------------------------------------------------------------------


async def _load(base, seconds, concurrency, fresh=None):
    """Cached: 1000 pages requested over and over (served from the page cache). Fresh (a keyword prefix no
    other run uses): every request is a page not requested before, keyword by keyword, all 50 pages of each,
    as in a real crawl (each page generated on request)."""
    import aiohttp

    if fresh:

        def url_at(i):  # never wraps: request i is page i % 50 + 1 of keyword i // 50
            return qcwy_url(base, f"{fresh}{i // PAGES}", i % PAGES + 1)
    else:
        urls = [qcwy_url(base, k, p) for p in range(1, PAGES + 1) for k in KEYWORDS[:20]]

        def url_at(i):
            return urls[i % len(urls)]

    done, errors, cursor = 0, 0, 0
    deadline = 0.0

    async def worker(session):
        nonlocal done, errors, cursor
        while time.perf_counter() < deadline:
            url = url_at(cursor)
            cursor += 1
            async with session.get(url) as response:
                await response.read()
                if response.status == 200:
                    done += 1
                else:
                    errors += 1

    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector) as session:
        if not fresh:
            for url in urls:  # warm the page cache
                async with session.get(url) as response:
                    await response.read()
        started = time.perf_counter()
        deadline = started + seconds
        await asyncio.gather(*(worker(session) for _ in range(concurrency)))
        return {"pages": done, "errors": errors, "seconds": time.perf_counter() - started}


# --- (b) one plain Scrapy process -------------------------------------------------------------------


def _scrapy(base, seconds, prefix):
    import scrapy
    from scrapy.crawler import CrawlerProcess

    result = {}

    class QcwyBench(scrapy.Spider):
        name = "sandbox_bench"

        async def start(self):
            for page in range(1, PAGES + 1):
                for keyword in KEYWORDS:  # keywords no other run asked for: every page is generated fresh
                    yield scrapy.Request(qcwy_url(base, f"{prefix}{keyword}", page), dont_filter=True)

        def parse(self, response):
            items = json.loads(response.text)["resultbody"]["job"]["items"]
            now = time.perf_counter()
            result.setdefault("first", now)
            result["last"] = now
            result["pages"] = result.get("pages", 0) + 1
            result["items"] = result.get("items", 0) + len(items)

    process = CrawlerProcess(
        settings={
            "REMOTE_CONTROL_ENABLED": False,
            "TELNETCONSOLE_ENABLED": False,
            "LOG_LEVEL": "WARNING",
            "CONCURRENT_REQUESTS": SCRAPY_CONCURRENCY,
            "CONCURRENT_REQUESTS_PER_DOMAIN": SCRAPY_CONCURRENCY,
            "ROBOTSTXT_OBEY": False,
            "CLOSESPIDER_TIMEOUT": seconds + 1,
            "COOKIES_ENABLED": False,
        }
    )
    process.crawl(QcwyBench)
    process.start()
    # The first response is the clock's start, so start-up time does not count against Scrapy.
    return {"pages": result.get("pages", 1) - 1, "seconds": result.get("last", 0) - result.get("first", 0)}


def _child(mode, base, seconds, *extra):
    """Run one measurement in a fresh process; returns its JSON result."""
    out = subprocess.run(
        [sys.executable, __file__, f"--{mode}", base, "--seconds", str(seconds), *extra],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def _median(values):
    values = sorted(values)
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2


LOAD_CONCURRENCY = 64  # the load client's requests at once
SCRAPY_CONCURRENCY = 16  # the Scrapy process's CONCURRENT_REQUESTS (and per domain)


def run(seconds=5.0, rounds=2, verbose=False):
    """[(name, value, unit)]: fresh-page serve rate, Scrapy fetch rate and their ratio (the headline), then
    the cached-page serve rate and its ratio, each side's concurrency, and how many of the pages served to
    the fresh load the sandbox generated on request (its own count). Medians over `rounds` alternating
    fresh / Scrapy rounds."""
    fresh_rates, fetch_rates = [], []
    fresh_served = fresh_rendered = 0
    with SandboxProcess(seed=1, postings=(1000, 1000)) as sandbox:
        for r in range(rounds):
            before = sandbox.health()["pages_rendered"]
            fresh = _child("load", sandbox.url, seconds, "--fresh", f"fresh{r}-")
            fresh_rendered += sandbox.health()["pages_rendered"] - before
            fresh_served += fresh["pages"]
            fetched = _child("scrapy", sandbox.url, seconds, "--prefix", f"scrapy{r}-")
            if fresh["errors"]:
                raise RuntimeError(f"the fresh load got {fresh['errors']} non-200 answers")
            fresh_rates.append(fresh["pages"] / fresh["seconds"])
            fetch_rates.append(fetched["pages"] / fetched["seconds"] if fetched["seconds"] else 0.0)
            if verbose:
                ratio = fresh_rates[-1] / fetch_rates[-1] if fetch_rates[-1] else float("inf")
                print(
                    f"  round {r + 1}: fresh {fresh_rates[-1]:.0f} pages/s, Scrapy {fetch_rates[-1]:.0f} "
                    f"pages/s, {ratio:.2f}x",
                    flush=True,
                )
        served = _child("load", sandbox.url, seconds)
    fresh_rate, fetch_rate = _median(fresh_rates), _median(fetch_rates)
    serve_rate = served["pages"] / served["seconds"]

    def ratio(rate):
        return round(rate / fetch_rate, 2) if fetch_rate else float("inf")

    return [
        (f"sandbox_fresh_serve_rate ({LOAD_CONCURRENCY} requests at once)", round(fresh_rate, 1), "pages/s"),
        (f"scrapy_fetch_rate ({SCRAPY_CONCURRENCY} requests at once)", round(fetch_rate, 1), "pages/s"),
        ("fresh_serve_to_fetch_ratio", ratio(fresh_rate), "x"),
        ("fresh load: pages served", fresh_served, "pages"),
        ("fresh load: of them generated on request (sandbox's count)", fresh_rendered, "pages"),
        ("sandbox_cached_serve_rate", round(serve_rate, 1), "pages/s"),
        ("cached_serve_to_fetch_ratio", ratio(serve_rate), "x"),
    ]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--concurrency", type=int, default=LOAD_CONCURRENCY)
    parser.add_argument("--load", metavar="URL", help=argparse.SUPPRESS)
    parser.add_argument("--scrapy", metavar="URL", help=argparse.SUPPRESS)
    parser.add_argument("--rounds", type=int, default=2, help="alternating fresh / Scrapy rounds (median)")
    parser.add_argument("--fresh", metavar="PREFIX", help=argparse.SUPPRESS)
    parser.add_argument("--prefix", metavar="PREFIX", default="scrapy-", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.load:
        print(json.dumps(asyncio.run(_load(args.load, args.seconds, args.concurrency, args.fresh))))
    elif args.scrapy:
        print(json.dumps(_scrapy(args.scrapy, args.seconds, args.prefix)))
    else:
        for name, value, unit in run(args.seconds, args.rounds, verbose=True):
            print(f"{name:<30}{value:>10} {unit}")


if __name__ == "__main__":
    main()
