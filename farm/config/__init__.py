"""farm's settings, each declared once (farm.config.base): its type, default, environment variable and
what it does; read from Scrapy's settings, else the environment, else the default; checked once.

``FarmConfig.from_settings(settings)`` (farm.config.model) reads them all; a bad one is one line naming
it. ``environment()`` is every setting as Scrapy's settings hold it before a crawl (farm.settings and
the add-on give it), and docs/settings.md lists them (``python -m farm.config.doc`` writes it).
"""

from typing import Any

from farm.config.checks import Thresholds
from farm.config.model import FarmConfig
from farm.config.sites import SiteConfig, site_defaults, site_key, sites_environment
from farm.config.store import LOCAL_BACKEND, REDIS_BACKEND
from farm.errors import SettingError

__all__ = [
    "LOCAL_BACKEND",
    "REDIS_BACKEND",
    "FarmConfig",
    "SettingError",
    "SiteConfig",
    "Thresholds",
    "site_defaults",
    "default",
    "environment",
    "read",
    "setting_key",
    "site_key",
]


def setting_key(name: str) -> str:
    """The setting a field of FarmConfig reads, e.g. FARM_LEASE_TIMEOUT for lease_timeout."""
    return FarmConfig.key(name)


def read(settings: Any, name: str) -> Any:
    """One setting of FarmConfig, from ``settings`` (None: none), else the environment, else its default;
    parsed and checked (SettingError names it)."""
    field = FarmConfig.model_fields[name]
    raw = FarmConfig.given(settings).get(name)
    if raw is None:
        raw = FarmConfig.environment_of(name)
    if raw is None:
        return field.get_default(call_default_factory=True)
    return FarmConfig.settings_fields()[name].kind.read(FarmConfig.key(name), raw)


def default(name: str) -> Any:
    """The default of FarmConfig's field ``name`` (or a Thresholds' one, ``checks.<name>``)."""
    group, _, field = name.rpartition(".")
    cls = Thresholds if group == "checks" else FarmConfig
    return cls.model_fields[field].get_default(call_default_factory=True)


def environment() -> dict[str, Any]:
    """Every setting as Scrapy's settings hold it before a crawl: its environment variable's value as
    given, else its default; farm's three sites' too. Nothing is parsed: a bad value is named when the
    settings are read (FarmConfig.from_settings), never at import."""
    return {**FarmConfig.environment(), **sites_environment(), **Thresholds.environment()}
