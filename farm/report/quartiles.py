"""Quartiles from a histogram: the database counts each value, this module ranks the counts.

The report's quartiles are those of ``statistics.quantiles(values, n=4, method="inclusive")``:
quartile q (1, 2, 3) sits at the 0-based rank h = (n - 1) * q / 4, between the values at
ranks floor(h) and floor(h) + 1, weighted by the fraction of h. Over a histogram, the
value at a rank is the first whose running count passes it, so the work grows with the
distinct values (salaries are round numbers: a few dozen a group), never with the postings.
"""

from bisect import bisect_right
from itertools import accumulate


def quartiles(histogram: list[tuple[float, int]]) -> tuple[float, float, float]:
    """The three quartiles of the values ``histogram`` counts, as (value, count) pairs in
    ascending order of value, every count at least 1."""
    values = [value for value, _ in histogram]
    ends = list(accumulate(count for _, count in histogram))  # the rank after each value's last

    def at(rank: int) -> float:
        return values[bisect_right(ends, rank)]

    n = ends[-1]
    out = []
    for q in (1, 2, 3):
        floor, fourths = divmod((n - 1) * q, 4)
        low = at(floor)
        out.append(low if not fourths else low + (at(floor + 1) - low) * fourths / 4)
    return out[0], out[1], out[2]
