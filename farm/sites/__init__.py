"""The sites farm crawls: one registry of :class:`Site` records, the one place every part asks.

Each site is a package (``farm/sites/boss/``: its spider, salary forms, cities and sandbox imitation;
docs/addon.md) whose ``SITE`` is registered here: farm's three (``FARM_PACKAGES``), the packages a project
names in its ``FARM_SITE_PACKAGES`` setting (``register_packages``), and a project's own ``LeaseSpider``
subclasses of its ``SPIDER_MODULES`` (farm.sites.project: a record from the spider's ``city_codes``
and ``code_pattern``). The ``farm`` command's ``--source`` options and help, keyword
validation, the salary grammars, the sites' settings and their defaults, the report's charts, ``farm
doctor``, the API's source field and the sandbox's routes then take a registered site as they take
the three. No Scrapy here: the ``farm`` command and the store import it.
"""

import importlib
import re
from collections.abc import Iterable

from farm.sites.site import Site

__all__ = [
    "FARM_PACKAGES",
    "Site",
    "find",
    "get",
    "known_sources",
    "named",
    "packages",
    "register",
    "register_package",
    "register_packages",
    "register_site",
    "sites",
    "spider_modules",
]

# farm's own site packages, registered at import
FARM_PACKAGES = ("farm.sites.boss", "farm.sites.qcwy", "farm.sites.zhilian")

_REGISTRY: dict[str, Site] = {}
_PACKAGES: dict[str, str] = {}  # the site packages registered beyond farm's own: their paths by site name


def register(site: Site) -> Site:
    """Register ``site`` (again: the later record replaces the earlier of its name); the record."""
    _REGISTRY[site.name] = site
    return site


def register_package(path: str) -> Site:
    """Import the site package at ``path`` (``farm.sites.boss``) and register its ``SITE``."""
    site = getattr(importlib.import_module(path), "SITE", None)
    if not isinstance(site, Site):
        raise ValueError(f"site package {path}: it has no SITE, a farm.sites.Site (docs/addon.md)")
    if path not in FARM_PACKAGES:
        _PACKAGES[site.name] = path
    return register(site)


def register_packages(paths: Iterable[str]) -> list[str]:
    """Register each site package of ``paths`` (FARM_SITE_PACKAGES'); their names."""
    return [register_package(path).name for path in paths if path]


def packages() -> tuple[str, ...]:
    """The site packages registered beyond farm's own: what a process the crawl starts registers again
    (the state writer reads each posting's salary by its site's forms)."""
    return tuple(path for name, path in _PACKAGES.items() if name in _REGISTRY)


def register_site(source: str, city_codes: dict[str, str], code_pattern: re.Pattern, code_form: str = "") -> Site:
    """A site known only by its spider (a project's own ``LeaseSpider``): its keywords are then checked
    by the same rules, a city being a name of ``city_codes`` or a code ``code_pattern`` matches."""
    return register(Site(name=source, cities=city_codes, code_pattern=code_pattern, code_form=code_form))


def find(name: str | None) -> Site | None:
    """The registered site of ``name``, or None."""
    return None if name is None else _REGISTRY.get(name)


def get(name: str) -> Site:
    """The registered site of ``name``; KeyError naming the known ones when there is none."""
    site = _REGISTRY.get(name)
    if site is None:
        raise KeyError(f"no site {name!r}; known: {named(known_sources())}")
    return site


def sites() -> tuple[Site, ...]:
    """Every registered site, farm's three first, then in the order registered."""
    return tuple(_REGISTRY.values())


def known_sources() -> tuple[str, ...]:
    """The sources a keyword may name: every registered site's name."""
    return tuple(_REGISTRY)


def named(names: Iterable[str]) -> str:
    """Names for a sentence: ``boss, qcwy and zhilian``."""
    names = list(names)
    return ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else "".join(names)


def spider_modules() -> list[str]:
    """The modules Scrapy finds the registered sites' spiders in (SPIDER_MODULES), in order."""
    return [site.spider_module for site in sites() if site.spider_module is not None]


register_packages(FARM_PACKAGES)
