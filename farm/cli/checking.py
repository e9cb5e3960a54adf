"""`farm check`: the day's data checked, one line a check; exit 1 when one fails (cron mails it)."""

import json
from datetime import date

import click

from farm.cli.context import Farm, database_command, date_option
from farm.state.clock import today, utcnow


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
    per run      finished, every claimed keyword ended, company/city/salary
                 carried, refusals below FARM_CHECK_MAX_REFUSALS (Spidermon monitors)
    over days    a keyword's postings fallen against its median, a field's
                 coverage fallen, refusals risen, a keyword partial at the
                 end of the day, a run that never finished

    The thresholds are the FARM_CHECK_* settings (docs/checks.md). Exit status 1 when a check fails.
    """
    from farm.checks.alerts import send, services
    from farm.checks.day import check_day
    from farm.checks.result import failed

    limits = farm_ctx.config.checks
    urls = [*farm_ctx.config.alert_urls, *notify]
    sender = services(urls) if urls else None  # a bad URL stops the command before it reads anything
    store = farm_ctx.store(read_only=True)
    day = day or today(utcnow(), store.tz)
    checks = check_day(store.engine, day, store.tz, limits, utcnow())
    shown = failed(checks) if failed_only else checks
    if as_json:
        click.echo(json.dumps({"date": day.isoformat(), "checks": [c.as_dict() for c in shown]}, ensure_ascii=False))
    else:
        for check in shown:
            click.echo(check.line())
        click.echo(f"{day}: {len(checks)} checks, {len(failed(checks))} failed")
    if failed(checks) and sender is not None:
        names, delivered = send(sender, checks)
        status = "sent to" if delivered else "could not be sent to every one of"
        click.echo(f"the failures {status}: {', '.join(names)}", err=True)
    if failed(checks):
        raise SystemExit(1)
