"""What a keyword row may hold, and when two rows are one search; the store and the `farm` command both
check it here.

A keyword no crawl could use is refused at input, not found out at crawl time
(where it would spend its retries in a moment): a city its source's spider does
not know, or a city or job with characters that are invisible or control the
display (a tab, ESC, a bidi override, a zero-width space), which make it
unreadable or look like another keyword.

Two keywords the site searches alike are one (``search_key``): the city by its site code (530 and 北京 on
zhilian), the job as the sites compare it, in Unicode's compatibility form (full-width Ｐｙｔｈｏｎ is
Python), case-folded (Python is python), its runs of blanks one space. The city is stored in one spelling
(farm.sites.cities.canonical_city); the job as it was first given.
"""

import unicodedata

from farm.errors import KeywordError
from farm.sites import known_sources
from farm.sites.cities import accepted_cities, canonical_city, city_code
from farm.state.models import CITY_MAX, JOB_MAX

# Unicode categories refused inside a city or job: controls (C0, DEL, C1), format
# characters (bidi overrides and isolates, zero-width spaces and joiners, BOM, soft
# hyphen), line and paragraph separators, surrogates and private use.
_REFUSED = {
    "Cc": "a control character",
    "Cf": "a format character (invisible, or reordering the text)",
    "Zl": "a line separator",
    "Zp": "a paragraph separator",
    "Cs": "a lone surrogate",
    "Co": "a private-use character",
}
# letters (category Lo) that display as nothing at all, like a zero-width space
_FILLERS = {"\u115f", "\u1160", "\u3164", "\uffa0"}


def validate_keyword(source: str, city: str, job: str) -> tuple[str, str, str]:
    """The keyword with surrounding blanks removed, in Unicode's composed form (NFC: "café"
    typed with one character or with "e" and a combining accent is one keyword), its city in the
    one spelling farm keeps (farm.sites.cities.canonical_city), or KeywordError."""
    source, city, job = (cleaned(v) for v in (source, city, job))
    sources = known_sources()
    if source not in sources:
        raise KeywordError(f"unknown source {source!r} (expected one of: {', '.join(sources)})")
    for name, value, limit in (("city", city, CITY_MAX), ("job", job, JOB_MAX)):
        if not value:
            raise KeywordError(f"empty {name}")
        if len(value) > limit:
            raise KeywordError(f"{name} is {len(value)} characters long (at most {limit})")
        _check_characters(name, value)
    canonical = canonical_city(source, city)
    if canonical is None:
        raise KeywordError(f"unknown city {city!r} for {source}: use {accepted_cities(source)}")
    return source, canonical, job


def cleaned(value: object) -> str:
    """A field as typed, without its surrounding blanks, in Unicode's composed form (NFC)."""
    return unicodedata.normalize("NFC", str(value if value is not None else "")).strip()


def search_key(source: str, city: str, job: str) -> tuple[str, str, str]:
    """What two keywords share when they are one search: the source, the city's site code (the city as
    stored when its source no longer knows it), the job NFKC-normalised, case-folded, blanks collapsed."""
    code = city_code(source, city) if source in known_sources() else None
    folded = " ".join(unicodedata.normalize("NFKC", job).casefold().split())
    return source, code or city, folded


def _check_characters(name: str, value: str) -> None:
    for at, ch in enumerate(value, 1):
        kind = "an invisible filler" if ch in _FILLERS else _REFUSED.get(unicodedata.category(ch))
        if kind:
            label = unicodedata.name(ch, "")
            raise KeywordError(
                f"{name} {value!r} has {kind}, U+{ord(ch):04X}{' ' + label if label else ''}, "
                f"at character {at}: remove it"
            )
