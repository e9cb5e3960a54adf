"""farm: crawl job listings by (site, city, keyword) leases, no work lost and none done twice.

What a Scrapy project uses of farm, importable from here (docs/addon.md)::

    from farm import FarmAddon, JobPosting, LeaseSpider, Page, ParseError, Wall

Each is loaded when first asked for, so that ``import farm`` (and the ``farm`` command) stays light.
"""

from importlib import import_module

PUBLIC = {
    "FarmAddon": "farm.addon",
    "JobPosting": "farm.items",
    "LeaseSpider": "farm.spiders.base",
    "Page": "farm.spiders.base",
    "ParseError": "farm.errors",
    "Wall": "farm.sessions.wall",
}
__all__ = sorted(PUBLIC)


def __getattr__(name: str):
    module = PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'farm' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value  # asked once
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(PUBLIC))
