"""51job (docs/sites.md §2): its signed search API, behind Aliyun's WAF.

The package is the site (docs/addon.md): spider.py crawls it, salary.py reads its salary texts,
cities.py maps its cities, sandbox.py imitates it (``farm sandbox``) and wall.py walls it there
(``--walls``); ``SITE`` names them for the registry (farm.sites).
"""

from farm.sites.qcwy.cities import CITY_CODES, CODE_FORM, CODE_PATTERN
from farm.sites.qcwy.salary import GRAMMAR
from farm.sites.site import Site

SITE = Site(
    name="qcwy",
    title="51job",
    spider="farm.sites.qcwy.spider.QcwySpider",
    cities=CITY_CODES,
    code_pattern=CODE_PATTERN,
    code_form=CODE_FORM,
    salary=GRAMMAR,
    colour="#e8590c",
    sandbox="farm.sites.qcwy.sandbox",
    sandbox_wall="farm.sites.qcwy.wall",
    defaults={"base_url": "https://we.51job.com", "rate": 0.5, "max_pages": 50},
)
