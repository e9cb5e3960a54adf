"""The /_sandbox/ control endpoints the sandbox's client (farm.sandbox.testing) speaks for tests and benchmarks."""

import json
import time
import urllib.error
import urllib.request

import pytest

from tests.unit.sandbox_conftest_helpers import boss_path, get, get_json, qcwy_path, sandbox_thread, zhilian_path


@pytest.fixture(scope="module")
def sb():
    with sandbox_thread(seed=5, postings=(50, 50)) as sandbox:
        yield sandbox


@pytest.fixture(autouse=True)
def clean(sb):
    sb.set_faults()
    sb.reset()


def test_health(sb):
    health = sb.health()
    assert health == {
        "status": "ok",
        "seed": 5,
        "postings": [50, 50],
        "sites": ["boss", "qcwy", "zhilian"],
        "pages_rendered": health["pages_rendered"],
    }
    rendered = health["pages_rendered"]
    get(sb.url, qcwy_path("health-check-keyword"))
    get(sb.url, qcwy_path("health-check-keyword"))  # the second time from the page cache
    assert sb.health()["pages_rendered"] == rendered + 1


def test_counts_count_successful_pages_per_site_city_keyword_page(sb):
    get_json(sb.url, qcwy_path("python"))
    get_json(sb.url, qcwy_path("python"))
    get_json(sb.url, qcwy_path("python", page=3))  # past the last page: still a served page
    get_json(sb.url, boss_path("前端", page=2))
    get(sb.url, zhilian_path("java"))
    assert sb.counts() == {
        ("qcwy", "010000", "python", 1): 2,
        ("qcwy", "010000", "python", 3): 1,
        ("boss", "101010100", "前端", 2): 1,
        ("zhilian", "530", "java", 1): 1,
    }
    raw = json.loads(urllib.request.urlopen(sb.url + "/_sandbox/counts", timeout=10).read())
    assert {"site": "boss", "city": "101010100", "keyword": "前端", "page": 2, "count": 1} in raw["counts"]


def test_reset_clears_counts(sb):
    get_json(sb.url, qcwy_path("python"))
    assert sb.counts()
    sb.reset()
    assert sb.counts() == {}
    get_json(sb.url, qcwy_path("python"))
    assert sb.counts() == {("qcwy", "010000", "python", 1): 1}


@pytest.mark.parametrize("kind", ["http500", "drop", "truncate", "qcwy_waf", "qcwy_throttle"])
def test_faulted_responses_are_not_counted(sb, kind):
    sb.set_faults(keywords={"python": kind})
    try:
        get(sb.url, qcwy_path("python"))
    except Exception:
        pass
    get_json(sb.url, qcwy_path("java"))
    assert sb.counts() == {("qcwy", "010000", "java", 1): 1}


def test_wrong_sign_is_not_counted(sb):
    get_json(sb.url, qcwy_path("python"), {"sign": "0" * 64})
    assert sb.counts() == {}


def test_truth_shape_and_city_names(sb):
    truth = sb.truth("boss", "北京", "python")
    assert set(truth) == {
        "site",
        "city",
        "keyword",
        "total",
        "reachable",
        "page_size",
        "pages",
        "ids",
        "stale",
        "hostile",
    }
    assert (truth["site"], truth["city"], truth["keyword"]) == ("boss", "101010100", "python")
    assert (truth["total"], truth["page_size"], truth["pages"], len(truth["ids"])) == (50, 30, 2, 50)
    assert sb.truth("boss", "101010100", "python") == truth
    assert sb.truth("boss", "北京", "python", page_size=15)["pages"] == 4
    assert sb.truth("zhilian", "深圳", "python")["city"] == "765"
    assert sb.truth("qcwy", "杭州", "python")["city"] == "080200"


def test_truth_does_not_count(sb):
    sb.truth("qcwy", "010000", "python")
    assert sb.counts() == {}


def test_truth_needs_site_city_and_keyword(sb):
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(sb.url + "/_sandbox/truth?site=nope&city=1&keyword=x", timeout=10)
    assert caught.value.code == 400 and "site" in json.loads(caught.value.read())["error"]


def test_faults_endpoint_shows_what_was_set(sb):
    sb.set_faults(rate=0.25, seed=9, kinds=["http429", "boss37"], keywords={"java": "drop"})
    shown = sb.faults()
    assert (shown["rate"], shown["seed"], shown["kinds"], shown["keywords"]) == (
        0.25,
        9,
        ["http429", "boss37"],
        {"java": "drop"},
    )


def test_the_timeline_counts_search_requests_by_the_second_they_arrived(sb):
    sb.reset()
    before = time.time()
    for _ in range(3):
        get(sb.url, qcwy_path("timeline-keyword"))
    timeline = sb.timeline()
    assert sum(timeline.values()) == 3
    assert all(int(before) <= second <= time.time() for second in timeline)
    sb.reset()
    assert sb.timeline() == {}
