"""Boss直聘: GET /wapi/zpgeek/search/joblist.json, the zpData JSON envelope, and its anti-bot codes.

Per docs/sites.md §1: 30 postings a page (pageSize honoured up to 100), at most 10 reachable pages, so
`totalCount` is capped at 10 pages' worth while `resCount` says how many postings the keyword really has.
Blocks are HTTP 200 with a non-zero `code` (37 carries the seed/ts/name a crawler needs to rebuild its token).

Choices where the contract is silent: an unknown city code (or none) gives a successful, empty search (`code`
0, an empty `jobList`, `totalCount` 0), as does a page past the last; junk page numbers mean 1; filters and
`sortType` are accepted and ignored. Its imitation's data (``IMITATION``): its words, its ids (24 characters,
hex then four of A-Z0-9), its title decorations, the fields hostile postings spoil, its refusal codes.
"""

import base64
import functools
import hashlib

from farm.sandbox import hostile, stale
from farm.sandbox.hostile import Fields
from farm.sandbox.imitation import FaultKind, Imitation
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


EXPERIENCE = ("经验不限", "在校/应届", "1年以内", "1-3年", "3-5年", "5-10年", "10年以上")
DEGREE = ("学历不限", "大专", "本科", "硕士", "博士", "高中", "中专/中技")
SIZES = ("0-20人", "20-99人", "100-499人", "500-999人", "1000-9999人", "10000人以上")
INDUSTRIES = (  # brandIndustry, by vocab.INDUSTRIES' level
    "互联网",
    "计算机软件",
    "企业服务",
    "电子商务",
    "人工智能",
    "半导体/芯片",
    "在线教育",
    "医疗健康",
    "互联网金融",
    "游戏",
    "贸易/进出口",
    "咨询",
)
_ID_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


@functools.cache
def _company(c):
    """The item fields that depend only on the company, made once per company."""
    return {
        "encryptBrandId": f"{c.number:x}{'0' * 12}{c.number % 1000:03d}~",
        "brandName": c.short_name,
        "brandLogo": "https://img.bosszhipin.com/beijin/upload/com/logo/default.png",
        "brandIndustry": INDUSTRIES[c.industry],
        "brandScaleName": SIZES[c.size],
        "brandStageName": c.stage,
    }


def _item(p, lid):
    token = p.token
    experience, degree = EXPERIENCE[p.experience], DEGREE[p.degree]
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
        "city": int(p.city.code(SITE)),
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


def job_id(n, company):
    """An encryptJobId: 11 hex digits, 15 zeros, four of A-Z0-9 (its company is not in it)."""
    chars = _ID_CHARS
    return (
        f"{n & 0xFFFFFFFFFFF:011x}000000000000000{chars[(n >> 44) % 36]}{chars[(n >> 50) % 36]}"
        f"{chars[(n >> 56) % 36]}{chars[(n >> 62) % 36]}"
    )


# __zp_stoken__ missing or stale: the body carries what the security JS needs to recompute it.
_BOSS37 = _blocked(
    37,
    "您的访问行为异常.",
    lambda h: {
        "ts": 1_757_000_000_000 + h % 10**9,
        "name": f"{h & 0xFFFFFFFF:08x}",
        "seed": base64.b64encode(h.to_bytes(8, "big") * 4).decode(),
    },
)

IMITATION = Imitation(
    experience=EXPERIENCE,
    degree=DEGREE,
    sizes=SIZES,
    industries=INDUSTRIES,
    make_id=job_id,
    id_salt=0x9E3779B97F4A7C15,
    decorations=("{}", "{}", "【急招】{}", "{}（双休）"),
    # lastModifyTime is epoch ms; the numbers are kept only in raw
    hostile=Fields(
        "encryptJobId",
        ("lastModifyTime",),
        (
            "jobName",
            "salaryDesc",
            "brandName",
            "cityName",
            "areaDistrict",
            "businessDistrict",
            "jobExperience",
            "jobDegree",
        ),
        ("brandLogo", "bossAvatar"),
        {"skills": None, "welfareList": None, "jobLabels": None},
        ("industry", "jobValidStatus", ("gps", "longitude"), ("gps", "latitude")),
        "iconWord",
    ),
    faults=(
        FaultKind("boss37", "boss code 37 访问行为异常, zpData with seed/ts/name", _BOSS37),
        FaultKind("boss35", "boss code 35 captcha", _blocked(35, "请完成验证后继续访问", lambda h: {})),
        FaultKind("boss36", "boss code 36 account risk", _blocked(36, "您的账户存在异常行为", lambda h: {})),
        FaultKind("boss7", "boss code 7 login expired", _blocked(7, "当前登录状态已失效", lambda h: {})),
        FaultKind("boss_unknown_code", "boss code 9/121/122/17/200404, no jobList (opt-in)", _unknown_code, shape=True),
    ),
    search="fetch",  # the page's XHR to joblist.json
)
