"""Stale totals (--stale-totals): page 1 of a stale keyword reports wrong totals, every later page the truth,
what the pages list never changes, and /_sandbox/truth names the variant."""

import pytest

from tests.unit.sandbox_conftest_helpers import (
    CITIES,
    boss_path,
    get,
    get_json,
    initial_state,
    qcwy_path,
    sandbox_thread,
    walk,
    zhilian_path,
)

KEYWORDS = [f"岗位{i}" for i in range(60)]


@pytest.fixture(scope="module")
def sb():
    """60 postings a keyword: qcwy and zhilian 3 pages of 20, boss 2 pages of 30; every keyword stale."""
    with sandbox_thread(seed=3, postings=(60, 60), stale_totals=1.0, fault_seed=2) as sandbox:
        yield sandbox


@pytest.fixture(autouse=True)
def all_stale(sb):
    sb.set_faults(stale_totals=1.0, seed=2)
    yield
    sb.set_faults(stale_totals=1.0, seed=2)


def stale_keyword(sb, site, variant):
    for keyword in KEYWORDS:
        truth = sb.truth(site, CITIES[site], keyword)
        if truth["stale"] == variant:
            assert (truth["total"], len(truth["ids"])) == (60, 60)  # the truth stays the truth
            return keyword
    raise AssertionError(f"no {site} keyword is stale {variant!r}")


def qcwy_job(sb, keyword, page):
    body = get_json(sb.url, qcwy_path(keyword, page=page))
    assert body["status"] == "1"
    return body["resultbody"]["job"]


def zhilian_state(sb, keyword, page):
    status, _, body = get(sb.url, zhilian_path(keyword, page=page))
    assert status == 200
    return initial_state(body)


def boss_zp(sb, keyword, page, page_size=None):
    body = get_json(sb.url, boss_path(keyword, page=page, page_size=page_size))
    assert body["code"] == 0
    return body["zpData"]


def test_qcwy_under_page_one_says_less_page_two_the_truth(sb):
    keyword = stale_keyword(sb, "qcwy", "under")
    first, second, third = (qcwy_job(sb, keyword, p) for p in (1, 2, 3))
    assert first["totalCount"] == 30 and len(first["items"]) == 20  # half of 60, still two pages
    assert second["totalCount"] == third["totalCount"] == 60
    assert walk("qcwy", sb.url, keyword, CITIES["qcwy"])[0] == sb.truth("qcwy", "010000", keyword)["ids"]


def test_qcwy_over_pages_past_the_end_are_successful_and_empty(sb):
    keyword = stale_keyword(sb, "qcwy", "over")
    assert qcwy_job(sb, keyword, 1)["totalCount"] == 120
    assert [len(qcwy_job(sb, keyword, p)["items"]) for p in (1, 2, 3)] == [20, 20, 20]
    for page in (4, 5, 6):  # what page 1 promised, past the real end
        assert qcwy_job(sb, keyword, page) == {"totalCount": 60, "items": []}


def test_zhilian_under_and_over(sb):
    under = stale_keyword(sb, "zhilian", "under")
    first, second = zhilian_state(sb, under, 1), zhilian_state(sb, under, 2)
    assert (first["positionCount"], first["pages"], len(first["positionList"])) == (30, 2, 20)
    assert (second["positionCount"], second["pages"]) == (60, 3)
    over = stale_keyword(sb, "zhilian", "over")
    first = zhilian_state(sb, over, 1)
    assert (first["positionCount"], first["pages"], len(first["positionList"])) == (120, 6, 20)
    for page in (4, 6):
        past = zhilian_state(sb, over, page)
        assert (past["positionList"], past["positionCount"], past["pages"]) == ([], 60, 3)


def test_zhilian_zero_lists_postings_beside_zero_totals(sb):
    keyword = stale_keyword(sb, "zhilian", "zero")
    first, second = zhilian_state(sb, keyword, 1), zhilian_state(sb, keyword, 2)
    assert (first["pages"], first["positionCount"], len(first["positionList"])) == (0, 0, 20)
    assert (second["pages"], second["positionCount"], len(second["positionList"])) == (3, 60, 20)
    assert walk("zhilian", sb.url, keyword, "530")[0] == sb.truth("zhilian", "530", keyword)["ids"]


def test_boss_under_keeps_has_more(sb):
    keyword = stale_keyword(sb, "boss", "under")
    first, second = boss_zp(sb, keyword, 1), boss_zp(sb, keyword, 2)
    assert (first["resCount"], first["totalCount"], first["hasMore"], len(first["jobList"])) == (31, 31, True, 30)
    assert (second["resCount"], second["totalCount"], second["hasMore"], len(second["jobList"])) == (60, 60, False, 30)


