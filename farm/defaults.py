"""Every farm setting's default, written once (as scrapy-redis keeps its ``defaults.py``).

farm.settings gives each the value of its environment variable over it; farm.config reads each
into its typed field (what each means and takes: there, and docs/settings.md). Plain values: this
module imports nothing of farm's and reads no environment variable.
"""

import os
import socket

FARM_DB_URL = "sqlite:///farm.db"
FARM_REDIS_URL = ""
FARM_REDIS_PREFIX = "farm"
FARM_WORK_BACKEND = ""  # farm.config.FarmConfig.work_backend: the local backend, or Redis's with FARM_REDIS_URL
FARM_WORKER_TIMEOUT = 30.0
FARM_OUTAGE_GRACE = 60.0
FARM_DB_TIMEOUT = 5.0
FARM_DB_POOL_TIMEOUT = 5.0
FARM_TIMEZONE = "Asia/Shanghai"
FARM_LEASE_TIMEOUT = 1800
FARM_MAX_RETRIES = 3
FARM_RETRY_DELAY = 600.0
FARM_MAX_BLOCKED_CLAIMS = 5
FARM_CRAWLER_ID = f"{socket.gethostname()}:{os.getpid()}"

# farm's three sites. Their rates (requests per second) are polite enough to crawl for hours: what
# public crawlers of these sites report the sites tolerate from one IP (docs/sites.md). Boss is the
# strictest (its stoken and captcha walls come within minutes at a few requests per second), 51job's
# Aliyun WAF throttles bursts, zhilian's SSR pages are heavy HTML. The demo, the tests and the
# benchmarks set 0 (no limit) for the sandbox.
FARM_BOSS_BASE_URL = "https://www.zhipin.com"
FARM_QCWY_BASE_URL = "https://we.51job.com"
FARM_ZHILIAN_BASE_URL = "https://www.zhaopin.com"
FARM_BOSS_RATE = 0.2
FARM_QCWY_RATE = 0.5
FARM_ZHILIAN_RATE = 0.33
FARM_BOSS_CEILING = 0.0  # each rate is one identity's; no ceiling on their sum (SITE_CEILING)
FARM_QCWY_CEILING = 0.0
FARM_ZHILIAN_CEILING = 0.0
FARM_BOSS_MAX_PAGES = 3
FARM_QCWY_MAX_PAGES = 50
FARM_ZHILIAN_MAX_PAGES = 15
# Any other site (a project's own LeaseSpider) whose settings do not say: no base URL (its spider
# names the setting to set), one request every two seconds, ten pages a keyword. Never "no limit":
# a site farm knows nothing of is crawled politely until its project says otherwise.
SITE_BASE_URL = ""
SITE_RATE = 0.5
# No site-wide ceiling: each identity (proxy) keeps its own pace, and the sum grows with them.
SITE_CEILING = 0.0
SITE_MAX_PAGES = 10

FARM_LEASES_IN_FLIGHT = 8
FARM_PAGES_IN_FLIGHT = 32
FARM_LOGSTATS_INTERVAL = 60.0
FARM_REAP_INTERVAL = 60.0
FARM_BLOCK_RETRIES = 5
FARM_BLOCK_BASE_DELAY = 2.0
FARM_BLOCK_MAX_DELAY = 60.0
FARM_IMPERSONATE = "chrome"
FARM_BROWSER_PAGES = 2
FARM_BROWSER_EXECUTABLE = ""
FARM_BROWSER_TIMEOUT = 30.0
FARM_BROWSER_COOLDOWN = 60.0
FARM_SESSION_MAX_AGE = 1200.0
FARM_SESSION_MAX_USES = 0
FARM_SESSIONS_AHEAD = 2
FARM_SITE_REFUSED_AFTER = 180.0
FARM_PROXIES = ()  # none
FARM_PROXY_QUARANTINE = 1800.0
FARM_METRICS_PORT = 0
FARM_METRICS_HOST = "127.0.0.1"
FARM_METRICS_LINGER = 0.0
FARM_CHECKPOINT_INTERVAL = 1.0
FARM_SQL_BATCH_SIZE = 200
FARM_SQL_FLUSH_INTERVAL = 0.5

FARM_API_TOKEN = ""
FARM_API_MAX_BODY = 1_048_576
FARM_API_RETRY_AFTER = 5
FARM_API_READ_TIMEOUT = 10.0

FARM_SALARY_CONVERT = 0
FARM_SALARY_DAYS_A_MONTH = 21.75
FARM_SALARY_HOURS_A_MONTH = 174.0

FARM_CHECK_HISTORY_DAYS = 7
FARM_CHECK_POSTINGS_DROP = 0.4
FARM_CHECK_MIN_POSTINGS = 10
FARM_CHECK_COVERAGE_DROP = 0.1
FARM_CHECK_MIN_COVERAGE = 0.8
FARM_CHECK_REFUSALS_RISE = 0.2
FARM_CHECK_MAX_REFUSALS = 0.5
FARM_CHECK_RUN_HOURS = 12.0
FARM_ALERT_URLS = ()  # none

# Scrapy's own, as farm tunes them (FARM_CONCURRENT_REQUESTS and the like in farm.settings)
CONCURRENT_REQUESTS = 4
DOWNLOAD_DELAY = 0.0
CONCURRENT_ITEMS = 8
RETRY_TIMES = 2
LOG_LEVEL = "INFO"
