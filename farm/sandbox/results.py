"""What one search asks for (Query) and which postings its page holds (ResultPage), for every site alike.

Each site reaches only so many pages of a keyword (its imitation's MAX_PAGES, per docs/sites.md); pages past
that, and past the last posting, are empty. The truth endpoint reads the same ResultPage arithmetic, so what it says
and what the search endpoints serve cannot drift apart.
"""

import json
import math
from dataclasses import dataclass

import orjson

from . import stale as stale_totals
from .cities import city_for


@dataclass(frozen=True)
class Query:
    site: str
    city: str  # the site's city code as sent
    keyword: str
    page: int  # 1-based
    page_size: int

    @property
    def key(self):
        """What the counts are keyed by."""
        return (self.site, self.city, self.keyword, self.page)


@dataclass(frozen=True)
class ResultPage:
    number: int  # 1-based
    slots: list  # (key, id) of the postings on this page
    total: int  # postings the keyword has
    reachable: int  # postings the site lets a crawler reach
    pages: int  # pages holding postings
    stale: str | None = None  # the keyword's stale-totals variant (stale.py); its totals here are the truth

    @property
    def has_more(self):
        return self.number < self.pages


def page_of(world, query, max_pages, faults=None):
    """(ResultPage, City) for the query; an unknown city has no postings (a successful, empty search). With a
    FaultConfig, the ResultPage names the keyword's stale-totals variant; `stale.told` gives the totals it reports."""
    city = city_for(query.site, query.city)
    if city is None:
        return ResultPage(query.page, [], 0, 0, 0), None
    found = world.keyword(query.site, city, query.keyword)
    reachable = min(found.total, max_pages * query.page_size)
    start = (query.page - 1) * query.page_size
    end = min(start + query.page_size, reachable)
    slots = found.upto(end)[start:end] if end > start else []
    stale = (
        stale_totals.variant(
            faults.stale_totals, faults.seed, query.site, city.name, query.keyword, found.total, query.page_size
        )
        if faults
        else None
    )
    return ResultPage(query.page, slots, found.total, reachable, math.ceil(reachable / query.page_size), stale), city


def int_param(value, default, low=1, high=None):
    """A positive int from a query parameter; junk gives the default, so a bad value never errors."""
    try:
        n = int(value)
    except (TypeError, ValueError):
        return default
    if n < low:
        return default
    return min(n, high) if high else n


# The sites send compact UTF-8 JSON (non-ASCII as is, no \u escapes): orjson writes exactly that, as bytes,
# several times faster than json.dumps(ensure_ascii=False, separators=(",", ":")).encode(). It refuses integers
# beyond 64 bits, which hostile postings (hostile.py) carry: pages holding one take the slow way.
def to_json(value, hostile=False):
    if hostile:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()
    return orjson.dumps(value)
