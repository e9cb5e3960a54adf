"""Salaries as numbers: salary_min, salary_max (CNY a month), salary_months, salary_unit on
job_posting, filled for the postings already stored from their salary text (farm.salary).

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-03
"""

from alembic import op

from farm.salary.backfill import backfill
from farm.state.posting_fields import salary_columns

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("job_posting") as batch:
        for column in salary_columns():
            batch.add_column(column)
    backfill(op.get_bind())


def downgrade() -> None:
    with op.batch_alter_table("job_posting") as batch:
        for column in reversed(salary_columns()):
            batch.drop_column(column.name)
