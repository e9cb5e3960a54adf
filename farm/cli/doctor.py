"""`farm doctor`: is this machine set up to crawl? One line per check: ok, warn or fail, and what to do.

Checks: the settings (each one's value), the database URL (reachable), the schema revision, the work
backend (FARM_WORK_BACKEND; Redis answering, with FARM_REDIS_URL), the browser that passes walls
(FARM_BROWSER_EXECUTABLE or Chromium on the PATH: found, and started headless as a crawl starts it),
each site's base URL (unreachable: a failure where this machine's crawl of it would fail, that is when
the keyword table holds its keywords and no FARM_PROXIES carries the crawl elsewhere, else a warning; a
site the keyword table names that no spider here crawls: a warning), FARM_TIMEZONE (and what "today"
is there), stale leases, and keywords that failed for the day. Only a failure makes the command exit
non-zero. Nothing is written anywhere: a missing SQLite file is reported, not created. No line shows a
secret (farm.display.without_secrets) or a control character a client stored (farm.display.escape).
"""

import urllib.error
import urllib.request
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from pathlib import Path

from scrapy.utils.misc import load_object
from sqlalchemy import select
from sqlalchemy.engine import Engine
from sqlalchemy.exc import ArgumentError, DBAPIError

from farm.cli.botcheck import check_person
from farm.cli.browsercheck import check_browser
from farm.cli.checkline import FAIL, OK, WARN, Check
from farm.config import FarmConfig
from farm.display import escape, mask_url, without_secrets
from farm.errors import DatabaseUrlError, FarmStartError, SettingError
from farm.state import tallies
from farm.state.clock import load_timezone, today, utcnow
from farm.state.db import make_engine
from farm.state.engine import URL_EXAMPLES, parse_url
from farm.state.migrate import HEAD, MIGRATIONS, current_revision
from farm.state.models import Keyword

__all__ = ["FAIL", "OK", "WARN", "Check", "run_checks"]

NAME_BACKEND = "work backend"


def run_checks(settings, db_url: str, url_origin: str, timeout: float) -> Iterator[Check]:
    """Every check, in order; the database's dependants only when the database answers
    and the settings they need are good. No secret of the database or Redis URL in any line."""
    secrets = (db_url, settings.get("FARM_REDIS_URL"), settings.get("FARM_PROXIES"), settings.get("FARM_API_TOKEN"))
    for check in _checks(settings, db_url, url_origin, timeout):
        yield Check(check.status, check.name, without_secrets(check.message, *secrets))


def _checks(settings, db_url: str, url_origin: str, timeout: float) -> Iterator[Check]:
    config, settings_check = check_settings(settings)
    yield settings_check
    tz_check, tz = check_timezone(settings.get("FARM_TIMEZONE"))
    engine, db_check = connect(db_url, url_origin, timeout)
    stored: list[str] = []  # the sites the keyword table holds
    crawled: set[str] | None = None  # the sites it holds keywords of; None when it cannot be read
    try:
        if engine is None:
            db_check = Check(
                db_check.status,
                db_check.name,
                f"{db_check.message} (schema, stale leases and failing keywords not checked)",
            )
        yield db_check
        if engine is not None:
            schema = check_schema(engine)
            yield schema
            if schema.status == OK:
                with engine.connect() as conn:
                    stored = tallies.sources(conn)
                    crawled = set(conn.execute(select(Keyword.source).distinct()).scalars())
            if schema.status == OK and config is None:
                yield Check(WARN, "stale leases", "not checked: fix the settings first")
            elif schema.status == OK:
                yield check_stale_leases(engine, config.lease_timeout)
                if tz is not None:
                    limits = tallies.Limits(config.max_retries, config.max_blocked_claims)
                    yield check_failing(engine, today(utcnow(), tz), limits)
    finally:
        if engine is not None:
            engine.dispose()
    yield tz_check
    yield check_backend(config, timeout)
    yield check_browser(config, timeout)
    yield from (Check(*found) for found in check_person(config))  # farm.cli.botcheck: BotD on the browser
    yield from check_sites(settings, timeout, stored, crawled, bool(config and config.proxies))


def check_settings(settings) -> tuple[FarmConfig | None, Check]:
    """Every setting checked as every command checks it (farm.config); the config, if good."""
    try:
        config = FarmConfig.from_settings(settings)
    except SettingError as exc:
        return None, Check(FAIL, "settings", f"{exc}: every command refuses to start until it is fixed")
    return config, Check(OK, "settings", "every setting is valid")


# --- the database ---------------------------------------------------------------


def _masked(url: str) -> str:
    return mask_url(url)  # never raises: a URL that does not parse is shown masked too


