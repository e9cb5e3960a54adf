"""Hostile postings (--hostile-rate): ids stay the truth's, bodies stay valid JSON, and each site's fields
carry every hostile value the module promises, across a few postings."""

import json
import re
import unicodedata

import pytest

from tests.unit.sandbox_conftest_helpers import (
    CITIES,
    INITIAL_STATE,
    boss_path,
    get,
    initial_state,
    qcwy_path,
    sandbox_thread,
    zhilian_path,
)

KEYWORDS = ["python", "会计", "前端"]  # 100 postings each: 300 postings a site
BAD_TIMES = {"0001-01-01 00:00:00", "9999-12-31 23:59:59", "2026-02-30 25:61:00", ""}
DATETIME = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$")
CONTROLS = ("\x00", "\x1b", "\u202e", "\n", "\t")
# per site: the id, time fields, text fields ((parent, name) inside a nested object), URLs, tag lists,
# raw-only numeric fields, the field holding a deep object
SITES = {
    "boss": (
        "encryptJobId",
        ["lastModifyTime"],
        [
            "jobName",
            "salaryDesc",
            "brandName",
            "cityName",
            "areaDistrict",
            "businessDistrict",
            "jobExperience",
            "jobDegree",
        ],
        ["brandLogo", "bossAvatar"],
        ["skills", "welfareList", "jobLabels"],
        ["industry", "jobValidStatus", ("gps", "longitude"), ("gps", "latitude")],
        "iconWord",
    ),
    "qcwy": (
        "jobId",
        ["issueDateString", "confirmDateString", "updateDateTime"],
        [
            "jobName",
            "provideSalaryString",
            "fullCompanyName",
            "companyName",
            "jobAreaString",
            ("jobAreaLevelDetail", "cityString"),
            "workYearString",
            "degreeString",
        ],
        ["jobHref", "companyHref"],
        ["jobTags", "jobWelfareCodeDataList"],
        ["jobSalaryMin", "jobSalaryMax", "lon", "lat"],
        "jobNumString",
    ),
    "zhilian": (
        "number",
        ["publishTime"],
        ["name", "salary60", "companyName", "workCity", "cityDistrict", "streetName", "workingExp", "education"],
        ["positionUrl", "companyUrl"],
        ["showSkillTags", "skillLabel", "welfareLabel"],
        ["salaryReal", "cityId", "companyNumber", "subJobTypeLevelName"],
        "staffCard",
    ),
}


@pytest.fixture(scope="module")
def sb():
    with sandbox_thread(seed=4, postings=(100, 100), hostile_rate=0.25, fault_seed=1) as sandbox:
        yield sandbox


@pytest.fixture(autouse=True)
def quarter_hostile(sb):
    sb.set_faults(hostile_rate=0.25, seed=1)


def page_items(sb, site, keyword, page):
    """The page's items, parsed by the stdlib json as any client would."""
    if site == "boss":
        status, _, body = get(sb.url, boss_path(keyword, page=page))
        assert status == 200
        return json.loads(body)["zpData"]["jobList"]
    if site == "qcwy":
        status, _, body = get(sb.url, qcwy_path(keyword, page=page))
        assert status == 200
        return json.loads(body)["resultbody"]["job"]["items"]
    status, _, body = get(sb.url, zhilian_path(keyword, page=page))
    script = INITIAL_STATE.search(body.decode()).group(1)
    assert status == 200 and "</" not in script  # the script stays one valid JSON object
    return initial_state(body)["positionList"]


def crawl(sb, site):
    """{id: item} over every page of KEYWORDS, checking the ids against the truth; and the hostile ids."""
    items, hostile = {}, set()
    for keyword in KEYWORDS:
        truth = sb.truth(site, CITIES[site], keyword)
        listed = [item for page in range(1, truth["pages"] + 1) for item in page_items(sb, site, keyword, page)]
        id_field = SITES[site][0]
        assert [item[id_field] for item in listed] == truth["ids"]
        items.update((item[id_field], item) for item in listed)
        hostile |= set(truth["hostile"])
    return items, hostile


