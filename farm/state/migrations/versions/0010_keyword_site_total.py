"""What the site says a keyword holds.

- ``keyword.site_total``: the postings the site's answers say the keyword holds, past any page cap
  (Boss ``resCount``, 51job ``totalCount``, 智联 ``positionCount``), the latest a page told; NULL
  until a page tells one. ``farm stats`` and the report set it against what the cap let farm take.

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-04
"""

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("keyword") as batch:
        batch.add_column(sa.Column("site_total", sa.Integer(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("keyword") as batch:
        batch.drop_column("site_total")
