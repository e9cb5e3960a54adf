"""farm's settings, read and checked once: typed, frozen dataclasses.

Every farm setting is a field here, with its kind (what it takes, farm.kinds) and its default
(farm.defaults, where each is written once). ``FarmConfig.from_settings(settings)`` turns every
setting into its type and checks it; a bad one is a ``SettingError`` whose one line names the
setting, shows the value (secrets masked, control characters escaped) and says what it takes. A
setting the settings do not hold is farm.settings' (its environment variable, else its default).
Every command builds it before it does anything: `farm ...` (farm.cli), `scrapy crawl`
(farm.commands.crawl), `farm api`, and a crawl built another way (farm.crawl.parts); a component
gets the crawl's with ``FarmConfig.of(crawler)``, and reads its fields, never the settings.

- ``FarmConfig``: a field is the setting ``FARM_<FIELD NAME>`` (or the key it names).
- ``SiteConfig``: one site's ``FARM_<SITE>_BASE_URL``, ``_RATE``, ``_CEILING``, ``_MAX_PAGES`` and ``_IMPERSONATE``,
  from ``config.site(name)``. farm's three sites have their own defaults (``SITES``); any other site
  (a project's own ``LeaseSpider``) is crawled politely unless its settings say otherwise: 0.5
  requests a second and 10 pages a keyword (farm.defaults.SITE_RATE, SITE_MAX_PAGES), never without
  a limit. Every site the settings name a setting for is read and checked with the rest.
- ``Thresholds``: ``farm check``'s ``FARM_CHECK_*`` settings (docs/checks.md).

Every setting is listed in docs/settings.md.
"""

import re
from collections.abc import Iterable
from dataclasses import MISSING, Field, dataclass, field, fields, replace
from typing import Any

from farm import defaults
from farm.errors import SettingError
from farm.kinds import (
    BASE_URL,
    CLASS_PATH,
    DB_URL,
    IMPERSONATE,
    LOG_LEVELS,
    MAX_PAGES,
    PORT,
    PROXIES,
    RATE,
    REDIS_URL,
    SHARE,
    TIMEZONE,
    URLS,
    Kind,
    choice,
    number,
    text,
    whole,
)

# the work backends FARM_WORK_BACKEND names when it is empty (farm.crawl.backends)
LOCAL_BACKEND = "farm.crawl.backends.local.LocalBackend"
REDIS_BACKEND = "farm.crawl.backends.redis.RedisBackend"
WORK_BACKEND = Kind(
    f"nothing ({LOCAL_BACKEND}, or {REDIS_BACKEND} with FARM_REDIS_URL), or a work backend's class path",
    CLASS_PATH.parse,
)
SITE_FIELDS = ("base_url", "rate", "max_pages", "impersonate", "ceiling")


def setting(kind: Kind, default: object, *, key: str | None = None) -> Any:
    """A field of a settings dataclass: the setting ``<PREFIX><FIELD NAME>`` (or ``key``), of that kind;
    ``default`` is farm.defaults' (a test holds each field to it)."""
    return field(default=default, metadata={"kind": kind, "key": key})


