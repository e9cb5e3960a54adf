"""What the keyword API takes and answers; FastAPI builds the OpenAPI document from these.

Every bound here keeps a request the database would refuse from reaching it, so a
client's mistake is a 422 naming the field and never a 500: numbers fit their
columns, strings their lengths (and are valid UTF-8), pages fit keyword.pages_ahead.
Numbers are strict (no "5" for 5) and unknown fields are refused, so a
misspelt field is an error and not a silent default.
"""

import math
import re
from datetime import date, datetime
from typing import Annotated, Literal

import orjson
from pydantic import (
    AfterValidator,
    AwareDatetime,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    Strict,
    StrictBool,
    StrictFloat,
)
from pydantic_core import PydanticCustomError
from typing_extensions import TypeAliasType

from farm.sites import known_sources
from farm.state.lease import TOKEN_MAX
from farm.state.models import JobPostingRow, Keyword, max_pages_that_fit


def _known_source(value: str) -> str:
    sources = known_sources()  # farm's three sites and the project's own (farm.sites)
    if value not in sources:
        expected = " or ".join([", ".join(map(repr, sources[:-1])), repr(sources[-1])])
        raise PydanticCustomError("literal_error", "Input should be {expected}", {"expected": expected})
    return value


class _SourceEnum:
    """The OpenAPI document lists the sources known when it is built (after ``farm api`` loaded the
    project's own sites), as an enum."""

    def __get_pydantic_json_schema__(self, core_schema, handler):
        return {"type": "string", "enum": list(known_sources())}


# a keyword's source: one of farm.sites' registry, which `farm api` fills with the project's own sites
Source = Annotated[str, AfterValidator(_known_source), _SourceEnum()]
ClaimKind = Literal["partial", "failed", "fresh"]

LIMIT_MAX = 100  # keywords one call may claim or list
SKIP_MAX = 1_000  # partial keywords one claim may be asked to leave
PAGE_MAX = max_pages_that_fit()  # pages done out of order must fit keyword.pages_ahead
JOBS_MAX = 10_000  # postings one page may report (the sites list 20 or 30)
POSTINGS_MAX = 1_000  # postings in one POST /api/v1/postings
ERROR_MESSAGE_MAX = 10_000  # characters taken; the store keeps the first 2,000
ID_MAX = 2**53 - 1  # keyword.id: a BIGINT, but kept to what every JSON client reads exactly
CRAWLER_ID_MAX = Keyword.__table__.c.crawler_id.type.length
ISO_DAY = re.compile(r"\d{4}-\d{2}-\d{2}", re.ASCII)
# published_at's years: in UTC too (an offset moves a time by less than a day), a DATETIME of every
# database farm runs on holds them
PUBLISHED_PATTERN = r"^(19[7-9][0-9]|2[0-9]{3})-"


def _utf8(value: str) -> str:
    # a lone surrogate (JSON "\ud800") cannot be stored, nor written to a log
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("must be valid Unicode text (no lone surrogates)") from None
    return value


def _storable_json(value):
    # what orjson cannot write (nesting past its depth limit) the pipeline could not store either
    try:
        orjson.dumps(value)
    except orjson.JSONEncodeError as exc:
        raise ValueError(f"cannot be stored as JSON: {exc}") from None
    return value


def _published_year(value):
    # said in the document as a pattern (JSON Schema has no bounds for times), and checked as one
    if not isinstance(value, str) or not re.match(PUBLISHED_PATTERN, value):
        raise ValueError("must be a time of the years 1970 to 2999 as text, e.g. 2025-03-10T09:30:00+08:00")
    return value


def _iso_date(value):
    # pydantic would also take seconds since 1970 ("0") and more: a day is YYYY-MM-DD only
    if isinstance(value, str):
        try:
            if not ISO_DAY.fullmatch(value):
                raise ValueError
            return date.fromisoformat(value)
        except ValueError:
            raise ValueError(f"{value!r} is not a day: use YYYY-MM-DD, e.g. 2025-03-10") from None
    return value


NOT_FINITE = "must be a finite number: JSON has no NaN or Infinity, and a number past 1e308 is one"


