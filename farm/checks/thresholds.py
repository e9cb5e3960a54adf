"""The checks' thresholds: the ``FARM_CHECK_*`` settings (``-s``-able in a crawl, a project's
settings.py), typed with their defaults in farm.config (``Thresholds``); a bad one is one line naming it."""

from farm.config import Thresholds
from farm.errors import BadSetting, SettingError

__all__ = ["Thresholds", "thresholds_from"]


def thresholds_from(settings) -> Thresholds:
    """The thresholds in ``settings`` (Scrapy's Settings, or any mapping); BadSetting names a bad one."""
    try:
        return Thresholds.from_settings(settings)
    except SettingError as exc:
        raise BadSetting(str(exc)) from None
