"""farm.config's per-site settings, the work backend it names, and each setting declared once."""

import os
import re

import pytest
from scrapy.settings import Settings

import farm.settings
from farm.config import (
    LOCAL_BACKEND,
    REDIS_BACKEND,
    FarmConfig,
    SettingError,
    SiteConfig,
    Thresholds,
    environment,
    setting_key,
    site_defaults,
    site_key,
)
from farm.config.kinds import MAX_PAGES_MOST
from farm.spiders.base import LeaseSpider
from farm.state.models import max_pages_that_fit
from tests.unit.spider_helpers import make_spider

POLITE_RATE, POLITE_MAX_PAGES = (SiteConfig.model_fields[name].default for name in ("rate", "max_pages"))


def config(**values):
    settings = Settings()
    settings.setmodule("farm.settings", priority="default")
    for name, value in values.items():
        settings.set(name, value, priority="cmdline")  # as -s NAME=value or the environment gives it
    return FarmConfig.from_settings(settings)


def refused(**values) -> str:
    with pytest.raises(SettingError) as caught:
        config(**values)
    message = str(caught.value)
    assert "\n" not in message
    return message


class AcmeSpider(LeaseSpider):
    """A project's own site, as docs/addon.md has one written."""

    name = "acme"
    page_size = 10
    city_codes = {"Springfield": "spr"}
    code_pattern = re.compile(r"[a-z]{3}")


# --- the sites ----------------------------------------------------------------------------------------


def test_a_site_farm_does_not_know_is_crawled_politely_never_without_a_limit():
    acme = config().site("acme")
    assert (acme.name, acme.rate, acme.max_pages, acme.base_url) == ("acme", POLITE_RATE, POLITE_MAX_PAGES, "")
    assert 0 < acme.rate <= 1 and 1 <= acme.max_pages <= 10
    assert acme.impersonate == "chrome"  # FARM_IMPERSONATE's


def test_farms_three_sites_keep_their_own_values():
    c = config()
    assert [(s.name, s.base_url, s.rate, s.max_pages) for s in map(c.site, ("boss", "qcwy", "zhilian"))] == [
        ("boss", "https://www.zhipin.com", 0.2, 3),
        ("qcwy", "https://we.51job.com", 0.5, 50),
        ("zhilian", "https://www.zhaopin.com", 0.33, 15),
    ]


def test_a_sites_own_settings_are_read_and_typed():
    c = config(
        FARM_ACME_BASE_URL="http://127.0.0.1:8765",
        FARM_ACME_RATE="2",
        FARM_ACME_MAX_PAGES=" 5 ",
        FARM_ACME_IMPERSONATE="",
        FARM_BOSS_RATE="0",
    )
    assert c.site("ACME") == SiteConfig(
        name="acme", base_url="http://127.0.0.1:8765", rate=2.0, max_pages=5, impersonate=""
    )
    assert c.site("acme").key("max_pages") == "FARM_ACME_MAX_PAGES"
    assert c.site("boss").rate == 0.0  # 0 is no limit, when a site's setting says so


@pytest.mark.parametrize(
    "name, value, takes",
    [
        ("FARM_ACME_RATE", "fast", "requests per second from 0 (no limit) to 1000"),
        ("FARM_ACME_RATE", "-1", "requests per second"),
        ("FARM_BOSS_RATE", "nan", "requests per second"),
        ("FARM_ACME_MAX_PAGES", "0", f"a whole number of pages from 1 to {MAX_PAGES_MOST}"),
        ("FARM_ACME_MAX_PAGES", "500", f"a whole number of pages from 1 to {MAX_PAGES_MOST}"),
        ("FARM_QCWY_MAX_PAGES", "2.5", "a whole number of pages"),
        ("FARM_ACME_BASE_URL", "jobs.example.com", "is not an http(s) URL"),
        ("FARM_ACME_IMPERSONATE", "netscape4", "a curl_cffi Chrome target"),
        ("FARM_MY_SITE_2_MAX_PAGES", "many", "a whole number of pages"),
    ],
)
def test_a_bad_per_site_value_is_one_line_naming_it(name, value, takes):
    message = refused(**{name: value})
    assert message.startswith(f"{name}={value!r} ") and takes in message


def test_a_site_names_itself_by_the_whole_of_its_name():
    c = config(FARM_MY_SITE_2_MAX_PAGES="7", FARM_MY_SITE_2_BASE_URL="https://jobs.example.com")
    assert (c.site("my_site_2").max_pages, c.site("my_site_2").base_url) == (7, "https://jobs.example.com")


def test_impersonation_is_the_sites_own_else_farm_impersonate_and_empty_is_scrapys_client():
    assert config(FARM_IMPERSONATE="chrome146").site("qcwy").impersonate == "chrome146"
    assert config(FARM_IMPERSONATE="").impersonate == ""
    c = config(FARM_IMPERSONATE="chrome", FARM_BOSS_IMPERSONATE="")
    assert (c.site("boss").impersonate, c.site("qcwy").impersonate) == ("", "chrome")


def test_the_largest_page_cap_is_the_one_the_keyword_table_holds():
    assert MAX_PAGES_MOST == max_pages_that_fit()


def test_a_project_site_spider_builds_with_the_polite_defaults():
    spider, _ = make_spider(AcmeSpider, FARM_ACME_BASE_URL="http://127.0.0.1:8765/")
    assert (spider.base_url, spider.max_pages) == ("http://127.0.0.1:8765", POLITE_MAX_PAGES)
    spider, _ = make_spider(AcmeSpider, FARM_ACME_BASE_URL="http://127.0.0.1:8765", FARM_ACME_MAX_PAGES="4")
    assert spider.max_pages == 4


