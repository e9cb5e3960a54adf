"""The ``farm`` command: the database schema, the keyword table, stats, and the sandbox and demo.

Settings come from the Scrapy project (``get_project_settings()``), so ``FARM_DB_URL``
and the other ``FARM_*`` environment variables mean here what they mean to
``scrapy crawl``; ``--db-url`` overrides the database for one command.
"""

import functools
import importlib
import json
import unicodedata
from datetime import date, datetime
from pathlib import Path

import click
from scrapy.utils.project import get_project_settings
from sqlalchemy.engine import Engine
from sqlalchemy.exc import DBAPIError

from farm import repeat
from farm.config import FarmConfig, SettingError
from farm.display import escape
from farm.keywordfile import KeywordFileError, read_keywords
from farm.state import report
from farm.state.clock import load_timezone, today
from farm.state.db import check_stored, make_engine, mask_url, reader
from farm.state.migrate import SchemaNotCurrent, current_revision, require_current, upgrade
from farm.state.models import SOURCES, STATUSES
from farm.state.store import KeywordStore
from farm.state.validation import KeywordError, validate_keyword

# Keywords written per transaction by `farm keywords import`.
IMPORT_CHUNK = 5000


class DatabaseUnreachable(Exception):
    """The database URL is well formed but no connection could be made."""


class BadSetting(click.ClickException):
    """A setting farm cannot use: its one line (farm.config), and exit status 2, as for a bad option."""

    exit_code = 2


class Farm:
    """What every command shares: the settings, the database URL and, once asked for, the engine."""

    def __init__(self, settings, db_url: str, url_origin: str):
        self.settings = settings
        self.db_url = db_url
        self.url_origin = url_origin  # "--db-url" or "FARM_DB_URL": named in error messages
        self._engine: Engine | None = None
        self._config: FarmConfig | None = None

    @property
    def config(self) -> FarmConfig:
        """Every setting, checked once (BadSetting names a bad one)."""
        if self._config is None:
            try:
                self._config = FarmConfig.from_settings(self.settings)
            except SettingError as exc:
                raise BadSetting(str(exc).replace("FARM_DB_URL=", f"{self.url_origin}=", 1)) from None
        return self._config

    @property
    def masked_url(self) -> str:
        return mask_url(self.db_url)

    def engine(self) -> Engine:
        """The engine, after one connection proves the database is reachable."""
        if self._engine is None:
            try:
                check_stored(self.db_url, setting=self.url_origin)  # not in memory: every command keeps or reads
                engine = make_engine(self.db_url, setting=self.url_origin)
            except ValueError as exc:  # DatabaseUrlError (its message masks the password), a bad FARM_DB_TIMEOUT
                raise click.ClickException(str(exc)) from None
            try:
                with engine.connect():
                    pass
            except DBAPIError as exc:
                engine.dispose()
                raise DatabaseUnreachable(_reason(exc)) from exc
            self._engine = engine
        return self._engine

    def store(self, read_only: bool = False) -> KeywordStore:
        """The keyword store, on a database at the current schema (else SchemaNotCurrent).

        ``read_only``: for commands that only read (stats, list), whose reads then do
        not wait behind a crawl's writers on SQLite (farm.state.db.reader).
        """
        config = self.config
        engine = reader(self.engine()) if read_only else self.engine()
        require_current(engine)
        return KeywordStore(
            engine,
            timezone=config.timezone,
            lease_timeout=config.lease_timeout,
            max_retries=config.max_retries,
            retry_delay=config.retry_delay,
            max_blocked_claims=config.max_blocked_claims,
        )

    def close(self) -> None:
        if self._engine is not None:
            self._engine.dispose()
            self._engine = None


def _reason(exc: DBAPIError) -> str:
    """The driver's own words, without SQLAlchemy's statement dump: one short line."""
    orig = exc.orig if exc.orig is not None else exc
    args = getattr(orig, "args", ())
    if len(args) >= 2 and isinstance(args[0], int):  # PyMySQL: (code, message)
        text = str(args[1])
    else:
        text = str(orig)
    lines = text.strip().splitlines()
    return lines[0] if lines else type(orig).__name__