@dataclass(frozen=True)
class Thresholds:
    """``farm check``'s thresholds, the ``FARM_CHECK_*`` settings (docs/checks.md)."""

    PREFIX = "FARM_CHECK_"

    # the days before the checked one that make its history
    history_days: int = setting(
        whole(1, 366, "a whole number of days from 1 to 366, e.g. 7"), defaults.FARM_CHECK_HISTORY_DAYS
    )
    # a keyword's postings fallen by more than this share of their median: fail
    postings_drop: float = setting(SHARE, defaults.FARM_CHECK_POSTINGS_DROP)
    # a keyword whose median is below this is too small to judge
    min_postings: int = setting(
        whole(0, 10**9, "a whole number of postings from 0, e.g. 10"), defaults.FARM_CHECK_MIN_POSTINGS
    )
    # a field's share of postings fallen by more than this (absolute): fail
    coverage_drop: float = setting(SHARE, defaults.FARM_CHECK_COVERAGE_DROP)
    # a run whose postings carry company, city or salary less often: fail
    min_coverage: float = setting(SHARE, defaults.FARM_CHECK_MIN_COVERAGE)
    # refusals' share of a site's requests risen by more than this: fail
    refusals_rise: float = setting(SHARE, defaults.FARM_CHECK_REFUSALS_RISE)
    # a run refused more often than this: fail
    max_refusals: float = setting(SHARE, defaults.FARM_CHECK_MAX_REFUSALS)
    # a run started this long ago with no end never finished
    run_hours: float = setting(
        number(0, 24 * 366, takes="a number of hours from 0 to 8784, e.g. 12"), defaults.FARM_CHECK_RUN_HOURS
    )

    @classmethod
    def from_settings(cls, settings) -> "Thresholds":
        """Every threshold parsed and checked; SettingError (one line) for the first bad one."""
        return cls(**{f.name: _read(settings, _key(cls, f), f) for f in _settings_fields(cls)})


@dataclass(frozen=True)
class SiteConfig:
    """One site's settings, ``FARM_<SITE>_*``: its spider's ``site`` (or ``name``) in capitals.

    ``base_url`` "": none given (the site's spider refuses to start without one). ``impersonate``
    None: FARM_IMPERSONATE's (``FarmConfig.site`` gives it resolved).
    """

    name: str
    base_url: str = setting(BASE_URL, defaults.SITE_BASE_URL)
    rate: float = setting(RATE, defaults.SITE_RATE)  # one identity's pace (farm.crawl.identities)
    max_pages: int = setting(MAX_PAGES, defaults.SITE_MAX_PAGES)
    impersonate: str | None = setting(IMPERSONATE, None)
    ceiling: float = setting(RATE, defaults.SITE_CEILING)  # the sum of every identity's (0: no ceiling)

    def key(self, name: str) -> str:
        """The setting a field reads, e.g. FARM_ACME_MAX_PAGES."""
        return site_key(self.name, name)

    @classmethod
    def from_settings(cls, settings, name: str) -> "SiteConfig":
        """Site ``name``'s settings; those not given, farm's defaults for it (or the polite ones)."""
        name = name.lower()
        given = SITES.get(name) or cls(name)
        values = {f: _read(settings, site_key(name, f), _FIELDS_OF[cls][f], getattr(given, f)) for f in SITE_FIELDS}
        return cls(name, **values)


def _site(name: str) -> SiteConfig:
    """farm's defaults for one of its sites (farm.defaults.FARM_<SITE>_*)."""
    values = {f: getattr(defaults, site_key(name, f)) for f in SITE_FIELDS if hasattr(defaults, site_key(name, f))}
    return SiteConfig(name, **values)


def site_key(site: str, name: str) -> str:
    """The setting of field ``name`` of ``site``'s SiteConfig, e.g. FARM_BOSS_RATE."""
    return f"FARM_{site.upper()}_{name.upper()}"


SITES = {name: _site(name) for name in ("boss", "qcwy", "zhilian")}
# a site's setting: FARM_<SITE>_<FIELD> (a site's name takes a-z, 0-9 and _, farm.cities)
SITE_KEY = re.compile(r"FARM_(?P<site>[A-Z][A-Z0-9_]{0,15}?)_(?P<field>BASE_URL|RATE|CEILING|MAX_PAGES|IMPERSONATE)")


def _sites_of(settings) -> tuple[SiteConfig, ...]:
    """farm's three sites and every site the settings name a setting for, each read and checked."""
    named = {m.group("site").lower() for key in _keys(settings) if (m := SITE_KEY.fullmatch(str(key)))}
    return tuple(SiteConfig.from_settings(settings, name) for name in sorted(set(SITES) | named))


def _seconds(lo: float = 0, above: bool = False, example: str = "") -> Kind:
    return number(lo, above=above, takes=f"a number of seconds {'above' if above else 'from'} 0, e.g. {example}")