def test_a_project_site_spider_without_its_address_is_one_line_naming_the_setting():
    with pytest.raises(SettingError, match=r"^FARM_ACME_BASE_URL is not set: set it to the site's address"):
        make_spider(AcmeSpider)


# --- the work backend ---------------------------------------------------------------------------------


def test_the_work_backend_is_the_local_one_the_redis_one_with_redis_or_the_one_named():
    assert config().work_backend == LOCAL_BACKEND
    assert config(FARM_REDIS_URL="redis://127.0.0.1:6379/0").work_backend == REDIS_BACKEND
    named = config(FARM_WORK_BACKEND="myproject.backends.MemoryBackend", FARM_REDIS_URL="redis://h:6379/0")
    assert named.work_backend == "myproject.backends.MemoryBackend"


@pytest.mark.parametrize("value", ["not a path", "LocalBackend", "farm.crawl..Local"])
def test_a_work_backend_that_is_no_class_path_is_one_line_naming_it(value):
    assert refused(FARM_WORK_BACKEND=value).startswith(f"FARM_WORK_BACKEND={value!r} cannot be used")


def test_a_back_off_that_starts_above_its_maximum_is_one_line_naming_both():
    message = refused(FARM_BLOCK_BASE_DELAY="10", FARM_BLOCK_MAX_DELAY="5")
    assert message.startswith("FARM_BLOCK_BASE_DELAY=10 is above FARM_BLOCK_MAX_DELAY=5")


# --- each setting declared once: its default, its environment variable, -s over both -------------------


def test_the_settings_module_gives_each_setting_its_environment_variable_else_its_default():
    """farm.settings writes no value of its own; the configuration of farm's project, read from it, is the
    one the model reads from the environment."""
    for name in FarmConfig.settings_fields():
        given = FarmConfig.environment_of(name)
        default = FarmConfig.model_fields[name].get_default(call_default_factory=True)
        assert getattr(farm.settings, FarmConfig.key(name)) == (default if given is None else given), name
    for name, site in site_defaults().items():
        assert getattr(farm.settings, site_key(name, "max_pages")) == os.environ.get(
            site_key(name, "max_pages"), site.max_pages
        )
    assert config() == FarmConfig() == FarmConfig.from_settings({})


def test_a_setting_is_given_on_the_command_line_else_by_the_environment_else_by_its_default(monkeypatch):
    monkeypatch.delenv("FARM_LEASE_TIMEOUT", raising=False)
    assert FarmConfig.from_settings({}).lease_timeout == 1800
    monkeypatch.setenv("FARM_LEASE_TIMEOUT", "60")
    monkeypatch.setenv("FARM_CONCURRENT_REQUESTS", "9")  # Scrapy's own, from its FARM_ variable
    assert FarmConfig.from_settings({}).lease_timeout == 60
    assert FarmConfig.from_settings({}).concurrent_requests == 9
    assert FarmConfig.from_settings({"FARM_LEASE_TIMEOUT": "90"}).lease_timeout == 90
    assert FarmConfig.from_settings({"FARM_LEASE_TIMEOUT": ""}).lease_timeout == 60  # "": not given
    assert environment()["FARM_LEASE_TIMEOUT"] == "60" and environment()["CONCURRENT_REQUESTS"] == "9"


def test_a_bad_value_from_the_environment_is_one_line_naming_its_setting(monkeypatch):
    monkeypatch.setenv("FARM_MAX_RETRIES", "many")
    with pytest.raises(SettingError, match=r"^FARM_MAX_RETRIES='many' cannot be used: it takes a whole number"):
        FarmConfig.from_settings({})
    assert FarmConfig.from_settings({"FARM_MAX_RETRIES": "2"}).max_retries == 2  # -s's, the environment's unread


def test_farms_sites_read_the_environment_and_an_empty_impersonation_is_a_value(monkeypatch):
    monkeypatch.setenv("FARM_QCWY_MAX_PAGES", "7")
    monkeypatch.setenv("FARM_BOSS_IMPERSONATE", "")
    c = FarmConfig.from_settings({"FARM_BOSS_RATE": "1"})
    assert (c.site("qcwy").max_pages, c.site("boss").rate, c.site("boss").impersonate) == (7, 1.0, "")
    assert FarmConfig.from_settings({"FARM_QCWY_MAX_PAGES": "9"}).site("qcwy").max_pages == 9


@pytest.mark.parametrize("group", [FarmConfig, Thresholds])
def test_every_default_is_a_value_its_setting_takes(group):
    made = group()
    for name, declared in group.settings_fields().items():
        assert declared.kind.parse(getattr(made, name)) == getattr(made, name), name


def test_thresholds_come_with_their_defaults_and_are_read_with_every_setting():
    assert config().checks == Thresholds()
    assert config(FARM_CHECK_HISTORY_DAYS="14").checks.history_days == 14
    assert refused(FARM_CHECK_MIN_COVERAGE="2").startswith("FARM_CHECK_MIN_COVERAGE='2' cannot be used")


def test_alert_urls_are_a_list_or_text_separated_by_spaces():
    assert config().alert_urls == ()
    assert config(FARM_ALERT_URLS="json://a/x,y mailto://b").alert_urls == ("json://a/x,y", "mailto://b")
    assert config(FARM_ALERT_URLS=["json://a", " "]).alert_urls == ("json://a",)


def test_a_field_names_its_setting():
    assert (setting_key("lease_timeout"), setting_key("work_backend_class")) == (
        "FARM_LEASE_TIMEOUT",
        "FARM_WORK_BACKEND",
    )