def database_command(func):
    """Run a command that uses the database; turn database failures into one-line errors."""

    @functools.wraps(func)
    @click.pass_obj
    def wrapper(farm_ctx: Farm, *args, **kwargs):
        try:
            return func(farm_ctx, *args, **kwargs)
        except DatabaseUnreachable as exc:
            raise click.ClickException(f"cannot connect to the database at {farm_ctx.masked_url}: {exc}") from None
        except SchemaNotCurrent as exc:
            raise click.ClickException(str(exc)) from None
        except DBAPIError as exc:
            raise click.ClickException(f"database error at {farm_ctx.masked_url}: {_reason(exc)}") from None

    return wrapper


def _project_settings():
    settings = get_project_settings()
    if "FARM_DB_URL" not in settings:
        # run outside the project directory (no scrapy.cfg found): farm's own defaults
        settings.setmodule("farm.settings", priority="default")
    else:
        # a project that turns farm on with its add-on (farm.addon) gives only the FARM_* it changes
        from farm.addon import farm_defaults

        settings.update(farm_defaults(), priority="default")
    return settings


def _register_project_sites(farm_ctx: "Farm") -> None:
    """The project's own sites (farm.sites) are sources a keyword may name."""
    from farm.sites import register_project_sites  # not before: it imports the spiders

    try:
        register_project_sites(farm_ctx.settings)
    except (ImportError, ValueError) as exc:
        raise click.ClickException(f"cannot load the project's spiders: {exc}") from None


class _FarmGroup(click.Group):
    """farm's commands; ``sandbox`` and ``api`` imported when named: aiohttp and the sandbox's
    data are most of the command's start, which `farm stats` and `farm doctor` need not pay."""

    LAZY = {"sandbox": ("farm.sandbox.cli", "sandbox"), "api": ("farm.api.server", "api")}

    def list_commands(self, ctx):
        return sorted({*super().list_commands(ctx), *self.LAZY})

    def get_command(self, ctx, name):
        if name in self.LAZY and name not in self.commands:
            module, attribute = self.LAZY[name]
            self.add_command(getattr(importlib.import_module(module), attribute), name)
        return super().get_command(ctx, name)


@click.group(cls=_FarmGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--db-url",
    metavar="URL",
    help="SQLAlchemy URL of the farm database. [default: the FARM_DB_URL setting, "
    "itself sqlite:///farm.db unless the environment sets it]",
)
@click.pass_context
def farm(ctx: click.Context, db_url: str | None):
    """farm: crawl job listings from boss, qcwy and zhilian for a table of keywords."""
    settings = _project_settings()
    if db_url is None:
        ctx.obj = Farm(settings, settings.get("FARM_DB_URL"), "FARM_DB_URL")
    else:
        settings = settings.copy()
        settings.set("FARM_DB_URL", db_url, priority="cmdline")  # checked with the other settings
        ctx.obj = Farm(settings, db_url, "--db-url")
    ctx.call_on_close(ctx.obj.close)
    if ctx.invoked_subcommand != "doctor":  # doctor reports a bad setting as one of its checks
        ctx.obj.config  # noqa: B018 - every setting checked before the command does anything


# --- farm db ----------------------------------------------------------------


@farm.group()
def db():
    """The database schema."""


@db.command("upgrade")
@database_command
def db_upgrade(farm_ctx: Farm):
    """Create or migrate the farm tables to the current schema."""
    engine = farm_ctx.engine()
    upgrade(engine)
    click.echo(f"database at {farm_ctx.masked_url} is at revision {current_revision(engine)} (head)")


# --- farm keywords ----------------------------------------------------------


@farm.group()
def keywords():
    """The keyword table: one row per (source, city, job)."""


