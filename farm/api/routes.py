"""The keyword API's endpoints: each one store call, as a spider makes it.

The endpoints are plain functions, each run whole on one of the server's database
threads (farm.api.dbthreads), so a store call blocks one thread and never the event
loop. A write the store
fences (the token is not the keyword's, or its keyword is no longer crawling)
changes nothing and answers 409 with the keyword as it is now; 404 when there is
no such keyword.
"""

import logging
from datetime import date
from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request
from pydantic import Field

from farm.api import reads
from farm.api.claiming import CLAIM_BODY, claim_params, never_claims
from farm.api.dbthreads import on_db_thread
from farm.api.outcomes import Outcomes
from farm.api.schemas import (
    ID_MAX,
    LIMIT_MAX,
    SKIP_MAX,
    AvailableOut,
    ClaimIn,
    Conflict,
    CrawlCompleteIn,
    CrawlCompleteOut,
    Day,
    HeartbeatIn,
    HeartbeatOut,
    KeywordOut,
    KeywordState,
    PageProgressIn,
    PageProgressOut,
    PostingsIn,
    PostingsOut,
    Problem,
    Source,
    StatsOut,
)
from farm.errors import ApiRefusal
from farm.state.lease import Lease, PageWrite
from farm.state.normalise import fit_rows
from farm.state.postings import FIELDS
from farm.state.store import KeywordStore

logger = logging.getLogger(__name__)

# answers every endpoint may give besides its own
COMMON = {
    401: {"model": Problem, "description": "No bearer token, or the wrong one."},
    503: {
        "model": Problem,
        "description": "The database is unavailable; ask again after Retry-After seconds.",
        "headers": {"Retry-After": {"description": "Seconds to wait.", "schema": {"type": "integer"}}},
    },
}
WRITES = {
    **COMMON,
    400: {"model": Problem, "description": "The body is not JSON, or nested too deeply to read."},
    404: {"model": Problem, "description": "No keyword has this id."},
    409: {
        "model": Conflict,
        "description": "The lease token is not current, or the source sent is not the keyword's: nothing was written.",
    },
    413: {"model": Problem, "description": "The body is over FARM_API_MAX_BODY bytes."},
    415: {"model": Problem, "description": "The body's Content-Type is not JSON (application/json)."},
}


def _lease_of(keyword: str) -> dict:
    return {
        "keyword_id": f"$response.body#/keywords/{keyword}/id",
        "lease_token": f"$response.body#/keywords/{keyword}/lease_token",
    }


INVALID = {
    "description": "Validation Error",
    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/HTTPValidationError"}}},
}
# the claim reads its parameters itself (from a body or the query): its answers are said here
CLAIM_ANSWERS = {
    400: WRITES[400],
    413: WRITES[413],
    415: WRITES[415],
    422: INVALID,
}
# a claim's keywords are what every write names (OpenAPI links: for clients, and for the fuzz run's chains)
CLAIMED = {
    200: {
        "links": {
            name: {
                "operationId": operation,
                "requestBody": _lease_of("0"),
                "description": "Every write names the id and lease token of a claimed keyword.",
            }
            for name, operation in (
                ("RecordPage", "page_progress"),
                ("EndKeyword", "crawl_complete"),
                ("Heartbeat", "heartbeat"),
                ("StorePostings", "postings"),
            )
        }
    }
}
LISTING = {
    405: {
        "model": Problem,
        "description": "reserve=true: a GET never claims; a claim is the POST.",
        "headers": {"Allow": {"description": "POST", "schema": {"type": "string"}}},
    }
}
# what the crawl asks the store to write, for each status a client reports
_ENDS = {"completed": "completed", "failed": "failed", "partial": "released", "blocked": "blocked"}

router = APIRouter(prefix="/api/v1")


def _store(request: Request) -> KeywordStore:
    return request.app.state.store


def _tally(request: Request, name: str, n: int = 1) -> None:
    request.app.state.outcomes.add(name, n)


