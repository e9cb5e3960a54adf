"""What each setting takes: the kinds farm's settings are read as.

A ``Kind`` says what a setting takes (for its error line and docs/settings.md) and parses a value
given as text, a number or a list into its type. ``Kind.read(key, raw)`` is the one place a bad
value becomes a ``SettingError``: one line naming the setting, showing the value (secrets masked,
control characters escaped) and saying what it takes.

A value only the part that uses it can judge (a database URL with its driver's options, a file of
proxies, a browser's impersonation target) is parsed by that part: its kind names the parser as
``"module:function"``, imported when a value is first read, so that reading the settings imports
neither SQLAlchemy nor the crawl.
"""

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from importlib import import_module
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from farm.display import escape, without_secrets
from farm.errors import Invalid, SettingError

# the longest time any setting may give, in seconds: beyond it dates overflow (ten years)
SECONDS_MAX = 10 * 366 * 24 * 3600
LOG_LEVELS = ("CRITICAL", "ERROR", "WARNING", "INFO", "DEBUG")
# the largest page cap a keyword's row can hold its pages done out of order for
# (farm.state.models.max_pages_that_fit; a test holds them equal)
MAX_PAGES_MOST = 283


@dataclass(frozen=True)
class Kind:
    takes: str  # what the setting takes, for the error line and docs/settings.md
    # the typed value, or ValueError (Invalid says more; SettingError is the whole line); or the
    # "module:function" of the part that parses it
    parser: Callable[[object], object] | str
    blank: bool = False  # "" is a value of its own; otherwise "" is "not given": the default

    def parse(self, raw: object) -> object:
        """``raw`` parsed; ValueError when it cannot be."""
        parser = self.parser
        if isinstance(parser, str):
            module, name = parser.split(":")
            parser = getattr(import_module(module), name)
        return parser(raw)

    def read(self, key: str, raw: object) -> object:
        """``raw``, the value of setting ``key``, parsed; SettingError (one line) when it cannot be."""
        try:
            return self.parse(raw)
        except Invalid as exc:
            raise SettingError(f"{key}={shown(raw)} {exc}; it takes {self.takes}") from None
        except SettingError:
            raise
        except (ValueError, TypeError, OverflowError):
            raise SettingError(f"{key}={shown(raw)} cannot be used: it takes {self.takes}") from None


def shown(raw: object) -> str:
    """A value as an error line shows it: secrets masked, control characters escaped, at most 80 characters."""
    value = escape(
        without_secrets(
            raw if isinstance(raw, str) else ",".join(map(str, raw)) if isinstance(raw, (list, tuple)) else raw
        )
    )
    if len(value) > 80:
        value = value[:77] + "..."
    return repr(value)


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
    name = str(raw).strip()
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):  # a zone this machine does not know
        raise ValueError(raw) from None
    return name


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


def _class_path(raw):
    path = str(raw if raw is not None else "").strip()
    if path and not re.fullmatch(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)+", path):
        raise ValueError(raw)
    return path  # named, not imported: whoever uses it loads it


def _module_paths(raw):
    paths = raw.replace(",", " ").split() if isinstance(raw, str) else [str(path).strip() for path in raw or ()]
    for path in paths:
        if not re.fullmatch(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*", path):
            raise Invalid(f"names {path!r}, which is no module's import path")
    return tuple(paths)  # named, not imported: the site registry (farm.sites) imports them


def _base_url(raw):
    url = str(raw if raw is not None else "").strip()
    if url:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise Invalid("is not an http(s) URL")
    return url


def _urls(raw):
    if not raw:
        return ()
    if isinstance(raw, str):
        return tuple(raw.split())  # an apprise URL may hold commas: spaces separate them
    return tuple(str(url).strip() for url in raw if str(url).strip())


DB_URL = Kind(
    "a SQLAlchemy URL of a database kept on disk, e.g. sqlite:///farm.db, "
    "mysql+pymysql://user:password@host:3306/farm or postgresql+psycopg://user:password@host:5432/farm",
    "farm.state.engine:setting_url",
)
REDIS_URL = Kind("nothing (no Redis), or a Redis URL, e.g. redis://host:6379/0", _redis_url)
TIMEZONE = Kind("an IANA time zone name, e.g. Asia/Shanghai", _timezone)
PROXIES = Kind(
    "nothing, a comma-separated list of proxy URLs (http://[user:password@]host:port), or the "
    "path of a file with one a line",
    "farm.crawl.proxies:setting_proxies",
)
IMPERSONATE = Kind(
    "chrome, a curl_cffi Chrome target such as chrome146, or nothing for Scrapy's own client",
    "farm.sessions.identity:check_target",
    blank=True,
)
MODULE_PATHS = Kind(
    "nothing, or packages' import paths separated by commas or spaces, e.g. myproject.sites.acme", _module_paths
)
CLASS_PATH = Kind("a class's import path, e.g. myproject.backends.MyBackend", _class_path)
BASE_URL = Kind("the site's address, an http(s) URL, e.g. https://jobs.example.com", _base_url)
RATE = number(0, 1000, takes="requests per second from 0 (no limit) to 1000")
CEILING = number(0, 1000, takes="requests per second from 0 (no ceiling) to 1000")
MAX_PAGES = whole(
    1,
    MAX_PAGES_MOST,
    f"a whole number of pages from 1 to {MAX_PAGES_MOST} (the pages a keyword may have done out of "
    "order must fit its row)",
)
URLS = Kind("apprise URLs separated by spaces, or a list of them", _urls)
PORT = whole(0, 65535, "a port number from 1 to 65535, or 0 for none")
SHARE = number(0, 1, takes="a share from 0 to 1")
