"""The openings and their lives as known at the end of a day: what `farm openings days` and the report read."""

from dataclasses import dataclass
from datetime import date
from zoneinfo import ZoneInfo

from sqlalchemy import select
from sqlalchemy.engine import Engine

from farm.openings.cluster import Clusterer
from farm.openings.life import Life, opening_lives, posting_lives
from farm.openings.names import CompanyNames
from farm.openings.postings import read_postings
from farm.openings.summary import OpeningLife
from farm.state.models import JobPostingRow, Keyword


@dataclass(frozen=True)
class Picture:
    postings: dict[tuple[str, str], Life]  # (source, job_id) -> its life
    openings: list[OpeningLife]


def picture(engine: Engine, tz: ZoneInfo, gone_after: int, until: date) -> Picture:
    """Every posting's and opening's life at the end of ``until``."""
    names = CompanyNames()
    clusters = Clusterer(names)
    clusters.add_all(read_postings(engine, names))
    lives = posting_lives(engine, tz, gone_after, until)
    keywords = _keywords(engine)
    openings = [
        OpeningLife(opening.id, *keywords.get(opening.postings[0], (opening.city, "")), life)
        for opening, life in zip(clusters.openings, opening_lives(clusters, lives), strict=True)
    ]
    return Picture(lives, openings)


def _keywords(engine: Engine) -> dict[tuple[str, str], tuple[str, str]]:
    """(source, job_id) -> the (city, job) of the keyword that first found the posting."""
    posting, keyword = JobPostingRow.__table__, Keyword.__table__
    query = select(posting.c.source, posting.c.job_id, keyword.c.city, keyword.c.job).join(
        keyword, keyword.c.id == posting.c.keyword_id
    )
    with engine.connect() as connection:
        return {(row.source, row.job_id): (row.city, row.job) for row in connection.execute(query)}
