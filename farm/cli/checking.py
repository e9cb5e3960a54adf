"""`farm check`: the day's data checked, one line a check; exit 1 when one fails (cron mails it)."""

import json
from datetime import date

import click

from farm.cli.context import Farm, database_command, date_option
from farm.state.clock import today, utcnow

UNSENT = 3  # the exit status when a check failed and its alert did not reach every service


@click.command("check")
@date_option("The day to check. [default: today in FARM_TIMEZONE]")
@click.option("--json", "as_json", is_flag=True, help="Print the checks as one JSON document.")
@click.option("--failed-only", is_flag=True, help="Print only the checks that failed.")
@click.option(
    "--notify",
    "notify",
    multiple=True,
    metavar="URL",
    help="An apprise URL to send the failed checks to (dingtalk://, wecombot://, slack://, mailtos://, "
    "json://…); repeatable; added to the FARM_ALERT_URLS setting. Never printed.",
)
@database_command
def check_command(farm_ctx: Farm, day: date | None, as_json: bool, failed_only: bool, notify: tuple[str, ...]):
    """Check the day's crawls against their history and each run's own shape.

    \b
    each site    a crawl ran that day and reached every keyword the site holds
    per run      finished, every claimed keyword ended, company/city/salary
                 carried, refusals below FARM_CHECK_MAX_REFUSALS (Spidermon monitors)
    over days    a keyword's postings fallen against its median, a field's
                 coverage fallen, refusals risen, a keyword partial or failed
                 at the end of the day, a run killed before its end or never
                 finished (told that day and the next)

    The thresholds are the FARM_CHECK_* settings (docs/checks.md). Exit status 1 when a check fails,
    3 when the failures could not be sent to every --notify / FARM_ALERT_URLS service (each named with
    the reason).
    """
    from farm.checks.alerts import database_name, send, services
    from farm.checks.day import check_day
    from farm.checks.result import failed

    limits = farm_ctx.config.checks
    urls = [*farm_ctx.config.alert_urls, *notify]
    sender = services(urls) if urls else None  # a bad URL stops the command before it reads anything
    store = farm_ctx.store(read_only=True)
    day = day or today(utcnow(), store.tz)
    config = farm_ctx.config
    checks = check_day(store.engine, day, store.tz, limits, utcnow(), config.lease_timeout, config.reap_interval)
    shown = failed(checks) if failed_only else checks
    if as_json:
        click.echo(json.dumps({"date": day.isoformat(), "checks": [c.as_dict() for c in shown]}, ensure_ascii=False))
    else:
        for check in shown:
            click.echo(check.line())
        click.echo(f"{day}: {len(checks)} checks, {len(failed(checks))} failed")
    if failed(checks) and sender is not None:
        sent = send(sender, checks, day, database_name(farm_ctx.db_url), urls)
        if sent.delivered:
            click.echo(f"the failures sent to: {', '.join(sent.services)}", err=True)
        else:
            for service, why in sent.unsent.items():
                click.echo(f"the failures could not be sent to {service}: {why}", err=True)
            raise SystemExit(UNSENT)
    if failed(checks):
        raise SystemExit(1)
