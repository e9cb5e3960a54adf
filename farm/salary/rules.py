"""The grammar every site's salary text is read by, and what it turns it into.

A text is read, after NFKC (full-width digits and signs become ASCII), with
its spaces removed and its letters in lower case, as::

    [年薪|月薪|日薪|时薪] low [unit] [- high [unit]] [/period] [以上|以下|起] [·N薪]

- unit: ``k``/``千`` (thousand), ``w``/``万`` (ten thousand), ``元`` (one); a
  range with one unit takes it at its high end for both (``1-1.5万``);
- period: ``/月`` (the default), ``/天`` ``/日`` (× 21.75 working days a month),
  ``/时`` ``/小时`` (× 8 hours × 21.75), ``/年`` (÷ 12), or the prefix that names it;
- one figure is both ends; with ``以上`` / ``起`` it is only the low end, with ``以下`` only the high;
- ``·13薪`` (or ``*13薪``, ``13薪``): months paid a year, 12 to 24.

The result is CNY a month, rounded to the yuan. A text that fits the grammar
but not a real salary (a low end above the high one, a month's pay below 100
yuan or above ten million, a bare number on a site that never writes one) is
not read: no number is better than a wrong one.
"""

import re
import unicodedata
from dataclasses import dataclass

# working days and hours of a month: China's statutory 21.75 days, 8 hours a day
DAYS_A_MONTH = 21.75
HOURS_A_DAY = 8
MONTHLY = {"month": 1.0, "day": DAYS_A_MONTH, "hour": HOURS_A_DAY * DAYS_A_MONTH, "year": 1 / 12}
PLAUSIBLE = (100, 10_000_000)  # yuan a month
MONTHS = (12, 24)  # months paid a year

_SCALE = {"k": 1000, "千": 1000, "w": 10000, "万": 10000, "元": 1}
_PERIOD = {"月": "month", "天": "day", "日": "day", "时": "hour", "小时": "hour", "年": "year"}
_PREFIX = {"年薪": "year", "月薪": "month", "日薪": "day", "时薪": "hour"}
_NUMBER = r"\d+(?:\.\d+)?"
_UNIT = r"k|千|w|万|元"
_TEXT = re.compile(
    rf"(?P<prefix>年薪|月薪|日薪|时薪)?"
    rf"(?P<low>{_NUMBER})(?P<low_unit>{_UNIT})?"
    rf"(?:(?:-|~|至|到|—|–)(?P<high>{_NUMBER})(?P<high_unit>{_UNIT})?)?"
    rf"(?:(?:/|每)(?P<period>小时|月|天|日|时|年))?"
    rf"(?P<end>以上|以下|起)?"
    rf"(?:[·.*x×]?(?P<months>\d{{1,2}})薪)?"
)
_SPACES = re.compile(r"\s+")


@dataclass(frozen=True)
class Salary:
    """A salary as numbers: CNY a month (``min``/``max``, either may be None for a one-ended
    range), months paid a year when the text says, and the period it was given by."""

    min: int | None
    max: int | None
    months: int | None
    unit: str | None  # month | day | hour | year

    def values(self) -> tuple:
        return self.min, self.max, self.months, self.unit


NO_FIGURE = Salary(None, None, None, None)  # the text says there is no number (面议, empty)


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
    if text in COMMON_NO_FIGURE or text in grammar.no_figure:
        return NO_FIGURE
    match = _TEXT.fullmatch(text)
    if match is None:
        return None
    return _numbers(match, grammar)


def _numbers(match: re.Match, grammar: Grammar) -> Salary | None:
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
        # a bare number: yuan where a period is named (200/天) or the site writes bare yuan
        if not (period or prefix) and not (grammar.bare_yuan and low >= 1000):
            return None
        low_unit = high_unit = "元"
    factor = MONTHLY[unit]
    low = round(low * _SCALE[low_unit] * factor)
    high = None if high is None else round(high * _SCALE[high_unit] * factor)
    end = match["end"]
    if end and high is not None:
        return None  # 10-20k以上: which end is meant?
    if end == "以下":
        low, high = None, low
    elif high is None and not end:
        high = low  # one figure (150元/天): both ends
    if high is not None and low is not None and low > high:
        return None
    if not all(PLAUSIBLE[0] <= value <= PLAUSIBLE[1] for value in (low, high) if value is not None):
        return None
    months = match["months"] and int(match["months"])
    if months is not None and not MONTHS[0] <= months <= MONTHS[1]:
        return None
    return Salary(low, high, months, unit)
