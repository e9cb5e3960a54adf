"""The page window bounds the pages fetched but not yet recorded."""

import pytest_twisted
from scrapy.utils.defer import deferred_from_coro

from farm.window import PageWindow

LEASE_A, LEASE_B = (1, 1), (2, 1)


@pytest_twisted.ensureDeferred
async def test_a_full_window_holds_new_pages_until_one_is_recorded():
    window = PageWindow(2)
    await window.enter(LEASE_A, 1)
    await window.enter(LEASE_A, 2)
    third = deferred_from_coro(window.enter(LEASE_B, 1))
    assert not third.called and len(window) == 2
    await window.enter(LEASE_A, 2)  # a retried page keeps its place: no wait
    window.leave(LEASE_A, 1)
    await third
    assert window.pages == {(LEASE_A, 2), (LEASE_B, 1)}


@pytest_twisted.ensureDeferred
async def test_an_ended_keyword_frees_all_its_pages():
    window = PageWindow(2)
    await window.enter(LEASE_A, 1)
    await window.enter(LEASE_A, 2)
    waiting = [deferred_from_coro(window.enter(LEASE_B, page)) for page in (1, 2, 3)]
    window.leave_lease(LEASE_A)
    await waiting[0]
    await waiting[1]
    assert not waiting[2].called and len(window) == 2
    window.leave(LEASE_B, 1)
    await waiting[2]
    assert window.pages == {(LEASE_B, 2), (LEASE_B, 3)}
