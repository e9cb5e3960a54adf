"""A client of `farm api`, and the loop of a crawler that is not Scrapy.

    from farm.api.client import Blocked, KeywordClient, crawl

    def fetch(keyword, page):
        # your crawler: one page of one keyword (keyword.source, .city, .job)
        ...
        return postings, total_pages  # postings: dicts with job_id, title, salary, ... (JobPosting's fields)

    with KeywordClient("http://127.0.0.1:8000", token="…") as client:
        crawl(client, "qcwy", fetch, crawler_id="my-crawler")

The loop, as a spider runs it: claim a keyword; fetch its pages from where the last
holder stopped, skipping the pages already done; send each page with its postings (the
page counts done only with them); heartbeat while a page takes long; end the keyword
completed, failed (``fetch`` raised: the keyword's fault, retried later) or blocked
(``fetch`` raised :class:`Blocked`). A 409 means the lease was taken back (the keyword
was reaped and claimed again): the loop drops it, sends nothing more about it, and
claims the next. A 503 is asked again after its Retry-After. The loop stops when no
keyword of the source is left to claim now.

What the client sends fits what the server takes: error texts are cleaned (no control
characters, no lone surrogates) and cut, a site's total is capped at the server's page
cap. On an error the loop cannot handle (the API refusing or unreachable, an interrupt)
the keyword is given back ``partial`` before the error propagates, so the next claim
resumes it at once rather than after FARM_LEASE_TIMEOUT.
"""

import json
import logging
import math
import re
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from urllib.parse import urlencode

import urllib3

from farm.errors import ApiError, ApiUnreachable, Blocked, ClaimLost
from farm.state.models import max_pages_that_fit

logger = logging.getLogger(__name__)

API = "/api/v1"
PAGE_MAX = max_pages_that_fit()  # the server's page cap: a total above it is refused
ERROR_MESSAGE_MAX = 2_000  # characters of an error message the server keeps (it takes up to 10,000)
RETRY_AFTER_DEFAULT = 5.0  # seconds, when a 503 says nothing readable
RETRY_AFTER_MAX = 300.0  # seconds: a longer Retry-After is waited this long, then the call is made again
# C0 and C1 control characters: a terminal would act on them
_CONTROLS = re.compile(r"[\x00-\x1f\x7f-\x9f]+")
_SURROGATES = re.compile(r"[\ud800-\udfff]")  # cannot be sent as UTF-8


def retry_after(value: str | None, now: Callable[[], datetime] = lambda: datetime.now(UTC)) -> float:
    """Seconds to wait for a Retry-After header: delay-seconds or an HTTP date; at least 0, at most
    RETRY_AFTER_MAX; RETRY_AFTER_DEFAULT when it is missing or unreadable."""
    if value is None:
        return RETRY_AFTER_DEFAULT
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return RETRY_AFTER_DEFAULT
        if when.tzinfo is None:  # HTTP dates are GMT
            when = when.replace(tzinfo=UTC)
        seconds = (when - now()).total_seconds()
    if math.isnan(seconds):
        return RETRY_AFTER_DEFAULT
    return min(max(seconds, 0.0), RETRY_AFTER_MAX)


def clean_text(text: str, limit: int = ERROR_MESSAGE_MAX) -> str:
    """``text`` as the API takes it: each run of control characters one space, each lone
    surrogate U+FFFD, at most ``limit`` characters (cut with an ellipsis)."""
    text = _SURROGATES.sub("\ufffd", _CONTROLS.sub(" ", str(text))).strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass(frozen=True)
class Claim:
    """A keyword this client holds; every write names its id and lease_token."""

    id: int
    source: str
    city: str
    job: str
    lease_token: int
    last_completed_page: int
    total_pages: int | None
    pages_done_ahead: frozenset[int] = field(default_factory=frozenset)
    claim_kind: str = "fresh"
    retry_count: int = 0

    @classmethod
    def of(cls, keyword: dict) -> "Claim":
        return cls(
            id=keyword["id"],
            source=keyword["source"],
            city=keyword["city"],
            job=keyword["job"],
            lease_token=keyword["lease_token"],
            last_completed_page=keyword["last_completed_page"],
            total_pages=keyword["total_pages"],
            pages_done_ahead=frozenset(keyword["pages_done_ahead"]),
            claim_kind=keyword["claim_kind"],
            retry_count=keyword["retry_count"],
        )

    @property
    def lease(self) -> dict:
        return {"keyword_id": self.id, "lease_token": self.lease_token}


