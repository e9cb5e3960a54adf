"""SessionMiddleware: page requests go out as the crawl's client identity, with the site's current session.

A page request takes the site's identity as it goes out (curl_cffi's browser fingerprint through
farm.sessions.handler, that browser's headers for its ``request_kind``) and the cookies its site and proxy were
granted (farm.sessions.pool), found by the identity it goes through (its proxy's id, farm.crawl.identities):
sessions are never sent through another identity. In the answers, Set-Cookie updates those cookies, and an
answer that is a wall a browser may pass (``LeaseSpider.wall_of``) retires the session that met it, has a new
one earned in headless Chromium (farm.sessions.browser: one page for every request waiting on the same wall)
and sends the request again with it at once: it goes ahead of the site's pace (farm.crawl.scheduler's retry lane), so a
back-off longer than a session's life cannot starve it. Each attempt of a request (each retry of
farm.middlewares.blocks) is sent again with a fresh session at most FRESH_SENDS times; after that, or when
the browser cannot pass the wall (a slider, a timeout, a browser that cannot be had), or when the site
answered the session with its wall on its first use (the site refuses the client: the browser cools down,
farm.sessions.pool), the answer goes on to farm.middlewares.blocks as a block, named after the wall: a
block, never a keyword's failure, and a site that answers nothing else ends the crawl (site refused).
A request met by a wall while the crawl closes is not passed: it is left for the next run.
A session earned at a wall no spider names is proven by the first answer it carries: one that is not data
retires it, and the wall counts as not passed (``unproven``), the browser cooling down as after a slider.
Each identity's sessions earned and the pages they served are counted in the crawl's stats
(``farm/identity/<label>/sessions``, ``.../session_pages``).

It sits at 650: after Scrapy's RedirectMiddleware (600) on the way back, so it sees a wall's redirect before
the redirect is followed. A request that carries a session is marked ``dont_merge_cookies`` for
CookiesMiddleware (700), which would replace its Cookie header with the jar's: the session keeps its own
cookies, those the site sets on its answers included; a request without one uses the jar as before.
"""

import asyncio
import logging
from http.cookies import CookieError, SimpleCookie

from scrapy import signals
from scrapy.exceptions import NotConfigured

from farm.config import FarmConfig
from farm.crawl.identities import label_of
from farm.crawl.meta import FarmMeta
from farm.crawl.parts import CrawlParts, engine_slot
from farm.errors import WallNotPassed
from farm.sessions.apart import BrowserApart
from farm.sessions.browser import Browser, find_chromium
from farm.sessions.disguise import crawl_identity
from farm.sessions.identity import NAVIGATE, ClientIdentity
from farm.sessions.pool import SessionPool, SiteSession

logger = logging.getLogger(__name__)

FRESH_SENDS = 2  # times one request is sent again with a freshly earned session, per attempt
TURNOVER_SENDS = 16  # times one request is sent again because the session it went with ran out


