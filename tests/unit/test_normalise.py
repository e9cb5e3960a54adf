"""Every posting fitted to what job_posting holds; an ordinary one passes through untouched."""

import copy
from datetime import UTC, datetime, timedelta, timezone

import orjson
import pytest

from farm.spiders.parsing import site_time
from farm.state.normalise import encodable, fit_row, fit_rows, key_problem, to_time
from farm.state.posting_fields import JSON_DEPTH_MAX, TIME_MAX, TIME_MIN

SHANGHAI = timezone(timedelta(hours=8))


def ordinary(**fields):
    row = {
        "source": "qcwy",
        "job_id": "153829157",
        "title": "Python 开发工程师😀",
        "salary": "1.5-2万",
        "company": "某科技有限公司",
        "city": "北京",
        "area": "海淀区",
        "experience": "3-5年",
        "degree": "本科",
        "tags": ["Python", "五险一金"],
        "published_at": "2026-11-30T09:30:00+08:00",
        "url": "https://jobs.51job.com/beijing/153829157.html",
        "keyword_id": 7,
        "raw": {"jobId": "153829157", "jobTagsList": [{"jobTagName": "Python"}], "n": 2**63, "f": 1.5},
    }
    return {**row, **fields}


def deep(levels, leaf=1):
    value = leaf
    for _ in range(levels):
        value = [value]
    return value


def depth(value):
    if isinstance(value, dict):
        return 1 + max((depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((depth(v) for v in value), default=0)
    return 0


# --- ordinary postings --------------------------------------------------------------


def test_an_ordinary_row_passes_through_unchanged():
    row = ordinary()
    before = copy.deepcopy(row)
    assert fit_row(row) == []
    published = row.pop("published_at")
    assert published == datetime(2026, 11, 30, 9, 30, tzinfo=SHANGHAI)
    assert row == {k: v for k, v in before.items() if k != "published_at"}


def test_an_ordinary_row_needs_no_encodable_copy():
    row = ordinary(published_at=datetime(2026, 11, 30, 9, 30, tzinfo=SHANGHAI))
    assert orjson.loads(orjson.dumps(encodable(row))) == orjson.loads(orjson.dumps(row))


def test_text_at_its_limit_is_kept_as_it_is():
    title = "😀" * 255
    row = ordinary(title=title)
    assert fit_row(row) == [] and row["title"] is title


# --- text ---------------------------------------------------------------------------


@pytest.mark.parametrize("char", ["😀", "𠀀", "é"])
def test_overlong_text_is_cut_to_its_column_in_whole_characters(char):
    row = ordinary(title="职" + char * 300, url="u" * 600, salary=char * 65)
    assert sorted(fit_row(row)) == ["salary", "title", "url"]
    assert row["title"] == "职" + char * 254 and len(row["title"]) == 255
    assert row["salary"] == char * 64
    assert len(row["url"]) == 512
    row["title"].encode("utf-8")  # whole characters: no half of a pair


def test_nul_is_removed_from_text_and_from_json_strings_and_keys():
    row = ordinary(title="Py\x00thon", company="\x00", tags=["a\x00b"], raw={"k\x00": ["v\x00", {"x": "\x00y"}]})
    assert sorted(fit_row(row)) == ["company", "raw", "tags", "title"]
    assert (row["title"], row["company"], row["tags"], row["raw"]) == ("Python", "", ["ab"], {"k": ["v", {"x": "y"}]})


def test_text_that_is_not_a_string_is_stored_as_its_json_text():
    row = ordinary(title=123, salary=["1", "2"], area={"a": 1})
    assert sorted(fit_row(row)) == ["area", "salary", "title"]
    assert (row["title"], row["salary"], row["area"]) == ("123", '["1","2"]', '{"a":1}')


# --- times --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        "0001-01-01 00:00:00",  # a site's "no date", as text
        "9999-12-31 23:59:59",
        site_time("0001-01-01 00:00:00"),  # the same, as the spiders parse it (year 1, China time)
        site_time("9999-12-31 23:59:59"),
        datetime(1, 1, 1, tzinfo=SHANGHAI),  # to UTC: year 0, an overflow
        datetime(9999, 12, 31, 23, 59, 59, tzinfo=timezone(timedelta(hours=-8))),  # to UTC: year 10000
        "0001-01-01T00:00:00+08:06",  # how orjson writes site_time's year 1 for the writer
        "1989-12-31T23:59:59+00:00",
        "1990-01-01T03:00:00+08:00",  # 1989 in UTC
        "2099-12-31T23:00:00-14:00",  # 2100 in UTC
        TIME_MAX,
        datetime(2026, 11, 30, 9, 30),  # no zone: which instant is unknown
        "2026-11-30 09:30:00",
        "昨天",
        "not a time",
        "",
        20261130,
        [2026, 11, 30],
    ],
)
def test_an_impossible_or_unparsable_time_is_none(value):
    assert to_time(value) is None


