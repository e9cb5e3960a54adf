"""The postings in no opening yet, as ``opening_waiting`` keeps them (migration 0016): the database writes a
posting's id there as the posting is inserted (the trigger ``job_posting_waits``), `farm openings update`
deletes it in the transaction that puts the posting in an opening. An update reads the waiting postings
and never a stored one, so it costs what its new postings cost, however many are stored.

A waiting row whose posting is gone, or is in an opening already, is settled (deleted) as it is read.
"""

from sqlalchemy import delete, func, insert, select
from sqlalchemy.engine import Connection, Row

from farm.state.models import JobPostingRow, OpeningPosting, OpeningWaiting

POSTINGS, WAITING, MEMBERS = JobPostingRow.__table__, OpeningWaiting.__table__, OpeningPosting.__table__
AT_ONCE = 5000  # ids in one IN (...)


def waiting_ids(connection: Connection) -> list[int]:
    """The ids of the waiting postings in the clustering's order (first seen, site, job id), each posting
    read by its id; the waiting rows of postings gone or in an opening deleted."""
    ids = list(connection.execute(select(WAITING.c.posting_id).order_by(WAITING.c.posting_id)).scalars())
    found: list[Row] = []
    for start in range(0, len(ids), AT_ONCE):
        chunk = ids[start : start + AT_ONCE]
        # two lookups by primary key, not one with NOT EXISTS: MariaDB answered that in over a second at a
        # million stored postings
        members = set(connection.execute(select(MEMBERS.c.posting_id).where(MEMBERS.c.posting_id.in_(chunk))).scalars())
        posted = select(POSTINGS.c.first_seen_at, POSTINGS.c.source, POSTINGS.c.job_id, POSTINGS.c.id)
        found += [row for row in connection.execute(posted.where(POSTINGS.c.id.in_(chunk))) if row.id not in members]
    kept = {row.id for row in found}
    settle(connection, [posting_id for posting_id in ids if posting_id not in kept])
    return [row.id for row in sorted(found, key=lambda row: (row.first_seen_at, row.source, row.job_id))]


def settle(connection: Connection, ids: list[int]) -> None:
    """The postings of ``ids`` wait no more."""
    for start in range(0, len(ids), AT_ONCE):
        connection.execute(delete(WAITING).where(WAITING.c.posting_id.in_(ids[start : start + AT_ONCE])))


def wait_all(connection: Connection) -> None:
    """Every stored posting waits (a rebuild, which forgets every opening)."""
    connection.execute(delete(WAITING))
    connection.execute(insert(WAITING).from_select(["posting_id"], select(POSTINGS.c.id)))


def count_waiting(connection: Connection) -> int:
    """Postings in no stored opening yet."""
    in_one = select(MEMBERS.c.posting_id).where(MEMBERS.c.posting_id == WAITING.c.posting_id).exists()
    return connection.execute(select(func.count()).select_from(WAITING).where(~in_one)).scalar_one()
