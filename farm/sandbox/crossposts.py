"""Cross-posts: one opening listed on two or three sites, as companies post it, with the truth kept.

A keyword's result list on each site is a sequence of positions. At a share of the positions of one
(city, keyword) the posting is *cross-posted*: the same opening on two or all three sites, drawn from a
random stream of (seed, city, keyword) alone, so every site finds it at the same position. It has one
company (the world's companies are shared by the sites), one title, one pay, one district; each site
shows it its own way:

- its own id, drawn per site;
- the company as that site names it: the brand on Boss, the legal name on 51job and 智联 (51job beside
  the brand), a sixth of the brands unlike their legal name (data.World's companies);
- its title with the site's decorations, or none (``【急招】…``, ``…（双休）``, ``…+五险一金``);
- its pay in the site's own form (each site module renders it: 25-35K, 2.5-3.5万, 25000-35000).

The truth: a slot drawn here carries ``CROSS - position`` where other slots carry -1 (their own) or the
generic pool's index (``0..``), so ``opening_of`` names the opening of any slot of a list.
"""

import zlib

from .vocab import COMPANY_POOL

SITES = ("boss", "qcwy", "zhilian")
SHARE = 0.3  # positions of a list whose posting is cross-posted
CROSS = -2  # slot[3] of a cross-post at position p is CROSS - p
# which sites show a cross-post, by the draw's remainder: all three a third of the time, else one pair
_SPREADS = (
    frozenset(SITES),
    frozenset(("boss", "qcwy")),
    frozenset(("boss", "zhilian")),
    frozenset(("qcwy", "zhilian")),
)
_SHARE_BELOW = int(SHARE * (1 << 16))
_ID_SALT = {"boss": 0x9E3779B97F4A7C15, "qcwy": 0xC2B2AE3D27D4EB4F, "zhilian": 0x165667B19E3779F9}  # odd: ids differ
_ID_MASK = (1 << 64) - 1
DECORATIONS = {
    "boss": ("{}", "{}", "【急招】{}", "{}（双休）"),
    "qcwy": ("{}", "{}+五险一金", "{}（五险一金）", "【高薪】{}"),
    "zhilian": ("{}", "{}", "急聘{}", "{}-包吃住"),
}


def draw(getrandbits, site: str):
    """The next position's cross-post on the site from the (city, keyword)'s stream: (id bits, company, bits),
    or None where it is not on the site. Every site draws alike at every position, so the streams stay in step."""
    first = getrandbits(64)
    if first & 0xFFFF >= _SHARE_BELOW:
        return None
    shared = getrandbits(192)  # drawn on every site, shown or not
    spread = (first >> 16) % 6  # 0, 1: all three sites; 2..5: a pair, the pairs alike
    if site not in _SPREADS[0 if spread < 2 else spread - 2]:
        return None
    return ((first >> 19) * _ID_SALT[site]) & _ID_MASK, shared % COMPANY_POOL, shared >> 64


def is_cross(slot: tuple) -> bool:
    return slot[3] <= CROSS


def decorated(site: str, job_id: str, title: str) -> str:
    """The title as the site decorates this posting of it (the same every time)."""
    forms = DECORATIONS[site]
    return forms[zlib.crc32(job_id.encode()) % len(forms)].format(title)


def opening_of(site: str, city: str, keyword: str, slot: tuple) -> tuple:
    """The true opening of a slot: its (city, keyword, position) for a cross-post, else its (site, id)."""
    if is_cross(slot):
        return ("cross", city, keyword, CROSS - slot[3])
    return (site, slot[0])