def _json_int(value):
    # JSON Schema's integer: 3 and 3.0, but neither "3" nor true
    if isinstance(value, float):
        if not math.isfinite(value):  # Python's JSON reader takes NaN, Infinity and 1e400 (read as inf)
            raise ValueError(NOT_FINITE)
        if value.is_integer():
            return int(value)
    return value


def _finite_numbers(value):
    # NaN and Infinity nested anywhere (orjson would store them as null): walked without recursion
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            raise ValueError(f"holds a number that {NOT_FINITE}")
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return value


def _int(least: int, most: int, description: str | None = None):
    # the bounds before the validator, so that the OpenAPI document shows them as minimum and maximum
    return Annotated[int, Strict(), Field(ge=least, le=most, description=description), BeforeValidator(_json_int)]


Text = Annotated[str, AfterValidator(_utf8)]
# JSON as orjson writes it (the pipeline's encoder): integers of 64 bits; a longer one is kept as a
# double, as most JSON readers would read it, where orjson would refuse the whole posting
JsonValue = TypeAliasType(
    "JsonValue",
    None
    | StrictBool
    | Annotated[int, Strict(), Field(ge=-(2**63), le=2**64 - 1)]
    | StrictFloat
    | Text
    | list["JsonValue"]
    | dict[Text, "JsonValue"],
)
Day = Annotated[date, BeforeValidator(_iso_date)]
KeywordId = _int(1, ID_MAX, "The keyword's id, as the claim gave it.")
LeaseToken = _int(1, TOKEN_MAX, "The lease token the claim gave (random).")
Page = _int(1, PAGE_MAX, "A page number, 1-based.")
TotalPages = _int(1, PAGE_MAX, "How many pages the keyword has.")
JobsFound = _int(0, JOBS_MAX, "Postings the page listed.")
CrawlerId = Annotated[Text, Field(min_length=1, max_length=CRAWLER_ID_MAX)]


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


# --- requests -------------------------------------------------------------------


class ClaimIn(_Body):
    """A claim's parameters, in a JSON body (read strictly, as every body) or in the query (from text)."""

    source: Source
    limit: Annotated[int, Field(ge=1, le=LIMIT_MAX), BeforeValidator(_json_int)] = Field(
        1, description="At most this many keywords."
    )
    crawler_id: CrawlerId | None = Field(None, description="Who claims. [default: api@<the client's address>]")
    skip_partial: list[Annotated[int, Field(ge=1, le=ID_MAX), BeforeValidator(_json_int)]] = Field(
        [],
        max_length=SKIP_MAX,
        description="Partial keywords to leave to others: the ones this client gave back "
        "blocked, so that it does not claim them straight back (as a spider does).",
    )


class LeaseIn(_Body):
    keyword_id: KeywordId
    lease_token: LeaseToken


class SourceChecked(LeaseIn):
    source: Source | None = Field(
        None,
        description="The keyword's source, as the claim gave it: when sent, a write about a keyword of "
        "another source is refused (409).",
    )


class PageProgressIn(SourceChecked):
    page: Page
    jobs_found: JobsFound
    total_pages: TotalPages | None = None


class CrawlCompleteIn(SourceChecked):
    status: Literal["completed", "failed", "partial", "blocked"] = Field(
        description="completed: nothing left to fetch today; failed: the keyword's own fault, retried "
        "after FARM_RETRY_DELAY while FARM_MAX_RETRIES allow; partial: given back unfinished, the next "
        "claim resumes it; blocked: partial because the site blocked the client, which counts against "
        "FARM_MAX_BLOCKED_CLAIMS (after that the keyword ends failed for the day)."
    )
    error_message: Annotated[Text, Field(max_length=ERROR_MESSAGE_MAX)] | None = None


class HeartbeatIn(LeaseIn):
    pass


def _column_text(name: str, required: bool = False):
    length = JobPostingRow.__table__.c[name].type.length
    field = Annotated[Text, Field(min_length=1 if required else 0, max_length=length)]
    return field if required else field | None


