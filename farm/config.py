"""farm's settings, read and checked once: a typed, frozen ``FarmConfig``.

farm.settings holds each setting as given (the environment's text, or the default);
``FarmConfig.from_settings(settings)`` turns every one into its type and checks it,
and a bad one is a ``SettingError`` whose one line names the setting, shows the value
(secrets masked, control characters escaped) and says what the setting takes. Every
command builds it before it does anything: `farm ...` (farm.cli), `scrapy crawl`
(farm.commands.crawl), `farm api`, and a crawl built another way (farm.crawl.parts).

A setting is one line of ``FarmConfig``: its field name is the setting's name without
``FARM_``, in lower case, and ``setting()`` gives what it takes. Every setting is
listed in docs/settings.md.
"""

import math
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from urllib.parse import urlsplit

from farm.display import escape, without_secrets
from farm.errors import DatabaseUrlError, Invalid, SettingError

# the longest time any setting may give, in seconds: beyond it dates overflow (ten years)
SECONDS_MAX = 10 * 366 * 24 * 3600
LOG_LEVELS = ("CRITICAL", "ERROR", "WARNING", "INFO", "DEBUG")


@dataclass(frozen=True)
class Kind:
    takes: str  # what the setting takes, for the error line and docs/settings.md
    parse: Callable[[object], object]  # the typed value, or ValueError


def whole(lo: int, hi: int = SECONDS_MAX, takes: str = "") -> Kind:
    def parse(raw):
        if isinstance(raw, bool) or isinstance(raw, float):
            raise ValueError(raw)
        value = int(str(raw).strip())  # "1.5", "30m", "abc": ValueError
        if not lo <= value <= hi:
            raise ValueError(value)
        return value

    return Kind(takes or f"a whole number from {lo} to {hi}", parse)


def number(lo: float, hi: float = SECONDS_MAX, above: bool = False, takes: str = "") -> Kind:
    def parse(raw):
        if isinstance(raw, bool):
            raise ValueError(raw)
        value = float(str(raw).strip())
        if not math.isfinite(value) or not (value > lo if above else value >= lo) or value > hi:
            raise ValueError(value)  # nan and inf included
        return value

    return Kind(takes or f"a number {'above' if above else 'from'} {lo:g} to {hi:g}", parse)


def text(takes: str = "any text", empty: bool = True) -> Kind:
    def parse(raw):
        value = str(raw if raw is not None else "").strip()
        if not value and not empty:
            raise ValueError(raw)
        return value

    return Kind(takes, parse)


def choice(*options: str) -> Kind:
    def parse(raw):
        value = str(raw).strip().upper()
        if value not in options:
            raise ValueError(raw)
        return value

    return Kind(f"one of {', '.join(options)}", parse)


def _timezone(raw):
    from farm.state.clock import load_timezone

    name = str(raw).strip()
    load_timezone(name)  # ValueError for a zone this machine does not know
    return name


def _db_url(raw):
    from farm.state.engine import check_stored, engine_for

    try:
        check_stored(str(raw))
        deadlines = {"timeout": read(None, "db_timeout"), "pool_timeout": read(None, "db_pool_timeout")}
        engine_for(str(raw), **deadlines).dispose()  # the driver and its options in the URL (no connection)
    except DatabaseUrlError as exc:  # names the setting, with examples
        raise SettingError(str(exc)) from None
    return str(raw)


def _redis_url(raw):
    url = str(raw or "").strip()
    if not url:
        return ""
    parts = urlsplit(url)
    if parts.scheme not in ("redis", "rediss", "unix"):
        raise Invalid("is not a Redis URL")
    try:
        _ = parts.port  # reading it parses it
    except ValueError:  # a password holding "/" or "@" cuts the URL elsewhere
        raise Invalid("has a port that is not a number (write a / in a password as %2F)") from None
    return url


def _proxies(raw):
    from farm.crawl.proxies import parse_proxies

    try:
        return tuple(parse_proxies(raw))
    except ValueError as exc:  # names the setting and the entry, or the file's line, with no secret
        raise SettingError(str(exc)) from None


SECONDS = "seconds"
DB_URL = Kind(
    "a SQLAlchemy URL of a database kept on disk, e.g. sqlite:///farm.db or "
    "mysql+pymysql://user:password@host:3306/farm",
    _db_url,
)
REDIS_URL = Kind("nothing (no Redis), or a Redis URL, e.g. redis://host:6379/0", _redis_url)
TIMEZONE = Kind("an IANA time zone name, e.g. Asia/Shanghai", _timezone)
PROXIES = Kind(
    "nothing, a comma-separated list of proxy URLs (http://[user:password@]host:port), or the "
    "path of a file with one a line",
    _proxies,
)


