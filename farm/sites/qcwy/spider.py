"""前程无忧 / 51job: the signed search API, ``/api/job/search-pc`` (docs/sites.md §2)."""

import hashlib
import hmac
import re
import time
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

import scrapy

from farm.items import JobPosting
from farm.middlewares.signing import signs_when_sent
from farm.sessions.identity import FETCH
from farm.sessions.wall import SLIDER_MARKERS, Wall
from farm.sites.qcwy.cities import CITY_CODES, CODE_PATTERN
from farm.spiders.base import LeaseSpider, Page, ParseError
from farm.spiders.parsing import postings_list, response_json, response_text, site_time, text_or_none, unique_tags

SEARCH_PATH = "/api/job/search-pc"
SIGN_KEY = b"abfc8f9dcf8c3f3d8aa294ac5f2cf2cc7767e5592590f39c3f503271dd68562b"

# Aliyun WAF pages served in place of the JSON (§2.3), first match wins.
WAF_MARKERS = [
    ("var arg1=", "qcwy_waf_challenge"),
    ("waf-nc-title", "qcwy_waf_slider"),
    ("aliyunwaf_", "qcwy_waf_slider"),
    ("nc_1_n1z", "qcwy_waf_slider"),
    ("请按住滑块", "qcwy_waf_slider"),
    ("访问验证", "qcwy_waf_slider"),
    ("aliyun_waf", "qcwy_waf"),
]
LOGIN_TEXTS = ("登录", "login")


class QcwySpider(LeaseSpider):
    name = "qcwy"
    page_size = 20
    paging = "parallel"  # resultbody.job.totalCount on every page
    site_pages = 50  # docs/sites.md §4.2
    request_kind = FETCH  # the search page's fetch of search-pc (farm.sessions.identity)
    code_pattern = CODE_PATTERN  # cities.py: keyword validation uses the same
    city_codes = CITY_CODES
    # never tried as unknown walls. Not qcwy_waf_slider: its aliyunwaf_ marker is on Aliyun's JS challenge
    # too (public write-ups of it: a renderData textarea and <script name="aliyunwaf_…">); a real slider shows
    # the captcha markers farm.sessions.wall knows, and is not tried for them
    refusals = frozenset({"http_429", "http_521"})
    unrecognised = frozenset({"qcwy_html"})
    clock = staticmethod(time.time)  # the sign covers the timestamp: tests pin it
    # In a crawl with farm.middlewares.signing, every attempt is signed as it goes out: a
    # search request is made unsigned, not signed twice. Without it, it is signed when made.
    signed_when_sent = False

    @classmethod
    def from_crawler(cls, crawler, *args, **kwargs):
        spider = super().from_crawler(crawler, *args, **kwargs)
        spider.signed_when_sent = signs_when_sent(crawler.settings)
        return spider

    def search_request(self, city_code, job, page):
        params = {
            "api_key": "51job",
            "timestamp": "",  # the time of sending, set when signed (sign)
            "keyword": job,
            "searchType": "2",
            **dict.fromkeys(["function", "industry"], ""),
            "jobArea": city_code,
            **dict.fromkeys(
                [
                    "jobArea2",
                    "landmark",
                    "metro",
                    "salary",
                    "workYear",
                    "degree",
                    "companyType",
                    "companySize",
                    "jobType",
                    "issueDate",
                ],
                "",
            ),
            "sortType": "0",
            "pageNum": page,
            "requestId": "",
            "keywordType": "",
            "pageSize": self.page_size,
            "source": "1",
            "accountId": "",
            "pageCode": "sou|sou|soulb",
            "scene": "7",
        }
        # quote (not quote_plus) with safe="": every reserved character is %-escaped, so
        # Scrapy's safe_url_string leaves the query as is and the sign matches what is sent
        query = urlencode(params, quote_via=quote)
        url = f"{self.base_url}{SEARCH_PATH}?{query}"
        # as the search page's own fetch sends it: same-origin, so no Origin; the search page its Referer
        search = urlencode({"keyword": job, "searchType": "2", "jobArea": city_code})
        headers = {
            "Accept": "application/json, text/plain, */*",
            "From-Domain": "51job_web",
            "Referer": f"{self.base_url}/pc/search?{search}",
        }
        if not self.signed_when_sent:
            url, headers["sign"] = self._signature(url)
        return scrapy.Request(url, headers=headers)

    def sign(self, url: str) -> tuple[str, dict[str, str]] | None:
        """``url`` with the current ``timestamp``, and the headers that sign it (§2.1); None for a
        URL that is not a search. farm.middlewares.signing calls it as each attempt, retries
        included, goes out: a retry minutes later is not sent with a stale timestamp."""
        signature = self._signature(url)
        if signature is None:
            return None
        url, sign = signature
        return url, {"sign": sign}

    def _signature(self, url: str) -> tuple[str, str] | None:
        """``url`` with the current timestamp, and its sign; None for a URL that is not a search."""
        parts = urlsplit(url)
        if not parts.path.endswith(SEARCH_PATH):
            return None
        # only the timestamp's text changes: the rest of the query, quoted as search_request
        # quoted it, is exactly what was sent before and what the sign covers
        stamp = f"timestamp={int(self.clock())}"
        query = "&".join(stamp if pair.startswith("timestamp=") else pair for pair in parts.query.split("&"))
        # the site signs its own path (a base URL's path prefix is a proxy's, not 51job's)
        sign = hmac.new(SIGN_KEY, f"{SEARCH_PATH}?{query}".encode(), hashlib.sha256).hexdigest()
        return urlunsplit(parts._replace(query=query)), sign

    def parse_page(self, response):
        data = response_json(response)
        if not isinstance(data, dict):
            raise ParseError("qcwy: response is not JSON")
        if str(data.get("status")) != "1":
            raise ParseError(f"qcwy: status {data.get('status')!r}, not a page")
        body = data.get("resultbody")
        job = body.get("job") if isinstance(body, dict) else None
        if not isinstance(job, dict):
            raise ParseError("qcwy: no resultbody.job")
        total = job.get("totalCount", job.get("totalcount"))  # one doc writes totalcount (§2.2)
        try:
            total = int(total)
        except (TypeError, ValueError):
            raise ParseError(f"qcwy: resultbody.job.totalCount is {total!r}") from None
        items = postings_list(job.get("items"), "qcwy: resultbody.job.items")
        postings = self.postings_from(items, _posting, "jobId", response)
        return Page(postings=postings, total_count=total, site_total=total)

    def block_reason(self, response):
        reason = super().block_reason(response)
        if reason:
            return reason
        if response.status == 521:  # Aliyun's "origin down" page, counted as anti-bot (§2.3)
            return "http_521"
        data = response_json(response)
        if isinstance(data, dict):
            status = str(data.get("status"))
            if status == "1":
                return None
            message = str(data.get("message") or "")
            if any(word in message.lower() for word in LOGIN_TEXTS):
                return f"qcwy_session_lost status {status}: {message}"
            if "sign" in message.lower() or "签名" in message:
                return f"qcwy_sign_rejected status {status}: {message}"
            return f"qcwy_throttled status {status}: {message or 'not 1'}"
        text = response_text(response)
        for marker, reason in WAF_MARKERS:
            if marker in text:
                return f"{reason} ({marker})"
        content_type = response.headers.get(b"Content-Type", b"").decode("latin-1")
        if content_type and "json" not in content_type.lower():
            return f"qcwy_html non-JSON answer ({content_type})"
        return None

    def browser_wall(self, response):
        """Aliyun WAF's challenge (``var arg1=``, §2.3): its script computes ``acw_sc__v2`` and reloads. The
        browser opens the human search page, which the same WAF guards, as a visitor would."""
        if response.status != 200 or response_json(response) is not None:
            return None
        text = response_text(response)
        if "var arg1=" not in text or any(marker in text for marker in SLIDER_MARKERS):
            return None
        asked = dict(parse_qsl(urlsplit(response.url).query))
        search = urlencode(
            {"keyword": asked.get("keyword", ""), "searchType": "2", "jobArea": asked.get("jobArea", "")}
        )
        return Wall("qcwy_acw_sc__v2", f"{self.base_url}/pc/search?{search}", ("acw_sc__v2",), data=(SEARCH_PATH,))


