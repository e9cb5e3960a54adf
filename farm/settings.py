"""farm's own Scrapy project, and the environment's FARM_* values.

This is the only module that reads ``os.environ``: each ``FARM_*`` setting takes
its value from the environment variable of the same name, else its default
(farm.defaults, the one place defaults are written), and any of them can be
overridden per run with ``scrapy crawl boss -s NAME=value``. A value is kept as
given; farm.config reads and checks every one (a bad one is a one-line error naming
it), so nothing here can fail at import.
"""

import os

from farm import defaults


def _env(name, setting=None):
    """The environment variable ``name``, else the default of the setting it gives (itself, unless named)."""
    value = os.environ.get(name)
    return getattr(defaults, setting or name) if value is None or value == "" else value


BOT_NAME = "farm"
SPIDER_MODULES = ["farm.spiders"]
NEWSPIDER_MODULE = "farm.spiders"
# `scrapy crawl` checks farm's settings first (farm.commands.crawl)
COMMANDS_MODULE = "farm.commands"
# farm's scheduler, middlewares, extensions and pipeline (farm.addon), as any Scrapy project turns farm on
ADDONS = {"farm.addon.FarmAddon": 0}
EXTENSIONS = {"farm.extensions.lean.LeanProcess": 130}  # farm's own crawls run lean (farm.extensions.lean)

# --- farm -------------------------------------------------------------------

FARM_DB_URL = _env("FARM_DB_URL")
# Set: every process of a spider, on any machine, shares one request queue, one dupefilter
# and one pace per site through this Redis (farm.crawl.backends.redis); unset: each process queues its own.
FARM_REDIS_URL = _env("FARM_REDIS_URL")
# The prefix of every Redis key farm writes (one Redis may serve several farms).
FARM_REDIS_PREFIX = _env("FARM_REDIS_PREFIX")
# The work backend's class, as Scrapy names SCHEDULER_QUEUE; unset: the Redis one with
# FARM_REDIS_URL, else the local one (farm.crawl.backends).
FARM_WORK_BACKEND = _env("FARM_WORK_BACKEND")
# Seconds without a heartbeat in Redis after which a worker is taken for dead: its in-flight
# requests go back in the queue and its keywords to a survivor.
FARM_WORKER_TIMEOUT = _env("FARM_WORKER_TIMEOUT")
# Seconds a worker rides out a lost Redis (or database) before it closes, leases left partial.
FARM_OUTAGE_GRACE = _env("FARM_OUTAGE_GRACE")
# Seconds every MySQL/MariaDB call may wait on the server (to connect, each read, each write;
# migrations have no read deadline), and any call for a pooled connection: a server that
# stops answering is then an outage (a 503 from `farm api`), not a hang.
FARM_DB_TIMEOUT = _env("FARM_DB_TIMEOUT")
FARM_DB_POOL_TIMEOUT = _env("FARM_DB_POOL_TIMEOUT")
FARM_TIMEZONE = _env("FARM_TIMEZONE")
FARM_LEASE_TIMEOUT = _env("FARM_LEASE_TIMEOUT")
# Claims of a failed keyword per day, each at least FARM_RETRY_DELAY seconds after it failed.
FARM_MAX_RETRIES = _env("FARM_MAX_RETRIES")
FARM_RETRY_DELAY = _env("FARM_RETRY_DELAY")
# Claims in one day that may end in a site block before the keyword ends failed for the day.
FARM_MAX_BLOCKED_CLAIMS = _env("FARM_MAX_BLOCKED_CLAIMS")
FARM_CRAWLER_ID = _env("FARM_CRAWLER_ID")

FARM_BOSS_BASE_URL = _env("FARM_BOSS_BASE_URL")
FARM_QCWY_BASE_URL = _env("FARM_QCWY_BASE_URL")
FARM_ZHILIAN_BASE_URL = _env("FARM_ZHILIAN_BASE_URL")
FARM_BOSS_MAX_PAGES = _env("FARM_BOSS_MAX_PAGES")
FARM_QCWY_MAX_PAGES = _env("FARM_QCWY_MAX_PAGES")
FARM_ZHILIAN_MAX_PAGES = _env("FARM_ZHILIAN_MAX_PAGES")

# Requests per second to each site from one identity (0: no limit), each gap jittered
# by half either way (why these: farm.defaults). A site of a project's own is read
# from its FARM_<SITE>_* settings, or crawled politely (farm.defaults.SITE_RATE).
FARM_BOSS_RATE = _env("FARM_BOSS_RATE")
FARM_QCWY_RATE = _env("FARM_QCWY_RATE")
FARM_ZHILIAN_RATE = _env("FARM_ZHILIAN_RATE")
# Each rate is one identity's: each proxy of FARM_PROXIES (or this machine's own address) keeps it
# (farm.crawl.identities). A ceiling caps the sum of every identity's requests to a site, for every
# worker (0 or unset: none).
FARM_BOSS_CEILING = _env("FARM_BOSS_CEILING")
FARM_QCWY_CEILING = _env("FARM_QCWY_CEILING")
FARM_ZHILIAN_CEILING = _env("FARM_ZHILIAN_CEILING")

