"""Salaries as numbers: each site's salary text read into CNY a month.

``parse(source, text)`` gives a :class:`Salary`; ``NO_FIGURE`` where the text
says there is none (面议, empty); None where no rule knows the text, which the
caller counts (``farm/salary/unparsed``) rather than guesses. The common
grammar is farm.salary.rules'; each site's package adds what that site writes (its
salary.py, farm/sites/<site>/).
"""

from functools import lru_cache

from farm import sites
from farm.salary.rules import NO_FIGURE, Grammar, Salary, read

__all__ = ["NO_FIGURE", "Salary", "UNPARSED_STAT", "columns", "parse"]

UNPARSED_STAT = "farm/salary/unparsed"
COLUMNS = ("salary_min", "salary_max", "salary_months", "salary_unit")
_NONE = (None, None, None, None)
_COMMON = Grammar()


@lru_cache(maxsize=1 << 16)  # a crawl sees a few thousand distinct texts, each many times
def parse(source: str | None, text: str | None) -> Salary | None:
    if text is not None and not isinstance(text, str):
        return None
    site = sites.find(source)  # the registry (farm.sites): each site's own forms, else the common grammar
    return read(text, site.salary if site is not None else _COMMON)


def columns(source: str | None, text) -> tuple:
    """The posting's (salary_min, salary_max, salary_months, salary_unit)."""
    salary = parse(source, text)
    return _NONE if salary is None else salary.values()
