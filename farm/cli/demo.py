"""`farm demo`: the bundled keywords of the three sites crawled against the sandbox, then the stats and report."""

from pathlib import Path

import click

from farm.cli.context import Farm, database_command
from farm.cli.keywordfile import read_keywords
from farm.cli.reporting import report_command
from farm.cli.stats import stats
from farm.state.migrate import upgrade


@click.command()
@click.option(
    "--log-dir",
    default="demo-run",
    show_default=True,
    type=click.Path(file_okay=False),
    help="Where each spider's log goes.",
)
@click.option(
    "--walls",
    is_flag=True,
    help="Raise the sites' walls in the sandbox (Boss's security check, 51job's WAF, 智联's verification): "
    "the crawls pass them in headless Chromium, as they would on the real sites.",
)
@click.pass_context
@database_command
def demo(farm_ctx: Farm, ctx: click.Context, log_dir: str, walls: bool):
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
    codes = run_demo(store, farm_ctx.db_url, Path(log_dir), walls=walls)
    click.echo()
    ctx.invoke(stats)
    click.echo()
    ctx.invoke(report_command, out=str(Path(log_dir) / "report.html"))
    failed = [source for source, code in codes.items() if code != 0]
    if failed:
        raise click.ClickException(f"the crawl of {', '.join(failed)} failed: see its log in {log_dir}/")
