"""Salaries in their own pay period: salary_min and salary_max hold yuan an hour, a day, a month
or a year as the text gives them (salary_unit), no longer CNY a month converted at a fixed rate;
salary_unit is ``none`` where the text says there is no figure (面议), and NULL only where no rule
reads the text. Every posting's numbers are read again from its salary text (farm.salary).

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-11
"""

from alembic import op
from sqlalchemy import column, func, table, update

from farm.salary.backfill import backfill

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

# what 0006 multiplied each period by to make CNY a month
_MONTHLY_BEFORE = {"day": 21.75, "hour": 8 * 21.75, "year": 1 / 12}


def upgrade() -> None:
    backfill(op.get_bind())


def downgrade() -> None:
    posting = table("job_posting", column("salary_min"), column("salary_max"), column("salary_unit"))
    conn = op.get_bind()
    for unit, factor in _MONTHLY_BEFORE.items():
        conn.execute(
            update(posting)
            .where(posting.c.salary_unit == unit)
            .values(
                salary_min=func.round(posting.c.salary_min * factor),
                salary_max=func.round(posting.c.salary_max * factor),
            )
        )
    conn.execute(update(posting).where(posting.c.salary_unit == "none").values(salary_unit=None))
