"""Salary texts into numbers of their own pay period, per site, from the case table in salary_cases.py;
pay a month from them only by a conversion the user names."""

import pytest

from farm.salary import NO_FIGURE, UNPARSED_STAT, columns, parse
from farm.salary.monthly import Conversion, monthly
from farm.salary.rules import Salary
from farm.state.normalise import fit_rows
from tests.unit.salary_cases import NONE, SITES, UNKNOWN

CASES = [(source, text, expected) for source, table in SITES.items() for text, expected in table]


@pytest.mark.parametrize(("source", "text", "expected"), CASES, ids=[f"{s}:{t!r}" for s, t, _ in CASES])
def test_each_sites_salary_text_gives_its_numbers_or_none(source, text, expected):
    salary = parse(source, text)
    if expected == UNKNOWN:
        assert salary is None
        assert columns(source, text) == (None, None, None, None)
    else:
        assert salary.values() == expected
        assert columns(source, text) == expected


def test_the_table_holds_150_texts_or_more_in_each_sites_forms_with_odd_and_unknown_ones():
    assert len(CASES) >= 150
    for table in SITES.values():
        assert len(table) >= 50
        periods = {expected[3] for _, expected in table if expected != UNKNOWN}
        assert {"month", "day", "hour", "none"} <= periods
        assert sum(expected == UNKNOWN for _, expected in table) >= 8
    assert any(expected[3] == "year" for _, _, expected in CASES if expected != UNKNOWN)


def test_a_missing_salary_says_no_figure_and_a_non_text_is_unknown():
    assert parse("boss", None) == NO_FIGURE == Salary(*NONE)
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


STATUTORY = Conversion(days_a_month=21.75, hours_a_month=174)


def test_pay_a_month_comes_from_monthly_pay_alone_unless_a_conversion_is_named():
    assert monthly(parse("boss", "20-30K·14薪"), None) == (20000, 30000)  # 14 months kept aside, not spread
    assert monthly(parse("boss", "500元/时"), None) is None  # never 87,000 a month unasked
    assert monthly(parse("boss", "150-200元/天"), None) is None
    assert monthly(parse("qcwy", "10-20万/年"), None) is None
    assert monthly(parse("boss", "面议·13薪"), STATUTORY) is None
    assert monthly(parse("boss", "10K以上"), None) == (10000, None)


def test_a_conversion_uses_the_factors_it_names():
    assert monthly(parse("boss", "500元/时"), STATUTORY) == (87000, 87000)
    assert monthly(parse("boss", "500元/时"), Conversion(days_a_month=22, hours_a_month=160)) == (80000, 80000)
    assert monthly(parse("boss", "150-200元/天"), STATUTORY) == (3262.5, 4350)
    assert monthly(parse("qcwy", "12-24万/年"), STATUTORY) == (10000, 20000)


def test_a_yearly_figure_with_its_months_is_the_years_pay_divided_once():
    # 28万 a year paid as 14 months: 2万 a month, not 28万 ÷ 12 × 14
    assert monthly(parse("qcwy", "年薪28-42万·14薪"), STATUTORY) == (20000, 30000)
    assert parse("qcwy", "年薪28-42万·14薪").values() == (280000, 420000, 14, "year")
