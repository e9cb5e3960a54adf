"""farm's public surface: what a project imports from ``farm``, loaded only when asked for."""

import pytest

import farm


def test_a_project_imports_what_it_uses_from_farm():
    from farm import FarmAddon, JobPosting, LeaseSpider, Page, ParseError, Wall
    from farm.addon import FarmAddon as addon
    from farm.spiders.base import LeaseSpider as base

    assert FarmAddon is addon and LeaseSpider is base
    assert issubclass(ParseError, ValueError) and Page().postings == [] and "job_id" in JobPosting.fields
    assert Wall("w", "http://x.invalid/", ("c",)).cookies == ("c",)
    assert set(farm.__all__) <= set(dir(farm))


def test_a_name_farm_does_not_offer_is_an_attribute_error_naming_it():
    with pytest.raises(AttributeError, match="no attribute 'Spider'"):
        farm.Spider  # noqa: B018 - the attribute access is the test
