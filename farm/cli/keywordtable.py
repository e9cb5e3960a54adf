"""`farm keywords`: the keyword table, one row per (source, city, job): import, add, list."""

import click

from farm.cli.context import Farm, SourceChoice, database_command
from farm.cli.keywordfile import read_keywords
from farm.cli.sitehelp import SitesCommand
from farm.cli.tables import clip, or_dash, render_table
from farm.display import escape
from farm.errors import KeywordError, KeywordFileError
from farm.state.models import STATUSES
from farm.state.validation import validate_keyword

# Keywords written per transaction by `farm keywords import`.
IMPORT_CHUNK = 5000
# Keywords left out as the same search as another that an import names, one a line.
MOST_TOLD = 20


@click.group()
def keywords():
    """The keyword table: one row per (source, city, job)."""


@keywords.command("import")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, allow_dash=True))
@database_command
def keywords_import(farm_ctx: Farm, file: str):
    """Add the keywords of a CSV FILE with the header source,city,job (- reads standard input).

    Keywords already in the table are skipped, and a keyword repeated in the file
    is added once. A keyword is one search: boss,北京,Python and boss,北京,python, or
    zhilian,530,Java and zhilian,北京,Java, are stored once (the first given, its
    city as farm spells it), and the import names each line it did not store for
    that. The whole file is checked first: bad lines are all named, and nothing
    is written. The file is read once, so a pipe or a process substitution works.
    """
    store = farm_ctx.store()
    farm_ctx.sources()  # a site of the project's own is a source a keyword may name
    try:
        total, rows = _unique_keywords(file)
    except KeywordFileError as exc:
        raise click.ClickException(str(exc)) from None
    except OSError as exc:
        raise click.ClickException(f"{file}: cannot read: {exc.strerror or exc}") from None
    inserted = 0
    same: list[tuple[tuple[str, str, str], tuple[str, str, str]]] = []
    for start in range(0, len(rows), IMPORT_CHUNK):
        added = store.import_keywords(rows[start : start + IMPORT_CHUNK])
        inserted += added.inserted
        same += added.same_search
    repeated = f", {total - len(rows)} repeated in the file" if total > len(rows) else ""
    one = f", {len(same)} the same search as another" if same else ""
    present = len(rows) - inserted - len(same)
    click.echo(f"imported {inserted} new keywords ({present} already present{repeated}{one})")
    for row, kept in same[:MOST_TOLD]:
        click.echo(f"  {_shown(row)} is the same search as {_shown(kept)}: stored once")
    if len(same) > MOST_TOLD:
        click.echo(f"  … and {len(same) - MOST_TOLD} more")


def _shown(row: tuple[str, str, str]) -> str:
    return ",".join(escape(part) for part in row)


def _unique_keywords(file: str) -> tuple[int, list[tuple[str, str, str]]]:
    """The keyword lines of ``file`` (read once, all checked) and the distinct keywords among them."""
    total = 0
    unique: dict[tuple[str, str, str], None] = {}
    for _, source, city, job in read_keywords(file):
        total += 1
        unique[(source, city, job)] = None
    return total, list(unique)


@keywords.command("add", cls=SitesCommand)
@click.argument("source")
@click.argument("city")
@click.argument("job")
@database_command
def keywords_add(farm_ctx: Farm, source: str, city: str, job: str):
    """Add one keyword: SOURCE (one of {sites}, or a site of the project's own), CITY and JOB.

    A keyword stored already as the same search (another case, the city's code or name) is not added."""
    farm_ctx.sources()  # a site of the project's own is a source a keyword may name
    try:
        row = validate_keyword(source, city, job)
    except KeywordError as exc:
        raise click.ClickException(str(exc)) from None
    added = farm_ctx.store().import_keywords([row])
    if added.same_search:
        (_, kept), *_ = added.same_search
        click.echo(f"already present as the same search: {', '.join(escape(part) for part in kept)}")
    else:
        click.echo(f"{'added' if added.inserted else 'already present'}: {', '.join(row)}")


@keywords.command("list")
@click.option("--source", type=SourceChoice(), help="Only this site's keywords (a site of the project's own too).")
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
            f"{r['last_completed_page'] or 0}/{or_dash(r['total_pages'])}",
            r["jobs_found"],
            r["retry_count"],
            or_dash(r["last_requested_date"]),
            clip(
                escape(" ".join(or_dash(r["error_message"]).split())), 60
            ),  # a client's text: no escape reaches the terminal
        ]
        for r in rows
    ]
    click.echo(render_table(headers, body, right={"id", "page/total", "jobs", "retries"}))
