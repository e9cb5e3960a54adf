"""Engines for the state database: SQLite (embedded default), MySQL/MariaDB or PostgreSQL, each
made for its deadlines (farm.state.db.make_engine reads them from the settings)."""

import inspect
import math
import time
from typing import Any, TypedDict, cast

from sqlalchemy import create_engine, event
from sqlalchemy.engine import URL, Connection, Engine, ExceptionContext, make_url
from sqlalchemy.engine.default import DefaultDialect
from sqlalchemy.exc import ArgumentError, DisconnectionError
from sqlalchemy.pool import ConnectionPoolEntry, PoolProxiedConnection, PoolResetState, QueuePool

from farm.display import mask_url
from farm.errors import DatabaseUrlError, SettingError

URL_EXAMPLES = (
    "e.g. sqlite:///farm.db, mysql+pymysql://user:password@host:3306/farm "
    "or postgresql+psycopg://user:password@host:5432/farm"
)
# the execution option of reader(engine): its SQLite transactions begin deferred
READ_OPTION = "farm_read"


MYSQL = ("mysql", "mariadb")  # the backends of mysql+pymysql:// and mariadb+pymysql://
# what the engine's deadlines are kept as, among its execution options (see deadlines())
DEADLINES_OPTION = "farm_deadlines"
# PyMySQL's own options for its socket timeouts: a URL that names one keeps its value
_MYSQL_TIMEOUTS = ("connect_timeout", "read_timeout", "write_timeout")
POSTGRESQL = "postgresql"  # the backend of postgresql+psycopg://
# PostgreSQL's SQLSTATEs worth retrying the whole (short) transaction for: serialization failure,
# deadlock, lock not available
RETRYABLE_POSTGRESQL = ("40001", "40P01", "55P03")
# PostgreSQL's SQLSTATEs of a server that went away or did not answer in time: the server shut
# down or crashed or is starting, a statement past its statement_timeout (FARM_DB_TIMEOUT);
# class 08 (connection exceptions) too
UNREACHABLE_POSTGRESQL = ("57P01", "57P02", "57P03", "57014")
# a MySQL/MariaDB connection back in the pool for longer than this is pinged at checkout; one in
# steady use goes straight to its statement (a server lost meanwhile fails that statement, which
# invalidates the pool, and the store's retries run the transaction again on a new connection)
PING_IDLE_AFTER = 1.0
_CHECKED_IN = "farm_checked_in"  # the connection record's info key: when it went back to the pool
# the connection record's info key: its last transaction ended (committed or rolled back through
# SQLAlchemy) and nothing ran since
_ENDED = "farm_transaction_ended"


def parse_url(url: str, setting: str = "FARM_DB_URL") -> URL:
    """The SQLAlchemy URL of ``url``, or a DatabaseUrlError naming ``setting``."""
    try:
        parsed = make_url(url)
    except ArgumentError:
        raise _url_error(url, setting, "is not a database URL") from None
    except ValueError:  # SQLAlchemy reads the port with int()
        raise _url_error(url, setting, "has a port that is not a number (1 to 65535)") from None
    if parsed.port is not None and not 1 <= parsed.port <= 65535:
        raise _url_error(url, setting, f"has port {parsed.port}, outside 1 to 65535")
    return parsed


def check_stored(url: str, setting: str = "FARM_DB_URL") -> URL:
    """``parse_url``, refusing a database that lives in memory only: what a command wrote
    there would be gone when it ends."""
    parsed = parse_url(url, setting)
    if parsed.get_backend_name() == "sqlite" and (
        parsed.database in (None, "", ":memory:") or parsed.query.get("mode") == "memory"
    ):
        raise _url_error(url, setting, "is a SQLite database in memory, gone when the command ends: name a file")
    return parsed


def setting_url(raw: object) -> str:
    """FARM_DB_URL read as a setting (farm.config): a database kept on disk, its driver and the driver's
    options in the URL checked without a connection. SettingError names the setting, with examples."""
    url = str(raw)
    try:
        check_stored(url)
        engine_for(url, timeout=1.0, pool_timeout=1.0).dispose()  # never connected: any deadline will do
    except DatabaseUrlError as exc:
        raise SettingError(str(exc)) from None
    return url


