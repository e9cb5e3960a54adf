"""The openings and their lives as known at the end of a day, from the openings stored
(farm.openings.stored): what `farm openings days` and the report read."""

from dataclasses import dataclass, field
from datetime import date
from zoneinfo import ZoneInfo

from sqlalchemy import select
from sqlalchemy.engine import Engine

from farm.openings.life import Life, opening_lives, posting_lives
from farm.openings.stored import opening_of_postings, waiting
from farm.openings.summary import OpeningLife
from farm.state.models import JobPostingRow, Keyword, OpeningRow


@dataclass(frozen=True)
class Picture:
    postings: dict[tuple[str, str], Life]  # (source, job_id) -> its life
    openings: list[OpeningLife]  # by opening id
    waiting: int  # postings in no stored opening yet: `farm openings update` puts them in one
    sites: dict[int, int] = field(default_factory=dict)  # opening id -> the sites its postings are on


def picture(engine: Engine, tz: ZoneInfo, gone_after: int, until: date) -> Picture:
    """Every posting's and stored opening's life at the end of ``until``."""
    with engine.connect() as connection:
        members: dict[int, list[tuple[str, str]]] = {}
        for key, opening_id in opening_of_postings(connection).items():
            members.setdefault(opening_id, []).append(key)
        cities = dict(connection.execute(select(OpeningRow.id, OpeningRow.city)).all())
        keywords = _keywords(connection)
        left = waiting(connection)
    lives = posting_lives(engine, tz, gone_after, until)
    ids = sorted(members)
    openings = [
        OpeningLife(opening_id, *keywords.get(members[opening_id][0], (cities.get(opening_id, ""), "")), life)
        for opening_id, life in zip(ids, opening_lives((members[i] for i in ids), lives), strict=True)
    ]
    sites = {opening_id: len({source for source, _ in keys}) for opening_id, keys in members.items()}
    return Picture(lives, openings, left, sites)


def _keywords(connection) -> dict[tuple[str, str], tuple[str, str]]:
    """(source, job_id) -> the (city, job) of the keyword that first found the posting."""
    posting, keyword = JobPostingRow.__table__, Keyword.__table__
    query = select(posting.c.source, posting.c.job_id, keyword.c.city, keyword.c.job).join(
        keyword, keyword.c.id == posting.c.keyword_id
    )
    return {(row.source, row.job_id): (row.city, row.job) for row in connection.execute(query)}