@keywords.command("import")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, allow_dash=True))
@database_command
def keywords_import(farm_ctx: Farm, file: str):
    """Add the keywords of a CSV FILE with the header source,city,job (- reads standard input).

    Keywords already in the table are skipped, and a keyword repeated in the file
    is added once. The whole file is checked first: one bad line and nothing is
    written. The file is read once, so a pipe or a process substitution works.
    """
    store = farm_ctx.store()
    _register_project_sites(farm_ctx)
    try:
        total, rows = _unique_keywords(file)
    except KeywordFileError as exc:
        raise click.ClickException(str(exc)) from None
    except OSError as exc:
        raise click.ClickException(f"{file}: cannot read: {exc.strerror or exc}") from None
    inserted = 0
    for start in range(0, len(rows), IMPORT_CHUNK):
        inserted += store.add_keywords(rows[start : start + IMPORT_CHUNK])
    repeated = f", {total - len(rows)} repeated in the file" if total > len(rows) else ""
    click.echo(f"imported {inserted} new keywords ({len(rows) - inserted} already present{repeated})")


def _unique_keywords(file: str) -> tuple[int, list[tuple[str, str, str]]]:
    """The keyword lines of ``file`` (read once, all checked) and the distinct keywords among them."""
    total = 0
    unique: dict[tuple[str, str, str], None] = {}
    for _, source, city, job in read_keywords(file):
        total += 1
        unique[(source, city, job)] = None
    return total, list(unique)


@keywords.command("add")
@click.argument("source")
@click.argument("city")
@click.argument("job")
@database_command
def keywords_add(farm_ctx: Farm, source: str, city: str, job: str):
    """Add one keyword: SOURCE (boss, qcwy, zhilian, or a site of the project's own), CITY and JOB."""
    _register_project_sites(farm_ctx)
    try:
        row = validate_keyword(source, city, job)
    except KeywordError as exc:
        raise click.ClickException(str(exc)) from None
    added = farm_ctx.store().add_keywords([row])
    click.echo(f"{'added' if added else 'already present'}: {', '.join(row)}")


@keywords.command("list")
@click.option("--source", type=click.Choice(SOURCES), help="Only this site's keywords.")
@click.option("--status", type=click.Choice(STATUSES), help="Only keywords in this state.")
@click.option("--limit", type=click.IntRange(min=1), help="At most this many rows.")
@database_command
def keywords_list(farm_ctx: Farm, source: str | None, status: str | None, limit: int | None):
    """Show keywords and where each one's crawl stands."""
    rows = farm_ctx.store(read_only=True).list_keywords(source=source, status=status, limit=limit)
    if not rows:
        click.echo("no keywords")
        return
    headers = ["id", "source", "city", "job", "status", "page/total", "jobs", "retries", "last requested", "error"]
    body = [
        [
            r["id"],
            r["source"],
            escape(r["city"]),
            escape(r["job"]),
            r["crawl_status"],
            f"{r['last_completed_page'] or 0}/{_or_dash(r['total_pages'])}",
            r["jobs_found"],
            r["retry_count"],
            _or_dash(r["last_requested_date"]),
            _clip(
                escape(" ".join(_or_dash(r["error_message"]).split())), 60
            ),  # a client's text: no escape reaches the terminal
        ]
        for r in rows
    ]
    click.echo(render_table(headers, body, right={"id", "page/total", "jobs", "retries"}))


# --- farm stats, farm reap --------------------------------------------------


def _parse_date(ctx, param, value: str | None) -> date | None:
    if value is None:
        return None
    try:
        return datetime.strptime(value, "%Y-%m-%d").date()
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a date: use YYYY-MM-DD, e.g. 2024-05-01") from None


# the longest --window (a year of minutes) and --interval (a day): beyond, dates overflow
MAX_WINDOW = 366 * 24 * 60
MAX_INTERVAL = 24 * 3600


class FiniteRange(click.FloatRange):
    """A number from ``lo`` to ``hi``; nan and inf refused (FloatRange lets nan through)."""

    def __init__(self, lo: float, hi: float):
        super().__init__(min=lo, max=hi)

    def convert(self, value, param, ctx):
        number = super().convert(value, param, ctx)
        if number != number:  # nan compares false with every bound
            self.fail(f"{value!r} is not a number from {self.min:g} to {self.max:g}", param, ctx)
        return number