def engine_for(
    url: str,
    setting: str = "FARM_DB_URL",
    *,
    timeout: float,
    pool_timeout: float,
    read_deadline: bool = True,
    connections: int | None = None,
) -> Engine:
    """An engine tuned for farm's short transactions, for ``FARM_DB_URL``.

        Every call has a deadline, so that a server that accepts connections but never
        answers is an outage and not a hang: on MySQL/MariaDB, ``timeout`` seconds
        (FARM_DB_TIMEOUT) to connect and for each read and write on the socket; on
        PostgreSQL, to connect, for each statement (``statement_timeout``) and for data sent
        and not acknowledged (``tcp_user_timeout``); on every
        database, ``pool_timeout`` seconds (FARM_DB_POOL_TIMEOUT) to wait for a pooled
        connection (farm.state.db.make_engine takes the settings' values). ``read_deadline=False`` leaves reads
        and writes without one: migrations, whose ALTER TABLE may rightly take long. ``connections``:
    how many its pool keeps (SQLAlchemy's 5 if not given), for a server that runs more calls at once.

        Every problem with the URL itself, its driver options included, is a DatabaseUrlError
        naming ``setting``, with the password masked (and no chained exception that could
        repeat it).
    """
    parsed = parse_url(url, setting)
    try:
        engine = _engine(parsed, timeout, pool_timeout, read_deadline, connections)
    except (ArgumentError, ImportError) as exc:  # an unknown dialect, a missing driver, a bad SQLite form
        # SQLAlchemy's own rendering masks only what it took for the password: show ours
        reason = " ".join(str(exc).split()).replace(parsed.render_as_string(), mask_url(url))
        if parsed.password:
            reason = reason.replace(parsed.password, "***")
        if isinstance(exc, ImportError) and parsed.get_backend_name() == POSTGRESQL:
            reason += " (PostgreSQL's driver: pip install 'farm[postgresql]')"
        raise _url_error(url, setting, f"cannot be used: {reason}") from None
    except (ValueError, TypeError) as exc:  # SQLAlchemy casts the options it knows: connect_timeout=abc
        raise _url_error(url, setting, f"has a driver option of the wrong type ({exc})") from None
    problem = _driver_options_problem(engine)
    if problem:
        engine.dispose()
        raise _url_error(url, setting, problem)
    return engine


def _driver_options_problem(engine: Engine) -> str | None:
    """What is wrong with the URL's driver options (``?charset=``, ``?connect_timeout=``...), found
    now rather than as a driver's traceback at the first connection; None if nothing is."""
    try:
        _, options = engine.dialect.create_connect_args(engine.url)
    except (ValueError, TypeError) as exc:  # SQLAlchemy casts the options it knows: connect_timeout=abc
        return f"has a driver option of the wrong type ({exc})"
    connect = getattr(engine.dialect.loaded_dbapi, "connect", None)
    try:
        accepted = inspect.signature(connect).parameters if connect is not None else None
    except (TypeError, ValueError):  # a C function: the driver checks its own options
        accepted = None
    if accepted and not any(p.kind is p.VAR_KEYWORD for p in accepted.values()):
        unknown = sorted(set(options) - set(accepted))
        if unknown:
            return f"has a driver option {engine.dialect.driver} does not know: {', '.join(unknown)}"
    charset = options.get("charset")
    if charset and engine.dialect.driver == "pymysql":
        from pymysql.charset import charset_by_name

        if charset_by_name(charset) is None:
            return f"has charset={charset!r}, which MySQL does not know (farm uses utf8mb4)"
    return None


class Deadlines(TypedDict):
    """engine_for's deadlines, in seconds."""

    timeout: float
    pool_timeout: float


def deadlines(engine: Engine) -> Deadlines:
    """The ``timeout`` and ``pool_timeout`` ``engine`` was made with: engine_for(url, **deadlines(engine))
    makes another process's engine keep the same ones."""
    return cast(Deadlines, dict(engine.get_execution_options().get(DEADLINES_OPTION, {})))


