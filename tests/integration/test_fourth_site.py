"""A fourth site added as a package (tests/sites/hirehub/) is found by every part that asks the registry.

FARM_SITE_PACKAGES names it; from then on Scrapy finds its spider, keyword validation takes its source and
cities, the settings have its defaults, its salary texts are read by its own forms, the report colours it,
the help names it, `farm probe` knows its wall shape, the openings count it, `farm doctor` checks it and
the sandbox serves it, behind the wall of its package's wall.py once its record names it, and makes its
postings by its package's own imitation data (its sandbox.py's IMITATION), or by the sandbox's defaults where
it gives none. Its crawl against the sandbox is tests/e2e/test_fourth_site_crawl.py.
"""

import dataclasses
import json
import re
import urllib.error
import urllib.request

import pytest
from click.testing import CliRunner
from scrapy.addons import AddonManager
from scrapy.settings import Settings
from scrapy.spiderloader import get_spider_loader

from farm import sites
from farm.cli import farm as farm_command
from farm.cli.doctor import OK, check_sites
from farm.config import FarmConfig, sites_environment
from farm.errors import KeywordError
from farm.openings.cluster import Clusterer
from farm.probe.verdict import understood
from farm.report.charts import site_colour
from farm.salary import NO_FIGURE, parse
from farm.sandbox import crossposts, hostile
from farm.sandbox.cities import city_named
from farm.sandbox.data import World
from farm.sandbox.faults import FaultConfig, all_kinds, default_kinds, shape_kinds
from farm.sandbox.imitation import DEFAULT
from farm.sandbox.server import Sandbox
from farm.sandbox.sites import imitation
from farm.sandbox.testing import SandboxThread
from farm.sandbox.walls import WallConfig
from farm.sites.project import load_sources
from farm.state.validation import validate_keyword
from tests.sites.hirehub import sandbox as hirehub_sandbox
from tests.sites.hirehub.wall import hirehub_token

PACKAGE = "tests.sites.hirehub"


@pytest.fixture
def registry(monkeypatch):
    """The registry as a copy: the fourth site is gone after the test."""
    monkeypatch.setattr(sites, "_REGISTRY", dict(sites._REGISTRY))
    parse.cache_clear()  # a salary text read before the site was registered
    yield
    parse.cache_clear()


def farm_settings(**given) -> Settings:
    settings = Settings()
    settings.setmodule("farm.settings", priority="project")
    settings.setdict({"FARM_SITE_PACKAGES": PACKAGE, **given}, priority="cmdline")
    return settings


def test_the_registry_knows_no_fourth_site_until_its_package_is_named(registry):
    assert "hirehub" not in sites.known_sources()
    assert load_sources(farm_settings()) == ("boss", "qcwy", "zhilian", "hirehub")
    site = sites.get("hirehub")
    assert (site.title, site.spider_module, site.sandbox) == ("HireHub", f"{PACKAGE}.spider", f"{PACKAGE}.sandbox")


def test_scrapy_finds_its_spider_once_the_add_on_has_read_the_setting(registry):
    settings = farm_settings()
    AddonManager.load_pre_crawler_settings(settings)  # what Scrapy does before it looks for spiders
    assert settings.getlist("SPIDER_MODULES")[-1] == f"{PACKAGE}.spider"
    assert sorted(get_spider_loader(settings).list()) == ["boss", "hirehub", "qcwy", "zhilian"]


def test_its_keywords_are_checked_by_its_own_cities(registry):
    sites.register_package(PACKAGE)
    assert validate_keyword("hirehub", "北京", "python") == ("hirehub", "北京", "python")
    assert validate_keyword("hirehub", "sz", "java")[1] == "深圳"  # its code, kept as its city's one name
    with pytest.raises(KeywordError, match=r"unknown city '广州' for hirehub: .*two letters, e\.g\. bj"):
        validate_keyword("hirehub", "广州", "python")
    with pytest.raises(KeywordError, match="unknown city '101010100' for hirehub"):
        validate_keyword("hirehub", "101010100", "python")  # boss's code is not its


