"""One site's probe crawl, in a process of its own: ``python -m farm.probe.child SITE CITY JOB TIMEOUT FOLDER
[PROXY]`` (PROXY: the index of the one proxy of FARM_PROXIES it goes through).

The crawl is a real one (a CrawlerProcess of the site's spider, with the settings `scrapy crawl` would
have, changed as farm.probe.plan says) into FOLDER/probe.db, a database of one keyword; its log goes to
FOLDER/crawl.log. When it ends, FOLDER/report.json says what it met: the crawl's stats, how the keyword
ended, the postings stored, and what only the log tells (each wall the browser passed and in how many
seconds, why it could not pass one, the crawl's errors). The report is written whole or not at all
(renamed into place), so the runner never reads half of one.
"""

import json
import logging
import os
import re
import sys
from pathlib import Path

from farm.probe.plan import Probe, overrides

REPORT = "report.json"
LOG = "crawl.log"
# what farm.sessions.middleware logs of a wall: passed (in seconds), or not passed (why)
PASSED = re.compile(r"farm \S+: (\S+) passed in the browser in ([\d.]+) s")
NOT_PASSED = re.compile(r"farm \S+: (\S+) met; the browser cannot pass it: (.*)")
MOST_ERRORS = 5  # error lines kept for the report


class LogWatch(logging.Handler):
    """What the crawl's log says that its stats do not."""

    def __init__(self):
        super().__init__(logging.INFO)
        self.passes: list[dict] = []  # {"wall", "seconds"}, in order
        self.not_passed: list[dict] = []  # {"wall", "why"}
        self.errors: list[str] = []  # the first line of each ERROR record, the first few

    def emit(self, record: logging.LogRecord) -> None:
        try:
            message = record.getMessage()
        except (TypeError, ValueError):
            return
        if record.levelno >= logging.ERROR and len(self.errors) < MOST_ERRORS:
            self.errors.append(message.strip().splitlines()[0] if message.strip() else record.levelname)
        if not record.name.startswith("farm.sessions"):
            return
        if (match := PASSED.match(message)) is not None:
            self.passes.append({"wall": match.group(1), "seconds": float(match.group(2))})
        elif (match := NOT_PASSED.match(message)) is not None:
            self.not_passed.append({"wall": match.group(1), "why": match.group(2)})


def run(probe: Probe, folder: Path) -> dict:
    """Run the probe's crawl; its report."""
    from scrapy.spiderloader import get_spider_loader

    from farm.cli.context import project_settings
    from farm.config import FarmConfig
    from farm.errors import SettingError

    report: dict = {"site": probe.site, "city": probe.city, "job": probe.job, "timeout": probe.timeout}
    settings = project_settings()
    try:
        spidercls = get_spider_loader(settings).load(probe.site)
    except KeyError:
        report["error"] = f"no spider named {probe.site!r} in the project"
        return report
    site = getattr(spidercls, "site", None) or spidercls.name
    db_url = f"sqlite:///{folder / 'probe.db'}"
    try:
        settings.setdict(overrides(probe, site, settings, db_url, str(folder / LOG)), priority="cmdline")
        config = FarmConfig.from_settings(settings)
    except SettingError as exc:
        report["error"] = str(exc)
        return report
    process = crawler_process(settings)  # first: it installs the reactor farm's crawl modules expect
    report["impersonate"] = _impersonation(config.site(site).impersonate)
    report["base_url"] = config.site(site).base_url
    report["proxies"] = len(config.proxies)
    report["browser_timeout"] = config.browser_timeout
    report["crawl_seconds"] = probe.crawl_seconds
    _one_keyword(settings, db_url, probe)

    watch = LogWatch()
    logging.getLogger().addHandler(watch)
    crawler = process.create_crawler(probe.site)
    started = process.crawl(crawler)
    _take_start_error(started, report)
    process.start()

    report["stats"] = _plain(crawler.stats.get_stats())
    report["passes"], report["not_passed"], report["errors"] = watch.passes, watch.not_passed, watch.errors
    report.update(_outcome(db_url))
    return report


def crawler_process(settings):
    """The crawler process `scrapy crawl` would run these settings in (scrapy.cmdline)."""
    from scrapy.crawler import AsyncCrawlerProcess, CrawlerProcess
    from scrapy.utils.reactor import _asyncio_reactor_path

    asyncio_reactor = settings["TWISTED_REACTOR"] == _asyncio_reactor_path
    if (asyncio_reactor and not settings.getbool("FORCE_CRAWLER_PROCESS")) or not settings.getbool(
        "TWISTED_REACTOR_ENABLED"
    ):
        return AsyncCrawlerProcess(settings)
    return CrawlerProcess(settings)


def _impersonation(target: str) -> str:
    from farm.sessions.identity import ClientIdentity

    return ClientIdentity.of(target).impersonate


def _one_keyword(settings, db_url: str, probe: Probe) -> None:
    from farm.sites.project import load_sources
    from farm.state.db import make_engine
    from farm.state.migrate import upgrade
    from farm.state.store import KeywordStore

    load_sources(settings)  # a site of the project's own is then a keyword's source, as in `farm keywords add`
    upgrade(db_url)
    engine = make_engine(db_url)
    try:
        KeywordStore(engine).add_keywords([(probe.site, probe.city, probe.job)])
    finally:
        engine.dispose()


def _outcome(db_url: str) -> dict:
    """How the keyword ended and the postings stored."""
    from sqlalchemy import func, select

    from farm.state.db import make_engine
    from farm.state.models import JobPostingRow, Keyword

    engine = make_engine(db_url)
    try:
        with engine.connect() as conn:
            row = conn.execute(
                select(Keyword.crawl_status, Keyword.last_completed_page, Keyword.jobs_found, Keyword.error_message)
            ).first()
            postings = conn.execute(select(func.count()).select_from(JobPostingRow)).scalar_one()
    finally:
        engine.dispose()
    keyword = dict(row._mapping) if row is not None else {}
    return {"keyword": keyword, "postings": postings}


def _take_start_error(started, report: dict) -> None:
    """A crawl that could not start: its error in the report (farm's own have logged their one line)."""

    def taken(error: BaseException) -> None:
        report["start_error"] = f"{type(error).__name__}: {error}".strip().splitlines()[0]

    if hasattr(started, "add_done_callback"):  # an asyncio Future
        started.add_done_callback(lambda task: task.cancelled() or (task.exception() and taken(task.exception())))
    else:  # a Deferred (Twisted's CrawlerProcess)
        started.addErrback(lambda failure: taken(failure.value))


def _plain(stats: dict) -> dict:
    """The stats as JSON holds them (times as text)."""
    return json.loads(json.dumps(stats, default=str))


def write_report(report: dict, folder: Path) -> None:
    part = folder / (REPORT + ".part")
    part.write_text(json.dumps(report, ensure_ascii=False), encoding="utf-8")
    os.replace(part, folder / REPORT)


def main(argv: list[str]) -> int:
    site, city, job, timeout, folder, *proxy = argv  # PROXY: --each-proxy's index into FARM_PROXIES
    probe = Probe(site, city, job, float(timeout), int(proxy[0]) if proxy else None)
    folder_path = Path(folder)
    write_report(run(probe, folder_path), folder_path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
