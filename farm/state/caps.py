"""What the page caps left behind: per keyword of a day, what the site said it holds against what
``FARM_<SITE>_MAX_PAGES`` let farm take; what ``farm stats`` and the report show (docs/sites.md §4.2).

A keyword is held back by its cap when it is ``completed`` with its last page at the cap
(``total_pages`` >= the cap: farm stopped there, not the site) and the site said it holds more
postings than farm took (``site_total`` > ``jobs_found``). What the cap left behind is the
difference. A site may serve fewer than it says it holds (Boss stops at 10 pages whatever
``resCount`` says, docs/sites.md): raising a cap past the site's own gains nothing.
Nothing here writes; the query reads the ``keyword`` table alone.
"""

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date
from typing import Any

from sqlalchemy import and_, or_, select
from sqlalchemy.engine import Connection

from farm.config import SiteConfig, site_key
from farm.state.models import Keyword

c = Keyword.__table__.c


@dataclass(frozen=True)
class Capped:
    """A keyword its cap held back: the site holds ``site_total``, the cap of ``cap`` pages took ``took``."""

    source: str
    city: str
    job: str
    site_total: int
    took: int
    cap: int

    @property
    def left(self) -> int:
        return self.site_total - self.took

    def describe(self) -> str:
        """One line: "boss 北京/python: the site holds 385, the cap of 3 pages took 45 — FARM_BOSS_MAX_PAGES"."""
        pages = "page" if self.cap == 1 else "pages"
        return (
            f"{self.source} {self.city}/{self.job}: the site holds {self.site_total:,}, the cap of "
            f"{self.cap} {pages} took {self.took:,} — {cap_setting(self.source)}"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "city": self.city,
            "job": self.job,
            "site_total": self.site_total,
            "took": self.took,
            "left_behind": self.left,
        }


def cap_setting(source: str) -> str:
    return site_key(source, "max_pages")


def capped_keywords(conn: Connection, day: date, caps: dict[str, int]) -> list[Capped]:
    """The keywords requested on ``day`` that their site's cap (``caps``: source -> pages) held back,
    the most left behind first."""
    if not caps:
        return []
    at_cap = or_(*(and_(c.source == source, c.total_pages >= cap) for source, cap in caps.items()))
    query = (
        select(c.source, c.city, c.job, c.site_total, c.jobs_found)
        .where(
            c.last_requested_date == day,
            c.crawl_status == "completed",
            c.site_total.is_not(None),
            c.site_total > c.jobs_found,
            at_cap,
        )
        .order_by((c.site_total - c.jobs_found).desc(), c.source, c.city, c.job)
    )
    return [
        Capped(source, city, job, int(total), int(took), caps[source])
        for source, city, job, total, took in conn.execute(query)
    ]


def left_behind(capped: list[Capped]) -> dict[str, dict[str, Any]]:
    """Per site: {"setting", "cap", "keywords", "site_total", "took", "left_behind"} of its capped keywords."""
    sites: dict[str, dict[str, Any]] = {}
    for k in capped:
        site = sites.setdefault(
            k.source,
            {
                "setting": cap_setting(k.source),
                "cap": k.cap,
                "keywords": 0,
                "site_total": 0,
                "took": 0,
                "left_behind": 0,
            },
        )
        site["keywords"] += 1
        site["site_total"] += k.site_total
        site["took"] += k.took
        site["left_behind"] += k.left
    return sites


def site_caps(settings: Mapping[str, Any], sources: Iterable[str]) -> dict[str, int]:
    """Each source's page cap, ``FARM_<SOURCE>_MAX_PAGES`` as a crawl reads it (farm.config: a site
    without one has the polite cap)."""
    return {source: SiteConfig.from_settings(settings, source).max_pages for source in sources}


def summary_lines(rows: list[dict[str, Any]], shown: int = 5) -> list[str]:
    """``farm stats``'s lines: per source row (with its "caps", as ``farm stats --json`` gives it), what its
    cap left behind, then its ``shown`` keywords that lost the most."""
    lines = []
    for row in rows:
        site = row.get("caps")
        if not site or site["cap"] is None:
            continue
        named = f"{site['setting']}={site['cap']}"
        if not site["keywords"]:
            lines.append(f"{row['source']}: no keyword held back by {named}")
            continue
        lines.append(
            f"{row['source']}: {site['keywords']:,} keyword(s) held back by {named}: the site holds "
            f"{site['site_total']:,}, farm took {site['took']:,}, {site['left_behind']:,} left behind"
        )
        for k in site["capped"][:shown]:
            lines.append(
                "  " + Capped(row["source"], k["city"], k["job"], k["site_total"], k["took"], site["cap"]).describe()
            )
        if len(site["capped"]) > shown:
            lines.append(f"  … and {len(site['capped']) - shown:,} more (farm stats --json lists them all)")
    return lines


def attach(conn: Connection, rows: list[dict[str, Any]], caps: dict[str, int]) -> list[dict[str, Any]]:
    """``rows`` (one per source, all of one day) each with "caps": {"setting", "cap", "keywords",
    "site_total", "took", "left_behind", "capped": [{city, job, site_total, took, left_behind}]}."""
    if not rows:
        return rows
    capped = capped_keywords(conn, date.fromisoformat(rows[0]["date"]), caps)
    sites = left_behind(capped)
    for row in rows:
        source = row["source"]
        empty = {"setting": cap_setting(source), "cap": caps.get(source), "keywords": 0, "site_total": 0}
        site = sites.get(source, {**empty, "took": 0, "left_behind": 0})
        row["caps"] = {**site, "capped": [k.to_json() for k in capped if k.source == source]}
    return rows