def value(item, field):
    return item[field[0]][field[1]] if isinstance(field, tuple) else item[field]


def depth(node):
    if isinstance(node, dict):
        return 1 + max(map(depth, node.values()), default=0)
    if isinstance(node, list):
        return 1 + max(map(depth, node), default=0)
    return 0


def is_long(text):
    return (
        300 <= len(text)
        and any(ord(c) > 0xFFFF for c in text)
        and any(unicodedata.combining(c) for c in text)
        and any("\u4e00" <= c <= "\u9fff" for c in text)
    )


@pytest.mark.parametrize("site", ["boss", "qcwy", "zhilian"])
def test_hostile_postings_carry_every_hostile_value(sb, site):
    _, times, texts, urls, tags, numbers, deep = SITES[site]
    items, hostile_ids = crawl(sb, site)
    assert 0.17 * len(items) < len(hostile_ids) < 0.33 * len(items)  # about a quarter of 300
    hostile = [items[i] for i in hostile_ids]
    for field in times:
        seen = {value(item, field) for item in hostile}
        if site == "boss":  # epoch ms past any datetime (year 10000 on) or negative
            assert all(isinstance(v, int) and (v < 0 or v >= 253_402_300_800_000) for v in seen) and len(seen) >= 4
        else:
            assert BAD_TIMES <= seen and seen - BAD_TIMES  # and some garbage text
            assert not any(DATETIME.match(v) and v[:4] not in ("0001", "9999", "2026") for v in seen)
    for field in texts + urls:
        seen = [value(item, field) for item in hostile]
        assert all(isinstance(v, str) for v in seen)
        assert any(is_long(v) for v in seen), field
        assert max(len(v) for v in seen) <= 3200
        assert any(all(c in v for c in CONTROLS) for v in seen), field
    for field in urls:  # a long URL keeps its scheme and host
        assert all(v.startswith("https://") for v in (item[field] for item in hostile) if is_long(v))
    for field in tags:
        elements = [e for item in hostile for e in item[field]]
        assert None in elements and any(isinstance(e, (list, dict)) for e in elements)
        assert any(isinstance(e, int) and not isinstance(e, bool) for e in elements)
    raw_numbers = {value(item, field) for item in hostile for field in numbers}
    assert {2**70, -(2**70), 1e308} <= raw_numbers
    assert all(depth(item[deep]) >= 100 for item in hostile)


@pytest.mark.parametrize("site", ["boss", "qcwy", "zhilian"])
def test_other_postings_stay_sane(sb, site):
    _, times, texts, _, tags, _, _ = SITES[site]
    items, hostile_ids = crawl(sb, site)
    for pid, item in items.items():
        if pid in hostile_ids:
            continue
        assert all(len(value(item, f)) < 100 and not any(c in value(item, f) for c in CONTROLS) for f in texts)
        assert all(isinstance(e, (str, dict)) for f in tags for e in item[f])
        if site != "boss":
            assert all(DATETIME.match(item[f]) for f in times)


def test_hostile_is_per_posting_id_and_off_by_default(sb):
    truth = sb.truth("qcwy", "010000", "python")
    sb.set_faults(hostile_rate=0.25, seed=2)  # another seed, other postings, same ids
    other = sb.truth("qcwy", "010000", "python")
    assert other["ids"] == truth["ids"] and other["hostile"] != truth["hostile"]
    sb.set_faults()
    assert sb.truth("qcwy", "010000", "python")["hostile"] == []
    items = page_items(sb, "qcwy", "python", 1)  # the page cache held hostile bodies: not served now
    assert all(DATETIME.match(i["issueDateString"]) for i in items)
    sb.set_faults(hostile_rate=1.0)
    assert all(
        i["issueDateString"] in BAD_TIMES or not DATETIME.match(i["issueDateString"])
        for i in page_items(sb, "qcwy", "python", 1)
    )


def test_no_hostile_postings_without_the_flag():
    with sandbox_thread(seed=4, postings=(100, 100)) as sandbox:
        assert sandbox.faults()["hostile_rate"] == 0.0
        assert all(sandbox.truth(site, city, "python")["hostile"] == [] for site, city in CITIES.items())
