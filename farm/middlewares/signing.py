"""Request signing at send time: each attempt of a request, retries included, is signed anew.

A site whose requests carry a timestamp and a signature over it (51job, docs/sites.md
§2.1) must not send a retry minutes later with the first attempt's timestamp. Such a
spider defines ``sign(url) -> (url, headers)``: the URL with a fresh timestamp, and
the headers that sign it (None: the request is not one it signs). This middleware
calls it for every request on its way to the downloader and changes the attempt
in hand; it is off (NotConfigured) for a spider that defines no such hook.

The farm scheduler holds a page request back until the page window has room and
the site's pace allows it (back-offs after blocks included), so a request reaches
this middleware as it goes to the site. It sits after the lease middleware (50),
which drops the requests of ended keywords unsigned, and before Scrapy's
RetryMiddleware (550); every retry (Scrapy's, or farm.middlewares.blocks') goes
back through the scheduler and comes through here again.
"""

from scrapy.exceptions import NotConfigured
from scrapy.utils.conf import build_component_list
from scrapy.utils.misc import load_object


class RequestSigningMiddleware:
    def __init__(self, crawler):
        self.crawler = crawler
        self.stats = crawler.stats

    @classmethod
    def from_crawler(cls, crawler):
        if not callable(getattr(crawler.spidercls, "sign", None)):
            raise NotConfigured(f"{crawler.spidercls.__name__} signs no requests (no sign)")
        return cls(crawler)

    def process_request(self, request):
        signed = self.crawler.spider.sign(request.url)
        if signed is None:
            return None
        # A Request returned from here would go back to the scheduler and wait in its queue
        # again, stale by the time it is sent: the attempt in hand takes the signed URL and
        # headers instead (no copy of the request: this runs for every page). Scrapy has no
        # public setter for a request's URL.
        url, headers = signed
        if url != request.url:
            # sent exactly as signed (the sign covers these very characters, quoted already):
            # Scrapy's URL escaping would only spend time finding nothing to do
            request.meta["verbatim_url"] = True
            request._set_url(url)
        for name, value in headers.items():
            request.headers[name] = value
        self.stats.inc_value("farm/sign/signed")
        return None


def signs_when_sent(settings) -> bool:
    """Whether a crawl with these settings signs its requests here, as each attempt goes out."""
    enabled = build_component_list(settings.get_component_priority_dict_with_base("DOWNLOADER_MIDDLEWARES"))
    return any(
        isinstance(component, type) and issubclass(component, RequestSigningMiddleware)
        for component in (load_object(path) if isinstance(path, str) else path for path in enabled)
    )
