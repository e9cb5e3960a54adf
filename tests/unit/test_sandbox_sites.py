"""The sandbox speaks each site's contract: paths, envelopes, item fields, page sizes, caps, ids."""

import re

import pytest
from parsel import Selector

from farm.sandbox.vocab import SHARED_TITLES
from farm.sites.qcwy.sandbox import sign
from tests.unit.sandbox_conftest_helpers import (  # noqa: F401  (sandbox is a fixture)
    CANDIDATES,
    CITIES,
    boss_path,
    command,
    get,
    get_json,
    initial_state,
    page_ids,
    qcwy_path,
    sandbox,
    sandbox_thread,
    walk,
    zhilian_path,
)

BOSS_FIELDS = {
    "securityId": str,
    "lid": str,
    "encryptJobId": str,
    "jobName": str,
    "salaryDesc": str,
    "jobLabels": list,
    "skills": list,
    "jobExperience": str,
    "jobDegree": str,
    "city": int,
    "cityName": str,
    "areaDistrict": str,
    "businessDistrict": str,
    "gps": dict,
    "lastModifyTime": int,
    "encryptBossId": str,
    "bossName": str,
    "bossTitle": str,
    "brandName": str,
    "brandIndustry": str,
    "brandScaleName": str,
    "brandStageName": str,
    "welfareList": list,
}
QCWY_FIELDS = {
    "jobId": str,
    "jobName": str,
    "provideSalaryString": str,
    "jobSalaryMin": str,
    "jobSalaryMax": str,
    "jobAreaString": str,
    "jobAreaCode": str,
    "jobAreaLevelDetail": dict,
    "workYearString": str,
    "degreeString": str,
    "jobTags": list,
    "jobWelfareCodeDataList": list,
    "fullCompanyName": str,
    "companyName": str,
    "coId": str,
    "companyTypeString": str,
    "companySizeString": str,
    "companyIndustryType1Str": str,
    "issueDateString": str,
    "updateDateTime": str,
    "jobHref": str,
    "companyHref": str,
}
ZHILIAN_FIELDS = {
    "number": str,
    "name": str,
    "positionUrl": str,
    "salary60": str,
    "salaryReal": str,
    "companyName": str,
    "companyNumber": str,
    "companySize": str,
    "propertyName": str,
    "industryName": str,
    "cityId": str,
    "workCity": str,
    "cityDistrict": str,
    "streetName": str,
    "workingExp": str,
    "education": str,
    "publishTime": str,
    "showSkillTags": list,
    "skillLabel": list,
    "welfareLabel": list,
    "workType": str,
    "subJobTypeLevelName": str,
}
CAPS = {"boss": 10, "qcwy": 50, "zhilian": 15}
PAGE_SIZES = {"boss": 30, "qcwy": 20, "zhilian": 20}
DATETIME = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$")


@pytest.fixture(scope="module")
def big():
    """Every keyword has 45 postings: two boss pages, three qcwy and zhilian pages."""
    with sandbox_thread(seed=7, postings=(45, 45)) as sb:
        yield sb


def assert_fields(item, fields):
    for name, kind in fields.items():
        assert isinstance(item.get(name), kind), f"{name}: {item.get(name)!r} is not {kind.__name__}"


def test_boss_envelope_and_items(big):
    body = get_json(big.url, boss_path("python"))
    assert body["code"] == 0 and body["message"] == "Success"
    z = body["zpData"]
    assert {"hasMore", "totalCount", "resCount", "lid", "filterString", "brandCard", "jobList"} <= set(z)
    assert (z["resCount"], z["totalCount"], z["hasMore"], len(z["jobList"])) == (45, 45, True, 30)
    for job in z["jobList"]:
        assert_fields(job, BOSS_FIELDS)
        assert job["city"] == 101010100 and job["cityName"] == "北京"
        assert re.fullmatch(r"\d+-\d+K(·\d+薪)?", job["salaryDesc"]), job["salaryDesc"]
        assert job["jobLabels"] == [job["jobExperience"], job["jobDegree"]]
        assert "python" in job["jobName"] or job["jobName"] in SHARED_TITLES  # titles are built around the keyword
    last = get_json(big.url, boss_path("python", page=2))["zpData"]
    assert (len(last["jobList"]), last["hasMore"]) == (15, False)


def test_boss_honours_page_size_up_to_a_maximum(big):
    assert len(get_json(big.url, boss_path("python", page_size=15))["zpData"]["jobList"]) == 15
    with sandbox_thread(seed=7, postings=(500, 500)) as sb:
        z = get_json(sb.url, boss_path("python", page_size=1000))["zpData"]
        assert len(z["jobList"]) == 100
        # ten pages of 100 reach 500 postings; of 30, only 300
        assert z["totalCount"] == 500
        assert get_json(sb.url, boss_path("python"))["zpData"]["totalCount"] == 300


