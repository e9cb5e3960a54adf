"""The keyword state table.

Revision ID: 0001
Revises:
Create Date: 2025-01-01
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

# SQLite only auto-increments an INTEGER PRIMARY KEY.
Id = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "keyword",
        sa.Column("id", Id, primary_key=True, autoincrement=True),
        sa.Column("source", sa.String(16), nullable=False),
        sa.Column("city", sa.String(64), nullable=False),
        sa.Column("job", sa.String(128), nullable=False),
        sa.Column("last_requested_date", sa.Date(), nullable=True),
        sa.Column("last_requested_at", sa.DateTime(), nullable=True),
        sa.Column("crawl_status", sa.String(16), nullable=False, server_default="idle"),
        sa.Column("last_completed_page", sa.Integer(), nullable=False, server_default="0"),
        sa.Column("total_pages", sa.Integer(), nullable=True),
        sa.Column("jobs_found", sa.Integer(), nullable=False, server_default="0"),
        sa.Column("crawl_started_at", sa.DateTime(), nullable=True),
        sa.Column("crawler_id", sa.String(128), nullable=True),
        sa.Column("error_message", sa.Text(), nullable=True),
        sa.Column("retry_count", sa.Integer(), nullable=False, server_default="0"),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.UniqueConstraint("source", "city", "job", name="uq_keyword_source_city_job"),
        mysql_charset="utf8mb4",
        mysql_collate="utf8mb4_bin",  # ids and keywords are case-sensitive (boss ids mix case)
        mysql_engine="InnoDB",
    )


def downgrade() -> None:
    op.drop_table("keyword")