class KeywordClient:
    """The keyword API's calls, each answered as JSON; 503s are retried after their Retry-After.

    Over urllib3, its connections kept alive: a claim costs the crawler about 0.6 ms of CPU, half
    of what httpx took, which counts where crawlers share a machine with the server. A call that
    cannot reach the API, or whose answer breaks off, raises ApiUnreachable."""

    def __init__(
        self,
        base_url: str,
        token: str | None = None,
        *,
        timeout: float = 30,
        retries: int = 5,
        sleep: Callable[[float], None] = time.sleep,
    ):
        self.base_url = base_url.rstrip("/")
        self.headers = {"Authorization": f"Bearer {token}"} if token else {}
        # the crawl's calls and its heartbeat thread's: two connections; nothing retried or followed here
        timeouts = urllib3.Timeout(connect=timeout, read=timeout)  # each, not the call's total
        self.http = urllib3.PoolManager(maxsize=2, timeout=timeouts, retries=False)
        self.retries = retries
        self.sleep = sleep

    def close(self) -> None:
        self.http.clear()

    def __enter__(self) -> "KeywordClient":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _call(self, method: str, path: str, retries: int | None = None, body: dict | None = None, params=None):
        retries = self.retries if retries is None else retries
        url = self.base_url + API + path + (f"?{urlencode(params, doseq=True)}" if params else "")
        headers, sent = self.headers, None
        if body is not None:  # UTF-8, compact; a NaN or Infinity, which JSON cannot carry, is a ValueError
            sent = json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")
            headers = {**headers, "Content-Type": "application/json"}
        for attempt in range(retries + 1):
            try:
                response = self.http.request(method, url, body=sent, headers=headers, redirect=False)
            except urllib3.exceptions.HTTPError as exc:
                raise ApiUnreachable(f"{method} {url}: {exc}") from exc
            if response.status != 503 or attempt == retries:
                break
            wait = retry_after(response.headers.get("retry-after"))
            logger.warning("farm api: the database is unavailable; asking again in %.0fs", wait)
            self.sleep(wait)
        try:
            answer = json.loads(response.data)
        except ValueError:  # not JSON: a proxy's page, say
            answer = response.data.decode("utf-8", "replace")
        if response.status in (404, 409):
            raise ClaimLost(response.status, answer)
        if response.status >= 400:
            raise ApiError(response.status, answer)
        return answer

    # --- the endpoints --------------------------------------------------------

    def available(
        self, source: str, limit: int = 1, reserve: bool = False, crawler_id: str | None = None, skip_partial=()
    ) -> dict:
        """What a claim would take (a GET), or with ``reserve`` a claim (a POST)."""
        params = {"source": source, "limit": limit, "skip_partial": sorted(skip_partial)}
        if crawler_id:
            params["crawler_id"] = crawler_id
        if reserve:
            return self._call("POST", "/keyword/available", body=params)
        return self._call("GET", "/keyword/available", params=params)

    def claim(self, source: str, crawler_id: str, limit: int = 1, skip_partial=()) -> tuple[list[Claim], dict]:
        """Up to ``limit`` keywords, now held; and the answer (its ``claimable`` says whether to ask again).
        Partial keywords in ``skip_partial`` (the ones this client gave back blocked) are left to others."""
        answer = self.available(source, limit, reserve=True, crawler_id=crawler_id, skip_partial=skip_partial)
        return [Claim.of(keyword) for keyword in answer["keywords"]], answer

    def page_done(self, claim: Claim, page: int, jobs_found: int, total_pages: int | None = None) -> dict:
        body = {**claim.lease, "page": page, "jobs_found": jobs_found}
        if total_pages is not None:
            body["total_pages"] = total_pages
        return self._call("POST", "/keyword/page-progress", body=body)

    def postings(
        self,
        claim: Claim,
        postings: list[dict],
        page: int | None = None,
        jobs_found: int | None = None,
        total_pages: int | None = None,
    ) -> dict:
        """Store ``postings``; with ``page``, record that page done in the same transaction."""
        body = {**claim.lease, "postings": postings}
        if page is not None:
            body["page"] = {"number": page, "jobs_found": jobs_found, "total_pages": total_pages}
        return self._call("POST", "/postings", body=body)

    def heartbeat(self, claim: Claim) -> dict:
        return self._call("POST", "/keyword/heartbeat", body=claim.lease)

    def end(self, claim: Claim, status: str, error_message: str | None = None, retries: int | None = None) -> dict:
        """completed, failed, partial or blocked; ``error_message`` cleaned and cut (clean_text)."""
        if error_message is not None:
            error_message = clean_text(error_message)
        return self._call(
            "POST",
            "/keyword/crawl-complete",
            retries=retries,
            body={**claim.lease, "status": status, "error_message": error_message},
        )

    def stats(self, source: str | None = None, day: str | None = None) -> list[dict]:
        params = {name: value for name, value in (("source", source), ("date", day)) if value}
        return self._call("GET", "/keyword/stats", params=params)