def test_qcwy_envelope_and_items(big):
    body = get_json(big.url, qcwy_path("python"))
    assert body["status"] == "1"
    job = body["resultbody"]["job"]
    assert job["totalCount"] == 45 and len(job["items"]) == 20
    for item in job["items"]:
        assert_fields(item, QCWY_FIELDS)
        assert item["jobId"].isdigit() and len(item["jobId"]) == 9
        city, _, district = item["jobAreaString"].partition("·")
        assert city == "北京" and district.endswith("区") and item["jobAreaCode"] == "010000"
        assert item["jobAreaLevelDetail"]["cityString"] == "北京"
        assert DATETIME.match(item["issueDateString"]) and DATETIME.match(item["updateDateTime"])
        assert re.search(r"\.html\?.*req=[0-9a-f]{32}", item["jobHref"]) and item["jobId"] in item["jobHref"]
        assert int(item["jobSalaryMin"]) < int(item["jobSalaryMax"])
        assert re.fullmatch(r"[\d.]+(千|万)?-[\d.]+(千|万)(·\d+薪)?", item["provideSalaryString"])
    assert len(get_json(big.url, qcwy_path("python", page_size=50))["resultbody"]["job"]["items"]) == 45


def test_qcwy_old_path_and_per_search_req_hash(big):
    new = get_json(big.url, qcwy_path("python"))["resultbody"]["job"]["items"]
    old = get_json(big.url, qcwy_path("python", prefix="/open/noauth/search-pc"))["resultbody"]["job"]["items"]
    assert [i["jobId"] for i in new] == [i["jobId"] for i in old]
    other = get_json(big.url, qcwy_path("python").replace("timestamp=1700000000", "timestamp=1700000999"))
    strip = lambda items: [i["jobHref"].split("?")[0] for i in items]  # noqa: E731
    assert strip(other["resultbody"]["job"]["items"]) == strip(new)
    assert other["resultbody"]["job"]["items"][0]["jobHref"] != new[0]["jobHref"]


def test_qcwy_sign_checked_when_sent(big):
    path = qcwy_path("python")
    assert get_json(big.url, path, {"sign": sign(path)})["status"] == "1"
    assert get_json(big.url, path)["status"] == "1"  # no header: not checked
    wrong = get_json(big.url, path, {"sign": sign(path + "&x=1")})
    assert wrong["status"] != "1" and "sign" in wrong["message"]
    assert wrong["resultbody"]["job"]["items"] == []


def test_zhilian_page_state_and_dom(big):
    status, headers, body = get(big.url, zhilian_path("python"))
    assert status == 200 and headers["Content-Type"].startswith("text/html")
    state = initial_state(body)
    assert (state["pageIndex"], state["pageSize"], state["pages"], state["positionCount"]) == (1, 20, 3, 45)
    assert state["queryParams"]["kw"] == "python" and state["keyWords"] == "python"
    assert state["listResponseCode"] == 200 and state["isLogged"] is False
    assert len(state["positionList"]) == 20
    for item in state["positionList"]:
        assert_fields(item, ZHILIAN_FIELDS)
        assert re.fullmatch(r"CC\d{9}J\d{11}", item["number"])
        assert item["positionUrl"] == f"https://www.zhaopin.com/jobdetail/{item['number']}.htm"
        assert item["cityId"] == "530" and item["workCity"] == "北京" and DATETIME.match(item["publishTime"])
        assert all("tag" in t for t in item["showSkillTags"]) and all("value" in s for s in item["skillLabel"])
    dom = Selector(text=body.decode())
    assert dom.css(".joblist-box__item .jobinfo__name::text").getall() == [i["name"] for i in state["positionList"]]
    assert dom.css(".jobinfo__salary::text").getall() == [i["salary60"] for i in state["positionList"]]
    nxt = dom.xpath('//a[contains(@class,"soupager__btn")][text()="下一页"]')
    assert "soupager__btn--disable" not in nxt.attrib["class"]
    last = Selector(text=get(big.url, zhilian_path("python", page=3))[2].decode())
    assert "soupager__btn--disable" in last.xpath('//a[text()="下一页"]').attrib["class"]
    assert "登录" not in body.decode()


def test_zhilian_path_page_overrides_query(big):
    state = initial_state(get(big.url, "/sou/jl530/p2?kw=python&p=3")[2])
    assert state["pageIndex"] == 2
    assert [p["number"] for p in state["positionList"]] == page_ids("zhilian", big.url, "python", "530", 2)[0]


