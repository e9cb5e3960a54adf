"""The grammar every site's salary text is read by, and what it turns it into.

A text is read, after NFKC (full-width digits and signs become ASCII), with
its spaces removed, its letters in lower case and the commas that group
digits (``1,5000``, ``8,000``) dropped, as::

    [年薪|月薪|日薪|时薪] low [unit] [- high [unit]] [以上|以下|起] [/period] [以上|以下|起] [·N薪]

- unit: ``k``/``千`` (thousand), ``w``/``万`` (ten thousand), ``元`` (one), ``千元``
  and ``万元`` alike; a range with one unit takes it at its high end for both (``1-1.5万``);
- dash: ``-`` ``~`` ``〜`` ``至`` ``到`` ``—`` ``–``; the months' separator: ``·`` ``•`` ``・`` ``*`` or none;
- period: ``/月`` (the default), ``/天`` ``/日``, ``/时`` ``/小时``, ``/年``, or the prefix that names it;
- one figure is both ends; with ``以上`` / ``起`` it is only the low end, with ``以下`` only the high;
- ``·13薪``: months paid a year, 11 to 25, kept beside the figures and never multiplied
  into them (a year's figure with ``·14薪`` is the year's pay, those 14 months included);
- a bare number is yuan where a period is named (``200/天``), where its digits are
  grouped (``1,5000``), or where the site writes bare yuan (zhilian's ``salaryReal``).

The result is in yuan of the text's own period (farm.salary.monthly turns it into
pay a month, when asked, with factors the user names), rounded to the yuan. A
text that fits the grammar but not a real salary (a low end above the high one,
pay that would be below 100 yuan or above ten million a month at 21.75 working
days of 8 hours, a bare number on a site that never writes one) is not read: no
number is better than a wrong one.
"""

import math
import re
import unicodedata
from dataclasses import dataclass

PERIODS = ("hour", "day", "month", "year")
NO_PERIOD = "none"  # the text says there is no figure (面议)
# a period's pay as a month's, only to judge whether a figure is plausible (21.75 days of 8 hours)
_PLAUSIBLE_MONTH = {"month": 1.0, "day": 21.75, "hour": 174.0, "year": 1 / 12}
PLAUSIBLE = (100, 10_000_000)  # yuan a month
MONTHS = (11, 25)  # months paid a year

_SCALE = {"k": 1000, "千": 1000, "w": 10000, "万": 10000, "元": 1}
_PERIOD = {"月": "month", "天": "day", "日": "day", "时": "hour", "小时": "hour", "年": "year"}
_PREFIX = {"年薪": "year", "月薪": "month", "日薪": "day", "时薪": "hour"}
_NUMBER = r"\d+(?:\.\d+)?"
_UNIT = r"千元|万元|k|千|w|万|元"
_DASH = r"-|~|〜|至|到|—|–"
_END = r"以上|以下|起"
_MONTHS = r"(?:[·•・*]?(?P<months>\d{1,2})薪)?"
_TEXT = re.compile(
    rf"(?P<prefix>年薪|月薪|日薪|时薪)?"
    rf"(?P<low>{_NUMBER})(?P<low_unit>{_UNIT})?"
    rf"(?:(?:{_DASH})(?P<high>{_NUMBER})(?P<high_unit>{_UNIT})?)?"
    rf"(?P<end>{_END})?"
    rf"(?:(?:/|每)(?P<period>小时|月|天|日|时|年))?"
    rf"(?P<end_after>{_END})?"
    rf"{_MONTHS}"
)
_NO_FIGURE_MONTHS = re.compile(rf"(?P<text>.*?){_MONTHS}")
_SPACES = re.compile(r"\s+")
_GROUPED = re.compile(r"(?<=\d),(?=(?:\d{3}|\d{4})(?!\d))")  # 8,000 and 1,5000 (China groups by ten thousand)


@dataclass(frozen=True)
class Salary:
    """A salary as numbers, in yuan of the period it is paid by (``min``/``max``, either may be
    None for a one-ended range), the months paid a year when the text says, and that period:
    hour, day, month, year, or none where the text gives no figure."""

    min: int | None
    max: int | None
    months: int | None
    unit: str | None

    def values(self) -> tuple:
        return self.min, self.max, self.months, self.unit