STAT_COLUMNS = ["total", "used", "unused", "crawling", "completed", "failed", "partial", "pages", "jobs found"]
RATE_COLUMNS = ["done", "left", "keywords/min", "pages/min"]


@farm.command()
@click.option("--source", type=click.Choice(SOURCES), help="Only this site.")
@click.option(
    "--date",
    "day",
    metavar="YYYY-MM-DD",
    callback=_parse_date,
    help="The day to report. [default: today in FARM_TIMEZONE]",
)
@click.option("--json", "as_json", is_flag=True, help="Print the stats as one JSON document.")
@click.option(
    "--window",
    type=FiniteRange(0.1, MAX_WINDOW),
    default=report.DEFAULT_WINDOW_MINUTES,
    show_default=True,
    metavar="MINUTES",
    help="The recent rate counts the keywords that ended in the last MINUTES.",
)
@click.option("--watch", is_flag=True, help="Refresh in place every --interval seconds until Ctrl+C.")
@click.option(
    "--interval",
    type=FiniteRange(0.2, MAX_INTERVAL),
    default=5.0,
    show_default=True,
    metavar="SECONDS",
    help="Seconds between refreshes of --watch.",
)
@database_command
def stats(
    farm_ctx: Farm,
    source: str | None,
    day: date | None,
    as_json: bool,
    window: float = 10.0,
    watch: bool = False,
    interval: float = 5.0,
):
    """Keywords used, unused and in each state for one day, per source, with
    pages, the recent rate and an ETA.

    \b
    pages        the sum of the day's page watermarks (last_completed_page):
                 pages recorded done, in order from page 1
    jobs found   postings found by the day's keywords (a posting found by two
                 keywords counts twice; job_posting stores it once)
    done, left   done: completed, or failed with no claim left today (retries
                 or block claims used up); left: every other keyword
    keywords/min keywords that ended (completed or failed) in the last --window
                 minutes, by the time of their last write (updated_at)
    pages/min    the pages of those keywords, over the same minutes
    ETA          now + left / keywords/min; "-" when no keyword ended lately

    With --watch, "pages/min now" is the change in pages between the last two
    refreshes. --json adds pages, done, remaining, recent {minutes, keywords,
    pages, keywords_per_minute, pages_per_minute}, eta (ISO time, or null) and
    eta_seconds to each source's {"date", "source", "total", "used", "unused",
    "crawl_status", "jobs_found"}.
    """
    store = farm_ctx.store(read_only=True)
    limits = report.Limits(farm_ctx.config.max_retries, farm_ctx.config.max_blocked_claims)

    def sample():
        now = store.clock()
        rows = store.stats(source=source, day=day or today(now, store.tz))
        return now, report.progress(store.reader, rows, now=now, tz=store.tz, limits=limits, window_minutes=window)

    if watch:
        if as_json:
            raise click.UsageError("--watch draws a table; for JSON, run `farm stats --json` at intervals")
        _watch(farm_ctx, store, sample, interval, window)
        return
    now, rows = sample()
    if as_json:
        click.echo(json.dumps(rows, ensure_ascii=False, indent=2))
        return
    click.echo(_stats_text(farm_ctx, store, now, rows, window))


def _watch(farm_ctx: Farm, store: KeywordStore, sample, interval: float, window: float) -> None:
    """Draw the stats every ``interval`` seconds (in place on a terminal) until Ctrl+C, which exits 0."""
    tty = click.get_text_stream("stdout").isatty()
    before = None

    def draw():
        nonlocal before
        try:
            now, rows = sample()
        except DBAPIError as exc:  # a database gone for a moment: say so, and try again
            click.echo(f"database error at {farm_ctx.masked_url}: {_reason(exc)}; trying again in {interval:g}s")
            return
        text = _stats_text(farm_ctx, store, now, rows, window, before)
        heading = f"farm stats every {interval:g}s (Ctrl+C to stop), {now.astimezone(store.tz):%H:%M:%S}"
        # on a terminal: cursor home, clear, redraw; in a pipe or a file: one frame after another
        click.echo(("\x1b[H\x1b[2J" if tty else "") + heading + "\n" + text + ("" if tty else "\n"))
        before = (now, rows)

    repeat.every(interval, draw)
    click.echo()


