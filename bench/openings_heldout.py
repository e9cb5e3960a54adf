"""A held-out imitation of the sites' cross-posts, for measuring farm.openings on variations its cleaner
was not written against.

Its lists and forms are its own, drawn up apart from farm.openings' rules and from the sandbox
(farm/sandbox): other brands, other legal-name forms (a province or city before the name, a region in
brackets of either width after it or before the suffix, 集团 and 控股 forms), other title decorations
(benefits joined by + or ＋, urgency words, work modes, bracketed tags of several shapes, full-width
letters), other district forms (a district with or without 区, a business area alone or after it, a
neighbouring district, none) and other wordings of degree, experience and pay. Each opening is one job
of one company; it is posted on one, two or three sites, each site showing it in its own forms, drawn
independently per site. Companies post several jobs, some near-misses of each other: one title in two
districts with other pay and experience, a senior and a plain title. Two companies in a city may share
a brand (``云图``): their jobs are distinct openings.

``heldout_postings(seed)`` gives the postings as farm stores them (farm.openings.cluster.PostingSeen),
ordered as farm reads a day (site, id), the truth by (source, job_id), and the brand ↔ legal-name pairs
51job's items would teach (51job shows the brand beside the legal name).
"""

import random
from dataclasses import dataclass, replace

from farm.openings.cluster import PostingSeen
from farm.openings.names import CompanyNames

SITES = ("boss", "qcwy", "zhilian")
CITIES = {
    "北京": {
        "朝阳区": ("望京", "国贸", "三里屯", "酒仙桥"),
        "海淀区": ("中关村", "上地", "西二旗", "五道口"),
        "丰台区": ("丽泽", "科技园", "方庄"),
        "西城区": ("德胜门", "金融街", "西直门"),
        "东城区": ("东直门", "王府井"),
        "大兴区": ("亦庄", "黄村"),
    },
    "杭州": {
        "西湖区": ("文三路", "黄龙", "西溪"),
        "滨江区": ("长河", "西兴", "浦沿"),
        "余杭区": ("未来科技城", "闲林", "良渚"),
        "上城区": ("钱江新城", "湖滨"),
        "拱墅区": ("武林", "大关"),
    },
}
NEIGHBOURS = {
    "朝阳区": "东城区",
    "海淀区": "西城区",
    "丰台区": "西城区",
    "西城区": "海淀区",
    "东城区": "朝阳区",
    "大兴区": "丰台区",
    "西湖区": "拱墅区",
    "滨江区": "上城区",
    "余杭区": "西湖区",
    "上城区": "滨江区",
    "拱墅区": "西湖区",
}
# brand syllables: two or three of them make a brand
SYLLABLES = "云图星河聚力凌动青禾远帆拓海知行鼎新恒达慧石鲸落蓝鲸微澜锦程数川极光悦享万象启明橙子墨羽朗月清源"
REGIONS = ("北京", "北京市", "杭州", "杭州市", "浙江", "浙江省", "上海", "深圳市", "江苏", "中国")
TRADES = ("信息技术", "网络科技", "科技", "软件", "数据科技", "智能科技", "电子商务", "文化传媒", "科技发展", "")
SUFFIXES = ("有限公司", "有限责任公司", "股份有限公司", "集团有限公司", "（集团）有限公司", "控股有限公司")
ROLES = (
    "运维开发",
    "Java开发",
    "Python后端",
    "前端开发",
    "数据分析",
    "算法",
    "测试开发",
    "产品经理",
    "UI设计",
    "大数据开发",
    "DBA",
    "嵌入式软件",
    "客户经理",
    "新媒体运营",
    "财务会计",
    "行政专员",
)
KINDS = ("工程师", "实习生", "专员", "主管", "")
LEVELS = ("", "", "", "高级", "资深", "初级")
# decorations a site adds to a title (each drawn per site)
BENEFITS = ("五险一金", "六险一金", "带薪年假", "弹性工作", "包三餐", "年底双薪", "餐补", "周末双休", "十三薪")
URGENT = ("急招", "急聘", "直聘", "高薪诚聘", "热招", "名企直招")
MODES = ("远程", "可远程", "居家办公", "驻场", "坐班")
TAG_SHAPES = ("【{}】", "[{}]", "（{}）", "({})", "「{}」", "<{}>")
DEGREES = {
    "本科": ("本科", "本科及以上", "统招本科", "全日制本科"),
    "大专": ("大专", "大专及以上", "专科"),
    "硕士": ("硕士", "硕士及以上", "研究生"),
    "": ("学历不限", "不限", ""),
}
EXPERIENCES = {
    "1-3年": ("1-3年", "1-3年经验", "经验1-3年"),
    "3-5年": ("3-5年", "3-5年经验", "经验3-5年"),
    "5-10年": ("5-10年", "5-10年经验", "5年以上"),
    "在校": ("在校/应届", "应届生", "无经验"),
    "": ("经验不限", "不限", ""),
}
SHARED_BRANDS = 0.06  # companies whose brand another company of its city also uses


