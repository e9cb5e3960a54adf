"""Alembic environment for farm's state database.

farm runs its migrations programmatically (``farm.state.migrate.upgrade``), which
hands a live connection over in ``config.attributes["connection"]``; running the
``alembic`` command against ``sqlalchemy.url`` works too.
"""

from alembic import context
from sqlalchemy.engine import Connection

from farm.state.db import make_engine
from farm.state.models import Base

config = context.config
target_metadata = Base.metadata


def _configure(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        # SQLite cannot ALTER most things in place: batch mode copies the table
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )


def run_migrations_offline() -> None:
    context.configure(
        url=config.get_main_option("sqlalchemy.url"),
        target_metadata=target_metadata,
        literal_binds=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _configure(connection)
        with context.begin_transaction():
            context.run_migrations()
        return
    url = config.get_main_option("sqlalchemy.url")
    if url is None:
        raise RuntimeError("no database to migrate: set sqlalchemy.url (farm db upgrade sets it from FARM_DB_URL)")
    engine = make_engine(url, read_deadline=False)  # an ALTER may take long
    try:
        with engine.connect() as connection:
            _configure(connection)
            with context.begin_transaction():
                context.run_migrations()
    finally:
        engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
