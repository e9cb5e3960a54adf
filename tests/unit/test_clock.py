"""farm.state.clock: a day where the crawl is judged, as the instants it spans."""

from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

from farm.state.clock import day_span, last_days, today


def test_a_day_spans_from_its_start_to_the_next_days_where_it_is_judged():
    span = day_span(date(2024, 5, 1), ZoneInfo("Asia/Shanghai"))
    assert span.utc().start == datetime(2024, 4, 30, 16, tzinfo=UTC)
    assert span.utc().end == datetime(2024, 5, 1, 16, tzinfo=UTC)
    assert span.start == span.utc().start and span.utc().start.tzinfo is UTC


def test_a_day_with_a_daylight_saving_change_is_as_long_as_it_really_is():
    spring = day_span(date(2024, 3, 10), ZoneInfo("America/New_York")).utc()
    assert spring.end - spring.start == timedelta(hours=23)


def test_today_is_judged_in_the_time_zone_and_last_days_end_with_it():
    now = datetime(2024, 4, 30, 16, 30, tzinfo=UTC)
    assert today(now, ZoneInfo("Asia/Shanghai")) == date(2024, 5, 1)
    assert last_days(date(2024, 5, 1), 3) == [date(2024, 4, 29), date(2024, 4, 30), date(2024, 5, 1)]
