"""farm's Scrapy add-on: its components and settings at add-on priority, under a project's own."""

import re

import pytest
from scrapy.settings import Settings, get_settings_priority

import farm.settings
from farm import addon, cities
from farm.addon import FarmAddon
from farm.state.validation import KeywordError, validate_keyword

ADDON = get_settings_priority("addon")
OWN_MIDDLEWARE = "myproject.middlewares.Own"
OWN_PIPELINE = "myproject.pipelines.Own"


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
        EXTENSIONS={"farm.extensions.lean.LeanProcess": None},
        ITEM_PIPELINES={"farm.pipelines.sql.SqlPostingsPipeline": 900},
    )
    assert settings["SCHEDULER"] == "myproject.Scheduler"
    assert settings.getint("CONCURRENT_REQUESTS") == 2
    assert settings["FARM_DB_URL"] == "sqlite:///own.db"
    assert settings["EXTENSIONS"]["farm.extensions.lean.LeanProcess"] is None  # turned off stays off
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
    assert not hasattr(farm.settings, "SCHEDULER") and not hasattr(farm.settings, "EXTENSIONS")


@pytest.fixture
def site_registry(monkeypatch):
    """farm.cities' tables as copies, so that a site registered here is gone after the test."""
    for name in ("CITY_CODES", "CODE_PATTERNS", "CODE_FORMS"):
        monkeypatch.setattr(cities, name, dict(getattr(cities, name)))


def test_a_registered_site_is_a_source_whose_cities_are_checked_as_the_three_sites_are(site_registry):
    with pytest.raises(KeywordError, match="unknown source 'tinyjobs'"):
        validate_keyword("tinyjobs", "Springfield", "python")
    cities.register_site("tinyjobs", {"Springfield": "spr"}, re.compile(r"[a-z]{3}"))
    assert validate_keyword("tinyjobs", "Springfield", "python") == ("tinyjobs", "Springfield", "python")
    assert validate_keyword("tinyjobs", "ogd", "python")[1] == "ogd"  # a site code passes as is
    with pytest.raises(KeywordError, match="unknown city 'Atlantis' for tinyjobs"):
        validate_keyword("tinyjobs", "Atlantis", "python")
    with pytest.raises(ValueError, match="site name"):
        cities.register_site("Tiny Jobs", {}, re.compile("x"))