def _impersonate(raw):
    from farm.sessions.identity import check_target

    return check_target(raw)


IMPERSONATE = Kind(
    "chrome, a curl_cffi Chrome target such as chrome146, or nothing for Scrapy's own client", _impersonate
)
PORT = whole(0, 65535, "a port number from 1 to 65535, or 0 for none")


def setting(kind: Kind, key: str | None = None):
    """A field of FarmConfig: the setting ``FARM_<FIELD NAME>`` (or ``key``), of that kind."""
    return field(metadata={"kind": kind, "key": key})


@dataclass(frozen=True)
class FarmConfig:
    db_url: str = setting(DB_URL)
    redis_url: str = setting(REDIS_URL)
    redis_prefix: str = setting(text("a Redis key prefix, e.g. farm", empty=False))
    worker_timeout: float = setting(number(0, above=True, takes="a number of seconds above 0, e.g. 30"))
    outage_grace: float = setting(number(0, takes="a number of seconds from 0, e.g. 60"))
    db_timeout: float = setting(number(0, above=True, takes="a number of seconds above 0, e.g. 5"))
    db_pool_timeout: float = setting(number(0, above=True, takes="a number of seconds above 0, e.g. 5"))
    timezone: str = setting(TIMEZONE)
    lease_timeout: int = setting(whole(1, takes="a whole number of seconds, at least 1, e.g. 1800"))
    max_retries: int = setting(whole(0, 1000, "a whole number from 0 to 1000, e.g. 3"))
    retry_delay: float = setting(number(0, takes="a number of seconds from 0, e.g. 600"))
    max_blocked_claims: int = setting(whole(1, 1000, "a whole number from 1 to 1000, e.g. 5"))
    crawler_id: str = setting(text("a name for this crawler, e.g. host:pid", empty=False))
    boss_base_url: str = setting(text("the site's base URL, e.g. https://www.zhipin.com", empty=False))
    qcwy_base_url: str = setting(text("the site's base URL, e.g. https://we.51job.com", empty=False))
    zhilian_base_url: str = setting(text("the site's base URL, e.g. https://www.zhaopin.com", empty=False))
    boss_max_pages: int = setting(whole(1, 10_000, "a whole number of pages from 1 to 10000"))
    qcwy_max_pages: int = setting(whole(1, 10_000, "a whole number of pages from 1 to 10000"))
    zhilian_max_pages: int = setting(whole(1, 10_000, "a whole number of pages from 1 to 10000"))
    boss_rate: float = setting(number(0, 1000, takes="requests per second from 0 (no limit) to 1000"))
    qcwy_rate: float = setting(number(0, 1000, takes="requests per second from 0 (no limit) to 1000"))
    zhilian_rate: float = setting(number(0, 1000, takes="requests per second from 0 (no limit) to 1000"))
    leases_in_flight: int = setting(whole(1, 10_000, "a whole number from 1 to 10000, e.g. 8"))
    pages_in_flight: int = setting(whole(1, 100_000, "a whole number from 1 to 100000, e.g. 32"))
    logstats_interval: float = setting(number(0, takes="a number of seconds from 0 (no progress line), e.g. 60"))
    reap_interval: float = setting(number(0, takes="a number of seconds from 0 (no reaping), e.g. 60"))
    block_retries: int = setting(whole(0, 1000, "a whole number from 0 to 1000, e.g. 5"))
    block_base_delay: float = setting(number(0, takes="a number of seconds from 0, e.g. 2"))
    block_max_delay: float = setting(number(0, takes="a number of seconds from 0, e.g. 60"))
    impersonate: str = setting(IMPERSONATE)
    browser_pages: int = setting(whole(0, 64, "a whole number of pages from 0 (no browser) to 64, e.g. 2"))
    browser_executable: str = setting(text("nothing (Chromium on the PATH), or the browser's path or name"))
    browser_timeout: float = setting(number(0, 3600, above=True, takes="a number of seconds above 0, e.g. 30"))
    browser_cooldown: float = setting(number(0, takes="a number of seconds from 0, e.g. 60"))
    session_max_age: float = setting(number(0, above=True, takes="a number of seconds above 0, e.g. 1200"))
    session_max_uses: int = setting(whole(0, 10**9, "a whole number from 0 (no limit), e.g. 200"))
    site_refused_after: float = setting(number(0, takes="a number of seconds from 0 (never), e.g. 180"))
    proxies: tuple = setting(PROXIES)
    proxy_quarantine: float = setting(number(0, takes="a number of seconds from 0, e.g. 1800"))
    metrics_port: int = setting(PORT)
    metrics_host: str = setting(text("an address to listen on, e.g. 127.0.0.1 or 0.0.0.0", empty=False))
    metrics_linger: float = setting(number(0, takes="a number of seconds from 0, e.g. 30"))
    checkpoint_interval: float = setting(number(0, above=True, takes="a number of seconds above 0, e.g. 1"))
    sql_batch_size: int = setting(whole(1, 100_000, "a whole number from 1 to 100000, e.g. 200"))
    sql_flush_interval: float = setting(number(0, takes="a number of seconds from 0, e.g. 0.5"))
    api_token: str = setting(text("nothing (loopback only), or the bearer token clients send"))
    api_max_body: int = setting(whole(1024, 2**31, "a whole number of bytes from 1024, e.g. 1048576"))
    api_retry_after: int = setting(whole(1, 86_400, "a whole number of seconds from 1 to 86400, e.g. 5"))
    api_read_timeout: float = setting(number(0, 86_400, above=True, takes="a number of seconds above 0, e.g. 10"))
    salary_convert: int = setting(whole(0, 1, "0 (monthly pay alone) or 1 (day, hour and year pay converted)"))
    salary_days_a_month: float = setting(number(0, 31, above=True, takes="a number of days above 0 to 31, e.g. 21.75"))
    salary_hours_a_month: float = setting(
        number(0, 744, above=True, takes="a number of hours above 0 to 744, e.g. 174")
    )
    # Scrapy's own, set from FARM_* variables in farm.settings
    concurrent_requests: int = setting(
        whole(1, 10_000, "a whole number from 1 to 10000, e.g. 4"), "CONCURRENT_REQUESTS"
    )
    download_delay: float = setting(number(0, takes="a number of seconds from 0"), "DOWNLOAD_DELAY")
    concurrent_items: int = setting(whole(1, 10_000, "a whole number from 1 to 10000, e.g. 8"), "CONCURRENT_ITEMS")
    retry_times: int = setting(whole(0, 1000, "a whole number from 0 to 1000, e.g. 2"), "RETRY_TIMES")
    log_level: str = setting(choice(*LOG_LEVELS), "LOG_LEVEL")

    @classmethod
    def from_settings(cls, settings) -> "FarmConfig":
        """Every setting parsed and checked; SettingError (one line) for the first bad one."""
        return cls(**{f.name: read(settings, f.name) for f in fields(cls)})

    @classmethod
    def of(cls, crawler) -> "FarmConfig":
        """The crawl's configuration, built once."""
        config = getattr(crawler, "_farm_config", None)
        if config is None:
            config = crawler._farm_config = cls.from_settings(crawler.settings)
        return config


