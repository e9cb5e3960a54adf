"""前程无忧 / 51job: GET /api/job/search-pc (and the 2023-era /open/noauth/search-pc), its resultbody JSON,
the `sign` header check, and its Aliyun WAF pages.

Per docs/sites.md §2: 20 postings a page (pageSize honoured up to 100), `totalCount` is the keyword's real
total, but only 50 pages carry items. `jobHref` carries a per-search `?req=` hash: pages are cached with a
placeholder and the hash (from the request's timestamp, requestId, keyword and area) is put in per request.

The sign is checked only when a `sign` header is sent, matching the contract's note that the live check looks
lax. It must be HMAC-SHA256 over `path?query` as sent; the percent-decoded form is accepted too, because a
client may sign before its HTTP library encodes the URL.

Choices where the contract is silent: an unknown city code (or none) gives a successful, empty search
(`status` "1", `totalCount` 0); a comma-joined `jobArea` is one unknown code. Its imitation's data
(``IMITATION``): its words and welfare codes, its ids (9 digits), its title decorations, the fields hostile
postings spoil, its WAF pages and other refusals.
"""

import functools
import hashlib
import hmac
import urllib.parse

from farm.sandbox import hostile, stale, vocab
from farm.sandbox.hostile import Fields
from farm.sandbox.imitation import FaultKind, Imitation
from farm.sandbox.results import Query, int_param, page_of, to_json

SITE = "qcwy"
PATHS = ("/api/job/search-pc", "/open/noauth/search-pc")
PAGE_SIZE, MAX_PAGE_SIZE, MAX_PAGES = 20, 100, 50
CONTENT_TYPE = "application/json"
SIGN_KEY = b"abfc8f9dcf8c3f3d8aa294ac5f2cf2cc7767e5592590f39c3f503271dd68562b"
REQ_PLACEHOLDER = b"@@SANDBOX_REQ@@"


def sign(path_and_query):
    """The `sign` header value for a request target such as '/api/job/search-pc?api_key=51job&...'."""
    return hmac.new(SIGN_KEY, path_and_query.encode(), hashlib.sha256).hexdigest()


def parse(request):
    q = request.query
    return Query(
        SITE,
        q.get("jobArea", ""),
        q.get("keyword", ""),
        int_param(q.get("pageNum"), 1),
        int_param(q.get("pageSize"), PAGE_SIZE, high=MAX_PAGE_SIZE),
    )


def reject(request, query):
    """A non-success body when a sent `sign` header is wrong, else None."""
    sent = request.headers.get("sign")
    if sent is None:
        return None
    target = request.raw_path
    if hmac.compare_digest(sent, sign(target)) or hmac.compare_digest(sent, sign(urllib.parse.unquote(target))):
        return None
    return _status("1004", "签名校验失败 (sign invalid)")


def finish(request, body):
    """Fill the per-search `req` hash into a cached page."""
    q = request.query
    req = hashlib.md5(
        "|".join((q.get("timestamp", ""), q.get("requestId", ""), q.get("keyword", ""), q.get("jobArea", ""))).encode()
    ).hexdigest()
    return body.replace(REQ_PLACEHOLDER, req.encode())


def render(world, query, faults=None):
    page, city = page_of(world, query, MAX_PAGES, faults)
    items = [_item(world.posting(SITE, city, query.keyword, slot)) for slot in page.slots]
    spoiled = hostile.spoil(SITE, items, faults)
    told = stale.told(page, query.page_size, MAX_PAGES)
    body = {
        "status": "1",
        "message": "",
        "resultbody": {"searchType": "2", "requestId": "", "job": {"totalCount": told.total, "items": items}},
    }
    return to_json(body, spoiled)


EXPERIENCE = ("无需经验", "在校生/应届生", "1年及以上", "2年及以上", "3年及以上", "5年及以上", "10年及以上")
DEGREE = ("", "大专", "本科", "硕士", "博士", "高中", "中技/中专")
SIZES = ("少于50人", "50-150人", "150-500人", "500-1000人", "1000-5000人", "10000人以上")
KINDS = ("民营", "民营", "上市公司", "外资（欧美）", "外资（非欧美）", "国企", "合资")
INDUSTRIES = (  # companyIndustryType1Str, by vocab.INDUSTRIES' level
    "互联网/电子商务",
    "计算机软件",
    "计算机服务(系统、数据服务、维修)",
    "互联网/电子商务",
    "计算机软件",
    "电子技术/半导体/集成电路",
    "教育/培训/院校",
    "医疗/护理/卫生",
    "金融/投资/证券",
    "网络游戏",
    "贸易/进出口",
    "专业服务(咨询、人力资源、财会)",
)
WELFARE_CODES = {w: str(1001 + i) for i, w in enumerate(vocab.WELFARE)}  # its welfare codes, in WELFARE order