def test_its_settings_have_its_own_defaults_and_its_environment(registry, monkeypatch):
    sites.register_package(PACKAGE)
    monkeypatch.setenv("FARM_HIREHUB_MAX_PAGES", "2")
    site = FarmConfig.from_settings(farm_settings()).site("hirehub")
    assert (site.base_url, site.rate, site.max_pages) == ("https://www.hirehub.example", 1.5, 2)
    assert sites_environment()["FARM_HIREHUB_BASE_URL"] == "https://www.hirehub.example"
    given = FarmConfig.from_settings(farm_settings(FARM_HIREHUB_RATE="0")).site("hirehub")
    assert given.rate == 0


def test_its_salary_texts_are_read_by_its_own_forms(registry):
    sites.register_package(PACKAGE)
    assert parse("hirehub", "薪资待定") == NO_FIGURE
    assert parse("boss", "薪资待定") is None  # its form, not every site's
    assert parse("hirehub", "8000-12000").values() == (8000, 12000, None, "month")


def test_the_report_the_openings_and_the_probe_know_it(registry):
    assert site_colour("hirehub") is None
    sites.register_package(PACKAGE)
    assert site_colour("hirehub") == "#2f9e44"
    assert "hirehub" in Clusterer().sites
    assert understood("hirehub_puzzle")
    assert not understood("boss_code_17")


def test_the_help_names_it(registry):
    runner = CliRunner()
    assert "boss, qcwy and zhilian for a table" in runner.invoke(farm_command, ["--help"]).output
    sites.register_package(PACKAGE)
    assert "boss, qcwy, zhilian and hirehub for a table" in runner.invoke(farm_command, ["--help"]).output
    shown = runner.invoke(farm_command, ["keywords", "add", "--help"]).output
    assert "one of boss, qcwy, zhilian and hirehub" in " ".join(shown.split())


def test_the_sandbox_serves_it_and_doctor_checks_it(registry):
    sites.register_package(PACKAGE)
    with SandboxThread(Sandbox(seed=3, postings=(25, 25))) as sandbox:
        with urllib.request.urlopen(f"{sandbox.url}/hh/search?city=bj&q=python&page=3") as answer:
            page = json.loads(answer.read())
        assert page["total"] == 25 and len(page["jobs"]) == 5
        assert {job["city"] for job in page["jobs"]} <= {"北京"}
        assert "hirehub" in sandbox.health()["sites"]
        truth = sandbox.truth("hirehub", "bj", "python")
        assert (truth["total"], truth["pages"], len(truth["ids"])) == (25, 3, 25)

        settings = farm_settings(**{f"FARM_{name.upper()}_BASE_URL": sandbox.url for name in sites.known_sources()})
        checks = {check.name: check for check in check_sites(settings, timeout=5)}
    assert checks["site hirehub"].status == OK, checks["site hirehub"]
    assert sandbox.url in checks["site hirehub"].message


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def test_the_sandbox_walls_it_by_the_wall_its_package_names(registry):
    site = sites.register_package(PACKAGE)
    sites.register(dataclasses.replace(site, sandbox_wall=f"{PACKAGE}.wall"))
    agent = {"User-Agent": "Chrome/124"}
    opener = urllib.request.build_opener(NoRedirect)
    with SandboxThread(Sandbox(seed=3, postings=(25, 25), walls=WallConfig())) as sandbox:
        search = f"{sandbox.url}/hh/search?city=bj&q=python&page=1"
        with pytest.raises(urllib.error.HTTPError) as met:
            opener.open(urllib.request.Request(search, headers=agent))
        check = met.value.headers["Location"]
        assert met.value.code == 302 and check.startswith("/hh/check?back=")
        with opener.open(urllib.request.Request(sandbox.url + check, headers=agent)) as answer:
            seed, key = re.search(r'var s="(\w+)",k="(\w+)"', answer.read().decode()).groups()
        token = hirehub_token(seed, key, agent["User-Agent"])
        passed = urllib.request.Request(search, headers={**agent, "Cookie": f"hh_pass={token}"})
        with opener.open(passed) as answer:
            assert json.loads(answer.read())["total"] == 25
        walls = sandbox.walls()
    assert walls["config"]["sites"] == ["boss", "qcwy", "zhilian", "hirehub"]
    assert walls["walls_served"]["hirehub"] == {"no_cookie": 1}
    assert (walls["sessions_issued"]["hirehub"], walls["with_session"]["hirehub"]) == (1, 1)