def test_boss_over_last_real_page_promises_one_more_then_an_empty_page(sb):
    keyword = stale_keyword(sb, "boss", "over")
    first, last, past = boss_zp(sb, keyword, 1), boss_zp(sb, keyword, 2), boss_zp(sb, keyword, 3)
    assert (first["resCount"], first["totalCount"], first["hasMore"], len(first["jobList"])) == (120, 120, True, 30)
    assert (last["resCount"], last["totalCount"], last["hasMore"], len(last["jobList"])) == (60, 60, True, 30)
    assert (past["resCount"], past["hasMore"], past["jobList"]) == (60, False, [])
    # one page of 60: page 1 is the last real page, and it promises more
    only = boss_zp(sb, keyword, 1, page_size=60)
    assert (only["hasMore"], len(only["jobList"]), only["resCount"]) == (True, 60, 120)
    after = boss_zp(sb, keyword, 2, page_size=60)
    assert (after["hasMore"], after["jobList"]) == (False, [])


def listings(sb, keyword):
    """What each site's pages list, page by page."""
    return (
        [[i["jobId"] for i in qcwy_job(sb, keyword, p)["items"]] for p in (1, 2, 3, 4)],
        [[i["number"] for i in zhilian_state(sb, keyword, p)["positionList"]] for p in (1, 2, 3, 4)],
        [[j["encryptJobId"] for j in boss_zp(sb, keyword, p)["jobList"]] for p in (1, 2, 3)],
    )


def test_stale_totals_change_no_listing_and_the_page_cache_keeps_them_apart(sb):
    keyword = stale_keyword(sb, "qcwy", "under")
    stale_lists, stale_total = listings(sb, keyword), qcwy_job(sb, keyword, 1)["totalCount"]
    sb.set_faults()  # stale off: the cached stale page 1 must not be served as the truth
    assert listings(sb, keyword) == stale_lists and qcwy_job(sb, keyword, 1)["totalCount"] == 60
    assert sb.truth("qcwy", "010000", keyword)["stale"] is None
    sb.set_faults(stale_totals=1.0, seed=2)  # and back: the cached true page must not be served as stale
    assert qcwy_job(sb, keyword, 1)["totalCount"] == stale_total == 30


def stale_share(sb, site):
    variants = [sb.truth(site, CITIES[site], k)["stale"] for k in KEYWORDS]
    return sum(v is not None for v in variants), set(variants) - {None}


def assert_a_third_stale_with_every_variant(sandbox):
    for site, variants in (
        ("qcwy", {"under", "over"}),
        ("boss", {"under", "over"}),
        ("zhilian", {"under", "over", "zero"}),
    ):
        stale, seen = stale_share(sandbox, site)
        assert 12 <= stale <= 28 and seen == variants, (site, stale, seen)  # about 20 of 60


def test_the_stale_totals_flag_makes_a_third_stale_with_every_variant():
    with sandbox_thread(seed=3, postings=(60, 60), stale_totals=0.33, fault_seed=9) as sandbox:
        assert sandbox.faults()["stale_totals"] == 0.33
        assert_a_third_stale_with_every_variant(sandbox)
    with sandbox_thread(seed=3, postings=(60, 60)) as sandbox:
        assert sandbox.faults()["stale_totals"] == 0.0 and stale_share(sandbox, "boss") == (0, set())


def test_the_fault_endpoint_sets_the_share_and_the_seed_picks_the_keywords(sb):
    sb.set_faults(stale_totals=0.33, seed=2)
    assert_a_third_stale_with_every_variant(sb)
    chosen = [sb.truth("qcwy", "010000", k)["stale"] for k in KEYWORDS]
    sb.set_faults(stale_totals=0.33, seed=5)  # another fault seed, other keywords
    assert [sb.truth("qcwy", "010000", k)["stale"] for k in KEYWORDS] != chosen
    sb.set_faults()
    assert stale_share(sb, "zhilian") == (0, set())


def test_keywords_of_fewer_than_two_postings_are_never_stale():
    with sandbox_thread(seed=3, postings=(0, 3), stale_totals=1.0) as sandbox:
        truths = [sandbox.truth("zhilian", "530", k) for k in KEYWORDS[:30]]
        assert {t["total"] for t in truths} == {0, 1, 2, 3}
        assert all((t["stale"] is None) == (t["total"] < 2) for t in truths)
        tiny = next(t["keyword"] for t in truths if t["total"] == 1)
        state = initial_state(get(sandbox.url, zhilian_path(tiny))[2])
        assert (state["positionCount"], state["pages"]) == (1, 1)
