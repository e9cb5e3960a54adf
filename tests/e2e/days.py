"""Playing several days in one test: what a day's crawls left in the database moved one day back."""

from datetime import timedelta

from sqlalchemy import bindparam, delete, insert, select, update

from farm.state.db import make_engine
from farm.state.models import CrawlRun, JobPostingRow, Keyword, KeywordDay, PostingDay

DAY = timedelta(days=1)
MOVED = {
    Keyword.__table__: ("last_requested_date", "last_requested_at", "crawl_started_at", "heartbeat_at"),
    KeywordDay.__table__: ("day",),
    CrawlRun.__table__: ("started_at", "ended_at"),
    JobPostingRow.__table__: ("first_seen_at", "last_seen_at"),
}


def move_a_day_back(db_url: str) -> None:
    """Every date and time the crawls wrote, one day earlier: today's keywords become fresh again.
    Row by row in Python, as SQLite has no date arithmetic on its text dates."""
    engine = make_engine(db_url)
    with engine.begin() as connection:
        for table, names in MOVED.items():
            rows = connection.execute(select(table.c.id, *(table.c[name] for name in names))).all()
            moved = [
                {
                    "row": row.id,
                    **{name: None if row[i + 1] is None else row[i + 1] - DAY for i, name in enumerate(names)},
                }
                for row in rows
            ]
            if moved:
                statement = update(table).where(table.c.id == bindparam("row"))
                connection.execute(statement.values({name: bindparam(name) for name in names}), moved)
        # posting_day's key holds its day: its rows written again a day earlier
        sightings = [{**row._asdict(), "day": row.day - DAY} for row in connection.execute(select(PostingDay))]
        connection.execute(delete(PostingDay))
        if sightings:
            connection.execute(insert(PostingDay), sightings)
    engine.dispose()
