"""farm's own exceptions, each defined once; the modules that raise them import them from here.

The ends of a page request (farm.crawl.paging: KeywordBlocked, SiteUnavailable, LeaseLost) stay beside
the paging that reads them: they are Scrapy's IgnoreRequest, and importing Scrapy here would slow every
`farm` command that needs no crawl.
"""

import click

# --- Settings and the database ----------------------------------------------------------------------


class SettingError(ValueError):
    """A setting that cannot be used: one line, safe to print, naming the setting and what it takes."""


class Invalid(ValueError):
    """Raised by a parser: what is wrong with the value, when more can be said than what it takes."""


class DatabaseUrlError(ValueError):
    """A database URL that cannot be used. The message names the setting, shows the URL
    with its password masked, and says what is wrong: it is safe to print and to log;
    ``problem`` is what is wrong alone."""

    def __init__(self, message: str, problem: str = ""):
        super().__init__(message)
        self.problem = problem or message


class DatabaseUnreachable(Exception):
    """The database URL is well formed but no connection could be made."""


class BadSetting(click.ClickException):
    """A setting farm cannot use: its one line (farm.config), and exit status 2, as for a bad option."""

    exit_code = 2


class SchemaNotCurrent(RuntimeError):
    """The database is empty or behind the code's schema; the message says how to fix it."""


class MigrationsNotOnDisk(RuntimeError):
    """farm was imported from a zip (a scrapyd egg), where Alembic cannot read its scripts."""


# --- Keywords ---------------------------------------------------------------------------------------


class KeywordError(ValueError):
    """A (source, city, job) that cannot be stored; the message names the problem."""


class KeywordFileError(ValueError):
    """A keyword file that cannot be imported, with where and why: its first bad line, and in ``more``
    the others found, each (line, why); several are said one a line under the file's name."""

    def __init__(self, path, line: int, message: str, more: tuple[tuple[int, str], ...] = ()):
        self.path = str(path)
        self.line = line
        self.message = message
        self.more = more
        if not more:
            text = f"{self.path} line {line}: {message}"
        else:
            lines = "".join(f"\n  line {at}: {why}" for at, why in ((line, message), *more))
            text = f"{self.path}: {1 + len(more)} bad lines, the file refused whole:{lines}"
        super().__init__(text)


# --- The crawl's machinery --------------------------------------------------------------------------


class WriteLost(Exception):
    """A write the crawl handed to the state writer was not committed."""


class BackendUnreachable(RuntimeError):
    """A work backend's service did not answer within the outage grace; the crawl closes with
    ``close_reason``."""

    close_reason = "farm_backend_error"


class RedisUnreachable(BackendUnreachable):
    """Redis did not answer within the outage grace."""

    close_reason = "farm_redis_error"


class BadPayload(ValueError):
    """A queued payload that is not a farm request."""


class JobdirInUse(RuntimeError):
    """Another live crawl holds the JOBDIR; the message names it."""


class CheckpointError(Exception):
    """A checkpoint that cannot be used as it is; the message says what to do."""


class OtherSpider(CheckpointError):
    """The JOBDIR holds another spider's checkpoint: left alone, the crawl does not start."""


# --- The keyword API's server -----------------------------------------------------------------------


class ApiRefusal(Exception):
    """An answer other than 2xx, as a status and a JSON body."""

    def __init__(self, status: int, body: dict, headers: dict | None = None):
        super().__init__(body.get("detail", ""))
        self.status = status
        self.body = body
        self.headers = headers or {}


class TokenRequired(Exception):
    """A bind that other machines could reach, without FARM_API_TOKEN."""


class HeadTooLarge(Exception):
    """Raised from a parser callback: the head is past ``max_head`` (the parser stops; 431)."""


# --- A crawl (farm.crawl, farm.spiders, farm.extensions) -----------------------------------------------


class FarmStartError(RuntimeError):
    """A crawl cannot start: the message names the setting and what to do, safe to print."""


class MetricsPortError(RuntimeError):
    """FARM_METRICS_PORT cannot be listened on."""


class ParseError(ValueError):
    """A response that is neither a page of results nor a recognised block."""


class UnknownCity(ValueError):
    """A keyword's city the site has no code for."""


# --- The keyword API's client (farm.api.client) -----------------------------------------------------


class ApiError(Exception):
    """An answer of the API other than 2xx."""

    def __init__(self, status: int, body):
        detail = body.get("detail") if isinstance(body, dict) else body
        super().__init__(f"{status}: {detail}")
        self.status = status
        self.body = body


class ApiUnreachable(Exception):
    """The keyword API could not be reached, or broke off its answer (refused, reset, timed out)."""


class ClaimLost(ApiError):
    """409 or 404: the keyword is no longer this client's; nothing was written."""


class Blocked(Exception):
    """Raised by ``fetch`` when the site blocks the crawler: the keyword goes back partial."""


class WallNotPassed(Exception):
    """The browser could not pass a site's wall: ``kind`` is "slider" (a slider or puzzle, which farm does not
    solve), "timeout" (the wall's page never granted its cookie), "browser" (Chromium failed or is missing) or
    "unproven" (a wall no spider names seemed passed, but the session it gave got no data)."""

    def __init__(self, wall: str, kind: str, detail: str):
        super().__init__(f"{wall}: {kind}: {detail}")
        self.wall = wall
        self.kind = kind
        self.detail = detail
