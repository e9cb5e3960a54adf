"""The keyword state table and the postings table.

The tables are created and changed only by the Alembic migrations in
``farm/state/migrations``; these models describe the head revision.

On MySQL/MariaDB the tables are ``utf8mb4_bin``, but the columns that identify a row
(the unique keys' and ``keyword.crawler_id``) compare without padding (``utf8mb4_nopad_bin``,
``utf8mb4_0900_bin`` on MySQL 8: migration 0005, on new databases too), as SQLite compares:
``'a'`` and ``'a '`` are two job ids everywhere.
"""

from datetime import UTC, date, datetime
from typing import TYPE_CHECKING, ClassVar

from sqlalchemy import (
    BigInteger,
    Column,
    Date,
    DateTime,
    Float,
    Index,
    Integer,
    String,
    Table,
    Text,
    UniqueConstraint,
)
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.types import TypeDecorator

from farm.state.posting_fields import posting_columns, salary_columns

STATUSES = ("idle", "crawling", "completed", "failed", "partial")

# Field limits, shared by the models and by input validation.
CITY_MAX = 64
JOB_MAX = 128
# characters of the comma-separated pages done beyond the watermark
PAGES_AHEAD_MAX = 1024
# the largest count keyword.site_total holds (a 32-bit INTEGER everywhere): a site's larger claim is cut to it
SITE_TOTAL_MAX = 2**31 - 1


def site_count(value: int | None) -> int | None:
    """A site's count of a keyword's postings as keyword.site_total holds it: None for none or a
    negative one, cut to SITE_TOTAL_MAX (a hostile or broken answer never fails the write)."""
    if value is None or value < 0:
        return None
    return min(value, SITE_TOTAL_MAX)


def max_pages_that_fit(limit: int = PAGES_AHEAD_MAX) -> int:
    """The largest page cap whose pages done ahead of the watermark (2..N, comma-separated) fit the column."""
    pages, length = 1, -1
    while length + 1 + len(str(pages + 1)) <= limit:
        pages += 1
        length += 1 + len(str(pages))
    return pages


# SQLite only auto-increments an INTEGER PRIMARY KEY.
Id = BigInteger().with_variant(Integer(), "sqlite")


class UtcDateTime(TypeDecorator[datetime]):
    """Aware datetimes in, aware UTC datetimes out; stored as naive UTC everywhere."""

    impl = DateTime
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError(f"naive datetime {value!r}: farm stores aware times only")
        return value.astimezone(UTC).replace(tzinfo=None)

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC)


class Base(DeclarativeBase):
    if TYPE_CHECKING:
        # every model maps one Table (DeclarativeBase types it as any FromClause): insert() and
        # update() take it
        __table__: ClassVar[Table]


class Keyword(Base):
    __tablename__ = "keyword"
    __table_args__ = (
        UniqueConstraint("source", "city", "job", name="uq_keyword_source_city_job"),
        # fresh claims: oldest last_requested_date first, in index order (no sort)
        Index("ix_keyword_fresh", "source", "last_requested_date", "id"),
        # partial / failed claims of today, and stats by status
        Index("ix_keyword_status", "source", "crawl_status", "last_requested_date", "id"),
        # the reaper: crawling rows by heartbeat
        Index("ix_keyword_heartbeat", "crawl_status", "heartbeat_at"),
        {"mysql_charset": "utf8mb4", "mysql_collate": "utf8mb4_bin", "mysql_engine": "InnoDB"},
    )

    id: Mapped[int] = mapped_column(Id, primary_key=True, autoincrement=True)
    source: Mapped[str] = mapped_column(String(16))
    city: Mapped[str] = mapped_column(String(CITY_MAX))
    job: Mapped[str] = mapped_column(String(JOB_MAX))
    last_requested_date: Mapped[date | None] = mapped_column(Date)
    last_requested_at: Mapped[datetime | None] = mapped_column(UtcDateTime)
    crawl_status: Mapped[str] = mapped_column(String(16), default="idle", server_default="idle")
    last_completed_page: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    total_pages: Mapped[int | None] = mapped_column(Integer)
    jobs_found: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    crawl_started_at: Mapped[datetime | None] = mapped_column(UtcDateTime)
    crawler_id: Mapped[str | None] = mapped_column(String(128))
    error_message: Mapped[str | None] = mapped_column(Text)
    retry_count: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    created_at: Mapped[datetime] = mapped_column(UtcDateTime)
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime)
    # a new random one at every claim (farm.state.lease.new_lease_token); every write names it (fencing)
    lease_token: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")
    heartbeat_at: Mapped[datetime | None] = mapped_column(UtcDateTime)
    # pages done beyond the watermark, comma-separated, so out-of-order pages count once
    pages_ahead: Mapped[str] = mapped_column(String(PAGES_AHEAD_MAX), default="", server_default="")
    # a failed row is not claimed again before this time (FARM_RETRY_DELAY after it failed)
    retry_at: Mapped[datetime | None] = mapped_column(UtcDateTime)
    # claims of today that ended in a site block (FARM_MAX_BLOCKED_CLAIMS ends the day as failed)
    blocked_claims: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    # postings the site says the keyword holds, past any page cap (the latest a page told); NULL until told
    site_total: Mapped[int | None] = mapped_column(Integer)