def _stats_text(
    farm_ctx: Farm,
    store: KeywordStore,
    now: datetime,
    rows: list[dict],
    window: float,
    before: tuple[datetime, list[dict]] | None = None,
) -> str:
    shown = rows[0]["date"] if rows else today(now, store.tz).isoformat()
    lines = [f"keywords on {shown} ({farm_ctx.settings.get('FARM_TIMEZONE')})"]
    all_rows = rows + ([report.total(rows, now, store.tz)] if len(rows) > 1 else [])
    body = [[r["source"], *_stat_values(r)] for r in all_rows]
    lines.append(render_table(["source", *STAT_COLUMNS], body, right=set(STAT_COLUMNS)))
    lines.append("")
    lines.append(f"the last {window:g} minutes: keywords ended (completed or failed) and their pages")
    columns = RATE_COLUMNS + (["pages/min now"] if before is not None else []) + ["ETA"]
    earlier = {r["source"]: r for r in before[1]} if before is not None else {}
    if before is not None and all_rows and len(all_rows) > len(rows):
        earlier["all"] = report.total(before[1], before[0], store.tz)
    body = []
    for r in all_rows:
        recent = r["recent"]
        cells = [
            r["source"],
            r["done"],
            r["remaining"],
            f"{recent['keywords_per_minute']:.1f}",
            f"{recent['pages_per_minute']:.1f}",
        ]
        if before is not None:
            cells.append(_sampled_rate(earlier.get(r["source"]), before[0], r, now))
        cells.append(_eta_text(r, now, store))
        body.append(cells)
    lines.append(render_table(["source", *columns], body, right=set(columns) - {"ETA"}))
    return "\n".join(lines)


def _sampled_rate(earlier: dict | None, then: datetime, row: dict, now: datetime) -> str:
    """Pages per minute between two samples of the same day, or "-"."""
    seconds = (now - then).total_seconds()
    if earlier is None or earlier["date"] != row["date"] or seconds <= 0 or row["pages"] < earlier["pages"]:
        return "-"
    return f"{(row['pages'] - earlier['pages']) * 60 / seconds:.1f}"


def _eta_text(row: dict, now: datetime, store: KeywordStore) -> str:
    if row["remaining"] == 0:
        return "done"
    if row["eta"] is None:
        return "-"
    finish = datetime.fromisoformat(row["eta"])
    hours, rest = divmod(row["eta_seconds"], 3600)
    when = f"{finish:%H:%M}" if finish.date() == now.astimezone(store.tz).date() else f"{finish:%m-%d %H:%M}"
    return f"{when} (in {hours}h{rest // 60:02d}m)"


def _stat_values(row: dict) -> list[int]:
    status = row["crawl_status"]
    return [
        row["total"],
        row["used"],
        row["unused"],
        status["crawling"],
        status["completed"],
        status["failed"],
        status["partial"],
        row["pages"],
        row["jobs_found"],
    ]


@farm.command()
@database_command
def reap(farm_ctx: Farm):
    """Turn stale leases into partial keywords.

    A crawling keyword whose holder has sent no heartbeat for FARM_LEASE_TIMEOUT
    seconds becomes partial; the next claim resumes it at its next page.
    """
    reaped = farm_ctx.store().reap()
    click.echo(f"{reaped} stale {'lease' if reaped == 1 else 'leases'} became partial")


