"""What else tells one job from another at one company: its district and the degree it asks for.

Each is compared only where both postings name it: a site that leaves it out (51job's empty degree,
学历不限, no district) agrees with any.
"""

DEGREES = ("博士", "硕士", "本科", "大专", "高中", "中专", "中技")
SAME_DEGREE = {"中技": "中专"}  # 中专/中技 and 中技/中专 are one level


def district_of(area: str | None) -> str:
    """The district of a posting's area ('朝阳区·望京' → '朝阳区'); '' for none."""
    return area.split("·", 1)[0].strip() if area else ""


def degree_of(text: str | None) -> str:
    """The degree a posting asks for, one word for every site's wording ('本科及以上' → '本科'); '' for none."""
    if not text:
        return ""
    for degree in DEGREES:
        if degree in text:
            return SAME_DEGREE.get(degree, degree)
    return ""


def agree(one: str, other: str) -> bool:
    return not one or not other or one == other