def connect(db_url: str, origin: str, timeout: float) -> tuple[Engine | None, Check]:
    """An engine on a database that answered, or None; and the check's line."""
    shown = _masked(db_url)
    examples = URL_EXAMPLES
    fix = f"fix {origin}"
    try:
        url = parse_url(db_url, origin)
        make_engine(db_url, origin).dispose()  # its driver and the driver's options, as written (no connection)
    except DatabaseUrlError as exc:  # not a URL, a port that is not a number, ?charset=bogus
        return None, Check(FAIL, "database", f"{exc}: {fix}")
    backend = url.get_backend_name()
    if backend == "sqlite" and url.database not in (None, "", ":memory:") and not Path(url.database).is_file():
        return None, Check(
            FAIL, "database", f"no SQLite file at {url.database}: run `farm db upgrade` to create it there, or {fix}"
        )
    if backend in ("mysql", "postgresql") and "connect_timeout" not in url.query:
        db_url = url.update_query_dict({"connect_timeout": str(max(1, round(timeout)))}).render_as_string(
            hide_password=False
        )
    try:
        engine = make_engine(db_url)
    except (DatabaseUrlError, ArgumentError, ImportError) as exc:
        return None, Check(FAIL, "database", f"{origin}={shown!r} cannot be used: {exc}: {fix} ({examples})")
    try:
        with engine.connect():
            pass
    except DBAPIError as exc:
        engine.dispose()
        return None, Check(
            FAIL,
            "database",
            f"cannot connect to {shown}: {_reason(exc)}: start the database, "
            f"or {fix} (host, port, user, password, database name)",
        )
    return engine, Check(OK, "database", f"{shown} answers")


def _reason(exc: DBAPIError) -> str:
    orig = exc.orig if exc.orig is not None else exc
    args = getattr(orig, "args", ())
    text = str(args[1]) if len(args) >= 2 and isinstance(args[0], int) else str(orig)
    lines = text.strip().splitlines()
    return lines[0] if lines else type(orig).__name__


def check_schema(engine: Engine) -> Check:
    try:
        current = current_revision(engine)
    except DBAPIError as exc:
        return Check(FAIL, "schema", f"cannot read the schema revision: {_reason(exc)}")
    if current == HEAD:
        return Check(OK, "schema", f"at revision {HEAD} (head)")
    if current is None:
        return Check(
            FAIL, "schema", f"the database has no farm schema; this farm needs revision {HEAD}: run `farm db upgrade`"
        )
    if current in _known_revisions():
        return Check(
            FAIL,
            "schema",
            f"at revision {current}, behind this farm's {HEAD}: run `farm db upgrade` "
            "(crawls refuse to start until then)",
        )
    return Check(
        FAIL,
        "schema",
        f"at revision {current}, which this farm does not know (a newer farm migrated "
        f"it; this one needs {HEAD}): install the newer farm here",
    )


def _known_revisions() -> set[str]:
    from alembic.script import ScriptDirectory

    return {script.revision for script in ScriptDirectory(str(MIGRATIONS)).walk_revisions()}


def check_stale_leases(engine: Engine, lease_timeout: int) -> Check:
    now = utcnow()
    stale = tallies.stale_leases(engine, now, lease_timeout)
    if not stale.count:
        return Check(OK, "stale leases", f"none (no keyword crawling without a heartbeat for {lease_timeout}s)")
    oldest = (
        "no heartbeat at all"
        if stale.oldest_heartbeat is None
        else f"oldest heartbeat {_ago(now - stale.oldest_heartbeat)} ago"
    )
    holders = ", ".join(escape(crawler) for crawler in stale.crawlers)
    return Check(
        WARN,
        "stale leases",
        f"{stale.count} keyword(s) crawling with no heartbeat for over "
        f"{lease_timeout}s ({oldest}; held by {holders}): their crawler died or "
        "hangs; `farm reap` (cron runs it every 10 minutes, and every running "
        "crawler every FARM_REAP_INTERVAL) makes them partial, and the next "
        "claim resumes them at their next page",
    )


