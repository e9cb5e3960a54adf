"""智联招聘: the server-rendered search page and its ``__INITIAL_STATE__`` (docs/sites.md §3.1, generation A)."""

import json
import math
from urllib.parse import quote
from weakref import WeakKeyDictionary

import scrapy

from farm.items import JobPosting
from farm.sessions.identity import NAVIGATE
from farm.sessions.wall import SLIDER_MARKERS, Wall
from farm.sites.zhilian.cities import CITY_CODES, CODE_PATTERN
from farm.spiders.base import LeaseSpider, Page, ParseError
from farm.spiders.parsing import area_of, json_kind, response_text, site_time, text_or_none, to_int, unique_tags

SITE = "https://www.zhaopin.com"  # stored posting URLs name the real site, whatever base_url is
STATE_MARKER = "__INITIAL_STATE__"

# Captcha and WAF pages (§3.4), first match wins.
VERIFY_MARKERS = [
    ("geetest_box", "zhilian_captcha"),
    ("nc_1_wrapper", "zhilian_captcha"),
    ("waf-nc-title", "zhilian_waf_slider"),
    ("aliyunwaf_", "zhilian_waf_slider"),
    ("Security Verification", "zhilian_verification"),
    ("安全验证", "zhilian_verification"),
]
LOGIN_TEXTS = ("登录之后再搜索", "登录查看更多相关职位")
MIN_TEXT = 80  # a page with less visible text than this is blank or blocked (§3.4)
# The verification a browser passes: its path, where the search redirects to (§3.4), and the cookie its
# script sets (the sandbox's name; the real page's script sets Aliyun's acw_sc__v2).
VERIFY_PATH = "/verify/"
VERIFY_COOKIES = ("zp_verify", "acw_sc__v2")


class ZhilianSpider(LeaseSpider):
    name = "zhilian"
    page_size = 20
    paging = "parallel"  # __INITIAL_STATE__.pages on every page
    site_pages = 50  # docs/sites.md §4.2
    request_kind = NAVIGATE  # the server-rendered search page, loaded in the tab (farm.sessions.identity)
    code_pattern = CODE_PATTERN  # cities.py: keyword validation uses the same
    city_codes = CITY_CODES
    # never tried as unknown walls; a verification page (安全验证) is, and so is zhilian_waf_slider, whose
    # aliyunwaf_ marker Aliyun's JS challenge carries too (a real slider shows farm.sessions.wall's markers)
    refusals = frozenset({"http_429", "zhilian_captcha", "zhilian_login_wall"})
    unrecognised = frozenset({"zhilian_blank_page", "zhilian_shell"})

    def search_request(self, city_code, job, page):
        search = f"{self.base_url}/sou/jl{city_code}?kw={quote(job, safe='')}"
        # a navigation from the page before it (the first page's, from the site's home page)
        referer = f"{search}&p={page - 1}" if page > 1 else f"{self.base_url}/"
        return scrapy.Request(f"{search}&p={page}", headers={"Referer": referer})

    def parse_page(self, response):
        state = response_state(response)
        if state is None:
            raise ParseError("zhilian: no __INITIAL_STATE__ object")
        positions = state.get("positionList")
        if positions is None:  # the search page always has one, if only empty
            raise ParseError("zhilian: no __INITIAL_STATE__.positionList")
        if not isinstance(positions, list):
            raise ParseError(f"zhilian: __INITIAL_STATE__.positionList is {json_kind(positions)}, not a list")
        postings = self.postings_from(positions, _posting, "number", response)
        pages = to_int(state.get("pages"))
        count = to_int(state.get("positionCount"))
        if pages is None and count is None:
            raise ParseError("zhilian: neither pages nor positionCount in __INITIAL_STATE__")
        if not pages and count:  # positionCount is less reliable (§3.1): only a fallback
            pages = math.ceil(count / (to_int(state.get("pageSize")) or self.page_size))
        if not pages and positions:
            # totals that read 0 beside postings are wrong (§3.1): page on while pages are full
            return Page(postings=postings, has_more=len(positions) >= self.page_size)
        # positionCount 0 beside postings is wrong, not what the keyword holds (§3.1)
        held = count if count or not positions else None
        return Page(postings=postings, total_pages=pages, site_total=held)

    def block_reason(self, response):
        reason = super().block_reason(response)
        if reason:
            return reason
        text = response_text(response)
        state = response_state(response)
        positions = state.get("positionList") if state else None
        if positions:
            return None  # a page of results, whatever its postings say (a job may be titled 安全验证)
        for marker, reason in VERIFY_MARKERS:
            if marker in text:
                return f"{reason} ({marker})"
        for marker in LOGIN_TEXTS:
            if marker in text:
                return f"zhilian_login_wall 0 positions, {marker}"
        if response.status in (301, 302, 303, 307, 308):
            location = response.headers.get(b"Location", b"").decode("latin-1")
            if VERIFY_PATH in location:
                return f"zhilian_verification redirect to {location[:120]}"
            return None  # another redirect: followed
        if state is None and len(_visible_text(response)) < MIN_TEXT:
            return "zhilian_blank_page under 80 characters of text"
        if state is None:
            return "zhilian_shell no __INITIAL_STATE__ (a client-rendered shell or an unknown page)"
        return None

    def browser_wall(self, response):
        """The verification the search redirects to (or serves): its script sets a cookie, then returns to the
        search. The browser opens the search as a visitor would and meets the verification there (its challenge
        is the one the site gave that browser); the search it returns to is farm's to fetch, not the browser's."""
        location = response.headers.get(b"Location", b"").decode("latin-1")
        request = response.request
        if response.status in (301, 302, 303, 307, 308) and VERIFY_PATH in location:
            url = request.url if request is not None else response.url
        elif response.status == 200 and VERIFY_PATH in response.url:
            url = (request.meta.get("redirect_urls") or [response.url])[0] if request is not None else response.url
        else:
            return None
        if any(marker in response_text(response) for marker in SLIDER_MARKERS):
            return None
        return Wall("zhilian_verification", url, VERIFY_COOKIES, data=("/sou/",))


