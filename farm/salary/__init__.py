"""Salaries as numbers: each site's salary text read into CNY a month.

``parse(source, text)`` gives a :class:`Salary`; ``NO_FIGURE`` where the text
says there is none (面议, empty); None where no rule knows the text, which the
caller counts (``farm/salary/unparsed``) rather than guesses. The common
grammar is farm.salary.rules'; each site's module adds what that site writes.
"""

from functools import lru_cache

from farm.salary import boss, qcwy, zhilian
from farm.salary.rules import NO_FIGURE, Grammar, Salary, read

__all__ = ["NO_FIGURE", "Salary", "UNPARSED_STAT", "columns", "parse"]

GRAMMARS = {"boss": boss.GRAMMAR, "qcwy": qcwy.GRAMMAR, "zhilian": zhilian.GRAMMAR}
UNPARSED_STAT = "farm/salary/unparsed"
COLUMNS = ("salary_min", "salary_max", "salary_months", "salary_unit")
_NONE = (None, None, None, None)


@lru_cache(maxsize=1 << 16)  # a crawl sees a few thousand distinct texts, each many times
def parse(source: str | None, text: str | None) -> Salary | None:
    if text is not None and not isinstance(text, str):
        return None
    return read(text, GRAMMARS.get(source, Grammar()))


def columns(source: str | None, text) -> tuple:
    """The posting's (salary_min, salary_max, salary_months, salary_unit)."""
    salary = parse(source, text)
    return _NONE if salary is None else salary.values()
