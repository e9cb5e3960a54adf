"""`farm openings explain`: which opening a posting belongs to, and why it joined it; `farm openings days`:
the openings and postings new and gone on each day."""

import json
from datetime import date, timedelta

import click

from farm.cli.context import Farm, database_command, date_option
from farm.state.clock import today, utcnow


@click.group("openings")
def openings():
    """Openings: the postings of one job across the sites (docs/openings.md)."""


@openings.command("explain")
@click.argument("source")
@click.argument("job_id")
@click.option(
    "--pairs",
    type=click.Path(exists=True, dir_okay=False),
    help="A file of 'brand,legal name' lines: pairs of company names that are one company.",
)
@click.option("--threshold", type=click.FloatRange(0, 1), default=0.85, show_default=True, help="Title likeness.")
@database_command
def explain(farm_ctx: Farm, source: str, job_id: str, pairs: str | None, threshold: float):
    """Cluster the postings of the posting's city and say why it is in its opening."""
    from farm.openings.cluster import Clusterer
    from farm.openings.names import CompanyNames
    from farm.openings.postings import read_postings

    try:
        names = CompanyNames.from_file(pairs) if pairs else CompanyNames()
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None
    store = farm_ctx.store(read_only=True)
    everyone = read_postings(store.engine, names)
    found = next((p for p in everyone if (p.source, p.job_id) == (source, job_id)), None)
    if found is None:
        raise click.ClickException(f"no posting {source} {job_id!r} in job_posting")
    clusters = Clusterer(names, threshold)
    clusters.add_all(p for p in everyone if p.city == found.city)
    why = clusters.why[(source, job_id)]
    opening = clusters.openings[why.opening - 1]
    click.echo(f"{source} {job_id}: {found.title} · {found.company} · {found.city}")
    click.echo(why.text())
    for member_source, member_id in opening.postings:
        if (member_source, member_id) != (source, job_id):
            click.echo(f"  with {member_source} {member_id}: {clusters.why[(member_source, member_id)].text()}")


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
    """Postings and openings new and gone on each day (a partial crawl of a keyword proves nothing gone)."""
    from farm.openings.cluster import Clusterer
    from farm.openings.life import day_counts, opening_lives, posting_lives
    from farm.openings.names import CompanyNames
    from farm.openings.postings import read_postings

    store = farm_ctx.store(read_only=True)
    last = day or today(utcnow(), store.tz)
    names = CompanyNames()
    clusters = Clusterer(names)
    clusters.add_all(read_postings(store.engine, names))
    postings = posting_lives(store.engine, store.tz, gone_after, last)
    openings_lives = opening_lives(clusters, postings)
    counted = [
        day_counts(last - timedelta(days=back), list(postings.values()), openings_lives) for back in range(count)
    ]
    counted.reverse()
    if as_json:
        rows = [{**vars(c), "day": c.day.isoformat()} for c in counted]
        click.echo(json.dumps({"gone_after": gone_after, "days": rows}))
        return
    click.echo(f"{'day':<10}  {'openings new':>12}  {'gone':>6}  {'postings new':>12}  {'gone':>6}")
    for c in counted:
        click.echo(
            f"{c.day.isoformat():<10}  {c.new_openings:>12}  {c.gone_openings:>6}  {c.new_postings:>12}  "
            f"{c.gone_postings:>6}"
        )
