"""farm as a Scrapy add-on: ``ADDONS = {"farm.addon.FarmAddon": 0}`` turns farm on in a Scrapy project.

The add-on sets, at Scrapy's "addon" priority, everything a farm crawl is made of:
the scheduler, the downloader middlewares its spider uses, the extensions, the postings
pipeline, farm's tuning of a few Scrapy settings (as farm's own project, farm.settings, has
them) and every ``FARM_*`` setting's value: its environment variable's, else its default
(farm.config). A project's own settings, at "project" priority or above, win: a setting the
project gives keeps the project's value (a tuned one it sets in its settings module or its
spider is named in a warning), and a component the project lists keeps the
project's order (``None`` turns one of farm's off). The project's own middlewares,
extensions and pipelines stay in place beside farm's: each of farm's entries is added at
add-on priority, and Scrapy keeps a priority per entry of a component dict.

Before Scrapy builds a crawler, the add-on has farm's start-up errors printed as their
one line alone (farm.startlog), in any project. It changes nothing else in the process:
``farm.extensions.lean.LeanProcess`` runs only where a project lists it (farm's own does).

``FARM_REDIS_URL`` picks the Redis backend, as in farm's own project (the scheduler
reads it). farm's own settings module (farm.settings) turns farm on the same way.
"""

import logging

from scrapy.settings import BaseSettings, get_settings_priority

from farm import settings as farm_project
from farm.config import environment
from farm.config import read as read_setting
from farm.middlewares.signing import signs
from farm.sites import get, register_packages
from farm.startlog import quiet_start_errors
from farm.suffixes import use_bundled_suffix_list

logger = logging.getLogger(__name__)

SCHEDULER = "farm.crawl.scheduler.FarmScheduler"
# Scrapy's remote control (in EXTENSIONS_BASE): Scrapy imports every listed extension, even one
# listed as None, before it reads REMOTE_CONTROL_ENABLED, and this one imports aiohttp's server,
# some 80 ms of a crawl's start; where it is off, it is taken out of the list
REMOTE_CONTROL = "scrapy.extensions.remote_control.RemoteControl"
SIGNING = "farm.middlewares.signing.RequestSigningMiddleware"

DOWNLOADER_MIDDLEWARES = {
    "farm.crawl.leases.KeywordLeaseMiddleware": 50,
    # after the lease middleware, before RetryMiddleware (550): every attempt, retries too, is signed
    # anew; only for a spider that signs its requests (qcwy)
    SIGNING: 540,
    "farm.middlewares.blocks.SiteBlockMiddleware": 560,
    # after RedirectMiddleware (600) on the way back: a wall's redirect is seen before it is followed
    "farm.sessions.middleware.SessionMiddleware": 650,
}
# Requests that carry meta["impersonate"] (farm.sessions) go out through curl_cffi with a browser's
# fingerprint and Chrome's headers of their kind, over connections kept per identity as Chrome keeps them
# (ChromeRequestsHandler sends each on a connection of its own); the others through Scrapy's own HTTP/1.1
# handler, which this one falls back to.
DOWNLOAD_HANDLERS = {
    "http": "farm.sessions.handler.KeptConnectionsHandler",
    "https": "farm.sessions.handler.KeptConnectionsHandler",
}
ITEM_PIPELINES = {
    "farm.pipelines.sql.SqlPostingsPipeline": 300,
}
EXTENSIONS = {
    # farm.extensions.logstats.FarmLogStats logs the crawl's progress instead
    "scrapy.extensions.logstats.LogStats": None,
    # NotConfigured unless FARM_METRICS_PORT is set; first of farm's, so that a port in use
    # stops the crawl before anything else of farm's has started
    "farm.extensions.metrics.FarmMetrics": -20,
    # the crawl's parts: before Scrapy's own (0), as building them spawns the state writer
    # process, and the writer's third of a second to start overlaps theirs
    "farm.crawl.parts.CrawlParts": -10,
    "farm.extensions.reaper.LeaseReaper": 110,
    "farm.extensions.logstats.FarmLogStats": 120,
    # NotConfigured unless JOBDIR is set: pause and resume
    "farm.extensions.checkpoint.JobCheckpoint": 140,
    # the run table: a row a crawl (farm.runs), what `farm check` reads
    "farm.extensions.runs.RunLog": 150,
    # after RunLog: the walls passed written into the row RunLog opened, as they are passed
    "farm.extensions.walls.WallNotes": 151,
}
COMPONENTS = {
    "DOWNLOADER_MIDDLEWARES": DOWNLOADER_MIDDLEWARES,
    "ITEM_PIPELINES": ITEM_PIPELINES,
    "EXTENSIONS": EXTENSIONS,
    "DOWNLOAD_HANDLERS": DOWNLOAD_HANDLERS,
}

# Scrapy's settings as farm tunes them, each with how Scrapy reads it; farm's own project (farm.settings)
# holds their values (some from FARM_* environment variables, checked by farm.config).
TUNED = {
    "CONCURRENT_REQUESTS": "getint",
    "CONCURRENT_REQUESTS_PER_DOMAIN": "getint",
    "CONCURRENT_ITEMS": "getint",
    "DOWNLOAD_DELAY": "getfloat",
    "DOWNLOAD_TIMEOUT": "getfloat",
    "RETRY_TIMES": "getint",
    "RETRY_HTTP_CODES": "getlist",
}

