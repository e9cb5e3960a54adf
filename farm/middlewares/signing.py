"""Request signing at send time: each attempt of a request, retries included, is signed anew.

A site whose requests carry a timestamp and a signature over it (51job, docs/sites.md
§2.1) must not send a retry minutes later with the first attempt's timestamp. Such a
spider defines ``sign_request(request) -> request``: the request with a fresh
timestamp and signature, built like ``Request.replace`` builds one. This
middleware calls it for every request on its way to the downloader; it is off
(NotConfigured) for a spider that defines no such hook.

The farm scheduler holds a page request back until the page window has room and
the site's pace allows it (back-offs after blocks included), so a request reaches
this middleware as it goes to the site. It sits after the lease middleware (50),
which drops the requests of ended keywords unsigned, and before Scrapy's
RetryMiddleware (550); every retry (Scrapy's, or farm.middlewares.blocks') goes
back through the scheduler and comes through here again.
"""

from scrapy.exceptions import NotConfigured


class RequestSigningMiddleware:
    def __init__(self, crawler):
        self.crawler = crawler
        self.stats = crawler.stats

    @classmethod
    def from_crawler(cls, crawler):
        if not callable(getattr(crawler.spidercls, "sign_request", None)):
            raise NotConfigured(f"{crawler.spidercls.__name__} signs no requests (no sign_request)")
        return cls(crawler)

    def process_request(self, request):
        signed = self.crawler.spider.sign_request(request)
        if signed is request:
            return None
        # A Request returned from here would go back to the scheduler and wait in its queue
        # again, stale by the time it is sent: the attempt in hand takes the signed URL and
        # headers instead. Scrapy has no public setter for a request's URL.
        request._set_url(signed.url)
        request.headers = signed.headers
        self.stats.inc_value("farm/sign/signed")
        return None