class JobPostingRow(Base):
    # its columns are farm.state.posting_fields.COLUMNS, the list the whole posting path reads
    __table__ = Table(
        "job_posting",
        Base.metadata,
        Column("id", Id, primary_key=True, autoincrement=True),
        *posting_columns(UtcDateTime),
        *salary_columns(),
        UniqueConstraint("source", "job_id", name="uq_job_posting_source_job_id"),
        Index("ix_job_posting_keyword", "keyword_id"),
        # the report's queries read these alone, never the table (farm.report.queries, migration 0009)
        Index(
            "ix_job_posting_seen",
            "last_seen_at",
            "first_seen_at",
            "source",
            "city",
            "keyword_id",
            "salary_unit",
            "salary_min",
            "salary_max",
            "salary_months",
            "salary",
        ),
        Index("ix_job_posting_first_seen", "first_seen_at", "source", "company"),
        mysql_charset="utf8mb4",
        mysql_collate="utf8mb4_bin",
        mysql_engine="InnoDB",
    )


class CrawlRun(Base):
    """One crawl of one site, local or Redis (farm.extensions.runs): a row at its start, filled at its end.
    A row whose ``ended_at`` stays empty is a crawl that never finished (killed, or the machine lost)."""

    __tablename__ = "crawl_run"
    __table_args__ = (
        Index("ix_crawl_run_source_started", "source", "started_at"),
        {"mysql_charset": "utf8mb4", "mysql_collate": "utf8mb4_bin", "mysql_engine": "InnoDB"},
    )

    id: Mapped[int] = mapped_column(Id, primary_key=True, autoincrement=True)
    source: Mapped[str] = mapped_column(String(16))
    crawler_id: Mapped[str] = mapped_column(String(128))
    machine: Mapped[str] = mapped_column(String(128))
    started_at: Mapped[datetime] = mapped_column(UtcDateTime)
    ended_at: Mapped[datetime | None] = mapped_column(UtcDateTime)
    # "running" until the end; then Scrapy's finish reason (finished, shutdown, farm_<reason>…)
    status: Mapped[str] = mapped_column(String(64), default="running", server_default="running")
    keywords_claimed: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    keywords_ended: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    pages: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    postings: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    # JSON: refusals by shape ({"captcha": 3, …}), postings with each field ({"salary": 97, …}), farm's stats
    refusals: Mapped[str] = mapped_column(Text, default="{}")
    coverage: Mapped[str] = mapped_column(Text, default="{}")
    stats: Mapped[str] = mapped_column(Text, default="{}")


class KeywordDay(Base):
    """What the keyword table said of a keyword at the end of a day's crawls of its site: the history
    the day's checks compare with (a keyword's row holds only its latest day)."""

    __tablename__ = "keyword_day"
    __table_args__ = (
        UniqueConstraint("keyword_id", "day", name="uq_keyword_day_keyword_day"),
        Index("ix_keyword_day_day_source", "day", "source"),
        {"mysql_charset": "utf8mb4", "mysql_collate": "utf8mb4_bin", "mysql_engine": "InnoDB"},
    )

    id: Mapped[int] = mapped_column(Id, primary_key=True, autoincrement=True)
    keyword_id: Mapped[int] = mapped_column(BigInteger)
    day: Mapped[date] = mapped_column(Date)
    source: Mapped[str] = mapped_column(String(16))
    city: Mapped[str] = mapped_column(String(CITY_MAX))
    job: Mapped[str] = mapped_column(String(JOB_MAX))
    crawl_status: Mapped[str] = mapped_column(String(16))
    jobs_found: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    last_completed_page: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    total_pages: Mapped[int | None] = mapped_column(Integer)


class OpeningRow(Base):
    """An opening (farm.openings.cluster), as the clustering compares the postings that come after: the key
    values of the posting that opened it. Written by farm.openings.stored; ids are the clustering's own,
    1 upward, in the order the openings were opened."""

    __tablename__ = "opening"
    __table_args__ = ({"mysql_charset": "utf8mb4", "mysql_collate": "utf8mb4_bin", "mysql_engine": "InnoDB"},)

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    city: Mapped[str] = mapped_column(String(CITY_MAX))
    company_key: Mapped[str] = mapped_column(String(255))
    title_key: Mapped[str] = mapped_column(String(255))
    salary_min: Mapped[int | None] = mapped_column(Integer)
    salary_max: Mapped[int | None] = mapped_column(Integer)
    district: Mapped[str] = mapped_column(String(128))  # the place: farm.openings.details.place_of
    degree: Mapped[str] = mapped_column(String(16))
    experience: Mapped[str] = mapped_column(String(16), default="", server_default="")