PRIORITY = "addon"


def farm_defaults() -> dict:
    """Every ``FARM_*`` setting, with its environment variable's value, else its default (farm.config)."""
    return {name: value for name, value in environment().items() if name.startswith("FARM_")}


class FarmAddon:
    """farm's scheduler, middlewares, extensions, pipeline and settings, under a project's own."""

    def __init__(self, spidercls: type | None = None):
        self.spidercls = spidercls  # the crawl's spider; None: every middleware of farm's

    @classmethod
    def from_crawler(cls, crawler) -> "FarmAddon":
        return cls(crawler.spidercls)

    @classmethod
    def update_pre_crawler_settings(cls, settings: BaseSettings) -> None:
        """Before any crawler exists (Scrapy calls it as it makes its crawler process): farm's
        start-up errors are their one line from here on (farm.startlog), the public suffix list is
        tldextract's bundled one (farm.suffixes), and the site packages of FARM_SITE_PACKAGES are
        registered, their spiders found where Scrapy looks (SPIDER_MODULES)."""
        quiet_start_errors()
        use_bundled_suffix_list()
        add_site_packages(settings)

    def update_settings(self, settings: BaseSettings) -> None:
        use_bundled_suffix_list()  # a crawler made by hand skips update_pre_crawler_settings
        settings.update(farm_defaults(), priority=PRIORITY)
        tune(settings)
        settings.set("SCHEDULER", SCHEDULER, priority=PRIORITY)
        # each entry at add-on priority, under the project's own (Scrapy keeps a priority per entry of
        # a component dict); named by path, not loaded: loading farm's components would install
        # Twisted's default reactor before Scrapy installs the one the settings name
        for name, components in self.components().items():
            per_entry(settings, name).update(components, priority=PRIORITY)
        if not settings.getbool("REMOTE_CONTROL_ENABLED"):
            unlist_remote_control(settings)

    def components(self) -> dict[str, dict]:
        """farm's components for this crawl: the signing middleware only for a spider that signs."""
        middlewares = dict(DOWNLOADER_MIDDLEWARES)
        if self.spidercls is not None and not signs(self.spidercls):
            del middlewares[SIGNING]
        return {**COMPONENTS, "DOWNLOADER_MIDDLEWARES": middlewares}


def add_site_packages(settings: BaseSettings) -> None:
    """Register the site packages FARM_SITE_PACKAGES names (farm.sites) and add their spiders' modules to
    SPIDER_MODULES, at the priority the project gave it."""
    modules = [
        module
        for name in register_packages(read_setting(settings, "site_packages"))
        if (module := get(name).spider_module) is not None
    ]
    listed = settings.getlist("SPIDER_MODULES")
    added = [module for module in modules if module not in listed]
    if added:
        settings.set("SPIDER_MODULES", [*listed, *added], priority=settings.getpriority("SPIDER_MODULES") or 0)


def per_entry(settings: BaseSettings, name: str) -> BaseSettings:
    """The dict setting ``name`` as Scrapy's Settings keep one: a BaseSettings, a priority per entry."""
    value = settings[name]
    if not isinstance(value, BaseSettings):  # a plain BaseSettings (built by hand) keeps plain dicts
        priority = settings.getpriority(name) or 0
        value = BaseSettings(value or {}, priority)
        settings.set(name, value, priority)
    return value


def unlist_remote_control(settings: BaseSettings) -> None:
    """Scrapy's remote control, switched off, out of EXTENSIONS_BASE: never imported (a project that sets
    EXTENSIONS_BASE itself keeps its own)."""
    base = settings["EXTENSIONS_BASE"]
    if base is not None and REMOTE_CONTROL in base:
        kept = {name: order for name, order in dict(base).items() if name != REMOTE_CONTROL}
        settings.set("EXTENSIONS_BASE", kept, priority=PRIORITY)


def tune(settings: BaseSettings) -> None:
    """farm's tuning at add-on priority; one warning line for each the project's settings module or
    spider sets otherwise (a value given with ``-s`` is taken as meant)."""
    addon, cmdline = get_settings_priority(PRIORITY), get_settings_priority("cmdline")
    farms = BaseSettings({name: getattr(farm_project, name) for name in TUNED}, priority=PRIORITY)
    for name, read in TUNED.items():
        settings.set(name, farms[name], priority=PRIORITY)
        projects = addon < (settings.getpriority(name) or 0) < cmdline
        if projects and _read(settings, name, read) != _read(farms, name, read):
            logger.warning(
                "farm: %s=%r of the project's settings is used, not farm's tuning %r (docs/addon.md)",
                name,
                settings[name],
                farms[name],
            )


def _read(settings: BaseSettings, name: str, read: str):
    """The setting as Scrapy reads it (None where it cannot be read: Scrapy will say so)."""
    try:
        value = getattr(settings, read)(name)
        return sorted(int(code) for code in value) if read == "getlist" else value
    except (TypeError, ValueError):
        return None
