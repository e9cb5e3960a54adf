"""`farm openings update`: the postings not in an opening yet put into one, stored; `farm openings explain`:
which opening a posting belongs to, and why it joined it; `farm openings days`: the openings and postings
new, gone and back on each day."""

import json
from datetime import date, timedelta

import click

from farm.cli.context import Farm, database_command, date_option
from farm.state.clock import today, utcnow


@click.group("openings")
def openings():
    """Openings: the postings of one job across the sites (docs/openings.md)."""


@openings.command("update")
@click.option(
    "--pairs",
    type=click.Path(exists=True, dir_okay=False),
    help="A file of 'brand,legal name' lines: pairs of company names that are one company.",
)
@click.option("--threshold", type=click.FloatRange(0, 1), default=0.85, show_default=True, help="Title likeness.")
@click.option("--rebuild", is_flag=True, help="Forget the openings stored and cluster every posting again.")
@database_command
def update(farm_ctx: Farm, pairs: str | None, threshold: float, rebuild: bool):
    """Put the postings in no opening yet into one, against the openings stored, and store them."""
    from sqlalchemy.exc import IntegrityError

    from farm.openings.names import CompanyNames
    from farm.openings.stored import update_openings

    try:
        names = CompanyNames.from_file(pairs) if pairs else CompanyNames()
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None
    store = farm_ctx.store()
    try:
        done = update_openings(store.engine, names, threshold, rebuild)
    except IntegrityError:
        raise click.ClickException("another update stored openings at the same time: run this one again") from None
    click.echo(f"{done.postings:,} postings put in openings, {done.openings:,} openings opened; {done.stored:,} stored")


@openings.command("explain")
@click.argument("source")
@click.argument("job_id")
@database_command
def explain(farm_ctx: Farm, source: str, job_id: str):
    """Say which stored opening the posting is in, why it joined it, and why each other posting of it did.
    Crawled text is printed with its control characters escaped (farm.display.escape)."""
    from farm.display import escape
    from farm.openings.stored import stored_why

    store = farm_ctx.store(read_only=True)
    found = _posting(store.engine, source, job_id)
    if found is None:
        raise click.ClickException(f"no posting {escape(source)} {escape(job_id)!r} in job_posting")
    whys = stored_why(store.engine, source, job_id)
    if whys is None:
        raise click.ClickException(f"posting {source} {job_id!r} is in no opening yet: run `farm openings update`")
    why, others = whys
    title, company, city = found
    click.echo(escape(f"{source} {job_id}: {title} · {company} · {city}"))
    click.echo(escape(why.text()))
    for other_source, other_id, other in others:
        click.echo(escape(f"  with {other_source} {other_id}: {other.text()}"))


def _posting(engine, source: str, job_id: str) -> tuple[str, str, str] | None:
    from sqlalchemy import select

    from farm.openings.postings import city_of
    from farm.state.models import JobPostingRow

    table = JobPostingRow.__table__
    query = select(table.c.title, table.c.company, table.c.city).where(
        table.c.source == source, table.c.job_id == job_id
    )
    with engine.connect() as connection:
        row = connection.execute(query).first()
    return None if row is None else (row.title, row.company, city_of(row.city))


@openings.command("days")
@date_option("The last day to count. [default: today in FARM_TIMEZONE]")
@click.option("--days", "count", type=click.IntRange(1), default=7, show_default=True, help="Days to count, to --date.")
@click.option(
    "--gone-after",
    type=click.IntRange(1),
    default=2,
    show_default=True,
    help="Days a posting is not found on crawls that completed its keyword before it is gone.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the days as one JSON document.")
@database_command
def days(farm_ctx: Farm, day: date | None, count: int, gone_after: int, as_json: bool):
    """Postings and openings new, gone, and back (reposted: seen again after they went) on each day, from
    the openings stored; a partial crawl of a keyword proves nothing gone."""
    from farm.openings.life import day_counts
    from farm.openings.picture import picture

    store = farm_ctx.store(read_only=True)
    last = day or today(utcnow(), store.tz)
    seen = picture(store.engine, store.tz, gone_after, last)
    postings, lives = list(seen.postings.values()), [opening.life for opening in seen.openings]
    counted = [day_counts(last - timedelta(days=back), postings, lives) for back in range(count)]
    counted.reverse()
    if seen.waiting:
        click.echo(f"{seen.waiting:,} postings are in no opening yet: run `farm openings update`", err=True)
    if as_json:
        rows = [{**vars(c), "day": c.day.isoformat()} for c in counted]
        click.echo(json.dumps({"gone_after": gone_after, "waiting": seen.waiting, "days": rows}))
        return
    click.echo(
        f"{'day':<10}  {'openings new':>12}  {'gone':>6}  {'back':>6}  {'postings new':>12}  {'gone':>6}  {'back':>6}"
    )
    for c in counted:
        click.echo(
            f"{c.day.isoformat():<10}  {c.new_openings:>12}  {c.gone_openings:>6}  {c.back_openings:>6}  "
            f"{c.new_postings:>12}  {c.gone_postings:>6}  {c.back_postings:>6}"
        )
