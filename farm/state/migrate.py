"""The schema of the state database, moved by the Alembic migrations beside this module.

Users never need an ``alembic.ini``: ``farm db upgrade`` calls :func:`upgrade`, and
every component that opens the database first calls :func:`require_current`.

A crawl only checks the revision, so it does that without importing Alembic:
its modules would stay in the crawl's heap, where every full garbage
collection walks them again. That check needs no file either, so it works in a
crawl that scrapyd runs from farm's egg; migrating needs Alembic's scripts on
disk, so ``farm db upgrade`` runs from an installed farm.
"""

from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import inspect, text
from sqlalchemy.engine import Engine

from farm.errors import MigrationsNotOnDisk, SchemaNotCurrent
from farm.state.db import make_engine
from farm.state.engine import reader, without_read_deadline

if TYPE_CHECKING:
    from alembic.config import Config

MIGRATIONS = Path(__file__).with_name("migrations")
HEAD = "0016"  # the newest migration's revision (a test holds it to the scripts)


def _config(url: str | None = None) -> "Config":
    from alembic.config import Config

    if not MIGRATIONS.is_dir():
        raise MigrationsNotOnDisk(
            f"farm's migration scripts are not a directory on disk ({MIGRATIONS}): this farm runs from a "
            f"zipped egg, as scrapyd runs it; run `farm db upgrade` from an installed farm "
            f"(`pip install farm`, or `make install` in a checkout)"
        )
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    if url is not None:
        cfg.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return cfg


def _engine(url_or_engine: str | Engine) -> tuple[Engine, bool]:
    if isinstance(url_or_engine, Engine):
        return url_or_engine, False
    return make_engine(str(url_or_engine)), True


def upgrade(url_or_engine: str | Engine, revision: str = "head") -> None:
    """Bring the database at ``url_or_engine`` (a URL or an Engine) to ``revision``."""
    from alembic import command

    # an ALTER TABLE of a large table may rightly keep the server silent for long: no read deadline
    if isinstance(url_or_engine, Engine):
        engine, owned = without_read_deadline(url_or_engine)
    else:
        engine, owned = make_engine(str(url_or_engine), read_deadline=False), True
    try:
        with engine.begin() as connection:
            cfg = _config()
            cfg.attributes["connection"] = connection
            command.upgrade(cfg, revision)
    finally:
        if owned:
            engine.dispose()


def head_revision() -> str | None:
    """The newest revision among the migration scripts (None when there are none)."""
    from alembic.script import ScriptDirectory

    return ScriptDirectory.from_config(_config()).get_current_head()


def current_revision(engine: str | Engine) -> str | None:
    """The revision the database is at, or None when it has never been migrated."""
    engine, owned = _engine(engine)
    try:
        with reader(engine).connect() as connection:  # a read: not behind a crawl's writers
            if not inspect(connection).has_table("alembic_version"):
                return None
            revision: str | None = connection.execute(text("SELECT version_num FROM alembic_version")).scalar()
            return revision
    finally:
        if owned:
            engine.dispose()


def require_current(engine: str | Engine) -> None:
    """Raise SchemaNotCurrent unless the database is at the head revision."""
    engine, owned = _engine(engine)
    try:
        current = current_revision(engine)
        head = HEAD
        if current == head:
            return
        where = engine.url.render_as_string(hide_password=True)
        state = f"at revision {current}" if current else "empty (no farm schema)"
        raise SchemaNotCurrent(
            f"the database at {where} is {state}; this farm needs revision {head}: "
            f"run `farm db upgrade` (with the same FARM_DB_URL)"
        )
    finally:
        if owned:
            engine.dispose()
