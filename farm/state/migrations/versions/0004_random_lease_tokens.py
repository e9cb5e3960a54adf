"""Random lease tokens of 53 bits: ``keyword.lease_token`` becomes a BIGINT.

A claim gives each keyword a random token (farm.state.lease.new_lease_token), which an
INT cannot hold. The tokens already in the table stay as they are: the next claim of
each keyword replaces its token with a random one.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-03
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("keyword") as batch:
        batch.alter_column(
            "lease_token",
            existing_type=sa.Integer(),
            type_=sa.BigInteger(),
            existing_nullable=False,
            existing_server_default="0",
        )


def downgrade() -> None:
    # a random token does not fit an INT: the keywords held under one lose their leases (writes get 409)
    op.execute("UPDATE keyword SET lease_token = 0 WHERE lease_token > 2147483647")
    with op.batch_alter_table("keyword") as batch:
        batch.alter_column(
            "lease_token",
            existing_type=sa.BigInteger(),
            type_=sa.Integer(),
            existing_nullable=False,
            existing_server_default="0",
        )
