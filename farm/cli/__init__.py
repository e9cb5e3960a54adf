"""The ``farm`` command: the database schema, the keyword table, stats, and the sandbox and demo.

One module per command group; this one builds the group, which imports each when it is named:

    farm db upgrade, farm reap, farm doctor   farm.cli.maintenance
    farm keywords import|add|list             farm.cli.keywordtable
    farm stats                                farm.cli.stats
    farm report, farm export                  farm.cli.reporting
    farm check                                farm.cli.checking
    farm openings update|explain|days         farm.cli.openings
    farm probe                                farm.cli.probe
    farm demo                                 farm.cli.demo
    farm api                                  farm.api.server
    farm sandbox                              farm.sandbox.cli

What they share (the settings, the database, the sources) is farm.cli.context.
"""

import importlib

import click

from farm.cli.context import Farm, project_settings
from farm.cli.sitehelp import SitesGroup
from farm.sites import named, sites


class _FarmGroup(SitesGroup):
    """farm's commands, each imported when named: a command's module and what it imports (Scrapy,
    SQLAlchemy, the store; aiohttp and the sandbox's data for `farm sandbox`) are most of its start,
    which no other command need pay. `farm --help` lists them by their first line, kept here, and
    imports none."""

    LAZY = {
        "api": ("farm.api.server", "api"),
        "check": ("farm.cli.checking", "check_command"),
        "db": ("farm.cli.maintenance", "db"),
        "demo": ("farm.cli.demo", "demo"),
        "doctor": ("farm.cli.maintenance", "doctor"),
        "export": ("farm.cli.reporting", "export_command"),
        "keywords": ("farm.cli.keywordtable", "keywords"),
        "openings": ("farm.cli.openings", "openings"),
        "probe": ("farm.cli.probe", "probe"),
        "reap": ("farm.cli.maintenance", "reap"),
        "report": ("farm.cli.reporting", "report_command"),
        "sandbox": ("farm.sandbox.cli", "sandbox"),
        "stats": ("farm.cli.stats", "stats"),
    }
    # each one's first line, as its own help has it (tests/unit/test_cli_start.py holds them equal)
    LAZY_HELP = {
        "api": "Serve the keyword API for crawlers that are not Scrapy.",
        "check": "Check the day's crawls against their history and each run's own shape.",
        "db": "The database schema.",
        "demo": "Crawl the bundled keywords of all three sites against the sandbox.",
        "doctor": "Check this machine's farm setup: one line per check, ok, warn or fail, with what to do.",
        "export": "Export the postings seen on a day (new ones included), with their salary as numbers.",
        "keywords": "The keyword table: one row per (source, city, job).",
        "openings": "Openings: the postings of one job across the sites (docs/openings.md).",
        "probe": "One real search per site, through the same stack as a crawl, and what it met.",
        "reap": "Turn stale leases into partial keywords.",
        "report": "Write the day's picture as one HTML file that opens from disk.",
        "sandbox": f"Serve {named(site.title for site in sites() if site.sandbox)} search pages from generated "
        "postings, on one port.",
        "stats": "Keywords used, unused and in each state for one day, per source, with pages, the recent rate "
        "and an ETA.",
    }

    def list_commands(self, ctx):
        return sorted({*super().list_commands(ctx), *self.LAZY})

    def get_command(self, ctx, name):
        if name in self.LAZY and name not in self.commands:
            module, attribute = self.LAZY[name]
            self.add_command(getattr(importlib.import_module(module), attribute), name)
        return super().get_command(ctx, name)

    def format_commands(self, ctx, formatter):
        """The list of commands, each one not yet imported by its line in LAZY_HELP."""
        listed = click.Group(commands={name: self.listed(ctx, name) for name in self.list_commands(ctx)})
        listed.format_commands(ctx, formatter)

    def listed(self, ctx, name: str) -> click.Command:
        if name in self.LAZY and name not in self.commands:
            return click.Command(name, help=self.LAZY_HELP[name])
        command = self.get_command(ctx, name)
        assert command is not None
        return command


@click.group(cls=_FarmGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--db-url",
    metavar="URL",
    help="SQLAlchemy URL of the farm database. [default: the FARM_DB_URL setting, "
    "itself sqlite:///farm.db unless the environment sets it]",
)
@click.pass_context
def farm(ctx: click.Context, db_url: str | None):
    """farm: crawl job listings from {sites} for a table of keywords."""
    settings = project_settings()
    if db_url is None:
        ctx.obj = Farm(settings, settings.get("FARM_DB_URL"), "FARM_DB_URL")
    else:
        settings = settings.copy()
        settings.set("FARM_DB_URL", db_url, priority="cmdline")  # checked with the other settings
        ctx.obj = Farm(settings, db_url, "--db-url")
    ctx.call_on_close(ctx.obj.close)
    if ctx.invoked_subcommand != "doctor":  # doctor reports a bad setting as one of its checks
        ctx.obj.config  # noqa: B018 - every setting checked before the command does anything


def main():
    farm(prog_name="farm")
