"""`farm demo`: the bundled keywords of the three sites crawled against the sandbox, then the stats and report."""

from pathlib import Path

import click

from farm.cli.context import Farm, database_command
from farm.cli.keywordfile import read_keywords
from farm.cli.reporting import report_command
from farm.cli.stats import stats
from farm.config import default
from farm.state.migrate import upgrade


@click.command()
@click.option(
    "--log-dir",
    default="demo-run",
    show_default=True,
    type=click.Path(file_okay=False),
    help="Where each spider's log, the report and the demo's own database (demo.db) go.",
)
@click.option(
    "--walls",
    is_flag=True,
    help="Raise the sites' walls in the sandbox (Boss's security check, 51job's WAF, 智联's verification): "
    "the crawls pass them in headless Chromium, as they would on the real sites. The demo's keywords are "
    "set back to a fresh pass first, so they are crawled through the walls even after a demo the same day.",
)
@click.pass_context
def demo(ctx: click.Context, log_dir: str, walls: bool):
    """Crawl the bundled keywords of all three sites against the sandbox.

    Upgrades the database, imports farm/demo/keywords.csv, starts the sandbox,
    runs `scrapy crawl` for each site the sandbox imitates, prints the stats and writes
    the day's report (report.html in --log-dir). Run again the same day, it
    finds nothing new to crawl and says so (--walls crawls the keywords again).

    The database is the demo's own, demo.db in --log-dir, unless one is named
    (--db-url, or FARM_DB_URL set to other than its default): the sandbox's
    keywords and postings stay out of the farm.db a real crawl keeps. Ctrl+C
    stops the crawl running as it stops `scrapy crawl`: its keywords go back
    as partial.
    """
    farm_ctx: Farm = ctx.obj
    folder = Path(log_dir)
    if farm_ctx.url_origin != "--db-url" and farm_ctx.db_url == default("db_url"):
        from farm.demo import demo_db_url

        folder.mkdir(parents=True, exist_ok=True)
        url = demo_db_url(folder)
        settings = farm_ctx.settings.copy()
        settings.set("FARM_DB_URL", url, priority="cmdline")
        ctx.obj = Farm(settings, url, "farm demo's database")  # what stats and the report read, too
        ctx.call_on_close(ctx.obj.close)
        click.echo(f"database: {folder / 'demo.db'} (the demo's own; --db-url names another)")
    _demo(ctx, folder, walls)


@database_command
def _demo(farm_ctx: Farm, ctx: click.Context, folder: Path, walls: bool):
    from farm.demo import KEYWORDS_FILE, fresh_pass, run_demo

    upgrade(farm_ctx.engine())
    store = farm_ctx.store()
    rows = [(s, c, j) for _, s, c, j in read_keywords(str(KEYWORDS_FILE))]
    added = store.add_keywords(rows)
    click.echo(f"keywords: {added} new, {len(rows) - added} already present ({len(rows)} in the demo file)")
    if walls:
        again = fresh_pass(farm_ctx.engine(), rows)
        if again:
            click.echo(f"walls: {again} keyword(s) set back to a fresh pass, to be crawled through the walls")
    outcome = run_demo(store, farm_ctx.db_url, folder, walls=walls)
    if outcome.stopped_by is not None:
        click.echo(f"Stopped. Run `farm demo` again to resume each keyword at its next page ({folder}/ has the logs).")
        raise click.exceptions.Exit(128 + outcome.stopped_by)
    click.echo()
    ctx.invoke(stats)
    click.echo()
    ctx.invoke(report_command, out=str(folder / "report.html"))
    failed = [source for source, code in outcome.codes.items() if code != 0]
    if failed:
        raise click.ClickException(f"the crawl of {', '.join(failed)} failed: see its log in {folder}/")
