"""The sites a keyword may name: farm's three and a project's own ``LeaseSpider`` subclasses.

farm knows three sites (farm.cities); a project that turns farm on with its add-on
(farm.addon) may crawl more, each a ``LeaseSpider`` subclass of its ``SPIDER_MODULES``
whose ``name`` is the ``source`` of its keywords. ``load_sources`` registers them in
farm.cities, the one registry every part asks (``farm.cities.known_sources``): the
``farm`` command's ``--source`` options, keyword validation, ``farm doctor`` and the
API's source field then take such a site as they take the three, and its keywords are
checked by its own ``city_codes`` and ``code_pattern``.
"""

from scrapy.spiderloader import get_spider_loader

from farm.cities import known_sources, register_site
from farm.spiders.base import LeaseSpider
from farm.state.models import SOURCES


def register_project_sites(settings) -> list[str]:
    """Register the sites of the project's own spider modules (farm's are known already); their names."""
    loader = get_spider_loader(settings)  # the project's SPIDER_MODULES, as `scrapy crawl` finds them
    names = []
    for name in loader.list():
        spidercls = loader.load(name)
        if issubclass(spidercls, LeaseSpider) and name not in SOURCES:
            register_site(name, spidercls.city_codes, spidercls.code_pattern)
            names.append(name)
    return names


def load_sources(settings) -> tuple[str, ...]:
    """Every source a keyword may name under ``settings``: farm's three sites, then the project's own.

    Raises ImportError or ValueError when the project's spiders cannot be loaded.
    """
    register_project_sites(settings)
    return known_sources()
