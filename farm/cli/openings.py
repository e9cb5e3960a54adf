"""`farm openings explain`: which opening a posting belongs to, and why it joined it."""

import click

from farm.cli.context import Farm, database_command


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
