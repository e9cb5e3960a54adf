"""Posting fields read from their fallbacks (docs/sites.md §4.5): a 51job district from
``jobAreaLevelDetail``, a 51job city from ``jobAreaCode``, and empty texts stored as NULL on every site."""

import json

from farm.sites.boss.spider import BossSpider
from farm.sites.qcwy.spider import QcwySpider
from farm.sites.zhilian.spider import ZhilianSpider
from tests.unit.spider_helpers import CONTENT_TYPES, make_lease, make_spider, request_for, response_for

TEXT_COLUMNS = ("title", "salary", "company", "city", "area", "experience", "degree")


def parsed(spidercls, body: bytes, content_type: str) -> list[dict]:
    """The postings of one page answer, as plain dicts."""
    spider, _ = make_spider(spidercls, clock=1750000000)
    request = request_for(spider, make_lease(spidercls.name), 1)
    response = response_for(request, body=body, headers={"Content-Type": content_type})
    assert spider.block_reason(response) is None
    return [dict(posting) for posting in spider.parse_page(response).postings]


def qcwy_postings(*items) -> list[dict]:
    body = {"status": "1", "message": "", "resultbody": {"job": {"totalCount": len(items), "items": list(items)}}}
    return parsed(QcwySpider, json.dumps(body).encode(), CONTENT_TYPES[".json"])


def boss_postings(*jobs) -> list[dict]:
    body = {"code": 0, "message": "Success", "zpData": {"hasMore": False, "jobList": list(jobs)}}
    return parsed(BossSpider, json.dumps(body).encode(), CONTENT_TYPES[".json"])


def zhilian_postings(*positions) -> list[dict]:
    state = {"pages": 1, "positionCount": len(positions), "positionList": list(positions)}
    html = f"<html><body><script>window.__INITIAL_STATE__={json.dumps(state)}</script></body></html>"
    return parsed(ZhilianSpider, html.encode(), CONTENT_TYPES[".html"])


def test_qcwy_county_level_city_without_a_dot_takes_its_district_from_jobAreaLevelDetail():
    [posting] = qcwy_postings(
        {
            "jobId": "1",
            "jobAreaString": "太仓",
            "jobAreaCode": "070300",
            "jobAreaLevelDetail": {"provinceString": "江苏省", "cityString": "苏州", "districtString": "太仓市"},
        }
    )
    assert (posting["city"], posting["area"]) == ("苏州", "太仓市")


def test_qcwy_district_after_the_dot_is_kept():
    [posting] = qcwy_postings(
        {
            "jobId": "1",
            "jobAreaString": "南京·江宁区",
            "jobAreaLevelDetail": {"cityString": "南京", "districtString": "江宁"},
        }
    )
    assert (posting["city"], posting["area"]) == ("南京", "江宁区")


def test_qcwy_city_without_a_district_anywhere_has_no_area():
    [posting] = qcwy_postings(
        {"jobId": "1", "jobAreaString": "上海", "jobAreaLevelDetail": {"cityString": "上海", "districtString": ""}}
    )
    assert (posting["city"], posting["area"]) == ("上海", None)


def test_qcwy_empty_jobAreaString_takes_the_city_of_its_jobAreaCode():
    [posting] = qcwy_postings(
        {"jobId": "1", "jobAreaString": "", "jobAreaCode": "020000", "jobAreaLevelDetail": {"cityString": ""}}
    )
    assert (posting["city"], posting["area"]) == ("上海", None)


def test_qcwy_jobAreaCode_outside_farms_table_leaves_the_city_null():
    [posting] = qcwy_postings({"jobId": "1", "jobAreaString": "", "jobAreaCode": "250200"})
    assert posting["city"] is None


def test_qcwy_empty_texts_are_null():
    [posting] = qcwy_postings(
        {
            "jobId": "1",
            "jobName": "",
            "provideSalaryString": "",
            "fullCompanyName": "",
            "companyName": " ",
            "jobAreaString": "",
            "workYearString": "",
            "degreeString": "  ",
        }
    )
    assert {column: posting[column] for column in TEXT_COLUMNS} == dict.fromkeys(TEXT_COLUMNS)


def test_boss_empty_texts_are_null():
    [posting] = boss_postings(
        {
            "encryptJobId": "abc",
            "jobName": "",
            "salaryDesc": "",
            "brandName": "",
            "cityName": "",
            "areaDistrict": "",
            "businessDistrict": "",
            "jobExperience": "",
            "jobDegree": " ",
        }
    )
    assert {column: posting[column] for column in TEXT_COLUMNS} == dict.fromkeys(TEXT_COLUMNS)


def test_zhilian_empty_texts_are_null():
    [posting] = zhilian_postings(
        {
            "number": "CC1",
            "name": "",
            "salary60": "",
            "companyName": "",
            "workCity": "",
            "cityDistrict": "",
            "streetName": "",
            "workingExp": "",
            "education": "",
        }
    )
    assert {column: posting[column] for column in TEXT_COLUMNS} == dict.fromkeys(TEXT_COLUMNS)


def test_texts_are_stored_as_the_site_wrote_them():
    [posting] = qcwy_postings({"jobId": "1", "jobName": " 电工 ", "provideSalaryString": "7-9千"})
    assert (posting["title"], posting["salary"]) == (" 电工 ", "7-9千")
