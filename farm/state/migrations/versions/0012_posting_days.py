"""Postings' days: ``posting_day``, a row for each day a posting was seen, copied with keyword_day at the
end of each crawl of its site (farm.runs.record.keep_day): an opening gone, then back, is told from one
seen throughout (docs/openings.md).

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-04
"""

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "posting_day",
        sa.Column("posting_id", sa.BigInteger(), primary_key=True, autoincrement=False),
        sa.Column("day", sa.Date(), primary_key=True),
        sa.Column("source", sa.String(16), nullable=False),
        mysql_charset="utf8mb4",
        mysql_collate="utf8mb4_bin",
        mysql_engine="InnoDB",
    )
    op.create_index("ix_posting_day_day_source", "posting_day", ["day", "source"])


def downgrade() -> None:
    op.drop_index("ix_posting_day_day_source", table_name="posting_day")
    op.drop_table("posting_day")
