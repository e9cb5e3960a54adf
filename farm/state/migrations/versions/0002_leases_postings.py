"""Leases (token, heartbeat, pages ahead of the watermark), claim indexes, postings.

Revision ID: 0002
Revises: 0001
Create Date: 2025-01-02
"""

import sqlalchemy as sa
from alembic import op

from farm.state.posting_fields import posting_columns

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

Id = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    with op.batch_alter_table("keyword") as batch:
        batch.add_column(sa.Column("lease_token", sa.Integer(), nullable=False, server_default="0"))
        batch.add_column(sa.Column("heartbeat_at", sa.DateTime(), nullable=True))
        batch.add_column(sa.Column("pages_ahead", sa.String(1024), nullable=False, server_default=""))
    # rows crawling at upgrade time: their last sign of life is their start
    op.execute(
        "UPDATE keyword SET heartbeat_at = crawl_started_at WHERE crawl_status = 'crawling' AND heartbeat_at IS NULL"
    )
    op.create_index("ix_keyword_fresh", "keyword", ["source", "last_requested_date", "id"])
    op.create_index("ix_keyword_status", "keyword", ["source", "crawl_status", "last_requested_date", "id"])
    op.create_index("ix_keyword_heartbeat", "keyword", ["crawl_status", "heartbeat_at"])

    op.create_table(
        "job_posting",
        sa.Column("id", Id, primary_key=True, autoincrement=True),
        # the posting fields' list (it has not changed since this revision)
        *posting_columns(sa.DateTime),
        sa.UniqueConstraint("source", "job_id", name="uq_job_posting_source_job_id"),
        mysql_charset="utf8mb4",
        mysql_collate="utf8mb4_bin",  # ids and keywords are case-sensitive (boss ids mix case)
        mysql_engine="InnoDB",
    )
    op.create_index("ix_job_posting_keyword", "job_posting", ["keyword_id"])


def downgrade() -> None:
    op.drop_index("ix_job_posting_keyword", table_name="job_posting")
    op.drop_table("job_posting")
    op.drop_index("ix_keyword_heartbeat", table_name="keyword")
    op.drop_index("ix_keyword_status", table_name="keyword")
    op.drop_index("ix_keyword_fresh", table_name="keyword")
    with op.batch_alter_table("keyword") as batch:
        batch.drop_column("pages_ahead")
        batch.drop_column("heartbeat_at")
        batch.drop_column("lease_token")
