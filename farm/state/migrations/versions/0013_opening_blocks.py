"""Openings read by their blocks: ``opening.block`` (the city and the company key's first two characters,
indexed) and ``opening.experience``, and ``company_pair`` (the brand ↔ legal-name pairs learnt), so that
`farm openings update` reads the openings and pairs of its new postings only (farm.openings.stored).

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

BATCH = 5000


def upgrade() -> None:
    op.add_column("opening", sa.Column("experience", sa.String(16), nullable=False, server_default=""))
    op.add_column("opening", sa.Column("block", sa.String(96), nullable=False, server_default=""))
    connection = op.get_bind()
    opening = sa.table("opening", sa.column("id"), sa.column("city"), sa.column("company_key"), sa.column("block"))
    rows = connection.execute(sa.select(opening.c.id, opening.c.city, opening.c.company_key)).all()
    for start in range(0, len(rows), BATCH):
        connection.execute(
            opening.update().where(opening.c.id == sa.bindparam("opening_id")).values(block=sa.bindparam("key")),
            [{"opening_id": i, "key": f"{city}|{company[:2]}"} for i, city, company in rows[start : start + BATCH]],
        )
    op.create_index("ix_opening_block", "opening", ["block"])
    op.create_table(
        "company_pair",
        sa.Column("brand_key", sa.String(255), primary_key=True),
        sa.Column("legal_key", sa.String(255), nullable=False),
        mysql_charset="utf8mb4",
        mysql_collate="utf8mb4_bin",
        mysql_engine="InnoDB",
    )


def downgrade() -> None:
    op.drop_table("company_pair")
    op.drop_index("ix_opening_block", table_name="opening")
    op.drop_column("opening", "block")
    op.drop_column("opening", "experience")
