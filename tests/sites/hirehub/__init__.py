"""HireHub: a fourth site, one JSON search (``/hh/search?city=&q=&page=``), as a site package of a project's own.

tests/integration/test_fourth_site.py registers it (FARM_SITE_PACKAGES=tests.sites.hirehub) and finds
it in every part that asks the registry, then crawls it in the sandbox.
"""

from farm.sites import Site
from tests.sites.hirehub.cities import CITY_CODES, CODE_FORM, CODE_PATTERN
from tests.sites.hirehub.salary import GRAMMAR

SITE = Site(
    name="hirehub",
    title="HireHub",
    spider="tests.sites.hirehub.spider.HireHubSpider",
    cities=CITY_CODES,
    code_pattern=CODE_PATTERN,
    code_form=CODE_FORM,
    salary=GRAMMAR,
    colour="#2f9e44",
    sandbox="tests.sites.hirehub.sandbox",
    defaults={"base_url": "https://www.hirehub.example", "rate": 1.5, "max_pages": 4},
    slider_shapes=("hirehub_puzzle",),
)