class SessionMiddleware:
    def __init__(self, crawler, site: str, identity: ClientIdentity, pool: SessionPool, browser: Browser | None):
        self.crawler = crawler
        parts = crawler.get_extension(CrawlParts)
        self.proxies = parts.proxies if parts is not None else None  # FARM_PROXIES: a session's proxy by its id
        self.stats = crawler.stats
        self.site = site
        self.identity = identity
        self.pool = pool
        self.browser = browser  # None with FARM_BROWSER_PAGES=0: walls stay blocks
        kind = getattr(crawler.spidercls, "request_kind", NAVIGATE)  # a page's fetch, or a navigation
        self.headers = [(name.encode(), value.encode()) for name, value in identity.headers(kind).items()]

    @classmethod
    def from_crawler(cls, crawler):
        if crawler.get_extension(CrawlParts) is None:
            raise NotConfigured("not a farm crawl: no keyword leases")
        spidercls = crawler.spidercls
        if not callable(getattr(spidercls, "browser_wall", None)):
            raise NotConfigured(f"{spidercls.__name__} is not a LeaseSpider")
        config = FarmConfig.of(crawler)
        site = getattr(spidercls, "site", None) or spidercls.name
        # FARM_<SITE>_IMPERSONATE, else FARM_IMPERSONATE: a Chrome target, or "" for Scrapy's own client
        chromium = find_chromium(config.browser_executable) if config.browser_pages else None
        identity = crawl_identity(config.site(site).impersonate, chromium)
        browser = Browser(
            config.browser_executable, config.browser_pages, config.browser_timeout, closing=lambda: _closing(crawler)
        )
        browser = BrowserApart(browser) if config.browser_pages else None
        pool = SessionPool(
            browser.earn if browser is not None else _no_browser,
            config.session_max_age,
            config.session_max_uses,
            config.browser_cooldown,
            most_ahead=config.sessions_ahead,
        )
        middleware = cls(crawler, site, identity, pool, browser)
        pool.on_earned = middleware.session_earned
        crawler.signals.connect(middleware.spider_closed, signal=signals.spider_closed)
        return middleware

    async def process_request(self, request):
        meta, farm = request.meta, FarmMeta.of(request)
        if farm.lease is None:
            return None
        key = self.key(meta)
        due = self.pool.due(key)
        if due is not None:
            self.stats.inc_value("farm/session/waited")
            try:
                # shield: a request given up while waiting does not cancel the earning others wait for
                await asyncio.shield(due)
            except WallNotPassed:
                pass  # the pass failed: the request goes, meets the wall, and is answered as the wall says
        if self.identity.impersonate:
            meta["impersonate"] = self.identity.impersonate
        headers = request.headers
        for name, value in self.headers:
            headers[name] = value
        session = self.pool.current(key)
        # the session's serial, not the session: a request's meta may be written out (a queue in Redis,
        # a checkpoint), and a session's cookies belong to this process alone
        farm.session = session.serial if session is not None else None
        if farm.take_wall_redirect():  # the attempt before met a wall's redirect: this one may follow
            meta.pop("dont_redirect", None)
        if session is not None:
            # the session's cookies, not the jar's: CookiesMiddleware would replace the header
            headers[b"Cookie"] = session.cookie_header()
            meta["dont_merge_cookies"] = True
        else:  # Scrapy's cookie jar, as for any request (a refused session's cookies dropped)
            meta.pop("dont_merge_cookies", None)
            if b"Cookie" in headers:
                del headers[b"Cookie"]
        return None

    async def process_response(self, request, response):
        meta, farm = request.meta, FarmMeta.of(request)
        if farm.lease is None:
            return response
        key = self.key(meta)
        session = self.pool.sent(key, farm.session)  # None once retired or replaced
        spider = self.crawler.spider
        wall = spider.wall_of(response)
        unproven = session is not None and session.proving and session.proven is None
        if unproven:  # an unknown wall's session: its first answer proves it, or it was no pass
            session.proven = wall is None and spider.refusal(response) is None
            unproven = not session.proven
            if unproven:
                failed = self.pool.unproven(session, f"the first request it carried got no data ({response.status})")
                self.stats.inc_value("farm/wall/not_passed/unproven")
                farm.wall_refused = f"{failed.wall}_{failed.kind}"
                logger.warning("farm %s: %s passed, but its session got no data: retired", self.site, failed.wall)
        if wall is None:
            if session is not None and not session.retired:
                _take_cookies(session, response)  # not a wall's: those belong to the challenge, not the session
                self.pool.answered(session)
                self.stats.inc_value(f"farm/identity/{label_of(key[1])}/session_pages")
            return response
        if 300 <= response.status < 400:
            # a redirect to a wall is not followed (RedirectMiddleware): a retry asks for the page again,
            # not for the wall, and farm.middlewares.blocks counts it as the block it is
            meta["dont_redirect"] = True
            farm.mark_wall_redirect()
        self.stats.inc_value("farm/wall/met")
        self.stats.inc_value(f"farm/wall/met/{wall.name}")
        if unproven:
            return response  # a block (farm.middlewares.blocks)
        # sends with a fresh session, counted per attempt: a retry after a block may send as often again
        attempt, sends = farm.session_sends
        if attempt != meta.get("retry_times", 0):
            attempt, sends = meta.get("retry_times", 0), 0
        # a session that served pages, or one replaced since the request went, ran out: the next is no
        # refusal, and a request sent again for that (turnover, many requests sharing sessions that live
        # a few requests each) is counted apart, with a wider bound
        if session is not None:
            ran_out = self.pool.ran_out(session)
        else:
            ran_out = farm.session is not None
        turns = farm.session_turns
        # a session that served nothing, the request's second in a row in this attempt, earned on the wall
        # page the request met with the first: the site refuses the client, not one page (a wall shown to
        # one page is what the browser meets on that page's own wall: a slider, named as such)
        unserved = session is not None and not ran_out
        before = farm.unserved  # (attempt, the wall page it met) after a session that served nothing
        own_page = session is not None and session.passed is not None and before == (attempt, session.passed.url)
        if unserved and own_page and self.browser is not None:
            self.pool.refused_at_first_use(session, wall)
            self.stats.inc_value("farm/session/refused_at_first_use")
            farm.wall_refused = f"{wall.name}_refused"
            logger.warning(
                "farm %s: the site answered session %d with %s on its first use: it refuses the client; "
                "no browser for it for %g s",
                self.site,
                session.serial,
                wall.name,
                self.pool.cooldown,
            )
            return response
        if self.browser is None or sends >= FRESH_SENDS or turns >= TURNOVER_SENDS:
            return response  # a block (farm.middlewares.blocks)
        try:
            await self.pool.renew(key, wall, self.identity, session)
        except WallNotPassed as exc:
            if exc.kind == "closing":  # left in the scheduler as the crawl closes: its keyword is released
                again = request.replace(dont_filter=True)
                FarmMeta.of(again).mark_session_fresh()
                return again
            self.stats.inc_value(f"farm/wall/not_passed/{exc.kind}")
            farm.wall_refused = f"{exc.wall}_{exc.kind}"
            logger.warning("farm %s: %s met; the browser cannot pass it: %s", self.site, wall.name, exc.detail)
            return response
        again = request.replace(dont_filter=True)
        fresh = FarmMeta.of(again)
        fresh.mark_session_fresh()
        fresh.unserved = (attempt, wall.url) if unserved else None
        if ran_out:
            fresh.session_turns = turns + 1
        else:
            fresh.session_sends = (attempt, sends + 1)
        return again

    def key(self, meta: dict) -> tuple[str, str]:
        """The session key of a request: its site and the URL of the proxy it goes through, found by the
        proxy's id (HttpProxyMiddleware strips the credentials from ``meta["proxy"]`` on the way out, and
        the browser earning the next session needs them); "" for none."""
        proxy = self.proxies.by_id.get(FarmMeta(meta).proxy or "") if self.proxies is not None else None
        return (self.site, proxy.url if proxy is not None else meta.get("proxy") or "")

    def session_earned(self, session: SiteSession, seconds: float) -> None:
        if _closing(self.crawler):
            # earned ahead and finished once the crawl began closing: it serves no page, and the run's row has
            # been (or is being) written, so counting it here would leave the row and the crawl's stats apart
            logger.debug("farm %s: session %d earned as the crawl closed: never used", self.site, session.serial)
            return
        self.stats.inc_value("farm/session/earned")
        self.stats.inc_value(f"farm/identity/{label_of(session.key[1])}/sessions")
        self.stats.set_value("farm/session/earn_seconds", round(seconds, 3))  # the latest pass's
        self.stats.set_value("farm/browser/pages", self.browser.pages_opened)
        self.stats.set_value("farm/session/earned_ahead", self.pool.ahead)
        self.stats.max_value("farm/browser/rss_max", self.browser.rss_max)
        logger.info(
            "farm %s: %s passed in the browser in %.1f s (session %d, cookies %s): plain requests carry it",
            self.site,
            session.wall,
            seconds,
            session.serial,
            ", ".join(sorted(session.cookies)),
        )

    async def spider_closed(self, spider, reason):
        self.stats.set_value("farm/session/retired", dict(self.pool.retired))
        if self.browser is not None:
            if self.browser.pages_opened:
                self.browser.measure(now=True)  # before it closes: the last reading may be seconds old
            self.stats.max_value("farm/browser/rss_max", self.browser.rss_max)
            if self.browser.restarts:
                self.stats.set_value("farm/browser/restarts", self.browser.restarts)
            await self.browser.close()


def _closing(crawler) -> bool:
    """Whether the crawl is closing (a Ctrl+C, a pause, its end): nothing more is sent."""
    slot = engine_slot(crawler)
    return slot is not None and slot.closing is not None


async def _no_browser(wall, identity, proxy):
    raise WallNotPassed(wall.name, "browser", "FARM_BROWSER_PAGES is 0: no browser")


def _take_cookies(session: SiteSession, response) -> None:
    """The cookies the site sets on an answer to ``session``'s request, kept in the session."""
    for header in response.headers.getlist(b"Set-Cookie"):
        try:
            jar = SimpleCookie(header.decode("latin-1"))
        except CookieError:
            continue
        for name, morsel in jar.items():
            session.cookies[name] = morsel.value
