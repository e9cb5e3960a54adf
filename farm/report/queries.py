"""The report's figures: each is the answer of one SQL query (SQLAlchemy Core), the same
on SQLite, MariaDB and PostgreSQL, over the ``keyword`` and ``job_posting`` tables.

Each is an aggregate the database computes over an index that holds every column it reads
(migration 0009): ``ix_job_posting_seen`` leads with last_seen_at, for the postings seen
or gone on a day; ``ix_job_posting_first_seen`` with first_seen_at, for the new ones. The
postings themselves never leave the database, nor are they sorted: at a million postings
every query ends well within FARM_DB_TIMEOUT (docs/benchmarks.md).

What the words mean, for a day D in FARM_TIMEZONE:

- **the day's crawl**: the keyword rows requested on D (``last_requested_date``),
  as they stand: a row holds its last day only, so a day long past shows only
  the keywords not crawled since;
- **seen** on D: a posting listed over D, first seen before D's end and last
  seen at or after its start (for today: seen by today's crawl);
- **new** on D: first seen on D;
- **gone** on D, after N days: last seen on day D−N, and not since;
- **salary**: the monthly midpoint ((salary_min + salary_max) / 2, CNY) of the
  postings seen on D that give both ends, by the job of the keyword that first
  found them and the posting's city; quartiles by linear interpolation between
  the two nearest ranks (``statistics.quantiles(method="inclusive")``).
"""

from datetime import UTC, date, timedelta
from decimal import Decimal
from zoneinfo import ZoneInfo

from sqlalchemy import and_, case, func, or_, select
from sqlalchemy.engine import Connection

from farm.report import salarypay
from farm.report.quartiles import quartiles
from farm.salary.monthly import Conversion
from farm.state.clock import day_span, last_days, start_of
from farm.state.models import JobPostingRow, Keyword

K = Keyword.__table__.c
P = JobPostingRow.__table__.c
POSTING = JobPostingRow.__table__
KEYWORD = Keyword.__table__
FAILURE_GROUPS = 12  # distinct reasons shown
CITIES = 30  # (site, city) rows shown
SALARY_GROUPS = 30  # (job, city) rows shown
COMPANIES = 15


def _rows(result) -> list[dict]:
    """The rows as dicts; MariaDB's DECIMAL sums as the ints (or floats) they are."""
    return [{key: _number(value) for key, value in row._mapping.items()} for row in result]


def _number(value):
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    return value


def _sum(condition):
    return func.coalesce(func.sum(case((condition, 1), else_=0)), 0)


def crawl_by_site(conn: Connection, day: date) -> list[dict]:
    """Per site: the day's keywords by state, pages done, blocked claims, postings found, and
    the first claim and last write the rows hold (their difference is the crawl's duration)."""
    status = K.crawl_status
    query = (
        select(
            K.source,
            func.count().label("keywords"),
            _sum(status == "completed").label("completed"),
            _sum(status == "failed").label("failed"),
            _sum(status == "partial").label("partial"),
            _sum(status == "crawling").label("crawling"),
            func.coalesce(func.sum(K.last_completed_page), 0).label("pages"),
            func.coalesce(func.sum(K.blocked_claims), 0).label("blocks"),
            func.coalesce(func.sum(K.jobs_found), 0).label("jobs_found"),
            func.min(K.last_requested_at).label("started"),
            func.max(K.updated_at).label("ended"),
        )
        .where(K.last_requested_date == day)
        .group_by(K.source)
        .order_by(K.source)
    )
    return _rows(conn.execute(query))


def not_crawled(conn: Connection, day: date) -> list[str]:
    """The sites that hold keywords none of which was requested on ``day``, by name."""
    crawled = select(K.source).where(K.last_requested_date == day).distinct()
    query = select(K.source).where(K.source.not_in(crawled)).distinct().order_by(K.source)
    return list(conn.execute(query).scalars())


def first_seen_day(conn: Connection, tz: ZoneInfo):
    """The day (in ``tz``) the first posting stored was first seen: no crawl kept any before it; or None."""
    first = conn.execute(select(func.min(P.first_seen_at))).scalar()
    if first is None:
        return None
    if first.tzinfo is None:  # func.min returns the raw column
        first = first.replace(tzinfo=UTC)
    return first.astimezone(tz).date()


def failures(conn: Connection, day: date) -> list[dict]:
    """The day's failed keywords grouped by site and reason, the commonest first."""
    reason = func.coalesce(K.error_message, "")
    query = (
        select(K.source, reason.label("reason"), func.count().label("keywords"))
        .where(K.last_requested_date == day, K.crawl_status == "failed")
        .group_by(K.source, reason)
        .order_by(func.count().desc(), K.source, reason)
        .limit(FAILURE_GROUPS)
    )
    return _rows(conn.execute(query))


def _posting_figures(day: date, tz: ZoneInfo, gone_after: int):
    span = day_span(day, tz)
    gone = day_span(day - timedelta(days=gone_after), tz)
    seen = and_(P.first_seen_at < span.end, P.last_seen_at >= span.start)
    new = and_(P.first_seen_at >= span.start, P.first_seen_at < span.end)
    went = and_(P.last_seen_at >= gone.start, P.last_seen_at < gone.end)
    figures = (_sum(seen).label("seen"), _sum(new).label("new"), _sum(went).label("gone"))
    # new postings are seen too; both last seen since the gone day began: the index's range
    relevant = and_(P.last_seen_at >= gone.start, or_(seen, went))
    return figures, relevant


