"""A client identity: one record of what the browser that earns a session and the plain requests that carry
it present, at every layer a WAF compares.

A session a site grants is bound to the client that earned it (the token is computed from the user agent,
and a WAF compares fingerprints), so the browser (farm.sessions.disguise dresses it) and the plain requests
(farm.sessions.handler sends them) present this record alone: the User-Agent, the client hints (brands
derived as Chromium derives them from its major version, full versions, platform, mobile),
``navigator.platform``, the languages and Accept-Language, the time zone, the viewport and screen, and the
TLS/HTTP2 fingerprint (a curl_cffi Chrome target). It is true of the browser actually driven: the major and
full version are read from the machine's Chromium, its brands are Chromium's own (no Google Chrome brand the
engine never reports), its platform the machine's. docs/walls.md says what is chosen where curl_cffi's
newest target and the engine differ.

``FARM_IMPERSONATE=""`` is Scrapy's own client, which claims nothing: ``ClientIdentity.plain()`` sends no
client hint and leaves Scrapy's User-Agent.
"""

import platform as host_platform
import re
import subprocess
from dataclasses import dataclass

from curl_cffi.requests import BrowserType

_CHROME = re.compile(r"chrome(\d+)")
_VERSION = re.compile(r"(\d+)\.(\d+)\.(\d+)\.(\d+)")

# Chromium's components/embedder_support/user_agent_utils.cc: GenerateBrandVersionList and
# GetGreasedUserAgentBrandVersion, seeded by the major version
GREASE_CHARS = (" ", "(", ":", "-", ".", "/", ")", ";", "=", "?", "_")
GREASE_VERSIONS = ("8", "99", "24")
ORDERS = ((0, 1, 2), (0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0))

NAVIGATE_ACCEPT = (
    "text/html,application/xhtml+xml,application/xml;q=0.9,image/jxl,image/avif,image/webp,image/apng,*/*;q=0.8,"
    "application/signed-exchange;v=b3;q=0.7"
)
ACCEPT_ENCODING = "gzip, deflate, br, zstd"
FETCH = "fetch"  # a page's fetch()/XHR: cors, empty, u=1, i
NAVIGATE = "navigate"  # a document loaded in the tab: navigate, document, u=0, i
KINDS = (FETCH, NAVIGATE)

# The order Chrome sends its headers in over HTTP/2, by kind; a header not named here (a site's own, such as
# X-Requested-With, From-Domain, sign) goes where Chrome puts a page's own headers: after sec-ch-ua
ORDER = {
    FETCH: (
        "sec-ch-ua-platform",
        "user-agent",
        "accept",
        "sec-ch-ua",
        "*",
        "sec-ch-ua-mobile",
        "origin",
        "sec-fetch-site",
        "sec-fetch-mode",
        "sec-fetch-dest",
        "referer",
        "accept-encoding",
        "accept-language",
        "cookie",
        "priority",
    ),
    NAVIGATE: (
        "sec-ch-ua",
        "sec-ch-ua-mobile",
        "sec-ch-ua-platform",
        "upgrade-insecure-requests",
        "user-agent",
        "accept",
        "sec-fetch-site",
        "sec-fetch-mode",
        "sec-fetch-user",
        "sec-fetch-dest",
        "referer",
        "*",
        "accept-encoding",
        "accept-language",
        "cookie",
        "priority",
    ),
}


def chrome_targets() -> list[str]:
    """curl_cffi's desktop Chrome targets, oldest first."""
    return sorted(
        (b.value for b in BrowserType if _CHROME.fullmatch(b.value)), key=lambda name: int(name.removeprefix("chrome"))
    )


def check_target(raw: object) -> str:
    """A setting's impersonation target: "" (Scrapy's own client), "chrome" (the newest) or a Chrome target."""
    value = str(raw if raw is not None else "").strip().lower()
    if value in ("", "chrome") or value in chrome_targets():
        return value
    raise ValueError(raw)


