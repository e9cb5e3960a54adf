"""Openings on the sandbox's cross-posts: precision and recall of farm.openings, its errors by kind, and the
time to cluster a million postings.

Precision and recall are over pairs of postings: a pair the clustering puts in one opening is right when
the sandbox's truth has them in one opening (bench.openings_data); the same again on a held-out imitation
drawn with its own lists and forms (bench.openings_heldout). Each set is clustered with the evidence's
weights learnt from its own postings, unlabelled (farm.openings.estimate, as `farm openings update` learns
them, with the title decorations learnt as farm.openings.decorations learns them), and again with the
weights set by hand. Three sites, two cities, 200 keywords,
the sandbox's default spread of postings per keyword (each site's page caps applied). Each pair it gets
wrong is put under the first rule that tells why:

- joined wrongly: one company's two openings alike (a title within the threshold, pay overlapping) that the
  sandbox drew independently; two companies of one name key; two companies through a learnt pair; two
  companies one of whose keys starts the other;
- missed: the company names not known as one; the titles unlike after their decorations are off; the pay
  apart; the posting joined another opening first (every rule holds between the two).

On the held-out set again, 30% of 51job's titles carry an affix no rule of farm.openings.titles knows
(UNRULED): precision and recall with the title decorations learnt from those postings and without.

The million postings are 334 keywords of 100 postings on each of the three sites in ten cities, made by the
sandbox (without rendering them); the time is Clusterer.add_all's, one process, the best of ``--rounds``,
and the weights' learning from them apart.

    python -m bench.openings_bench [--rounds 1] [--postings 1000000]
"""

import argparse
import random
import sys
import time
from collections import Counter, defaultdict
from dataclasses import replace
from itertools import combinations
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.openings_data import DAY, KEYWORDS, Truth, sandbox_postings  # noqa: E402
from bench.openings_heldout import heldout_postings  # noqa: E402
from farm.openings.cluster import Clusterer, PostingSeen, side_of  # noqa: E402
from farm.openings.decorations import decorations_of  # noqa: E402
from farm.openings.estimate import weights_of  # noqa: E402
from farm.openings.evidence import SET_BY_HAND, evidence  # noqa: E402
from farm.openings.names import CompanyNames, company_key  # noqa: E402
from farm.openings.titles import NO_DECORATIONS, similarity  # noqa: E402
from farm.sandbox.cities import LOCAL_CITIES  # noqa: E402
from farm.sandbox.data import World  # noqa: E402
from farm.sandbox.sites import imitation  # noqa: E402

MILLION_CITIES = 10
MILLION_PER_KEYWORD = 100


def pairs(n: int) -> int:
    return n * (n - 1) // 2


def score(clusters: Clusterer, postings: list[PostingSeen], truth: dict[tuple[str, str], Truth]) -> dict:
    """Pairwise precision and recall, and each wrong pair's kind."""
    by_key = {(p.source, p.job_id): p for p in postings}
    found, true = defaultdict(list), defaultdict(list)
    for key in by_key:
        found[clusters.opening_of(*key)].append(key)
        true[truth[key].opening].append(key)
    right = sum(pairs(n) for keys in found.values() for n in Counter(truth[k].opening for k in keys).values())
    found_pairs = sum(pairs(len(keys)) for keys in found.values())
    true_pairs = sum(pairs(len(keys)) for keys in true.values())
    errors = Counter()
    for keys in found.values():
        for a, b in combinations(keys, 2):
            if truth[a].opening != truth[b].opening:
                errors[joined_wrongly(clusters.names, by_key[a], by_key[b], truth[a], truth[b])] += 1
    for keys in true.values():
        for a, b in combinations(keys, 2):
            if clusters.opening_of(*a) != clusters.opening_of(*b):
                errors[missed(clusters, by_key[a], by_key[b])] += 1
    return {
        "postings": len(by_key),
        "true openings": len(true),
        "openings found": len(found),
        "true pairs": true_pairs,
        "pairs found": found_pairs,
        "precision": right / found_pairs if found_pairs else 1.0,
        "recall": right / true_pairs if true_pairs else 1.0,
        "errors": errors,
    }


def joined_wrongly(names: CompanyNames, a: PostingSeen, b: PostingSeen, truth_a: Truth, truth_b: Truth) -> str:
    if truth_a.company == truth_b.company:
        return "joined wrongly: one company's two openings alike"
    key_a, key_b = company_key(a.company), company_key(b.company)
    if key_a == key_b:
        return "joined wrongly: two companies of one name key"
    if names.key(a.company) == names.key(b.company):
        return "joined wrongly: two companies through a learnt pair"
    return "joined wrongly: two companies, one key the other's start"


def missed(clusters: Clusterer, a: PostingSeen, b: PostingSeen) -> str:
    key_a, key_b = clusters.names.key(a.company), clusters.names.key(b.company)
    if not key_a or not key_b or not (key_a.startswith(key_b) or key_b.startswith(key_a)):
        return "missed: company names not known as one"
    keyed = clusters.decorations.key
    if similarity(keyed(a.title), keyed(b.title)) < clusters.title_threshold:
        return "missed: titles unlike"
    how = "equal" if key_a == key_b else "prefix"
    if evidence(how, side_of(a, clusters.decorations), side_of(b, clusters.decorations), clusters.weights)[0] <= 0:
        return "missed: the evidence against (place, pay, degree, experience)"
    return "missed: joined another opening first"


