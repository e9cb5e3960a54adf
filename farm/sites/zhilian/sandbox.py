"""智联招聘: the server-rendered search page GET /sou/jl{city}?kw=&p= (and /sou/jl{city}/p{N}?kw=), whose
`<script>__INITIAL_STATE__={...}</script>` carries positionList, plus a little of the real DOM.

Per docs/sites.md §3.1: 20 postings a page, at most 15 reachable pages; `positionCount` is the keyword's real
total, `pages` what can be reached. The path's /p{N} overrides ?p=. A hand-made /kw{token}/ path gets the
zero-result 登录之后再搜索 page, as the contract says the live site does.

The JSON is one line and `</` is written `<\\/`, so `__INITIAL_STATE__=(\\{.*?\\})</script>` captures exactly
the object. Normal pages contain no 登录/注册 text, so that text means the login wall and nothing else.

Choices where the contract is silent: an unknown city code gives a successful, empty search (an empty
`positionList` and a "暂无符合条件的职位" tip: no 登录 text, so it is not mistaken for the login wall). Its
imitation's data (``IMITATION``): its words, its ids (CC, its company's number, J and 11 digits), its title
decorations, the fields hostile postings spoil, its verification page, login wall and client-rendered shell.
"""

import functools
import html
import urllib.parse

from farm.sandbox import hostile, stale
from farm.sandbox.hostile import Fields
from farm.sandbox.imitation import FaultKind, Imitation
from farm.sandbox.results import Query, int_param, page_of, to_json

SITE = "zhilian"
PATHS = ("/sou/jl{city}", "/sou/jl{city}/p{page:\\d+}", "/sou/jl{city}/kw{token}/p{page:\\d+}")
PAGE_SIZE, MAX_PAGE_SIZE, MAX_PAGES = 20, 20, 15
CONTENT_TYPE = "text/html; charset=utf-8"
STALE_VARIANTS = ("under", "over", "zero")  # its page 1 may also say 0 pages beside its postings (stale.py)


def parse(request):
    page = request.match_info.get("page") or request.query.get("p")
    return Query(SITE, request.match_info["city"], request.query.get("kw", ""), int_param(page, 1), PAGE_SIZE)


def reject(request, query):
    """Site-made keyword tokens cannot be forged: a /kw{token}/ path gets the login wall."""
    if "token" in request.match_info:
        return login_wall(query)
    return None


def render(world, query, faults=None):
    page, city = page_of(world, query, MAX_PAGES, faults)
    items = [_item(world.posting(SITE, city, query.keyword, slot)) for slot in page.slots]
    spoiled = hostile.spoil(SITE, items, faults)
    told = stale.told(page, query.page_size, MAX_PAGES)
    state = _state(query, items, told.pages, told.total)  # the pager below stays true: only totals go stale
    cards = "".join(_card(i) for i in items) or _no_jobs("暂无符合条件的职位，换个关键词试试")
    return _document(query, state, cards + _pager(query, page.has_more), spoiled)


EXPERIENCE = ("经验不限", "无经验", "1年以下", "1-3年", "3-5年", "5-10年", "10年以上")
DEGREE = ("学历不限", "大专", "本科", "硕士", "博士", "高中", "中专/中技")
SIZES = ("20人以下", "20-99人", "100-299人", "500-999人", "1000-9999人", "10000人以上")
KINDS = ("民营", "民营", "上市公司", "外商独资", "外商独资", "国企", "合资")
INDUSTRIES = (  # industryName, by vocab.INDUSTRIES' level
    "互联网",
    "IT服务",
    "IT服务",
    "电子商务",
    "人工智能",
    "半导体/芯片",
    "教育/培训",
    "医疗/健康",
    "金融",
    "网络游戏",
    "贸易/批发/零售",
    "专业服务/咨询",
)


@functools.cache
def _company(c):
    """The item fields that depend only on the company, made once per company."""
    return {
        "companyName": c.full_name,
        "companyNumber": f"CZ{c.number}",
        "companySize": SIZES[c.size],
        "propertyName": KINDS[c.kind],
        "industryName": INDUSTRIES[c.industry],
        "companyUrl": f"https://www.zhaopin.com/companydetail/CZ{c.number}.htm",
    }


