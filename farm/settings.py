"""Every farm setting and its default.

This is the only module that reads ``os.environ``: each ``FARM_*`` setting takes
its default from the environment variable of the same name, and any of them can
be overridden per run with ``scrapy crawl boss -s NAME=value``. A value is kept as
given; farm.config reads and checks every one (a bad one is a one-line error naming
it), so nothing here can fail at import.
"""

import os
import socket


def _env(name, default):
    value = os.environ.get(name)
    return default if value is None or value == "" else value


BOT_NAME = "farm"
SPIDER_MODULES = ["farm.spiders"]
NEWSPIDER_MODULE = "farm.spiders"
# `scrapy crawl` checks farm's settings first (farm.commands.crawl)
COMMANDS_MODULE = "farm.commands"
# farm's scheduler, middlewares, extensions and pipeline (farm.addon), as any Scrapy project turns farm on
ADDONS = {"farm.addon.FarmAddon": 0}

# --- farm -------------------------------------------------------------------

FARM_DB_URL = _env("FARM_DB_URL", "sqlite:///farm.db")
# Set: every process of a spider, on any machine, shares one request queue, one dupefilter
# and one pace per site through this Redis (farm.crawl.backends.redis); unset: each process queues its own.
FARM_REDIS_URL = _env("FARM_REDIS_URL", "")
# The prefix of every Redis key farm writes (one Redis may serve several farms).
FARM_REDIS_PREFIX = _env("FARM_REDIS_PREFIX", "farm")
# Seconds without a heartbeat in Redis after which a worker is taken for dead: its in-flight
# requests go back in the queue and its keywords to a survivor.
FARM_WORKER_TIMEOUT = _env("FARM_WORKER_TIMEOUT", 30)
# Seconds a worker rides out a lost Redis (or database) before it closes, leases left partial.
FARM_OUTAGE_GRACE = _env("FARM_OUTAGE_GRACE", 60)
# Seconds every MySQL/MariaDB call may wait on the server (to connect, each read, each write;
# migrations have no read deadline), and any call for a pooled connection: a server that
# stops answering is then an outage (a 503 from `farm api`), not a hang.
FARM_DB_TIMEOUT = _env("FARM_DB_TIMEOUT", 5)
FARM_DB_POOL_TIMEOUT = _env("FARM_DB_POOL_TIMEOUT", 5)
FARM_TIMEZONE = _env("FARM_TIMEZONE", "Asia/Shanghai")
FARM_LEASE_TIMEOUT = _env("FARM_LEASE_TIMEOUT", 1800)
# Claims of a failed keyword per day, each at least FARM_RETRY_DELAY seconds after it failed.
FARM_MAX_RETRIES = _env("FARM_MAX_RETRIES", 3)
FARM_RETRY_DELAY = _env("FARM_RETRY_DELAY", 600)
# Claims in one day that may end in a site block before the keyword ends failed for the day.
FARM_MAX_BLOCKED_CLAIMS = _env("FARM_MAX_BLOCKED_CLAIMS", 5)
FARM_CRAWLER_ID = _env("FARM_CRAWLER_ID", f"{socket.gethostname()}:{os.getpid()}")

FARM_BOSS_BASE_URL = _env("FARM_BOSS_BASE_URL", "https://www.zhipin.com")
FARM_QCWY_BASE_URL = _env("FARM_QCWY_BASE_URL", "https://we.51job.com")
FARM_ZHILIAN_BASE_URL = _env("FARM_ZHILIAN_BASE_URL", "https://www.zhaopin.com")
FARM_BOSS_MAX_PAGES = _env("FARM_BOSS_MAX_PAGES", 3)
FARM_QCWY_MAX_PAGES = _env("FARM_QCWY_MAX_PAGES", 50)
FARM_ZHILIAN_MAX_PAGES = _env("FARM_ZHILIAN_MAX_PAGES", 15)