def million(total: int) -> list[PostingSeen]:
    """``total`` postings as the sites name them (brand on Boss, legal name elsewhere), in farm's order."""
    world = World(seed=1, postings=(MILLION_PER_KEYWORD, MILLION_PER_KEYWORD), today=DAY)
    made = []
    per_keyword = MILLION_PER_KEYWORD * 3 * MILLION_CITIES
    for number in range(-(-total // per_keyword)):
        keyword = f"{KEYWORDS[number % len(KEYWORDS)]}{number // len(KEYWORDS) or ''}"
        for city in LOCAL_CITIES[:MILLION_CITIES]:
            for source in ("boss", "qcwy", "zhilian"):
                for slot in world.slots(source, city, keyword):
                    p = world.posting(source, city, keyword, slot)
                    company = p.company.short_name if source == "boss" else p.company.full_name
                    area = p.district if source == "qcwy" else f"{p.district}·{p.area}"
                    degree = imitation(source).degree[p.degree]
                    made.append(
                        PostingSeen(source, p.id, p.title, company, city.name, p.salary_min, p.salary_max, area, degree)
                    )
    made = made[:total]
    made.sort(key=lambda p: (p.source, p.job_id))
    return made


def measured(label: str, postings: list[PostingSeen], truth: dict, names: CompanyNames):
    """Precision and recall with the weights learnt from the postings, the errors by kind, the weights; then
    precision and recall with the weights set by hand."""
    started = time.perf_counter()
    decorations = decorations_of(postings, names)
    weights = weights_of(postings, names, decorations=decorations)
    learnt = time.perf_counter() - started
    started = time.perf_counter()
    clusters = Clusterer(names, weights=weights, decorations=decorations)
    clusters.add_all(postings)
    seconds = time.perf_counter() - started
    result = score(clusters, postings, truth)
    yield f"{label}: postings", result["postings"], "postings"
    yield f"{label}: true openings", result["true openings"], "openings"
    yield f"{label}: openings found", result["openings found"], "openings"
    yield f"{label}: true pairs", result["true pairs"], "pairs"
    yield f"{label}: pairs found", result["pairs found"], "pairs"
    yield f"{label}: pairwise precision", result["precision"], "ratio"
    yield f"{label}: pairwise recall", result["recall"], "ratio"
    yield f"{label}: weights learnt from (pairs)", weights.pairs, "pairs"
    yield f"{label}: title decorations learnt", len(decorations.rows()), "affixes"
    for where, affix in decorations.rows():
        yield f"  decoration: {where} {affix}", 0, ""
    yield f"{label}: learning the decorations and the weights", learnt, "s"
    yield f"{label}: clustering time", seconds, "s"
    for kind in sorted(result["errors"]):
        yield f"  {kind}", result["errors"][kind], "pairs"
    yield "  weight: prior", weights.prior, "log-odds"
    for name, outcome, weight in weights.rows()[1:]:
        yield f"  weight: {name} {outcome}", weight, "log-odds"
    by_hand = Clusterer(names, weights=SET_BY_HAND)
    by_hand.add_all(postings)
    result = score(by_hand, postings, truth)
    yield f"{label}, weights set by hand: pairwise precision", result["precision"], "ratio"
    yield f"{label}, weights set by hand: pairwise recall", result["recall"], "ratio"


# affixes no rule of farm.openings.titles takes off, put on a share of one site's titles
UNRULED = ("-可转正", "·急缺", "大厂直推 ", "hot ")


def unruled(postings: list[PostingSeen], share: float = 0.3, seed: int = 11) -> list[PostingSeen]:
    """The postings with a share of 51job's titles carrying one of UNRULED."""
    rng = random.Random(seed)
    made = []
    for p in postings:
        if p.source == "qcwy" and p.title and rng.random() < share:
            affix = rng.choice(UNRULED)
            p = replace(p, title=affix + p.title if affix.endswith(" ") else p.title + affix)
        made.append(p)
    return made


def with_and_without_decorations(label: str, postings: list[PostingSeen], truth: dict, names: CompanyNames):
    """Precision and recall with the weights learnt, with the title decorations learnt and without."""
    decorations = decorations_of(postings, names)
    yield f"{label}: title decorations learnt", len(decorations.rows()), "affixes"
    for where, affix in decorations.rows():
        yield f"  decoration: {where} {affix}", 0, ""
    for name, learnt in (("learnt", decorations), ("none", NO_DECORATIONS)):
        clusters = Clusterer(names, weights=weights_of(postings, names, decorations=learnt), decorations=learnt)
        clusters.add_all(postings)
        result = score(clusters, postings, truth)
        yield f"{label}, decorations {name}: pairwise precision", result["precision"], "ratio"
        yield f"{label}, decorations {name}: pairwise recall", result["recall"], "ratio"


def run(rounds: int = 1, total: int = 1_000_000):
    yield from measured("sandbox cross-posts", *sandbox_postings())
    postings, held, names = heldout_postings()
    truth = {key: Truth(*value) for key, value in held.items()}
    yield from measured("held-out imitation", postings, truth, names)
    yield from with_and_without_decorations("held-out, 30% of 51job's titles with an affix no rule knows",
                                            unruled(postings), truth, names)  # fmt: skip
    many = million(total)
    started = time.perf_counter()
    weights = weights_of(many, CompanyNames())
    yield (
        f"learning the weights from {len(many):,} postings ({weights.pairs:,} pairs)",
        time.perf_counter() - started,
        "s",
    )
    best = None
    for _ in range(rounds):
        started = time.perf_counter()
        Clusterer().add_all(many)
        elapsed = time.perf_counter() - started
        best = elapsed if best is None else min(best, elapsed)
    yield f"clustering {len(many):,} postings", best, "s"
    yield f"clustering {len(many):,} postings: rate", len(many) / best, "postings/s"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--postings", type=int, default=1_000_000)
    args = parser.parse_args()
    for name, value, unit in run(args.rounds, args.postings):
        print(f"{name:<62} {value:>12.3f}  {unit}", flush=True)


if __name__ == "__main__":
    main()