def _item(p):
    exp, degree = EXPERIENCE[p.experience], DEGREE[p.degree]
    return {
        "number": p.id,
        "name": p.title,
        "positionUrl": f"https://www.zhaopin.com/jobdetail/{p.id}.htm",
        "salary60": salary60(p),
        "salaryReal": f"{p.salary_min}-{p.salary_max}",
        **_company(p.company),
        "cityId": p.city.code(SITE),
        "workCity": p.city.name,
        "cityDistrict": p.district,
        "streetName": p.area,
        "workingExp": exp,
        "education": degree,
        "publishTime": p.published_text,
        "showSkillTags": [{"tag": t} for t in (degree, exp, *p.skills)],
        "skillLabel": [{"value": s} for s in p.skills],
        "welfareLabel": list(p.welfare),
        "workType": "实习" if "实习" in p.title else "全职",
        "subJobTypeLevelName": p.skills[0],
        "staffCard": {"staffName": p.hr_name, "hrJob": p.hr_title},
        "jobSummary": "",
    }


def salary60(p):
    """智联's wording: 8000-16000元 below ten thousand, 1.5-2.5万 above, with ·N薪."""
    if p.salary_min < 10000:
        text = f"{p.salary_min}-{p.salary_max}元"
    else:
        text = f"{p.salary_min / 10000:g}-{p.salary_max / 10000:g}万"
    return text + (f"·{p.months}薪" if p.months > 12 else "")


def _state(query, items, pages, count):
    return {
        "pageIndex": query.page,
        "pageSize": PAGE_SIZE,
        "pages": pages,
        "positionCount": count,
        "isLogged": False,
        "queryParams": {"jl": query.city, "kw": query.keyword, "p": query.page},
        "keyWords": query.keyword,
        "listResponseCode": 200,
        "resumeNumber": "",
        "cookiesData": {},
        "statBaseData": {"actionid": f"sandbox-{query.city}-{query.page}"},
        "searchCondition": {"jl": query.city, "kw": query.keyword},
        "positionList": items,
    }


def _card(item):
    e = html.escape
    return (
        f'<div class="joblist-box__item clearfix"><div class="joblist-box__iteminfo iteminfo">'
        f'<div class="jobinfo__top"><a class="jobinfo__name" href="{e(item["positionUrl"])}" target="_blank">'
        f'{e(item["name"])}</a><p class="jobinfo__salary">{e(item["salary60"])}</p></div>'
        f'<div class="jobinfo__other-info"><span class="jobinfo__other-info-item">{e(item["workCity"])}·'
        f'{e(item["cityDistrict"])}</span><span class="jobinfo__other-info-item">{e(item["workingExp"])}</span>'
        f'<span class="jobinfo__other-info-item">{e(item["education"])}</span></div></div>'
        f'<div class="companyinfo"><a class="companyinfo__name" href="{e(item["companyUrl"])}">'
        f"{e(item['companyName'])}</a></div></div>"
    )


def _pager(query, has_more):
    href = html.escape(f"/sou/jl{query.city}/p{query.page + 1}?kw={urllib.parse.quote(query.keyword)}")
    prev = "soupager__btn" + ("" if query.page > 1 else " soupager__btn--disable")
    nxt = (
        '<a class="soupager__btn" href="' + href + '">下一页</a>'
        if has_more
        else '<a class="soupager__btn soupager__btn--disable">下一页</a>'
    )
    return (
        f'<div class="pagination"><div class="soupager"><a class="{prev}">上一页</a>'
        f'<span class="soupager__index soupager__index--active">{query.page}</span>{nxt}</div></div>'
    )


def _no_jobs(text):
    return f'<div class="noJobTip"><img class="noJobTip__img" src="//img.zhaopin.cn/nojob.png"><p>{text}</p></div>'


def _document(query, state, body, spoiled=False):
    data = to_json(state, spoiled).decode().replace("</", "<\\/")
    title = html.escape(f"{query.keyword}招聘_{query.keyword}最新招聘信息 - 智联招聘")
    return (
        f'<!DOCTYPE html><html lang="zh-CN"><head><meta charset="utf-8"><title>{title}</title></head>'
        f'<body><div id="root"><div class="joblist-box">{body}</div></div>'
        f"<script>__INITIAL_STATE__={data}</script></body></html>"
    ).encode()