def _lease(body) -> Lease:
    """The lease a write names: all the store's fence needs is (id, lease_token)."""
    return Lease(
        id=body.keyword_id, source="", city="", job="", lease_token=body.lease_token, start_page=1, from_status=""
    )


def _keyword_out(lease: Lease) -> KeywordOut:
    return KeywordOut(
        id=lease.id,
        source=lease.source,
        city=lease.city,
        job=lease.job,
        crawl_status="crawling",
        claim_kind=lease.from_status,
        last_completed_page=lease.start_page - 1,
        total_pages=lease.total_pages,
        pages_done_ahead=sorted(lease.pages_ahead),
        retry_count=lease.retry_count,
        lease_token=lease.lease_token,
    )


def _page_out(keyword_id: int, page: int, write: PageWrite) -> PageProgressOut:
    return PageProgressOut(
        keyword_id=keyword_id,
        page=page,
        counted=write.counted,
        last_completed_page=write.last_completed_page,
        total_pages=write.total_pages,
        completed=write.completed,
        crawl_status="completed" if write.completed else "crawling",
    )


def _check_source(store, request, body, what: str) -> None:
    """A write that names a source (some clients send it) must name the keyword's: 409 with the
    keyword else (404 when there is none). Without a source, the lease alone says which keyword it is."""
    if body.source is None:
        return
    state = reads.keyword_state(store, body.keyword_id, body.lease_token)
    if state is None:
        raise _refused(store, request, body, what)
    if state["source"] != body.source:
        why = f"keyword {body.keyword_id} is a keyword of {state['source']}, not of {body.source}"
        raise _refused(store, request, body, what, state, why)


def _refused(store, request, body, what: str, state: dict | None = None, why: str | None = None) -> ApiRefusal:
    """Why the write ``what`` of (keyword_id, lease_token) was refused: 404, or 409 with the keyword
    as it is now (but never its current lease token: the old holder must not write as the new one)."""
    if state is None:
        state = reads.keyword_state(store, body.keyword_id, body.lease_token)
    outcomes = request.app.state.outcomes
    if state is None:
        outcomes.add("not_found")
        logger.info("404: cannot %s: no keyword %d", what, body.keyword_id)
        return ApiRefusal(404, {"detail": f"no keyword has id {body.keyword_id}"})
    outcomes.add("fenced")
    if why is None and not state["lease_current"]:
        why = f"lease token {body.lease_token} is not the keyword's current one (claimed again since?)"
    elif why is None:
        why = f"the keyword is no longer crawling under this lease (it is {state['crawl_status']})"
    logger.info("409: cannot %s of keyword %d: %s", what, body.keyword_id, why)
    keyword = KeywordState(**state).model_dump(mode="json")
    return ApiRefusal(409, {"detail": f"cannot {what}: {why}", "keyword": keyword})


@router.get(
    "/keyword/available",
    response_model=AvailableOut,
    dependencies=[Depends(never_claims)],
    responses={**COMMON, **LISTING},
    operation_id="available",
)
@on_db_thread
def available(
    request: Request,
    source: Source,
    limit: int = Query(1, ge=1, le=LIMIT_MAX, description="At most this many keywords."),
    skip_partial: list[Annotated[int, Field(ge=1, le=ID_MAX)]] = Query(
        [], max_length=SKIP_MAX, description="Partial keywords a claim would leave to others."
    ),
):
    """Keywords of ``source`` a claim would take now, in the order it would take them: partial ones
    of today first (resumed), then failed ones with retries left, then fresh ones. Nothing is
    claimed: a claim is ``POST /api/v1/keyword/available``."""
    store = _store(request)
    skip = frozenset(skip_partial)
    listed = reads.claimable_keywords(store, source, limit, skip)
    outlook = store.outlook(source, skip)
    _tally(request, "listings")
    return AvailableOut(
        source=source, reserved=False, keywords=listed, claimable=outlook.claimable, next_retry_at=outlook.next_retry_at
    )


