"""Cross-posts: one opening listed on several sites, as companies post it, with the truth kept.

A keyword's result list on each site is a sequence of positions. At a share of the positions of one
(city, keyword) the posting is *cross-posted*: the same opening on a pair of the sites or on all of them,
drawn from a random stream of (seed, city, keyword) alone, so every site finds it at the same position. The
sites that cross-post are the served sites whose imitation gives an ``id_salt`` (farm.sandbox.imitation),
in the registry's order; a site that gives none shows no cross-post, and fewer than two show none at all.
A cross-post has one company (the world's companies are shared by the sites), one title, one pay, one
district; each site shows it its own way:

- its own id, drawn with its own salt;
- the company as that site names it (a brand or a legal name, a sixth of the brands unlike their legal
  name: data.World's companies);
- its title in one of the site's decorations (its imitation's ``decorations``: ``【急招】{}``, ``{}（双休）``),
  the same one for one id every time;
- its pay in the site's own form (each site module renders it: 25-35K, 2.5-3.5万, 25000-35000).

The truth: a slot drawn here carries ``CROSS - position`` where other slots carry -1 (their own) or the
generic pool's index (``0..``), so ``opening_of`` names the opening of any slot of a list.
"""

import functools
import itertools
import zlib
from collections.abc import Callable

from .sites import imitation, served_sites
from .vocab import COMPANY_POOL

SHARE = 0.3  # positions of a list whose posting is cross-posted
CROSS = -2  # slot[3] of a cross-post at position p is CROSS - p
_SHARE_BELOW = int(SHARE * (1 << 16))
_ID_MASK = (1 << 64) - 1

# A site's plan: (its salt, whether it shows a cross-post of each spread); None where it shows none.
Plan = tuple[int, tuple[bool, ...]]


@functools.cache
def spreads(names: tuple[str, ...]) -> tuple[frozenset[str], ...]:
    """Which sites show a cross-post, by the draw's remainder: all of ``names`` first, then each pair of
    them in order; none under two."""
    if len(names) < 2:
        return ()
    return (frozenset(names), *(frozenset(pair) for pair in itertools.combinations(names, 2)))


def plan(site: str) -> Plan | None:
    """How ``site`` takes part in the cross-posts of the sites served now, or None when it takes none."""
    salt = imitation(site).id_salt
    drawn = spreads(tuple(name for name in served_sites() if imitation(name).id_salt is not None))
    if salt is None or not drawn:
        return None
    return salt, tuple(site in spread for spread in drawn)


def draw(getrandbits: Callable[[int], int], plan: Plan | None):
    """The next position's cross-post on the site from the (city, keyword)'s stream: (id bits, company, bits),
    or None where it is not on the site. Every site that takes part draws alike at every position, so their
    streams stay in step."""
    if plan is None:
        return None
    salt, shown = plan
    first = getrandbits(64)
    if first & 0xFFFF >= _SHARE_BELOW:
        return None
    shared = getrandbits(192)  # drawn on every site, shown or not
    spread = (first >> 16) % (len(shown) + 2)  # 0, 1, 2: all the sites; from 3 on: one pair each
    if not shown[0 if spread < 2 else spread - 2]:
        return None
    return ((first >> 19) * salt) & _ID_MASK, shared % COMPANY_POOL, shared >> 64


def is_cross(slot: tuple) -> bool:
    return slot[3] <= CROSS


def decorated(site: str, job_id: str, title: str) -> str:
    """The title as the site decorates this posting of it (the same every time)."""
    forms = imitation(site).decorations
    return forms[zlib.crc32(job_id.encode()) % len(forms)].format(title)


def opening_of(site: str, city: str, keyword: str, slot: tuple) -> tuple:
    """The true opening of a slot: its (city, keyword, position) for a cross-post, else its (site, id)."""
    if is_cross(slot):
        return ("cross", city, keyword, CROSS - slot[3])
    return (site, slot[0])
