"""The baseline: plain Scrapy fetching and parsing the same qcwy pages as farm.

Same requests and the same parser as farm's qcwy spider, but no keyword table,
no leases, no progress and no pipeline. Run with
``scrapy runspider bench/plain_qcwy.py -a keywords=北京:python,上海:java``.
"""

from farm.sites.qcwy.spider import QcwySpider


class PlainQcwySpider(QcwySpider):
    name = "qcwy_plain"
    site = "qcwy"
    custom_settings = {
        # plain Scrapy: without farm's add-on (farm.settings turns it on), so Scrapy's own scheduler
        # (farm's needs the keyword table) and none of farm's components
        "ADDONS": {},
        "SCHEDULER": "scrapy.core.scheduler.Scheduler",
        "DOWNLOADER_MIDDLEWARES": {},
        "ITEM_PIPELINES": {},
        "EXTENSIONS": {},
    }

    def __init__(self, keywords="", **kwargs):
        super().__init__(**kwargs)
        self.keywords = [tuple(pair.split(":", 1)) for pair in keywords.split(",") if pair]

    async def start(self):
        for city, job in self.keywords:
            yield self.plain_request(city, job, 1)

    def plain_request(self, city, job, page):
        request = self.search_request(self.city_code(city), job, page)
        return request.replace(
            callback=self.parse_plain, cb_kwargs={"city": city, "job": job, "page": page}, dont_filter=True
        )

    def parse_plain(self, response, city, job, page):
        parsed = self.parse_page(response)
        yield from parsed.postings
        if page == 1:
            for next_page in range(2, self.last_page(parsed, 1) + 1):
                yield self.plain_request(city, job, next_page)
