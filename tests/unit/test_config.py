"""farm.config: every setting read and checked once, a bad one named in one line; farm.display."""

import re
from pathlib import Path

import pytest
from scrapy.settings import Settings

import farm.settings
from farm.config import FarmConfig, SettingError
from farm.config.doc import written
from farm.display import escape, without_secrets

DOCS = Path(__file__).resolve().parents[2] / "docs" / "settings.md"


def config(**values):
    settings = Settings()
    settings.setmodule("farm.settings", priority="default")
    for name, value in values.items():
        settings.set(name, value, priority="cmdline")  # as -s NAME=value or the environment gives it
    return FarmConfig.from_settings(settings)


def refused(name, value) -> str:
    with pytest.raises(SettingError) as caught:
        config(**{name: value})
    message = str(caught.value)
    assert message.startswith(f"{name}=") and "\n" not in message
    return message


def test_the_defaults_are_good_and_typed():
    c = config()
    assert (c.lease_timeout, c.max_retries, c.retry_delay, c.metrics_port) == (1800, 3, 600.0, 0)
    assert isinstance(c.lease_timeout, int) and isinstance(c.retry_delay, float)


def test_values_given_as_text_are_cast_once():
    c = config(FARM_LEASE_TIMEOUT="60", FARM_RETRY_DELAY="1e3", FARM_METRICS_PORT=" 9410 ", LOG_LEVEL="debug")
    assert (c.lease_timeout, c.retry_delay, c.metrics_port, c.log_level) == (60, 1000.0, 9410, "DEBUG")


@pytest.mark.parametrize(
    "name, value, takes",
    [
        ("FARM_LEASE_TIMEOUT", "30m", "a whole number of seconds, at least 1"),
        ("FARM_MAX_RETRIES", "1.5", "a whole number from 0 to 1000"),
        ("FARM_RETRY_DELAY", "nan", "a number of seconds from 0"),
        ("FARM_RETRY_DELAY", "inf", "a number of seconds from 0"),
        ("FARM_RETRY_DELAY", "1e300", "a number of seconds from 0"),
        ("FARM_METRICS_PORT", "abc", "a port number from 1 to 65535"),
        ("FARM_METRICS_PORT", "70000", "a port number from 1 to 65535"),
        ("FARM_TIMEZONE", "Mars/Olympus", "an IANA time zone name"),
        ("LOG_LEVEL", "LOUD", "one of CRITICAL, ERROR, WARNING, INFO, DEBUG"),
        ("CONCURRENT_REQUESTS", "four", "a whole number from 1"),
    ],
)
def test_a_bad_value_is_one_line_naming_the_setting_and_what_it_takes(name, value, takes):
    message = refused(name, value)
    assert f"{name}={value!r}" in message and takes in message


@pytest.mark.parametrize("value", ["0", "-5"])
def test_a_lease_timeout_that_is_not_positive_is_refused(value):
    assert "at least 1" in refused("FARM_LEASE_TIMEOUT", value)


@pytest.mark.parametrize(
    "url, problem",
    [
        ("sqlite://", "in memory"),
        ("sqlite:///:memory:", "in memory"),
        ("mysql+pymysql://root@127.0.0.1:abc/farm", "port that is not a number"),
        ("mysql+pymysql://root@127.0.0.1:3306/farm?charset=bogus", "charset='bogus'"),
        ("mysql+pymysql://root@127.0.0.1:3306/farm?connect_timeout=abc", "driver option of the wrong type"),
        ("mysql+pymysql://root@127.0.0.1:3306/farm?no_such_option=1", "driver option pymysql does not know"),
    ],
)
def test_a_database_url_is_checked_with_its_driver_options(url, problem):
    assert problem in refused("FARM_DB_URL", url)


def test_a_bad_url_never_shows_its_password():
    message = refused("FARM_DB_URL", "mysql+pymysql://u:hunter22@127.0.0.1:3306/farm?charset=bogus&password=hunter33")
    assert "hunter22" not in message and "hunter33" not in message
    message = refused("FARM_REDIS_URL", "redis://:se/cret99@127.0.0.1:6379/0")
    assert "cret99" not in message and "se/" not in message


def test_a_proxies_file_that_is_not_one_is_never_shown(tmp_path):
    path = tmp_path / "shadow"
    path.write_text("operator:$6$saltsalt$hashhashhash:19000:0:99999:7:::\n")
    message = refused("FARM_PROXIES", str(path))
    assert "line 1" in message
    assert "operator" not in message and "hash" not in message and "salt" not in message


def test_metrics_listen_on_this_machine_only_by_default():
    assert config().metrics_host == "127.0.0.1"


def test_settings_module_casts_nothing_at_import():
    source = Path(farm.settings.__file__).read_text()
    assert not re.search(r"\b(int|float)\(", source)


def test_the_docs_tables_are_the_ones_the_declarations_write():
    """docs/settings.md's tables are written from farm.config (`python -m farm.config.doc`)."""
    page = DOCS.read_text()
    assert page == written(page), "docs/settings.md is stale: run python -m farm.config.doc"
    assert all(f"| `{FarmConfig.key(name)}`" in page for name in FarmConfig.settings_fields())
    assert "| `FARM_<SITE>_MAX_PAGES` | boss `3`, qcwy `50`, zhilian `15`; another site `10` |" in page
    assert "| `FARM_CHECK_HISTORY_DAYS` | `7` |" in page
    stale = page.replace("| `FARM_LEASE_TIMEOUT` | `1800` |", "| `FARM_LEASE_TIMEOUT` | `30` |")
    assert stale != page and written(stale) == page  # written anew, the hand-written rest kept


def test_without_secrets_masks_every_form():
    url = "redis://:se/cret99@127.0.0.1:6379/0?password=hunter2&token=t0ken"
    shown = without_secrets(f"error for {url}: Port could not be cast to integer value as 'se/cret99'", url)
    assert "cret99" not in shown and "hunter2" not in shown and "t0ken" not in shown
    assert without_secrets("mysql://u:pw@h/db?passwd=abc: refused") == "mysql://u:***@h/db?passwd=***: refused"


def test_escape_shows_control_characters_and_keeps_text():
    assert escape("北京 ok\x1b[2J\x07\u202e!") == "北京 ok\\e[2J\\x07\\u202e!"