# Parts of an item that depend on one thing of a posting (its place, company, pay, welfare), made once each.
_PLACES, _PAYS = {}, {}
_HREF_TAIL = f"?s=sou_sou_soulb&t=0_0&req={REQ_PLACEHOLDER.decode()}"


def _place(p):
    key = (p.city.name, p.district, p.area)
    made = _PLACES.get(key)
    if made is None:
        city, code = p.city, p.city.code(SITE)
        district_no = [d[0] for d in city.districts].index(p.district) + 1
        made = _PLACES[key] = {
            "workAreaCode": f"{code[:4]}{district_no:02d}",
            "jobAreaCode": code,
            "jobAreaString": f"{city.name}·{p.district}",
            "hrefAreaPinYin": f"{city.pinyin}-{p.district_abbr}",
            "jobAreaLevelDetail": {
                "provinceCode": code[:2] + "0000",
                "cityCode": code,
                "cityString": city.name,
                "districtString": p.district,
                "landMarkString": p.area,
            },
        }
    return made


@functools.cache
def _company(c):
    return {
        "fullCompanyName": c.full_name,
        "companyName": c.short_name,
        "coId": str(c.number),
        "companyTypeString": KINDS[c.kind],
        "companySizeString": SIZES[c.size],
        "companyIndustryType1Str": INDUSTRIES[c.industry],
        "companyIndustryType2Str": "",
        "companyHref": f"https://jobs.51job.com/all/co{c.number}.html",
    }


def _pay(p):
    key = (p.salary_min, p.salary_max, p.months)
    made = _PAYS.get(key)
    if made is None:
        made = _PAYS[key] = {
            "provideSalaryString": salary_string(p),
            "jobSalaryMin": str(p.salary_min),
            "jobSalaryMax": str(p.salary_max),
        }
    return made


@functools.cache
def _welfare(welfare):
    return [{"code": WELFARE_CODES[w], "chineseTitle": w} for w in welfare]


_WORK_YEAR = tuple(str(i) for i in range(len(EXPERIENCE)))


def _item(p):
    issued = p.published_text
    experience = EXPERIENCE[p.experience]
    place = _place(p)
    return {
        "jobId": p.id,
        "jobType": "0",
        "jobName": p.title,
        "jobTags": [*p.skills[:3], experience],
        "jobNumString": "招1人",
        **place,
        **_pay(p),
        "issueDateString": issued,
        "confirmDateString": issued,
        "updateDateTime": issued,
        "workYear": _WORK_YEAR[p.experience],
        "workYearString": experience,
        "degreeString": DEGREE[p.degree],
        "termStr": "全职",
        "jobWelfareCodeDataList": _welfare(p.welfare),
        **_company(p.company),
        "hrName": p.hr_name,
        "hrPosition": p.hr_title,
        "hrIsOnline": len(p.hr_name) == 2,
        "lon": str(p.lng),
        "lat": str(p.lat),
        "jobDescribe": f"一、岗位职责\n1、负责{p.title}相关工作；\n二、任职要求\n1、熟悉{'、'.join(p.skills)}。",
        "jobHref": f"https://jobs.51job.com/{place['hrefAreaPinYin']}/{p.id}.html{_HREF_TAIL}",
    }


def salary_string(p):
    """51job's wording: 7-9千, 8千-1.2万, 1.5-2.5万, with ·13薪 when more than 12 months."""

    def part(yuan, unit):
        value = yuan / (1000 if unit == "千" else 10000)
        return f"{value:.1f}".rstrip("0").rstrip(".")

    lo, hi = p.salary_min, p.salary_max
    if hi < 10000:
        text = f"{part(lo, '千')}-{part(hi, '千')}千"
    elif lo < 10000:
        text = f"{part(lo, '千')}千-{part(hi, '万')}万"
    else:
        text = f"{part(lo, '万')}-{part(hi, '万')}万"
    return text + (f"·{p.months}薪" if p.months > 12 else "")


def _json(body):
    return to_json(body)


def _status(status, message):
    return (
        200,
        CONTENT_TYPE,
        _json({"status": status, "message": message, "resultbody": {"job": {"totalCount": 0, "items": []}}}),
    )


WAF_CHALLENGE = """<html><script>
var arg1='{arg1}';
var _0x4818=['\\x63\\x73\\x4b\\x48\\x77\\x71\\x4d\\x49','\\x5a\\x73\\x4b\\x4a\\x77\\x72\\x38\\x56'];
var l=function(){{var _0x5e0b=arg1;var a=_0x5e0b.length;return a;}};
document.cookie='acw_sc__v2='+l()+'; expires='+new Date(new Date().getTime()+3600000).toGMTString()+'; max-age=3600; path=/';
document.location.reload();
</script></html>"""

