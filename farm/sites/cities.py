"""A keyword's city as its site takes it: a name of the site's map, or a code of the site's own.

A keyword's ``city`` is a name of its source's ``cities`` (北京) or a code of that site (101010100 for
boss), each site's own (its package's cities.py, through the registry, farm.sites). Keyword validation
(``farm keywords import`` / ``add``) checks a city by the same map and pattern the site's spider asks
with, so a keyword no crawl could use is refused at input, and keeps one spelling of each
(``canonical_city``), so one city is one search. No Scrapy here: the ``farm`` command and the store import it.
"""

from farm.sites import get


def city_code(source: str, city: str) -> str | None:
    """The site code of ``city`` (a name of the source's map, or a code itself), or None."""
    site = get(source)
    if site.code_pattern.fullmatch(city):
        return city
    return site.cities.get(city)


def canonical_city(source: str, city: str) -> str | None:
    """The one spelling farm keeps of ``city`` for ``source``: the first name of the source's map with
    the same code (530 and 北京 are 北京 on zhilian, 广东省 is 广东 on qcwy), else the code itself; None for
    a city the source does not know."""
    code = city_code(source, city)
    if code is None:
        return None
    return next((name for name, named in get(source).cities.items() if named == code), code)


def accepted_cities(source: str) -> str:
    """What a city of ``source`` may be, for a message."""
    site = get(source)
    return f"one of {', '.join(site.cities)} or a {source} city code ({site.code_form})"
