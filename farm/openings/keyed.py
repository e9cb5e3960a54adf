"""The stored openings a batch of new postings may join, found through ``opening_key`` (migrations 0014, 0016).

An opening is stored under its blocking keys (farm.openings.cluster.blocking_keys: the city, the company
key's first two characters, one of the title's first bigrams), each row carrying the opening's company key
and the number of its title's bigrams. A blocking key is coarse and names more openings the more are stored;
the database drops those no posting looking under the key may join, reading the key's index alone: a company
key that is not the posting's, nor starts it, nor is started by it, and a title whose bigrams are too few or
too many to be ``threshold`` alike (the Jaccard index of two sets is at most the smaller's size over the
larger's). What the posting looks under is written into a temporary table, ``opening_looking``, joined with
the keys. The few openings left are read and checked as the Clusterer checks its candidates (``candidate``).
"""

import math

from sqlalchemy import Column, Integer, MetaData, String, Table, select, text
from sqlalchemy.engine import Connection, Row

from farm.openings.cluster import Opening, blocking_keys
from farm.openings.titles import bigrams, similarity
from farm.state.models import JobPostingRow, OpeningKey, OpeningPosting, OpeningRow

KEYS, OPENINGS, POSTINGS = OpeningKey.__table__, OpeningRow.__table__, JobPostingRow.__table__
AT_ONCE = 500  # values in one IN (...)
LOOKING = Table(
    "opening_looking",
    MetaData(),
    Column("block_key", String(96), primary_key=True),  # each key's rows sought as a named key is read
    Column("company_key", String(255), primary_key=True),
    Column("fewest", Integer, primary_key=True, autoincrement=False),  # the bigrams of a title alike enough: at least
    Column("most", Integer, primary_key=True, autoincrement=False),  # and at most
    prefixes=["TEMPORARY"],
    mysql_charset="utf8mb4",
    mysql_collate="utf8mb4_bin",  # as opening_key's: the keys compare code point by code point
)


def key_rows(opening: Opening, threshold: float) -> list[dict]:
    """The ``opening_key`` rows of an opening."""
    grams = len(bigrams(opening.title_key))
    return [
        {"block_key": key, "company_key": opening.company_key, "title_grams": grams, "opening_id": opening.id}
        for key in blocking_keys(opening.city, opening.company_key, opening.title_key, threshold)
    ]


def keyed_openings(connection: Connection, wanted: dict[str, set[tuple[str, str]]], threshold: float) -> list[Opening]:
    """The stored openings that may take a posting looking under one of ``wanted``'s blocking keys (key ->
    the (company key, title key) looking), by id, each with the sites of its postings."""
    found: dict[int, Opening] = {}
    for row in named_openings(connection, wanted, threshold):
        if row.id not in found and candidate(row.company_key, row.title_key, wanted[row.block_key], threshold):
            found[row.id] = Opening(
                row.id,
                row.city,
                row.company_key,
                row.title_key,
                row.salary_min,
                row.salary_max,
                row.district,
                row.degree,
                row.experience,
            )
    ids = sorted(found)
    for start in range(0, len(ids), AT_ONCE):
        query = (
            select(OpeningPosting.opening_id, POSTINGS.c.source)
            .join(POSTINGS, POSTINGS.c.id == OpeningPosting.posting_id)
            .where(OpeningPosting.opening_id.in_(ids[start : start + AT_ONCE]))
        )
        for opening_id, source in connection.execute(query):
            found[opening_id].sources.add(source)
    return [found[opening_id] for opening_id in ids]


def named_openings(connection: Connection, wanted: dict[str, set[tuple[str, str]]], threshold: float) -> list[Row]:
    """The rows of the stored openings the database keeps of those ``wanted``'s keys name (the blocking key
    and the opening's columns): of a company key that is, starts or is started by a looking posting's, with
    a number of title bigrams that may be ``threshold`` alike to its title's."""
    looking = {
        (key, company, *_gram_range(title, threshold)) for key, lookers in wanted.items() for company, title in lookers
    }
    if not looking:
        return []
    _drop_looking(connection)
    LOOKING.create(connection)
    connection.execute(
        LOOKING.insert(),
        [{"block_key": k, "company_key": c, "fewest": f, "most": m} for k, c, f, m in sorted(looking)],
    )
    fits = (
        select(LOOKING.c.block_key)
        .where(
            LOOKING.c.block_key == KEYS.c.block_key,
            KEYS.c.title_grams.between(LOOKING.c.fewest, LOOKING.c.most),
            # one key starts the other; LIKE's wildcards in a key only let more through, which ``candidate`` drops
            LOOKING.c.company_key.like(KEYS.c.company_key + "%") | KEYS.c.company_key.like(LOOKING.c.company_key + "%"),
        )
        .exists()
    )
    keys, rows = sorted(wanted), list[Row]()
    for start in range(0, len(keys), AT_ONCE):  # the keys named: every database seeks them in the primary key
        named = (
            select(KEYS.c.block_key, OPENINGS)
            .join(OPENINGS, OPENINGS.c.id == KEYS.c.opening_id)
            .where(KEYS.c.block_key.in_(keys[start : start + AT_ONCE]), fits)
        )
        rows += connection.execute(named).all()
    _drop_looking(connection)
    return rows


def candidate(company: str, title: str, looking: set[tuple[str, str]], threshold: float) -> bool:
    """Whether an opening of ``company`` and ``title`` is a candidate of one of the (company, title) looking
    (farm.openings.cluster.Clusterer._candidates: a company key equal, or one the start of the other; titles
    at least ``threshold`` alike)."""
    return any(
        (company.startswith(other) or other.startswith(company)) and similarity(title, key) >= threshold
        for other, key in looking
    )


def _gram_range(title: str, threshold: float) -> tuple[int, int]:
    """The fewest and most bigrams of a title that may be ``threshold`` alike to ``title`` (a bigram either
    side of the bounds: the exact comparison is ``candidate``'s)."""
    grams = len(bigrams(title))
    most = math.ceil(grams / threshold) + 1 if threshold > 0 else 1 << 30
    return max(0, math.floor(threshold * grams) - 1), most


def _drop_looking(connection: Connection) -> None:
    # MySQL and MariaDB commit the transaction on a DROP TABLE, unless it names a TEMPORARY one
    temporary = "TEMPORARY " if connection.dialect.name in ("mysql", "mariadb") else ""
    connection.execute(text(f"DROP {temporary}TABLE IF EXISTS opening_looking"))
