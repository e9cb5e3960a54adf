"""`scrapy crawl`, with farm's settings checked before anything starts.

A bad setting, or a JOBDIR that cannot be created, is one line on stderr and exit status 2,
before Scrapy logs a thing (farm.config, farm.crawl.starting.make_jobdir). A crawl that
cannot start once running (farm.errors.FarmStartError: the database or Redis unreachable,
a JOBDIR that cannot be kept) logs its one line, and the add-on keeps asyncio from printing
it again with its traceback, in this project as in any other (farm.startlog). Under
Twisted's CrawlerProcess (FORCE_CRAWLER_PROCESS), which prints an unhandled error past
Python's logging, this command takes the error.

A crawl that ended on an outage exits 1, so that cron, scrapyd and systemd see a failed run:
it closed on the database or Redis lost past FARM_OUTAGE_GRACE, or its close could not give
its keywords back (see docs/operations.md).
"""

import sys
from importlib import import_module

from scrapy.commands.crawl import Command as ScrapyCrawl
from twisted.internet.defer import Deferred

from farm.config import FarmConfig
from farm.errors import SettingError
from farm.startlog import is_start_error

# the exit status of a command refused for a bad setting, as for a bad option
SETTING_EXIT = 2
# the reasons a crawl closes on when the database or Redis failed it (farm.crawl.parts)
OUTAGE_REASONS = ("farm_db_error", "farm_redis_error", "farm_backend_error")
# Scrapy's HTTP/1.1 download handler, under farm's own (farm.sessions.handler): its TLS modules make
# deprecated aliases, each of which reads every frame of the stack it is imported under
# (inspect.stack()); imported by the engine, dozens of frames deep, that is some 0.12 s of CPU
# a crawl, and some 0.03 s imported here, a few frames deep
HTTP_HANDLER_MODULE = "scrapy.core.downloader.handlers.http11"


class Command(ScrapyCrawl):
    def process_options(self, args, opts) -> None:
        # here, not at import: Scrapy imports every command of the project for any one (`scrapy list`)
        from farm.crawl.starting import make_jobdir

        super().process_options(args, opts)  # -s NAME=value applied
        try:
            assert self.settings is not None  # Scrapy's command has its settings before it parses options
            FarmConfig.from_settings(self.settings)
            make_jobdir(self.settings)
        except SettingError as exc:
            sys.stderr.write(f"farm: {exc}\n")
            sys.exit(SETTING_EXIT)

    def run(self, args, opts) -> None:
        if len(args) != 1:
            return super().run(args, opts)  # Scrapy's usage errors
        assert self.crawler_process
        import_module(HTTP_HANDLER_MODULE)  # the reactor is installed: importing it starts nothing
        crawler = self._create_crawler(args[0])
        started = self.crawler_process.crawl(crawler, **opts.spargs)
        if isinstance(started, Deferred):  # Twisted's CrawlerProcess prints an unhandled error itself
            started.addErrback(lambda failure: None if is_start_error(failure.value) else failure)
        self.crawler_process.start()
        if self.crawler_process.bootstrap_failed or ended_on_outage(crawler.stats):
            self.exitcode = 1


def ended_on_outage(stats) -> bool:
    """Whether the crawl ended on a database or work backend (Redis) error: it closed on one, or its close could not
    give its keywords back (they stay held until their lease expires or a worker adopts them)."""
    return stats.get_value("finish_reason") in OUTAGE_REASONS or bool(stats.get_value("farm/lease/release_lost"))
