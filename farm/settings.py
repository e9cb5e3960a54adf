"""farm's own Scrapy project, with every farm setting's value from the environment.

Each setting is declared once, in farm.config (its type, default, environment variable and what it
does; docs/settings.md lists them): here each takes its environment variable's value, as given, else
its default (``farm.config.environment()``), and any can be overridden per run with
``scrapy crawl boss -s NAME=value``. Nothing is parsed here: farm.config reads and checks every one
when a command starts (a bad one is a one-line error naming it), so nothing here can fail at import.
"""

from farm.config import environment
from farm.sites import spider_modules

BOT_NAME = "farm"
# each registered site's spider, in its package (farm/sites/<site>/spider.py); the add-on adds those
# of the site packages FARM_SITE_PACKAGES names
SPIDER_MODULES = spider_modules()
NEWSPIDER_MODULE = "farm.sites"
# `scrapy crawl` checks farm's settings first (farm.commands.crawl)
COMMANDS_MODULE = "farm.commands"
# farm's scheduler, middlewares, extensions and pipeline (farm.addon), as any Scrapy project turns farm on
ADDONS = {"farm.addon.FarmAddon": 0}
EXTENSIONS = {"farm.extensions.lean.LeanProcess": 130}  # farm's own crawls run lean (farm.extensions.lean)

# every FARM_* setting, and the Scrapy settings farm tunes from FARM_* variables (CONCURRENT_REQUESTS
# from FARM_CONCURRENT_REQUESTS, DOWNLOAD_DELAY, CONCURRENT_ITEMS, RETRY_TIMES, LOG_LEVEL)
globals().update(environment())

# --- scrapy -----------------------------------------------------------------

ROBOTSTXT_OBEY = False
# each spider crawls one site (FARM_CONCURRENT_REQUESTS in farm.config)
CONCURRENT_REQUESTS_PER_DOMAIN = globals()["CONCURRENT_REQUESTS"]
DOWNLOAD_TIMEOUT = 30
COOKIES_ENABLED = True
TELNETCONSOLE_ENABLED = False
REMOTE_CONTROL_ENABLED = False
# No USER_AGENT: a page request goes out as the crawl's identity (farm.sessions.identity), and Scrapy's own
# client (FARM_IMPERSONATE="") says it is Scrapy, as nothing it sends is a browser's.

# farm's page requests are retried by farm.middlewares.blocks, with the site's back-off:
# 403/429/503 are blocks, these codes and RETRY_EXCEPTIONS site trouble. Scrapy's own
# RetryMiddleware keeps retrying any other request (RETRY_TIMES, from FARM_RETRY_TIMES).
RETRY_ENABLED = True
RETRY_HTTP_CODES = [500, 502, 504, 522, 524, 408]

FEED_EXPORT_ENCODING = "utf-8"