def setting_key(name: str) -> str:
    """The setting a field of FarmConfig reads."""
    return _field(name).metadata["key"] or f"FARM_{name.upper()}"


def read(settings, name: str):
    """One setting of FarmConfig, parsed and checked (SettingError names it)."""
    key = setting_key(name)
    kind = _field(name).metadata["kind"]
    raw = settings.get(key) if settings is not None else None
    if raw is None or raw == "":  # not set here: farm's default
        from farm import settings as defaults

        raw = getattr(defaults, key)
    try:
        return kind.parse(raw)
    except Invalid as exc:
        raise SettingError(f"{key}={_shown(raw)} {exc}; it takes {kind.takes}") from None
    except SettingError:
        raise
    except (ValueError, TypeError, OverflowError):
        raise SettingError(f"{key}={_shown(raw)} cannot be used: it takes {kind.takes}") from None


def describe() -> dict[str, str]:
    """Each setting and what it takes (the source of the table in docs/settings.md)."""
    return {setting_key(f.name): f.metadata["kind"].takes for f in fields(FarmConfig)}


def _field(name: str):
    return _FIELDS[name]


def _shown(raw) -> str:
    value = escape(
        without_secrets(
            raw if isinstance(raw, str) else ",".join(map(str, raw)) if isinstance(raw, (list, tuple)) else raw
        )
    )
    if len(value) > 80:
        value = value[:77] + "..."
    return repr(value)


_FIELDS = {f.name: f for f in fields(FarmConfig)}
