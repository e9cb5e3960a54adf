"""Boss直聘 (docs/sites.md §1): its web search XHR, the zpData JSON envelope and its security-check wall.

The package is the site (docs/addon.md): spider.py crawls it, salary.py reads its salary texts,
cities.py maps its cities, sandbox.py imitates it (``farm sandbox``) and wall.py walls it there
(``--walls``); ``SITE`` names them for the registry (farm.sites).
"""

from farm.sites.boss.cities import CITY_CODES, CODE_FORM, CODE_PATTERN
from farm.sites.boss.salary import GRAMMAR
from farm.sites.site import Site

SITE = Site(
    name="boss",
    title="Boss直聘",
    spider="farm.sites.boss.spider.BossSpider",
    cities=CITY_CODES,
    code_pattern=CODE_PATTERN,
    code_form=CODE_FORM,
    salary=GRAMMAR,
    colour="#0b7285",
    sandbox="farm.sites.boss.sandbox",
    sandbox_wall="farm.sites.boss.wall",
    defaults={"base_url": "https://www.zhipin.com", "rate": 0.2, "max_pages": 3},
    slider_shapes=("boss_35",),  # code 35: a captcha (spider.py's BLOCK_CODES)
    unread_shapes=("boss_code_",),  # a code spider.py has no name for
)
