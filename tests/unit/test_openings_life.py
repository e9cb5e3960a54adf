"""An opening's life (farm.openings.life): the stretches a posting is listed, gone after completed days
that prove it unseen, back when seen again; an opening listed while any of its postings is."""

from datetime import date, timedelta

from farm.openings.life import Life, day_counts, merged, spans

D = [date(2026, 12, 1) + timedelta(days=n) for n in range(8)]
EVERY_DAY = D


def test_a_posting_unseen_on_completed_days_is_gone_and_back_when_seen_again():
    proof = set(D)
    assert spans([D[0], D[4]], EVERY_DAY, proof.__contains__, 2) == [(D[0], D[2]), (D[4], D[6])]
    # one completed day between its sightings is not gone_after=2 of them: listed throughout
    assert spans([D[0], D[2]], EVERY_DAY, proof.__contains__, 2) == [(D[0], D[4])]


def test_days_that_prove_nothing_leave_a_posting_listed():
    partial = [D[0], D[3], D[4]]  # its keyword completed only on these days
    assert spans([D[0], D[4]], partial, set(D).__contains__, 2) == [(D[0], None)]
    # no sightings kept of its site on D1..D3: the gap proves nothing
    assert spans([D[0], D[4]], EVERY_DAY, lambda day: day > D[4], 2) == [(D[0], D[6])]


def test_an_opening_is_listed_while_any_posting_is_and_back_when_one_returns():
    assert merged([(D[0], D[2]), (D[2], D[5]), (D[6], None)]) == [(D[0], D[5]), (D[6], None)]
    assert merged([(D[0], None), (D[1], D[3])]) == [(D[0], None)]
    opening = Life(D[0], D[6], None, ((D[0], D[5]), (D[6], None)))
    posting = Life(D[0], D[6], None, ((D[0], D[2]), (D[4], None)))
    assert opening.back == (D[6],) and posting.back == (D[4],)
    counted = [day_counts(day, [posting], [opening]) for day in (D[2], D[4], D[5], D[6])]
    assert [(c.gone_postings, c.back_postings, c.gone_openings, c.back_openings) for c in counted] == [
        (1, 0, 0, 0),
        (0, 1, 0, 0),
        (0, 0, 1, 0),
        (0, 0, 0, 1),
    ]
