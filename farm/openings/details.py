"""What else tells one job from another at one company: where it is, the degree and experience it asks for,
each in one form whatever a site's wording, and how two postings' values compare.

A place is its district (the stem: 朝阳 of 朝阳区, 北京-朝阳区 and 朝阳区望京) and the other words a site
names beside it (a business area: 望京). Two places agree when their districts are equal, or when one
names only words and one of them is the other's district or word (海淀 and 海淀区·中关村; 望京 and
朝阳区·望京); they differ when both name a district and the districts differ; otherwise nothing is known.
A degree or experience compares only where both postings name one: a site that leaves it out (51job's
empty degree, 学历不限, 经验不限) says nothing.
"""

import re
import unicodedata
from functools import lru_cache

AGREE, DIFFER, UNKNOWN = "agree", "differ", "unknown"

DEGREES = ("博士", "硕士", "研究生", "本科", "大专", "专科", "高中", "中专", "中技")
SAME_DEGREE = {"中技": "中专", "研究生": "硕士", "专科": "大专"}
# a district's name: a few characters before 区 or 县 (新区, 开发区: 滨海新区)
DISTRICT = re.compile(r"([\u4e00-\u9fff]{1,5}?)(?:新区|区|县)")
PLACE_PARTS = re.compile(r"[·・\-—/|\s,，]+")
YEARS = re.compile(r"(\d+)\s*(?:-|~|至|到)\s*(\d+)\s*年|(\d+)\s*年以[上内]|(\d+)\s*年")
FRESH = ("应届", "在校", "无经验", "实习")


def _plain(text: str | None) -> str:
    return unicodedata.normalize("NFKC", text).strip() if text else ""


@lru_cache(maxsize=1 << 14)  # a day's postings repeat their wordings
def place_of(area: str | None, city: str = "") -> str:
    """The area as ``district·word·word`` (the district stem first, '' where none is named): '北京-朝阳区' →
    '朝阳', '朝阳区·望京' → '朝阳·望京', '望京' → '·望京'; '' for none."""
    text = _plain(area)
    if city:
        text = text.removeprefix(city).removeprefix("市")
    if not text:
        return ""
    district = ""
    words = []
    for part in PLACE_PARTS.split(text):
        if not part or part == city:
            continue
        found = DISTRICT.match(part) if not district else None
        if found:
            district = found.group(1)
            rest = part[found.end() :]
            if rest:
                words.append(rest)
        else:
            words.append(part.removesuffix("市"))
    return "·".join([district, *words])


def district_of(area: str | None) -> str:
    """The district stem of an area ('朝阳区·望京' → '朝阳'); '' for none named."""
    return place_of(area).split("·", 1)[0]


def compare_places(one: str, other: str) -> str:
    if not one or not other:
        return UNKNOWN
    district, *words = one.split("·")
    other_district, *other_words = other.split("·")
    if district and other_district:
        return AGREE if district == other_district else DIFFER
    named = {district, *words} - {""}
    other_named = {other_district, *other_words} - {""}
    return AGREE if named & other_named else UNKNOWN


@lru_cache(maxsize=1 << 14)  # a day's postings repeat their wordings
def degree_of(text: str | None) -> str:
    """The degree a posting asks for, one word for every site's wording ('本科及以上', '统招本科' → '本科';
    '研究生' → '硕士'); '' for none."""
    text = _plain(text)
    for degree in DEGREES:
        if degree in text:
            return SAME_DEGREE.get(degree, degree)
    return ""


@lru_cache(maxsize=1 << 14)  # a day's postings repeat their wordings
def experience_of(text: str | None) -> str:
    """The years of experience asked for as 'low-high' ('3-5年经验' → '3-5', '5年以上' → '5-', '应届生' →
    '0-0'); '' for none or 不限."""
    text = _plain(text)
    if not text:
        return ""
    if any(word in text for word in FRESH):
        return "0-0"
    found = YEARS.search(text)
    if found is None:
        return ""
    low, high, above, one = found.groups()
    if low is not None:
        return f"{int(low)}-{int(high)}"
    if above is not None:
        return f"{int(above)}-" if "上" in found.group(0) else f"0-{int(above)}"
    return f"{int(one)}-{int(one)}"


def compare_words(one: str, other: str) -> str:
    if not one or not other:
        return UNKNOWN
    return AGREE if one == other else DIFFER


def compare_pay(low: int | None, high: int | None, other_low: int | None, other_high: int | None) -> str:
    """``same``: the same figures; ``agree``: the ranges' lows within a fifth of each other and the ranges
    overlapping; ``near``: overlapping, the lows further apart; ``differ``: apart; ``unknown``: one names no
    figure."""
    if low is None or other_low is None:
        return UNKNOWN
    top, other_top = high or low, other_high or other_low
    if (low, top) == (other_low, other_top):
        return "same"
    if low > other_top or other_low > top:
        return DIFFER
    return AGREE if abs(low - other_low) <= 0.2 * max(low, other_low) else "near"