# Requests per second to each site from one crawler (0: no limit), each gap jittered
# by half either way. Polite enough to crawl for hours: what public crawlers of these
# sites report the sites tolerate from one IP (docs/sites.md). Boss is the strictest
# (its stoken and captcha walls come within minutes at a few requests per second),
# 51job's Aliyun WAF throttles bursts, zhilian's SSR pages are heavy HTML.
# The demo, the tests and the benchmarks set 0 for the sandbox.
FARM_BOSS_RATE = _env("FARM_BOSS_RATE", 0.2)
FARM_QCWY_RATE = _env("FARM_QCWY_RATE", 0.5)
FARM_ZHILIAN_RATE = _env("FARM_ZHILIAN_RATE", 0.33)

# Keywords one process holds at once; each keeps its pages flowing.
FARM_LEASES_IN_FLIGHT = _env("FARM_LEASES_IN_FLIGHT", 8)
# Pages one process may have fetched without their progress recorded: what a
# kill -9 can cost at most, in pages fetched again.
FARM_PAGES_IN_FLIGHT = _env("FARM_PAGES_IN_FLIGHT", 32)
# How often a crawl logs its progress line (seconds).
FARM_LOGSTATS_INTERVAL = _env("FARM_LOGSTATS_INTERVAL", 60)
# How often a crawl turns stale leases (no heartbeat for FARM_LEASE_TIMEOUT) into partial.
FARM_REAP_INTERVAL = _env("FARM_REAP_INTERVAL", 60)
# Site blocks and outages: retries of one page, and the gap between requests they push up to.
FARM_BLOCK_RETRIES = _env("FARM_BLOCK_RETRIES", 5)
FARM_BLOCK_BASE_DELAY = _env("FARM_BLOCK_BASE_DELAY", 2.0)
FARM_BLOCK_MAX_DELAY = _env("FARM_BLOCK_MAX_DELAY", 60.0)
# The client farm's page requests pass for (farm.sessions): "chrome" sends them with the TLS and HTTP/2
# fingerprint and headers of the newest Chrome curl_cffi knows (scrapy-impersonate's download handler), a
# target such as chrome146 with that one's; "" with Scrapy's own client. FARM_<SITE>_IMPERSONATE sets one site.
FARM_IMPERSONATE = _env("FARM_IMPERSONATE", "chrome")
# A wall a browser can pass (a page whose JavaScript computes a cookie) is opened in headless Chromium:
# at most this many pages at once (0: never; walls are then blocks), the browser found on the PATH
# (chromium, chromium-browser, google-chrome) unless a path or name is given, each wall given this many
# seconds to grant its cookie, and a wall the browser could not pass not tried again for as many.
FARM_BROWSER_PAGES = _env("FARM_BROWSER_PAGES", 2)
FARM_BROWSER_EXECUTABLE = _env("FARM_BROWSER_EXECUTABLE", "")
FARM_BROWSER_TIMEOUT = _env("FARM_BROWSER_TIMEOUT", 30)
FARM_BROWSER_COOLDOWN = _env("FARM_BROWSER_COOLDOWN", 60)
# A session the browser earned is carried on plain requests until the site refuses it, or it is this
# old (seconds) or has been sent this many times (0: no limit); then a new one is earned.
FARM_SESSION_MAX_AGE = _env("FARM_SESSION_MAX_AGE", 1200)
FARM_SESSION_MAX_USES = _env("FARM_SESSION_MAX_USES", 0)
# Seconds in which a site answered nothing but refusals farm cannot pass (sliders, walls, answers it does
# not understand; at least 6 of them, no page between) before the crawl concludes that the site refuses it
# and ends, its keywords left partial (0: never conclude).
FARM_SITE_REFUSED_AFTER = _env("FARM_SITE_REFUSED_AFTER", 180)
# Proxies for page requests, taken in turn (farm.crawl.proxies): a list, a comma-separated string, or
# the path of a file with one URL a line (scheme://[user:password@]host:port, http or https;
# `#` comments). Unset: no proxy. A proxy that draws a block is left out for
# FARM_PROXY_QUARANTINE seconds (for every worker, with FARM_REDIS_URL); with none left the
# crawl waits. Passwords are masked wherever farm names a proxy.
FARM_PROXIES = _env("FARM_PROXIES", "")
FARM_PROXY_QUARANTINE = _env("FARM_PROXY_QUARANTINE", 1800)
# Prometheus metrics of each crawl (farm.extensions.metrics): the port (unset or 0: off),
# the address it listens on (127.0.0.1: this machine only; 0.0.0.0: every interface, see
# docs/operations.md), and how long (seconds) the endpoint may stay up after the crawl,
# waiting for one last scrape of the final counts (0: it closes with the crawl).
FARM_METRICS_PORT = _env("FARM_METRICS_PORT", 0)
FARM_METRICS_HOST = _env("FARM_METRICS_HOST", "127.0.0.1")
FARM_METRICS_LINGER = _env("FARM_METRICS_LINGER", 0)
# With JOBDIR set (pause and resume): the longest, in seconds, a change (a keyword claimed,
# a page asked for or recorded) may wait before the checkpoint in JOBDIR holds it.
FARM_CHECKPOINT_INTERVAL = _env("FARM_CHECKPOINT_INTERVAL", 1.0)
# Postings are upserted in batches of this many, or after this many seconds.
FARM_SQL_BATCH_SIZE = _env("FARM_SQL_BATCH_SIZE", 200)
FARM_SQL_FLUSH_INTERVAL = _env("FARM_SQL_FLUSH_INTERVAL", 0.5)

