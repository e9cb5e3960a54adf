"""FarmConfig: every farm setting, each declared once with its type, default, environment variable and
what it does; read and checked once, frozen.

``FarmConfig.from_settings(settings)`` gives each setting its Scrapy value (``-s NAME=value``, the
project's, the add-on's), else its environment variable's, else its default (farm.config.base), turns
it into its type and checks it; a bad one is a ``SettingError`` whose one line names the setting, shows
the value (secrets masked, control characters escaped) and says what it takes. Every command builds it
before it does anything: `farm ...` (farm.cli), `scrapy crawl` (farm.commands.crawl), `farm api`, and a
crawl built another way (farm.crawl.parts); a component gets the crawl's with ``FarmConfig.of(crawler)``,
and reads its fields, never the settings.

- ``FarmConfig``: a field is the setting ``FARM_<FIELD NAME>`` (or the key it names).
- ``SiteConfig``: one site's ``FARM_<SITE>_*`` (farm.config.sites), from ``config.site(name)``; every
  site the settings name a setting for is read and checked with the rest.
- ``Thresholds``: ``farm check``'s ``FARM_CHECK_*`` settings (farm.config.checks).

docs/settings.md lists every setting as this module declares it (``python -m farm.config.doc`` writes it).
"""

from collections.abc import Iterable
from typing import Annotated, Any

from pydantic import Field, model_validator

from farm.config.base import checked, setting
from farm.config.checks import Thresholds
from farm.config.crawling import CrawlSettings
from farm.config.kinds import MODULE_PATHS, URLS, number, text, whole
from farm.config.sites import SITE_KEY, SiteConfig, site_defaults
from farm.config.store import LOCAL_BACKEND, REDIS_BACKEND
from farm.errors import SettingError


class FarmConfig(CrawlSettings):
    """Every farm setting (the ``FARM_*`` ones, and the Scrapy settings farm tunes), typed and checked:
    the store's (farm.config.store), the crawl's (farm.config.crawling), and these."""

    api_token: Annotated[
        str,
        setting(
            text("nothing (loopback only), or the bearer token clients send"),
            "the bearer token every call to `farm api` must carry; unset, `farm api` serves a loopback address only",
        ),
    ] = ""
    api_max_body: Annotated[
        int,
        setting(
            whole(1024, 2**31, "a whole number of bytes from 1024, e.g. 1048576"),
            "bytes of a request body `farm api` reads; a larger one gets 413",
        ),
    ] = 1_048_576
    api_retry_after: Annotated[
        int,
        setting(
            whole(1, 86_400, "a whole number of seconds from 1 to 86400, e.g. 5"),
            "the `Retry-After` seconds of a 503 (the database unavailable)",
        ),
    ] = 5
    api_read_timeout: Annotated[
        float,
        setting(
            number(0, 86_400, above=True, takes="a number of seconds above 0, e.g. 10"),
            "seconds a request's head and body may take to arrive whole; a slower client gets 408 and is cut off",
        ),
    ] = 10.0
    salary_convert: Annotated[
        int,
        setting(
            whole(0, 1, "0 (monthly pay alone) or 1 (day, hour and year pay converted)"),
            "`farm report`'s salary figures: `0` of monthly pay alone; `1` also of pay by the day, the hour "
            "and the year, converted into a month's by the two factors below (a year's pay ÷ the months it "
            "is paid as, `·14薪`, or 12), which the report names beside the figures",
        ),
    ] = 0
    salary_days_a_month: Annotated[
        float,
        setting(
            number(0, 31, above=True, takes="a number of days above 0 to 31, e.g. 21.75"),
            "the conversion's days a month (China's statutory 21.75 working days)",
        ),
    ] = 21.75
    salary_hours_a_month: Annotated[
        float,
        setting(
            number(0, 744, above=True, takes="a number of hours above 0 to 744, e.g. 174"),
            "the conversion's hours a month (21.75 working days of 8 hours)",
        ),
    ] = 174.0
    site_packages: Annotated[
        tuple,
        setting(
            MODULE_PATHS,
            "site packages to crawl beside farm's own, each with its spider, cities, salary forms and sandbox "
            "imitation (see [The add-on](addon.md#a-site-package)): their spiders are found, their keywords "
            "taken, their settings read as farm's own sites' are",
            shown="unset (farm's own sites)",
        ),
    ] = ()
    alert_urls: Annotated[
        tuple,
        setting(URLS, "apprise URLs, separated by spaces, that `farm check` sends its failures to", shown="unset"),
    ] = ()
    # groups of their own
    checks: Thresholds = Field(default_factory=Thresholds)
    # the site packages' (farm.sites) and every site the settings name
    sites: tuple[SiteConfig, ...] = Field(default_factory=lambda: tuple(site_defaults().values()))

    @model_validator(mode="after")
    def _back_off_in_order(self) -> "FarmConfig":
        if self.block_base_delay > self.block_max_delay:
            raise SettingError(
                f"FARM_BLOCK_BASE_DELAY={self.block_base_delay:g} is above FARM_BLOCK_MAX_DELAY="
                f"{self.block_max_delay:g}: the back-off starts at the one and doubles up to the other"
            )
        return self

    @property
    def work_backend(self) -> str:
        """The work backend's class path: FARM_WORK_BACKEND, else the Redis backend with FARM_REDIS_URL,
        else the local one (named, not imported: the crawl loads it)."""
        return self.work_backend_class or (REDIS_BACKEND if self.redis_url else LOCAL_BACKEND)

    def site(self, name: str) -> SiteConfig:
        """Site ``name``'s settings, with FARM_IMPERSONATE's impersonation where it gives none of its own;
        a site the settings name no setting for has farm's defaults for it, or the polite ones."""
        name = name.lower()
        found = next((s for s in self.sites if s.name == name), None)
        found = found or site_defaults().get(name) or SiteConfig(name=name)
        return found if found.impersonate is not None else found.model_copy(update={"impersonate": self.impersonate})

    @classmethod
    def from_settings(cls, settings: Any) -> "FarmConfig":
        """Every setting parsed and checked; SettingError (one line) for the first bad one."""
        fields = cls.given(settings)
        return checked(cls, **fields, checks=Thresholds.from_settings(settings), sites=_sites_of(settings))

    @classmethod
    def of(cls, crawler: Any) -> "FarmConfig":
        """The crawl's configuration, built once."""
        config = getattr(crawler, "_farm_config", None)
        if config is None:
            config = crawler._farm_config = cls.from_settings(crawler.settings)
        return config


def _sites_of(settings: Any) -> tuple[SiteConfig, ...]:
    """The site packages (farm.sites) and every site the settings name a setting for, each read and checked."""
    named = {m.group("site").lower() for key in _keys(settings) if (m := SITE_KEY.fullmatch(str(key)))}
    return tuple(SiteConfig.from_settings(settings, name) for name in sorted(set(site_defaults()) | named))


def _keys(settings: Any) -> Iterable:
    if settings is None:
        return ()
    return settings.keys() if hasattr(settings, "keys") else iter(settings)
