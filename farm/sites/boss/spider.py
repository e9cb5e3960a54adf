"""Boss直聘: the web search XHR, ``/wapi/zpgeek/search/joblist.json`` (docs/sites.md §1)."""

import time
from urllib.parse import parse_qs, quote, urlencode, urlsplit

import scrapy

from farm.items import JobPosting
from farm.sessions.identity import FETCH
from farm.sessions.wall import Wall
from farm.sites.boss.cities import CITY_CODES, CODE_PATTERN
from farm.spiders.base import LeaseSpider, Page, ParseError
from farm.spiders.parsing import (
    area_of,
    postings_list,
    response_json,
    response_text,
    text_or_none,
    to_int,
    unique_tags,
)

SITE = "https://www.zhipin.com"  # stored posting URLs name the real site, whatever base_url is
PATH = "/wapi/zpgeek/search/joblist.json"

# Non-zero ``code`` values of an HTTP 200 answer that are blocks (§1.3), by name. Any other
# non-zero code is a refusal too, named by its code (``boss_code_9``): farm fails closed on a
# code it does not know (public captures show 9, 17, 121, 122, 200404), and counts it by shape.
BLOCK_CODES = {
    37: "access abnormal (stoken)",
    35: "captcha",
    36: "account risk",
    7: "session expired",
    # [U] one design note groups 31 with 37 as a risk code. Taken as a block: a block
    # wrongly assumed costs a few backed-off retries and a partial keyword, resumed later;
    # a block taken for an error would fail every keyword the site is blocking, for the day.
    31: "risk control",
}
# The contract's fallback words (§1.3): a message with one of them is a block, whatever its code.
BLOCK_WORDS = ("环境存在异常", "访问频繁", "安全校验", "滑块", "验证")
# Where Boss' security JS sends a browser, as a redirect target or inside an HTML body,
# and the walls' texts (§1.3).
BLOCK_MARKERS = [
    ("security-check.html", "boss_security_check"),
    ("verify-slider", "boss_verify_slider"),
    ("passport/zp/verify", "boss_passport_verify"),
    ("403.html", "boss_403_page"),
    ("您的访问过于频繁", "boss_too_frequent"),
    ("您的访问行为异常", "boss_access_abnormal"),
]


