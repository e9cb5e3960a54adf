"""`farm report` and `farm export`: the day's picture as one HTML file, and the day's postings as a file."""

from datetime import date
from pathlib import Path

import click

from farm.cli.context import Farm, database_command, date_option
from farm.state.caps import site_caps
from farm.state.clock import load_timezone, today
from farm.state.migrate import current_revision, require_current
from farm.state.tallies import Limits


def _require(module: str, command: str) -> None:
    """A one-line error, not a traceback, where an optional package is not installed."""
    import importlib.util

    if importlib.util.find_spec(module) is None:
        raise click.ClickException(f"{command} needs {module}: pip install 'farm[report]' (or make install)")


def _report_day(farm_ctx: Farm, day: date | None):
    """(the day, the time zone): ``day``, or today in FARM_TIMEZONE."""
    try:
        tz = load_timezone(farm_ctx.config.timezone)
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None
    from farm.state.clock import utcnow

    return day or today(utcnow(), tz), tz


def _conversion(farm_ctx: Farm):
    """The salary conversion FARM_SALARY_CONVERT switches on, with its factors; None: monthly pay alone."""
    from farm.salary.monthly import Conversion

    config = farm_ctx.config
    if not config.salary_convert:
        return None
    return Conversion(config.salary_days_a_month, config.salary_hours_a_month)


# a year at most: the chart's days, and how long a posting not seen again counts as still listed
YEAR = click.IntRange(1, 366)


@click.command("report")
@date_option("The day to report. [default: today in FARM_TIMEZONE]")
@click.option(
    "--days", type=YEAR, default=30, show_default=True, help="Days of the new-postings chart, ending with --date."
)
@click.option(
    "--gone-after",
    type=YEAR,
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
            figures = write_report(
                engine,
                path,
                day,
                tz,
                days,
                gone_after,
                database=farm_ctx.masked_url,
                conversion=_conversion(farm_ctx),
                caps=site_caps(farm_ctx.settings, farm_ctx.sources()),
                limits=farm_ctx.config.checks,
                claim_limits=Limits(farm_ctx.config.max_retries, farm_ctx.config.max_blocked_claims),
            )
    except OSError as exc:
        raise click.ClickException(f"cannot write {out}: {exc.strerror}") from None
    seen = sum(int(row["seen"]) for row in figures.postings)
    crawled = f"{len(figures.crawl)} site(s) crawled" if figures.crawled else "no crawl"
    click.echo(f"report of {day}: {crawled}, {seen:,} postings seen; written to {path.resolve()}")


@click.command("export")
@date_option("The day whose postings to export. [default: today in FARM_TIMEZONE]")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(("csv", "jsonl", "parquet")),
    required=True,
    help="csv (a header row, tags as JSON text), jsonl (one JSON object a line) or parquet.",
)
@click.option(
    "-o",
    "--out",
    metavar="PATH",
    help="The file to write, - for standard output. [default: postings-DATE.FORMAT]",
)
@click.option(
    "--bom/--no-bom",
    default=True,
    show_default=True,
    help="CSV: begin with a UTF-8 byte order mark, which Excel needs to read Chinese text.",
)
@database_command
def export_command(farm_ctx: Farm, day: date | None, fmt: str, out: str | None, bom: bool):
    """Export the postings seen on a day (new ones included), with their salary as numbers.

    Streamed: memory stays flat however many postings there are. A file is
    written under a temporary name beside it and renamed when complete: a
    failed or interrupted export leaves the previous file as it was (through a
    symlink, its target is replaced and the link kept). A device, a pipe or
    /dev/stdout is written straight. CSV cells that begin with = + - @, a tab
    or a carriage return start with a single quote, so that a spreadsheet does
    not run them.
    """
    import sys

    from farm.report import export
    from farm.report.outpath import is_stream

    if fmt == "parquet":
        _require("pyarrow", "farm export --format parquet")

    day, tz = _report_day(farm_ctx, day)
    engine = farm_ctx.engine()
    require_current(engine)
    out = out or f"postings-{day}.{fmt}"
    if out == "-":
        count = export.write(engine, sys.stdout.buffer, day, tz, fmt, bom=bom)
        sys.stdout.buffer.flush()
        click.echo(f"{count:,} postings seen on {day} written to standard output", err=True)
        return
    stream = is_stream(out)  # a device, pipe or descriptor: written straight, the count said on stderr
    try:
        count = export.write_file(engine, out, day, tz, fmt, bom=bom)
    except OSError as exc:
        raise click.ClickException(f"cannot write {out}: {exc.strerror or exc}") from None
    click.echo(f"{count:,} postings seen on {day} written to {out if stream else Path(out).resolve()}", err=stream)
