"""Identities' learned paces: ``identity_pace``, the pace each identity (a proxy, or this machine's own
address) learned at a site, which the next crawl of the site starts from (farm.crawl.identities).

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-06
"""

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "identity_pace",
        sa.Column("source", sa.String(16), primary_key=True),
        sa.Column("identity", sa.String(64), primary_key=True),
        sa.Column("pace", sa.Float(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        mysql_charset="utf8mb4",
        mysql_collate="utf8mb4_bin",
        mysql_engine="InnoDB",
    )


def downgrade() -> None:
    op.drop_table("identity_pace")