def login_wall(query):
    """Zero cards and 登录之后再搜索: the silent login wall."""
    state = _state(query, [], 0, 0)
    tip = _no_jobs('登录之后再搜索，<a class="noJobTip__login" href="https://passport.zhaopin.com/login">登录/注册</a>')
    return 200, CONTENT_TYPE, _document(query, state, tip)


VERIFY = """<!DOCTYPE html><html><head><meta charset="utf-8"><title>安全验证 | Security Verification</title></head>
<body><div class="verify-wrap"><h1>安全验证</h1><p>Security Verification</p>
<p>当前访问存在风险，请完成验证后继续访问</p><div id="nc_1_wrapper"><span id="nc_1_n1z"></span></div>
<div class="geetest_box"></div><p class="trace">{trace}</p></div></body></html>"""

# The client-rendered page: the app's root and scripts, the navigation's text, neither state nor cards.
SHELL = """<!DOCTYPE html><html lang="zh-CN"><head><meta charset="utf-8"><title>智联招聘</title>
<link rel="stylesheet" href="https://fecdn.zhaopin.cn/www/sou/css/app.{tag}.css"></head><body>
<div id="root"><header class="zp-header"><nav class="zp-nav"><a href="https://www.zhaopin.com/">首页</a>
<a href="https://sou.zhaopin.com/">职位搜索</a><a href="https://xiaoyuan.zhaopin.com/">校园招聘</a>
<a href="https://overseas.zhaopin.com/">海外招聘</a><a href="https://highpin.zhaopin.com/">猎头服务</a>
<a href="https://news.zhaopin.com/">职场资讯</a><a href="https://rd5.zhaopin.com/">企业服务</a>
<a href="https://www.zhaopin.com/app">下载智联招聘APP，随时随地找工作</a>
<span class="zp-nav__cities">热门城市：<a href="/sou/jl530">北京招聘</a><a href="/sou/jl538">上海招聘</a>
<a href="/sou/jl763">广州招聘</a><a href="/sou/jl765">深圳招聘</a><a href="/sou/jl653">杭州招聘</a>
<a href="/sou/jl801">成都招聘</a><a href="/sou/jl635">南京招聘</a><a href="/sou/jl736">武汉招聘</a>
<a href="/sou/jl854">西安招聘</a></span></nav></header>
<div class="sou-main" data-state="pending"><p class="sou-main__tip">海量职位，一键直达，总有一份适合你的好工作</p></div>
<footer class="zp-footer">智联招聘 版权所有 京ICP备17067871号 人力资源服务许可证 客服热线 400-885-9898</footer></div>
<script src="https://fecdn.zhaopin.cn/www/sou/js/vendor.{tag}.js"></script>
<script src="https://fecdn.zhaopin.cn/www/sou/js/app.{tag}.js"></script></body></html>"""


def job_id(n, company):
    """A number: CC, its company's number, J and 11 digits."""
    return f"CC{company.number}J{40_000_000_000 + n % 60_000_000_000}"


IMITATION = Imitation(
    experience=EXPERIENCE,
    degree=DEGREE,
    sizes=SIZES,
    kinds=KINDS,
    industries=INDUSTRIES,
    make_id=job_id,
    id_salt=0x165667B19E3779F9,
    decorations=("{}", "{}", "急聘{}", "{}-包吃住"),
    hostile=Fields(
        "number",
        ("publishTime",),
        ("name", "salary60", "companyName", "workCity", "cityDistrict", "streetName", "workingExp", "education"),
        ("positionUrl", "companyUrl"),
        {"showSkillTags": "tag", "skillLabel": "value", "welfareLabel": None},
        ("salaryReal", "cityId", "companyNumber", "subJobTypeLevelName"),
        "staffCard",
    ),
    faults=(
        FaultKind(
            "zhilian_verify",
            "zhilian 安全验证 / Security Verification page",
            lambda query, h, *_: (200, "text/html; charset=utf-8", VERIFY.format(trace=f"{h:016x}").encode()),
        ),
        FaultKind("zhilian_login", "zhilian 0 results + 登录之后再搜索", lambda query, h, *_: login_wall(query)),
        FaultKind(
            "zhilian_shell",
            "zhilian client-rendered shell: no state, no cards (opt-in)",
            lambda query, h, *_: (200, CONTENT_TYPE, SHELL.format(tag=f"{h & 0xFFFFFFFF:08x}").encode()),
            shape=True,
        ),
    ),
    search="navigate",  # a server-rendered page
)
