"""Openings kept in the database (tables ``opening``, ``opening_posting``, ``opening_key`` and
``company_pair``, migrations 0011, 0014 and 0016) with the evidence's weights (``opening_weight``, migration
0015).

`farm openings update` reads the ids of the postings waiting (``opening_waiting``, farm.openings.waiting), once,
in the clustering's order (first seen, site, id), and adds them to the openings stored AT_ONCE at a time, each
batch in its own transaction, which deletes their waiting rows: of the openings a batch's blocking keys name
(``opening_key``: the city, the company key's start and the title's first bigrams,
farm.openings.cluster.blocking_keys), the database keeps those of a company and a title's size a posting of the
batch may join, and of those only the Clusterer's candidates (its company key or one starting or started by it,
a title alike enough) are built and taken back into a Clusterer (farm.openings.keyed); what the batch opens is
written with its blocking keys, so the next batch takes back the openings the earlier ones opened as it takes
back any stored opening. What every batch weighs with is settled before the first: the pairs stored for the
companies the waiting postings name and the pairs they carry themselves (``company_pair``, the new ones written
first), and the weights. An update's cost follows its new postings and the openings their keys name, never the
postings stored, and its memory one batch's (docs/benchmarks.md). An update killed midway keeps the batches
committed; the next one puts the rest in, as the killed one would have (a posting is in one opening:
``opening_posting``'s key is the posting's id). A batched update gives what one batch of every waiting posting
gives, except where a (city, company) holds so many titles that candidates come from the LSH
(farm.openings.cluster), which finds alike titles among those held, not always every one. Where no weights are
stored (the first update, a rebuild) they are learnt from every waiting posting, which are then held at once,
without their raw items; a rebuild's forgetting is committed with the pairs and the weights, and one killed
midway is finished by the next update.

The evidence's weights are learnt from the postings (farm.openings.estimate) by the first update that finds
pairs enough among its postings, and by every rebuild, and stored (``opening_weight``): the updates after
it weigh with them. The same postings updated in the same order give the same openings. An update gives
what clustering every posting at once (``rebuild``) gives, unless a brand ↔ legal-name pair learnt later
names a company that earlier openings keyed apart, the weights and the title decorations
(farm.openings.decorations, stored beside the weights) were learnt from fewer postings than the rebuild
learns them from, or the title threshold or the user's pairs changed: a rebuild then clusters
everything again with what is known now.

An account that may only read (`farm report` run as `farm stats` is) gets the openings stored:
``update_if_allowed`` leaves the postings waiting when the database refuses the write.
"""

import logging
from collections import defaultdict
from dataclasses import dataclass

from sqlalchemy import delete, func, insert, select
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import DBAPIError

from farm.openings.cluster import Clusterer, Opening, PostingSeen, Why, blocking_keys
from farm.openings.decorations import WHERE, decorations_of
from farm.openings.estimate import FEWEST_PAIRS, comparisons, estimate
from farm.openings.evidence import SET_BY_HAND, Weights
from farm.openings.keyed import key_rows, keyed_openings
from farm.openings.names import CompanyNames, company_key
from farm.openings.postings import pair_names, read_postings
from farm.openings.titles import NO_DECORATIONS, Decorations
from farm.openings.waiting import count_waiting, settle, wait_all, waiting_ids
from farm.state.engine import without_read_deadline
from farm.state.models import CompanyPair, JobPostingRow, OpeningKey, OpeningPosting, OpeningRow, OpeningWeight

logger = logging.getLogger(__name__)

POSTINGS, OPENINGS, PAIRS, KEYS, WEIGHTS = (
    JobPostingRow.__table__,
    OpeningRow.__table__,
    CompanyPair.__table__,
    OpeningKey.__table__,
    OpeningWeight.__table__,
)
AT_ONCE = 5000  # postings an update puts in openings in one transaction
BATCH = 5000  # rows an INSERT sends at once
KEYS_AT_ONCE = 500  # values in one IN (...)
# what each database says when an account may not write: MariaDB/MySQL's error numbers (command denied,
# access denied, read-only), PostgreSQL's SQLSTATE (insufficient privilege, read-only transaction)
DENIED_NUMBERS = {1142, 1044, 1227, 1290, 1792}
DENIED_STATES = {"42501", "25006"}