# A city's name by its 51job code, the first name of a code in cities.py (北京, 广东, …).
_CITY_BY_CODE = {code: name for name, code in reversed(CITY_CODES.items())}


def _posting(item):
    detail = item.get("jobAreaLevelDetail")
    if not isinstance(detail, dict):
        detail = {}
    city_part, _, area = (item.get("jobAreaString") or "").partition("·")
    # "太仓" (a county-level city, written without "·") has its district only in jobAreaLevelDetail;
    # an empty jobAreaString leaves jobAreaCode (§2.2)
    city = (
        text_or_none(detail.get("cityString"))
        or text_or_none(city_part)
        or _CITY_BY_CODE.get(str(item.get("jobAreaCode")))
    )
    area = text_or_none(area) or text_or_none(detail.get("districtString"))
    tags = item.get("jobTags")
    if not tags:
        tags = [tag.get("jobTagName") for tag in item.get("jobTagsList") or [] if isinstance(tag, dict)]
    welfare = [w.get("chineseTitle") for w in item.get("jobWelfareCodeDataList") or [] if isinstance(w, dict)]
    return JobPosting(
        job_id=str(item["jobId"]),
        title=text_or_none(item.get("jobName")),
        salary=text_or_none(item.get("provideSalaryString")),
        company=text_or_none(item.get("fullCompanyName")) or text_or_none(item.get("companyName")),
        city=city,
        area=area,
        experience=text_or_none(item.get("workYearString")),
        degree=text_or_none(item.get("degreeString")),
        tags=unique_tags([*tags, *welfare]),
        published_at=site_time(item.get("issueDateString")),
        url=_strip_req(item.get("jobHref")),
        raw=item,
    )


# A jobHref whose re-encoded query is itself (a plain http(s) base, ``key=value`` pairs of
# characters urlencode leaves as they are): its ``req`` pair can be cut from the text.
_PLAIN_BASE = re.compile(r"https?://[A-Za-z0-9.-]+(?::[0-9]+)?(?:/[A-Za-z0-9_.~%/-]*)?")
_PLAIN_QUERY = re.compile(r"[A-Za-z0-9_.~-]+=[A-Za-z0-9_.~-]*(?:&[A-Za-z0-9_.~-]+=[A-Za-z0-9_.~-]*)*")


def _strip_req(href):
    """jobHref without its per-search ``req`` hash (§2.2)."""
    if not href:
        return None
    # a posting's most frequent cost after its JSON: the full parse is three times as slow
    base, mark, query = href.partition("?")
    if not mark and _PLAIN_BASE.fullmatch(base):
        return href
    if mark and _PLAIN_QUERY.fullmatch(query) and _PLAIN_BASE.fullmatch(base):
        kept = "&".join(pair for pair in query.split("&") if not pair.startswith("req="))
        return f"{base}?{kept}" if kept else base
    return _strip_req_parsed(href)


def _strip_req_parsed(href):
    """_strip_req for any href: its query decoded and encoded again without ``req``."""
    parts = urlsplit(href)
    query = urlencode([(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != "req"])
    return urlunsplit(parts._replace(query=query))
