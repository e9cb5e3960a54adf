"""Proxies (FARM_PROXIES): round robin, and a quarantine for a proxy that drew a block.

A site that blocks usually blocks an address. With proxies, a block is taken as the
proxy's: the proxy is quarantined for FARM_PROXY_QUARANTINE seconds and the page is
retried through the next one. Page requests get their proxy where they leave the
farm scheduler, behind the window and the pace, so a retry gets a fresh one; with
every proxy in quarantine the request is parked there like a request waiting for
the pace, and the crawl waits (no keyword fails for it).

A proxy is known by three names:

- ``url``: what it is, credentials included; it only ever goes into
  ``request.meta["proxy"]``, where Scrapy's HttpProxyMiddleware turns ``user:pass@``
  into a Proxy-Authorization header and strips it from the meta;
- ``id``: a hash of the URL, the name in Redis (farm.crawl.backends.redis.proxies), so credentials
  are never stored there, and in the request's farm meta (``FarmMeta.proxy``): HttpProxyMiddleware
  leaves only host and port in ``meta["proxy"]``, which would not tell apart two
  sessions of one proxy gateway (``user-session-1:pw@gw:port``, ``user-session-2:...``);
- ``label``: the URL with its password masked, the name in logs and stats.

Without FARM_PROXIES there is no pool (``proxy_pool_from`` returns None) and nothing
changes. With FARM_REDIS_URL the quarantine is shared by every worker
(farm.crawl.backends.redis.proxies.SharedProxyPool).
"""

import hashlib
import logging
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from scrapy import Request
from scrapy.crawler import Crawler
from scrapy.statscollectors import StatsCollector

from farm.crawl.meta import FarmMeta
from farm.display import mask_url
from farm.errors import SettingError

logger = logging.getLogger(__name__)

EXAMPLE = "e.g. http://user:password@10.0.0.1:3128"
# The shortest wait reported while every proxy is quarantined: no busy loop on a quarantine ending now.
MIN_WAIT = 0.05


@dataclass(frozen=True)
class Proxy:
    url: str = field(repr=False)  # credentials included: never logged
    id: str
    label: str

    @classmethod
    def of(cls, url: str) -> "Proxy":
        return cls(url, hashlib.sha256(url.encode()).hexdigest()[:16], mask_url(url))


def parse_proxies(value: str | Iterable[object] | None, setting: str = "FARM_PROXIES") -> list["Proxy"]:
    """The proxies of a setting: a list, a comma-separated string, or the path of a file with one
    URL a line (``#`` comments and blank lines skipped). ValueError names the setting and the bad
    entry, its password masked; a bad line of a file by its number only: the file may be any
    file (a typo for /etc/shadow), and what it holds is never shown."""
    if not value:
        return []
    entries: Sequence[tuple[str, object, bool]]
    if isinstance(value, str):
        text = value.strip()
        if "://" not in text and "," not in text:
            entries = _read_file(text, setting)
        else:
            entries = [(setting, entry, True) for entry in text.split(",")]
    else:
        entries = [(setting, entry, True) for entry in value]
    proxies: dict[str, Proxy] = {}
    for where, entry, shown in entries:
        entry = str(entry).strip()
        if entry:
            proxy = Proxy.of(_checked(entry, where, shown))
            proxies.setdefault(proxy.id, proxy)  # the same proxy twice is one proxy
    return list(proxies.values())


def setting_proxies(raw: object) -> tuple["Proxy", ...]:
    """FARM_PROXIES read as a setting (farm.config): SettingError names the setting and the bad entry."""
    try:
        return tuple(parse_proxies(raw))  # type: ignore[arg-type]  # any other value: ValueError
    except ValueError as exc:
        raise SettingError(str(exc)) from None


def _read_file(path: str, setting: str) -> list[tuple[str, str, bool]]:
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError:
        raise ValueError(f"{setting}={mask_url(path)!r} is not a text file of proxy URLs ({EXAMPLE})") from None
    except OSError as exc:
        raise ValueError(
            f"{setting}={mask_url(path)!r} is neither a proxy URL ({EXAMPLE}) nor a readable file of them: "
            f"{exc.strerror}"
        ) from None
    entries = []
    for number, line in enumerate(lines, 1):
        line = line.strip()
        if line and not line.startswith("#"):
            entries.append((f"{setting}={mask_url(path)!r}, line {number}", line, False))
    return entries


def _checked(entry: str, where: str, shown: bool = True) -> str:
    def bad(problem: str) -> ValueError:
        what = f"{mask_url(entry)!r} " if shown else ""
        return ValueError(f"{where}: {what}{problem} ({EXAMPLE})")

    parts = urlsplit(entry)
    if parts.scheme not in ("http", "https"):
        raise bad("is not an http:// or https:// proxy URL")
    if not parts.hostname:
        raise bad("has no host")
    try:
        port = parts.port
    except ValueError:
        raise bad("has a port that is not a number from 1 to 65535") from None
    if not port:  # none, or 0
        raise bad("has no port")
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        raise bad("has a path, query or fragment: a proxy URL is scheme://[user:password@]host:port")
    return entry


