"""Stale totals: live sites' counts lag their lists, so page 1 may promise fewer or more results than page 2.

A share (`stale_totals`) of keywords, chosen by a stable hash of (fault seed, site, city, keyword), is stale:
its page 1 reports wrong totals and every later page the truth. What a page lists never changes, only its
totals (each site's render puts `told`'s in its own fields: a total, the pages, whether there is more). The
variant comes from the same hash (independent bits), so any rate mixes them all:

- `under`: about half the truth, but more than a page's worth when the truth spans two pages or more, so
  that page 2 exists and tells the truth. A site paged by "has more" alone still says there is more: it
  cannot reveal anything more.
- `over`: about double the truth, capped as the site caps (its MAX_PAGES). Pages past the real end are the
  site's successful empty pages, telling the truth. A site paged by "has more" alone also says so on the
  last real page; the page after it is empty and says no more.
- `zero` (only on a site whose imitation names it in its STALE_VARIANTS): page 1 says it has 0 pages and
  0 results beside its postings.

Keywords of fewer than two postings are never stale, nor an `under` one whose half would still be the truth
(one posting more than a page: a page's worth plus one is all of it).
"""

import math
from dataclasses import replace

from .data import fraction, stable_hash
from .sites import site_module

VARIANTS = ("under", "over")  # a site's variants unless its imitation names its own (STALE_VARIANTS)


def variant(rate, seed, site, city, keyword, total, page_size):
    """The keyword's variant ('under', 'over', 'zero') or None; `city` is the City's name."""
    if rate <= 0 or total < 2:
        return None
    h = stable_hash(seed, "stale", site, city, keyword)
    if fraction(h) >= rate:
        return None
    kinds = getattr(site_module(site), "STALE_VARIANTS", VARIANTS)
    kind = kinds[h % len(kinds)]
    if kind == "under" and _under(total, page_size) == total:
        return None
    return kind


def told(page, page_size, max_pages):
    """The ResultPage as its totals say it: page 1 of a stale keyword with its wrong totals, any other unchanged."""
    if page.stale is None or page.number != 1:
        return page
    if page.stale == "under":
        total = _under(page.total, page_size)
    else:
        total = 2 * page.total if page.stale == "over" else 0
    reachable = min(total, max_pages * page_size)
    return replace(page, total=total, reachable=reachable, pages=math.ceil(reachable / page_size))


def _under(total, page_size):
    half = total // 2
    return max(half, page_size + 1) if total > page_size else half
