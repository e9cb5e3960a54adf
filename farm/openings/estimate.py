"""The evidence's weights estimated from the postings themselves, without labels: the Fellegi–Sunter m and
u probabilities by expectation–maximisation, as splink estimates them (docs/openings.md).

The pairs are the ones the clustering compares: two postings of one city and one company key (a learnt
pair included), on two sites, with titles alike (farm.openings.cluster's threshold). Among them some are
one job posted twice and the rest two jobs of one company; each pair is the vector of its fields' outcomes
(farm.openings.evidence.outcomes). EM takes the share of one-job pairs (λ) and, for each field and outcome,
how often it is seen among one job's pairs (m) and among two jobs' (u), each field independent of the
others given the class; an ``unknown`` outcome is left out of the product, as splink leaves out a null.
A weight is ln(m/u), the prior ln(λ/(1−λ)). It starts from the weights set by hand, so the class it
finds is the one whose fields agree, and keeps them where fewer than FEWEST_PAIRS pairs are known, or
where the estimate does not weigh agreement for a join.

The pairs are read in blocks of (city, company) in an order fixed by the key's CRC-32 until MOST_PAIRS,
at most PER_TITLE postings of one title in a block: a title posted a thousand times costs no more than a
few, and the same postings give the same weights.
"""

import logging
import math
import zlib
from collections import Counter, defaultdict
from collections.abc import Iterable
from itertools import combinations

from farm.openings.cluster import PostingSeen, blocking_keys, side_of
from farm.openings.evidence import FIELDS, SET_BY_HAND, UNKNOWN, Side, Weights, outcomes
from farm.openings.names import CompanyNames, company_key
from farm.openings.titles import NO_DECORATIONS, Decorations, similarity

logger = logging.getLogger(__name__)

FEWEST_PAIRS = 1000
MOST_PAIRS = 50_000
PER_TITLE = 8
ROUNDS = 200
TOLERANCE = 1e-7
# each field's outcome of most agreement and of least: the class EM finds as one job's weighs the first above
AGREE_MOST = {"company": "equal", "title": "equal", "place": "agree", "pay": "same", "degree": "agree",
              "experience": "agree"}  # fmt: skip
AGREE_LEAST = {"company": "paired", "title": "alike", "place": "differ", "pay": "differ", "degree": "differ",
               "experience": "differ"}  # fmt: skip

Compared = tuple[str, str, Side]  # the posting's site, its own company key, its side


def comparisons(
    postings: Iterable[PostingSeen],
    names: CompanyNames,
    threshold: float = 0.85,
    most: int = MOST_PAIRS,
    decorations: Decorations = NO_DECORATIONS,
) -> Counter[tuple[str, ...]]:
    """How many pairs of each outcome vector the postings hold (see the module's docstring), their titles
    without ``decorations``."""
    blocks: dict[tuple[str, str], list[PostingSeen]] = defaultdict(list)
    for posting in postings:
        key = names.key(posting.company)
        if key:
            blocks[(posting.city or "", key)].append(posting)
    counts: Counter[tuple[str, ...]] = Counter()
    for block in sorted(blocks, key=lambda block: (zlib.crc32("|".join(block).encode()), block)):
        if len({posting.source for posting in blocks[block]}) < 2:
            continue  # no pair of two sites
        for vector in _block_pairs(blocks[block], block, threshold, decorations):
            counts[vector] += 1
        if counts.total() >= most:
            break
    return counts