def without_read_deadline(engine: Engine) -> tuple[Engine, bool]:
    """An engine on ``engine``'s database whose reads and writes have no deadline, and whether it is
    a new one (the caller disposes of it). Only a MySQL/MariaDB or PostgreSQL engine has such a deadline."""
    if engine.dialect.name not in (*MYSQL, POSTGRESQL):
        return engine, False
    url = engine.url.render_as_string(hide_password=False)
    return engine_for(url, **deadlines(engine), read_deadline=False), True


def reader(engine: Engine) -> Engine:
    """``engine`` for reads that must not wait behind writers, sharing its pool.

    On SQLite every transaction of ``engine`` begins IMMEDIATE (it takes the write lock
    at BEGIN, so claims never deadlock), and a read would wait for a crawl's writers up
    to the 30 s busy timeout. A transaction of ``reader(engine)`` begins deferred, a
    plain BEGIN: in WAL mode it reads the last committed state at once, whatever is
    being written. On MySQL/MariaDB it changes nothing.

    Only read through it: on SQLite a deferred transaction that then writes fails at
    once ("database is locked") while another holds the write lock, instead of waiting.
    """
    return engine.execution_options(**{READ_OPTION: True})


def _url_error(url: str, setting: str, problem: str) -> DatabaseUrlError:
    return DatabaseUrlError(f"{setting}={mask_url(url)!r} {problem} ({URL_EXAMPLES})", problem)


def _engine(parsed: URL, timeout: float, pool_timeout: float, read_deadline: bool, connections: int | None) -> Engine:
    backend = parsed.get_backend_name()
    # kept for deadlines(): the state writer's engine is made from them in its own process
    options: dict[str, Any] = {
        "execution_options": {DEADLINES_OPTION: {"timeout": timeout, "pool_timeout": pool_timeout}}
    }
    pooled = {"pool_size": connections} if connections else {}
    if backend == "sqlite":
        # a local file: its calls wait only for the write lock, up to the 30 s busy timeout
        dialect = cast(type[DefaultDialect], parsed.get_dialect())  # pysqlite's
        if issubclass(dialect.get_pool_class(parsed), QueuePool):  # not in memory: one connection
            options.update(pool_timeout=pool_timeout, **pooled)
        engine = create_engine(parsed, connect_args={"timeout": 30}, **options)
        event.listen(engine, "connect", _sqlite_pragmas)
        event.listen(engine, "begin", _sqlite_begin)
        return engine
    if backend in MYSQL:
        query = dict(parsed.query)
        query.setdefault("charset", "utf8mb4")
        # PyMySQL waits forever for a server that stopped answering unless told otherwise
        names = _MYSQL_TIMEOUTS if read_deadline else _MYSQL_TIMEOUTS[:1]
        connect_args = {name: timeout for name in names if name not in query}
        engine = create_engine(
            parsed.set(query=query),
            connect_args=connect_args,
            pool_recycle=3600,
            pool_timeout=pool_timeout,
            pool_reset_on_return=None,  # _mysql_reset rolls back what may still be open
            # no gap locks: SKIP LOCKED claims stay row-local
            isolation_level="READ COMMITTED",
            **options,
            **pooled,
        )
        event.listen(engine, "checkin", _mark_checkin)
        event.listen(engine, "checkout", lambda conn, record, proxy: _ping_if_idle(engine, conn, record))
        event.listen(engine, "checkout", _checked_out)
        event.listen(engine, "begin", _open)
        event.listen(engine, "handle_error", _failed)
        for name in ("commit", "rollback"):
            event.listen(engine, name, _ended)
        event.listen(engine, "reset", _mysql_reset)
        return engine
    if backend == POSTGRESQL:
        return create_engine(
            parsed,
            connect_args=_postgresql_deadlines(dict(parsed.query), timeout, read_deadline),
            pool_pre_ping=True,
            pool_recycle=3600,
            pool_timeout=pool_timeout,
            isolation_level="READ COMMITTED",
            **options,
            **pooled,
        )
    return create_engine(parsed, pool_pre_ping=True, pool_timeout=pool_timeout, **options, **pooled)


