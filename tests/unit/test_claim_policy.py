"""The claim decision: claim n, wait s, or finish, from what the crawl sees; no reactor, no database."""

from datetime import UTC, datetime, timedelta

import pytest

from farm.crawl.claim_policy import CLAIM_BUSY_DELAY, Decision, Seen, decide
from farm.state.lease import Outlook

NOW = datetime(2026, 12, 3, 10, 0, tzinfo=UTC)
NOTHING = Outlook(0, None)


def test_claims_the_places_free_in_flight():
    assert decide(Seen(in_flight=4, live=1, held=3)) == Decision("claim", count=3)


def test_claims_nothing_with_every_place_taken():
    assert decide(Seen(in_flight=2, live=2, held=2)).action == "hold"


@pytest.mark.parametrize("seen", [{"claiming": True}, {"closing": True}])
def test_claims_nothing_while_a_claim_is_under_way_or_the_crawl_closes(seen):
    assert decide(Seen(in_flight=2, live=0, held=0, **seen)).action == "hold"


def test_an_empty_claim_while_the_crawl_closes_changes_nothing():
    assert decide(Seen(in_flight=2, live=0, held=0, closing=True, outlook=NOTHING, now=NOW)).action == "hold"


def test_rows_locked_by_other_claimers_are_waited_for_briefly():
    seen = Seen(in_flight=2, live=0, held=0, outlook=Outlook(3, None), now=NOW)
    assert decide(seen) == Decision("wait", seconds=CLAIM_BUSY_DELAY, why="busy")


def test_a_failed_keyword_not_yet_due_is_waited_for_until_its_retry():
    seen = Seen(in_flight=2, live=0, held=0, outlook=Outlook(0, NOW + timedelta(seconds=30)), now=NOW)
    decision = decide(seen)
    assert (decision.action, decision.why) == ("wait", "retry")
    assert decision.seconds == pytest.approx(30.01)


def test_a_retry_already_due_is_claimed_again_at_once():
    seen = Seen(in_flight=2, live=0, held=0, outlook=Outlook(0, NOW - timedelta(seconds=5)), now=NOW)
    assert decide(seen).seconds == pytest.approx(0.01)


def test_nothing_left_with_keywords_still_held_waits_for_their_ends():
    assert decide(Seen(in_flight=2, live=0, held=1, outlook=NOTHING, now=NOW)).action == "none_left"


def test_nothing_left_and_nothing_held_finishes_a_crawl_of_its_own():
    assert decide(Seen(in_flight=2, live=0, held=0, outlook=NOTHING, now=NOW)).action == "finish"


def test_shared_nothing_left_asks_whether_other_workers_are_busy():
    seen = Seen(in_flight=2, live=0, held=0, outlook=NOTHING, now=NOW, others_busy=None)
    assert decide(seen).action == "ask_others"


def test_shared_it_finishes_only_once_no_other_worker_is_busy():
    busy = Seen(in_flight=2, live=0, held=0, outlook=NOTHING, now=NOW, others_busy=True)
    idle = Seen(in_flight=2, live=0, held=0, outlook=NOTHING, now=NOW, others_busy=False)
    assert (decide(busy).action, decide(idle).action) == ("none_left", "finish")
