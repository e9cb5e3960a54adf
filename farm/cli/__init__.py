"""The ``farm`` command: the database schema, the keyword table, stats, and the sandbox and demo.

One module per command group; this one builds the group and adds them:

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

from farm.cli.checking import check_command
from farm.cli.context import Farm, project_settings
from farm.cli.demo import demo
from farm.cli.keywordtable import keywords
from farm.cli.maintenance import db, doctor, reap
from farm.cli.openings import openings
from farm.cli.probe import probe
from farm.cli.reporting import export_command, report_command
from farm.cli.stats import stats


class _FarmGroup(click.Group):
    """farm's commands; ``sandbox`` and ``api`` imported when named: aiohttp and the sandbox's
    data are most of the command's start, which `farm stats` and `farm doctor` need not pay."""

    LAZY = {"sandbox": ("farm.sandbox.cli", "sandbox"), "api": ("farm.api.server", "api")}

    def list_commands(self, ctx):
        return sorted({*super().list_commands(ctx), *self.LAZY})

    def get_command(self, ctx, name):
        if name in self.LAZY and name not in self.commands:
            module, attribute = self.LAZY[name]
            self.add_command(getattr(importlib.import_module(module), attribute), name)
        return super().get_command(ctx, name)


@click.group(cls=_FarmGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--db-url",
    metavar="URL",
    help="SQLAlchemy URL of the farm database. [default: the FARM_DB_URL setting, "
    "itself sqlite:///farm.db unless the environment sets it]",
)
@click.pass_context
def farm(ctx: click.Context, db_url: str | None):
    """farm: crawl job listings from boss, qcwy and zhilian for a table of keywords."""
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


for command in (db, keywords, stats, reap, doctor, demo):
    farm.add_command(command)
farm.add_command(report_command, "report")
farm.add_command(export_command, "export")
farm.add_command(check_command, "check")
farm.add_command(openings)
farm.add_command(probe)


def main():
    farm(prog_name="farm")