class BossSpider(LeaseSpider):
    name = "boss"
    # what the site's own web client asks (docs/sites.md §1.1): 15 a page
    page_size = 15
    # Boss only says whether another page follows (zpData.hasMore). It serves at most
    # 10 pages per search (a 2024 blog: "boss最多请求10页数据", and a sample with totalCount
    # 300 / resCount 450). FARM_BOSS_MAX_PAGES defaults to 3; above 10 it gains nothing.
    paging = "sequential"
    site_pages = 10  # docs/sites.md §4.2
    request_kind = FETCH  # the search page's fetch of joblist.json (farm.sessions.identity)
    code_pattern = CODE_PATTERN  # cities.py: keyword validation uses the same
    city_codes = CITY_CODES
    # pages that say no whatever runs them (a limit, a block, a slider, a login): never tried as unknown walls
    refusals = frozenset(
        {
            "http_429",
            "boss_403_page",
            "boss_too_frequent",
            "boss_access_abnormal",
            "boss_verify_slider",
            "boss_passport_verify",
        }
    )

    clock = staticmethod(time.time)  # the client's ``_`` cache-buster: tests pin it

    def search_request(self, city_code, job, page):
        # the parameters and their order as the site's current client (/web/geek/jobs) sends them (§1.1)
        query = urlencode(
            {
                "page": page,
                "pageSize": self.page_size,
                "city": city_code,
                "expectInfo": "",
                "query": job,
                **dict.fromkeys(
                    [
                        "multiSubway",
                        "multiBusinessDistrict",
                        "position",
                        "jobType",
                        "salary",
                        "experience",
                        "degree",
                        "industry",
                        "scale",
                        "stage",
                    ],
                    "",
                ),
                "scene": "1",
                "_": int(self.clock() * 1000),
            },
            quote_via=quote,
        )
        referer = f"{self.base_url}/web/geek/jobs?" + urlencode({"query": job, "city": city_code}, quote_via=quote)
        return scrapy.Request(
            f"{self.base_url}{PATH}?{query}",
            headers={
                "Referer": referer,
                "Accept": "application/json, text/plain, */*",
                "X-Requested-With": "XMLHttpRequest",
            },
        )

    def parse_page(self, response):
        data = response_json(response)
        if not isinstance(data, dict):
            raise ParseError("boss: response is not JSON")
        if "code" not in data:
            raise ParseError("boss: no code in the answer, not a page")
        code, zp = data["code"], data.get("zpData")
        if code not in (0, "0"):  # block_reason let it through: not a block
            raise ParseError(f"boss: unknown code {code!r}, message {data.get('message')!r}: not a page")
        if not isinstance(zp, dict):
            raise ParseError(f"boss: code {code!r} without zpData, not a page")
        jobs = postings_list(zp.get("jobList"), "boss: zpData.jobList")
        postings = self.postings_from(jobs, _posting, "encryptJobId", response)
        # an empty list while hasMore holds is not the end (a refusal: LeaseSpider.refusal);
        # resCount is what the keyword holds, shown against the cap, never paged by (§1.2)
        return Page(postings=postings, has_more=bool(zp.get("hasMore")), site_total=to_int(zp.get("resCount")))

    def block_reason(self, response):
        reason = super().block_reason(response)
        if reason:
            return reason
        data = response_json(response)
        if isinstance(data, dict) and "code" in data:
            code = data["code"]
            if code in (0, "0"):
                return None
            if to_int(code) in BLOCK_CODES:
                return f"boss_{code} {BLOCK_CODES[to_int(code)]}"
            message = str(data.get("message") or "")
            if any(word in message for word in BLOCK_WORDS):
                return f"boss_{code} {message}"
            return f"boss_code_{code} {message or 'no message'}"[:200]
        location = response.headers.get(b"Location", b"").decode("latin-1")
        haystack = (response.url, location, response_text(response))
        for marker, reason in BLOCK_MARKERS:
            if any(marker in text for text in haystack):
                return f"{reason} ({marker})"
        return None

    def browser_wall(self, response):
        """Code 37 with its zpData: the security check the site's own client opens (§1.3), whose script
        computes ``__zp_stoken__`` from the seed, then returns to the search page."""
        data = response_json(response)
        if not (isinstance(data, dict) and to_int(data.get("code")) == 37):
            return None
        zp = data.get("zpData")
        if not (isinstance(zp, dict) and zp.get("seed") and zp.get("name")):
            return None
        asked = parse_qs(urlsplit(response.url).query)
        search = {"query": asked.get("query", [""])[0], "city": asked.get("city", [""])[0]}
        callback = "/web/geek/job?" + urlencode(search, quote_via=quote)
        check = urlencode(
            {"seed": zp["seed"], "name": zp["name"], "ts": zp.get("ts", ""), "callbackUrl": callback, "srcReferer": ""},
            quote_via=quote,
        )
        return Wall(
            "boss_security_check",
            f"{self.base_url}/web/common/security-check.html?{check}",
            ("__zp_stoken__",),
            data=(PATH,),
        )


def _posting(job):
    tags = [*(job.get("skills") or []), *(job.get("welfareList") or []), *(job.get("jobLabels") or [])]
    return JobPosting(
        job_id=str(job["encryptJobId"]),
        title=text_or_none(job.get("jobName")),
        salary=text_or_none(job.get("salaryDesc")),
        company=text_or_none(job.get("brandName")),
        city=text_or_none(job.get("cityName")),
        area=area_of(job.get("areaDistrict"), job.get("businessDistrict")),
        experience=text_or_none(job.get("jobExperience")),
        degree=text_or_none(job.get("jobDegree")),
        tags=unique_tags(tags),
        published_at=None,  # the list gives no publish date (lastModifyTime is an edit time) (§1.2)
        url=f"{SITE}/job_detail/{job['encryptJobId']}.html",
        raw=job,
    )
