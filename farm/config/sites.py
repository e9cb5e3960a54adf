"""One site's settings, ``FARM_<SITE>_*``: its spider's ``site`` (or ``name``) in capitals.

A site package has its own defaults (its record's, farm.sites: ``site_defaults``). farm's three's are
rates polite enough to crawl for hours, what public crawlers of these sites report the sites tolerate
from one IP (docs/sites.md). Boss is the strictest (its stoken and captcha walls come within minutes at
a few requests per second), 51job's Aliyun WAF throttles bursts, zhilian's SSR pages are heavy HTML. The
demo, the tests and the benchmarks set 0 (no limit) for the sandbox. Any other site (a project's own
``LeaseSpider``) whose settings do not say is crawled politely: no base URL (its spider names the
setting to set), one request every two seconds, ten pages a keyword; never "no limit" for a site farm
knows nothing of.

A site's setting is read from Scrapy's settings; for a site package's (farm's three, a FARM_SITE_PACKAGES
package), else from the environment.
"""

import os
import re
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, ValidationInfo, field_validator

from farm.config.base import about, checked, setting
from farm.config.kinds import BASE_URL, CEILING, IMPERSONATE, MAX_PAGES, RATE
from farm.sites import sites

# a site's setting: FARM_<SITE>_<FIELD> (a site's name takes a-z, 0-9 and _, farm.sites.site)
SITE_KEY = re.compile(r"FARM_(?P<site>[A-Z][A-Z0-9_]{0,15}?)_(?P<field>BASE_URL|RATE|CEILING|MAX_PAGES|IMPERSONATE)")


def site_key(site: str, name: str) -> str:
    """The setting of field ``name`` of ``site``'s SiteConfig, e.g. FARM_BOSS_RATE."""
    return f"FARM_{site.upper()}_{name.upper()}"


class SiteConfig(BaseModel):
    """One site's settings. ``base_url`` "": none given (the site's spider refuses to start without one).
    ``impersonate`` None: FARM_IMPERSONATE's (``FarmConfig.site`` gives it resolved)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    base_url: Annotated[
        str,
        setting(
            BASE_URL,
            "where the site's spider sends its requests: the real site, a mirror, a proxy, or the sandbox; "
            "a site of the project's own without one does not start, and says which setting to set",
        ),
    ] = ""
    rate: Annotated[
        float,
        setting(
            RATE,
            "requests per second to the site from one identity (each proxy of `FARM_PROXIES`, or this "
            "machine's own address: the fleet's sum grows with its proxies, see [Crawling](crawling.md)), "
            "each gap jittered by half either way; `0`: no limit (see *Politeness*)",
        ),
    ] = 0.5
    max_pages: Annotated[
        int,
        setting(
            MAX_PAGES,
            "page cap per keyword. The sites' own caps: Boss 10 pages (of 15), 51job 50 pages (of 20, about "
            "1,000 results; above 50 its keywords end `partial`), 智联 50 pages or 1,000 results; `farm "
            "stats` and the report show per site and keyword what the site said it holds against what the "
            "cap let farm take ([sites.md §4.2](sites.md))",
        ),
    ] = 10
    impersonate: Annotated[
        str | None,
        setting(
            IMPERSONATE,
            "the site's own `FARM_IMPERSONATE`; empty: Scrapy's own client for that site",
            shown="unset (`FARM_IMPERSONATE`'s)",
        ),
    ] = None
    ceiling: Annotated[
        float,
        setting(
            CEILING,
            "requests per second to the site from every identity and every worker together; `0`: no "
            "ceiling, each identity keeps its own pace",
        ),
    ] = 0.0

    @field_validator("*", mode="plain")
    @classmethod
    def _parsed(cls, raw: Any, info: ValidationInfo) -> Any:
        name = info.field_name or ""
        declared = about(cls.model_fields[name]) if name else None
        if declared is None or raw is None:
            return raw
        return declared.kind.read(site_key(info.data.get("name", ""), name), raw)

    def key(self, name: str) -> str:
        """The setting a field reads, e.g. FARM_ACME_MAX_PAGES."""
        return site_key(self.name, name)

    @classmethod
    def fields(cls) -> tuple[str, ...]:
        """The fields that are settings, in the order declared."""
        return tuple(name for name, f in cls.model_fields.items() if about(f) is not None)

    @classmethod
    def from_settings(cls, settings: Any, name: str) -> "SiteConfig":
        """Site ``name``'s settings; those not given, farm's defaults for it (or the polite ones)."""
        name = name.lower()
        defaults = site_defaults()
        values: dict[str, Any] = {}
        for field in cls.fields():
            key, blank = site_key(name, field), about(cls.model_fields[field]).kind.blank  # type: ignore[union-attr]
            raw = settings.get(key) if settings is not None else None
            if (raw is None or (raw == "" and not blank)) and name in defaults:
                raw = os.environ.get(key)
            if raw is not None and (raw != "" or blank):
                values[field] = raw
        given = defaults.get(name)
        own = given.model_dump(exclude={"name"}) if given is not None else {}
        return checked(cls, name=name, **{**own, **values})


def site_defaults() -> dict[str, SiteConfig]:
    """Each site package's own defaults, by name: its record's (farm.sites), checked as settings are."""
    return {site.name: checked(SiteConfig, name=site.name, **site.defaults) for site in sites() if site.defaults}


def sites_environment() -> dict[str, Any]:
    """The site packages' settings as Scrapy's settings hold them: the environment's, else the default
    (an impersonation of their own only where the environment gives one)."""
    values: dict[str, Any] = {}
    for site in site_defaults().values():
        for field in SiteConfig.fields():
            key = site_key(site.name, field)
            raw = os.environ.get(key)
            value = raw if raw is not None and (raw != "" or field == "impersonate") else getattr(site, field)
            if value is not None:
                values[key] = value
    return values
