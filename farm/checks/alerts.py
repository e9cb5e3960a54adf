"""The failed checks sent where a team reads alerts, through apprise: DingTalk and WeCom robots
(``dingtalk://TOKEN/``, ``wecombot://KEY``), Slack (``slack://…``), e-mail (``mailtos://…``), any
webhook (``json://host/path``). The URLs carry secrets: nothing here prints or logs one, only each
service's name; apprise's own log is kept off the console while it sends, as its lines may name the URLs.
A service that does not take the message is named with apprise's reason, its secrets masked.

The alert's title names the day checked and the database (its kind, host and name; never a password), so
that a team reading alerts from several farms knows which one failed."""

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import date

import apprise
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from farm.checks.result import CheckResult
from farm.display import mask_url, without_secrets
from farm.errors import BadSetting

TITLE = "farm check {day} on {database}: {failed} of {total} checks failed"
MOST_LINES = 40  # a robot's message has a length limit: the first failures, then how many more


def services(urls: list[str]) -> apprise.Apprise:
    """An Apprise of the URLs; BadSetting names a URL apprise does not know by its place and scheme only."""
    sender = apprise.Apprise()
    for place, url in enumerate(urls, 1):
        service = apprise.Apprise.instantiate(url)
        if service is None:
            scheme = url.split("://", 1)[0] if "://" in url else "(none)"
            raise BadSetting(f"alert URL {place} (scheme {scheme!r}) is not a service apprise knows")
        sender.add(service)
    return sender


def message(checks: list[CheckResult], day: date, database: str) -> tuple[str, str]:
    """(title, body) of the failed checks of ``day`` on ``database`` (a name without secrets)."""
    failed = [check for check in checks if not check.ok]
    lines = [check.line() for check in failed[:MOST_LINES]]
    if len(failed) > MOST_LINES:
        lines.append(f"… and {len(failed) - MOST_LINES} more")
    title = TITLE.format(day=day, database=database, failed=len(failed), total=len(checks))
    return title, "\n".join(lines)


def database_name(url: str) -> str:
    """The database of ``url`` as an alert names it: its kind, host, port and name; no user, no password."""
    try:
        parsed = make_url(url)
    except ArgumentError:
        return mask_url(url)
    kind = parsed.get_backend_name()
    if not parsed.host:
        return f"{kind} {parsed.database or '(memory)'}"
    port = f":{parsed.port}" if parsed.port else ""
    return f"{kind} {parsed.host}{port}/{parsed.database or ''}"


@dataclass
class Sent:
    """Where the failures went: every service by name, and those that did not take them with apprise's reason."""

    services: list[str] = field(default_factory=list)
    unsent: dict[str, str] = field(default_factory=dict)  # service name -> why

    @property
    def delivered(self) -> bool:
        return not self.unsent


def send(sender: apprise.Apprise, checks: list[CheckResult], day: date, database: str, urls: list[str]) -> Sent:
    """Send the failed checks to each service of ``sender``; the reasons of the ones that failed, with
    every secret of ``urls`` masked."""
    title, body = message(checks, day, database)
    sent = Sent()
    for place, service in enumerate(sender, 1):
        name = str(service.service_name)
        sent.services.append(name)
        with _apprise_log() as said:
            delivered = service.notify(title=title, body=body)
        if not delivered:
            why = "; ".join(dict.fromkeys(said)) or "apprise gave no reason"
            sent.unsent[f"{name} ({place})"] = without_secrets(why, *urls)
    return sent


class _Kept(logging.Handler):
    def __init__(self, lines: list[str]):
        super().__init__(logging.WARNING)
        self.lines = lines

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


@contextmanager
def _apprise_log() -> Iterator[list[str]]:
    """apprise's warnings and errors while it sends, kept in a list instead of logged."""
    log = logging.getLogger("apprise")
    level, propagate = log.level, log.propagate
    lines: list[str] = []
    handler = _Kept(lines)
    log.setLevel(logging.WARNING)
    log.propagate = False
    log.addHandler(handler)
    try:
        yield lines
    finally:
        log.removeHandler(handler)
        log.setLevel(level)
        log.propagate = propagate