@pytest.mark.parametrize(
    "value, expected",
    [
        ("2026-11-30T09:30:00+08:00", datetime(2026, 11, 30, 1, 30, tzinfo=UTC)),
        (site_time("2026-11-30 09:30:00"), datetime(2026, 11, 30, 1, 30, tzinfo=UTC)),
        (TIME_MIN, TIME_MIN),
        ("2099-12-31T23:59:59+00:00", datetime(2099, 12, 31, 23, 59, 59, tzinfo=UTC)),
        ("1990-01-01T09:00:00+08:00", TIME_MIN + timedelta(hours=1)),
        ("2099-12-31T23:00:00+08:00", datetime(2099, 12, 31, 15, 0, tzinfo=UTC)),
    ],
)
def test_a_time_in_range_is_kept(value, expected):
    assert to_time(value) == expected


def test_a_row_with_an_impossible_time_is_stored_without_it():
    row = ordinary(published_at="0001-01-01T00:00:00+08:06")
    assert fit_row(row) == ["published_at"]
    assert row["published_at"] is None


# --- JSON ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "raw, stored",
    [
        ({"n": 2**70}, {"n": str(2**70)}),
        ({"n": -(2**70)}, {"n": str(-(2**70))}),
        ({"n": 2**64 - 1, "m": -(2**63)}, {"n": 2**64 - 1, "m": -(2**63)}),  # what orjson encodes stays
        ({"f": float("nan"), "g": float("inf")}, {"f": None, "g": None}),
        ({1: "x", None: "y", (1, 2): "z"}, {"1": "x", "None": "y", "(1, 2)": "z"}),
        ({"s": "\ud800x"}, {"s": "\ufffdx"}),  # a lone surrogate, as json.loads may give
        ({"set": {3}, "bytes": b"\xe4\xb8\xad", "t": (1, 2)}, {"set": [3], "bytes": "中", "t": [1, 2]}),
    ],
)
def test_raw_that_orjson_refuses_is_stored_in_a_form_it_encodes(raw, stored):
    fitted = encodable(ordinary(raw=raw))
    assert orjson.loads(orjson.dumps(fitted))["raw"] == stored


def test_nesting_deeper_than_a_json_column_holds_is_cut():
    for levels in (255, 1000):  # beyond orjson's 254
        fitted = encodable(ordinary(raw={"deep": deep(levels)}))
        assert depth(orjson.loads(orjson.dumps(fitted))["raw"]) == JSON_DEPTH_MAX
    # what orjson encodes but MariaDB's JSON_VALID refuses is cut by the writer
    row = ordinary(raw=deep(JSON_DEPTH_MAX + 1))
    assert fit_row(row) == ["raw"]
    assert depth(row["raw"]) == JSON_DEPTH_MAX
    kept = ordinary(raw=deep(JSON_DEPTH_MAX))
    assert fit_row(kept) == [] and depth(kept["raw"]) == JSON_DEPTH_MAX


def test_an_encodable_copy_fits_its_times_too():
    fitted = encodable(ordinary(published_at=datetime(1, 1, 1, tzinfo=SHANGHAI), raw={1: 2}))
    assert fitted["published_at"] is None
    fitted = encodable(ordinary(published_at=object(), raw={1: 2}))
    assert fitted["published_at"] is None


def test_a_keyword_id_beyond_64_bits_is_none():
    row = ordinary(keyword_id=2**63)
    assert fit_row(row) == ["keyword_id"] and row["keyword_id"] is None


# --- keys ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fields, reason",
    [
        ({"job_id": "j" * 65}, "posting job_id of 65 characters, longer than its column (64)"),
        ({"job_id": "😀" * 65}, "posting job_id of 65 characters, longer than its column (64)"),
        ({"source": "qcwy" * 5}, "posting source of 20 characters, longer than its column (16)"),
        ({"job_id": "j\x001"}, "posting job_id holds a NUL character"),
        ({"job_id": ""}, "posting without job_id"),
        ({"source": None, "job_id": None}, "posting without source, job_id"),
    ],
)
def test_a_posting_that_cannot_be_stored_under_its_key_is_never_cut(fields, reason):
    row = ordinary(**fields)
    assert key_problem(row).startswith(reason)
    kept, rejected, changed = fit_rows([row, ordinary(job_id="ok")])
    assert [r["job_id"] for r in kept] == ["ok"]
    [(source, job_id, why)] = rejected
    assert (source, job_id) == (row["source"], row["job_id"]) and why.startswith(reason)
    assert not changed


def test_a_job_id_at_its_limit_or_a_number_is_kept():
    assert key_problem(ordinary(job_id="😀" * 64)) is None
    row = ordinary(job_id=153829157)
    assert key_problem(row) is None and fit_row(row) == [] and row["job_id"] == "153829157"


def test_fit_rows_counts_the_rows_each_field_was_changed_in():
    rows = [ordinary(title="t" * 300), ordinary(title="t" * 300, published_at="昨天"), ordinary()]
    kept, rejected, changed = fit_rows(rows, nul=False)
    assert (len(kept), rejected, dict(changed)) == (3, [], {"title": 2, "published_at": 1})


def test_a_rejection_shows_a_hostile_key_cut_short():
    _, [(_, job_id, reason)], _ = fit_rows([ordinary(job_id="j" * 100_000)])
    assert job_id == "j" * 80 and len(reason) < 200
