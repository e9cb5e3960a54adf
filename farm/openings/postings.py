"""Postings read from job_posting for the clustering, in the order that makes it deterministic."""

import json
import re
from contextlib import nullcontext

from sqlalchemy import select
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


def read_postings(
    bind: Engine | Connection, names: CompanyNames, city: str | None = None, where=None
) -> list[PostingSeen]:
    """Every posting (of ``city``; that ``where`` holds of), by first seen, site and id; qcwy's brand ↔
    legal-name pairs learnt."""
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
    if where is not None:
        query = query.where(where)
    postings = []
    with bind.connect() if isinstance(bind, Engine) else nullcontext(bind) as connection:
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


def learn_pairs(engine: Engine, names: CompanyNames) -> None:
    """The pairs every qcwy posting carries (what the clustering of a few postings knows of all)."""
    table = JobPostingRow.__table__
    with engine.connect() as connection:
        for (raw,) in connection.execute(select(table.c.raw).where(table.c.source == "qcwy").order_by(table.c.id)):
            learn_pair(names, "qcwy", raw)


def learn_pair(names: CompanyNames, source: str, raw) -> None:
    """qcwy lists a company's brand (companyName) beside its legal name (fullCompanyName)."""
    if source != "qcwy" or not raw:
        return
    item = json.loads(raw) if isinstance(raw, str) else raw
    if isinstance(item, dict) and item.get("companyName") and item.get("fullCompanyName"):
        names.learn(str(item["companyName"]), str(item["fullCompanyName"]))
