"""The sandbox's postings as farm stores them, each with its true opening, for measuring farm.openings.

Each site's posting is rendered by the sandbox's site module (the item its search answer carries) and read
back by the spider's own item reader and farm.salary, so the company, title, city and pay the clustering
sees are the ones a crawl stores. A keyword gives the postings its site lets a crawler reach (the page caps).
The truth comes from the sandbox (farm.sandbox.crossposts.opening_of): a cross-post's (city, keyword,
position), or a posting of one site alone.
"""

from dataclasses import dataclass
from datetime import date

from farm.openings.cluster import PostingSeen
from farm.openings.names import CompanyNames
from farm.openings.postings import city_of, learn_pair
from farm.salary import columns
from farm.sandbox import crossposts
from farm.sandbox.cities import city_named
from farm.sandbox.data import World
from farm.sites.boss import sandbox as boss_site
from farm.sites.boss import spider as boss_spider
from farm.sites.qcwy import sandbox as qcwy_site
from farm.sites.qcwy import spider as qcwy_spider
from farm.sites.zhilian import sandbox as zhilian_site
from farm.sites.zhilian import spider as zhilian_spider

DAY = date(2026, 12, 2)
CITIES = ("北京", "上海")
WORDS = ("python", "java", "前端", "golang", "数据分析", "算法", "测试", "运维", "产品经理", "UI设计",
         "c++", "android", "ios", "嵌入式", "销售", "会计", "人事", "电工", "客服", "运营")  # fmt: skip
KINDS = ("", "高级", "远程", "兼职", "外包", "驻场", "储备", "应届", "海外", "资深")
KEYWORDS = tuple(kind + word for kind in KINDS for word in WORDS)  # 200
# each site's item as its search answer carries it, and the spider's reader of that item
SITES = {
    "boss": (lambda p: boss_site._item(p, "lid"), boss_spider._posting, boss_site),
    "qcwy": (qcwy_site._item, qcwy_spider._posting, qcwy_site),
    "zhilian": (zhilian_site._item, zhilian_spider._posting, zhilian_site),
}


@dataclass(frozen=True)
class Truth:
    opening: tuple  # the sandbox's opening (crossposts.opening_of)
    company: int  # the sandbox's company number, to tell two companies of one key apart


def sandbox_postings(
    seed: int = 0, postings: tuple[int, int] | None = None, keywords=KEYWORDS, cities=CITIES
) -> tuple[list[PostingSeen], dict[tuple[str, str], Truth], CompanyNames]:
    """Every posting of the keywords on the three sites in the cities, ordered as farm reads them (site,
    id: one day's crawl); the truth by (source, job_id); the brand pairs 51job's items teach."""
    world = World(seed=seed, postings=postings, today=DAY)
    names = CompanyNames()
    found: dict[tuple[str, str], PostingSeen] = {}
    truth: dict[tuple[str, str], Truth] = {}
    for source, (render, read, module) in SITES.items():
        for city_name in cities:
            city = city_named(city_name)
            for keyword in keywords:
                listed = world.keyword(source, city, keyword)
                for slot in listed.upto(min(listed.total, module.MAX_PAGES * module.PAGE_SIZE)):
                    made = world.posting(source, city, keyword, slot)
                    item = render(made)
                    stored = read(item)
                    key = (source, stored["job_id"])
                    if key in found:  # a generic posting many keywords list
                        continue
                    learn_pair(names, source, item)
                    low, high, _, _ = columns(source, stored["salary"])
                    found[key] = PostingSeen(
                        source,
                        key[1],
                        stored["title"],
                        stored["company"],
                        city_of(stored["city"]),
                        low,
                        high,
                        stored["area"],
                        stored["degree"],
                        stored.get("experience"),
                    )
                    truth[key] = Truth(crossposts.opening_of(source, city_name, keyword, slot), made.company.number)
    return [found[key] for key in sorted(found)], truth, names
