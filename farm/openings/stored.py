"""Openings kept in the database (tables ``opening`` and ``opening_posting``, migration 0011).

`farm openings update` adds the postings not in an opening yet to the openings stored, in the clustering's
order (first seen, site, id): the stored openings are taken back into a Clusterer as they were, the new
postings added to them, and only what is new written, in one transaction. The same postings updated in the
same order give the same openings. An update gives what clustering every posting at once (``rebuild``)
gives, unless a brand ↔ legal-name pair learnt later names a company that earlier openings keyed apart, or
the title threshold or the user's pairs changed: a rebuild then clusters everything again with what is
known now.
"""

from dataclasses import dataclass

from sqlalchemy import delete, func, insert, select
from sqlalchemy.engine import Connection, Engine

from farm.openings.cluster import Clusterer, Opening, Why
from farm.openings.names import CompanyNames
from farm.openings.postings import learn_pairs, read_postings
from farm.state.models import JobPostingRow, OpeningPosting, OpeningRow

POSTINGS, OPENINGS = JobPostingRow.__table__, OpeningRow.__table__
BATCH = 5000  # rows an INSERT sends at once


@dataclass(frozen=True)
class Updated:
    postings: int  # postings put in an opening by this update
    openings: int  # openings this update opened
    stored: int  # openings stored after it


def update_openings(
    engine: Engine, names: CompanyNames | None = None, threshold: float = 0.85, rebuild: bool = False
) -> Updated:
    """Put every posting not in a stored opening into one; ``rebuild``: forget the stored ones first."""
    names = names or CompanyNames()
    learn_pairs(engine, names)  # from every posting, as a rebuild learns them
    with engine.begin() as connection:
        if rebuild:
            connection.execute(delete(OpeningPosting))
            connection.execute(delete(OpeningRow))
        clusters = restore(connection, names, threshold)
        known = len(clusters.openings)
        unstored = POSTINGS.c.id.not_in(select(OpeningPosting.posting_id))
        ids = _posting_ids(connection, unstored)
        new = read_postings(connection, names, where=unstored)
        clusters.add_all(new)
        _insert(connection, OpeningRow, [_opening_row(opening) for opening in clusters.openings[known:]])
        members = [
            {
                "posting_id": ids[(posting.source, posting.job_id)],
                "opening_id": clusters.why[(posting.source, posting.job_id)].opening,
                "why": clusters.why[(posting.source, posting.job_id)].to_json(),
            }
            for posting in new
        ]
        _insert(connection, OpeningPosting, members)
    return Updated(len(new), len(clusters.openings) - known, len(clusters.openings))


def restore(connection: Connection, names: CompanyNames, threshold: float) -> Clusterer:
    """The stored openings in a Clusterer, each with its postings in the clustering's order."""
    clusters = Clusterer(names, threshold)
    members: dict[int, list] = {}
    for key, opening_id in opening_of_postings(connection).items():
        members.setdefault(opening_id, []).append(key)
    for row in connection.execute(select(OPENINGS).order_by(OPENINGS.c.id)):
        opening = Opening(
            row.id, row.city, row.company_key, row.title_key, row.salary_min, row.salary_max, row.district, row.degree
        )
        opening.postings = members.get(row.id, [])
        opening.sources = {source for source, _ in opening.postings}
        clusters.restore(opening)
    return clusters


def stored_why(engine: Engine, source: str, job_id: str) -> tuple[Why, list[tuple[str, str, Why]]] | None:
    """Why the posting is in its opening, and the opening's other postings with theirs; None while the
    posting is in no stored opening."""
    with engine.connect() as connection:
        query = (
            select(OpeningPosting.opening_id, OpeningPosting.why)
            .join(POSTINGS, POSTINGS.c.id == OpeningPosting.posting_id)
            .where(POSTINGS.c.source == source, POSTINGS.c.job_id == job_id)
        )
        found = connection.execute(query).first()
        if found is None:
            return None
        others = connection.execute(
            select(POSTINGS.c.source, POSTINGS.c.job_id, OpeningPosting.why)
            .join(POSTINGS, POSTINGS.c.id == OpeningPosting.posting_id)
            .where(OpeningPosting.opening_id == found.opening_id)
            .order_by(POSTINGS.c.first_seen_at, POSTINGS.c.source, POSTINGS.c.job_id)
        ).all()
    rest = [(s, j, Why.from_json(w)) for s, j, w in others if (s, j) != (source, job_id)]
    return Why.from_json(found.why), rest


def opening_of_postings(connection: Connection) -> dict[tuple[str, str], int]:
    """(source, job_id) -> its stored opening, in the clustering's order."""
    query = (
        select(POSTINGS.c.source, POSTINGS.c.job_id, OpeningPosting.opening_id)
        .join(POSTINGS, POSTINGS.c.id == OpeningPosting.posting_id)
        .order_by(POSTINGS.c.first_seen_at, POSTINGS.c.source, POSTINGS.c.job_id)
    )
    return {(row.source, row.job_id): row.opening_id for row in connection.execute(query)}


def waiting(connection: Connection) -> int:
    """Postings in no stored opening yet."""
    stored = select(OpeningPosting.posting_id)
    return connection.execute(select(func.count()).where(POSTINGS.c.id.not_in(stored))).scalar_one()


def _posting_ids(connection: Connection, where) -> dict[tuple[str, str], int]:
    rows = connection.execute(select(POSTINGS.c.source, POSTINGS.c.job_id, POSTINGS.c.id).where(where))
    return {(source, job_id): posting_id for source, job_id, posting_id in rows}


def _opening_row(opening: Opening) -> dict:
    return {
        "id": opening.id,
        "city": opening.city,
        "company_key": opening.company_key,
        "title_key": opening.title_key,
        "salary_min": opening.salary_min,
        "salary_max": opening.salary_max,
        "district": opening.district,
        "degree": opening.degree,
    }


def _insert(connection: Connection, model, rows: list[dict]) -> None:
    for start in range(0, len(rows), BATCH):
        connection.execute(insert(model), rows[start : start + BATCH])
