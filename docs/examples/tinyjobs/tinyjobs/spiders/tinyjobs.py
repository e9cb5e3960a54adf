"""tinyjobs: one JSON search, ``/search?city=<code>&q=<job>&page=<n>`` (site.py)."""

import json
import re
from urllib.parse import urlencode

import scrapy

from farm import JobPosting, LeaseSpider, Page, ParseError


class TinyJobsSpider(LeaseSpider):
    name = "tinyjobs"  # the keywords' source; FARM_TINYJOBS_* are its settings
    page_size = 10
    paging = "parallel"  # every page tells the total
    city_codes = {"Springfield": "spr", "Shelbyville": "shb", "Ogdenville": "ogd"}
    code_pattern = re.compile(r"[a-z]{3}")

    def search_request(self, city_code, job, page):
        query = urlencode({"city": city_code, "q": job, "page": page})
        return scrapy.Request(f"{self.base_url}/search?{query}")

    def parse_page(self, response):
        try:
            data = json.loads(response.text)
            total, jobs = int(data["total"]), data["jobs"]
        except (ValueError, KeyError, TypeError) as exc:
            raise ParseError(f"tinyjobs: not a page of results ({exc})") from None
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
