"""The report's quartiles from a histogram are statistics.quantiles' (inclusive) of the values it counts."""

import statistics
from collections import Counter

from hypothesis import given
from hypothesis import strategies as st

from farm.report.quartiles import quartiles


def histogram(values) -> list[tuple[int, int]]:
    return sorted(Counter(values).items())


@given(st.lists(st.integers(min_value=0, max_value=60), min_size=1, max_size=200))
def test_the_quartiles_of_a_histogram_are_those_of_its_values(values):
    expected = statistics.quantiles(values, n=4, method="inclusive") if len(values) > 1 else [values[0]] * 3
    assert quartiles(histogram(values)) == tuple(expected)


def test_each_quartile_weighs_the_two_values_about_its_rank():
    # n = 6: ranks 1.25, 2.5, 3.75 of 10, 20, 20, 30, 40, 50
    assert quartiles([(10, 1), (20, 2), (30, 1), (40, 1), (50, 1)]) == (20.0, 25.0, 37.5)
    assert quartiles([(7, 1)]) == (7, 7, 7)
