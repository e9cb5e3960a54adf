"""Indexes for the report: each of its queries over job_posting reads one index alone, never the
table (farm.report.queries). ``ix_job_posting_seen`` leads with last_seen_at (the postings seen
or gone on a day, their site, city, keyword, salary numbers and text); ``ix_job_posting_first_seen``
with first_seen_at (the new postings, their site and company).

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-12
"""

from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None

SEEN = (
    "last_seen_at",
    "first_seen_at",
    "source",
    "city",
    "keyword_id",
    "salary_unit",
    "salary_min",
    "salary_max",
    "salary_months",
    "salary",  # whether a text no rule reads (salary_unit NULL) was given at all
)
FIRST_SEEN = ("first_seen_at", "source", "company")


def upgrade() -> None:
    op.create_index("ix_job_posting_seen", "job_posting", list(SEEN))
    op.create_index("ix_job_posting_first_seen", "job_posting", list(FIRST_SEEN))


def downgrade() -> None:
    op.drop_index("ix_job_posting_first_seen", table_name="job_posting")
    op.drop_index("ix_job_posting_seen", table_name="job_posting")
