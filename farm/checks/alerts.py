"""The failed checks sent where a team reads alerts, through apprise: DingTalk and WeCom robots
(``dingtalk://TOKEN/``, ``wecombot://KEY``), Slack (``slack://…``), e-mail (``mailtos://…``), any
webhook (``json://host/path``). The URLs carry secrets: nothing here prints or logs one, only each
service's name; apprise's own log is kept quiet while it sends, as its lines may name the URLs."""

import logging
from contextlib import contextmanager

import apprise

from farm.checks.result import CheckResult
from farm.errors import BadSetting

TITLE = "farm check: {failed} of {total} checks failed"
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


def message(checks: list[CheckResult]) -> tuple[str, str]:
    """(title, body) of the failed checks."""
    failed = [check for check in checks if not check.ok]
    lines = [check.line() for check in failed[:MOST_LINES]]
    if len(failed) > MOST_LINES:
        lines.append(f"… and {len(failed) - MOST_LINES} more")
    return TITLE.format(failed=len(failed), total=len(checks)), "\n".join(lines)


def send(sender: apprise.Apprise, checks: list[CheckResult]) -> tuple[list[str], bool]:
    """Send the failed checks; (the services' names, whether every one took them)."""
    title, body = message(checks)
    names = [service.service_name for service in sender]
    with _quiet_apprise():
        delivered = sender.notify(title=title, body=body)
    return names, bool(delivered)


@contextmanager
def _quiet_apprise():
    log = logging.getLogger("apprise")
    level, propagate = log.level, log.propagate
    log.setLevel(logging.CRITICAL + 1)
    log.propagate = False
    try:
        yield
    finally:
        log.setLevel(level)
        log.propagate = propagate
