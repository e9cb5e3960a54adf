"""Boss直聘: GET /wapi/zpgeek/search/joblist.json, the zpData JSON envelope, and its anti-bot codes.

Per docs/sites.md §1: 30 postings a page (pageSize honoured up to 100), at most 10 reachable pages, so
`totalCount` is capped at 10 pages' worth while `resCount` says how many postings the keyword really has.
Blocks are HTTP 200 with a non-zero `code` (37 carries the seed/ts/name a crawler needs to rebuild its token).
"""

import base64
import functools
import hashlib

from farm.sandbox import hostile, stale, vocab
from farm.sandbox.results import Query, int_param, page_of, to_json

SITE = "boss"
PATHS = ("/wapi/zpgeek/search/joblist.json",)
PAGE_SIZE, MAX_PAGE_SIZE, MAX_PAGES = 30, 100, 10
CONTENT_TYPE = "application/json"


def parse(request):
    q = request.query
    return Query(
        SITE,
        q.get("city", ""),
        q.get("query", ""),
        int_param(q.get("page"), 1),
        int_param(q.get("pageSize"), PAGE_SIZE, high=MAX_PAGE_SIZE),
    )


def render(world, query, faults=None):
    page, city = page_of(world, query, MAX_PAGES, faults)
    lid = _token("lid", query.city, query.keyword)[:10]
    start = (query.page - 1) * query.page_size
    jobs = [
        _item(world.posting(SITE, city, query.keyword, slot), f"{lid}{i:04d}.search.{start + i + 1}")
        for i, slot in enumerate(page.slots)
    ]
    spoiled = hostile.spoil(SITE, jobs, faults)
    told = stale.told(page, query.page_size, MAX_PAGES)
    # boss pages by hasMore alone: a stale 'over' count shows as one more page promised by the last real one
    has_more = told.has_more or (page.stale == "over" and page.number == page.pages)
    body = {
        "code": 0,
        "message": "Success",
        "zpData": {
            "resCount": told.total,
            "totalCount": told.reachable,
            "hasMore": has_more,
            "lid": f"{lid}.search.{query.page}",
            "filterString": "",
            "brandCard": None,
            "jobList": jobs,
        },
    }
    return to_json(body, spoiled)


_EXPERIENCE, _DEGREE = vocab.EXPERIENCE[SITE], vocab.DEGREE[SITE]


@functools.cache
def _company(c):
    """The item fields that depend only on the company, made once per company."""
    return {
        "encryptBrandId": f"{c.number:x}{'0' * 12}{c.number % 1000:03d}~",
        "brandName": c.short_name,
        "brandLogo": "https://img.bosszhipin.com/beijin/upload/com/logo/default.png",
        "brandIndustry": c.industry[0],
        "brandScaleName": vocab.SIZES[SITE][c.size],
        "brandStageName": c.stage,
    }


def _item(p, lid):
    token = p.token
    experience, degree = _EXPERIENCE[p.experience], _DEGREE[p.degree]
    return {
        "securityId": token,
        "lid": lid,
        "encryptJobId": p.id,
        "jobName": p.title,
        "salaryDesc": salary_desc(p),
        "jobLabels": [experience, degree],
        "skills": list(p.skills),
        "jobExperience": experience,
        "jobDegree": degree,
        "city": int(p.city.boss),
        "cityName": p.city.name,
        "areaDistrict": p.district,
        "businessDistrict": p.area,
        "gps": {"longitude": p.lng, "latitude": p.lat},
        "lastModifyTime": p.published_ts * 1000,
        "encryptBossId": hashlib.md5(token.encode()).hexdigest()[:26] + "~",
        "bossName": p.hr_name,
        "bossTitle": p.hr_title,
        "bossAvatar": "https://img.bosszhipin.com/boss/avatar/avatar_1.png",
        "bossOnline": len(p.hr_name) == 2,
        **_company(p.company),
        "welfareList": list(p.welfare),
        "jobValidStatus": 1,
        "jobType": 0,
        "proxyJob": 0,
        "industry": 100020,
        "contact": False,
        "iconWord": "",
        "goldHunter": 0,
    }


def salary_desc(p):
    text = f"{round(p.salary_min / 1000)}-{round(p.salary_max / 1000)}K"
    return text + (f"·{p.months}薪" if p.months > 12 else "")


def _token(*parts):
    digest = hashlib.blake2b(repr(parts).encode(), digest_size=30).digest()
    return base64.b64encode(digest).decode().replace("+", "0").replace("/", "1")


def _json(body):
    return to_json(body)


def _blocked(code, message, zp_data):
    return lambda query, h, *_: (200, CONTENT_TYPE, _json({"code": code, "message": message, "zpData": zp_data(h)}))


# Refusal codes seen in public captures beside 37/35/36/7, with messages of the site's kind (a sandbox choice:
# the captures give the codes, not every message). None holds a block word of docs/sites.md §1.3.
UNKNOWN_CODES = (
    (9, "请求不合法"),
    (121, "请求参数有误"),
    (122, "网络异常，请稍后重试"),
    (17, "当前操作存在风险"),
    (200404, "页面不存在"),
)


def _unknown_code(query, h, *_):
    """A code farm has no name for, no job list; zpData is {} or absent, drawn."""
    code, message = UNKNOWN_CODES[h % len(UNKNOWN_CODES)]
    body = {"code": code, "message": message}
    if (h >> 8) & 1:
        body["zpData"] = {}
    return 200, CONTENT_TYPE, _json(body)


FAULTS = {
    # __zp_stoken__ missing or stale: the body carries what the security JS needs to recompute it.
    "boss37": _blocked(
        37,
        "您的访问行为异常.",
        lambda h: {
            "ts": 1_757_000_000_000 + h % 10**9,
            "name": f"{h & 0xFFFFFFFF:08x}",
            "seed": base64.b64encode(h.to_bytes(8, "big") * 4).decode(),
        },
    ),
    "boss35": _blocked(35, "请完成验证后继续访问", lambda h: {}),
    "boss36": _blocked(36, "您的账户存在异常行为", lambda h: {}),
    "boss7": _blocked(7, "当前登录状态已失效", lambda h: {}),
    "boss_unknown_code": _unknown_code,
}
