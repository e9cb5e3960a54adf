"""Postings made fit for ``job_posting``, whatever a site sent.

One odd value must never fail the write its page rides in (the keyword would go
partial, be claimed first by the next crawl and fail it again). Two steps:

- In the crawl's process (the pipeline), whose core is the crawl's bottleneck,
  only what must be decided there: ``key_problem`` (a posting that cannot be
  stored under its own key is dropped, never cut: two postings would merge) and
  ``encodable``, a copy orjson can encode, made only for a posting that the one
  ``orjson.dumps`` of the fast path refused.
- In the state writer, on its own core and the last stop before the database,
  whoever sent the frame: ``fit_rows`` fits each decoded row to its columns.

The rules (the limits are farm.state.posting_fields'):

- text: cut to its column's length in characters (whole code points, as utf8mb4
  VARCHAR counts them); NUL characters removed; a value that is not a string is
  stored as its JSON text;
- a key (source, job_id) longer than its column, holding NUL, or missing: the
  posting is not stored (dropped by the pipeline, reported rejected by the writer);
- time: an aware datetime, or its ISO text, from TIME_MIN to before TIME_MAX;
  anything else (no zone, out of range, unparsable) is NULL;
- JSON: NUL removed from its strings and keys; nesting beyond JSON_DEPTH_MAX
  levels becomes null; and, where orjson refused it, integers beyond 64 bits as
  their decimal text, non-string keys as their str(), lone surrogates as U+FFFD,
  sets as lists, bytes as UTF-8 text, any other object as its str() (NaN and
  infinities are orjson's null);
- keyword_id: a 64-bit integer, else NULL.
"""

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from datetime import date, datetime
from typing import Any

import orjson

from farm.salary import UNPARSED_STAT
from farm.salary import parse as parse_salary
from farm.state.posting_fields import (
    BY_NAME,
    JSON_DEPTH_MAX,
    JSONS,
    KEYS,
    REF_MAX,
    REF_MIN,
    TEXTS,
    TIME,
    TIME_MAX,
    TIME_MIN,
    Field,
)


def _limits(fields: Iterable[Field]) -> tuple[tuple[str, int], ...]:
    """(name, length) of fields that have a length (KEY and TEXT fields all have one)."""
    limits = []
    for field in fields:
        if field.length is None:
            raise TypeError(f"posting field {field.name} has no length")
        limits.append((field.name, field.length))
    return tuple(limits)


_KEY_LIMITS = _limits(KEYS)
_TEXT_LIMITS = _limits(TEXTS)
_JSON_NAMES = tuple(field.name for field in JSONS)
_SURROGATES = re.compile("[\ud800-\udfff]")
# the integers orjson encodes
_INT_MIN, _INT_MAX = -(2**63), 2**64 - 1
_SHOWN = 80  # characters of an odd key shown in a reason


def key_problem(row: Mapping[str, Any]) -> str | None:
    """Why a posting cannot be stored under its (source, job_id), or None."""
    missing = []
    for name, length in _KEY_LIMITS:
        value = row.get(name)
        if not value:
            missing.append(name)
            continue
        if type(value) is not str:
            value = str(value)
        if len(value) > length:
            return f"posting {name} of {len(value)} characters, longer than its column ({length}): {value[:_SHOWN]!r}"
        if "\x00" in value:
            return f"posting {name} holds a NUL character: {value[:_SHOWN]!r}"
    return f"posting without {', '.join(missing)}" if missing else None


# --- the crawl's side: what orjson refused ---------------------------------------


