"""Small parsing helpers the three site spiders share."""

import json
import re
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from farm.spiders.base import ParseError

# The sites print their times in China Standard Time.
SITE_TZ = ZoneInfo("Asia/Shanghai")
SITE_TIME_FORMATS = ("%Y-%m-%d %H:%M:%S", "%Y-%m-%d %H:%M", "%Y-%m-%d")
# exactly those formats, zero-padded: fromisoformat reads them the same way
_ISO_LIKE = re.compile(r"\d{4}-\d\d-\d\d(?: \d\d:\d\d(?::\d\d)?)?")


def response_text(response) -> str:
    try:
        return response.text
    except AttributeError:  # a bare Response: binary or unknown content type
        return response.body.decode("utf-8", "replace")


def response_json(response):
    """The body as JSON, or None when it is not JSON (decoded once per response, by Scrapy)."""
    try:
        return response.json() if hasattr(response, "json") else json.loads(response_text(response))
    except ValueError:
        return None


def postings_list(value, where: str) -> list:
    """A page's postings as the site lists them: absent or null is a page without postings; anything but
    a list is a ParseError naming ``where``."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise ParseError(f"{where} is {json_kind(value)}, not a list")
    return value


def area_of(*parts) -> str | None:
    """A posting's area from the site's district parts, as "district·street"; None without any."""
    return "·".join(part for part in parts if part) or None


def json_kind(value) -> str:
    """What a decoded JSON value is, for an error message: "an object", "a string", "true"."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return "a number"
    kinds = {dict: "an object", list: "a list", str: "a string", type(None): "null"}
    return kinds.get(type(value), type(value).__name__)


def site_time(value) -> datetime | None:
    """A site's publish time (text in China time, or epoch ms) as an aware datetime."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return datetime.fromtimestamp(value / 1000, UTC).astimezone(SITE_TZ)
    text = str(value).strip()
    if _ISO_LIKE.fullmatch(text):  # the common case, parsed without strptime's cost
        try:
            return datetime.fromisoformat(text).replace(tzinfo=SITE_TZ)
        except ValueError:  # a month 13 and the like: no format reads it either
            return None
    for fmt in SITE_TIME_FORMATS:
        try:
            return datetime.strptime(text, fmt).replace(tzinfo=SITE_TZ)
        except ValueError:
            continue
    return None


def to_int(value) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def unique_tags(tags) -> list[str]:
    """Non-empty tags as strings, first occurrence kept."""
    return list(dict.fromkeys(str(tag) for tag in tags if tag))


def text_or_none(value):
    """A site's text as it wrote it, or None when it is missing or blank: the sites send "" for a
    field they leave empty, and farm stores that as NULL, not ''."""
    if isinstance(value, str) and not value.strip():
        return None
    return value