@farm.command()
@click.option(
    "--timeout",
    type=click.FloatRange(min=0.1),
    default=5.0,
    show_default=True,
    metavar="SECONDS",
    help="How long to wait for the database, Redis and each site.",
)
@click.pass_obj
def doctor(farm_ctx: Farm, timeout: float):
    """Check this machine's farm setup: one line per check, ok, warn or fail, with what to do.

    \b
    database          FARM_DB_URL (or --db-url) answers
    schema            at the revision this farm needs
    stale leases      keywords crawling with no heartbeat for FARM_LEASE_TIMEOUT
    failing keywords  failed for the day (retries or block claims used up), or
                      failed on their last day and not claimed since
    timezone          FARM_TIMEZONE is a known zone; what "today" is there
    redis             FARM_REDIS_URL answers (when it is set)
    site boss/qcwy/zhilian
                      each FARM_<SITE>_BASE_URL answers (a warning if not)

    Exits 1 when a check fails, else 0 (warnings included).
    """
    from farm.doctor import FAIL, WARN, run_checks

    counts = {FAIL: 0, WARN: 0}
    for check in run_checks(farm_ctx.settings, farm_ctx.db_url, farm_ctx.url_origin, timeout):
        click.echo(check.line())
        if check.status in counts:
            counts[check.status] += 1
    failures, warnings = counts[FAIL], counts[WARN]
    click.echo(
        f"{failures} {'failure' if failures == 1 else 'failures'}, "
        f"{warnings} {'warning' if warnings == 1 else 'warnings'}"
    )
    if failures:
        raise SystemExit(1)


# --- farm report, farm export ------------------------------------------------


def _require(module: str, command: str) -> None:
    """A one-line error, not a traceback, where an optional package is not installed."""
    import importlib.util

    if importlib.util.find_spec(module) is None:
        raise click.ClickException(f"{command} needs {module}: pip install 'farm[report]' (or make install)")


def _report_day(farm_ctx: Farm, day: date | None):
    """(the day, the time zone): ``day``, or today in FARM_TIMEZONE."""
    try:
        tz = load_timezone(farm_ctx.settings.get("FARM_TIMEZONE"))
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None
    from farm.state.clock import utcnow

    return day or today(utcnow(), tz), tz


@farm.command("report")
@click.option(
    "--date",
    "day",
    metavar="YYYY-MM-DD",
    callback=_parse_date,
    help="The day to report. [default: today in FARM_TIMEZONE]",
)
@click.option(
    "--days",
    type=click.IntRange(1, 366),
    default=30,
    show_default=True,
    help="Days of the new-postings chart, ending with --date.",
)
@click.option(
    "--gone-after",
    type=click.IntRange(1, 366),
    default=7,
    show_default=True,
    metavar="DAYS",
    help="A posting last seen DAYS days before --date, and not since, counts as gone that day.",
)
@click.option(
    "--out",
    default="report.html",
    show_default=True,
    type=click.Path(dir_okay=False, writable=True),
    help="The HTML file to write.",
)
@database_command
def report_command(farm_ctx: Farm, day: date | None, days: int, gone_after: int, out: str):
    """Write the day's picture as one HTML file that opens from disk.

    The day's crawl per site (keywords by state, failures grouped by reason,
    pages, blocks, duration), postings seen, new and gone per site and city,
    new postings per day, salary quartiles per keyword and city, and the top
    companies by new postings. An empty database gives a page that says so.
    """
    _require("matplotlib", "farm report")
    from farm.report.build import write_report
    from farm.report.figures import DayFigures
    from farm.report.page import render
    from farm.state.clock import utcnow

    day, tz = _report_day(farm_ctx, day)
    engine = farm_ctx.engine()
    path = Path(out)
    try:
        if current_revision(engine) is None:  # never upgraded: nothing stored, and no tables to read
            figures = DayFigures(day, tz.key, days, gone_after)
            path.write_text(render(figures, utcnow().astimezone(tz), farm_ctx.masked_url), encoding="utf-8")
        else:
            require_current(engine)
            figures = write_report(engine, path, day, tz, days, gone_after, database=farm_ctx.masked_url)
    except OSError as exc:
        raise click.ClickException(f"cannot write {out}: {exc.strerror}") from None
    seen = sum(int(row["seen"]) for row in figures.postings)
    crawled = f"{len(figures.crawl)} site(s) crawled" if figures.crawled else "no crawl"
    click.echo(f"report of {day}: {crawled}, {seen:,} postings seen; written to {path.resolve()}")


