"""The spiders against public captures of the sites' real answers (docs/sites.md §4.5).

Each ``farm/sites/<site>/fixtures/captures/<name>.(json|html)`` was copied from a public repository, as it is
or trimmed (its structure and values kept, long lists cut), and that folder's SOURCE.md names the
repository, path and commit of each. Beside it, ``<name>.expected.json`` holds either the postings it
must yield (every column but ``raw``, which must be the site's entry at the same place in
``entries``, a path into the JSON answer or into an HTML page's ``__INITIAL_STATE__``) and the page's
paging facts, or, for a refusal, ``refusal``: the start of the reason LeaseSpider.refusal must give it.
A refusal is never postings and never the end of a keyword: the spider names it, so
farm.middlewares.blocks retries it with the back-off and never hands it to the callback.
"""

import json
import re
from functools import reduce
from pathlib import Path

import pytest

from farm.sites.boss.spider import BossSpider
from farm.sites.qcwy.spider import QcwySpider
from farm.sites.zhilian.spider import ZhilianSpider
from farm.spiders.base import ParseError
from tests.unit.spider_helpers import fixtures, make_lease, make_spider, request_for, response_for

SPIDERS = {"boss": BossSpider, "qcwy": QcwySpider, "zhilian": ZhilianSpider}


def capture_cases():
    for site, spidercls in SPIDERS.items():
        for expected in sorted((fixtures(site) / "captures").glob("*.expected.json")):
            name = expected.name.removesuffix(".expected.json")
            yield pytest.param(spidercls, expected, id=f"{site}/{name}")


def capture_of(expected: Path) -> Path:
    name = expected.name.removesuffix(".expected.json")
    [path] = [p for p in expected.parent.glob(f"{name}.*") if not p.name.endswith(".expected.json")]
    return path


def capture_data(path: Path):
    """The capture as data: a JSON answer decoded, or the object an HTML page assigns to ``__INITIAL_STATE__``
    (read here on its own, not by the spider's parser, so that a parser defect cannot hide in both)."""
    text = path.read_text(encoding="utf-8")
    if path.suffix != ".html":
        return json.loads(text)
    assignment = re.search(r"__INITIAL_STATE__\s*=\s*", text)
    assert assignment is not None, f"{path.name} assigns no __INITIAL_STATE__"
    state, _ = json.JSONDecoder().raw_decode(text, assignment.end())
    return state


def answer(spidercls, path: Path, page: int):
    """The spider and its response to ``page`` of a keyword, carrying the capture."""
    spider, _ = make_spider(spidercls, clock=1750000000)
    request = request_for(spider, make_lease(spidercls.name), page)
    return spider, response_for(request, path)


def postings_in(spider, response) -> list:
    """What the spider's parser finds in ``response``, none when it cannot read it as a page."""
    try:
        return spider.parse_page(response).postings
    except ParseError:
        return []


@pytest.mark.parametrize(("spidercls", "expected_path"), list(capture_cases()))
def test_capture_reads_as_its_expected_file_says(spidercls, expected_path):
    expected = json.loads(expected_path.read_text())
    path = capture_of(expected_path)
    spider, response = answer(spidercls, path, expected.get("page", 1))

    if "refusal" in expected:
        reason = spider.refusal(response)
        assert reason is not None and reason.startswith(expected["refusal"]), reason
        assert postings_in(spider, response) == []
        return

    assert spider.refusal(response) is None
    page = spider.parse_page(response)
    entries = reduce(lambda value, key: value[key], expected["entries"].split("."), capture_data(path))
    postings = [dict(posting) for posting in page.postings]
    assert [posting.pop("raw") for posting in postings] == entries
    for posting in postings:
        if posting["published_at"] is not None:
            posting["published_at"] = posting["published_at"].isoformat()
    assert postings == expected["items"]
    for fact, value in expected["page_facts"].items():
        assert getattr(page, fact) == value, fact


@pytest.mark.parametrize("site", [site for site in SPIDERS if (fixtures(site) / "captures").is_dir()])
def test_every_capture_names_its_source(site):
    folder = fixtures(site) / "captures"
    captures = [p for p in folder.glob("*.*") if not p.name.endswith(".expected.json") and p.name != "SOURCE.md"]
    sources = (folder / "SOURCE.md").read_text()
    assert captures
    for capture in captures:
        assert f"`{capture.name}`" in sources, capture.name
