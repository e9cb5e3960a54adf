"""A project's own sites: the packages its ``FARM_SITE_PACKAGES`` names and its ``LeaseSpider`` subclasses.

A project that turns farm on with its add-on (farm.addon) may crawl more sites than farm's three: a
site package it names in ``FARM_SITE_PACKAGES`` (docs/addon.md), or a ``LeaseSpider`` subclass of its
``SPIDER_MODULES`` whose ``name`` is the ``source`` of its keywords. ``load_sources`` registers them in
the registry (farm.sites), the one every part asks: the ``farm`` command's ``--source`` options,
keyword validation, ``farm doctor`` and the API's source field then take such a site as they take
the three, and its keywords are checked by its own cities and code pattern. It imports Scrapy and
the spiders: the ``farm`` command imports it only when it needs the project's sources.
"""

from scrapy.spiderloader import get_spider_loader

from farm.config import read
from farm.sites import find, known_sources, register_packages, register_site
from farm.spiders.base import LeaseSpider


def register_project_sites(settings) -> list[str]:
    """Register the site packages of the project's ``FARM_SITE_PACKAGES`` and the ``LeaseSpider`` sites of its
    spider modules that no record knows; their names."""
    names = register_packages(read(settings, "site_packages"))
    loader = get_spider_loader(settings)  # the project's SPIDER_MODULES, as `scrapy crawl` finds them
    for name in loader.list():
        spidercls = loader.load(name)
        if issubclass(spidercls, LeaseSpider) and find(name) is None:
            register_site(name, spidercls.city_codes, spidercls.code_pattern)
            names.append(name)
    return names


def load_sources(settings) -> tuple[str, ...]:
    """Every source a keyword may name under ``settings``: farm's three sites, then the project's own.

    Raises ImportError or ValueError when the project's sites or spiders cannot be loaded.
    """
    register_project_sites(settings)
    return known_sources()
