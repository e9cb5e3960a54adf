"""The columns of ``job_posting``, listed once, with what each may hold.

The item (farm.items.JobPosting), the model (JobPostingRow), the migration that
creates the table (0002), the upsert (farm.state.postings) and the posting
normalisation (farm.state.normalise) all read this list. A change to a column's
type or size here is a change to the table: it needs a new migration that alters
the column (0002 would create the new size on an empty database; the alteration
makes the older ones alike).
"""

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.types import TypeEngine

KEY = "key"  # text that identifies the posting: never cut (two postings would merge)
TEXT = "text"  # text of at most `length` characters (utf8mb4 VARCHAR counts characters)
JSON = "json"  # any JSON value
TIME = "time"  # an aware datetime, stored as naive UTC
REF = "ref"  # a row id of another table (a signed 64-bit integer)


@dataclass(frozen=True)
class Field:
    name: str
    kind: str
    length: int | None = None  # characters, for KEY and TEXT
    updated: bool = True  # a later sighting of the posting overwrites it
    by_store: bool = False  # the store sets it; a posting does not carry it


# In the table's column order (after its own ``id``).
COLUMNS = (
    Field("source", KEY, 16, updated=False),  # a site's name (farm.sites): boss, qcwy, zhilian or another
    Field("job_id", KEY, 64, updated=False),  # the site's own id: encryptJobId, jobId, number
    Field("title", TEXT, 255),
    Field("salary", TEXT, 64),
    Field("company", TEXT, 255),
    Field("city", TEXT, 64),
    Field("area", TEXT, 128),
    Field("experience", TEXT, 64),
    Field("degree", TEXT, 64),
    Field("tags", JSON),  # list of str
    Field("published_at", TIME),  # None where the site gives none
    Field("url", TEXT, 512),
    Field("keyword_id", REF, updated=False),  # the keyword row that found it first
    Field("first_seen_at", TIME, updated=False, by_store=True),
    Field("last_seen_at", TIME, by_store=True),
    Field("raw", JSON),  # the site's item, as parsed from JSON
)
BY_NAME = {field.name: field for field in COLUMNS}
# what a posting carries: JobPosting's fields
POSTING_FIELDS = tuple(field.name for field in COLUMNS if not field.by_store)
# what the store sets: when the posting was first and last seen
STORE_FIELDS = tuple(field.name for field in COLUMNS if field.by_store)
# what a later sighting overwrites; first_seen_at and keyword_id stay as first found
UPDATED = tuple(field.name for field in COLUMNS if field.updated)
KEYS = tuple(field for field in COLUMNS if field.kind == KEY)
TEXTS = tuple(field for field in COLUMNS if field.kind == TEXT)
JSONS = tuple(field for field in COLUMNS if field.kind == JSON)

# Publish times outside this range are a site's "no date" (0001-01-01, 9999-12-31) or
# garbage: stored as NULL. Job sites did not exist before 1990; both ends convert to
# UTC and back without overflow, whatever the offset.
TIME_MIN = datetime(1990, 1, 1, tzinfo=UTC)
TIME_MAX = datetime(2100, 1, 1, tzinfo=UTC)  # exclusive
# MariaDB's JSON columns check JSON_VALID, which refuses 32 levels of nesting and more
# (orjson refuses 255): deeper JSON is cut to this many levels.
JSON_DEPTH_MAX = 31
# the integers a REF holds (BIGINT)
REF_MIN, REF_MAX = -(2**63), 2**63 - 1


# The salary as numbers (farm.salary), read by the store from the posting's ``salary`` text
# as it writes the posting; added by migration 0006, after the table's other columns.
SALARY_COLUMNS: tuple[tuple[str, Callable[[], TypeEngine[Any]]], ...] = (
    ("salary_min", sa.Integer),  # CNY a month, the low end; None for "below N" or no figure
    ("salary_max", sa.Integer),  # CNY a month, the high end; None for "N and above" or no figure
    ("salary_months", sa.SmallInteger),  # months paid a year, where the text says (·13薪)
    ("salary_unit", lambda: sa.String(8)),  # the period the text gave: month | day | hour | year
)


def salary_columns() -> list[sa.Column[Any]]:
    return [sa.Column(name, kind(), nullable=True) for name, kind in SALARY_COLUMNS]


def posting_columns(time_type: Callable[[], TypeEngine[datetime]]) -> list[sa.Column[Any]]:
    """The table's columns but its ``id``, times of ``time_type`` (the model's UtcDateTime,
    the migration's DateTime)."""
    return [
        sa.Column(field.name, _type(field, time_type), nullable=not (field.kind == KEY or field.by_store))
        for field in COLUMNS
    ]


def _type(field: Field, time_type: Callable[[], TypeEngine[datetime]]) -> TypeEngine[Any]:
    if field.kind in (KEY, TEXT):
        return sa.String(field.length)
    if field.kind == JSON:
        return sa.JSON()
    if field.kind == TIME:
        return time_type()
    return sa.BigInteger()
