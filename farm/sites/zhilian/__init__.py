"""智联招聘 (docs/sites.md §3): its server-rendered search page and its 安全验证 wall.

The package is the site (docs/addon.md): spider.py crawls it, salary.py reads its salary texts,
cities.py maps its cities, sandbox.py imitates it (``farm sandbox``) and wall.py walls it there
(``--walls``); ``SITE`` names them for the registry (farm.sites).
"""

from farm.sites.site import Site
from farm.sites.zhilian.cities import CITY_CODES, CODE_FORM, CODE_PATTERN
from farm.sites.zhilian.salary import GRAMMAR

SITE = Site(
    name="zhilian",
    title="智联招聘",
    spider="farm.sites.zhilian.spider.ZhilianSpider",
    cities=CITY_CODES,
    code_pattern=CODE_PATTERN,
    code_form=CODE_FORM,
    salary=GRAMMAR,
    colour="#5f3dc4",
    sandbox="farm.sites.zhilian.sandbox",
    sandbox_wall="farm.sites.zhilian.wall",
    defaults={"base_url": "https://www.zhaopin.com", "rate": 0.33, "max_pages": 15},
)
