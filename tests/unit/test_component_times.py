"""bench.component_times: each part's time is its own, without the parts it called."""

import pytest

from bench import component_times


@pytest.fixture
def clock(monkeypatch):
    ticks = iter([0.0, 1.0, 4.0, 10.0])  # outer starts, inner starts, inner ends, outer ends
    monkeypatch.setattr(component_times.time, "perf_counter", lambda: next(ticks))
    monkeypatch.setattr(component_times, "_totals", {})
    monkeypatch.setattr(component_times, "_stack", [])


def test_a_part_called_from_another_counts_in_its_own_row_only(clock):
    inner = component_times._timed(lambda: "inner's answer", "inner")
    outer = component_times._timed(lambda: inner(), "outer")

    assert outer() == "inner's answer"
    assert component_times._totals == {"inner": [3.0, 1], "outer": [7.0, 1]}
    assert component_times._stack == []


def test_a_part_that_raises_is_timed_and_leaves_no_frame_behind(clock):
    def fails():
        raise ValueError("a page that is not JSON")

    inner = component_times._timed(fails, "inner")
    outer = component_times._timed(lambda: inner(), "outer")

    with pytest.raises(ValueError, match="not JSON"):
        outer()
    assert component_times._totals == {"inner": [3.0, 1], "outer": [7.0, 1]}
    assert component_times._stack == []


def test_a_second_crawl_in_the_process_does_not_time_its_parts_twice(monkeypatch):
    from farm.crawl.outbox import Outbox

    monkeypatch.setattr(component_times, "_installed", [])
    for module_name, class_name, function_name in component_times.PARTS:
        module = component_times.importlib.import_module(module_name)
        owner = getattr(module, class_name) if class_name else module
        monkeypatch.setattr(owner, function_name, getattr(owner, function_name))
    for spider in ("farm.sites.qcwy.spider", "farm.sites.boss.spider"):
        module = component_times.importlib.import_module(spider)
        monkeypatch.setattr(module, "response_json", module.response_json)
    component_times._install()
    once = Outbox._send
    component_times._install()
    assert Outbox._send is once
