"""Runs remembered: crawl_run (a row a crawl, written by farm.extensions.runs) and keyword_day (each
keyword's end of day, the history that `farm check` compares a day with).

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-10
"""

from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

Id = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
TABLE: dict[str, Any] = {"mysql_charset": "utf8mb4", "mysql_collate": "utf8mb4_bin", "mysql_engine": "InnoDB"}


def _count(name: str) -> sa.Column[int]:
    return sa.Column(name, sa.Integer(), nullable=False, server_default="0")


def upgrade() -> None:
    op.create_table(
        "crawl_run",
        sa.Column("id", Id, primary_key=True, autoincrement=True),
        sa.Column("source", sa.String(16), nullable=False),
        sa.Column("crawler_id", sa.String(128), nullable=False),
        sa.Column("machine", sa.String(128), nullable=False),
        sa.Column("started_at", sa.DateTime(), nullable=False),
        sa.Column("ended_at", sa.DateTime(), nullable=True),
        sa.Column("status", sa.String(64), nullable=False, server_default="running"),
        _count("keywords_claimed"),
        _count("keywords_ended"),
        _count("pages"),
        _count("postings"),
        sa.Column("refusals", sa.Text(), nullable=False),
        sa.Column("coverage", sa.Text(), nullable=False),
        sa.Column("stats", sa.Text(), nullable=False),
        **TABLE,
    )
    op.create_index("ix_crawl_run_source_started", "crawl_run", ["source", "started_at"])
    op.create_table(
        "keyword_day",
        sa.Column("id", Id, primary_key=True, autoincrement=True),
        sa.Column("keyword_id", sa.BigInteger(), nullable=False),
        sa.Column("day", sa.Date(), nullable=False),
        sa.Column("source", sa.String(16), nullable=False),
        sa.Column("city", sa.String(64), nullable=False),
        sa.Column("job", sa.String(128), nullable=False),
        sa.Column("crawl_status", sa.String(16), nullable=False),
        _count("jobs_found"),
        _count("last_completed_page"),
        sa.Column("total_pages", sa.Integer(), nullable=True),
        sa.UniqueConstraint("keyword_id", "day", name="uq_keyword_day_keyword_day"),
        **TABLE,
    )
    op.create_index("ix_keyword_day_day_source", "keyword_day", ["day", "source"])


def downgrade() -> None:
    op.drop_index("ix_keyword_day_day_source", table_name="keyword_day")
    op.drop_table("keyword_day")
    op.drop_index("ix_crawl_run_source_started", table_name="crawl_run")
    op.drop_table("crawl_run")
