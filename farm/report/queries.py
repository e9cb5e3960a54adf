"""The report's figures: each is the answer of one SQL query (SQLAlchemy Core), the same
on SQLite and MariaDB, over the ``keyword`` and ``job_posting`` tables.

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

from datetime import date, timedelta
from decimal import Decimal
from zoneinfo import ZoneInfo

from sqlalchemy import and_, case, func, literal, or_, over, select
from sqlalchemy.engine import Connection

from farm.report.days import day_span, last_days, start_of
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
    relevant = or_(seen, went)  # new postings are seen too
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


def salary_by_job_and_city(conn: Connection, day: date, tz: ZoneInfo) -> list[dict]:
    """Quartiles of the monthly midpoint per (job, city), the groups with most postings first.

    Computed in the database on twice the midpoint (an integer): each quartile q
    (1, 2, 3) sits at 0-based rank h = (n - 1) * q / 4 between ranks floor(h) and
    floor(h) + 1, weighted by the fraction of h, all in whole-number arithmetic
    (window functions and CASE alone: SQLite has no percentile function).
    """
    span = day_span(day, tz)
    twice = (P.salary_min + P.salary_max).label("twice")
    job = KEYWORD.c.job.label("job")
    city = func.coalesce(P.city, "").label("city")
    partition = (KEYWORD.c.job, func.coalesce(P.city, ""))
    ranked = (
        select(
            job,
            city,
            twice,
            (over(func.row_number(), partition_by=partition, order_by=twice) - 1).label("rank"),
            over(func.count(), partition_by=partition).label("n"),
        )
        .select_from(POSTING.join(KEYWORD, KEYWORD.c.id == P.keyword_id))
        .where(P.first_seen_at < span.end, P.last_seen_at >= span.start)
        .where(P.salary_min.is_not(None), P.salary_max.is_not(None))
        .subquery()
    )
    r = ranked.c

    def quartile(q: int):
        h4 = (r.n - 1) * q  # four times the rank
        weight = h4 % 4
        at_floor = and_(r.rank * 4 <= h4, r.rank * 4 > h4 - 4)
        above = and_(r.rank * 4 > h4, r.rank * 4 < h4 + 4)
        # (4 - weight) / 4 of rank floor(h), weight / 4 of the next; halved: twice the midpoint
        return func.sum(case((at_floor, r.twice * (4 - weight)), (above, r.twice * weight), else_=0)) / literal(8.0)

    query = (
        select(
            r.job,
            r.city,
            func.count().label("n"),
            quartile(1).label("q1"),
            quartile(2).label("median"),
            quartile(3).label("q3"),
        )
        .group_by(r.job, r.city)
        .order_by(func.count().desc(), r.job, r.city)
        .limit(SALARY_GROUPS)
    )
    return [
        {**row, "q1": float(row["q1"]), "median": float(row["median"]), "q3": float(row["q3"])}
        for row in _rows(conn.execute(query))
    ]


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
