"""`farm demo`: the main job on the embedded defaults, against the sandbox.

Upgrades the database, imports the bundled keyword file (3 sites x 4 cities x
3 jobs), starts the sandbox, runs `scrapy crawl` for each site and prints the
stats. Run again the same day, it finds nothing left to crawl and says so.
"""

import os
import subprocess
import sys
import time
from importlib.resources import files
from pathlib import Path

import click

from farm.state.models import SOURCES

KEYWORDS_FILE = files("farm.demo") / "keywords.csv"


def run_demo(store, db_url, log_dir: Path, echo=click.echo, walls: bool = False):
    """Crawl every demo keyword still claimable today; the per-site exit codes. ``walls``: the sandbox
    stands each site's wall before its search, as the real sites do, and the crawls pass them in the browser."""
    from farm.sandbox.testing import SandboxProcess

    left = {source: store.claimable(source) for source in SOURCES}
    if not any(left.values()):
        echo(
            f"Nothing new to crawl: every keyword was already crawled today ({store.today()}, "
            f"{store.tz.key}). Run it again tomorrow, or see `farm stats`."
        )
        return {}
    log_dir.mkdir(parents=True, exist_ok=True)
    codes = {}
    with SandboxProcess(seed=2026, walls=True if walls else None) as sandbox:
        echo(f"sandbox listening on {sandbox.url}" + (" with the sites' walls up" if walls else ""))
        # the settings module by name, so the demo runs from any directory
        env = dict(
            os.environ,
            FARM_DB_URL=db_url,
            FARM_LOGSTATS_INTERVAL="5",
            SCRAPY_SETTINGS_MODULE="farm.settings",
            FARM_CONCURRENT_REQUESTS="16",
        )
        for source in SOURCES:
            # the sandbox is local: no politeness needed (the defaults are for the real sites)
            env[f"FARM_{source.upper()}_BASE_URL"] = sandbox.url
            env[f"FARM_{source.upper()}_RATE"] = "0"
        for source in SOURCES:
            if not left[source]:
                echo(f"{source}: nothing left for today")
                continue
            log_file = log_dir / f"{source}.log"
            echo(f"{source}: crawling {left[source]} keywords (log: {log_file}) ...", nl=False)
            started = time.monotonic()
            proc = subprocess.run(
                [sys.executable, "-m", "scrapy", "crawl", source, "-s", f"LOG_FILE={log_file}"],
                env=env,
            )
            codes[source] = proc.returncode
            status = "done" if proc.returncode == 0 else f"FAILED (exit {proc.returncode})"
            echo(f" {status} in {time.monotonic() - started:.1f}s{door_of(log_file)}")
    return codes


def door_of(log_file: Path) -> str:
    """How the crawl got past the site's walls, from its log: sessions earned in the browser."""
    try:
        text = log_file.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    earned = text.count("passed in the browser")
    return f" (walls passed in the browser: {earned} session{'s' if earned != 1 else ''})" if earned else ""