WAF_SLIDER = """<!DOCTYPE html><html><head><meta charset="utf-8"><title>访问验证</title>
<script name="aliyunwaf_{tag}" src="https://g.alicdn.com/AWSC/AWSC/awsc.js"></script>
<link rel="stylesheet" href="https://g.alicdn.com/sd/ncpc/nc.css"></head>
<body><div class="waf-nc-wrapper"><img class="waf-nc-icon" src="https://errors.aliyun.com/images/TB1TpamHpXXXXaJXXXXeB7nYVXX-104-162.png">
<p class="waf-nc-title">访问验证</p><p class="waf-nc-description">请按住滑块，拖动到最右边</p>
<div id="nc"><div id="nc_1_wrapper" class="nc_wrapper"><div id="nc_1__scale_text" class="scale_text">
<span class="nc-lang-cnt">请按住滑块，拖动到最右边</span></div>
<span id="nc_1_n1z" class="nc_iconfont btn_slide">&#xe620;</span></div></div>
<script>var aliyun_waf_traceid="{trace}";</script></div></body></html>"""

# The app's own HTML where JSON was due: no WAF marker, no login text.
BUSY_PAGE = """<!DOCTYPE html><html><head><meta charset="utf-8"><title>前程无忧</title></head>
<body><div class="err-page"><img src="https://img06.51jobcdn.com/im/2009/error/busy.png" alt="">
<p class="err-tip">抱歉，系统繁忙，请稍后再试</p><p class="trace">{trace}</p>
<a href="https://www.51job.com/">返回首页</a></div></body></html>"""


def _soft_empty(query, h, world, faults):
    """status "1" and no items, while totalCount still says what the keyword holds."""
    page, _ = page_of(world, query, MAX_PAGES, faults)
    body = {
        "status": "1",
        "message": "",
        "resultbody": {"searchType": "2", "requestId": "", "job": {"totalCount": page.total, "items": []}},
    }
    return 200, CONTENT_TYPE, _json(body)


def job_id(n, company):
    """A jobId: 9 digits (its company is not in it)."""
    return str(100_000_000 + n % 900_000_000)


def _waf(query, h, *_):
    """Aliyun's JS challenge: the crawler computes acw_sc__v2 from arg1 and retries."""
    return 200, "text/html", WAF_CHALLENGE.format(arg1=hashlib.sha1(str(h).encode()).hexdigest().upper()).encode()


def _slider(query, h, *_):
    return 200, "text/html; charset=utf-8", WAF_SLIDER.format(tag=f"{h & 0xFFFFFF:06x}", trace=f"{h:016x}").encode()


def _busy(query, h, *_):
    return 200, "text/html; charset=utf-8", BUSY_PAGE.format(trace=f"{h:016x}").encode()


IMITATION = Imitation(
    experience=EXPERIENCE,
    degree=DEGREE,
    sizes=SIZES,
    kinds=KINDS,
    industries=INDUSTRIES,
    make_id=job_id,
    id_salt=0xC2B2AE3D27D4EB4F,
    decorations=("{}", "{}+五险一金", "{}（五险一金）", "【高薪】{}"),
    hostile=Fields(
        "jobId",
        ("issueDateString", "confirmDateString", "updateDateTime"),
        (
            "jobName",
            "provideSalaryString",
            "fullCompanyName",
            "companyName",
            "jobAreaString",
            ("jobAreaLevelDetail", "cityString"),
            "workYearString",
            "degreeString",
        ),
        ("jobHref", "companyHref"),
        {"jobTags": None, "jobWelfareCodeDataList": "chineseTitle"},
        ("jobSalaryMin", "jobSalaryMax", "lon", "lat"),
        "jobNumString",
    ),
    faults=(
        FaultKind("qcwy_waf", "51job Aliyun WAF JS challenge (var arg1=...)", _waf),
        FaultKind("qcwy_slider", "51job Aliyun slider page (nc_1_n1z)", _slider),
        # throttling as the API itself says it: status 1001 with no items
        FaultKind(
            "qcwy_throttle",
            "51job status 1001, no items",
            lambda query, h, *_: _status("1001", "访问过于频繁，请稍后再试"),
        ),
        # a soft block: an empty page that says it is not the last
        FaultKind(
            "qcwy_soft_empty", "51job status 1, no items, totalCount the real total (opt-in)", _soft_empty, shape=True
        ),
        FaultKind("qcwy_html", "51job HTML 系统繁忙 page where JSON was due (opt-in)", _busy, shape=True),
    ),
    search="fetch",  # the search page's XHR to search-pc
)