class Heartbeat:
    """Heartbeats of one claim every ``every`` seconds on a thread, while a page is being fetched."""

    def __init__(self, client: KeywordClient, claim: Claim, every: float):
        self.client, self.claim, self.every = client, claim, every
        self.lost = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"heartbeat-{claim.id}", daemon=True)

    def _run(self):
        while not self._stop.wait(self.every):
            try:
                self.client.heartbeat(self.claim)
            except ClaimLost:
                self.lost = True
                return
            except (ApiError, ApiUnreachable) as exc:  # the next page write says whether the lease is kept
                logger.warning("farm api: heartbeat of keyword %d failed: %s", self.claim.id, exc)

    def __enter__(self) -> "Heartbeat":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


# fetch(keyword, page) -> (postings, total_pages): the page's postings, and the keyword's pages as far
# as the site says now (page + 1 while it only says another page follows; None: this is the last),
# capped as the spiders cap them (FARM_<SITE>_MAX_PAGES)
Fetch = Callable[[Claim, int], tuple[list[dict], int | None]]


def crawl_keyword(client: KeywordClient, claim: Claim, fetch: Fetch, heartbeat_every: float = 60) -> str:
    """Fetch and report the claim's pages still to do, then end it; how it ended:
    completed, failed, blocked, or lost (the lease was taken back). On an error it cannot
    handle, the keyword is given back partial, then the error propagates."""
    try:
        return _crawl_keyword(client, claim, fetch, heartbeat_every)
    except BaseException as exc:  # the API refusing or gone, a posting it cannot send, an interrupt
        _give_back(client, claim, exc)
        raise


def _give_back(client: KeywordClient, claim: Claim, exc: BaseException) -> None:
    # one attempt: when the API itself is what failed, the error should not wait on it
    reason = f"the crawler stopped: {type(exc).__name__}" + (f": {exc}" if str(exc) else "")
    try:
        client.end(claim, "partial", reason, retries=0)
    except ClaimLost:  # ended, or taken back, already
        return
    except Exception as lost:
        logger.warning(
            "farm api: keyword %d (%s) could not be given back (%s); it is reaped after FARM_LEASE_TIMEOUT",
            claim.id,
            claim.job,
            lost,
        )
        return
    logger.warning("farm api: keyword %d (%s) given back partial: %s", claim.id, claim.job, clean_text(reason, 200))


def _crawl_keyword(client: KeywordClient, claim: Claim, fetch: Fetch, heartbeat_every: float) -> str:
    page, total = claim.last_completed_page + 1, claim.total_pages
    try:
        with Heartbeat(client, claim, heartbeat_every) as beat:
            while total is None or page <= total:
                if page in claim.pages_done_ahead:  # a previous holder finished it
                    page += 1
                    continue
                postings, told = fetch(claim, page)
                if beat.lost:  # taken back while the page was fetched: it is another crawler's now
                    raise ClaimLost(409, "the heartbeat found the lease taken back")
                # no total told: this was the last page; the server takes no total above its page cap
                total = page if told is None else min(told, PAGE_MAX)
                answer = client.postings(claim, postings, page=page, total_pages=total)
                if answer["page"]["completed"]:
                    return "completed"
                page += 1
        client.end(claim, "completed")
        return "completed"
    except ClaimLost as exc:
        logger.warning("farm api: keyword %d (%s) is no longer ours: %s", claim.id, claim.job, exc)
        return "lost"
    except Blocked as exc:
        return _end(client, claim, "blocked", str(exc) or "blocked by the site")
    except (ApiError, ApiUnreachable):
        raise  # the API itself: not the keyword's fault
    except Exception as exc:  # the keyword's own failure (a parse error, a bad page): failed, retried later
        logger.warning("farm api: keyword %d (%s) failed at page %d: %r", claim.id, claim.job, page, exc)
        return _end(client, claim, "failed", f"page {page}: {type(exc).__name__}: {exc}")


def _end(client: KeywordClient, claim: Claim, status: str, message: str) -> str:
    try:
        client.end(claim, status, message)
    except ClaimLost:
        return "lost"
    return status


def crawl(
    client: KeywordClient,
    source: str,
    fetch: Fetch,
    crawler_id: str,
    heartbeat_every: float = 60,
    max_keywords: int | None = None,
) -> Counter:
    """Claim and crawl keywords of ``source`` one at a time until none is left to claim now;
    how many ended each way. A keyword the site blocked is left to other crawlers for this run."""
    outcomes: Counter[str] = Counter()
    blocked: set[int] = set()
    while max_keywords is None or outcomes.total() < max_keywords:
        claims, answer = client.claim(source, crawler_id, skip_partial=blocked)
        if not claims:
            if answer["claimable"]:  # others held them locked for a moment: ask again
                time.sleep(0.1)
                continue
            break
        for claim in claims:
            outcome = crawl_keyword(client, claim, fetch, heartbeat_every)
            outcomes[outcome] += 1
            if outcome == "blocked":
                blocked.add(claim.id)
            logger.info("farm api: keyword %d (%s %s %s) %s", claim.id, claim.source, claim.city, claim.job, outcome)
    return outcomes
