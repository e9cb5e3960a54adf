"""The keyword API application: the endpoints over one KeywordStore, and what wraps them.

Outermost first: a Host, Origin or Content-Type given twice (400), the bearer token (401),
or without one a loopback server's own Host and origin (400, 403), the body size limit (413), the claim in a JSON body
(farm.api.fastclaim: answered there, the call a fleet makes most), then FastAPI,
whose handlers turn a refused write into 404/409, a body that is not JSON (or nested
too deeply to read) into 400, a body whose Content-Type is not JSON into 415,
an invalid request into 422 naming the field, and a database it cannot reach into
503 with Retry-After. While
it serves, it reaps stale leases as every crawl does, so a client that died
gives its keyword back after FARM_LEASE_TIMEOUT even when no spider runs.
"""

import asyncio
import logging
import math
from collections.abc import Callable
from contextlib import asynccontextmanager

import orjson
from fastapi import Depends, FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.security import HTTPBearer

from farm.api.auth import BearerAuth
from farm.api.claiming import NOT_JSON_TYPE
from farm.api.dbthreads import DbThreads
from farm.api.errors import UNAVAILABLE, database_reason, unavailable
from farm.api.fastclaim import ClaimFastPath
from farm.api.heads import OneEach
from farm.api.limits import BodyLimit
from farm.api.local import LocalOnly
from farm.api.outcomes import Outcomes
from farm.api.routes import router
from farm.errors import ApiRefusal
from farm.state.store import KeywordStore

logger = logging.getLogger(__name__)

ERRORS_SHOWN = 20  # validation errors a 422 lists
INPUT_SHOWN = 200  # characters of an invalid input a 422 echoes
DESCRIPTION = """\
The keyword table of farm, for crawlers that are not Scrapy: claim keywords, report pages and
postings, end keywords, keep leases alive, read the day's stats. Every write names the keyword's
id and the lease token its claim gave; a write whose token is no longer current changes nothing
and gets 409 with the keyword as it is now.
"""


def create_app(
    store: KeywordStore,
    *,
    token: str | None,
    max_body: int,
    retry_after: int,
    reap_interval: float = 0,
    db_wait: float = 5,
    on_started: Callable[[], None] | None = None,
) -> FastAPI:
    """The API over ``store``; ``token`` None serves without authentication (a loopback bind only).
    A store call that waits ``db_wait`` seconds for a database thread is a 503 (FARM_DB_POOL_TIMEOUT)."""
    outcomes = Outcomes()
    db = DbThreads(store.engine, db_wait)

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        reaper = asyncio.create_task(_reap_forever(store, db, reap_interval, outcomes)) if reap_interval > 0 else None
        if on_started is not None:
            on_started()
        try:
            yield
        finally:
            if reaper is not None:
                reaper.cancel()
            db.close()
            logger.info("farm api stopped: %s", outcomes.line())

    app = FastAPI(
        title="farm keyword API",
        version="1",  # the /api/v1 of the paths
        description=DESCRIPTION,
        lifespan=lifespan,
        redoc_url=None,
    )
    app.state.store = store
    app.state.db = db
    app.state.outcomes = outcomes
    # documents the bearer scheme in OpenAPI; BearerAuth enforces it on every path
    security = [Depends(HTTPBearer(auto_error=False, description="FARM_API_TOKEN"))] if token else []
    app.include_router(router, dependencies=security)

    @app.exception_handler(ApiRefusal)
    async def api_error(request: Request, exc: ApiRefusal):
        return JSONResponse(exc.body, status_code=exc.status, headers=exc.headers)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError):
        errors = exc.errors()
        not_json = _not_json(errors)
        if not_json:
            status, why = not_json
            outcomes.add("not_json")
            logger.info("%d %s %s: %s", status, request.method, request.url.path, why)
            return JSONResponse({"detail": why}, status_code=status)
        outcomes.add("invalid")
        fields = sorted({".".join(str(_printable(part)) for part in error["loc"]) for error in errors})
        logger.info("422 %s %s: %s", request.method, request.url.path, ", ".join(fields[:ERRORS_SHOWN]))
        # a deeply nested body fails at every level: say the first few, without echoing large inputs
        shown = [_short(error) for error in errors[:ERRORS_SHOWN]]
        return JSONResponse({"detail": jsonable_encoder(shown)}, status_code=422)

    async def database_unavailable(request: Request, exc: Exception):
        body, headers = unavailable(request.method, request.url.path, exc, retry_after, outcomes)
        return JSONResponse(body, status_code=503, headers=headers)

    for kind in UNAVAILABLE:
        app.add_exception_handler(kind, database_unavailable)

    app.add_middleware(ClaimFastPath, store=store, db=db, outcomes=outcomes, retry_after=retry_after)
    app.add_middleware(BodyLimit, max_body=max_body, outcomes=outcomes)
    if token:
        app.add_middleware(BearerAuth, token=token, outcomes=outcomes)  # added last: runs first
    else:  # a loopback server: this machine's programs, not the pages its browsers show
        app.add_middleware(LocalOnly, outcomes=outcomes)
    app.add_middleware(OneEach, outcomes=outcomes)  # ahead of every reader of the head
    return app


def _not_json(errors) -> tuple[int, str] | None:
    """The status and why the body is not JSON at all (400), or not sent as JSON (415: FastAPI
    hands on the bytes of a body whose Content-Type is not JSON); None when it is JSON and only
    its content is wrong (422)."""
    for error in errors:
        if error.get("type") == "json_invalid":
            where = error["loc"][-1] if len(error["loc"]) > 1 else 0
            why = error.get("ctx", {}).get("error", "unreadable")
            return 400, f"the body is not JSON: {why} (at character {where})"
        if tuple(error.get("loc", ())) == ("body",) and isinstance(error.get("input"), bytes):
            return 415, NOT_JSON_TYPE
    return None


def _short(error: dict) -> dict:
    """A validation error as FastAPI shows it, its input left out when long or not writable as JSON."""
    error = {key: value for key, value in error.items() if key != "url"}
    error["loc"] = [_printable(part) for part in error["loc"]]
    if "input" in error:
        try:
            # orjson writes NaN and Infinity as null; the answer's JSON cannot carry them at all
            if len(orjson.dumps(error["input"], default=str)) > INPUT_SHOWN or not _finite(error["input"]):
                del error["input"]
        except orjson.JSONEncodeError:  # a lone surrogate, a number past 64 bits
            del error["input"]
    return error


def _finite(value) -> bool:
    """No NaN or Infinity in ``value`` (short: it was just written in at most INPUT_SHOWN characters)."""
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(_finite(item) for item in value.values())
    if isinstance(value, (list, tuple)):
        return all(_finite(item) for item in value)
    return True


def _printable(part):
    # a key of raw may be a lone surrogate, which neither JSON nor the log can carry
    return part.encode("utf-8", "backslashreplace").decode("utf-8") if isinstance(part, str) else part


async def _reap_forever(store: KeywordStore, db: DbThreads, interval: float, outcomes: Outcomes) -> None:
    """Turn stale leases partial every ``interval`` seconds (the store logs how many)."""
    while True:
        await asyncio.sleep(interval)
        try:
            reaped = await db.run(store.reap)
        except UNAVAILABLE as exc:
            outcomes.add("reap_errors")
            logger.warning("reaping stale leases failed: %s", database_reason(exc))
            continue
        outcomes.add("reaped", reaped)