class OpeningKey(Base):
    """An opening's blocking keys (farm.openings.cluster.blocking_keys), a row each, with the opening's company
    key and the number of its title's bigrams: an update reads the openings its new postings' keys name
    through the primary key, and drops in it those of a company no posting's is, starts or is started by, or
    of a title too long or too short to be alike enough to one (farm.openings.stored)."""

    __tablename__ = "opening_key"
    __table_args__ = ({"mysql_charset": "utf8mb4", "mysql_collate": "utf8mb4_bin", "mysql_engine": "InnoDB"},)

    block_key: Mapped[str] = mapped_column(String(96), primary_key=True)
    company_key: Mapped[str] = mapped_column(String(255), primary_key=True)
    title_grams: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    opening_id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)


class OpeningWaiting(Base):
    """A posting in no opening yet: written by the database as the posting is inserted into job_posting (the
    trigger ``job_posting_waits``, migration 0016), deleted by `farm openings update` in the transaction
    that puts it in an opening, so that an update reads its new postings and no stored one."""

    __tablename__ = "opening_waiting"
    __table_args__ = ({"mysql_charset": "utf8mb4", "mysql_collate": "utf8mb4_bin", "mysql_engine": "InnoDB"},)

    posting_id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)  # job_posting.id


class CompanyPair(Base):
    """A brand's company key and the legal name's key it is paired with (farm.openings.names), learnt from the
    postings that carry both (51job's), the first learnt kept: what an update knows of every posting's pairs
    without reading them."""

    __tablename__ = "company_pair"
    __table_args__ = ({"mysql_charset": "utf8mb4", "mysql_collate": "utf8mb4_bin", "mysql_engine": "InnoDB"},)

    brand_key: Mapped[str] = mapped_column(String(255), primary_key=True)
    legal_key: Mapped[str] = mapped_column(String(255))


class OpeningWeight(Base):
    """The evidence's weight of a field's outcome (the prior as field 'prior', outcome ''), learnt from the
    postings by farm.openings.estimate from ``pairs`` unlabelled pairs: what every update weighs with until a
    rebuild learns them again."""

    __tablename__ = "opening_weight"
    __table_args__ = ({"mysql_charset": "utf8mb4", "mysql_collate": "utf8mb4_bin", "mysql_engine": "InnoDB"},)

    field: Mapped[str] = mapped_column(String(16), primary_key=True)
    outcome: Mapped[str] = mapped_column(String(16), primary_key=True)
    weight: Mapped[float] = mapped_column(Float)
    pairs: Mapped[int] = mapped_column(Integer)


class OpeningPosting(Base):
    """Each posting's opening, and why it is there (farm.openings.cluster.Why as JSON). A posting's first
    and last seen are job_posting's; an opening's are its postings' earliest and latest."""

    __tablename__ = "opening_posting"
    __table_args__ = (
        Index("ix_opening_posting_opening", "opening_id"),
        {"mysql_charset": "utf8mb4", "mysql_collate": "utf8mb4_bin", "mysql_engine": "InnoDB"},
    )

    posting_id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)  # job_posting.id
    opening_id: Mapped[int] = mapped_column(BigInteger)
    why: Mapped[str] = mapped_column(Text)


class PostingDay(Base):
    """A posting seen on a day (FARM_TIMEZONE): what farm.runs.record.keep_day copies at the end of each crawl
    of its site, beside keyword_day, so that a posting gone and back again is told from one seen throughout."""

    __tablename__ = "posting_day"
    __table_args__ = (
        Index("ix_posting_day_day_source", "day", "source"),
        {"mysql_charset": "utf8mb4", "mysql_collate": "utf8mb4_bin", "mysql_engine": "InnoDB"},
    )

    posting_id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)  # job_posting.id
    day: Mapped[date] = mapped_column(Date, primary_key=True)
    source: Mapped[str] = mapped_column(String(16))


class IdentityPaceRow(Base):
    """The pace an identity learned at a site (farm.crawl.identities): a proxy (its id, a hash of its URL:
    no credentials) or this machine's own address (``direct``). The next crawl of the site starts from it."""

    __tablename__ = "identity_pace"
    __table_args__ = ({"mysql_charset": "utf8mb4", "mysql_collate": "utf8mb4_bin", "mysql_engine": "InnoDB"},)

    source: Mapped[str] = mapped_column(String(16), primary_key=True)
    identity: Mapped[str] = mapped_column(String(64), primary_key=True)
    pace: Mapped[float] = mapped_column(Float)  # requests per second
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime)
