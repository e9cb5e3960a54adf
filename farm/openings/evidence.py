"""How much each comparison of two postings counts for or against their being one job: a Fellegi–Sunter
style score, the sum of a weight per field (the log-odds that the outcome is seen between postings of one
job rather than of two jobs of one company), so that no one field vetoes a join.

A posting that meets an opening's company and title (farm.openings.cluster's candidates) starts from
PRIOR; the title's being equal after decorations, the place, the pay, the degree and the experience then
add or take away their weight; an outcome ``unknown`` (a site that leaves the field out) weighs nothing.
It joins when the score is above 0. One site naming another district than the other, or a business area
under it, costs less than pay, degree and experience agreeing bring; one company's two jobs of one title
that differ in the district and the pay or the experience stay apart. The weights are set by hand from the
sandbox's cross-posts and the unit tests' cases (docs/openings.md, docs/benchmarks.md).
"""

from dataclasses import dataclass

from farm.openings.details import compare_pay, compare_places, compare_words

PRIOR = 0.5
WEIGHTS: dict[str, dict[str, float]] = {
    "company": {"equal": 0.5, "paired": 0.0, "prefix": 0.0},
    "title": {"equal": 1.5, "alike": 0.0},
    "place": {"agree": 1.5, "differ": -4.0, "unknown": 0.0},
    "pay": {"same": 2.5, "agree": 0.0, "near": -1.0, "differ": -5.0, "unknown": 0.0},
    "degree": {"agree": 0.7, "differ": -4.0, "unknown": 0.0},
    "experience": {"agree": 0.5, "differ": -4.0, "unknown": 0.0},
}


@dataclass(frozen=True)
class Side:
    """The values of a posting, or of the posting that opened an opening, as the evidence compares them."""

    title: str
    salary_min: int | None
    salary_max: int | None
    place: str
    degree: str
    experience: str


def evidence(company: str, posting: Side, opening: Side) -> tuple[float, tuple[tuple[str, str, float], ...]]:
    """The score and each field's (name, outcome, weight), for a posting whose company matched ``company``
    ('equal', 'paired' or 'prefix') and whose title is alike the opening's."""
    outcomes = (
        ("company", company),
        ("title", "equal" if posting.title == opening.title else "alike"),
        ("place", compare_places(posting.place, opening.place)),
        ("pay", compare_pay(posting.salary_min, posting.salary_max, opening.salary_min, opening.salary_max)),
        ("degree", compare_words(posting.degree, opening.degree)),
        ("experience", compare_words(posting.experience, opening.experience)),
    )
    weighed = tuple((name, outcome, WEIGHTS[name][outcome]) for name, outcome in outcomes)
    return PRIOR + sum(weight for _, _, weight in weighed), weighed
