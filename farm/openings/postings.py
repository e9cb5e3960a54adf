"""Postings read from job_posting for the clustering, in the order that makes it deterministic, with the
brand ↔ legal-name pairs they carry."""

import json
import re
from contextlib import nullcontext

from sqlalchemy import case, null, select
from sqlalchemy.engine import Connection, Engine

from farm.openings.cluster import PostingSeen
from farm.openings.names import CompanyNames
from farm.state.models import JobPostingRow

CITY_PART = re.compile(r"[·\-\s/|]")


def city_of(text: str | None) -> str:
    """The city of a posting's city text: '北京·朝阳区' → '北京'."""
    if not text:
        return ""
    return CITY_PART.split(text.strip(), maxsplit=1)[0].removesuffix("市")


_TABLE = JobPostingRow.__table__
ORDER = (_TABLE.c.first_seen_at, _TABLE.c.source, _TABLE.c.job_id)


def read_postings(
    bind: Engine | Connection, where=None, with_raw: bool = True
) -> list[tuple[int, PostingSeen, object, object]]:
    """The postings ``where`` holds of, read once, by first seen, site and id: (job_posting id, the posting as
    the clustering sees it, the raw item of a qcwy posting or None (None for every one without
    ``with_raw``), its first seen)."""
    table = JobPostingRow.__table__
    query = select(
        table.c.id,
        table.c.source,
        table.c.job_id,
        table.c.title,
        table.c.company,
        table.c.city,
        table.c.salary_min,
        table.c.salary_max,
        table.c.area,
        table.c.degree,
        table.c.experience,
        (case((table.c.source == "qcwy", table.c.raw), else_=None) if with_raw else null()).label("raw"),
        table.c.first_seen_at,
    ).order_by(*ORDER)
    if where is not None:
        query = query.where(where)
    postings = []
    with bind.connect() if isinstance(bind, Engine) else nullcontext(bind) as connection:
        for row in connection.execute(query):
            seen = PostingSeen(
                row.source,
                row.job_id,
                row.title,
                row.company,
                city_of(row.city),
                row.salary_min,
                row.salary_max,
                row.area,
                row.degree,
                row.experience,
            )
            postings.append((row.id, seen, row.raw, row.first_seen_at))
    return postings


def learn_pair(names: CompanyNames, source: str, raw) -> tuple[str, str] | None:
    """qcwy lists a company's brand (companyName) beside its legal name (fullCompanyName): the keys paired."""
    pair = pair_names(source, raw)
    return None if pair is None else names.learn(*pair)


def pair_names(source: str, raw) -> tuple[str, str] | None:
    """The (brand, legal name) a qcwy posting's raw item carries, or None."""
    if source != "qcwy" or not raw:
        return None
    item = json.loads(raw) if isinstance(raw, str) else raw
    if isinstance(item, dict) and item.get("companyName") and item.get("fullCompanyName"):
        return str(item["companyName"]), str(item["fullCompanyName"])
    return None