# Keywords one process holds at once; each keeps its pages flowing.
FARM_LEASES_IN_FLIGHT = _env("FARM_LEASES_IN_FLIGHT")
# Pages one process may have fetched without their progress recorded: what a
# kill -9 can cost at most, in pages fetched again.
FARM_PAGES_IN_FLIGHT = _env("FARM_PAGES_IN_FLIGHT")
# How often a crawl logs its progress line (seconds).
FARM_LOGSTATS_INTERVAL = _env("FARM_LOGSTATS_INTERVAL")
# How often a crawl turns stale leases (no heartbeat for FARM_LEASE_TIMEOUT) into partial.
FARM_REAP_INTERVAL = _env("FARM_REAP_INTERVAL")
# Site blocks and outages: retries of one page, and the gap between requests they push up to.
FARM_BLOCK_RETRIES = _env("FARM_BLOCK_RETRIES")
FARM_BLOCK_BASE_DELAY = _env("FARM_BLOCK_BASE_DELAY")
FARM_BLOCK_MAX_DELAY = _env("FARM_BLOCK_MAX_DELAY")
# The client farm's page requests pass for (farm.sessions): "chrome" sends them with the TLS and HTTP/2
# fingerprint of the newest Chrome curl_cffi knows (farm.sessions.handler), a target such as chrome146
# with that one's; "" with Scrapy's own client, which claims no browser. FARM_<SITE>_IMPERSONATE sets one site.
FARM_IMPERSONATE = os.environ.get("FARM_IMPERSONATE", defaults.FARM_IMPERSONATE)  # "" is a value: no impersonation
# A wall a browser can pass (a page whose JavaScript computes a cookie) is opened in headless Chromium:
# at most this many pages at once (0: never; walls are then blocks), the browser found on the PATH
# (chromium, chromium-browser, google-chrome) unless a path or name is given, each wall given this many
# seconds to grant its cookie, and a wall the browser could not pass not tried again for as many.
FARM_BROWSER_PAGES = _env("FARM_BROWSER_PAGES")
FARM_BROWSER_EXECUTABLE = _env("FARM_BROWSER_EXECUTABLE")
FARM_BROWSER_TIMEOUT = _env("FARM_BROWSER_TIMEOUT")
FARM_BROWSER_COOLDOWN = _env("FARM_BROWSER_COOLDOWN")
# A session the browser earned is carried on plain requests until the site refuses it, or it is this
# old (seconds) or has been sent this many times (0: no limit); then a new one is earned.
FARM_SESSION_MAX_AGE = _env("FARM_SESSION_MAX_AGE")
FARM_SESSION_MAX_USES = _env("FARM_SESSION_MAX_USES")
# Sessions of one site and proxy earned ahead at once, under way or ready, when the crawl uses them up faster
# than the browser earns one (0: none earned ahead; each is earned when the wall answers).
FARM_SESSIONS_AHEAD = _env("FARM_SESSIONS_AHEAD")
# Seconds in which a site answered nothing but refusals farm cannot pass (sliders, walls, answers it does
# not understand; at least 6 of them, no page between) before the crawl concludes that the site refuses it
# and ends, its keywords left partial (0: never conclude).
FARM_SITE_REFUSED_AFTER = _env("FARM_SITE_REFUSED_AFTER")
# Proxies for page requests, each an identity with its own pace (farm.crawl.proxies,
# farm.crawl.identities): a list, a comma-separated string, or the path of a file with one URL a line
# (scheme://[user:password@]host:port, http or https; `#` comments). Unset: no proxy. A proxy that
# draws a block is left out for FARM_PROXY_QUARANTINE seconds, doubled for blocks in a row (for
# every worker, with FARM_REDIS_URL); with none left the crawl waits. Passwords are masked wherever
# farm names a proxy.
FARM_PROXIES = _env("FARM_PROXIES")
FARM_PROXY_QUARANTINE = _env("FARM_PROXY_QUARANTINE")
# Prometheus metrics of each crawl (farm.extensions.metrics): the port (unset or 0: off),
# the address it listens on (127.0.0.1: this machine only; 0.0.0.0: every interface, see
# docs/operations.md), and how long (seconds) the endpoint may stay up after the crawl,
# waiting for one last scrape of the final counts (0: it closes with the crawl).
FARM_METRICS_PORT = _env("FARM_METRICS_PORT")
FARM_METRICS_HOST = _env("FARM_METRICS_HOST")
FARM_METRICS_LINGER = _env("FARM_METRICS_LINGER")
# With JOBDIR set (pause and resume): the longest, in seconds, a change (a keyword claimed,
# a page asked for or recorded) may wait before the checkpoint in JOBDIR holds it.
FARM_CHECKPOINT_INTERVAL = _env("FARM_CHECKPOINT_INTERVAL")
# Postings are upserted in batches of this many, or after this many seconds.
FARM_SQL_BATCH_SIZE = _env("FARM_SQL_BATCH_SIZE")
FARM_SQL_FLUSH_INTERVAL = _env("FARM_SQL_FLUSH_INTERVAL")

