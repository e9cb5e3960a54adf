"""What a probe changes of the user's settings: one keyword, one page, short retries, a bounded time.

Everything else is the user's, as a crawl would have it: FARM_<SITE>_BASE_URL, FARM_<SITE>_RATE,
FARM_PROXIES, FARM_IMPERSONATE, the browser's settings. What is changed keeps the probe off the user's
state (its own SQLite database, no Redis, no JOBDIR, no metrics port) and within its time: the crawl
closes itself (CLOSESPIDER_TIMEOUT) before the runner's deadline, and every wait inside it (a download, a
browser page, the back-off) fits in that time with the retries it may take.
"""

from dataclasses import dataclass

from farm.config import LOCAL_BACKEND, read, site_key
from farm.sites import find
from farm.sites.cities import city_code

PROBE_JOB = "python"
PROBE_CITY = "北京"
# attempts at the page: the first and this many retries (a refusal seen three times is no accident)
RETRIES = 2
# the longest back-off between two attempts, and its start, in seconds
MAX_DELAY = 5.0
BASE_DELAY = 1.0
# seconds of refusals only after which the crawl concludes that the site refuses it
REFUSED_AFTER = 5.0
# of --timeout, the seconds kept for the child to start (imports, the database) and to close (the browser)
START_AND_CLOSE = 12.0


@dataclass(frozen=True)
class Probe:
    """One site's probe: the search it makes and where its files go."""

    site: str
    city: str
    job: str
    timeout: float  # seconds from the child's start to its end, whatever happens
    proxy: int | None = None  # --each-proxy: the index of the one proxy of FARM_PROXIES it goes through
    identity: str = ""  # that proxy's label (its password masked), for the verdict

    @property
    def name(self) -> str:
        """What its files are named by: the site, and the proxy's index when it probes one."""
        return self.site if self.proxy is None else f"{self.site}-proxy{self.proxy}"

    @property
    def crawl_seconds(self) -> float:
        """The seconds the crawl itself may run (CLOSESPIDER_TIMEOUT): the rest is the child's start and close."""
        return max(1.0, self.timeout - min(START_AND_CLOSE, self.timeout / 3))


def default_city(site: str) -> str:
    """北京 where the site knows it, else the first city its spider names."""
    known = find(site)
    if known is None or city_code(site, PROBE_CITY) is not None or not known.cities:
        return PROBE_CITY
    return next(iter(known.cities))


def overrides(probe: Probe, site: str, settings, db_url: str, log_file: str) -> dict:
    """The settings a probe crawl runs with on top of the user's ``settings``; ``site`` is the spider's
    (its ``site`` or ``name``). The user's values it shortens are read as farm.config reads them (a bad
    one is a SettingError naming it); those it replaces (the database URL) are never read."""
    crawl = probe.crawl_seconds
    attempts = RETRIES + 1
    # every attempt's download, and the browser's page, fit in the crawl's time
    download = min(settings.getfloat("DOWNLOAD_TIMEOUT"), max(1.0, crawl / (attempts + 1)))
    browser = min(read(settings, "browser_timeout"), max(1.0, crawl / 3))
    # --each-proxy: through that one proxy (an index: no password on a command line)
    one_proxy = {} if probe.proxy is None else {"FARM_PROXIES": read(settings, "proxies")[probe.proxy].url}
    return {
        **one_proxy,
        "FARM_DB_URL": db_url,
        "FARM_WORK_BACKEND": LOCAL_BACKEND,  # a probe shares no work
        "FARM_REDIS_URL": "",
        "JOBDIR": "",
        "FARM_METRICS_PORT": 0,
        "FARM_CRAWLER_ID": f"farm-probe:{probe.name}",
        site_key(site, "max_pages"): 1,
        "FARM_LEASES_IN_FLIGHT": 1,
        "FARM_BLOCK_RETRIES": RETRIES,
        "FARM_BLOCK_BASE_DELAY": min(read(settings, "block_base_delay"), BASE_DELAY),
        "FARM_BLOCK_MAX_DELAY": min(read(settings, "block_max_delay"), MAX_DELAY),
        "FARM_SITE_REFUSED_AFTER": REFUSED_AFTER,
        # the keyword is claimed once: a block or a failure ends the probe, not a second claim
        "FARM_MAX_BLOCKED_CLAIMS": 1,
        "FARM_MAX_RETRIES": 0,
        # a proxy that drew a block is tried again at once: the probe has no other time to wait in
        "FARM_PROXY_QUARANTINE": 0,
        "FARM_BROWSER_TIMEOUT": browser,
        "DOWNLOAD_TIMEOUT": download,
        "CLOSESPIDER_TIMEOUT": crawl,
        "FARM_LOGSTATS_INTERVAL": 0,
        # the walls the browser passed are told at INFO (farm.probe.child reads them from the log)
        "LOG_LEVEL": "DEBUG" if str(settings.get("LOG_LEVEL")).upper() == "DEBUG" else "INFO",
        "LOG_FILE": log_file,
        "LOG_FILE_APPEND": False,
    }
