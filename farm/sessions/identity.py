"""A client identity: the browser farm's plain requests pass for, and the user agent that goes with it.

A session a site grants is bound to the client that earned it (the token is computed from the user agent,
and a WAF compares fingerprints), so the browser that earns a session and the plain requests that carry it
present one identity: the same User-Agent, the same client hints, and a TLS/HTTP2 fingerprint of the same
browser family (curl_cffi's Chrome targets; the browser is Chromium).
"""

import re
from dataclasses import dataclass

from curl_cffi.requests import BrowserType

_CHROME = re.compile(r"chrome(\d+)")


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


@dataclass(frozen=True)
class ClientIdentity:
    """What one client looks like to a site: ``impersonate`` is curl_cffi's target ("" for none)."""

    impersonate: str
    user_agent: str
    major: int

    @classmethod
    def of(cls, target: str) -> "ClientIdentity":
        """The identity of a Chrome target ("chrome": the newest curl_cffi knows; "": a plain client that
        still presents itself as that Chrome, so a session earned in the browser stays valid on it)."""
        newest = chrome_targets()[-1]
        name = newest if target in ("", "chrome") else target
        major = int(name.removeprefix("chrome"))
        agent = (
            "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
            f"Chrome/{major}.0.0.0 Safari/537.36"
        )
        return cls(impersonate=name if target else "", user_agent=agent, major=major)

    @property
    def headers(self) -> dict[str, str]:
        """The headers Chrome sends with this user agent (client hints included)."""
        return {
            "User-Agent": self.user_agent,
            "sec-ch-ua": f'"Chromium";v="{self.major}", "Google Chrome";v="{self.major}", "Not.A/Brand";v="99"',
            "sec-ch-ua-mobile": "?0",
            "sec-ch-ua-platform": '"Windows"',
            "Accept-Language": "zh-CN,zh;q=0.9,en;q=0.8",
        }
