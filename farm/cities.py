"""Each site's cities: the names farm maps to the site's own codes, and what a site code looks like.

A keyword's ``city`` is a name of its source's map (北京) or a code of that site
(101010100 for boss). The spiders take their ``city_codes`` and ``code_pattern``
from here, and keyword validation (``farm keywords import`` / ``add``) checks a
city against the same, so a keyword no crawl could use is refused at input, and
keeps one spelling of each (``canonical_city``), so one city is one search.
No Scrapy here: the ``farm`` command and the store import it.
"""

import re

CITY_CODES: dict[str, dict[str, str]] = {
    "boss": {  # docs/sites.md §1.4
        "全国": "100010000",
        "北京": "101010100",
        "上海": "101020100",
        "广州": "101280100",
        "深圳": "101280600",
        "杭州": "101210100",
        "成都": "101270100",
        "武汉": "101200100",
        "南京": "101190100",
        # not in docs/sites.md: Boss' usual codes for the cities the other two sites list
        "天津": "101030100",
        "重庆": "101040100",
        "西安": "101110100",
        "苏州": "101190400",
        "佛山": "101280800",
    },
    "qcwy": {  # docs/sites.md §2.4
        "全国": "000000",
        "北京": "010000",
        "上海": "020000",
        "广州": "030200",
        "深圳": "040000",
        "杭州": "080200",
        "天津": "050000",
        "重庆": "060000",
        "成都": "090200",
        "南京": "070200",  # the contract's sample posting (南京·江宁区, jobAreaCode 070200)
        "广东": "030000",
        "广东省": "030000",
        "江苏": "070000",
        "江苏省": "070000",
        "浙江": "080000",
        "浙江省": "080000",
        # sources disagree (§2.4); these are 51job's area_array_c.js codes
        "苏州": "070300",
        "武汉": "180200",
        "西安": "200200",
        "佛山": "030600",  # not in docs/sites.md
    },
    "zhilian": {  # docs/sites.md §3.5
        "全国": "489",
        "北京": "530",
        "上海": "538",
        "广州": "763",
        "深圳": "765",
        "杭州": "653",
        "成都": "801",
        "武汉": "736",
        "南京": "635",
        "苏州": "639",
        "天津": "531",
        "重庆": "551",
        "西安": "854",
        "佛山": "768",
    },
}

# A site code, passed through as is.
CODE_PATTERNS: dict[str, re.Pattern] = {
    "boss": re.compile(r"\d{9}"),
    "qcwy": re.compile(r"\d{6}"),
    "zhilian": re.compile(r"\d{3,6}"),
}

# What a site code looks like, for messages.
CODE_FORMS: dict[str, str] = {
    "boss": "9 digits, e.g. 101010100",
    "qcwy": "6 digits, e.g. 010000",
    "zhilian": "3 to 6 digits, e.g. 530",
}


def city_code(source: str, city: str) -> str | None:
    """The site code of ``city`` (a name of the source's map, or a code itself), or None."""
    if CODE_PATTERNS[source].fullmatch(city):
        return city
    return CITY_CODES[source].get(city)


def canonical_city(source: str, city: str) -> str | None:
    """The one spelling farm keeps of ``city`` for ``source``: the first name of the source's map with
    the same code (530 and 北京 are 北京 on zhilian, 广东省 is 广东 on qcwy), else the code itself; None for
    a city the source does not know."""
    code = city_code(source, city)
    if code is None:
        return None
    return next((name for name, named in CITY_CODES[source].items() if named == code), code)


def accepted_cities(source: str) -> str:
    """What a city of ``source`` may be, for a message."""
    return f"one of {', '.join(CITY_CODES[source])} or a {source} city code ({CODE_FORMS[source]})"


def register_site(source: str, city_codes: dict[str, str], code_pattern: re.Pattern, code_form: str = "") -> None:
    """A site of a project's own beyond farm's three (farm.sites): its keywords are then checked
    by the same rules, a city being a name of ``city_codes`` or a code ``code_pattern`` matches."""
    if not re.fullmatch(r"[a-z][a-z0-9_]{0,15}", source):
        raise ValueError(f"site name {source!r}: it takes a-z, 0-9 and _, at most 16 characters, from a letter")
    CITY_CODES[source] = dict(city_codes)
    CODE_PATTERNS[source] = code_pattern
    CODE_FORMS[source] = code_form or f"matching {code_pattern.pattern}"


def known_sources() -> tuple[str, ...]:
    """The sources a keyword may name: farm's three sites and any registered."""
    return tuple(CODE_PATTERNS)
