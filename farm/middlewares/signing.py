"""Request signing at send time: each attempt of a request, retries included, is signed anew.

A site whose requests carry a timestamp and a signature over it (51job, docs/sites.md
§2.1) must not send a retry minutes later with the first attempt's timestamp. Such a
spider defines ``sign(url) -> (url, headers)``: the URL with a fresh timestamp, and
the headers that sign it (None: the request is not one it signs). This middleware
calls it for every request on its way to the downloader. The add-on (farm.addon)
installs it only for a spider that defines the hook; listed by hand for another, it
is off (NotConfigured).

The farm scheduler holds a page request back until the page window has room and
the site's pace allows it (back-offs after blocks included), so a request reaches
this middleware as it goes to the site. It sits after the lease middleware (50),
which drops the requests of ended keywords unsigned, and before Scrapy's
RetryMiddleware (550); every retry (Scrapy's, or farm.middlewares.blocks') goes
back through the scheduler and comes through here again.

A request's URL is not changed in place (Scrapy gives no way to): the signed copy
(``Request.replace``) is returned, which Scrapy hands back to the scheduler. Marked
signed in its meta (farm.crawl.meta), it goes out again at once (farm.crawl.scheduler's lane for pages in
the window: no pace, no queue, no other worker), and passes here as it is.
"""

from scrapy.exceptions import NotConfigured
from scrapy.utils.conf import build_component_list
from scrapy.utils.misc import load_object

from farm.crawl.meta import FarmMeta


def signs(spidercls: type) -> bool:
    """Whether the spider signs its requests as they are sent (a ``sign`` hook: qcwy's)."""
    return callable(getattr(spidercls, "sign", None))


class RequestSigningMiddleware:
    def __init__(self, crawler):
        self.crawler = crawler
        self.stats = crawler.stats

    @classmethod
    def from_crawler(cls, crawler):
        if not signs(crawler.spidercls):
            raise NotConfigured(f"{crawler.spidercls.__name__} signs no requests (no sign)")
        return cls(crawler)

    def process_request(self, request):
        if FarmMeta.of(request).take_signed():
            return None  # signed as it went out a moment ago
        signed = self.crawler.spider.sign(request.url)
        if signed is None:
            return None
        url, headers = signed
        self.stats.inc_value("farm/sign/signed")
        if url == request.url:
            request.headers.update(headers)
            return None
        # sent exactly as signed (the sign covers these very characters, quoted already):
        # Scrapy's URL escaping would only spend time finding nothing to do
        copy = request.replace(url=url, meta={**request.meta, "verbatim_url": True})
        FarmMeta.of(copy).mark_signed()
        copy.headers.update(headers)
        return copy


def signs_when_sent(settings) -> bool:
    """Whether a crawl with these settings signs its requests here, as each attempt goes out."""
    enabled = build_component_list(settings.get_component_priority_dict_with_base("DOWNLOADER_MIDDLEWARES"))
    return any(
        isinstance(component, type) and issubclass(component, RequestSigningMiddleware)
        for component in (load_object(path) if isinstance(path, str) else path for path in enabled)
    )
