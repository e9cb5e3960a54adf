"""HireHub in the sandbox: GET /hh/search?city=&q=&page=, 10 postings a page, at most 5 pages, as JSON.

Its ``IMITATION`` gives its own ids, experience words, hostile fields and a busy answer of its own; the
rest (degree, company words, cross-posts: none) is the sandbox's default (farm.sandbox.imitation).
"""

from farm.sandbox import hostile
from farm.sandbox.hostile import Fields
from farm.sandbox.imitation import FaultKind, Imitation
from farm.sandbox.results import Query, int_param, page_of, to_json

SITE = "hirehub"
PATHS = ("/hh/search",)
PAGE_SIZE, MAX_PAGE_SIZE, MAX_PAGES = 10, 10, 5
CONTENT_TYPE = "application/json"
EXPERIENCE = ("any", "graduate", "<1y", "1-3y", "3-5y", "5-10y", "10y+")


def parse(request):
    q = request.query
    return Query(SITE, q.get("city", ""), q.get("q", ""), int_param(q.get("page"), 1), PAGE_SIZE)


def render(world, query, faults=None):
    page, city = page_of(world, query, MAX_PAGES, faults)
    jobs = [_item(world.posting(SITE, city, query.keyword, slot)) for slot in page.slots]
    spoiled = hostile.spoil(SITE, jobs, faults)
    return to_json({"total": page.reachable, "page": query.page, "jobs": jobs}, spoiled)


def _item(p):
    return {
        "id": p.id,
        "title": p.title,
        "company": p.company.full_name,
        "salary": f"{p.salary_min}-{p.salary_max}",
        "city": p.city.name,
        "experience": EXPERIENCE[p.experience],
        "url": f"https://www.hirehub.example/job/{p.id}",
    }


def _busy(query, h, *_):
    return 200, CONTENT_TYPE, b'{"error":"busy","jobs":[]}'


IMITATION = Imitation(
    experience=EXPERIENCE,
    make_id=lambda n, company: f"hh{n % 10**10:010d}",
    hostile=Fields("id", (), ("title", "company", "city", "experience"), ("url",), {}, (), "extra"),
    faults=(
        FaultKind("hirehub_busy", "HireHub's busy answer: an error, no total, no jobs (opt-in)", _busy, shape=True),
    ),
    search="fetch",
)
