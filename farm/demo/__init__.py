"""`farm demo`: the main job on the embedded defaults, against the sandbox.

Upgrades the database, imports the bundled keyword file (3 sites x 4 cities x
3 jobs), starts the sandbox, runs `scrapy crawl` for each site and prints the
stats. Run again the same day, it finds nothing left to crawl and says so;
``--walls`` sets the demo's keywords back to a fresh pass first (``fresh_pass``),
so that their crawl meets the walls whatever an earlier demo did that day.

The database is the demo's own (``demo_db_url``: demo.db beside the logs) unless a
database is named (``--db-url``, or ``FARM_DB_URL`` other than its default): the
sandbox's keywords and postings, with the real sites' URLs, never reach the
``farm.db`` a first real crawl keeps by default.

Ctrl+C (SIGINT) or SIGTERM while a site's crawl runs is passed on to that crawl, in a
process group of its own (the terminal's Ctrl+C reaches the demo alone), and the demo
waits for it, as `scrapy crawl` stops: the keywords it held go back as ``partial``. A
second Ctrl+C is passed on too, and Scrapy then stops at once. The sandbox ignores the
terminal's Ctrl+C (it is started with SIGINT ignored) and is stopped once the crawl has.
"""

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path

import click
from sqlalchemy import and_, or_, update
from sqlalchemy.engine import Engine

from farm.sites import packages, sites
from farm.state.models import Keyword

KEYWORDS_FILE = files("farm.demo") / "keywords.csv"
DB_FILE = "demo.db"  # the demo's own database, in its --log-dir
RELAYED = (signal.SIGINT, signal.SIGTERM)  # passed on to the crawl running


@dataclass
class DemoRun:
    """How the demo's crawls ended: each site's exit code, and the signal that stopped them (None: none)."""

    codes: dict[str, int] = field(default_factory=dict)
    stopped_by: int | None = None


def demo_db_url(log_dir: Path) -> str:
    """The demo's own database: a SQLite file in its log folder."""
    return f"sqlite:///{(log_dir / DB_FILE).resolve()}"


def fresh_pass(engine: Engine, rows: list[tuple[str, str, str]]) -> int:
    """The demo's keywords (``rows``) not being crawled set back as never requested: the next claim
    takes each as fresh (its pages, counts and retries start again); how many were set back."""
    if not rows:
        return 0
    k = Keyword.__table__.c
    picked = or_(*(and_(k.source == s, k.city == c, k.job == j) for s, c, j in rows))
    with engine.begin() as conn:
        result = conn.execute(
            update(Keyword.__table__)
            .where(picked, k.crawl_status != "crawling")
            .values(crawl_status="idle", last_requested_date=None)
        )
    return max(result.rowcount, 0)


def run_demo(store, db_url, log_dir: Path, echo=click.echo, walls: bool = False) -> DemoRun:
    """Crawl every demo keyword still claimable today, site by site. ``walls``: the sandbox stands each
    site's wall before its search, as the real sites do, and the crawls pass them in the browser."""
    from farm.sandbox.testing import SandboxProcess

    outcome = DemoRun()
    served = [site.name for site in sites() if site.sandbox]  # the sites the sandbox imitates
    left = {source: store.claimable(source) for source in served}
    if not any(left.values()):
        echo(
            f"Nothing new to crawl: every keyword was already crawled today ({store.today()}, "
            f"{store.tz.key}). Run it again tomorrow, run `farm demo --walls`, or see `farm stats`."
        )
        return outcome
    log_dir.mkdir(parents=True, exist_ok=True)
    # the site packages beyond farm's own (FARM_SITE_PACKAGES) served too, as their keywords are crawled
    sandbox = SandboxProcess(seed=2026, walls=True if walls else None, site_packages=packages())
    with _ignoring(signal.SIGINT):  # the terminal's Ctrl+C stops the crawl, which still needs the sandbox
        sandbox.start()
    try:
        echo(f"sandbox listening on {sandbox.url}" + (" with the sites' walls up" if walls else ""))
        # the settings module by name, so the demo runs from any directory
        env = dict(
            os.environ,
            FARM_DB_URL=db_url,
            FARM_LOGSTATS_INTERVAL="5",
            SCRAPY_SETTINGS_MODULE="farm.settings",
            FARM_CONCURRENT_REQUESTS="16",
        )
        for source in served:
            # the sandbox is local: no politeness needed (the defaults are for the real sites)
            env[f"FARM_{source.upper()}_BASE_URL"] = sandbox.url
            env[f"FARM_{source.upper()}_RATE"] = "0"
        for source in served:
            if not left[source]:
                echo(f"{source}: nothing left for today")
                continue
            log_file = log_dir / f"{source}.log"
            echo(f"{source}: crawling {left[source]} keywords (log: {log_file}) ...", nl=False)
            started = time.monotonic()
            code, stopped_by = crawl(
                [sys.executable, "-m", "scrapy", "crawl", source, "-s", f"LOG_FILE={log_file}"], env
            )
            outcome.codes[source] = code
            took = f"in {time.monotonic() - started:.1f}s"
            if stopped_by is not None:
                outcome.stopped_by = stopped_by
                name = signal.Signals(stopped_by).name
                echo(f" stopped by {name} {took}: the keywords it held went back as partial")
                break
            status = "done" if code == 0 else f"FAILED (exit {code})"
            echo(f" {status} {took}{door_of(log_file)}")
    finally:
        sandbox.stop()
    return outcome


def crawl(command: list[str], env: dict[str, str]) -> tuple[int, int | None]:
    """Run one `scrapy crawl` to its end, passing SIGINT and SIGTERM on to it; its exit code and the
    first signal passed on (None: none)."""
    relayed: list[int] = []
    process: subprocess.Popen | None = None

    def relay(signum, frame):
        relayed.append(signum)
        if process is not None and process.poll() is None:
            process.send_signal(signum)

    previous = {signum: signal.signal(signum, relay) for signum in RELAYED}
    try:
        # a process group of its own: the terminal's Ctrl+C reaches it once, passed on from here
        process = subprocess.Popen(command, env=env, stdin=subprocess.DEVNULL, process_group=0)
        if relayed:  # a signal that came while it was starting
            process.send_signal(relayed[0])
        code = process.wait()
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    return code, relayed[0] if relayed else None


@contextmanager
def _ignoring(signum: int) -> Iterator[None]:
    """``signum`` ignored meanwhile: a process started now ignores it too (Python keeps an ignored SIGINT)."""
    previous = signal.signal(signum, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signum, previous)


def door_of(log_file: Path) -> str:
    """How the crawl got past the site's walls, from its log: sessions earned in the browser."""
    try:
        text = log_file.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    earned = text.count("passed in the browser")
    return f" (walls passed in the browser: {earned} session{'s' if earned != 1 else ''})" if earned else ""
