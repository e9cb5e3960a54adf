"""farm's Scrapy add-on: its components and settings at add-on priority, under a project's own."""

import logging
import re

import pytest
import scrapy
from scrapy.settings import Settings, get_settings_priority
from scrapy.utils.conf import build_component_list
from scrapy.utils.misc import build_from_crawler
from scrapy.utils.test import get_crawler

import farm.settings
from farm import addon, sites
from farm.addon import SIGNING, FarmAddon
from farm.sites.boss.spider import BossSpider
from farm.sites.qcwy.spider import QcwySpider
from farm.sites.zhilian.spider import ZhilianSpider
from farm.state.validation import KeywordError, validate_keyword

ADDON = get_settings_priority("addon")
OWN_MIDDLEWARE = "myproject.middlewares.Own"
OWN_PIPELINE = "myproject.pipelines.Own"
LEAN = "farm.extensions.lean.LeanProcess"


def project(**own):
    """A project's settings, as Scrapy holds them when the crawler applies its add-ons."""
    settings = Settings()
    settings.setdict({"ADDONS": {"farm.addon.FarmAddon": 0}, **own}, priority="project")
    FarmAddon().update_settings(settings)
    return settings


def test_every_component_of_farms_is_set_at_add_on_priority():
    settings = project()
    assert settings["SCHEDULER"] == addon.SCHEDULER and settings.getpriority("SCHEDULER") == ADDON
    for name, components in addon.COMPONENTS.items():
        for component, order in components.items():
            assert settings[name][component] == order
            assert settings[name].getpriority(component) == ADDON
    assert settings.getpriority("CONCURRENT_ITEMS") == ADDON
    assert settings.getpriority("FARM_DB_URL") == ADDON and settings["FARM_LEASES_IN_FLIGHT"] is not None


def test_a_projects_own_middleware_and_pipeline_stay_beside_farms():
    settings = project(DOWNLOADER_MIDDLEWARES={OWN_MIDDLEWARE: 100}, ITEM_PIPELINES={OWN_PIPELINE: 200})
    middlewares = settings.getwithbase("DOWNLOADER_MIDDLEWARES")
    assert middlewares[OWN_MIDDLEWARE] == 100
    assert middlewares["farm.crawl.leases.KeywordLeaseMiddleware"] == 50
    assert "scrapy.downloadermiddlewares.retry.RetryMiddleware" in middlewares  # Scrapy's _BASE ones too
    pipelines = settings.getwithbase("ITEM_PIPELINES")
    assert dict(pipelines) == {OWN_PIPELINE: 200, "farm.pipelines.sql.SqlPostingsPipeline": 300}


def test_what_the_project_sets_wins_over_the_add_on():
    settings = project(
        SCHEDULER="myproject.Scheduler",
        CONCURRENT_REQUESTS=2,
        FARM_DB_URL="sqlite:///own.db",
        EXTENSIONS={"farm.extensions.runs.RunLog": None},
        ITEM_PIPELINES={"farm.pipelines.sql.SqlPostingsPipeline": 900},
    )
    assert settings["SCHEDULER"] == "myproject.Scheduler"
    assert settings.getint("CONCURRENT_REQUESTS") == 2
    assert settings["FARM_DB_URL"] == "sqlite:///own.db"
    assert settings["EXTENSIONS"]["farm.extensions.runs.RunLog"] is None  # turned off stays off
    assert settings["EXTENSIONS"]["farm.extensions.reaper.LeaseReaper"] == 110
    assert settings["ITEM_PIPELINES"]["farm.pipelines.sql.SqlPostingsPipeline"] == 900


def test_a_component_dict_given_on_the_command_line_keeps_farms_components():
    settings = project()
    settings.set("EXTENSIONS", {"myproject.Timer": 5}, priority="cmdline")
    FarmAddon().update_settings(settings)  # as the crawler applies its add-ons after -s
    assert settings["EXTENSIONS"]["myproject.Timer"] == 5
    assert settings["EXTENSIONS"]["farm.crawl.parts.CrawlParts"] == -10


def test_farms_own_settings_turn_farm_on_with_the_add_on():
    settings = Settings()
    settings.setmodule("farm.settings", priority="project")
    assert dict(settings["ADDONS"]) == {"farm.addon.FarmAddon": 0}
    assert not hasattr(farm.settings, "SCHEDULER") and farm.settings.EXTENSIONS == {LEAN: 130}


def enabled(settings, name):
    """The components Scrapy builds for the component dict ``name`` (its _BASE ones included)."""
    return build_component_list(settings.get_component_priority_dict_with_base(name))


def test_the_lean_process_runs_only_where_a_project_lists_it():
    assert LEAN not in enabled(project(), "EXTENSIONS")  # the add-on alone: the process left as it is
    assert "farm.extensions.reaper.LeaseReaper" in enabled(project(), "EXTENSIONS")
    farms = Settings()
    farms.setmodule("farm.settings", priority="project")
    FarmAddon().update_settings(farms)
    assert LEAN in enabled(farms, "EXTENSIONS")  # farm's own project lists it


