"""What a keyword row may hold; the store and the `farm` command both check it here."""

from farm.state.models import CITY_MAX, JOB_MAX, SOURCES


class KeywordError(ValueError):
    """A (source, city, job) that cannot be stored; the message names the problem."""


def validate_keyword(source: str, city: str, job: str) -> tuple[str, str, str]:
    """The keyword with surrounding blanks removed, or KeywordError."""
    source, city, job = (str(v if v is not None else "").strip() for v in (source, city, job))
    if source not in SOURCES:
        raise KeywordError(f"unknown source {source!r} (expected one of: {', '.join(SOURCES)})")
    for name, value, limit in (("city", city, CITY_MAX), ("job", job, JOB_MAX)):
        if not value:
            raise KeywordError(f"empty {name}")
        if len(value) > limit:
            raise KeywordError(f"{name} is {len(value)} characters long (at most {limit})")
    return source, city, job
