"""Each site's cities, in its Scrapy-free cities.py that its spider and keyword validation share."""

import pytest

from farm.sites import get
from farm.sites.boss.spider import BossSpider
from farm.sites.cities import accepted_cities, city_code
from farm.sites.qcwy.spider import QcwySpider
from farm.sites.zhilian.spider import ZhilianSpider

SPIDERS = {"boss": BossSpider, "qcwy": QcwySpider, "zhilian": ZhilianSpider}


@pytest.mark.parametrize("source", SPIDERS)
def test_the_spiders_take_their_cities_from_their_sites_record(source):
    assert SPIDERS[source].city_codes == get(source).cities
    assert SPIDERS[source].code_pattern is get(source).code_pattern


@pytest.mark.parametrize("source", SPIDERS)
def test_every_mapped_code_has_its_sites_code_form(source):
    site = get(source)
    assert all(site.code_pattern.fullmatch(code) for code in site.cities.values())


@pytest.mark.parametrize(
    "source, city, code",
    [
        ("boss", "北京", "101010100"),
        ("boss", "101230200", "101230200"),
        ("boss", "530", None),
        ("boss", "拉萨", None),
        ("qcwy", "浙江省", "080000"),
        ("qcwy", "070300", "070300"),
        ("qcwy", "101010100", None),
        ("zhilian", "西安", "854"),
        ("zhilian", "2013", "2013"),
        ("zhilian", "12", None),
        ("zhilian", "Beijing", None),
    ],
)
def test_city_code_is_a_mapped_name_or_a_code_of_the_site(source, city, code):
    assert city_code(source, city) == code


def test_accepted_cities_says_what_a_city_may_be():
    assert accepted_cities("zhilian") == (
        "one of 全国, 北京, 上海, 广州, 深圳, 杭州, 成都, 武汉, 南京, 苏州, 天津, 重庆, 西安, 佛山 "
        "or a zhilian city code (3 to 6 digits, e.g. 530)"
    )
