"""Real `scrapy crawl` processes against the sandbox, and what the tests check after them."""

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from sqlalchemy import select

from farm.sites.boss.spider import BossSpider
from farm.sites.qcwy.spider import QcwySpider
from farm.sites.zhilian.spider import ZhilianSpider
from farm.state.db import make_engine
from farm.state.models import JobPostingRow, Keyword
from farm.state.store import KeywordStore
from tests.migrated import migrated

REPO = Path(__file__).resolve().parents[2]
SPIDERS = {"boss": BossSpider, "qcwy": QcwySpider, "zhilian": ZhilianSpider}
BASE_URL_SETTING = {name: f"FARM_{name.upper()}_BASE_URL" for name in SPIDERS}

# Small and quick, but every mechanism on: several leases, parallel pages, batching.
CRAWL_SETTINGS = {
    "FARM_LEASES_IN_FLIGHT": 4,
    "CONCURRENT_REQUESTS": 8,
    "CONCURRENT_REQUESTS_PER_DOMAIN": 8,
    # the sandbox is local: no politeness pace (the defaults are for the real sites)
    "FARM_BOSS_RATE": 0,
    "FARM_QCWY_RATE": 0,
    "FARM_ZHILIAN_RATE": 0,
    "FARM_RETRY_DELAY": 0.2,
    "FARM_SQL_BATCH_SIZE": 100,
    "FARM_SQL_FLUSH_INTERVAL": 0.1,
    "FARM_BLOCK_BASE_DELAY": 0.05,
    "FARM_BLOCK_MAX_DELAY": 0.5,
    "FARM_LOGSTATS_INTERVAL": 5,
    "LOG_LEVEL": "INFO",
}


def crawl_command(spider, settings):
    merged = {**CRAWL_SETTINGS, **settings}
    command = [sys.executable, "-m", "scrapy", "crawl", spider]
    for name, value in merged.items():
        command += ["-s", f"{name}={value}"]
    return command


def crawl_env(db_url, sandbox_url, redis=None):
    """The environment of a crawl; ``redis``: (URL, key prefix) to share its work through Redis."""
    env = dict(os.environ)
    env["PYTHONFAULTHANDLER"] = "1"  # a crawl that hangs is sent SIGABRT (stop): its threads' stacks go to its log
    env["FARM_DB_URL"] = db_url
    for setting in BASE_URL_SETTING.values():
        env[setting] = sandbox_url
    env.pop("FARM_REDIS_URL", None)
    if redis is not None:
        env["FARM_REDIS_URL"], env["FARM_REDIS_PREFIX"] = redis
    return env


def run_crawl(spider, db_url, sandbox_url, timeout=180, redis=None, **settings):
    """Run one crawl to its end; the finished process (stdout+stderr in .output). One that does
    not end within ``timeout`` fails the test with the end of its log and its threads' stacks."""
    process = subprocess.Popen(
        crawl_command(spider, settings),
        cwd=REPO,
        env=crawl_env(db_url, sandbox_url, redis),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        output, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.send_signal(signal.SIGABRT)  # PYTHONFAULTHANDLER: every thread's stack to the log
        try:
            output, _ = process.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            output, _ = process.communicate()
        raise AssertionError(
            f"the crawl (pid {process.pid}) did not end by itself within {timeout}s; its log ends:\n{output[-8000:]}"
        ) from None
    finished = subprocess.CompletedProcess(process.args, process.returncode, stdout=output)
    finished.output = output
    return finished


def start_crawl(spider, db_url, sandbox_url, log_path, redis=None, **settings):
    log = open(log_path, "ab")
    return subprocess.Popen(
        crawl_command(spider, settings),
        cwd=REPO,
        env=crawl_env(db_url, sandbox_url, redis),
        stdout=log,
        stderr=subprocess.STDOUT,
    )


def stop(process, timeout):
    """Wait for a crawl to end by itself; one that does not within ``timeout`` is made to print
    every thread's stack (SIGABRT, with PYTHONFAULTHANDLER) and killed, and the test fails."""
    try:
        return process.wait(timeout)
    except subprocess.TimeoutExpired:
        process.send_signal(signal.SIGABRT)
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        raise AssertionError(f"the crawl (pid {process.pid}) did not end by itself within {timeout}s") from None


def crawl_stat(output, name):
    """A stat from Scrapy's end-of-crawl dump, or 0."""
    match = re.search(rf"'{re.escape(name)}': (\d+)", output)
    return int(match.group(1)) if match else 0


def prepare_db(db_url, rows):
    migrated(db_url)
    store = KeywordStore(make_engine(db_url))
    store.add_keywords(rows)
    return store


def keywords(db_url):
    engine = make_engine(db_url)
    with engine.connect() as conn:
        rows = conn.execute(select(Keyword).order_by(Keyword.id)).mappings().all()
    engine.dispose()
    return [dict(row) for row in rows]


def stored_postings(db_url, source):
    """(source, job_id) -> how many rows; every posting must be there once."""
    engine = make_engine(db_url)
    with engine.connect() as conn:
        rows = conn.execute(
            select(JobPostingRow.job_id, JobPostingRow.keyword_id).where(JobPostingRow.source == source)
        ).all()
    engine.dispose()
    return [job_id for job_id, _ in rows]


def expected_crawl(sandbox, source, rows, max_pages):
    """What the sandbox says a full crawl of ``rows`` must fetch and store.

    Returns (pages: {(site, code, job, page)}, posting ids: set,
    per keyword {(city, job): (pages, postings)}).
    """
    spider = SPIDERS[source]
    pages, ids, per_keyword = set(), set(), {}
    for row_source, city, job in rows:
        if row_source != source:
            continue
        code = spider.city_codes.get(city, city)
        truth = sandbox.truth(source, code, job, page_size=spider.page_size)  # the size the spider asks
        last = max(1, min(max_pages, truth["pages"]))
        reached = truth["ids"][: last * truth["page_size"]]
        pages.update((source, code, job, page) for page in range(1, last + 1))
        ids.update(reached)
        per_keyword[(city, job)] = (last, len(reached))
    return pages, ids, per_keyword


def fetched_pages(sandbox, source):
    return {key: count for key, count in sandbox.counts().items() if key[0] == source}


def served(sandbox, source="qcwy"):
    """Pages the sandbox has served successfully so far, all keywords together."""
    return sum(fetched_pages(sandbox, source).values())


def wait_until(condition, timeout, what):
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def state_writer_of(crawler_pid):
    """The pid of the crawl's state writer process (farm.writer), or None."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == crawler_pid and b"farm.writer.serve" in cmdline:
            return int(entry.name)
    return None


def running(pid):
    """Whether the process exists and is not a zombie."""
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def kill_and_settle(crawler):
    """kill -9 the crawl; wait for its state writer to commit what it had read and exit."""
    writer = state_writer_of(crawler.pid)
    crawler.kill()
    crawler.wait(30)
    if writer is not None:  # its input ended with the crawl: it commits what it read and exits
        wait_until(lambda: not running(writer), 30, "the killed crawl's state writer to exit")


def kill_at_a_random_moment(sandbox, start, chance, least, most, source="qcwy"):
    """Start a crawl (``start()``), kill -9 it once the sandbox has served ``least`` to ``most``
    more pages, and let its writer settle; whether it was still running when killed."""
    target = served(sandbox, source) + chance.randint(least, most)
    crawler = start()
    try:
        wait_until(lambda: served(sandbox, source) >= target or crawler.poll() is not None, 60, "pages")
        killed = crawler.poll() is None
        kill_and_settle(crawler)
    finally:
        crawler.kill()
        crawler.wait(30)
    return killed
