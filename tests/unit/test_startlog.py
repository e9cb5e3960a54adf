"""farm.startlog: a start-up error asyncio would print with its traceback is its one line, once."""

import logging
import sys

import pytest

from farm.errors import FarmStartError, SettingError
from farm.startlog import FILTER, LOGGED, quiet_start_errors


@pytest.fixture
def installed():
    quiet_start_errors()
    quiet_start_errors()  # twice, as two crawler processes in one Python would: still one of each
    yield
    logging.getLogger("farm").removeHandler(LOGGED)
    for name in ("asyncio", "twisted"):
        logging.getLogger(name).removeFilter(FILTER)
    LOGGED.lines.clear()


def unretrieved(error: BaseException) -> logging.LogRecord:
    """The record asyncio's exception handler makes of a task's error nobody took."""
    try:
        raise error
    except BaseException:
        exc_info = sys.exc_info()
    return logging.LogRecord("asyncio", logging.ERROR, __file__, 1, "Task exception was never retrieved", (), exc_info)


def test_installed_once_on_asyncios_and_twisteds_loggers(installed):
    assert logging.getLogger("farm").handlers.count(LOGGED) == 1
    assert logging.getLogger("asyncio").filters.count(FILTER) == 1
    assert logging.getLogger("twisted").filters.count(FILTER) == 1


def test_a_start_error_farm_logged_already_is_not_printed_again(installed):
    error = FarmStartError("cannot reach the database at FARM_DB_URL='sqlite:///x.db': no such file")
    logging.getLogger("farm.crawl.starting").error("farm: %s", error)
    assert not FILTER.filter(unretrieved(error))


def test_a_setting_error_nobody_logged_becomes_its_one_line(installed):
    record = unretrieved(SettingError("FARM_BOSS_IMPERSONATE='x' cannot be used: it takes chrome"))
    assert FILTER.filter(record)
    assert record.getMessage() == "farm: FARM_BOSS_IMPERSONATE='x' cannot be used: it takes chrome"
    assert record.exc_info is None and record.exc_text is None  # no traceback


def test_any_other_error_keeps_its_traceback(installed):
    record = unretrieved(ValueError("a bug"))
    assert FILTER.filter(record)
    assert record.exc_info[1].args == ("a bug",) and record.getMessage() == "Task exception was never retrieved"