@dataclass(frozen=True)
class FarmConfig:
    PREFIX = "FARM_"

    db_url: str = setting(DB_URL, defaults.FARM_DB_URL)
    redis_url: str = setting(REDIS_URL, defaults.FARM_REDIS_URL)
    redis_prefix: str = setting(text("a Redis key prefix, e.g. farm", empty=False), defaults.FARM_REDIS_PREFIX)
    # FARM_WORK_BACKEND as given: ``work_backend`` says which backend it is when it is empty
    work_backend_class: str = setting(WORK_BACKEND, defaults.FARM_WORK_BACKEND, key="FARM_WORK_BACKEND")
    worker_timeout: float = setting(_seconds(above=True, example="30"), defaults.FARM_WORKER_TIMEOUT)
    outage_grace: float = setting(_seconds(example="60"), defaults.FARM_OUTAGE_GRACE)
    db_timeout: float = setting(_seconds(above=True, example="5"), defaults.FARM_DB_TIMEOUT)
    db_pool_timeout: float = setting(_seconds(above=True, example="5"), defaults.FARM_DB_POOL_TIMEOUT)
    timezone: str = setting(TIMEZONE, defaults.FARM_TIMEZONE)
    lease_timeout: int = setting(
        whole(1, takes="a whole number of seconds, at least 1, e.g. 1800"), defaults.FARM_LEASE_TIMEOUT
    )
    max_retries: int = setting(whole(0, 1000, "a whole number from 0 to 1000, e.g. 3"), defaults.FARM_MAX_RETRIES)
    retry_delay: float = setting(_seconds(example="600"), defaults.FARM_RETRY_DELAY)
    max_blocked_claims: int = setting(
        whole(1, 1000, "a whole number from 1 to 1000, e.g. 5"), defaults.FARM_MAX_BLOCKED_CLAIMS
    )
    crawler_id: str = setting(text("a name for this crawler, e.g. host:pid", empty=False), defaults.FARM_CRAWLER_ID)
    leases_in_flight: int = setting(
        whole(1, 10_000, "a whole number from 1 to 10000, e.g. 8"), defaults.FARM_LEASES_IN_FLIGHT
    )
    pages_in_flight: int = setting(
        whole(1, 100_000, "a whole number from 1 to 100000, e.g. 32"), defaults.FARM_PAGES_IN_FLIGHT
    )
    logstats_interval: float = setting(
        number(0, takes="a number of seconds from 0 (no progress line), e.g. 60"), defaults.FARM_LOGSTATS_INTERVAL
    )
    reap_interval: float = setting(
        number(0, takes="a number of seconds from 0 (no reaping), e.g. 60"), defaults.FARM_REAP_INTERVAL
    )
    block_retries: int = setting(whole(0, 1000, "a whole number from 0 to 1000, e.g. 5"), defaults.FARM_BLOCK_RETRIES)
    block_base_delay: float = setting(_seconds(example="2"), defaults.FARM_BLOCK_BASE_DELAY)
    block_max_delay: float = setting(_seconds(example="60"), defaults.FARM_BLOCK_MAX_DELAY)
    impersonate: str = setting(IMPERSONATE, defaults.FARM_IMPERSONATE)
    browser_pages: int = setting(
        whole(0, 64, "a whole number of pages from 0 (no browser) to 64, e.g. 2"), defaults.FARM_BROWSER_PAGES
    )
    browser_executable: str = setting(
        text("nothing (Chromium on the PATH), or the browser's path or name"), defaults.FARM_BROWSER_EXECUTABLE
    )
    browser_timeout: float = setting(
        number(0, 3600, above=True, takes="a number of seconds above 0, e.g. 30"), defaults.FARM_BROWSER_TIMEOUT
    )
    browser_cooldown: float = setting(_seconds(example="60"), defaults.FARM_BROWSER_COOLDOWN)
    session_max_age: float = setting(_seconds(above=True, example="1200"), defaults.FARM_SESSION_MAX_AGE)
    session_max_uses: int = setting(
        whole(0, 10**9, "a whole number from 0 (no limit), e.g. 200"), defaults.FARM_SESSION_MAX_USES
    )
    sessions_ahead: int = setting(
        whole(0, 16, "a whole number of sessions from 0 (none ahead) to 16, e.g. 2"), defaults.FARM_SESSIONS_AHEAD
    )
    site_refused_after: float = setting(
        number(0, takes="a number of seconds from 0 (never), e.g. 180"), defaults.FARM_SITE_REFUSED_AFTER
    )
    proxies: tuple = setting(PROXIES, defaults.FARM_PROXIES)
    proxy_quarantine: float = setting(_seconds(example="1800"), defaults.FARM_PROXY_QUARANTINE)
    metrics_port: int = setting(PORT, defaults.FARM_METRICS_PORT)
    metrics_host: str = setting(
        text("an address to listen on, e.g. 127.0.0.1 or 0.0.0.0", empty=False), defaults.FARM_METRICS_HOST
    )
    metrics_linger: float = setting(_seconds(example="30"), defaults.FARM_METRICS_LINGER)
    checkpoint_interval: float = setting(_seconds(above=True, example="1"), defaults.FARM_CHECKPOINT_INTERVAL)
    sql_batch_size: int = setting(
        whole(1, 100_000, "a whole number from 1 to 100000, e.g. 200"), defaults.FARM_SQL_BATCH_SIZE
    )
    sql_flush_interval: float = setting(_seconds(example="0.5"), defaults.FARM_SQL_FLUSH_INTERVAL)
    api_token: str = setting(text("nothing (loopback only), or the bearer token clients send"), defaults.FARM_API_TOKEN)
    api_max_body: int = setting(
        whole(1024, 2**31, "a whole number of bytes from 1024, e.g. 1048576"), defaults.FARM_API_MAX_BODY
    )
    api_retry_after: int = setting(
        whole(1, 86_400, "a whole number of seconds from 1 to 86400, e.g. 5"), defaults.FARM_API_RETRY_AFTER
    )
    api_read_timeout: float = setting(
        number(0, 86_400, above=True, takes="a number of seconds above 0, e.g. 10"), defaults.FARM_API_READ_TIMEOUT
    )
    salary_convert: int = setting(
        whole(0, 1, "0 (monthly pay alone) or 1 (day, hour and year pay converted)"), defaults.FARM_SALARY_CONVERT
    )
    salary_days_a_month: float = setting(
        number(0, 31, above=True, takes="a number of days above 0 to 31, e.g. 21.75"), defaults.FARM_SALARY_DAYS_A_MONTH
    )
    salary_hours_a_month: float = setting(
        number(0, 744, above=True, takes="a number of hours above 0 to 744, e.g. 174"),
        defaults.FARM_SALARY_HOURS_A_MONTH,
    )
    alert_urls: tuple = setting(URLS, defaults.FARM_ALERT_URLS)
    # Scrapy's own, set from FARM_* variables in farm.settings
    concurrent_requests: int = setting(
        whole(1, 10_000, "a whole number from 1 to 10000, e.g. 4"),
        defaults.CONCURRENT_REQUESTS,
        key="CONCURRENT_REQUESTS",
    )
    download_delay: float = setting(
        number(0, takes="a number of seconds from 0"), defaults.DOWNLOAD_DELAY, key="DOWNLOAD_DELAY"
    )
    concurrent_items: int = setting(
        whole(1, 10_000, "a whole number from 1 to 10000, e.g. 8"), defaults.CONCURRENT_ITEMS, key="CONCURRENT_ITEMS"
    )
    retry_times: int = setting(
        whole(0, 1000, "a whole number from 0 to 1000, e.g. 2"), defaults.RETRY_TIMES, key="RETRY_TIMES"
    )
    log_level: str = setting(choice(*LOG_LEVELS), defaults.LOG_LEVEL, key="LOG_LEVEL")
    # groups of their own
    checks: Thresholds = field(default_factory=Thresholds)
    sites: tuple[SiteConfig, ...] = tuple(SITES.values())  # farm's three and every site the settings name

    def __post_init__(self) -> None:
        if self.block_base_delay > self.block_max_delay:
            raise SettingError(
                f"FARM_BLOCK_BASE_DELAY={self.block_base_delay:g} is above FARM_BLOCK_MAX_DELAY="
                f"{self.block_max_delay:g}: the back-off starts at the one and doubles up to the other"
            )

    @property
    def work_backend(self) -> str:
        """The work backend's class path: FARM_WORK_BACKEND, else the Redis backend with FARM_REDIS_URL,
        else the local one (named, not imported: the crawl loads it)."""
        return self.work_backend_class or (REDIS_BACKEND if self.redis_url else LOCAL_BACKEND)

    def site(self, name: str) -> SiteConfig:
        """Site ``name``'s settings, with FARM_IMPERSONATE's impersonation where it gives none of its own;
        a site the settings name no setting for has farm's defaults for it, or the polite ones."""
        name = name.lower()
        found = next((s for s in self.sites if s.name == name), None) or SITES.get(name) or SiteConfig(name)
        return found if found.impersonate is not None else replace(found, impersonate=self.impersonate)

    @classmethod
    def from_settings(cls, settings) -> "FarmConfig":
        """Every setting parsed and checked; SettingError (one line) for the first bad one."""
        values = {f.name: _read(settings, _key(cls, f), f) for f in _settings_fields(cls)}
        return cls(**values, checks=Thresholds.from_settings(settings), sites=_sites_of(settings))

    @classmethod
    def of(cls, crawler) -> "FarmConfig":
        """The crawl's configuration, built once."""
        config = getattr(crawler, "_farm_config", None)
        if config is None:
            config = crawler._farm_config = cls.from_settings(crawler.settings)
        return config