def grease(major: int) -> tuple[str, str]:
    """The GREASE brand and its version Chromium ``major`` reports: 152 gives ("Not?A_Brand", "24")."""
    chars = len(GREASE_CHARS)
    brand = f"Not{GREASE_CHARS[major % chars]}A{GREASE_CHARS[(major + 1) % chars]}Brand"
    return brand, GREASE_VERSIONS[major % len(GREASE_VERSIONS)]


def brand_list(major: int, version: str, brand: str | None = None) -> list[tuple[str, str]]:
    """The brands Chromium ``major`` reports, each with ``version`` (the major, or the full version for the
    full version list): GREASE and Chromium, and ``brand`` (Google Chrome's build adds its own) when given."""
    greasey, greasey_version = grease(major)
    if version.count(".") == 3:  # the full version list gives the GREASE brand a full version too
        greasey_version += ".0.0.0"
    if brand is None:
        brands: list[tuple[str, str]] = [("", "")] * 2
        brands[major % 2] = (greasey, greasey_version)
        brands[(major + 1) % 2] = ("Chromium", version)
        return brands
    order = ORDERS[major % len(ORDERS)]
    brands = [("", "")] * 3
    brands[order[0]] = (greasey, greasey_version)
    brands[order[1]] = ("Chromium", version)
    brands[order[2]] = (brand, version)
    return brands


def sec_ch_ua(brands: list[tuple[str, str]]) -> str:
    return ", ".join(f'"{name}";v="{version}"' for name, version in brands)


