"""`farm db upgrade`, `farm reap`, `farm doctor`: the schema, stale leases, and this machine's setup."""

import click

from farm.cli.context import Farm, database_command
from farm.cli.sitehelp import SitesCommand
from farm.state.migrate import current_revision, upgrade


@click.group()
def db():
    """The database schema."""


@db.command("upgrade")
@database_command
def db_upgrade(farm_ctx: Farm):
    """Create or migrate the farm tables to the current schema."""
    engine = farm_ctx.engine()
    upgrade(engine)
    click.echo(f"database at {farm_ctx.masked_url} is at revision {current_revision(engine)} (head)")


@click.command()
@database_command
def reap(farm_ctx: Farm):
    """Turn stale leases into partial keywords.

    A crawling keyword whose holder has sent no heartbeat for FARM_LEASE_TIMEOUT
    seconds becomes partial; the next claim resumes it at its next page.
    """
    reaped = farm_ctx.store().reap()
    click.echo(f"{reaped} stale {'lease' if reaped == 1 else 'leases'} became partial")


@click.command(cls=SitesCommand)
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
    work backend      FARM_WORK_BACKEND loads; with Redis, FARM_REDIS_URL answers
    browser           FARM_BROWSER_EXECUTABLE (else Chromium on the PATH) is found
                      and starts headless, as a crawl starts it to pass walls
    site NAME         each of {sites}, and each site of the project's own:
                      its FARM_<SITE>_BASE_URL answers; if not, a failure when
                      the keyword table holds its keywords and no FARM_PROXIES
                      carries the crawl (the crawl would fail), else a warning

    Exits 1 when a check fails, else 0 (warnings included).
    """
    from farm.cli.doctor import FAIL, WARN, run_checks

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