def fetched(url):
    with urllib.request.urlopen(url) as answer:
        return json.loads(answer.read())


def test_the_sandbox_makes_its_postings_by_its_packages_own_imitation(registry):
    sites.register_package(PACKAGE)
    assert imitation("hirehub") is hirehub_sandbox.IMITATION
    assert "hirehub_busy" in all_kinds() and "hirehub_busy" in shape_kinds()
    assert "hirehub_busy" not in default_kinds()  # its refusal shape: drawn only when named
    boss_search = "/wapi/zpgeek/search/joblist.json?city=101010100&query=busy"
    with SandboxThread(
        Sandbox(seed=3, postings=(25, 25), fault_config=FaultConfig(keywords={"busy": "hirehub_busy"}))
    ) as sb:
        page = fetched(f"{sb.url}/hh/search?city=bj&q=python&page=1")
        busy, boss_busy = fetched(f"{sb.url}/hh/search?city=bj&q=busy"), fetched(sb.url + boss_search)
        sb.set_faults(hostile_rate=1.0)
        spoiled = fetched(f"{sb.url}/hh/search?city=bj&q=python&page=1")
    assert len(page["jobs"]) == 10 and all(re.fullmatch(r"hh\d{10}", job["id"]) for job in page["jobs"])
    assert {job["experience"] for job in page["jobs"]} <= set(hirehub_sandbox.EXPERIENCE)
    assert busy == {"error": "busy", "jobs": []} and boss_busy["code"] == 0  # its own kind hits it alone
    assert [job["id"] for job in spoiled["jobs"]] == [job["id"] for job in page["jobs"]]
    for job, hostile_job in zip(page["jobs"], spoiled["jobs"]):
        assert "extra" not in job and "extra" in hostile_job  # its deep field
        assert hostile_job["title"] != job["title"] and hostile_job["salary"] == job["salary"]  # its fields alone


def test_a_site_that_gives_no_imitation_gets_the_sandboxs_defaults(registry, monkeypatch):
    sites.register_package(PACKAGE)
    monkeypatch.delattr(hirehub_sandbox, "IMITATION")
    assert imitation("hirehub") is DEFAULT
    assert "hirehub_busy" not in all_kinds()
    slots = World(seed=3, postings=(60, 60)).slots("hirehub", city_named("北京"), "python")
    assert len(slots) == 60 and all(re.fullmatch(r"\d{9}-\d{12}", slot[0]) for slot in slots)
    assert not any(crossposts.is_cross(slot) for slot in slots)  # no salt: no cross-post
    item = {"id": "x", "title": "python"}
    assert not hostile.spoil("hirehub", [item], FaultConfig(hostile_rate=1.0)) and item["title"] == "python"


def test_a_salt_of_its_own_puts_it_among_the_sites_that_cross_post(registry, monkeypatch):
    sites.register_package(PACKAGE)
    salted = dataclasses.replace(hirehub_sandbox.IMITATION, id_salt=0x2545F4914F6CDD1D, decorations=("【HH】{}",))
    monkeypatch.setattr(hirehub_sandbox, "IMITATION", salted)
    world, beijing = World(seed=3, postings=(200, 200)), city_named("北京")
    lists = {name: world.slots(name, beijing, "python") for name in ("boss", "qcwy", "zhilian", "hirehub")}
    crossed = {name: {i for i, slot in enumerate(found) if crossposts.is_cross(slot)} for name, found in lists.items()}
    assert 20 < len(crossed["hirehub"]) < 80
    beside = 0
    for position in crossed["hirehub"]:
        mine = world.posting("hirehub", beijing, "python", lists["hirehub"][position])
        assert mine.title.startswith("【HH】")
        others = [
            world.posting(name, beijing, "python", lists[name][position])
            for name in ("boss", "qcwy", "zhilian")
            if position in crossed[name]
        ]
        assert all(other.company.number == mine.company.number for other in others)
        beside += bool(others)
    assert beside > 0.9 * len(crossed["hirehub"])  # the rest: a generic posting took the other site's place
