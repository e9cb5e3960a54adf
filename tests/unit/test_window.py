"""The page window bounds the pages fetched but not yet recorded."""

from farm.crawl.window import PageWindow

LEASE_A, LEASE_B = (1, 1), (2, 1)


def test_a_full_window_has_room_only_for_pages_already_in_it():
    woken = []
    window = PageWindow(2, on_room=lambda: woken.append(True))
    window.enter(LEASE_A, 1)
    window.enter(LEASE_A, 2)
    assert not window.has_room(LEASE_B, 1) and len(window) == 2
    assert window.has_room(LEASE_A, 2)  # a retried page keeps its place
    window.leave(LEASE_A, 1)
    assert woken == [True] and window.has_room(LEASE_B, 1)


def test_an_ended_keyword_frees_all_its_pages_and_wakes_once():
    woken = []
    window = PageWindow(2, on_room=lambda: woken.append(True))
    window.enter(LEASE_A, 1)
    window.enter(LEASE_A, 2)
    window.leave_lease(LEASE_A)
    assert len(window) == 0 and woken == [True]
    window.leave(LEASE_A, 3)  # not in it: nothing changes, nobody woken
    assert woken == [True]


def test_leaving_a_window_that_was_not_full_wakes_nobody():
    woken = []
    window = PageWindow(3, on_room=lambda: woken.append(True))
    window.enter(LEASE_A, 1)
    window.leave(LEASE_A, 1)
    assert woken == []
