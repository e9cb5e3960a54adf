"""Pay a month from a salary of any period: monthly pay as it is; pay by the day, the hour or
the year only through a conversion the user switches on, with its factors named.

The factors are the user's (FARM_SALARY_CONVERT, FARM_SALARY_DAYS_A_MONTH,
FARM_SALARY_HOURS_A_MONTH; docs/settings.md): a day's pay times the days of a
month, an hour's times its hours, a year's divided by the months it is paid as
(``·14薪``; 12 where the text does not say), so that a year's figure that already
holds its 14 months is divided once and never multiplied again. The report shows
the factors it used beside every figure made with them.
"""

from dataclasses import dataclass

from farm.salary.rules import Salary

DEFAULT_DAYS_A_MONTH = 21.75  # China's statutory working days a month
DEFAULT_HOURS_A_MONTH = 174.0  # 21.75 days of 8 hours
MONTHS_A_YEAR = 12  # where a year's pay does not say how many months it is paid as


@dataclass(frozen=True)
class Conversion:
    """How many days and hours make a month's pay."""

    days_a_month: float = DEFAULT_DAYS_A_MONTH
    hours_a_month: float = DEFAULT_HOURS_A_MONTH

    def factor(self, unit: str | None, months: int | None) -> float | None:
        """What a figure paid by ``unit`` is multiplied by to be a month's; None for no figure."""
        return {
            "month": 1.0,
            "day": self.days_a_month,
            "hour": self.hours_a_month,
            "year": 1 / (months or MONTHS_A_YEAR),
        }.get(unit)

    def describe(self) -> str:
        return (
            f"a day's pay × {self.days_a_month:g} days, an hour's × {self.hours_a_month:g} hours, "
            f"a year's ÷ the months it is paid as ({MONTHS_A_YEAR} where the text does not say)"
        )


def monthly(salary: Salary | None, conversion: Conversion | None) -> tuple[float | None, float | None] | None:
    """The salary's (low, high) as pay a month; None where it gives none: no figure, or a period
    other than the month and no ``conversion``."""
    if salary is None:
        return None
    factor = 1.0 if salary.unit == "month" else conversion and conversion.factor(salary.unit, salary.months)
    if factor is None:
        return None

    def scaled(value):
        return None if value is None else value * factor

    return scaled(salary.min), scaled(salary.max)