def test_zhilian_state_survives_script_breaking_keywords(big):
    keyword = 'a</script><b>"}'
    state = initial_state(get(big.url, zhilian_path(keyword))[2])
    assert state["keyWords"] == keyword and len(state["positionList"]) == 20


def test_zhilian_forged_keyword_token_gets_login_wall(big):
    body = get(big.url, "/sou/jl530/kwJava/p1")[2].decode()
    assert "登录之后再搜索" in body and initial_state(body.encode())["positionList"] == []


@pytest.mark.parametrize("site", ["boss", "qcwy", "zhilian"])
def test_walking_all_pages_matches_truth(sandbox, site):
    city, cap, size = CITIES[site], CAPS[site], PAGE_SIZES[site]
    truths = [sandbox.truth(site, city, k) for k in CANDIDATES]
    chosen = [
        next(t for t in truths if t["total"] == 0),
        next(t for t in truths if 0 < t["total"] < size * 3),
        next(t for t in truths if t["total"] > cap * size),
    ]
    for truth in chosen:
        ids, pages = walk(site, sandbox.url, truth["keyword"], city)
        assert ids == truth["ids"] and pages == truth["pages"]
        assert truth["pages"] == min(cap, -(-truth["total"] // size)) and truth["page_size"] == size
        assert len(ids) == min(truth["total"], cap * size) == truth["reachable"]
        assert len(set(ids)) == len(ids)
        _, totals = page_ids(site, sandbox.url, truth["keyword"], city, 1)
        assert totals["total"] == truth["total"]
        if site == "zhilian":
            assert totals["pages"] == truth["pages"]
        if site == "boss":
            z = get_json(sandbox.url, boss_path(truth["keyword"]))["zpData"]
            assert z["totalCount"] == truth["reachable"] and z["hasMore"] == (truth["pages"] > 1)


@pytest.mark.parametrize("site", ["boss", "qcwy", "zhilian"])
def test_a_posting_is_shared_by_two_keywords_of_one_site_and_city(big, site):
    city = CITIES[site]
    python, java = big.truth(site, city, "python")["ids"], big.truth(site, city, "java")["ids"]
    shared = set(python) & set(java)
    assert shared and len(shared) < len(python)
    served_python = {i for p in (1, 2, 3) for i in page_ids(site, big.url, "python", city, p)[0]}
    served_java = {i for p in (1, 2, 3) for i in page_ids(site, big.url, "java", city, p)[0]}
    assert shared <= served_python & served_java


def test_unknown_city_is_a_successful_empty_search(big):
    z = get_json(big.url, boss_path("python", city="109999999"))
    assert z["code"] == 0 and z["zpData"]["jobList"] == [] and z["zpData"]["totalCount"] == 0
    assert z["zpData"]["hasMore"] is False
    q = get_json(big.url, qcwy_path("python", city="999999"))
    assert q["status"] == "1" and q["resultbody"]["job"] == {"totalCount": 0, "items": []}
    body = get(big.url, zhilian_path("python", city="999"))[2]
    state = initial_state(body)
    assert state["positionList"] == [] and state["positionCount"] == 0 and "登录" not in body.decode()
    assert big.truth("qcwy", "999999", "python") | {"ids": None} == {
        "site": "qcwy",
        "city": "999999",
        "keyword": "python",
        "total": 0,
        "reachable": 0,
        "page_size": 20,
        "pages": 0,
        "ids": None,
        "stale": None,
        "hostile": [],
    }


def test_nationwide_postings_name_real_cities(big):
    items = get_json(big.url, qcwy_path("python", city="000000"))["resultbody"]["job"]["items"]
    assert {i["jobAreaCode"] for i in items} - {"000000"} and "000000" not in {i["jobAreaCode"] for i in items}


def test_default_spread_has_empty_and_past_cap_keywords(sandbox):
    totals = [sandbox.truth("qcwy", "010000", k)["total"] for k in CANDIDATES]
    assert 0 in totals and max(totals) > 1000 and len(set(totals)) > 10


@pytest.mark.parametrize(
    "args, message",
    [
        (["--postings", "5:1"], "--postings"),
        (["--postings", "x"], "MIN:MAX"),
        (["--fail-keyword", "python=nope"], "unknown fault kind"),
        (["--fault-kinds", "boss99"], "boss99"),
    ],
)
def test_bad_flags_fail_with_one_clear_line(args, message):
    run, built = command("--port", "0", *args)
    assert run.exit_code == 2 and not built
    errors = [line for line in run.stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and message in errors[0]


def test_help_lists_the_fault_kinds():
    out = command("--help")[0].stdout
    for kind in (
        "boss37",
        "qcwy_waf",
        "qcwy_slider",
        "zhilian_verify",
        "zhilian_login",
        "http429",
        "drop",
        "truncate",
        "slow",
    ):
        assert kind in out