def engine_version(executable: str) -> str | None:
    """The full version ("156.0.8078.114") of the Chromium at ``executable``, as it says itself; None when it
    cannot be run."""
    try:
        shown = subprocess.run([executable, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    found = _VERSION.search(shown)
    return found.group(0) if found else None


@dataclass(frozen=True)
class ClientIdentity:
    """What one client looks like to a site. ``impersonate``: curl_cffi's target ("" for Scrapy's client);
    ``major`` and ``full_version``: the Chrome claimed (the engine's); ``brand``: a brand besides Chromium
    (None: Chromium alone, as Debian's build reports)."""

    impersonate: str
    major: int
    full_version: str
    brand: str | None = None
    platform: str = "Linux"  # UA-CH platform
    platform_version: str = ""  # what Chromium on Linux reports
    architecture: str = "x86"
    bitness: str = "64"
    mobile: bool = False
    navigator_platform: str = "Linux x86_64"
    ua_os: str = "X11; Linux x86_64"  # the User-Agent's platform part
    languages: tuple[str, ...] = ("zh-CN", "zh")
    timezone: str = "Asia/Shanghai"
    viewport: tuple[int, int] = (1920, 947)
    screen: tuple[int, int] = (1920, 1080)

    @classmethod
    def of(cls, target: str, engine: str | None = None) -> "ClientIdentity":
        """The identity of a crawl: Chrome at ``engine``'s version (the browser farm drives, read from it;
        None: the target's own major), fetched plain with ``target``'s fingerprint ("chrome": the newest
        curl_cffi knows; "": Scrapy's own client, see ``headers``)."""
        newest = chrome_targets()[-1]
        name = newest if target in ("", "chrome") else target
        if engine is None:
            engine = f"{int(name.removeprefix('chrome'))}.0.0.0"
        major = int(engine.split(".", 1)[0])
        machine = host_platform.machine() or "x86_64"
        arm = machine in ("aarch64", "arm64")
        return cls(
            impersonate=name if target else "",
            major=major,
            full_version=engine,
            architecture="arm" if arm else "x86",
            navigator_platform=f"Linux {machine}",
            ua_os=f"X11; Linux {machine}",
        )

    @property
    def user_agent(self) -> str:
        """Chrome's reduced User-Agent: the major version only."""
        return (
            f"Mozilla/5.0 ({self.ua_os}) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/{self.major}.0.0.0 Safari/537.36"
        )

    @property
    def brands(self) -> list[tuple[str, str]]:
        return brand_list(self.major, str(self.major), self.brand)

    @property
    def full_version_list(self) -> list[tuple[str, str]]:
        return brand_list(self.major, self.full_version, self.brand)

    @property
    def accept_language(self) -> str:
        """Chrome's Accept-Language for its languages: each after the first a tenth less (zh-CN,zh;q=0.9)."""
        shown = [self.languages[0]]
        shown += [f"{lang};q={max(1, 10 - n) / 10:g}" for n, lang in enumerate(self.languages[1:], 1)]
        return ",".join(shown)

    def headers(self, kind: str) -> dict[str, str]:
        """The headers Chrome sends of itself on a request of ``kind`` (FETCH or NAVIGATE), the site's
        own (Referer, a fetch's Accept, a page's custom headers) aside; none for Scrapy's own client."""
        if not self.impersonate:
            return {}
        hints = {
            "sec-ch-ua": sec_ch_ua(self.brands),
            "sec-ch-ua-mobile": "?1" if self.mobile else "?0",
            "sec-ch-ua-platform": f'"{self.platform}"',
            "User-Agent": self.user_agent,
        }
        if kind == FETCH:  # the page's script gives its own Accept
            fetch = {"Sec-Fetch-Site": "same-origin", "Sec-Fetch-Mode": "cors", "Sec-Fetch-Dest": "empty"}
            return {**hints, **fetch, **self._tail("u=1, i")}
        navigate = {"Upgrade-Insecure-Requests": "1", "Accept": NAVIGATE_ACCEPT, "Sec-Fetch-Site": "same-origin"}
        document = {"Sec-Fetch-Mode": "navigate", "Sec-Fetch-User": "?1", "Sec-Fetch-Dest": "document"}
        return {**hints, **navigate, **document, **self._tail("u=0, i")}

    def _tail(self, priority: str) -> dict[str, str]:
        return {"Accept-Encoding": ACCEPT_ENCODING, "Accept-Language": self.accept_language, "Priority": priority}

    def ua_metadata(self) -> dict:
        """The client hints as Chromium's DevTools protocol takes them (Emulation.setUserAgentOverride)."""
        return {
            "brands": [{"brand": b, "version": v} for b, v in self.brands],
            "fullVersionList": [{"brand": b, "version": v} for b, v in self.full_version_list],
            "fullVersion": self.full_version,
            "platform": self.platform,
            "platformVersion": self.platform_version,
            "architecture": self.architecture,
            "model": "",
            "mobile": self.mobile,
            "bitness": self.bitness,
            "wow64": False,
        }


def header_order(names: list[str], kind: str) -> str:
    """libcurl-impersonate's header order (CURLOPT_HTTPHEADER_ORDER) for a request of ``kind`` carrying
    ``names``: Host first (HTTP/1.1), then Chrome's order, a page's own headers where Chrome puts them."""
    own = [name.lower() for name in names if name.lower() not in ORDER[kind]]
    order = [name for part in ORDER[kind] for name in (own if part == "*" else [part])]
    return ",".join(["host", *order])


def in_order(headers: list[tuple[str, str]], kind: str) -> list[tuple[str, str]]:
    """``headers`` in the order Chrome sends a request of ``kind``: its own where it puts them, the page's own
    (not named in ORDER) where a page's go, each group in the order given."""
    order = ORDER.get(kind, ORDER[NAVIGATE])
    rank = {name: n for n, name in enumerate(order)}
    others = rank["*"]
    ranked = sorted(enumerate(headers), key=lambda item: (rank.get(item[1][0].lower(), others), item[0]))
    # the client hints' names as Chrome writes them (lower case, as HTTP/2 writes every name)
    return [(name.lower() if name.lower().startswith("sec-ch-") else name, value) for _, (name, value) in ranked]
