"""Openings stored: ``opening`` (one job across the sites, as the clustering compares what comes after)
and ``opening_posting`` (each posting's opening and why), kept by `farm openings update`
(farm.openings.stored).

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-04
"""

from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None

TABLE: dict[str, Any] = {"mysql_charset": "utf8mb4", "mysql_collate": "utf8mb4_bin", "mysql_engine": "InnoDB"}


def upgrade() -> None:
    op.create_table(
        "opening",
        sa.Column("id", sa.BigInteger(), primary_key=True, autoincrement=False),
        sa.Column("city", sa.String(64), nullable=False),
        sa.Column("company_key", sa.String(255), nullable=False),
        sa.Column("title_key", sa.String(255), nullable=False),
        sa.Column("salary_min", sa.Integer(), nullable=True),
        sa.Column("salary_max", sa.Integer(), nullable=True),
        sa.Column("district", sa.String(128), nullable=False),
        sa.Column("degree", sa.String(16), nullable=False),
        **TABLE,
    )
    op.create_table(
        "opening_posting",
        sa.Column("posting_id", sa.BigInteger(), primary_key=True, autoincrement=False),
        sa.Column("opening_id", sa.BigInteger(), nullable=False),
        sa.Column("why", sa.Text(), nullable=False),
        **TABLE,
    )
    op.create_index("ix_opening_posting_opening", "opening_posting", ["opening_id"])


def downgrade() -> None:
    op.drop_index("ix_opening_posting_opening", table_name="opening_posting")
    op.drop_table("opening_posting")
    op.drop_table("opening")
