"""Help that names the sites: ``{sites}`` in a command's help is the registered sites' names (farm.sites),
filled in when the help is shown, so a site registered after the command was made is named too."""

import click

from farm.sites import known_sources, named


def sites_named(text: str | None) -> str | None:
    """``text`` with ``{sites}`` as the registered sites' names: ``boss, qcwy and zhilian``."""
    return None if text is None else text.replace("{sites}", named(known_sources()))


class SitesHelp:
    """A click command or group whose help says ``{sites}`` (mixed in before click's own class)."""

    help: str | None

    def format_help_text(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        given, self.help = self.help, sites_named(self.help)
        try:
            super().format_help_text(ctx, formatter)  # type: ignore[misc]
        finally:
            self.help = given

    def get_short_help_str(self, limit: int = 45) -> str:
        given, self.help = self.help, sites_named(self.help)
        try:
            return super().get_short_help_str(limit)  # type: ignore[misc]
        finally:
            self.help = given


class SitesCommand(SitesHelp, click.Command):
    """A command whose help names the sites."""


class SitesGroup(SitesHelp, click.Group):
    """A group whose help names the sites."""