@dataclass(frozen=True)
class Updated:
    postings: int  # postings put in an opening by this update
    openings: int  # openings this update opened
    stored: int  # openings stored after it
    weights: Weights = SET_BY_HAND  # what it weighed the evidence with (``pairs``: learnt from so many)
    decorations: Decorations = NO_DECORATIONS  # the title decorations learnt, stored with the weights


def update_openings(
    engine: Engine,
    names: CompanyNames | None = None,
    threshold: float = 0.85,
    rebuild: bool = False,
    at_once: int = AT_ONCE,
) -> Updated:
    """Put every posting not in a stored opening into one, ``at_once`` postings a transaction (see the
    module's docstring); ``rebuild``: forget the stored ones first. Its statements have no read deadline
    (FARM_DB_TIMEOUT), as a migration's: a rebuild's statements outlast one on a large table."""
    engine, owned = without_read_deadline(engine)
    try:
        return _update(engine, names or CompanyNames(), threshold, rebuild, at_once)
    finally:
        if owned:
            engine.dispose()


def _update(engine: Engine, names: CompanyNames, threshold: float, rebuild: bool, at_once: int) -> Updated:
    with engine.begin() as connection:
        if rebuild:
            connection.execute(delete(OpeningPosting))
            connection.execute(delete(OpeningRow))
            connection.execute(delete(CompanyPair))
            connection.execute(delete(OpeningKey))
            connection.execute(delete(OpeningWeight))
            wait_all(connection)
        waiting = waiting_ids(connection)
        weights, decorations = _learn(connection, names, threshold, waiting)
        stored = connection.execute(select(func.count()).select_from(OPENINGS)).scalar_one()
    postings = opened = 0
    for start in range(0, len(waiting), at_once):
        with engine.begin() as connection:
            batch = _put_in_openings(
                connection, names, threshold, (weights, decorations), waiting[start : start + at_once]
            )
        postings, opened = postings + batch[0], opened + batch[1]
    return Updated(postings, opened, stored + opened, weights, decorations)


def _put_in_openings(
    connection: Connection,
    names: CompanyNames,
    threshold: float,
    learnt: tuple[Weights, Decorations],
    ids: list[int],
) -> tuple[int, int]:
    """The postings ``ids`` names (in the clustering's order) put in openings and written: how many postings,
    how many openings opened. Only the stored openings their blocking keys name are read."""
    new = _read(connection, ids, with_raw=False)
    last = connection.execute(select(func.max(OPENINGS.c.id))).scalar_one() or 0
    weights, decorations = learnt
    clusters = Clusterer(names, threshold, next_id=last + 1, weights=weights, decorations=decorations)
    wanted: dict[str, set[tuple[str, str]]] = defaultdict(set)  # blocking key -> (company, title) looking
    for _, posting, *_ in new:
        if company := names.key(posting.company):
            title = decorations.key(posting.title)
            for key in blocking_keys(posting.city or "", company, title, threshold):
                wanted[key].add((company, title))
    for opening in keyed_openings(connection, wanted, threshold):
        clusters.restore(opening)
    clusters.add_all(posting for _, posting, *_ in new)
    _insert(connection, OpeningRow, [_opening_row(opening) for opening in clusters.opened])
    _insert(connection, OpeningKey, [row for opening in clusters.opened for row in key_rows(opening, threshold)])
    members = []
    for posting_id, posting, *_ in new:
        why = clusters.why[(posting.source, posting.job_id)]
        members.append({"posting_id": posting_id, "opening_id": why.opening, "why": why.to_json()})
    _insert(connection, OpeningPosting, members)
    settle(connection, ids)
    return len(new), len(clusters.opened)


def update_if_allowed(engine: Engine) -> Updated | None:
    """``update_openings``, or None where the database refuses the account the write (the postings wait)."""
    try:
        return update_openings(engine)
    except DBAPIError as exc:
        if not denied(exc):
            raise
        logger.warning("openings not updated: the database refuses this account the write (%s)", exc.orig)
        return None


def denied(exc: DBAPIError) -> bool:
    """Whether the database refused the statement for want of a right to write."""
    original = exc.orig
    number = getattr(original, "args", (None,))[0] if getattr(original, "args", None) else None
    state = getattr(original, "sqlstate", None) or getattr(original, "pgcode", None)
    return number in DENIED_NUMBERS or state in DENIED_STATES or "readonly database" in str(original)