@router.post(
    "/keyword/available",
    response_model=AvailableOut,
    responses={**COMMON, **CLAIM_ANSWERS, **CLAIMED},
    operation_id="claim",
    openapi_extra=CLAIM_BODY,
)
@on_db_thread
def claim(request: Request, params: ClaimIn = Depends(claim_params)):
    """Claim up to ``limit`` keywords of ``source``, atomically, exactly as a spider claims them (in
    the order a listing shows), each with the lease token every later write must name. The
    parameters come in a JSON body, or in the query (``?source=boss&limit=5``), not both."""
    peer = request.client.host if request.client else None
    return claim_keywords(_store(request), request.app.state.outcomes, params, peer)


def claim_keywords(store: KeywordStore, outcomes: Outcomes, params: ClaimIn, peer: str | None) -> AvailableOut:
    """The claim's answer, for the route and for farm.api.fastclaim (which answers most claims)."""
    skip = frozenset(params.skip_partial)
    who = params.crawler_id or f"api@{peer or 'unknown'}"
    leases = store.claim(params.source, who, n=params.limit, skip_partial=skip)
    outcomes.add("claims")
    outcomes.add("keywords_claimed", len(leases))
    logger.debug("claim of %s for %s: %s", params.source, who, [lease.id for lease in leases] or "nothing")
    claimable = next_retry_at = None
    if not leases:  # say whether to ask again; a claim that got something does not pay for the count
        outlook = store.outlook(params.source, skip)
        claimable, next_retry_at = outlook.claimable, outlook.next_retry_at
        outcomes.add("claims_empty")
    return AvailableOut(
        source=params.source,
        reserved=True,
        keywords=[_keyword_out(lease) for lease in leases],
        claimable=claimable,
        next_retry_at=next_retry_at,
    )


@router.api_route("/keyword/available", methods=["PUT", "PATCH", "DELETE", "OPTIONS", "TRACE"], include_in_schema=False)
async def available_other_methods():
    """The path has two routes, GET and POST: a 405 of either alone would name only its own method."""
    raise ApiRefusal(405, {"detail": "Method Not Allowed"}, {"Allow": "GET, POST"})


@router.post("/keyword/page-progress", response_model=PageProgressOut, responses=WRITES, operation_id="page_progress")
@on_db_thread
def page_progress(request: Request, body: PageProgressIn):
    """Page ``page`` of the keyword is done with ``jobs_found`` postings. Pages may come in any order:
    the watermark (last_completed_page) moves over pages 1..N once all are done, a page reported
    again counts its jobs once, and the page that brings the watermark to total_pages completes
    the keyword."""
    store = _store(request)
    _check_source(store, request, body, "record a page")
    [write] = store.pages_done([(_lease(body), body.page, body.jobs_found, body.total_pages)])
    if not write.applied:
        raise _refused(store, request, body, "record a page")
    _tally(request, "pages")
    logger.debug("keyword %d: page %d done, watermark %d", body.keyword_id, body.page, write.last_completed_page)
    return _page_out(body.keyword_id, body.page, write)


@router.post(
    "/keyword/crawl-complete", response_model=CrawlCompleteOut, responses=WRITES, operation_id="crawl_complete"
)
@on_db_thread
def crawl_complete(request: Request, body: CrawlCompleteIn):
    """The client is done with the keyword: completed, failed (retried later while retries are left),
    partial (given back unfinished) or blocked (partial because the site blocked the client)."""
    store = _store(request)
    _check_source(store, request, body, f"end the keyword as {body.status}")
    message = body.error_message or ("blocked by the site" if body.status == "blocked" else None)
    written = store.end(_lease(body), _ENDS[body.status], message)
    if written is None:
        raise _refused(store, request, body, f"end the keyword as {body.status}")
    _tally(request, f"ended_{written}")
    return CrawlCompleteOut(keyword_id=body.keyword_id, crawl_status=written)


