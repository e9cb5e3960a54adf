"""The report's salary figures in SQL: which postings give pay a month, and how much.

Monthly pay only, unless the user switches on a conversion (farm.salary.monthly:
the same factors, the same rule for a year's pay and its months), and the share
of each site's postings whose salary text no rule reads (salary_unit NULL; a
text that says there is no figure, 面议, is read: its unit is ``none``).
"""

from sqlalchemy import case, func, literal_column

from farm.salary.monthly import MONTHS_A_YEAR, Conversion
from farm.state.models import JobPostingRow

P = JobPostingRow.__table__.c


def gives_monthly_pay(conversion: Conversion | None):
    """The postings whose range, both ends given, is or converts to pay a month."""
    units = ("month",) if conversion is None else ("month", "day", "hour", "year")
    return P.salary_min.is_not(None) & P.salary_max.is_not(None) & P.salary_unit.in_(units)


def twice_monthly_midpoint(conversion: Conversion | None):
    """salary_min + salary_max as pay a month (a float where a conversion applies)."""
    twice = P.salary_min + P.salary_max
    if conversion is None:
        return twice
    exact = twice * literal_column("1.0")  # real arithmetic on every database (SQLite divides integers whole)
    return case(
        (P.salary_unit == "day", exact * conversion.days_a_month),
        (P.salary_unit == "hour", exact * conversion.hours_a_month),
        (P.salary_unit == "year", exact / func.coalesce(P.salary_months, MONTHS_A_YEAR)),
        else_=exact,
    )


def unread():
    """A posting whose salary text no rule reads."""
    return P.salary_unit.is_(None) & P.salary.is_not(None)
