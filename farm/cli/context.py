"""What every ``farm`` command shares: the settings, the database, the sources, one-line errors.

Settings come from the Scrapy project (``get_project_settings()``), so ``FARM_DB_URL``
and the other ``FARM_*`` environment variables mean here what they mean to
``scrapy crawl``; ``--db-url`` overrides the database for one command.
"""

from __future__ import annotations

import functools
from datetime import date, datetime
from typing import TYPE_CHECKING

import click

from farm.display import mask_url
from farm.errors import BadSetting, DatabaseUnreachable, SchemaNotCurrent, SettingError

# Scrapy, SQLAlchemy, the settings and the store are imported by what uses them, not here: `farm --help`
# imports none of them (a command's own start imports Scrapy and the settings, its database the store)
if TYPE_CHECKING:
    from sqlalchemy.engine import Engine
    from sqlalchemy.exc import DBAPIError

    from farm.config import FarmConfig
    from farm.state.store import KeywordStore


class Farm:
    """What every command shares: the settings, the database URL and, once asked for, the engine."""

    def __init__(self, settings, db_url: str, url_origin: str):
        self.settings = settings
        self.db_url = db_url
        self.url_origin = url_origin  # "--db-url" or "FARM_DB_URL": named in error messages
        self._engine: Engine | None = None
        self._config: FarmConfig | None = None
        self._sources: tuple[str, ...] | None = None

    @property
    def config(self) -> FarmConfig:
        """Every setting, checked once (BadSetting names a bad one)."""
        if self._config is None:
            from farm.config import FarmConfig

            try:
                self._config = FarmConfig.from_settings(self.settings)
            except SettingError as exc:
                raise BadSetting(str(exc).replace("FARM_DB_URL=", f"{self.url_origin}=", 1)) from None
        return self._config

    @property
    def masked_url(self) -> str:
        return mask_url(self.db_url)

    def sources(self) -> tuple[str, ...]:
        """The sources a keyword may name: farm's three sites and the project's own (farm.sites)."""
        if self._sources is None:
            from farm.sites.project import load_sources  # not before: it imports the spiders

            try:
                self._sources = load_sources(self.settings)
            except (ImportError, ValueError) as exc:
                raise click.ClickException(f"cannot load the project's spiders: {exc}") from None
        return self._sources

    def engine(self) -> Engine:
        """The engine, after one connection proves the database is reachable."""
        if self._engine is None:
            from sqlalchemy.exc import DBAPIError

            from farm.state.db import make_engine
            from farm.state.engine import check_stored

            try:
                check_stored(self.db_url, setting=self.url_origin)  # not in memory: every command keeps or reads
                engine = make_engine(self.db_url, setting=self.url_origin)
            except ValueError as exc:  # DatabaseUrlError (its message masks the password), a bad FARM_DB_TIMEOUT
                raise click.ClickException(str(exc)) from None
            try:
                with engine.connect():
                    pass
            except DBAPIError as exc:
                engine.dispose()
                raise DatabaseUnreachable(reason(exc)) from exc
            self._engine = engine
        return self._engine

    def store(self, read_only: bool = False) -> KeywordStore:
        """The keyword store, on a database at the current schema (else SchemaNotCurrent).

        ``read_only``: for commands that only read (stats, list), whose reads then do
        not wait behind a crawl's writers on SQLite (farm.state.engine.reader).
        """
        from farm.state.engine import reader
        from farm.state.migrate import require_current
        from farm.state.store import KeywordStore

        config = self.config
        engine = reader(self.engine()) if read_only else self.engine()
        require_current(engine)
        # a command fails at once when the database is gone: it has no outage to ride out
        return KeywordStore.from_config(config, engine, outage_grace=0)

    def close(self) -> None:
        if self._engine is not None:
            self._engine.dispose()
            self._engine = None


def reason(exc: DBAPIError) -> str:
    """The driver's own words, without SQLAlchemy's statement dump: one short line."""
    orig = exc.orig if exc.orig is not None else exc
    args = getattr(orig, "args", ())
    if len(args) >= 2 and isinstance(args[0], int):  # PyMySQL: (code, message)
        text = str(args[1])
    else:
        text = str(orig)
    lines = text.strip().splitlines()
    return lines[0] if lines else type(orig).__name__


def database_command(func):
    """Run a command that uses the database; turn database failures into one-line errors."""

    @functools.wraps(func)
    @click.pass_obj
    def wrapper(farm_ctx: Farm, *args, **kwargs):
        from sqlalchemy.exc import DBAPIError

        try:
            return func(farm_ctx, *args, **kwargs)
        except DatabaseUnreachable as exc:
            raise click.ClickException(f"cannot connect to the database at {farm_ctx.masked_url}: {exc}") from None
        except SchemaNotCurrent as exc:
            raise click.ClickException(str(exc)) from None
        except DBAPIError as exc:
            raise click.ClickException(f"database error at {farm_ctx.masked_url}: {reason(exc)}") from None

    return wrapper


def project_settings():
    from scrapy.utils.project import get_project_settings

    settings = get_project_settings()
    if "FARM_DB_URL" not in settings:
        # run outside the project directory (no scrapy.cfg found): farm's own defaults
        settings.setmodule("farm.settings", priority="default")
    else:
        # a project that turns farm on with its add-on (farm.addon) gives only the FARM_* it changes
        from farm.addon import farm_defaults

        settings.update(farm_defaults(), priority="default")
    return settings


class SourceChoice(click.Choice):
    """A ``--source``: a registered site (farm.sites), or a site of the project's own (loaded only when named)."""

    def __init__(self):
        from farm.sites import known_sources

        super().__init__(known_sources())

    def convert(self, value, param, ctx):
        if value in self.choices:  # a site registered at import: farm's own
            return value
        farm_ctx = ctx.find_object(Farm) if ctx is not None else None
        known = farm_ctx.sources() if farm_ctx is not None else self.choices
        return click.Choice(known).convert(value, param, ctx)


def parse_date(ctx, param, value: str | None) -> date | None:
    if value is None:
        return None
    try:
        return datetime.strptime(value, "%Y-%m-%d").date()
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a date: use YYYY-MM-DD, e.g. 2024-05-01") from None


def date_option(help: str):
    """``--date YYYY-MM-DD``, given to the command as ``day`` (a date, or None)."""
    return click.option("--date", "day", metavar="YYYY-MM-DD", callback=parse_date, help=help)
