"""Salary texts into numbers, per site, from the case table in salary_cases.py."""

import pytest

from farm.salary import NO_FIGURE, UNPARSED_STAT, columns, parse
from farm.state.normalise import fit_rows
from tests.unit.salary_cases import NONE, SITES, UNKNOWN

CASES = [(source, text, expected) for source, table in SITES.items() for text, expected in table]


@pytest.mark.parametrize(("source", "text", "expected"), CASES, ids=[f"{s}:{t!r}" for s, t, _ in CASES])
def test_each_sites_salary_text_gives_its_numbers_or_none(source, text, expected):
    salary = parse(source, text)
    if expected == UNKNOWN:
        assert salary is None
        assert columns(source, text) == (None, None, None, None)
    elif expected == NONE:
        assert salary == NO_FIGURE
    else:
        assert salary.values() == expected


def test_the_table_holds_twenty_odd_texts_or_more_beside_each_sites_documented_forms():
    odd = sum(len(table) - table.index(next(row for row in table if row[0] in _FIRST_ODD)) for table in SITES.values())
    assert odd >= 20


_FIRST_ODD = {"15-25k", "１万以上", "８０００－１６０００元"}


def test_a_missing_salary_says_no_figure_and_a_non_text_is_unknown():
    assert parse("boss", None) == NO_FIGURE
    assert parse("boss", 15000) is None


def test_a_site_farm_does_not_know_is_read_by_the_common_grammar():
    assert parse("lagou", "15-25K·13薪").values() == (15000, 25000, 13, "month")
    assert parse("lagou", "8000-16000") is None  # bare yuan is zhilian's alone


def test_the_writer_counts_each_salary_text_no_rule_knows_and_fits_the_rest_without_count():
    rows = [
        {"source": "boss", "job_id": str(at), "salary": text}
        for at, text in enumerate(["15-25K", "面议", None, "薪资保密", "15-25"])
    ]
    kept, rejected, changed = fit_rows(rows)
    assert len(kept) == 5 and not rejected
    assert changed == {UNPARSED_STAT: 2}