def crawl_settings(spidercls, **own):
    """The settings of a crawl of ``spidercls`` once Scrapy has applied the add-on."""
    settings = Settings()
    settings.setdict({"ADDONS": {"farm.addon.FarmAddon": 0}, **own}, priority="project")
    build_from_crawler(FarmAddon, get_crawler(spidercls)).update_settings(settings)
    return settings


def test_the_signing_middleware_is_installed_only_for_a_spider_that_signs():
    assert SIGNING in enabled(crawl_settings(QcwySpider), "DOWNLOADER_MIDDLEWARES")
    for spidercls in (BossSpider, ZhilianSpider, scrapy.Spider):
        middlewares = enabled(crawl_settings(spidercls), "DOWNLOADER_MIDDLEWARES")
        assert SIGNING not in middlewares and "farm.crawl.leases.KeywordLeaseMiddleware" in middlewares


# what `scrapy startproject`'s template sets (Scrapy 2.13 on)
TEMPLATE = {
    "ROBOTSTXT_OBEY": True,
    "CONCURRENT_REQUESTS_PER_DOMAIN": 1,
    "DOWNLOAD_DELAY": 1,
    "FEED_EXPORT_ENCODING": "utf-8",
}


def test_a_project_setting_that_overrides_farms_tuning_is_named_in_one_warning(caplog):
    with caplog.at_level(logging.WARNING, logger="farm.addon"):
        settings = project(**TEMPLATE, RETRY_HTTP_CODES=["500", 502, 504, 522, 524, 408])
    warned = [record.getMessage() for record in caplog.records if record.name == "farm.addon"]
    assert warned == [
        f"farm: {name}=1 of the project's settings is used, not farm's tuning {getattr(farm.settings, name)!r} "
        "(docs/addon.md)"
        for name in ("CONCURRENT_REQUESTS_PER_DOMAIN", "DOWNLOAD_DELAY")
    ]  # RETRY_HTTP_CODES: farm's own codes, written otherwise; the others are not farm's tuning
    assert settings.getint("CONCURRENT_REQUESTS_PER_DOMAIN") == 1 and settings.getfloat("DOWNLOAD_DELAY") == 1
    assert settings.getpriority("CONCURRENT_REQUESTS") == ADDON
    assert settings.getint("CONCURRENT_REQUESTS") == int(farm.settings.CONCURRENT_REQUESTS)


def test_a_tuned_setting_given_on_the_command_line_is_taken_as_meant(caplog):
    settings = Settings()
    settings.setdict({"ADDONS": {"farm.addon.FarmAddon": 0}}, priority="project")
    settings.set("DOWNLOAD_DELAY", 0.5, priority="cmdline")
    with caplog.at_level(logging.WARNING, logger="farm.addon"):
        FarmAddon().update_settings(settings)
    assert settings.getfloat("DOWNLOAD_DELAY") == 0.5
    assert not [record for record in caplog.records if record.name == "farm.addon"]


@pytest.fixture
def site_registry(monkeypatch):
    """farm.sites' registry as a copy, so that a site registered here is gone after the test."""
    monkeypatch.setattr(sites, "_REGISTRY", dict(sites._REGISTRY))


def test_a_registered_site_is_a_source_whose_cities_are_checked_as_the_three_sites_are(site_registry):
    with pytest.raises(KeywordError, match="unknown source 'tinyjobs'"):
        validate_keyword("tinyjobs", "Springfield", "python")
    sites.register_site("tinyjobs", {"Springfield": "spr"}, re.compile(r"[a-z]{3}"))
    assert validate_keyword("tinyjobs", "Springfield", "python") == ("tinyjobs", "Springfield", "python")
    assert validate_keyword("tinyjobs", "ogd", "python")[1] == "ogd"  # a site code passes as is
    with pytest.raises(KeywordError, match="unknown city 'Atlantis' for tinyjobs"):
        validate_keyword("tinyjobs", "Atlantis", "python")
    with pytest.raises(ValueError, match="site name"):
        sites.register_site("Tiny Jobs", {}, re.compile("x"))


def test_scrapys_remote_control_switched_off_is_not_listed_so_never_imported():
    assert addon.REMOTE_CONTROL in enabled(Settings(), "EXTENSIONS")  # Scrapy lists it itself
    off = project(REMOTE_CONTROL_ENABLED=False)
    assert addon.REMOTE_CONTROL not in off["EXTENSIONS_BASE"] and addon.REMOTE_CONTROL not in enabled(off, "EXTENSIONS")
    assert "scrapy.extensions.corestats.CoreStats" in enabled(off, "EXTENSIONS")  # Scrapy's others stay
    assert addon.REMOTE_CONTROL in enabled(project(REMOTE_CONTROL_ENABLED=True), "EXTENSIONS")
    farms = Settings()
    farms.setmodule("farm.settings", priority="project")
    FarmAddon().update_settings(farms)
    assert addon.REMOTE_CONTROL not in enabled(farms, "EXTENSIONS")  # farm's own project has it off
