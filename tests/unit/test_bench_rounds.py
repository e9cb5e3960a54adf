"""bench.rounds: the interval that holds the median of a benchmark's paired rounds."""

import math
import random

import pytest

from bench.rounds import median_interval


def _coverage(n: int, k: int) -> float:
    """P(the k-th smallest <= median <= the k-th largest of n), counted over all 2^n sign patterns."""
    misses = sum(math.comb(n, below) for below in range(n + 1) if below < k or below > n - k)
    return 1 - misses / 2**n


@pytest.mark.parametrize("n, k", [(5, 1), (6, 1), (10, 2), (16, 4), (30, 10), (38, 13)])
def test_the_interval_is_the_narrowest_between_order_statistics_that_is_sure_enough(n, k):
    values = [float(i) for i in range(n)]
    random.Random(n).shuffle(values)  # the order of the rounds does not matter
    low, high, coverage = median_interval(values)
    assert (low, high) == (k - 1, n - k)
    assert coverage == pytest.approx(_coverage(n, k))
    if coverage >= 0.95 and k + 1 <= n - k:
        assert _coverage(n, k + 1) < 0.95  # one rank narrower would not be


def test_too_few_rounds_give_the_widest_interval_with_the_coverage_it_has():
    assert median_interval([0.9, 0.8, 0.7, 1.0, 0.85]) == (0.7, 1.0, pytest.approx(1 - 2 / 32))
    assert median_interval([0.9, 0.8]) == (0.8, 0.9, 0.5)


def test_one_value_is_refused():
    with pytest.raises(ValueError, match="two values or more, got 1"):
        median_interval([0.8])


def test_the_interval_holds_the_median_as_often_as_it_says():
    # rounds drawn from a skewed spread whose median is known (exponential: ln 2)
    rng = random.Random(8)
    trials, held = 4000, 0
    for _ in range(trials):
        low, high, coverage = median_interval([rng.expovariate(1.0) for _ in range(10)])
        held += low <= math.log(2) <= high
    assert coverage == pytest.approx(0.978515625)
    assert abs(held / trials - coverage) < 0.01
