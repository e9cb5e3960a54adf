"""What the site spiders share: settings checked at start, odd postings skipped, not fatal."""

import pytest

from farm.errors import SettingError
from farm.sites.qcwy.spider import QcwySpider
from farm.sites.zhilian.spider import ZhilianSpider
from farm.state.models import PAGES_AHEAD_MAX, max_pages_that_fit
from tests.unit.spider_helpers import make_lease, make_spider, request_for, response_for


def test_the_largest_page_cap_is_the_one_whose_pages_ahead_fit_the_column():
    most = max_pages_that_fit()
    assert len(",".join(str(page) for page in range(2, most + 1))) <= PAGES_AHEAD_MAX
    assert len(",".join(str(page) for page in range(2, most + 2))) > PAGES_AHEAD_MAX


@pytest.mark.parametrize("pages", [0, max_pages_that_fit() + 1, 10_000])
def test_a_page_cap_the_keyword_table_cannot_hold_is_refused_at_start_by_name(pages):
    with pytest.raises(SettingError, match=rf"^FARM_QCWY_MAX_PAGES='{pages}'.* from 1 to {max_pages_that_fit()}\b"):
        make_spider(QcwySpider, FARM_QCWY_MAX_PAGES=pages)


def test_the_largest_page_cap_that_fits_is_accepted():
    spider, _ = make_spider(QcwySpider, FARM_QCWY_MAX_PAGES=max_pages_that_fit())
    assert spider.max_pages == max_pages_that_fit()


def test_a_posting_whose_fields_have_the_wrong_shape_is_skipped_not_fatal_to_its_page():
    spider, sent = make_spider(ZhilianSpider)
    lease = make_lease("zhilian", city="深圳", job="Java")
    request = request_for(spider, lease, 1)
    odd = '{"number": "CC1J1", "name": "ok", "showSkillTags": 5}'  # not a list: the mapper trips on it
    good = '{"number": "CC1J2", "name": "fine", "publishTime": "2026-09-18 10:21:00"}'
    html = (
        f'<html><body><script>__INITIAL_STATE__={{"pages": 1, "positionList": [{odd}, {good}]}}</script></body></html>'
    )
    results = list(spider.parse_search(response_for(request, body=html.encode())))
    assert [item["job_id"] for item in results] == ["CC1J2"]
    assert spider.crawler.stats.get_value("farm/page/posting_unreadable") == 1
    assert sent[-1][1]["postings"] == 1