@dataclass(frozen=True)
class Company:
    number: int
    brand: str
    legal: str  # its legal name, as 51job and 智联 show it
    shows_brand: bool  # its brand is unlike its legal name's core (a pair only 51job teaches)


@dataclass(frozen=True)
class Job:
    number: int
    company: Company
    city: str
    title: str
    district: str
    area: str
    degree: str
    experience: str
    pay: tuple[int, int]


def _brand(rng: random.Random) -> str:
    first, second = SYLLABLES[::2], SYLLABLES[1::2]
    return rng.choice(first) + rng.choice(second) + (rng.choice(SYLLABLES) if rng.random() < 0.3 else "")


def _legal(rng: random.Random, core: str) -> str:
    trade, suffix = rng.choice(TRADES), rng.choice(SUFFIXES)
    form = rng.random()
    if form < 0.45:
        return f"{rng.choice(REGIONS)}{core}{trade}{suffix}"
    if form < 0.7:
        left, right = ("（", "）") if rng.random() < 0.5 else ("(", ")")
        return f"{core}{left}{rng.choice(REGIONS).rstrip('市省')}{right}{trade}{suffix}"
    if form < 0.8:
        left, right = ("（", "）") if rng.random() < 0.5 else ("(", ")")
        return f"{core}{trade}{left}{rng.choice(REGIONS).rstrip('市省')}{right}{suffix}"
    return f"{core}{trade}{suffix}"


def companies(rng: random.Random, count: int) -> list[Company]:
    made, brands = [], set()
    while len(made) < count:
        brand = _brand(rng)
        if brand in brands:
            continue
        brands.add(brand)
        unlike = rng.random() < 0.12
        core = _brand(rng) if unlike else brand
        made.append(Company(len(made), brand, _legal(rng, core), unlike))
    return made


def _title(rng: random.Random) -> str:
    role = rng.choice(ROLES)
    kind = rng.choice(KINDS)
    return f"{rng.choice(LEVELS) if kind != '实习生' else ''}{role}{kind}"


def _pay(rng: random.Random) -> tuple[int, int]:
    low = rng.choice(range(4, 41)) * 1000
    return low, low + rng.choice((2, 3, 5, 8, 10)) * 1000


def jobs(rng: random.Random, city: str, firms: list[Company], count: int) -> list[Job]:
    made: list[Job] = []
    districts = CITIES[city]
    while len(made) < count:
        company = rng.choice(firms)
        district = rng.choice(sorted(districts))
        job = Job(
            0,
            company,
            city,
            _title(rng),
            district,
            rng.choice(districts[district]),
            rng.choice(sorted(DEGREES)),
            rng.choice(sorted(EXPERIENCES)),
            _pay(rng),
        )
        made.append(job)
        near = rng.random()
        if near < 0.12:  # the same title in another district, other pay and experience
            other = rng.choice(sorted(set(districts) - {district}))
            made.append(
                Job(
                    0,
                    company,
                    city,
                    job.title,
                    other,
                    rng.choice(districts[other]),
                    job.degree,
                    rng.choice(sorted(set(EXPERIENCES) - {job.experience})),
                    (job.pay[0] + 6000, job.pay[1] + 9000),
                )
            )
        elif near < 0.2:  # a senior one beside it
            made.append(
                Job(0, company, city, "高级" + job.title.removeprefix("初级"), district, job.area, job.degree,
                    "5-10年", (job.pay[0] + 8000, job.pay[1] + 12000))
            )  # fmt: skip
    return [replace(job, number=number) for number, job in enumerate(made)]