# The block check and the parser both read a page's state: decoded once per response.
_states: "WeakKeyDictionary[scrapy.http.Response, dict | None]" = WeakKeyDictionary()


def response_state(response):
    """``initial_state`` of the response's HTML, decoded once."""
    try:
        return _states[response]
    except KeyError:
        state = _states[response] = initial_state(response_text(response))
        return state


def initial_state(html):
    """The object assigned to ``__INITIAL_STATE__``, or None."""
    start = html.find(STATE_MARKER)
    while start != -1:
        brace = html.find("{", start + len(STATE_MARKER))
        if brace != -1 and html[start + len(STATE_MARKER) : brace].strip() in ("=", ""):
            try:
                state, _ = json.JSONDecoder().raw_decode(html, brace)
            except ValueError:
                state = None
            if isinstance(state, dict):
                return state
        start = html.find(STATE_MARKER, start + 1)
    return None


def _posting(position):
    tags = [
        *(_label(t, "tag") for t in position.get("showSkillTags") or []),
        *(_label(t, "value") for t in position.get("skillLabel") or []),
        *(_label(t, "value") for t in position.get("welfareLabel") or []),
    ]
    return JobPosting(
        job_id=str(position["number"]),
        title=text_or_none(position.get("name")),
        salary=text_or_none(position.get("salary60")),
        company=text_or_none(position.get("companyName")),
        city=text_or_none(position.get("workCity")),
        area=area_of(position.get("cityDistrict"), position.get("streetName")),
        experience=text_or_none(position.get("workingExp")) or text_or_none(position.get("workExp")),
        degree=text_or_none(position.get("education")),
        tags=unique_tags(tags),
        published_at=site_time(position.get("publishTime")),
        url=position.get("positionUrl") or position.get("positionURL") or f"{SITE}/jobdetail/{position['number']}.htm",
        raw=position,
    )


def _label(value, key):
    """A tag given as a string or as {key: string}."""
    if isinstance(value, dict):
        value = value.get(key)
    return value if isinstance(value, str) and value else None


def _visible_text(response):
    try:
        parts = response.xpath("//body//text()[not(ancestor::script) and not(ancestor::style)]").getall()
    except (AttributeError, ValueError):  # not HTML
        parts = [response_text(response)]
    return "".join("".join(parts).split())
