"""A project's own sites: the ``LeaseSpider`` subclasses of its ``SPIDER_MODULES``.

farm knows three sites (farm.cities); a project that turns farm on with its add-on
(farm.addon) may crawl more, each a ``LeaseSpider`` subclass whose ``name`` is the
``source`` of its keywords. ``farm keywords import`` and ``farm keywords add`` load
the project's spiders first, so that such a site's keywords are checked by its own
``city_codes`` and ``code_pattern``, as the three sites' are.
"""

from scrapy.spiderloader import get_spider_loader

from farm.cities import register_site
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
