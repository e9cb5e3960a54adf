"""The evidence's weights learnt from unlabelled postings (farm.openings.estimate): EM finds the weights
pairs were drawn with, and weights learnt where one site places a job in another district than the other
join what the weights set by hand split, while one company's two jobs of one title stay two."""

import math
import random
from collections import Counter

import pytest

from farm.openings.cluster import Clusterer, PostingSeen
from farm.openings.estimate import FEWEST_PAIRS, comparisons, estimate, weights_of
from farm.openings.evidence import SET_BY_HAND, Weights
from farm.openings.names import CompanyNames

DISTRICTS = ("朝阳区", "海淀区", "丰台区", "西城区", "东城区", "大兴区")
EXPERIENCE = ("1-3年", "3-5年", "5-10年")
DEGREES = ("大专", "本科", "硕士")


def drawn(rng: random.Random, share: float, m: dict, u: dict, count: int) -> Counter:
    """``count`` outcome vectors (company, title, place, pay, degree, experience), a ``share`` of them drawn
    from ``m`` and the rest from ``u`` (place, pay and degree; the other fields fixed)."""
    counts: Counter = Counter()
    for _ in range(count):
        chances = m if rng.random() < share else u
        place = rng.choices(list(chances["place"]), weights=list(chances["place"].values()))[0]
        pay = rng.choices(list(chances["pay"]), weights=list(chances["pay"].values()))[0]
        degree = rng.choices(list(chances["degree"]), weights=list(chances["degree"].values()))[0]
        counts[("equal", "equal", place, pay, degree, "unknown")] += 1
    return counts


def test_em_finds_the_weights_the_pairs_were_drawn_with():
    m = {
        "place": {"agree": 0.7, "differ": 0.3},
        "pay": {"same": 0.5, "agree": 0.4, "differ": 0.1},
        "degree": {"agree": 0.9, "differ": 0.1},
    }
    u = {
        "place": {"agree": 0.2, "differ": 0.8},
        "pay": {"same": 0.05, "agree": 0.25, "differ": 0.7},
        "degree": {"agree": 0.4, "differ": 0.6},
    }
    weights = estimate(drawn(random.Random(1), 0.4, m, u, 20000))
    assert weights.pairs == 20000
    assert weights.prior == pytest.approx(math.log(0.4 / 0.6), abs=0.15)
    for name in m:
        for outcome in m[name]:
            assert weights.of(name, outcome) == pytest.approx(math.log(m[name][outcome] / u[name][outcome]), abs=0.25)
    # a field no pair names keeps the weights it started from
    assert weights.of("company", "prefix") == SET_BY_HAND.of("company", "prefix")


def test_too_few_pairs_keep_the_weights_set_by_hand():
    m = {"place": {"agree": 0.7, "differ": 0.3}, "pay": {"same": 0.5, "differ": 0.5}, "degree": {"agree": 1.0}}
    assert estimate(drawn(random.Random(1), 0.5, m, m, FEWEST_PAIRS - 1)) is SET_BY_HAND


def unlabelled(companies: int = 400, seed: int = 3) -> list[PostingSeen]:
    """Each company's one job on Boss and 51job, 51job naming another district two times in five and its pay
    in its own round figures; and the company's second job of the same title elsewhere, at other pay and
    experience, on both sites too."""
    rng = random.Random(seed)
    made = []
    for number in range(companies):
        brand, legal = f"公司{number}", f"北京公司{number}科技有限公司"
        title = f"工程师{number % 50}"
        one, two = rng.sample(DISTRICTS, 2)
        for job, district, low, experience in (("a", one, 20000, EXPERIENCE[0]), ("b", two, 32000, EXPERIENCE[2])):
            degree = rng.choice(DEGREES)
            shown = rng.choice([d for d in DISTRICTS if d != district]) if rng.random() < 0.4 else district
            made.append(PostingSeen("boss", f"b{number}{job}", title, brand, "北京", low, low + 10000, district, degree,
                                    experience))  # fmt: skip
            made.append(PostingSeen("qcwy", f"q{number}{job}", title, legal, "北京", low + 1000, low + 10000, shown,
                                    degree, experience))  # fmt: skip
    return made


def test_weights_learnt_from_the_postings_join_one_job_placed_elsewhere_by_one_site():
    postings = unlabelled()
    weights = weights_of(postings, CompanyNames())
    assert weights.pairs == comparisons(postings, CompanyNames()).total() >= FEWEST_PAIRS
    assert SET_BY_HAND.of("place", "differ") < weights.of("place", "differ") < 0
    learnt, by_hand = Clusterer(weights=weights), Clusterer()
    learnt.add_all(postings)
    by_hand.add_all(postings)
    elsewhere = [p for p in postings if p.source == "qcwy" and p.job_id.endswith("a")]
    elsewhere = [p for p in elsewhere if p.area != next(b.area for b in postings if b.job_id == "b" + p.job_id[1:])]
    assert len(elsewhere) > 50
    for posting in elsewhere:
        boss = "b" + posting.job_id[1:]
        assert learnt.opening_of("qcwy", posting.job_id) == learnt.opening_of("boss", boss)
        assert by_hand.opening_of("qcwy", posting.job_id) != by_hand.opening_of("boss", boss)
    # one company's two jobs of one title stay two
    for number in range(400):
        assert learnt.opening_of("boss", f"b{number}a") != learnt.opening_of("boss", f"b{number}b")
        assert learnt.opening_of("qcwy", f"q{number}b") != learnt.opening_of("boss", f"b{number}a")


def test_weights_read_back_from_their_rows_are_the_same():
    weights = weights_of(unlabelled(), CompanyNames())
    assert Weights.from_rows(weights.rows(), weights.pairs) == weights


def test_an_estimate_that_weighs_disagreement_for_a_join_is_refused():
    m = {
        "place": {"agree": 0.8, "differ": 0.2},
        "pay": {"same": 0.6, "differ": 0.4},
        "degree": {"agree": 0.9, "differ": 0.1},
    }
    u = {
        "place": {"agree": 0.2, "differ": 0.8},
        "pay": {"same": 0.1, "differ": 0.9},
        "degree": {"agree": 0.3, "differ": 0.7},
    }
    counts = drawn(random.Random(2), 0.5, m, u, 5000)
    upside_down = Weights(
        0.0, {name: {o: -w for o, w in SET_BY_HAND.table[name].items()} for name in SET_BY_HAND.table}
    )
    assert estimate(counts, upside_down) is upside_down  # EM from it finds two jobs' class as one job's
    assert estimate(counts).of("place", "agree") > 0
