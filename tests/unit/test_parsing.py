"""The shared parsing helpers: site times in China time, tags."""

from datetime import UTC, datetime

import pytest

from farm.spiders.parsing import SITE_TZ, json_kind, site_time, unique_tags


@pytest.mark.parametrize(
    "text, expected",
    [
        ("2026-11-28 10:11:12", datetime(2026, 11, 28, 10, 11, 12, tzinfo=SITE_TZ)),
        ("2026-11-28 10:11", datetime(2026, 11, 28, 10, 11, tzinfo=SITE_TZ)),
        (" 2026-11-28 ", datetime(2026, 11, 28, tzinfo=SITE_TZ)),
        ("2026-1-2 3:04:05", datetime(2026, 1, 2, 3, 4, 5, tzinfo=SITE_TZ)),  # not zero-padded
        ("2026-13-01", None),
        ("2026-02-30 10:00", None),
        ("昨天", None),
        (None, None),
    ],
)
def test_site_time_reads_the_sites_formats_in_china_time(text, expected):
    assert site_time(text) == expected


def test_site_time_reads_epoch_milliseconds():
    assert site_time(1700000000000) == datetime(2023, 11, 14, 22, 13, 20, tzinfo=UTC)


def test_unique_tags_keeps_the_first_of_each_and_drops_empties():
    assert unique_tags(["Python", "", None, "五险一金", "Python", 3]) == ["Python", "五险一金", "3"]


@pytest.mark.parametrize(
    "value, kind",
    [
        ({}, "an object"),
        ("[]", "a string"),
        (0, "a number"),
        (1.5, "a number"),
        (True, "true"),
        (False, "false"),
        (None, "null"),
        ([], "a list"),
    ],
)
def test_json_kind_names_a_decoded_value_as_json_does(value, kind):
    assert json_kind(value) == kind