def _decorated(rng: random.Random, title: str) -> str:
    if rng.random() < 0.08:  # full-width letters and digits, as some clients type them
        title = "".join(chr(ord(ch) + 0xFEE0) if "!" <= ch <= "~" else ch for ch in title)
    if rng.random() < 0.1 and any("a" <= ch.lower() <= "z" for ch in title):
        title = title.upper() if rng.random() < 0.5 else title.replace("开发", " 开发")
    form = rng.random()
    if form < 0.4:
        return title
    if form < 0.52:
        return rng.choice(TAG_SHAPES).format(rng.choice(URGENT)) + title
    if form < 0.64:
        joiner = rng.choice(("+", "＋", "+", " + "))
        return title + joiner + joiner.join(rng.sample(BENEFITS, rng.choice((1, 1, 2))))
    if form < 0.74:
        return title + rng.choice(TAG_SHAPES).format(rng.choice(BENEFITS + MODES))
    if form < 0.82:
        return title + rng.choice(("-", "—", "/", "｜", " ")) + rng.choice(MODES)
    if form < 0.9:
        return rng.choice(URGENT) + rng.choice(("：", ":", "！", " ", "")) + title
    return f"{title}（{rng.choice(MODES)}+{rng.choice(BENEFITS)}）"


def _area(rng: random.Random, job: Job, source: str) -> str:
    form = rng.random()
    if form < 0.1:  # a neighbouring district (the site's map, or the company's other office)
        return NEIGHBOURS[job.district]
    if form < 0.2:
        return ""
    if form < 0.3:
        return job.area  # a business area alone
    if source == "boss":
        return f"{job.district}·{job.area}" if rng.random() < 0.7 else f"{job.district} {job.area}"
    if source == "qcwy":
        return job.district if rng.random() < 0.6 else job.district.removesuffix("区")
    return f"{job.city}-{job.district}" if rng.random() < 0.5 else f"{job.district}{job.area}"


def _pay_shown(rng: random.Random, pay: tuple[int, int]) -> tuple[int | None, int | None]:
    form = rng.random()
    if form < 0.08:
        return None, None  # 面议
    if form < 0.25:  # rounded, or the range one site widens
        return pay[0] - 1000, pay[1] + 2000
    return pay


def _worded(rng: random.Random, wordings: dict, value: str) -> str:
    if rng.random() < 0.08:
        value = ""  # a site that leaves it out
    return rng.choice(wordings[value])


def heldout_postings(
    seed: int = 7, jobs_per_city: int = 3200, companies_count: int = 600
) -> tuple[list[PostingSeen], dict[tuple[str, str], tuple[tuple[str, int], int]], CompanyNames]:
    """The postings, the truth ((source, job_id) -> (job, company)), and the pairs 51job teaches."""
    rng = random.Random(seed)
    firms = companies(rng, companies_count)
    postings, truth, pairs = [], {}, {}
    for city in sorted(CITIES):
        city_firms = list(firms)
        for _ in range(int(len(firms) * SHARED_BRANDS)):  # another company of this city with a shared brand
            twin = rng.choice(firms)
            city_firms.append(Company(len(firms) + len(city_firms), twin.brand, _legal(rng, twin.brand), False))
        for job in jobs(rng, city, city_firms, jobs_per_city):
            spread = rng.random()
            sites = (
                SITES
                if spread < 0.2
                else rng.sample(SITES, 2)
                if spread < 0.45
                else rng.sample(SITES, 1)
            )  # fmt: skip
            for source in sorted(sites):
                job_id = f"{source[0]}{rng.getrandbits(40):x}"
                company = job.company.brand if source == "boss" else job.company.legal
                if source == "qcwy" and rng.random() < 0.9:
                    pairs.setdefault(job.company.brand, job.company.legal)
                low, high = _pay_shown(rng, job.pay)
                postings.append(
                    PostingSeen(
                        source,
                        job_id,
                        _decorated(rng, job.title),
                        company,
                        city,
                        low,
                        high,
                        _area(rng, job, source),
                        _worded(rng, DEGREES, job.degree),
                        _worded(rng, EXPERIENCES, job.experience),
                    )
                )
                truth[(source, job_id)] = ((city, job.number), job.company.number)
    postings.sort(key=lambda p: (p.source, p.job_id))
    names = CompanyNames()
    for brand, legal in sorted(pairs.items()):
        names.learn(brand, legal)
    return postings, truth, names
