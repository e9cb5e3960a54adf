"""How far a median of paired rounds can be trusted: an interval that holds the true median.

A ratio's rounds on a shared machine spread by a fifth or more, so a median of 5 or 10
rounds alone cannot say which side of an aim farm is on. The interval here assumes
nothing about how the rounds spread, only that they are independent: the true median
lies between the k-th smallest and the k-th largest of n rounds unless k or more of
them fall on one side of it, which happens with probability 2·P(Binomial(n, ½) < k).
"""

import math


def median_interval(values, confidence: float = 0.95) -> tuple[float, float, float]:
    """(low, high, coverage): the narrowest interval between order statistics of ``values``
    that holds their true median with probability ``coverage`` ≥ ``confidence``; with too few
    values for that, the widest (smallest to largest) with the coverage it has."""
    ordered = sorted(values)
    n = len(ordered)
    if n < 2:
        raise ValueError(f"an interval needs two values or more, got {n}")
    # the interval from the k-th smallest to the k-th largest misses the median when k values
    # or more fall on one side of it: P(Binomial(n, 1/2) <= k - 1) for each side
    k, tail = 1, 1 / 2**n
    while k + 1 <= n - k:
        wider_tail = tail + math.comb(n, k) / 2**n
        if 1 - 2 * wider_tail < confidence:
            break
        k, tail = k + 1, wider_tail
    return ordered[k - 1], ordered[n - k], 1 - 2 * tail