def _postgresql_deadlines(query: dict[str, Any], timeout: float, read_deadline: bool) -> dict[str, int | str]:
    """libpq's options for ``timeout``: to connect (whole seconds), and unless ``read_deadline`` is
    off, for each statement and for sent data the server does not acknowledge. An option the URL
    names keeps its value."""
    args: dict[str, int | str] = {}
    if "connect_timeout" not in query:
        args["connect_timeout"] = max(2, math.ceil(timeout))  # libpq's least
    if not read_deadline:
        return args
    milliseconds = max(1, round(timeout * 1000))
    server = query.get("options", "")
    if "statement_timeout" not in server:
        args["options"] = f"{server} -c statement_timeout={milliseconds}".strip()
    if "tcp_user_timeout" not in query:
        args["tcp_user_timeout"] = milliseconds
    return args


def postgresql_state(exc: BaseException) -> str | None:
    """The SQLSTATE of a PostgreSQL error wrapped by SQLAlchemy; None for psycopg's own (a
    connection refused, lost or timed out) and for a pool timeout."""
    state: str | None = getattr(getattr(exc, "orig", None), "sqlstate", None)
    return state


def postgresql_unreachable(exc: BaseException) -> bool:
    """Whether a PostgreSQL OperationalError means the server is unreachable: refused, gone, lost
    mid-query, or silent past FARM_DB_TIMEOUT."""
    state = postgresql_state(exc)
    if state is None:  # psycopg's own: the connection failed, broke or timed out
        return getattr(exc, "orig", None) is not None
    return state.startswith("08") or state in UNREACHABLE_POSTGRESQL


def _mark_checkin(dbapi_connection: Any, connection_record: ConnectionPoolEntry) -> None:
    connection_record.info[_CHECKED_IN] = time.monotonic()


def _ping_if_idle(engine: Engine, dbapi_connection: Any, connection_record: ConnectionPoolEntry) -> None:
    """Ping a connection idle past PING_IDLE_AFTER (a server restarted meanwhile dropped it): the
    pool then takes a new one. A claim every few milliseconds saves the round trip."""
    checked_in = connection_record.info.get(_CHECKED_IN)
    if checked_in is None or time.monotonic() - checked_in < PING_IDLE_AFTER:
        return
    try:
        engine.dialect.do_ping(dbapi_connection)
    except engine.dialect.loaded_dbapi.Error as exc:
        raise DisconnectionError(f"the idle connection no longer answers: {exc}") from exc


def _mark(conn: Connection | None, ended: bool) -> None:
    # the pooled connection as is: Connection.connection would reconnect an invalidated one
    fairy = conn._dbapi_connection if conn is not None else None
    if fairy is not None and fairy.is_valid:
        fairy.info[_ENDED] = ended


def _ended(conn: Connection) -> None:
    _mark(conn, True)


def _open(conn: Connection) -> None:
    _mark(conn, False)


def _failed(context: ExceptionContext) -> None:
    _mark(context.connection, False)


def _checked_out(dbapi_connection: Any, connection_record: ConnectionPoolEntry, proxy: PoolProxiedConnection) -> None:
    connection_record.info[_ENDED] = False


def _mysql_reset(dbapi_connection: Any, connection_record: ConnectionPoolEntry, reset_state: PoolResetState) -> None:
    """Roll back a connection going back to the pool unless its last transaction ended by a
    commit or a rollback through SQLAlchemy, with nothing run since: a committed claim costs no
    extra ROLLBACK; anything else (an error, a raw DBAPI cursor) is rolled back."""
    if reset_state.transaction_was_reset or not reset_state.asyncio_safe:
        return
    if not connection_record.info.get(_ENDED):
        dbapi_connection.rollback()


def _sqlite_begin(conn: Connection) -> None:
    # pysqlite's own BEGIN handling defers the write lock; take it at BEGIN instead,
    # except in a reader's transaction (see reader)
    conn.exec_driver_sql("BEGIN" if conn.get_execution_options().get(READ_OPTION) else "BEGIN IMMEDIATE")


def _sqlite_pragmas(dbapi_connection: Any, connection_record: ConnectionPoolEntry) -> None:
    # let SQLAlchemy's "begin" event issue BEGIN IMMEDIATE itself
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.close()
