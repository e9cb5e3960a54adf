"""The evidence's weights of the openings: ``opening_weight``, a row a field's outcome (and the prior), as
farm.openings.estimate learnt them from the postings, so that each day's update weighs as the first did
until a rebuild learns them again (farm.openings.stored).

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-06
"""

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "opening_weight",
        sa.Column("field", sa.String(16), primary_key=True),
        sa.Column("outcome", sa.String(16), primary_key=True),
        sa.Column("weight", sa.Float(), nullable=False),
        sa.Column("pairs", sa.Integer(), nullable=False),
        mysql_charset="utf8mb4",
        mysql_collate="utf8mb4_bin",
        mysql_engine="InnoDB",
    )


def downgrade() -> None:
    op.drop_table("opening_weight")
