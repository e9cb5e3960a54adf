"""A site's pace: the rate, its jitter, the back-off after blocks and outages, and easing back."""

import pytest

from farm.crawl.pace import SitePace


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def pace(rate, jitter=0.5, clock=None):
    return SitePace(rate, base_delay=2.0, max_delay=60.0, clock=clock or Clock(), jitter=lambda: jitter)


def test_no_rate_and_no_trouble_never_waits():
    p = pace(0)
    for _ in range(3):
        assert p.wait() == 0
        p.taken()


def test_a_rate_spaces_requests_with_jitter_around_its_mean():
    clock = Clock()
    assert pace(0.5, jitter=0.5, clock=clock).gap == 2.0
    for jitter, gap in ((0.0, 1.0), (0.5, 2.0), (1.0, 3.0)):  # half to one and a half times the mean
        p = pace(0.5, jitter=jitter, clock=clock)
        p.taken()
        assert p.wait() == pytest.approx(gap)
        clock.now += gap
        assert p.wait() == 0


def test_trouble_doubles_the_gap_up_to_the_maximum_honours_retry_after_and_good_answers_ease_it():
    clock = Clock()
    p = pace(0, clock=clock)
    p.back_off()
    assert (p.penalty, p.wait()) == (2.0, 2.0)  # even a request already waiting holds back now
    p.back_off()
    p.back_off()
    assert p.penalty == 8.0
    p.back_off(retry_after=30)
    assert p.penalty == 30.0
    for _ in range(5):
        p.back_off()
    assert p.penalty == 60.0
    p.eased()
    assert p.penalty == 30.0
    while p.penalty:
        p.eased()
    assert p.gap == 0  # back to no limit


def test_a_negative_rate_is_refused_by_name():
    with pytest.raises(ValueError, match="rate must be >= 0"):
        pace(-1)