class ProxyPool:
    """Round robin over the proxies not in quarantine, in one process."""

    def __init__(
        self,
        proxies: list[Proxy],
        quarantine_seconds: float,
        stats: StatsCollector | None = None,
        clock: Callable[[], float] = time.monotonic,
    ):
        if not proxies:
            raise ValueError("a proxy pool needs at least one proxy")
        if quarantine_seconds < 0:
            raise ValueError(f"FARM_PROXY_QUARANTINE must be >= 0 seconds, got {quarantine_seconds}")
        self.proxies = proxies
        self.by_id = {proxy.id: proxy for proxy in proxies}
        self.quarantine_seconds = quarantine_seconds
        self.stats = stats
        self.clock = clock
        self.until: dict[str, float] = {}  # proxy id -> when (clock) its quarantine ends
        self._next = 0
        self._waiting = False  # every proxy quarantined, said once in the log

    def next(self) -> tuple[Proxy | None, float]:
        """(the next proxy free, 0) or (None, seconds until one is free)."""
        now = self.clock()
        count = len(self.proxies)
        for step in range(count):
            index = (self._next + step) % count
            proxy = self.proxies[index]
            if self.until.get(proxy.id, 0.0) <= now:
                self._next = index + 1
                return proxy, 0.0
        return None, max(MIN_WAIT, min(self.until[proxy.id] for proxy in self.proxies) - now)

    def assign(self, request: Request) -> float:
        """Send ``request`` through the next proxy free: 0. None free: the seconds to wait."""
        proxy, wait = self.next()
        if proxy is None:
            self.none_free(wait)
            return wait
        self.send_through(proxy, request)
        return 0.0

    def none_free(self, wait: float) -> None:
        """Every proxy is quarantined: counted, and said once in the log until one is used again."""
        self._inc("farm/proxy/none_free")
        if not self._waiting:
            self._waiting = True
            logger.warning("farm: every proxy is quarantined; the crawl waits %.0fs for the first to come back", wait)

    def send_through(self, proxy: Proxy, request: Request) -> None:
        """``request`` goes through ``proxy``."""
        self._waiting = False
        request.meta["proxy"] = proxy.url  # HttpProxyMiddleware makes the credentials a header
        FarmMeta.of(request).proxy = proxy.id
        self._inc(f"farm/proxy/used/{proxy.label}")

    def quarantine(self, proxy_id: str | None, why: str, seconds: float | None = None) -> bool:
        """The proxy drew a block (or cannot be reached): out of the round for ``seconds`` (None:
        FARM_PROXY_QUARANTINE). False for a request that went through no proxy of this pool."""
        proxy = self.by_id.get(proxy_id) if proxy_id is not None else None
        if proxy is None:
            return False
        if seconds is None:
            seconds = self.quarantine_seconds
        until = self.clock() + seconds
        if self.until.get(proxy.id, 0.0) < until:
            self.until[proxy.id] = until
        self._inc("farm/proxy/quarantined")
        self._inc(f"farm/proxy/quarantined/{proxy.label}")
        logger.warning("farm: proxy %s quarantined for %.0fs: %s", proxy.label, seconds, why)
        return True

    def _inc(self, key: str) -> None:
        if self.stats is not None:
            self.stats.inc_value(key)


def take_proxy(pool: ProxyPool | None, request: Request) -> float:
    """0 once ``request`` has its proxy (or the crawl uses none), else the seconds until one is free."""
    return 0.0 if pool is None else pool.assign(request)


def proxy_pool_from(
    crawler: Crawler, make_pool: Callable[[list[Proxy], float], ProxyPool] | None = None
) -> ProxyPool | None:
    """The crawl's proxy pool from FARM_PROXIES (None without); ``make_pool(proxies, seconds)``
    makes it when the backend shares it (farm.crawl.backends.redis.proxies), else it is a ProxyPool."""
    settings = crawler.settings
    proxies = parse_proxies(settings.get("FARM_PROXIES"))
    if not proxies:
        return None
    if not settings.getbool("HTTPPROXY_ENABLED"):
        raise ValueError(
            "FARM_PROXIES needs HTTPPROXY_ENABLED=True: Scrapy's HttpProxyMiddleware sends each proxy's credentials"
        )
    seconds = settings.getfloat("FARM_PROXY_QUARANTINE")
    if make_pool is None:
        return ProxyPool(proxies, seconds, crawler.stats)
    return make_pool(proxies, seconds)