def _ago(delta) -> str:
    minutes = int(delta.total_seconds() // 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m"


def check_failing(engine: Engine, day, limits: tallies.Limits) -> Check:
    failing = tallies.failing_keywords(engine, day, limits)
    if not failing.today and not failing.earlier:
        return Check(OK, "failing keywords", "none failed for the day")
    parts = []
    if failing.today:
        parts.append(
            f"{failing.today} failed today with no claim left ({failing.blocked_all_day} of them blocked "
            f"{limits.max_blocked_claims} times, the others after {limits.max_retries} retries)"
        )
    if failing.earlier:
        parts.append(f"{failing.earlier} failed on their last day before today and have not been claimed since")
    first = failing.examples[0]
    error = escape(" ".join((first["error_message"] or "no error recorded").split()))
    if len(error) > 100:
        error = error[:99] + "…"
    where = f"{escape(first['city'])}/{escape(first['job'])} (#{first['id']}, {first['last_requested_date']})"
    example = f"{first['source']} {where}: {error}"
    return Check(
        WARN,
        "failing keywords",
        f"{'; '.join(parts)}; e.g. {example}; see `farm keywords list --status "
        "failed` (the table keeps each keyword's last day only, so whether it "
        "also failed the days before is not recorded)",
    )


# --- the rest -------------------------------------------------------------------


def check_timezone(name: str):
    try:
        tz = load_timezone(name)
    except ValueError as exc:
        return Check(FAIL, "timezone", f"{exc}: set FARM_TIMEZONE to an IANA zone name"), None
    now = utcnow()
    there = now.astimezone(tz)
    local = datetime.now().astimezone()
    return Check(
        OK,
        "timezone",
        f"FARM_TIMEZONE={name}: today there is {there:%Y-%m-%d} ({there:%H:%M}); this "
        f"machine's clock is in {local.tzname()} ({local:%H:%M}), the zone cron's times "
        "are read in",
    ), tz


def check_backend(config: FarmConfig | None, timeout: float) -> Check:
    """The work backend FARM_WORK_BACKEND names (farm.crawl.backends): loaded, and what it needs beyond
    this process (Redis, for the Redis one) answering."""
    if config is None:
        return Check(WARN, NAME_BACKEND, "not checked: fix the settings first")
    path = config.work_backend
    try:
        backend = load_object(path)
        line = backend.check(config, timeout)
    except (ImportError, ValueError, NameError, AttributeError) as exc:
        return Check(FAIL, NAME_BACKEND, f"FARM_WORK_BACKEND={path!r} cannot be loaded: {exc}")
    except FarmStartError as exc:
        return Check(FAIL, NAME_BACKEND, f"{path.rsplit('.', 1)[-1]}: {exc}")
    return Check(OK, NAME_BACKEND, f"{path.rsplit('.', 1)[-1]}: {line}")


# --- the sites ------------------------------------------------------------------


def check_sites(
    settings,
    timeout: float,
    stored: Iterable[str] = (),
    crawled: set[str] | None = None,
    proxied: bool = False,
) -> list[Check]:
    """Each site's base URL (farm's three and the project's own), all at once: reachable (any HTTP
    answer), else a failure where a crawl of it on this machine would fail (``crawled``, the sites the
    keyword table holds keywords of, names it, or is None: unknown; and no proxy, ``proxied``, carries
    the crawl), a warning otherwise; and a warning for each site of ``stored`` (the keyword table's)
    that no spider of this project crawls."""
    from farm.sites.project import load_sources  # not before: it imports the spiders

    try:
        sources = load_sources(settings)
    except (ImportError, ValueError) as exc:
        return [Check(FAIL, "sites", f"cannot load the project's spiders: {exc}: fix SPIDER_MODULES or the spider")]
    urls = {source: settings.get(f"FARM_{source.upper()}_BASE_URL") or "" for source in sources}
    with ThreadPoolExecutor(max_workers=len(urls)) as pool:
        answers = dict(zip(urls, pool.map(lambda url: _probe(url, timeout), urls.values())))
    checks = []
    for source, url in urls.items():
        setting = f"FARM_{source.upper()}_BASE_URL"
        ok, what = answers[source]
        unreached = f"{url or '(empty)'} cannot be reached from here ({what})"
        if ok:
            checks.append(Check(OK, f"site {source}", f"{url} answers ({what})"))
        elif proxied:
            checks.append(
                Check(
                    WARN,
                    f"site {source}",
                    f"{unreached}; the crawls go through FARM_PROXIES, which doctor does not try: "
                    f"`farm probe {source}` asks the site through them",
                )
            )
        elif crawled is not None and source not in crawled:
            checks.append(
                Check(
                    WARN,
                    f"site {source}",
                    f"{unreached}; the keyword table holds no keyword of {source}, so no crawl of it runs yet; "
                    f"check the network or proxy, or {setting}, before adding some",
                )
            )
        else:
            checks.append(
                Check(
                    FAIL,
                    f"site {source}",
                    f"{unreached}: crawls of {source} on this machine will fail; check the "
                    f"network or proxy, or {setting}",
                )
            )
    for source in stored:
        if source not in urls:
            checks.append(
                Check(
                    WARN,
                    f"site {source}",
                    f"the keyword table holds keywords of {source}, but no spider of this project crawls it "
                    "(SPIDER_MODULES): run farm doctor in the project of that site to check it",
                )
            )
    return checks


def _probe(url: str, timeout: float) -> tuple[bool, str]:
    if not url.startswith(("http://", "https://")):
        return False, "not an http(s) URL"
    request = urllib.request.Request(url, headers={"User-Agent": "farm doctor"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return True, f"HTTP {response.status}"
    except urllib.error.HTTPError as exc:  # the server answered
        return True, f"HTTP {exc.code}"
    except urllib.error.URLError as exc:
        return False, str(exc.reason)
    except (OSError, ValueError) as exc:  # a timeout, a reset, a malformed URL
        return False, f"{type(exc).__name__}: {exc}"
