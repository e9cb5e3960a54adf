"""Openings read by their blocking keys: ``opening_key`` (an opening's keys, a row each: the city, the
company key's first two characters and the title's first bigrams, farm.openings.cluster.blocking_keys),
``opening.experience``, and ``company_pair`` (the brand ↔ legal-name pairs learnt), so that `farm openings
update` reads the openings and pairs its new postings may meet only (farm.openings.stored).

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-06
"""

import math
import zlib

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None

BATCH = 5000
THRESHOLD = 0.85  # `farm openings update`'s default title threshold, as the stored openings were made


def _keys(city: str, company: str, title: str) -> list[str]:
    """farm.openings.cluster.blocking_keys as it is at this revision."""
    grams = {title[i : i + 2] for i in range(len(title) - 1)} if len(title) > 1 else {title}
    ordered = sorted(grams, key=lambda gram: (zlib.crc32(gram.encode()), gram))
    prefix = max(1, len(ordered) - math.ceil(THRESHOLD * len(ordered) - 1e-9) + 1)
    return [f"{city}|{company[:2]}|{gram}" for gram in ordered[:prefix]]


def upgrade() -> None:
    op.add_column("opening", sa.Column("experience", sa.String(16), nullable=False, server_default=""))
    key = op.create_table(
        "opening_key",
        sa.Column("block_key", sa.String(96), primary_key=True),
        sa.Column("opening_id", sa.BigInteger(), primary_key=True, autoincrement=False),
        mysql_charset="utf8mb4",
        mysql_collate="utf8mb4_bin",
        mysql_engine="InnoDB",
    )
    op.create_table(
        "company_pair",
        sa.Column("brand_key", sa.String(255), primary_key=True),
        sa.Column("legal_key", sa.String(255), nullable=False),
        mysql_charset="utf8mb4",
        mysql_collate="utf8mb4_bin",
        mysql_engine="InnoDB",
    )
    opening = sa.table("opening", sa.column("id"), sa.column("city"), sa.column("company_key"), sa.column("title_key"))
    rows = op.get_bind().execute(sa.select(opening.c.id, opening.c.city, opening.c.company_key, opening.c.title_key))
    keys = [
        {"block_key": one, "opening_id": opening_id}
        for opening_id, city, company, title in rows.all()
        for one in _keys(city, company, title)
    ]
    for start in range(0, len(keys), BATCH):
        op.get_bind().execute(sa.insert(key), keys[start : start + BATCH])


def downgrade() -> None:
    op.drop_table("company_pair")
    op.drop_table("opening_key")
    op.drop_column("opening", "experience")
