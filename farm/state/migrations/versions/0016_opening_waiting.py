"""The postings an update has yet to put in openings, kept as they come: ``opening_waiting`` (a posting's id a
row), filled by the database itself as a posting is inserted into ``job_posting`` (the trigger
``job_posting_waits``, whoever inserts it) and emptied by `farm openings update` as it puts them in openings;
the postings in no opening yet are written into it here. And ``opening_key`` with the company key and the
number of the title's bigrams of its opening, in its primary key, so that an update drops the openings a
blocking key names that no new posting may join in the index (farm.openings.stored).

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-06
"""

import math
import zlib
from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None

BATCH = 5000
THRESHOLD = 0.85  # `farm openings update`'s default title threshold, as the stored openings were made
TABLE_OPTIONS: dict[str, Any] = {"mysql_charset": "utf8mb4", "mysql_collate": "utf8mb4_bin", "mysql_engine": "InnoDB"}
# a posting inserted waits: an upsert that finds its (source, job_id) stored updates it and fires no INSERT
# trigger on any of the three databases
TRIGGER = {
    "sqlite": [
        "CREATE TRIGGER job_posting_waits AFTER INSERT ON job_posting "
        "BEGIN INSERT INTO opening_waiting (posting_id) VALUES (NEW.id); END"
    ],
    "mysql": [
        "CREATE TRIGGER job_posting_waits AFTER INSERT ON job_posting FOR EACH ROW "
        "INSERT INTO opening_waiting (posting_id) VALUES (NEW.id)"
    ],
    "postgresql": [
        "CREATE FUNCTION opening_waits() RETURNS trigger LANGUAGE plpgsql AS "
        "$$ BEGIN INSERT INTO opening_waiting (posting_id) VALUES (NEW.id); RETURN NULL; END $$",
        "CREATE TRIGGER job_posting_waits AFTER INSERT ON job_posting FOR EACH ROW EXECUTE FUNCTION opening_waits()",
    ],
}
UNTRIGGER = {
    "sqlite": ["DROP TRIGGER job_posting_waits"],
    "mysql": ["DROP TRIGGER job_posting_waits"],
    "postgresql": ["DROP TRIGGER job_posting_waits ON job_posting", "DROP FUNCTION opening_waits()"],
}


def _grams(title: str) -> set[str]:
    return {title[i : i + 2] for i in range(len(title) - 1)} if len(title) > 1 else {title}


def _keys(city: str, company: str, title: str) -> list[str]:
    """farm.openings.cluster.blocking_keys as it is at this revision."""
    ordered = sorted(_grams(title), key=lambda gram: (zlib.crc32(gram.encode()), gram))
    prefix = max(1, len(ordered) - math.ceil(THRESHOLD * len(ordered) - 1e-9) + 1)
    return [f"{city}|{company[:2]}|{gram}" for gram in ordered[:prefix]]


def _dialect() -> str:
    name = op.get_bind().dialect.name
    return "mysql" if name == "mariadb" else name


def upgrade() -> None:
    op.create_table(
        "opening_waiting",
        sa.Column("posting_id", sa.BigInteger(), primary_key=True, autoincrement=False),
        **TABLE_OPTIONS,
    )
    bind = op.get_bind()
    bind.execute(
        sa.text(
            "INSERT INTO opening_waiting (posting_id) SELECT id FROM job_posting WHERE NOT EXISTS "
            "(SELECT 1 FROM opening_posting WHERE opening_posting.posting_id = job_posting.id)"
        )
    )
    for statement in TRIGGER[_dialect()]:
        bind.execute(sa.text(statement))
    op.drop_table("opening_key")
    key = op.create_table(
        "opening_key",
        sa.Column("block_key", sa.String(96), primary_key=True),
        sa.Column("company_key", sa.String(255), primary_key=True),
        sa.Column("title_grams", sa.Integer(), primary_key=True, autoincrement=False),
        sa.Column("opening_id", sa.BigInteger(), primary_key=True, autoincrement=False),
        **TABLE_OPTIONS,
    )
    opening = sa.table("opening", sa.column("id"), sa.column("city"), sa.column("company_key"), sa.column("title_key"))
    rows = bind.execute(sa.select(opening.c.id, opening.c.city, opening.c.company_key, opening.c.title_key))
    while chunk := rows.fetchmany(BATCH):
        keys = [
            {"block_key": one, "company_key": company, "title_grams": len(_grams(title)), "opening_id": opening_id}
            for opening_id, city, company, title in chunk
            for one in _keys(city, company, title)
        ]
        op.get_bind().execute(sa.insert(key), keys)


def downgrade() -> None:
    for statement in UNTRIGGER[_dialect()]:
        op.get_bind().execute(sa.text(statement))
    op.drop_table("opening_waiting")
    op.drop_table("opening_key")
    key = op.create_table(
        "opening_key",
        sa.Column("block_key", sa.String(96), primary_key=True),
        sa.Column("opening_id", sa.BigInteger(), primary_key=True, autoincrement=False),
        **TABLE_OPTIONS,
    )
    opening = sa.table("opening", sa.column("id"), sa.column("city"), sa.column("company_key"), sa.column("title_key"))
    rows = op.get_bind().execute(sa.select(opening.c.id, opening.c.city, opening.c.company_key, opening.c.title_key))
    while chunk := rows.fetchmany(BATCH):
        keys = [
            {"block_key": one, "opening_id": i}
            for i, city, company, title in chunk
            for one in _keys(city, company, title)
        ]
        op.get_bind().execute(sa.insert(key), keys)