def postings_by_site(conn: Connection, day: date, tz: ZoneInfo, gone_after: int) -> list[dict]:
    figures, relevant = _posting_figures(day, tz, gone_after)
    query = select(P.source, *figures).where(relevant).group_by(P.source).order_by(P.source)
    return _rows(conn.execute(query))


def postings_by_city(conn: Connection, day: date, tz: ZoneInfo, gone_after: int) -> list[dict]:
    """Per site and city, the cities with the most postings seen first."""
    figures, relevant = _posting_figures(day, tz, gone_after)
    city = func.coalesce(P.city, "")
    query = (
        select(P.source, city.label("city"), *figures)
        .where(relevant)
        .group_by(P.source, city)
        .order_by(figures[0].desc(), P.source, city)
        .limit(CITIES)
    )
    return _rows(conn.execute(query))


def new_per_day(conn: Connection, day: date, tz: ZoneInfo, days: int) -> dict[str, list[int]]:
    """Per site, the postings first seen on each of the ``days`` days up to ``day``, oldest first."""
    every = last_days(day, days)
    starts = [start_of(each, tz) for each in every[1:]] + [day_span(day, tz).end]
    # the day a posting was first seen: the index of the first day end after it
    bucket = case(*((P.first_seen_at < end, at) for at, end in enumerate(starts)), else_=days)
    query = (
        select(P.source, bucket.label("at"), func.count().label("new"))
        .where(P.first_seen_at >= start_of(every[0], tz), P.first_seen_at < starts[-1])
        .group_by(P.source, bucket)
    )
    counts: dict[str, list[int]] = {}
    for source, at, new in conn.execute(query):
        counts.setdefault(source, [0] * days)[int(at)] = int(new)
    return dict(sorted(counts.items()))


def salary_by_job_and_city(
    conn: Connection, day: date, tz: ZoneInfo, conversion: Conversion | None = None
) -> list[dict]:
    """Quartiles of the monthly midpoint per (job, city), the groups with most postings first:
    of monthly pay alone, or of every period through ``conversion`` (farm.report.salarypay).

    The database counts the postings seen on ``day`` by (keyword, city, twice the midpoint),
    then by (job, city, value); the quartiles are ranked from those counts
    (farm.report.quartiles), a few dozen values a group however many postings it holds.
    """
    span = day_span(day, tz)
    twice = salarypay.twice_monthly_midpoint(conversion)
    city = func.coalesce(P.city, "")
    counted = (
        select(P.keyword_id, city.label("city"), twice.label("twice"), func.count().label("n"))
        .where(P.last_seen_at >= span.start, P.first_seen_at < span.end)
        .where(salarypay.gives_monthly_pay(conversion))
        .group_by(P.keyword_id, city, twice)
        .subquery()
    )
    c = counted.c
    query = (
        select(K.job, c.city, c.twice, func.sum(c.n).label("n"))
        .join_from(counted, KEYWORD, K.id == c.keyword_id)
        .group_by(K.job, c.city, c.twice)
        .order_by(K.job, c.city, c.twice)
    )
    histograms: dict[tuple[str, str], list[tuple[float, int]]] = {}
    for job, city_name, value, n in conn.execute(query):
        histograms.setdefault((job, city_name), []).append((_number(value), int(n)))
    groups = []
    for (job, city_name), histogram in histograms.items():
        q1, median, q3 = (value / 2 for value in quartiles(histogram))
        n = sum(count for _, count in histogram)
        groups.append({"job": job, "city": city_name, "n": n, "q1": q1, "median": median, "q3": q3})
    groups.sort(key=lambda group: (-group["n"], group["job"], group["city"]))
    return groups[:SALARY_GROUPS]


def salary_unread_by_site(conn: Connection, day: date, tz: ZoneInfo) -> list[dict]:
    """Per site, the postings seen on ``day`` and those of them whose salary text no rule reads."""
    span = day_span(day, tz)
    query = (
        select(P.source, func.count().label("seen"), _sum(salarypay.unread()).label("unread"))
        .where(P.first_seen_at < span.end, P.last_seen_at >= span.start)
        .group_by(P.source)
        .order_by(P.source)
    )
    return _rows(conn.execute(query))


def top_companies(conn: Connection, day: date, tz: ZoneInfo) -> list[dict]:
    span = day_span(day, tz)
    query = (
        select(P.company, func.count().label("new"))
        .where(P.first_seen_at >= span.start, P.first_seen_at < span.end, P.company.is_not(None), P.company != "")
        .group_by(P.company)
        .order_by(func.count().desc(), P.company)
        .limit(COMPANIES)
    )
    return _rows(conn.execute(query))


def postings_stored(conn: Connection) -> int:
    return conn.execute(select(func.count()).select_from(POSTING)).scalar_one()


def keywords_stored(conn: Connection) -> int:
    return conn.execute(select(func.count()).select_from(KEYWORD)).scalar_one()
