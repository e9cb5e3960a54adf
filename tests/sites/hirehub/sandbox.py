"""HireHub in the sandbox: GET /hh/search?city=&q=&page=, 10 postings a page, at most 5 pages, as JSON."""

from farm.sandbox.results import Query, int_param, page_of, to_json

SITE = "hirehub"
PATHS = ("/hh/search",)
PAGE_SIZE, MAX_PAGE_SIZE, MAX_PAGES = 10, 10, 5
CONTENT_TYPE = "application/json"
FAULTS: dict = {}


def parse(request):
    q = request.query
    return Query(SITE, q.get("city", ""), q.get("q", ""), int_param(q.get("page"), 1), PAGE_SIZE)


def render(world, query, faults=None):
    page, city = page_of(world, query, MAX_PAGES, faults)
    jobs = [_item(world.posting(SITE, city, query.keyword, slot)) for slot in page.slots]
    return to_json({"total": page.reachable, "page": query.page, "jobs": jobs})


def _item(p):
    return {
        "id": p.id,
        "title": p.title,
        "company": p.company.full_name,
        "salary": f"{p.salary_min}-{p.salary_max}",
        "city": p.city.name,
        "url": f"https://www.hirehub.example/job/{p.id}",
    }
