"""`farm api`: serve the keyword API with uvicorn.

The store is made from the same settings as a crawl's (KeywordStore.from_config),
so a claim here follows the same FARM_TIMEZONE, FARM_LEASE_TIMEOUT, FARM_MAX_RETRIES,
FARM_RETRY_DELAY and FARM_MAX_BLOCKED_CLAIMS as the spiders'. The line
``farm api listening on http://HOST:PORT`` is printed (and flushed) once the socket
accepts connections, so a parent process can wait for it; ``--port 0`` picks a free port.

FastAPI and uvicorn are imported only when the command runs: the rest of `farm`
works without them.
"""

import logging
import socket
import sys
from datetime import datetime
from pathlib import Path

import click
from sqlalchemy.exc import DBAPIError

from farm.api.auth import check_bind
from farm.api.errors import database_reason
from farm.api.logsafe import escape_on
from farm.errors import SchemaNotCurrent, TokenRequired
from farm.state.db import make_engine
from farm.state.migrate import require_current
from farm.state.store import KeywordStore

logger = logging.getLogger(__name__)

KEEP_ALIVE = 5  # seconds an idle connection is kept between requests
# connections and requests at once; past it uvicorn answers 503 (a request waits for a database thread
# at most FARM_DB_POOL_TIMEOUT, and FARM_API_READ_TIMEOUT frees connections that trickle)
MAX_CONNECTIONS = 1000
MAX_WORKERS = 64
# Database connections a server process keeps (--db-connections), and so the threads its store
# calls run on (farm.api.dbthreads): as many as the clients a small fleet runs at once, so that a
# claim, bound by its commit's round trips, does not wait for another's thread
DB_CONNECTIONS = 8


class FileClock:
    """For tests only (``--test-clock FILE``): now is the aware ISO 8601 time written in FILE,
    read at every call, so a test moves the server's day and lease times without a mock."""

    def __init__(self, path: str):
        self.path = Path(path)

    def __call__(self) -> datetime:
        text = self.path.read_text().strip()
        now = datetime.fromisoformat(text)
        if now.tzinfo is None:
            raise ValueError(f"--test-clock {self.path}: {text!r} has no UTC offset")
        return now