class PostingIn(_Body):
    """One posting, with the fields of JobPosting; its source and keyword_id are the lease's keyword's."""

    job_id: _column_text("job_id", required=True)
    title: _column_text("title") = None
    salary: _column_text("salary") = None
    company: _column_text("company") = None
    city: _column_text("city") = None
    area: _column_text("area") = None
    experience: _column_text("experience") = None
    degree: _column_text("degree") = None
    tags: list[Text] | None = None
    published_at: Annotated[AwareDatetime, BeforeValidator(_published_year)] | None = Field(
        None,
        description="With its UTC offset; null where the site gives none.",
        json_schema_extra={"pattern": PUBLISHED_PATTERN},
    )
    url: _column_text("url") = None
    raw: Annotated[dict[Text, JsonValue], AfterValidator(_storable_json), AfterValidator(_finite_numbers)] | None = (
        Field(None, description="The site's item, as JSON (an integer past 64 bits is stored as a double).")
    )


class PageDone(_Body):
    number: Page
    jobs_found: JobsFound | None = Field(None, description="Postings the page listed. [default: the postings sent]")
    total_pages: TotalPages | None = None


class PostingsIn(LeaseIn):
    postings: list[PostingIn] = Field(max_length=POSTINGS_MAX)
    page: PageDone | None = Field(
        None,
        description="The page these postings are: recorded done in the same transaction, so that "
        "it never counts done without its postings.",
    )


# --- answers --------------------------------------------------------------------


class KeywordOut(BaseModel):
    id: int
    source: Source
    city: str
    job: str
    crawl_status: str = Field(description="crawling once reserved; in a listing, the row's status now")
    claim_kind: ClaimKind = Field(description="Why it is claimable: partial (resumed), failed (a retry) or fresh.")
    last_completed_page: int = Field(description="The watermark: pages 1..this are done; resume at the next.")
    total_pages: int | None
    pages_done_ahead: list[int] = Field(description="Pages beyond the watermark already done: do not fetch them.")
    retry_count: int
    lease_token: int | None = Field(description="Name it in every write about this keyword; null in a listing.")


class AvailableOut(BaseModel):
    source: Source
    reserved: bool
    keywords: list[KeywordOut]
    claimable: int | None = Field(
        description="Keywords a claim could take now. Given for a listing and for a claim that got nothing: "
        "0 there (and no next_retry_at) means nothing is left for today; more than 0 means others held "
        "them locked for a moment, so ask again."
    )
    next_retry_at: datetime | None = Field(description="When the next failed keyword comes due for a retry.")


class PageProgressOut(BaseModel):
    keyword_id: int
    page: int
    counted: bool = Field(description="False when the page was already recorded (its jobs count once).")
    last_completed_page: int
    total_pages: int | None
    completed: bool = Field(description="True when this page brought the watermark to total_pages.")
    crawl_status: str


class CrawlCompleteOut(BaseModel):
    keyword_id: int
    crawl_status: str = Field(description="What was written: completed, failed or partial.")


class HeartbeatOut(BaseModel):
    keyword_id: int
    crawl_status: str
    lease_timeout: int = Field(description="Seconds without a write or heartbeat before the lease is taken back.")


class Rejected(BaseModel):
    job_id: str
    reason: str


class PostingsOut(BaseModel):
    keyword_id: int
    postings: int = Field(description="Postings written (a job_id sent twice counts once).")
    rejected: list[Rejected]
    page: PageProgressOut | None


class StatusCounts(BaseModel):
    crawling: int
    completed: int
    failed: int
    partial: int


class StatsOut(BaseModel):
    date: date
    source: Source
    total: int
    used: int
    unused: int
    crawl_status: StatusCounts
    jobs_found: int
    pages: int = Field(description="Pages recorded done on that day.")
    eta: datetime | None = Field(
        description="When today's keywords should all have ended, at the day's rate of ended keywords; "
        "null for another day, before any keyword ended, or when none is left."
    )


class KeywordState(BaseModel):
    """The keyword as it is now, for a write that was refused."""

    id: int
    source: Source
    city: str
    job: str
    crawl_status: str
    crawler_id: str | None = Field(description="Who holds or last held it.")
    last_requested_date: date | None
    last_completed_page: int
    total_pages: int | None
    jobs_found: int
    heartbeat_at: datetime | None
    lease_current: bool = Field(
        description="Whether the token sent is still the keyword's: true with a status other than "
        "crawling means this lease's keyword ended (or was reaped); false, that it was claimed again."
    )


class Conflict(BaseModel):
    detail: str
    keyword: KeywordState


class Problem(BaseModel):
    detail: str