@farm.command("export")
@click.option(
    "--date",
    "day",
    metavar="YYYY-MM-DD",
    callback=_parse_date,
    help="The day whose postings to export. [default: today in FARM_TIMEZONE]",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(("csv", "jsonl", "parquet")),
    required=True,
    help="csv (a header row, tags as JSON text), jsonl (one JSON object a line) or parquet.",
)
@click.option("--out", metavar="PATH", help="The file to write, - for standard output. [default: postings-DATE.FORMAT]")
@database_command
def export_command(farm_ctx: Farm, day: date | None, fmt: str, out: str | None):
    """Export the postings seen on a day (new ones included), with their salary as numbers.

    Streamed: memory stays flat however many postings there are.
    """
    import sys

    from farm.report import export

    if fmt == "parquet":
        _require("pyarrow", "farm export --format parquet")

    day, tz = _report_day(farm_ctx, day)
    engine = farm_ctx.engine()
    require_current(engine)
    out = out or f"postings-{day}.{fmt}"
    if out == "-":
        count = export.write(engine, sys.stdout.buffer, day, tz, fmt)
        sys.stdout.buffer.flush()
        click.echo(f"{count:,} postings seen on {day} written to standard output", err=True)
        return
    try:
        with open(out, "wb") as file:
            count = export.write(engine, file, day, tz, fmt)
    except OSError as exc:
        raise click.ClickException(f"cannot write {out}: {exc.strerror}") from None
    click.echo(f"{count:,} postings seen on {day} written to {Path(out).resolve()}")


# --- farm demo --------------------------------------------------------------


@farm.command()
@click.option(
    "--log-dir",
    default="demo-run",
    show_default=True,
    type=click.Path(file_okay=False),
    help="Where each spider's log goes.",
)
@click.pass_context
@database_command
def demo(farm_ctx: Farm, ctx: click.Context, log_dir: str):
    """Crawl the bundled keywords of all three sites against the sandbox.

    Upgrades the database, imports farm/demo/keywords.csv, starts the sandbox,
    runs `scrapy crawl` for boss, qcwy and zhilian, prints the stats and writes
    the day's report (report.html in --log-dir). Run again the same day, it
    finds nothing new to crawl and says so.
    """
    from farm.demo import KEYWORDS_FILE, run_demo

    upgrade(farm_ctx.engine())
    store = farm_ctx.store()
    rows = [(s, c, j) for _, s, c, j in read_keywords(str(KEYWORDS_FILE))]
    added = store.add_keywords(rows)
    click.echo(f"keywords: {added} new, {len(rows) - added} already present ({len(rows)} in the demo file)")
    codes = run_demo(store, farm_ctx.db_url, Path(log_dir))
    click.echo()
    ctx.invoke(stats)
    click.echo()
    ctx.invoke(report_command, out=str(Path(log_dir) / "report.html"))
    failed = [source for source, code in codes.items() if code != 0]
    if failed:
        raise click.ClickException(f"the crawl of {', '.join(failed)} failed: see its log in {log_dir}/")


# --- tables -----------------------------------------------------------------


def display_width(text: str) -> int:
    """Terminal columns: East Asian wide and fullwidth characters take two."""
    return sum(0 if unicodedata.combining(ch) else 2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _clip(text: str, width: int) -> str:
    text = " ".join(text.split())  # one line
    if display_width(text) <= width:
        return text
    out, used = [], 0
    for ch in text:
        used += display_width(ch)
        if used > width - 3:
            break
        out.append(ch)
    return "".join(out) + "..."


def _or_dash(value) -> str:
    return "-" if value is None or value == "" else str(value)


def render_table(headers: list[str], rows: list[list], right: set[str] = frozenset()) -> str:
    """An aligned plain-text table; cells in ``right`` columns are right-aligned."""
    cells = [[" ".join(str(v).split()) for v in row] for row in rows]
    widths = [max([display_width(h)] + [display_width(row[i]) for row in cells]) for i, h in enumerate(headers)]

    def line(values):
        parts = []
        for header, value, width in zip(headers, values, widths):
            pad = " " * (width - display_width(value))
            parts.append(pad + value if header in right else value + pad)
        return "  ".join(parts).rstrip()

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(headers), rule, *(line(row) for row in cells)])


def main():
    farm(prog_name="farm")
