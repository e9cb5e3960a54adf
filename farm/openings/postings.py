"""Postings read from job_posting for the clustering, in the order that makes it deterministic."""

import json
import re

from sqlalchemy import select
from sqlalchemy.engine import Engine

from farm.openings.cluster import PostingSeen
from farm.openings.names import CompanyNames
from farm.state.models import JobPostingRow

CITY_PART = re.compile(r"[·\-\s/|]")


def city_of(text: str | None) -> str:
    """The city of a posting's city text: '北京·朝阳区' → '北京'."""
    if not text:
        return ""
    return CITY_PART.split(text.strip(), maxsplit=1)[0].removesuffix("市")


def read_postings(engine: Engine, names: CompanyNames, city: str | None = None) -> list[PostingSeen]:
    """Every posting (of ``city``), by first seen, site and id; qcwy's brand ↔ legal-name pairs learnt."""
    table = JobPostingRow.__table__
    query = select(
        table.c.source,
        table.c.job_id,
        table.c.title,
        table.c.company,
        table.c.city,
        table.c.salary_min,
        table.c.salary_max,
        table.c.area,
        table.c.degree,
        table.c.raw,
    ).order_by(table.c.first_seen_at, table.c.source, table.c.job_id)
    postings = []
    with engine.connect() as connection:
        for row in connection.execute(query):
            where = city_of(row.city)
            if city is not None and where != city:
                continue
            learn_pair(names, row.source, row.raw)
            postings.append(
                PostingSeen(
                    row.source,
                    row.job_id,
                    row.title,
                    row.company,
                    where,
                    row.salary_min,
                    row.salary_max,
                    row.area,
                    row.degree,
                )
            )
    return postings


def learn_pair(names: CompanyNames, source: str, raw) -> None:
    """qcwy lists a company's brand (companyName) beside its legal name (fullCompanyName)."""
    if source != "qcwy" or not raw:
        return
    item = json.loads(raw) if isinstance(raw, str) else raw
    if isinstance(item, dict) and item.get("companyName") and item.get("fullCompanyName"):
        names.learn(str(item["companyName"]), str(item["fullCompanyName"]))