# --- farm api (the keyword API for crawlers that are not Scrapy) -------------

# The bearer token every call to `farm api` must carry; unset, the API serves 127.0.0.1 only.
FARM_API_TOKEN = _env("FARM_API_TOKEN", "")
# The largest request body `farm api` reads, in bytes; a larger one gets 413.
FARM_API_MAX_BODY = _env("FARM_API_MAX_BODY", 1_048_576)
# Seconds a client is told to wait (Retry-After) when the database is unavailable (503).
FARM_API_RETRY_AFTER = _env("FARM_API_RETRY_AFTER", 5)
# Seconds a request's head and body may take to arrive whole; a slower client is cut off (408).
FARM_API_READ_TIMEOUT = _env("FARM_API_READ_TIMEOUT", 10)
# The report's salary figures are of monthly pay alone; 1 converts pay by the day, the hour and the
# year into a month's with these factors (a year's divided by its months, ·14薪, or 12), shown in the report.
FARM_SALARY_CONVERT = _env("FARM_SALARY_CONVERT", 0)
FARM_SALARY_DAYS_A_MONTH = _env("FARM_SALARY_DAYS_A_MONTH", 21.75)
FARM_SALARY_HOURS_A_MONTH = _env("FARM_SALARY_HOURS_A_MONTH", 174)

# --- scrapy -----------------------------------------------------------------

ROBOTSTXT_OBEY = False
# Each spider crawls one site, at the pace of FARM_<SITE>_RATE (kept by the farm
# scheduler, not DOWNLOAD_DELAY): a few requests at once are plenty for a real site.
CONCURRENT_REQUESTS = _env("FARM_CONCURRENT_REQUESTS", 4)
CONCURRENT_REQUESTS_PER_DOMAIN = CONCURRENT_REQUESTS
DOWNLOAD_DELAY = _env("FARM_DOWNLOAD_DELAY", 0)
# Scrapy (2.13 on, asyncio) starts CONCURRENT_ITEMS + 1 tasks for every response's
# output, however few items it holds: at Scrapy's 100, a fifth of a fast crawl's CPU
# (bench/crawl_bench.py). farm's pipeline does not wait on anything; 8 still lets a
# user's waiting pipeline overlap the items of a page.
CONCURRENT_ITEMS = _env("FARM_CONCURRENT_ITEMS", 8)
DOWNLOAD_TIMEOUT = 30
COOKIES_ENABLED = True
TELNETCONSOLE_ENABLED = False
REMOTE_CONTROL_ENABLED = False
LOG_LEVEL = _env("FARM_LOG_LEVEL", "INFO")
USER_AGENT = (
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36"
)

# farm's page requests are retried by farm.middlewares.blocks, with the site's back-off:
# 403/429/503 are blocks, these codes and RETRY_EXCEPTIONS site trouble. Scrapy's own
# RetryMiddleware keeps retrying any other request.
RETRY_ENABLED = True
RETRY_TIMES = _env("FARM_RETRY_TIMES", 2)
RETRY_HTTP_CODES = [500, 502, 504, 522, 524, 408]

FEED_EXPORT_ENCODING = "utf-8"
