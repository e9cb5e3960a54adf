"""A crawl that cannot start says why in one line, in any Scrapy project that turns farm on.

farm's start-up errors (farm.config's ``SettingError``, farm.crawl.starting's
``FarmStartError``) name the setting and the fix in their message, and where farm raises
one it logs it first, as ``farm: <message>``. Scrapy re-raises it in the crawl's task,
which nobody waits for, and asyncio's exception handler would print it again with its
traceback ("Task exception was never retrieved", on the ``asyncio`` logger).
``quiet_start_errors`` puts a filter on that logger (and on ``twisted``'s) that turns
such a record into the error's one line, or drops it where farm has logged that line
already: never two, never none. Every other error keeps its traceback. (Under Twisted's
CrawlerProcess, ``FORCE_CRAWLER_PROCESS``, Twisted also writes an unhandled error to
stderr past Python's logging; farm's own ``scrapy crawl``, farm.commands.crawl, takes
the error there.)

The add-on (farm.addon) installs it before Scrapy builds a crawler, so that no
``COMMANDS_MODULE`` is needed for it.
"""

import logging
from collections import deque

from farm.errors import FarmStartError, SettingError

# the errors whose message is all a user needs: the setting and the fix
START_ERRORS = (FarmStartError, SettingError)
# asyncio's default exception handler, and Scrapy's log observer of Twisted's unhandled errors
LOGGERS = ("asyncio", "twisted")


def is_start_error(error: BaseException | None) -> bool:
    """Whether ``error`` is a start-up error of farm's, whose one line says it all."""
    return isinstance(error, START_ERRORS)


def one_line(error: BaseException) -> str:
    return f"farm: {error}"


class LoggedLines(logging.Handler):
    """The error lines farm's own loggers wrote lately (it writes nothing itself)."""

    def __init__(self):
        super().__init__(logging.ERROR)
        self.lines: deque[str] = deque(maxlen=64)

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


class StartErrorFilter(logging.Filter):
    """A record that carries a start-up error of farm's becomes its one line, or goes where farm
    has logged that line already."""

    def __init__(self, logged: LoggedLines):
        super().__init__()
        self.logged = logged

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        if error is None or not is_start_error(error):
            return True
        line = one_line(error)
        if line in self.logged.lines:
            return False
        record.msg, record.args, record.exc_info, record.exc_text = "%s", (line,), None, None
        return True


LOGGED = LoggedLines()
FILTER = StartErrorFilter(LOGGED)


def quiet_start_errors() -> None:
    """Install the filter and what it reads (once: a logger keeps one copy of each)."""
    farm_logger = logging.getLogger("farm")
    if LOGGED not in farm_logger.handlers:
        farm_logger.addHandler(LOGGED)
    for name in LOGGERS:
        logging.getLogger(name).addFilter(FILTER)
