"""HireHubSpider: one JSON search, ``/hh/search?city=<code>&q=<job>&page=<n>`` (sandbox.py)."""

import json
from urllib.parse import urlencode

import scrapy

from farm import JobPosting, LeaseSpider, Page, ParseError
from tests.sites.hirehub.cities import CITY_CODES, CODE_PATTERN


class HireHubSpider(LeaseSpider):
    name = "hirehub"
    page_size = 10
    paging = "parallel"  # every page tells the total
    city_codes = CITY_CODES
    code_pattern = CODE_PATTERN

    def search_request(self, city_code, job, page):
        query = urlencode({"city": city_code, "q": job, "page": page})
        return scrapy.Request(f"{self.base_url}/hh/search?{query}")

    def parse_page(self, response):
        try:
            data = json.loads(response.text)
            total, jobs = int(data["total"]), data["jobs"]
        except (ValueError, KeyError, TypeError) as exc:
            raise ParseError(f"hirehub: not a page of results ({exc})") from None
        return Page(postings=self.postings_from(jobs, _posting, "id", response), total_count=total)


def _posting(entry):
    return JobPosting(
        job_id=str(entry["id"]),
        title=entry.get("title"),
        company=entry.get("company"),
        salary=entry.get("salary"),
        city=entry.get("city"),
        url=entry.get("url"),
        raw=entry,
    )
