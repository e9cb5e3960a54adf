"""How much each comparison of two postings counts for or against their being one job: a Fellegi–Sunter
score, the sum of a weight per field (the log-odds, natural, that the outcome is seen between postings of
one job rather than of two jobs of one company), so that no one field vetoes a join.

A posting that meets an opening's company and title (farm.openings.cluster's candidates) starts from the
prior (the log-odds that such a pair is one job); the company's match, the title's being equal after
decorations, the place, the pay, the degree and the experience then add or take away their weight; an
outcome ``unknown`` (a site that leaves the field out) weighs nothing. It joins when the score is above 0.

The weights farm clusters with are estimated from the postings themselves, unlabelled
(farm.openings.estimate: expectation–maximisation over the pairs the clustering would compare, as splink
does); ``SET_BY_HAND`` are the weights it starts from, and the ones used where too few pairs are known to
estimate them (docs/openings.md).
"""

from collections.abc import Mapping
from dataclasses import dataclass

from farm.openings.details import compare_pay, compare_places, compare_words

FIELDS = ("company", "title", "place", "pay", "degree", "experience")
UNKNOWN = "unknown"


@dataclass(frozen=True)
class Weights:
    """The prior and each field's outcomes' weights; ``pairs``: the unlabelled pairs they were estimated
    from (0: set by hand). An outcome not in ``table`` weighs nothing."""

    prior: float
    table: Mapping[str, Mapping[str, float]]
    pairs: int = 0

    def of(self, name: str, outcome: str) -> float:
        return self.table.get(name, {}).get(outcome, 0.0)

    def rows(self) -> list[tuple[str, str, float]]:
        """(field, outcome, weight) of every weight, the prior as ('prior', '')."""
        return [("prior", "", self.prior)] + [
            (name, outcome, weight) for name in FIELDS for outcome, weight in sorted(self.table.get(name, {}).items())
        ]

    @classmethod
    def from_rows(cls, rows, pairs: int = 0) -> "Weights":
        prior, table = 0.0, {name: dict[str, float]() for name in FIELDS}
        for name, outcome, weight in rows:
            if name == "prior":
                prior = weight
            elif name in table:
                table[name][outcome] = weight
        return cls(prior, table, pairs)


# about the log-odds of each outcome between two postings of one job against two jobs of one company with
# one title, rounded (a degree that differs: rare between one job's postings, half the time between two)
SET_BY_HAND = Weights(
    0.5,
    {
        "company": {"equal": 0.5, "paired": 0.0, "prefix": 0.0},
        "title": {"equal": 1.5, "alike": 0.0},
        "place": {"agree": 1.5, "differ": -4.0, UNKNOWN: 0.0},
        "pay": {"same": 2.5, "agree": 0.0, "near": -1.0, "differ": -5.0, UNKNOWN: 0.0},
        "degree": {"agree": 0.7, "differ": -4.0, UNKNOWN: 0.0},
        "experience": {"agree": 0.5, "differ": -4.0, UNKNOWN: 0.0},
    },
)


@dataclass(frozen=True)
class Side:
    """The values of a posting, or of the posting that opened an opening, as the evidence compares them."""

    title: str
    salary_min: int | None
    salary_max: int | None
    place: str
    degree: str
    experience: str


def outcomes(company: str, posting: Side, opening: Side) -> tuple[str, ...]:
    """Each field's outcome (in FIELDS' order) for a posting whose company matched ``company`` ('equal',
    'paired' or 'prefix') and whose title is alike the opening's."""
    return (
        company,
        "equal" if posting.title == opening.title else "alike",
        compare_places(posting.place, opening.place),
        compare_pay(posting.salary_min, posting.salary_max, opening.salary_min, opening.salary_max),
        compare_words(posting.degree, opening.degree),
        compare_words(posting.experience, opening.experience),
    )


def evidence(
    company: str, posting: Side, opening: Side, weights: Weights = SET_BY_HAND
) -> tuple[float, tuple[tuple[str, str, float], ...]]:
    """The score and each field's (name, outcome, weight)."""
    weighed = tuple(
        (name, outcome, weights.of(name, outcome))
        for name, outcome in zip(FIELDS, outcomes(company, posting, opening), strict=True)
    )
    return weights.prior + sum(weight for _, _, weight in weighed), weighed
