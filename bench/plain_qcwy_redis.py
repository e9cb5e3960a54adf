"""The scrapy-redis baseline: the plain qcwy spider on scrapy-redis's own scheduler and dupefilter.

What a user gets from scrapy-redis as it comes (its PriorityQueue, pickled requests,
RFPDupeFilter), fetching the same pages as farm. Run with
``scrapy runspider bench/plain_qcwy_redis.py -a keywords=北京:python -s REDIS_URL=redis://…``.
"""

from bench.plain_qcwy import PlainQcwySpider


class PlainQcwyRedisSpider(PlainQcwySpider):
    name = "qcwy_plain_redis"
    custom_settings = {
        **PlainQcwySpider.custom_settings,
        "SCHEDULER": "scrapy_redis.scheduler.Scheduler",
        "DUPEFILTER_CLASS": "scrapy_redis.dupefilter.RFPDupeFilter",
        "SCHEDULER_QUEUE_CLASS": "scrapy_redis.queue.PriorityQueue",
    }