@router.post("/keyword/heartbeat", response_model=HeartbeatOut, responses=WRITES, operation_id="heartbeat")
@on_db_thread
def heartbeat(request: Request, body: HeartbeatIn):
    """The client still crawls the keyword: keeps the lease from being taken back after
    FARM_LEASE_TIMEOUT (every page recorded does the same)."""
    store = _store(request)
    if not store.heartbeat(_lease(body)):
        raise _refused(store, request, body, "heartbeat")
    _tally(request, "heartbeats")
    return HeartbeatOut(keyword_id=body.keyword_id, crawl_status="crawling", lease_timeout=store.lease_timeout)


@router.post("/postings", response_model=PostingsOut, responses=WRITES, operation_id="postings")
@on_db_thread
def postings(request: Request, body: PostingsIn):
    """Postings found under a keyword the client holds, stored as the crawl's pipeline stores them
    (a known (source, job_id) is updated in place). With ``page``, that page is recorded done in the
    same transaction: it never counts done without its postings."""
    store = _store(request)
    state = reads.keyword_state(store, body.keyword_id, body.lease_token)
    if state is None or not state["lease_current"] or state["crawl_status"] != "crawling":
        raise _refused(store, request, body, "store postings", state)
    # fitted to the table exactly as the state writer fits the pipeline's rows
    rows, unfit, _ = fit_rows([_posting_row(posting, state) for posting in body.postings])
    done = body.page
    pages = []
    if done is not None:
        jobs = len(body.postings) if done.jobs_found is None else done.jobs_found
        pages = [(_lease(body), done.number, jobs, done.total_pages)]
    result = store.write_batch(rows, pages, store.clock())
    _tally(request, "postings", result.postings)
    if result.rejected or unfit:
        _tally(request, "postings_rejected", len(result.rejected) + len(unfit))
        logger.warning("keyword %d: %d posting(s) refused", body.keyword_id, len(result.rejected) + len(unfit))
    page = None
    if pages:
        write = result.pages[0]
        if not write.applied:  # the lease was taken between the check and the write
            raise _refused(store, request, body, f"record page {done.number} ({result.postings} postings stored)")
        _tally(request, "pages")
        page = _page_out(body.keyword_id, done.number, write)
    rejected = [{"job_id": str(job_id), "reason": str(reason)} for _, job_id, reason in unfit + result.rejected]
    return PostingsOut(keyword_id=body.keyword_id, postings=result.postings, rejected=rejected, page=page)


def _posting_row(posting, keyword: dict) -> dict:
    """The row the pipeline would queue for this posting (farm.pipelines.sql): JobPosting's fields,
    found by the keyword's site under the keyword."""
    row = {name: getattr(posting, name, None) for name in FIELDS}
    row.update(source=keyword["source"], keyword_id=keyword["id"])
    return row


@router.get("/keyword/stats", response_model=list[StatsOut], responses=COMMON, operation_id="stats")
@on_db_thread
def stats(
    request: Request,
    source: Source | None = Query(None, description="Only this site. [default: all three]"),
    day: Day | None = Query(None, alias="date", description="YYYY-MM-DD. [default: today in FARM_TIMEZONE]"),
):
    """Per source, for one day: keywords in all, used, unused, in each state, jobs found and pages
    done; for today, when the rest should be done."""
    store = _store(request)
    rows = store.stats(source=source, day=day)
    day = date.fromisoformat(rows[0]["date"])
    progress = reads.day_progress(store, [r["source"] for r in rows], day)
    now = store.clock()
    _tally(request, "stats")
    out = []
    for row in rows:
        pages, first_claim = progress.get(row["source"], (0, None))
        out.append(StatsOut(**row, pages=pages, eta=_eta(store, row, day, first_claim, now)))
    return out


def _eta(store: KeywordStore, row: dict, day: date, first_claim, now):
    status = row["crawl_status"]
    ended = status["completed"] + status["failed"]
    left = row["unused"] + status["crawling"] + status["partial"]
    if day != store.today() or not ended or not left or first_claim is None or now <= first_claim:
        return None
    return (now + (now - first_claim) * (left / ended)).astimezone(store.tz)