@click.command()
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Interface to listen on; any but a loopback address needs FARM_API_TOKEN.",
)
@click.option(
    "--port", default=8000, show_default=True, type=click.IntRange(0, 65535), help="Port; 0 picks a free one."
)
@click.option(
    "--workers",
    default=1,
    show_default=True,
    type=click.IntRange(1, MAX_WORKERS),
    help="Server processes on the one port, each with its own database connections; one a core serves a fleet best.",
)
@click.option(
    "--db-connections",
    default=DB_CONNECTIONS,
    show_default=True,
    type=click.IntRange(1, 64),
    help="Database connections each server process keeps, and the threads its store calls run on.",
)
@click.option("--access-log/--no-access-log", default=True, show_default=True, help="Log a line per request.")
@click.option(
    "--test-clock",
    type=click.Path(exists=True, dir_okay=False),
    hidden=True,
    help="For tests only: read the time from this file (ISO 8601 with offset) at every call.",
)
@click.pass_obj
def api(farm_ctx, host: str, port: int, workers: int, db_connections: int, access_log: bool, test_clock: str | None):
    """Serve the keyword API for crawlers that are not Scrapy.

    Claims, page progress, ends and heartbeats go through the same store as the
    spiders', with the same guarantees. Every call needs `Authorization: Bearer
    $FARM_API_TOKEN`; without FARM_API_TOKEN the API serves 127.0.0.1 only, unauthenticated,
    to this machine's programs and never to a web page.
    The OpenAPI document is at /openapi.json, an explorer at /docs.
    """
    config = farm_ctx.config  # every setting checked: a bad one is its one line
    token = config.api_token or None
    try:
        check_bind(host, token)
    except TokenRequired as exc:
        raise click.ClickException(str(exc)) from None
    farm_ctx.sources()  # the project's own sites are sources the API takes (farm.sites)
    max_body, retry_after, read_timeout = config.api_max_body, config.api_retry_after, config.api_read_timeout
    try:
        import uvicorn

        from farm.api.app import create_app
        from farm.api.deadline import DeadlineProtocol
        from farm.api.workers import WorkerFailed, run_workers
    except ImportError as exc:
        raise click.ClickException(f"farm api needs FastAPI and uvicorn ({exc}): pip install 'farm[api]'") from None

    logging.basicConfig(
        level=config.log_level,
        stream=sys.stderr,
        format="%(asctime)s [%(name)s] %(levelname)s: %(message)s",
    )
    escape_on(logging.getLogger())  # a request path with %0A in it is one line of the log
    store = _open_store(farm_ctx, db_connections, FileClock(test_clock) if test_clock else None)
    sock = _listen(host, port)
    bound_port = sock.getsockname()[1]
    where = f"http://[{host}]:{bound_port}" if ":" in host else f"http://{host}:{bound_port}"

    def started():
        logger.info(
            "serving the keyword table at %s (%s; %s)",
            farm_ctx.masked_url,
            "bearer token required" if token else "no token: loopback only",
            f"{workers} workers" if workers > 1 else "one process",
        )
        click.echo(f"farm api listening on {where}")
        sys.stdout.flush()

    # as a crawl's reaper: well inside the lease timeout; 0 turns it off (another process reaps)
    reap_interval = min(config.reap_interval, store.lease_timeout / 3)
    if reap_interval <= 0:
        logger.info("not reaping stale leases: FARM_REAP_INTERVAL is 0")
    protocol = type("FarmHttp", (DeadlineProtocol,), {"read_timeout": read_timeout})

    def serve(index: int, ready, watch) -> None:
        app = create_app(
            store,
            token=token,
            max_body=max_body,
            retry_after=retry_after,
            reap_interval=reap_interval if index == 0 else 0,  # one reaper is enough
            db_wait=config.db_pool_timeout,
            on_started=ready,
        )
        server = uvicorn.Server(
            uvicorn.Config(
                app,
                log_config=None,
                access_log=access_log,
                server_header=False,
                timeout_graceful_shutdown=10,
                http=protocol,
                timeout_keep_alive=KEEP_ALIVE,
                limit_concurrency=MAX_CONNECTIONS,
            )
        )
        watch(server)
        try:
            server.run(sockets=[sock])
        finally:
            store.close()

    try:
        if workers == 1:
            serve(0, started, lambda server: None)
        else:
            store.close()  # each worker opens its own connections: none may cross the fork
            run_workers(workers, serve, started)
    except WorkerFailed as exc:
        raise click.ClickException(str(exc)) from None
    finally:
        sock.close()
        store.close()


def _open_store(farm_ctx, connections: int, clock) -> KeywordStore:
    """The store farm's settings describe (farm_ctx.config, already checked), on the command's
    database with ``connections`` pooled, at the current schema; errors name the fix."""
    config = farm_ctx.config
    engine = make_engine(
        config.db_url, timeout=config.db_timeout, pool_timeout=config.db_pool_timeout, connections=connections
    )
    # a client is told 503 and Retry-After at once: it retries; the server does not wait out the outage
    store = KeywordStore.from_config(config, engine, outage_grace=0, **({"clock": clock} if clock else {}))
    try:
        require_current(store.engine)
    except SchemaNotCurrent as exc:
        store.close()
        raise click.ClickException(str(exc)) from None
    except DBAPIError as exc:
        store.close()
        raise click.ClickException(
            f"cannot connect to the database at {farm_ctx.masked_url}: {database_reason(exc)}"
        ) from None
    return store


def _listen(host: str, port: int) -> socket.socket:
    """A listening socket: bound here so that the port is known (and taken) before the server starts."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
    except socket.gaierror as exc:
        raise click.ClickException(f"--host {host}: {exc.strerror}") from None
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
        sock.listen(2048)
    except OSError as exc:
        sock.close()
        raise click.ClickException(f"cannot listen on {host}:{port}: {exc.strerror}") from None
    sock.set_inheritable(True)
    return sock