# --- farm api (the keyword API for crawlers that are not Scrapy) -------------

# The bearer token every call to `farm api` must carry; unset, the API serves 127.0.0.1 only.
FARM_API_TOKEN = _env("FARM_API_TOKEN")
# The largest request body `farm api` reads, in bytes; a larger one gets 413.
FARM_API_MAX_BODY = _env("FARM_API_MAX_BODY")
# Seconds a client is told to wait (Retry-After) when the database is unavailable (503).
FARM_API_RETRY_AFTER = _env("FARM_API_RETRY_AFTER")
# Seconds a request's head and body may take to arrive whole; a slower client is cut off (408).
FARM_API_READ_TIMEOUT = _env("FARM_API_READ_TIMEOUT")
# The report's salary figures are of monthly pay alone; 1 converts pay by the day, the hour and the
# year into a month's with these factors (a year's divided by its months, ·14薪, or 12), shown in the report.
FARM_SALARY_CONVERT = _env("FARM_SALARY_CONVERT")
FARM_SALARY_DAYS_A_MONTH = _env("FARM_SALARY_DAYS_A_MONTH")
FARM_SALARY_HOURS_A_MONTH = _env("FARM_SALARY_HOURS_A_MONTH")

# --- farm check (docs/checks.md) ---------------------------------------------

FARM_CHECK_HISTORY_DAYS = _env("FARM_CHECK_HISTORY_DAYS")
FARM_CHECK_POSTINGS_DROP = _env("FARM_CHECK_POSTINGS_DROP")
FARM_CHECK_MIN_POSTINGS = _env("FARM_CHECK_MIN_POSTINGS")
FARM_CHECK_COVERAGE_DROP = _env("FARM_CHECK_COVERAGE_DROP")
FARM_CHECK_MIN_COVERAGE = _env("FARM_CHECK_MIN_COVERAGE")
FARM_CHECK_REFUSALS_RISE = _env("FARM_CHECK_REFUSALS_RISE")
FARM_CHECK_MAX_REFUSALS = _env("FARM_CHECK_MAX_REFUSALS")
FARM_CHECK_RUN_HOURS = _env("FARM_CHECK_RUN_HOURS")
# apprise URLs, separated by spaces, that `farm check` sends its failures to
FARM_ALERT_URLS = _env("FARM_ALERT_URLS")

# --- scrapy -----------------------------------------------------------------

ROBOTSTXT_OBEY = False
# Each spider crawls one site, at the pace of FARM_<SITE>_RATE (kept by the farm
# scheduler, not DOWNLOAD_DELAY): a few requests at once are plenty for a real site.
CONCURRENT_REQUESTS = _env("FARM_CONCURRENT_REQUESTS", "CONCURRENT_REQUESTS")
CONCURRENT_REQUESTS_PER_DOMAIN = CONCURRENT_REQUESTS
DOWNLOAD_DELAY = _env("FARM_DOWNLOAD_DELAY", "DOWNLOAD_DELAY")
# Scrapy (2.13 on, asyncio) starts CONCURRENT_ITEMS + 1 tasks for every response's
# output, however few items it holds: at Scrapy's 100, a fifth of a fast crawl's CPU
# (bench/crawl_bench.py). farm's pipeline does not wait on anything; 8 still lets a
# user's waiting pipeline overlap the items of a page.
CONCURRENT_ITEMS = _env("FARM_CONCURRENT_ITEMS", "CONCURRENT_ITEMS")
DOWNLOAD_TIMEOUT = 30
COOKIES_ENABLED = True
TELNETCONSOLE_ENABLED = False
REMOTE_CONTROL_ENABLED = False
LOG_LEVEL = _env("FARM_LOG_LEVEL", "LOG_LEVEL")
# No USER_AGENT: a page request goes out as the crawl's identity (farm.sessions.identity), and Scrapy's own
# client (FARM_IMPERSONATE="") says it is Scrapy, as nothing it sends is a browser's.

# farm's page requests are retried by farm.middlewares.blocks, with the site's back-off:
# 403/429/503 are blocks, these codes and RETRY_EXCEPTIONS site trouble. Scrapy's own
# RetryMiddleware keeps retrying any other request.
RETRY_ENABLED = True
RETRY_TIMES = _env("FARM_RETRY_TIMES", "RETRY_TIMES")
RETRY_HTTP_CODES = [500, 502, 504, 522, 524, 408]

FEED_EXPORT_ENCODING = "utf-8"