NO_FIGURE = Salary(None, None, None, NO_PERIOD)  # the text says there is no number (面议, empty)


@dataclass(frozen=True)
class Grammar:
    """What one site writes beyond the common grammar."""

    no_figure: frozenset = frozenset()  # whole texts that mean "no number" (面议)
    translate: dict | None = None  # str.maketrans table applied first (a site's private glyphs)
    bare_yuan: bool = False  # a range of bare numbers of 1000 and more is yuan a month


COMMON_NO_FIGURE = frozenset({"", "面议", "薪资面议", "工资面议", "薪酬面议", "待遇面议", "面谈"})


def normalise(text: str, grammar: Grammar = Grammar()) -> str:
    if grammar.translate:
        text = text.translate(grammar.translate)
    return _SPACES.sub("", unicodedata.normalize("NFKC", text)).lower()


def read(text: str | None, grammar: Grammar = Grammar()) -> Salary | None:
    """The salary ``text`` gives, NO_FIGURE when it says it gives none, None when no rule knows it."""
    if text is None:
        return NO_FIGURE
    text = normalise(text, grammar)
    no_figure = _no_figure(text, grammar)
    if no_figure is not None:
        return no_figure
    grouped = _GROUPED.search(text) is not None
    match = _TEXT.fullmatch(_GROUPED.sub("", text))
    if match is None:
        return None
    return _numbers(match, grammar, grouped)


def _no_figure(text: str, grammar: Grammar) -> Salary | None:
    """NO_FIGURE for 面议, and 面议·13薪 with its months; None for a text that gives figures."""
    match = _NO_FIGURE_MONTHS.fullmatch(text)
    words, months = match["text"], match["months"]
    if not (words in COMMON_NO_FIGURE or words in grammar.no_figure) or (months and not words):
        return None
    if months is None:
        return NO_FIGURE
    months = int(months)
    return Salary(None, None, months, NO_PERIOD) if MONTHS[0] <= months <= MONTHS[1] else None


def _numbers(match: re.Match, grammar: Grammar, grouped: bool) -> Salary | None:
    low, high = float(match["low"]), match["high"] and float(match["high"])
    low_unit, high_unit = match["low_unit"], match["high_unit"]
    if high is not None and low_unit is None:
        low_unit = high_unit  # 1-1.5万: the unit of the high end is both ends'
    elif high is not None and high_unit is None:
        return None  # 10k-15: the high end without a unit is a guess
    prefix, period = match["prefix"], match["period"]
    if prefix and period and _PREFIX[prefix] != _PERIOD[period]:
        return None  # 年薪 ... /月 contradicts itself
    unit = _PERIOD[period] if period else _PREFIX[prefix] if prefix else "month"
    if low_unit is None:
        # a bare number: yuan where a period is named (200/天), its digits are grouped, or the site writes bare yuan
        if not (period or prefix or grouped) and not (grammar.bare_yuan and low >= 1000):
            return None
        low_unit = high_unit = "元"
    low = low * _SCALE[low_unit[0]]
    high = None if high is None else high * _SCALE[high_unit[0]]
    if match["end"] and match["end_after"]:
        return None  # 以上/月以上
    end = match["end"] or match["end_after"]
    if end and high is not None:
        return None  # 10-20k以上: which end is meant?
    if end == "以下":
        low, high = None, low
    elif high is None and not end:
        high = low  # one figure (150元/天): both ends
    if high is not None and low is not None and low > high:
        return None
    scale = _PLAUSIBLE_MONTH[unit]
    if not all(PLAUSIBLE[0] <= value * scale <= PLAUSIBLE[1] for value in (low, high) if value is not None):
        return None
    months = match["months"] and int(match["months"])
    if months is not None and not MONTHS[0] <= months <= MONTHS[1]:
        return None
    return Salary(_yuan(low), _yuan(high), months, unit)


def _yuan(value: float | None) -> int | None:
    """Rounded to the yuan, halves up (1.15万: 11500, not 11499)."""
    return None if value is None else math.floor(value + 0.5 + 1e-9)
