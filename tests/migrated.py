"""A test's fresh database brought to farm's newest schema by copying one migrated once, not by migrating it.

Fifteen migrations take a second on SQLite and PostgreSQL and several on MariaDB, whose every ALTER TABLE
rewrites its table; the tests that need a database at head, not the migrations themselves
(tests/integration/test_migrations.py), take a copy of a template that this process migrated with
``farm.state.migrate.upgrade`` at its first use: the SQLite file copied; on MariaDB each table made by the
statement ``SHOW CREATE TABLE`` gives for the template's, and its rows copied, then its triggers; on PostgreSQL what
``pg_dump`` writes of the template run in it. A database that already holds tables is
migrated as ``upgrade`` would migrate it.
"""

import atexit
import shutil
import subprocess
import tempfile
import uuid
from pathlib import Path

from sqlalchemy import create_engine, inspect, text
from sqlalchemy.engine import make_url

from farm.state.db import make_engine
from farm.state.migrate import upgrade

_TEMPLATES: dict[str, str] = {}  # each kind's template: its SQLite file, its database's name, its dump


def migrated(url: str) -> None:
    """The database at ``url`` at farm's newest schema: a copy of the template when it holds no table yet."""
    kind = make_url(url).get_backend_name()
    if kind not in _COPIES or make_url(url).database in (None, "", ":memory:"):
        upgrade(url)
        return
    engine = make_engine(url)
    try:
        fresh = not inspect(engine).get_table_names()
    finally:
        engine.dispose()
    if not fresh:
        upgrade(url)
        return
    _COPIES[kind](url)


def _admin(url: str, database: str):
    return create_engine(make_url(url).set(database=database), isolation_level="AUTOCOMMIT")


def _sqlite_copy(url: str) -> None:
    if "sqlite" not in _TEMPLATES:
        folder = Path(tempfile.mkdtemp(prefix="farm-template-"))
        atexit.register(shutil.rmtree, folder, True)
        template = folder / "farm.db"
        upgrade(f"sqlite:///{template}")
        _TEMPLATES["sqlite"] = str(template)
    target = make_url(url).database
    assert target, f"no file in {url}"
    for left in (target, f"{target}-wal", f"{target}-shm"):  # what the look for tables left
        Path(left).unlink(missing_ok=True)
    shutil.copyfile(_TEMPLATES["sqlite"], target)


def _server_template(url: str, kind: str, first: str, create: str, drop: str) -> str:
    """The name of this process's migrated template on the server of ``url``, made at its first use."""
    if kind not in _TEMPLATES:
        name = f"farm_t_template_{uuid.uuid4().hex[:8]}"
        admin = _admin(url, first)
        with admin.connect() as conn:
            conn.execute(text(create.format(name=name)))
        admin.dispose()

        def dropped() -> None:
            admin = _admin(url, first)
            with admin.connect() as conn:
                conn.execute(text(drop.format(name=name)))
            admin.dispose()

        atexit.register(dropped)
        upgrade(str(make_url(url).set(database=name)))
        _TEMPLATES[kind] = name
    return _TEMPLATES[kind]


def _mariadb_copy(url: str) -> None:
    template = _server_template(
        url,
        "mysql",
        "test",
        "CREATE DATABASE `{name}` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin",
        "DROP DATABASE IF EXISTS `{name}`",
    )
    target = make_url(url).database
    engine = _admin(url, template)
    try:
        with engine.connect() as conn:
            tables = conn.execute(text("SHOW TABLES")).scalars().all()
            for table in tables:
                statement = conn.execute(text(f"SHOW CREATE TABLE `{table}`")).one()[1]
                conn.execute(
                    text(statement.replace(f"CREATE TABLE `{table}`", f"CREATE TABLE `{target}`.`{table}`", 1))
                )
                conn.execute(text(f"INSERT INTO `{target}`.`{table}` SELECT * FROM `{table}`"))
            # the triggers once the rows are in (a trigger made first would fire on their copies)
            triggers = conn.execute(text("SHOW TRIGGERS")).scalars().all()
            made = [conn.execute(text(f"SHOW CREATE TRIGGER `{name}`")).one()[2] for name in triggers]
    finally:
        engine.dispose()
    engine = _admin(url, target)
    try:
        with engine.connect() as conn:
            for statement in made:
                conn.execute(text(statement))
    finally:
        engine.dispose()


def _postgresql_copy(url: str) -> None:
    if "postgresql-dump" not in _TEMPLATES:
        template = _server_template(
            url,
            "postgresql",
            "postgres",
            "CREATE DATABASE \"{name}\" ENCODING 'UTF8' TEMPLATE template0",
            'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)',
        )
        server = make_url(url).set(drivername="postgresql", database=template, query={})
        dumped = subprocess.run(
            ["pg_dump", "--inserts", "--no-owner", "--no-privileges", "--dbname", server.render_as_string(False)],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        # psql's own commands (\restrict) are not SQL
        _TEMPLATES["postgresql-dump"] = "\n".join(line for line in dumped.splitlines() if not line.startswith("\\"))
    engine = make_engine(url)
    try:
        connection = engine.raw_connection()
        try:
            with connection.cursor() as cursor:  # no parameters: the statements go as one simple query
                cursor.execute(_TEMPLATES["postgresql-dump"])
            connection.commit()
        finally:
            connection.close()
    finally:
        engine.dispose()


_COPIES = {"sqlite": _sqlite_copy, "mysql": _mariadb_copy, "postgresql": _postgresql_copy}
