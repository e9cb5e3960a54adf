"""farm.state.caps's tally and lines: what each page cap left behind, as `farm stats` prints it."""

from scrapy.settings import Settings

from farm.config import SiteConfig
from farm.state.caps import Capped, left_behind, site_caps, summary_lines


def keyword(city, job, site_total, took, source="boss", cap=3):
    return Capped(source, city, job, site_total, took, cap)


def test_a_keyword_reads_as_the_site_against_its_cap():
    assert keyword("北京", "python", 385, 45).describe() == (
        "boss 北京/python: the site holds 385, the cap of 3 pages took 45 — FARM_BOSS_MAX_PAGES"
    )
    assert keyword("上海", "java", 12_345, 20, source="qcwy", cap=1).describe() == (
        "qcwy 上海/java: the site holds 12,345, the cap of 1 page took 20 — FARM_QCWY_MAX_PAGES"
    )


def test_the_tally_sums_each_sites_keywords_apart():
    capped = [keyword("北京", "python", 385, 45), keyword("上海", "java", 1234, 1000, source="qcwy", cap=50)]
    capped.append(keyword("深圳", "前端", 60, 45))
    assert left_behind(capped) == {
        "boss": {
            "setting": "FARM_BOSS_MAX_PAGES",
            "cap": 3,
            "keywords": 2,
            "site_total": 445,
            "took": 90,
            "left_behind": 355,
        },
        "qcwy": {
            "setting": "FARM_QCWY_MAX_PAGES",
            "cap": 50,
            "keywords": 1,
            "site_total": 1234,
            "took": 1000,
            "left_behind": 234,
        },
    }


def test_the_lines_name_each_site_its_total_and_its_largest_keywords_first():
    capped = [keyword("北京", f"job{n}", 100 - n, 45) for n in range(7)]
    site = left_behind(capped)["boss"]
    rows = [
        {"source": "boss", "caps": {**site, "capped": [k.to_json() for k in capped]}},
        {"source": "zhilian", "caps": {"setting": "FARM_ZHILIAN_MAX_PAGES", "cap": 15, "keywords": 0, "capped": []}},
        {"source": "mine", "caps": {"setting": "FARM_MINE_MAX_PAGES", "cap": None, "keywords": 0, "capped": []}},
    ]
    assert summary_lines(rows, shown=2) == [
        "boss: 7 keyword(s) held back by FARM_BOSS_MAX_PAGES=3: the site holds 679, farm took 315, 364 left behind",
        "  boss 北京/job0: the site holds 100, the cap of 3 pages took 45 — FARM_BOSS_MAX_PAGES",
        "  boss 北京/job1: the site holds 99, the cap of 3 pages took 45 — FARM_BOSS_MAX_PAGES",
        "  … and 5 more (farm stats --json lists them all)",
        "zhilian: no keyword held back by FARM_ZHILIAN_MAX_PAGES=15",
    ]


def test_each_sources_cap_is_its_setting_and_a_source_without_one_has_the_polite_cap():
    settings = Settings({"FARM_BOSS_MAX_PAGES": "10", "FARM_QCWY_MAX_PAGES": 50})
    assert site_caps(settings, ["boss", "qcwy", "mine"]) == {
        "boss": 10,
        "qcwy": 50,
        "mine": SiteConfig.model_fields["max_pages"].default,
    }
