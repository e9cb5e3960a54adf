"""Hostile postings: what live data can hold, in each site's own fields, for a share of postings.

A posting is hostile when a stable hash of (fault seed, site, posting id) falls under `hostile_rate`. It keeps
its id, so /_sandbox/truth and what a crawl must store stay the same, but its other fields carry:

- times: `0001-01-01 00:00:00`, `9999-12-31 23:59:59`, `2026-02-30 25:61:00`, `""` or garbage text; a time
  given as epoch ms (an int) becomes ±2**70, -1, or the ms of year 10000 or of year 1;
- text (title, company, salary, city, area, experience, degree, URLs): either 300 to 3000 characters of emoji
  (😀), CJK Extension B (𠀀), combining marks and ordinary CJK (a URL keeps its scheme and host and grows in
  its path), or the value with NUL, ESC, a bidi override, a newline and a tab inside;
- tag lists holding numbers, null, booleans, nested lists and objects (beside one normal tag);
- integers beyond 64 bits (2**70, -2**70) and ±1e308 in numeric fields the crawlers keep only in `raw`;
- an object nested 120 deep (past MySQL's JSON depth of 100) in an unused field.

Which fields of its items are which, each site's imitation says (its IMITATION's ``hostile``, a Fields:
farm.sandbox.imitation); a site that names none shows its postings unspoiled, though the truth still
names those drawn.

Which value a field gets follows the posting's hash: text fields alternate long / control characters (the
next hostile posting of the other parity swaps them), times rotate through the five, the numbers fields hold
all four numbers in a rotated order. So a few hostile postings of one site exercise every case in every field.
Pages holding a hostile posting are rendered by the stdlib json (results.to_json): orjson refuses 2**70.
"""

from dataclasses import dataclass

from .data import fraction, stable_hash
from .sites import imitation


@dataclass(frozen=True)
class Fields:
    """The fields of a site's items, by what hostile values they get."""

    id: str
    times: tuple
    texts: tuple  # a name, or (object, name) inside a nested object
    urls: tuple
    tags: dict  # list field → None (a list of strings) or the key of its {key: string} objects
    numbers: tuple
    deep: str


TIMES = ("0001-01-01 00:00:00", "9999-12-31 23:59:59", "2026-02-30 25:61:00", "", "昨天 ??:?? 发布")
EPOCH_MS = (2**70, -(2**70), -1, 253_402_300_800_000, -62_135_596_800_000)  # …, year 10000, year 1; as many as TIMES
NUMBERS = (2**70, -(2**70), 1e308, -1e308)
# 4-byte characters, combining marks (é as e + U+0301, a strike-through, an enclosing circle), a ZWJ emoji and
# ordinary CJK; a long value is a slice of it, so the slice may start or end inside a combining sequence.
_ALPHABET = "😀𠀀职位e\u0301\u0336𠮷🚀工程师a\u20dd👩\u200d💻𤭢公司薪资"
_LONG = _ALPHABET * (3100 // len(_ALPHABET) + 2)
MIN_LONG, MAX_LONG = 300, 3000
PLAIN_TAGS = (7, None, ["嵌套", [1, None]], {"tag": "对象"}, -(2**70), 1e308, False, "正常")
DEPTH = 120


def _deep():
    node = [1, None, "底"]
    for level in range(DEPTH - 1):
        node = {f"l{DEPTH - 1 - level}": node}
    return node


DEEP = _deep()


def picked(faults, site, pid):
    """The posting's hash when it is hostile under the fault config, else None."""
    if faults is None or faults.hostile_rate <= 0:
        return None
    h = stable_hash(faults.seed, "hostile", site, pid)
    return h if fraction(h) < faults.hostile_rate else None


def spoil(site, items, faults):
    """Replace the hostile items of one page (in place) by their hostile copies; True when there was one."""
    if faults is None or faults.hostile_rate <= 0:
        return False
    fields, spoiled = imitation(site).hostile, False
    if fields is None:
        return False
    for n, item in enumerate(items):
        h = picked(faults, site, item[fields.id])
        if h is not None:
            items[n], spoiled = hostile(item, fields, h), True
    return spoiled


def hostile(item, fields, h):
    """A copy of a site's item (dict) with every field of `fields` but the id made hostile, by hash `h`."""
    item = dict(item)
    for i, name in enumerate(fields.times):
        _set(item, name, lambda value, i=i: (EPOCH_MS if isinstance(value, int) else TIMES)[(h + i) % len(TIMES)])
    for i, name in enumerate(fields.texts + fields.urls):
        url = name in fields.urls
        if (h + i) % 2:
            _set(item, name, _control)
        else:
            _set(item, name, lambda value, i=i, url=url: _long_value(value, stable_hash(h, i), url))
    for name, key in fields.tags.items():
        item[name] = _tags(key)
    for i, name in enumerate(fields.numbers):
        _set(item, name, lambda value, i=i: NUMBERS[(h + i) % len(NUMBERS)])
    item[fields.deep] = DEEP
    return item


def _set(item, name, make):
    """item[name] = make(item[name]); a (parent, name) pair changes a copy of the nested object."""
    if isinstance(name, tuple):
        parent, name = name
        item[parent] = nested = dict(item[parent])
        nested[name] = make(nested[name])
    else:
        item[name] = make(item[name])


def _long_value(value, h, url):
    start = h % len(_ALPHABET)
    text = _LONG[start : start + MIN_LONG + (h >> 8) % (MAX_LONG - MIN_LONG + 1)]
    if not url:
        return text
    scheme, _, rest = value.partition("://")
    host, _, path = rest.partition("/")
    return f"{scheme}://{host}/{text}/{path}"


def _control(value):
    return f"\u202e{value}\x00\x1b[31m\n\t{value}\u202c"


def _tags(key):
    if key is None:
        return list(PLAIN_TAGS)
    return [{key: 7}, None, {key: None}, {key: ["嵌套", {"对象": 1}]}, 2**70, ["列表"], {"other": "x"}, {key: "正常"}]
