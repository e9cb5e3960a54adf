"""Every figure of one day's report, read in one read transaction (one snapshot)."""

from dataclasses import asdict, dataclass, field
from datetime import date
from zoneinfo import ZoneInfo

from sqlalchemy.engine import Engine

from farm.report import queries
from farm.salary.monthly import Conversion
from farm.state.caps import capped_keywords, left_behind
from farm.state.clock import last_days
from farm.state.doors import doors, waiting
from farm.state.engine import reader
from farm.state.identities import site_identities
from farm.state.tallies import Limits, sources

CAPPED = 30  # keywords held back by their page cap, shown by name (the most left behind first)


@dataclass
class DayFigures:
    day: date
    timezone: str
    days: int  # of the new-postings chart
    gone_after: int  # days unseen that make a posting gone
    keywords_stored: int = 0
    postings_stored: int = 0
    crawl: list = field(default_factory=list)
    not_crawled: list = field(default_factory=list)  # sites with keywords, none requested that day
    first_seen: date | None = None  # the day the first posting stored was seen: no data before it
    failures: list = field(default_factory=list)
    postings: list = field(default_factory=list)
    cities: list = field(default_factory=list)
    new_per_day: dict = field(default_factory=dict)
    salary: list = field(default_factory=list)
    # how day, hour and year pay became a month's (farm.salary.monthly); "" for monthly pay alone
    salary_conversion: str = ""
    salary_unread: list = field(default_factory=list)  # per site: postings seen, salary texts no rule reads
    companies: list = field(default_factory=list)
    # per site, what its page cap left behind (farm.state.caps); the keywords it held back the most
    caps: list = field(default_factory=list)
    # per site, how its door stood (farm.state.doors): walls passed, keywords a wall holds, a refused crawl
    doors: list = field(default_factory=list)
    capped: list = field(default_factory=list)
    # per site, its identities as its latest crawl holds them (farm.state.identities): passwords masked
    identities: list = field(default_factory=list)
    checks: list = field(default_factory=list)  # the day's checks, the failed first (farm.report.checked)
    openings: dict = field(default_factory=dict)  # new, gone and days open (farm.report.openings)

    @property
    def crawled(self) -> bool:
        """Whether any keyword was crawled that day."""
        return bool(self.crawl)

    @property
    def chart_days(self) -> list[date]:
        return last_days(self.day, self.days)

    def to_json(self) -> dict:
        """The figures as JSON values (times as ISO text), as the page embeds them."""

        def plain(value):
            if isinstance(value, dict):
                return {str(key): plain(item) for key, item in value.items()}
            if isinstance(value, (list, tuple)):
                return [plain(item) for item in value]
            if hasattr(value, "isoformat"):
                return value.isoformat()
            if hasattr(value, "is_integer"):  # float, Decimal
                return float(value)
            return value

        return plain(asdict(self))


def gather(
    engine: Engine,
    day: date,
    tz: ZoneInfo,
    days: int = 30,
    gone_after: int = 7,
    conversion: Conversion | None = None,
    caps: dict[str, int] | None = None,
    claim_limits: Limits | None = None,
) -> DayFigures:
    """The figures of ``day``; ``caps`` (source -> FARM_<SITE>_MAX_PAGES) for what the caps left behind."""
    figures = DayFigures(day, tz.key, days, gone_after, salary_conversion=conversion.describe() if conversion else "")
    with reader(engine).connect() as conn:
        if conn.dialect.name in ("mysql", "mariadb", "postgresql"):
            # one snapshot for every query (farm's engines read committed, a snapshot per statement)
            conn = conn.execution_options(isolation_level="REPEATABLE READ")
        with conn.begin():
            _read(conn, figures, day, tz, days, gone_after, conversion)
            if caps and figures.keywords_stored:
                _read_caps(conn, figures, day, caps)
            if figures.keywords_stored:
                _read_doors(conn, figures, day, tz, claim_limits or Limits())
                found = site_identities(conn, [row["source"] for row in figures.crawl])
                figures.identities = [{"source": source, **found[source]} for source in found]
    return figures


def _read_doors(conn, figures: DayFigures, day: date, tz: ZoneInfo, limits: Limits) -> None:
    sites = sources(conn)  # every site with keywords, a project's own included
    left = waiting(conn, sites, day, limits)
    for source, door in doors(conn, sites, day, tz).items():
        lines = door.lines(left[source], tz)
        if lines:
            figures.doors.append({"source": source, "lines": lines, **door.to_json()})


def _read_caps(conn, figures: DayFigures, day: date, caps: dict[str, int]) -> None:
    capped = capped_keywords(conn, day, caps)
    figures.caps = [{"source": source, **site} for source, site in left_behind(capped).items()]
    figures.capped = [{"source": k.source, **k.to_json()} for k in capped[:CAPPED]]


def _read(
    conn, figures: DayFigures, day: date, tz: ZoneInfo, days: int, gone_after: int, conversion: Conversion | None
) -> None:
    figures.keywords_stored = queries.keywords_stored(conn)
    figures.postings_stored = queries.postings_stored(conn)
    if not (figures.keywords_stored or figures.postings_stored):
        return
    figures.crawl = queries.crawl_by_site(conn, day)
    figures.not_crawled = queries.not_crawled(conn, day)
    figures.first_seen = queries.first_seen_day(conn, tz)
    figures.failures = queries.failures(conn, day)
    figures.postings = queries.postings_by_site(conn, day, tz, gone_after)
    figures.cities = queries.postings_by_city(conn, day, tz, gone_after)
    figures.new_per_day = queries.new_per_day(conn, day, tz, days)
    figures.salary = queries.salary_by_job_and_city(conn, day, tz, conversion)
    figures.salary_unread = queries.salary_unread_by_site(conn, day, tz)
    figures.companies = queries.top_companies(conn, day, tz)