def _block_pairs(postings: list[PostingSeen], block: tuple[str, str], threshold: float, decorations: Decorations):
    by_title: dict[str, list[Compared]] = {}
    for posting in postings:
        title = decorations.key(posting.title)
        if not title:
            continue
        same = by_title.setdefault(title, [])
        if len(same) < PER_TITLE:
            same.append((posting.source, company_key(posting.company), side_of(posting, decorations)))
    sharing: dict[str, list[str]] = defaultdict(list)  # a blocking key -> the titles it names
    for title in by_title:
        for key in blocking_keys(*block, title, threshold):
            sharing[key].append(title)
    sites = {title: {site for site, _, _ in same} for title, same in by_title.items()}
    alike, seen = {(title, title) for title in by_title}, set()
    for titles in sharing.values():
        for a, b in combinations(titles, 2):
            pair = (a, b) if a < b else (b, a)
            if pair not in seen and len(sites[a] | sites[b]) > 1:  # a pair of one site holds no pair
                seen.add(pair)
                if similarity(a, b) >= threshold:
                    alike.add(pair)
    for first, second in sorted(alike):
        ones, others = by_title[first], by_title[second]
        crossed = combinations(ones, 2) if first == second else ((a, b) for a in ones for b in others)
        for (site, company, side), (other_site, other_company, other_side) in crossed:
            if site != other_site:
                yield outcomes("equal" if company == other_company else "paired", side, other_side)


def estimate(counts: Counter[tuple[str, ...]], start: Weights = SET_BY_HAND) -> Weights:
    """The weights EM finds in the pairs' outcome vectors, from ``start``; ``start`` where the pairs are too
    few or the estimate does not weigh agreement for a join."""
    total = counts.total()
    if total < FEWEST_PAIRS:
        return start
    levels = [sorted({vector[i] for vector in counts} - {UNKNOWN}) for i in range(len(FIELDS))]
    share = 1 / (1 + math.exp(-start.prior))
    m = [_normal({o: math.exp(start.of(name, o)) for o in levels[i]}) for i, name in enumerate(FIELDS)]
    u = [_normal({o: 1.0 for o in levels[i]}) for i in range(len(FIELDS))]
    for _ in range(ROUNDS):
        seen_m = [dict.fromkeys(levels[i], 0.0) for i in range(len(FIELDS))]
        seen_u = [dict.fromkeys(levels[i], 0.0) for i in range(len(FIELDS))]
        matched = 0.0
        for vector, n in counts.items():
            one, two = share, 1 - share
            for i, outcome in enumerate(vector):
                if outcome != UNKNOWN:
                    one, two = one * m[i][outcome], two * u[i][outcome]
            p = one / (one + two)
            matched += p * n
            for i, outcome in enumerate(vector):
                if outcome != UNKNOWN:
                    seen_m[i][outcome] += p * n
                    seen_u[i][outcome] += (1 - p) * n
        moved = abs(matched / total - share)
        share = matched / total
        for i in range(len(FIELDS)):  # half a pair's count on every outcome: none is ever impossible
            new_m = _normal({o: seen_m[i][o] + 0.5 for o in levels[i]})
            new_u = _normal({o: seen_u[i][o] + 0.5 for o in levels[i]})
            moved = max([moved, *(abs(new_m[o] - m[i][o]) + abs(new_u[o] - u[i][o]) for o in levels[i])])
            m[i], u[i] = new_m, new_u
        if moved < TOLERANCE:
            break
    table = {name: dict(start.table.get(name, {})) for name in FIELDS}
    for i, name in enumerate(FIELDS):
        for outcome in levels[i]:
            table[name][outcome] = round(math.log(m[i][outcome] / u[i][outcome]), 2)
    share = min(max(share, 1e-6), 1 - 1e-6)
    weights = Weights(round(math.log(share / (1 - share)), 2), table, total)
    if sum(weights.of(name, AGREE_MOST[name]) - weights.of(name, AGREE_LEAST[name]) for name in FIELDS) <= 0:
        logger.warning("openings: the weights estimated from %d pairs weigh agreement against a join; kept", total)
        return start
    return weights


def _normal(weights: dict[str, float]) -> dict[str, float]:
    total = sum(weights.values())
    return {outcome: weight / total for outcome, weight in weights.items()}


def weights_of(
    postings: Iterable[PostingSeen],
    names: CompanyNames,
    threshold: float = 0.85,
    decorations: Decorations = NO_DECORATIONS,
) -> Weights:
    """The weights estimated from the postings' pairs (``SET_BY_HAND`` where they are too few)."""
    return estimate(comparisons(postings, names, threshold, decorations=decorations))
