"""Retries that wait, and blocks that are counted.

- ``retry_at``: a failed row is not claimed again before this time (FARM_RETRY_DELAY after it failed).
- ``blocked_claims``: the claims of today that ended in a site block; at FARM_MAX_BLOCKED_CLAIMS
  the keyword ends ``failed`` for the day.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-30
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("keyword") as batch:
        batch.add_column(sa.Column("retry_at", sa.DateTime(), nullable=True))
        batch.add_column(sa.Column("blocked_claims", sa.Integer(), nullable=False, server_default="0"))


def downgrade() -> None:
    with op.batch_alter_table("keyword") as batch:
        batch.drop_column("blocked_claims")
        batch.drop_column("retry_at")
