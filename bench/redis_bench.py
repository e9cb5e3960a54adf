"""Work shared through Redis: farm in Redis mode against farm in local mode and against scrapy-redis.

One process each, side by side in one run, on the same qcwy pages from one sandbox:
farm with FARM_REDIS_URL (the shared queue, dupefilter and pace), farm without it
(Scrapy's own queues), and the plain spider on scrapy-redis's own scheduler, in
rounds as in bench.crawl_bench: the order turns each round, a ratio is taken
within a round, and the median of the rounds' ratios is the figure (a best run
of each side, as this bench took before, is as much luck as speed here).
Reported: pages/s, the ratios, Redis commands and bytes of network traffic per
page (INFO's counters before and after), and, after farm's crawl, the bytes its
fingerprints take (MEMORY USAGE of its leases' sets).
"""

import os
import statistics
import sys
import tempfile
import uuid

import redis

from bench.crawl_bench import COMMON, REPO, _run
from farm.sandbox.testing import SandboxProcess
from farm.state.db import make_engine
from farm.state.migrate import upgrade
from farm.state.store import KeywordStore

REDIS_URL = os.environ.get("FARM_BENCH_REDIS", "redis://127.0.0.1:6379/14")
CITIES = ("北京", "上海", "广州", "深圳")
JOBS = ("python", "java", "前端", "测试", "运维", "产品经理", "数据分析", "算法", "运营", "会计")


def _counters(client):
    commands = sum(v["calls"] for v in client.info("commandstats").values())
    stats = client.info("stats")
    return commands, stats["total_net_input_bytes"] + stats["total_net_output_bytes"]


def _measured(client, run):
    before = _counters(client)
    pages, rate = run()
    after = _counters(client)
    return pages, rate, (after[0] - before[0]) / pages, (after[1] - before[1]) / pages


def _farm(sandbox_url, keywords, db_url, redis_prefix=None):
    upgrade(db_url)
    store = KeywordStore(make_engine(db_url))
    store.add_keywords([("qcwy", city, job) for city, job in keywords])
    store.engine.dispose()
    env = dict(os.environ, FARM_QCWY_BASE_URL=sandbox_url, FARM_DB_URL=db_url)
    env.pop("FARM_REDIS_URL", None)
    if redis_prefix:
        env.update(FARM_REDIS_URL=REDIS_URL, FARM_REDIS_PREFIX=redis_prefix)
    return _run([sys.executable, "-m", "scrapy", "crawl", "qcwy"] + COMMON, env)


def _scrapy_redis(sandbox_url, keywords):
    return _run(*scrapy_redis_command(sandbox_url, keywords))


def scrapy_redis_command(sandbox_url, keywords, redis_url=REDIS_URL):
    """The command and environment of the plain spider's crawl on scrapy-redis's own scheduler."""
    env = dict(os.environ, FARM_QCWY_BASE_URL=sandbox_url)
    pairs = ",".join(f"{city}:{job}" for city, job in keywords)
    command = [
        sys.executable,
        "-m",
        "scrapy",
        "runspider",
        str(REPO / "bench/plain_qcwy_redis.py"),
        "-a",
        f"keywords={pairs}",
        "-s",
        f"REDIS_URL={redis_url}",
    ]
    return command + COMMON, env


def run(rounds=5):
    client = redis.Redis.from_url(REDIS_URL)
    keywords = [(city, job) for city in CITIES for job in JOBS]
    results = {"local": [], "redis": [], "scrapy-redis": []}  # (pages, pages/s, commands, bytes) a round
    fingerprint_bytes = memory_after = 0.0
    with SandboxProcess(seed=9, postings=(800, 800)) as sandbox, tempfile.TemporaryDirectory() as tmp:
        for round_no in range(rounds):
            prefix = f"farm-bench-{uuid.uuid4().hex[:8]}"
            client.flushdb()
            sides = {
                "local": lambda: _farm(sandbox.url, keywords, f"sqlite:///{tmp}/local-{round_no}.db"),
                "redis": lambda: _farm(sandbox.url, keywords, f"sqlite:///{tmp}/redis-{round_no}.db", prefix),
                "scrapy-redis": lambda: _scrapy_redis(sandbox.url, keywords),
            }
            # as in bench.crawl_bench: the order turns each round, the ratios are taken within a round
            for name in sides if round_no % 2 == 0 else reversed(sides):
                results[name].append(_measured(client, sides[name]))
                if name == "redis":
                    sets = list(client.scan_iter(f"{prefix}:qcwy:seen:*"))  # one per keyword's lease
                    fingerprint_bytes = sum(map(client.memory_usage, sets)) / sum(map(client.scard, sets))
                    memory_after = client.info("memory")["used_memory"]
        client.flushdb()
    client.close()

    def median(name, field):
        return statistics.median(result[field] for result in results[name])

    def ratio(side, baseline):  # the median of the rounds' ratios
        return statistics.median(a[1] / b[1] for a, b in zip(results[side], results[baseline]))

    pages = results["redis"][0][0]
    return [
        (f"farm, Redis mode ({pages} qcwy pages, median of {rounds} rounds)", median("redis", 1), "pages/s"),
        ("farm, local mode", median("local", 1), "pages/s"),
        ("plain spider on scrapy-redis's scheduler", median("scrapy-redis", 1), "pages/s"),
        ("farm Redis mode / farm local mode (aim >= 0.85)", ratio("redis", "local"), "ratio"),
        ("farm Redis mode / scrapy-redis (aim > 1)", ratio("redis", "scrapy-redis"), "ratio"),
        ("farm Redis mode: Redis commands per page", median("redis", 2), "commands"),
        ("scrapy-redis: Redis commands per page", median("scrapy-redis", 2), "commands"),
        ("farm Redis mode: Redis network bytes per page", median("redis", 3), "bytes"),
        ("scrapy-redis: Redis network bytes per page", median("scrapy-redis", 3), "bytes"),
        ("farm: bytes per fingerprint (the leases' sets, MEMORY USAGE)", fingerprint_bytes, "bytes"),
        ("Redis memory after farm's crawl (used_memory)", memory_after, "bytes"),
    ]


if __name__ == "__main__":
    for name, value, unit in run():
        print(f"{name:<62} {value:>12.2f} {unit}")