def encodable(row: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``row`` that orjson encodes, for a posting whose orjson.dumps failed."""
    fitted = {}
    for name, value in row.items():
        field = BY_NAME.get(name)
        if field is not None and field.kind == TIME:
            fitted[name] = to_time(value)
        else:
            fitted[name] = _jsonable(value, JSON_DEPTH_MAX)
    return fitted


def _jsonable(value: Any, room: int) -> Any:
    kind = type(value)
    if kind is str:
        return _SURROGATES.sub("\ufffd", value)
    if value is None or kind is bool or kind is float:
        return value  # orjson writes NaN and infinities as null
    if isinstance(value, int):
        return int(value) if _INT_MIN <= value <= _INT_MAX else str(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, dict):
        if room == 0:
            return None
        return {_key(key): _jsonable(item, room - 1) for key, item in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        if room == 0:
            return None
        return [_jsonable(item, room - 1) for item in value]
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", "replace")
    return _SURROGATES.sub("\ufffd", str(value))


def _key(key: object) -> str:
    return _SURROGATES.sub("\ufffd", key if type(key) is str else str(key))


# --- the writer's side: rows fitted to their columns ----------------------------


def fit_rows(
    rows: list[dict[str, Any]], nul: bool = True
) -> tuple[list[dict[str, Any]], list[tuple[Any, Any, str]], Counter[str]]:
    """Fit decoded rows to their columns, in place: (the rows to store, (source, job_id,
    reason) of those that cannot be, how many rows had each field changed, and under
    farm.salary.UNPARSED_STAT how many salary texts no rule knows).

    ``nul``: the rows may hold NUL characters (the writer knows from the frame's
    bytes whether any did, and skips the search when none did).
    """
    kept: list[dict[str, Any]] = []
    rejected: list[tuple[Any, Any, str]] = []
    changed: Counter[str] = Counter()
    for row in rows:
        problem = key_problem(row)
        if problem is not None:
            rejected.append((row.get("source"), _shown(row.get("job_id")), problem))
            continue
        changed.update(fit_row(row, nul))
        if parse_salary(row["source"], row.get("salary")) is None:
            changed[UNPARSED_STAT] += 1  # stored with no salary numbers, never a guess
        kept.append(row)
    return kept, rejected, changed


def _shown(key: Any) -> Any:
    # what a log line shows of a key: a hostile one may be any length
    return key[:_SHOWN] if type(key) is str else key


def fit_row(row: dict[str, Any], nul: bool = True) -> list[str]:
    """Fit one row with valid keys to its columns, in place; the names of the fields changed."""
    changed = []
    job_id = row["job_id"]
    if type(job_id) is not str:
        row["job_id"] = str(job_id)
    value: Any  # a decoded frame's: any JSON value
    for name, length in _TEXT_LIMITS:
        value = row.get(name)
        if value is None:
            continue
        text = value if type(value) is str else _json_text(value)
        if nul and "\x00" in text:
            text = text.replace("\x00", "")
        if len(text) > length:
            text = text[:length]
        if text is not value:
            row[name] = text
            changed.append(name)
    published = row.get("published_at")
    if published is not None:
        fitted = to_time(published)
        row["published_at"] = fitted
        if fitted is None:
            changed.append("published_at")
    keyword_id = row.get("keyword_id")
    if keyword_id is not None and not (type(keyword_id) is int and REF_MIN <= keyword_id <= REF_MAX):
        row["keyword_id"] = None
        changed.append("keyword_id")
    for name in _JSON_NAMES:
        value = row.get(name)
        kind = type(value)
        if kind is dict or kind is list:
            unfit = _unfit(value, JSON_DEPTH_MAX, nul)
        else:
            unfit = nul and kind is str and "\x00" in value
        if unfit:
            row[name] = _fit_json(value, JSON_DEPTH_MAX, nul)
            changed.append(name)
    return changed


def to_time(value: object) -> datetime | None:
    """An aware datetime (or its ISO text) from TIME_MIN to before TIME_MAX, else None."""
    if type(value) is str:
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            return None
    if not isinstance(value, datetime) or value.utcoffset() is None:
        return None
    if TIME_MIN.year < value.year < TIME_MAX.year - 1:
        return value  # inside the range whatever its offset (less than a day): the common case, cheap
    # comparing aware datetimes does not convert them, so year 1 or 9999 in any zone cannot overflow
    return value if TIME_MIN <= value < TIME_MAX else None


def _json_text(value: object) -> str:
    # a decoded frame holds JSON values only
    return orjson.dumps(value).decode()


def _unfit(value: Any, room: int, nul: bool) -> bool:
    """Whether the (dict or list) value nests deeper than ``room`` levels, or holds NUL when ``nul``."""
    if room == 0:
        return True
    if type(value) is dict:
        if nul and any("\x00" in key for key in value):
            return True
        value = value.values()
    for item in value:
        kind = type(item)
        if kind is dict or kind is list:
            if _unfit(item, room - 1, nul):
                return True
        elif nul and kind is str and "\x00" in item:
            return True
    return False


def _fit_json(value: Any, room: int, nul: bool) -> Any:
    kind = type(value)
    if kind is str:
        return value.replace("\x00", "") if nul else value
    if kind is dict:
        if room == 0:
            return None
        return {
            (key.replace("\x00", "") if nul else key): _fit_json(item, room - 1, nul) for key, item in value.items()
        }
    if kind is list:
        if room == 0:
            return None
        return [_fit_json(item, room - 1, nul) for item in value]
    return value