def setting_key(name: str) -> str:
    """The setting a field of FarmConfig reads."""
    return _key(FarmConfig, _FIELDS_OF[FarmConfig][name])


def read(settings, name: str) -> Any:
    """One setting of FarmConfig, parsed and checked (SettingError names it)."""
    f = _FIELDS_OF[FarmConfig][name]
    return _read(settings, _key(FarmConfig, f), f)


def describe() -> dict[str, str]:
    """Each setting and what it takes (the source of the table in docs/settings.md)."""
    taken = {_key(FarmConfig, f): f.metadata["kind"].takes for f in _settings_fields(FarmConfig)}
    taken.update(
        {site_key("<SITE>", name): _FIELDS_OF[SiteConfig][name].metadata["kind"].takes for name in SITE_FIELDS}
    )
    taken.update({_key(Thresholds, f): f.metadata["kind"].takes for f in _settings_fields(Thresholds)})
    return taken


def _read(settings, key: str, f: Field, default: object = MISSING) -> Any:
    """Setting ``key`` of field ``f``: from ``settings``, else farm.settings' (the environment's, else
    the default; ``default`` for a setting farm.settings has none of). None stays None."""
    kind: Kind = f.metadata["kind"]
    raw = settings.get(key) if settings is not None else None
    if raw is None or (raw == "" and not kind.blank):  # not set here
        from farm import settings as farm_settings

        raw = getattr(farm_settings, key, f.default if default is MISSING else default)
        if raw is None:
            return None
    return kind.read(key, raw)


def _settings_fields(cls) -> list[Field]:
    return [f for f in fields(cls) if "kind" in f.metadata]


def _key(cls, f: Field) -> str:
    return f.metadata["key"] or f"{cls.PREFIX}{f.name.upper()}"


def _keys(settings) -> Iterable:
    if settings is None:
        return ()
    return settings.keys() if hasattr(settings, "keys") else iter(settings)


_FIELDS_OF = {cls: {f.name: f for f in _settings_fields(cls)} for cls in (FarmConfig, SiteConfig, Thresholds)}
