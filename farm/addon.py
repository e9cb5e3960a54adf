"""farm as a Scrapy add-on: ``ADDONS = {"farm.addon.FarmAddon": 0}`` turns farm on in a Scrapy project.

The add-on sets, at Scrapy's "addon" priority, everything a farm crawl is made of:
the scheduler, the downloader middlewares, the extensions, the postings pipeline,
farm's tuning of a few Scrapy settings and every ``FARM_*`` setting's default
(farm.settings). A project's own settings, at "project" priority or above, win:
a setting the project gives keeps the project's value, and a component the project
lists keeps the project's order (``None`` turns one of farm's off). The project's
own middlewares, extensions and pipelines stay in place beside farm's.

``FARM_REDIS_URL`` picks the Redis backend, as in farm's own project (the scheduler
reads it). farm's own settings module (farm.settings) turns farm on the same way.
"""

from scrapy.settings import BaseSettings, get_settings_priority

from farm import settings as defaults

SCHEDULER = "farm.crawl.scheduler.FarmScheduler"

DOWNLOADER_MIDDLEWARES = {
    "farm.crawl.leases.KeywordLeaseMiddleware": 50,
    # after the lease middleware, before RetryMiddleware (550): every attempt, retries too, is signed anew
    "farm.middlewares.signing.RequestSigningMiddleware": 540,
    "farm.middlewares.blocks.SiteBlockMiddleware": 560,
    # after RedirectMiddleware (600) on the way back: a wall's redirect is seen before it is followed
    "farm.sessions.middleware.SessionMiddleware": 650,
}
# Requests that carry meta["impersonate"] (farm.sessions) go out through curl_cffi with a browser's
# fingerprint; the others through Scrapy's own HTTP/1.1 handler, which this one falls back to.
DOWNLOAD_HANDLERS = {
    "http": "scrapy_impersonate.ImpersonateDownloadHandler",
    "https": "scrapy_impersonate.ImpersonateDownloadHandler",
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
    "farm.extensions.lean.LeanProcess": 130,
    # NotConfigured unless JOBDIR is set: pause and resume
    "farm.extensions.checkpoint.JobCheckpoint": 140,
    # the run table: a row a crawl (farm.runs), what `farm check` reads
    "farm.extensions.runs.RunLog": 150,
}
COMPONENTS = {
    "DOWNLOADER_MIDDLEWARES": DOWNLOADER_MIDDLEWARES,
    "ITEM_PIPELINES": ITEM_PIPELINES,
    "EXTENSIONS": EXTENSIONS,
    "DOWNLOAD_HANDLERS": DOWNLOAD_HANDLERS,
}

# Scrapy's settings as farm tunes them; farm.settings holds their values (some from FARM_*
# environment variables, checked by farm.config).
TUNED = (
    "CONCURRENT_REQUESTS",
    "CONCURRENT_REQUESTS_PER_DOMAIN",
    "CONCURRENT_ITEMS",
    "DOWNLOAD_DELAY",
    "DOWNLOAD_TIMEOUT",
    "RETRY_TIMES",
    "RETRY_HTTP_CODES",
)

PRIORITY = "addon"


def farm_defaults() -> dict:
    """Every ``FARM_*`` setting of farm.settings, with its default (or its environment variable)."""
    return {name: getattr(defaults, name) for name in dir(defaults) if name.startswith("FARM_")}


class FarmAddon:
    """farm's scheduler, middlewares, extensions, pipeline and settings, under a project's own."""

    def update_settings(self, settings: BaseSettings) -> None:
        settings.update(farm_defaults(), priority=PRIORITY)
        settings.update({name: getattr(defaults, name) for name in TUNED}, priority=PRIORITY)
        settings.set("SCHEDULER", SCHEDULER, priority=PRIORITY)
        for name, components in COMPONENTS.items():
            merge_components(settings, name, components)


def merge_components(settings: BaseSettings, name: str, components: dict) -> None:
    """farm's ``components`` added to the component dict ``name`` at add-on priority: the
    project's own entries stay, and one of farm's that the project lists keeps the project's order."""
    current = settings[name]
    if isinstance(current, BaseSettings):  # Scrapy keeps a component dict with a priority per entry
        current.update(components, priority=PRIORITY)
        return
    # a plain dict (settings built by hand): its entries are the project's
    merged = {**components, **(current or {})}
    settings.set(name, merged, priority=max(settings.getpriority(name) or 0, get_settings_priority(PRIORITY)))