def _read(connection: Connection, ids: list[int], with_raw: bool) -> list:
    """The postings of ``ids``, read by id, in the clustering's order."""
    read = []
    for start in range(0, len(ids), BATCH):
        read += read_postings(connection, POSTINGS.c.id.in_(ids[start : start + BATCH]), with_raw)
    return sorted(read, key=lambda found: (found[3], found[1].source, found[1].job_id))


def _learn(
    connection: Connection, names: CompanyNames, threshold: float, ids: list[int]
) -> tuple[Weights, Decorations]:
    """What an update knows before it puts any posting in an opening, read from every waiting posting
    ``AT_ONCE`` at a time: the pairs stored for the companies they name and those they carry (into
    ``names``; the new ones stored), and the evidence's weights with the title decorations (``_weights``)."""
    keys, carried, seen = set[str](), [], []
    stored_weights = connection.execute(select(func.count()).select_from(WEIGHTS)).scalar_one() > 0
    for start in range(0, len(ids), AT_ONCE):
        for _, posting, raw, _ in _read(connection, ids[start : start + AT_ONCE], with_raw=True):
            keys.add(company_key(posting.company))
            if (pair := pair_names(posting.source, raw)) is not None:
                carried.append(pair)
            if not stored_weights:
                seen.append(posting)
    learnt = _learn_pairs(connection, names, sorted(keys - {""}), carried)
    _insert(connection, CompanyPair, [{"brand_key": brand, "legal_key": legal} for brand, legal in learnt])
    return _weights(connection, names, threshold, seen)


def _weights(
    connection: Connection, names: CompanyNames, threshold: float, new: list[PostingSeen]
) -> tuple[Weights, Decorations]:
    """The weights and the title decorations stored; where none are, those learnt from the new postings,
    stored once they hold pairs enough to learn from (FEWEST_PAIRS), whether EM's estimate was taken or the
    hand-set weights kept. Until then no decoration is learnt: a title key stays as its form makes it."""
    stored = connection.execute(select(WEIGHTS.c.field, WEIGHTS.c.outcome, WEIGHTS.c.weight, WEIGHTS.c.pairs)).all()
    if stored:
        decorations = Decorations.from_rows((row.field, row.outcome) for row in stored if row.field in WHERE)
        return Weights.from_rows([row[:3] for row in stored], stored[0].pairs), decorations
    decorations = decorations_of(new, names)
    counts = comparisons(new, names, threshold, decorations=decorations)
    weights = estimate(counts)
    if counts.total() < FEWEST_PAIRS:
        return weights, NO_DECORATIONS
    rows = [(name, outcome, weight) for name, outcome, weight in weights.rows()]
    rows += [(where, affix, 0.0) for where, affix in decorations.rows()]
    _insert(
        connection,
        OpeningWeight,
        [
            {"field": name, "outcome": outcome, "weight": weight, "pairs": counts.total()}
            for name, outcome, weight in rows
        ],
    )
    return weights, decorations


def _learn_pairs(
    connection: Connection, names: CompanyNames, keys: list[str], carried: list[tuple[str, str]]
) -> list[tuple[str, str]]:
    """The pairs stored for the company ``keys`` taken into ``names``, then the (brand, legal name) pairs
    the new postings carry, in their order; the pairs learnt here and not stored yet."""
    stored: dict[str, str] = {}
    for start in range(0, len(keys), KEYS_AT_ONCE):
        chunk = keys[start : start + KEYS_AT_ONCE]
        stored.update(
            connection.execute(select(PAIRS.c.brand_key, PAIRS.c.legal_key).where(PAIRS.c.brand_key.in_(chunk))).all()
        )
    for brand, legal in sorted(stored.items()):
        names.know(brand, legal)
    learnt: dict[str, str] = {}
    for brand, legal in carried:
        pair = names.learn(brand, legal)
        if pair is not None and pair[0] not in stored:
            learnt.setdefault(*pair)
    return sorted(learnt.items())


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
    return count_waiting(connection)


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
        "experience": opening.experience,
    }


def _insert(connection: Connection, model, rows: list[dict]) -> None:
    for start in range(0, len(rows), BATCH):
        connection.execute(insert(model), rows[start : start + BATCH])
