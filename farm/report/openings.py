"""The report's openings (farm.openings): new, gone and back each day, how long they stay open per city
and keyword, how many were reposted. An opening is one job across the sites (docs/openings.md)."""

from dataclasses import asdict
from datetime import date
from zoneinfo import ZoneInfo

from sqlalchemy.engine import Engine

from farm.openings.life import day_counts
from farm.openings.picture import picture
from farm.openings.summary import open_by_keyword
from farm.report.markup import escape, table
from farm.state.clock import last_days

DAYS_SHOWN = 7  # days in the new-and-gone table, ending with the report's day


def read_openings(engine: Engine, day: date, tz: ZoneInfo, gone_after: int) -> dict:
    """The openings' figures of ``day`` (JSON values but for the days)."""
    seen = picture(engine, tz, gone_after, day)
    postings = list(seen.postings.values())
    lives = [opening.life for opening in seen.openings]
    listed = [opening.opening for opening in seen.openings if opening.life.first_seen <= day]
    per_day = [asdict(day_counts(one, postings, lives)) for one in last_days(day, DAYS_SHOWN)]
    return {
        "gone_after": gone_after,
        "openings": sum(life.first_seen <= day for life in lives),
        "postings": sum(life.first_seen <= day for life in postings),
        "per_day": per_day,
        "reposted": sum(any(when <= day for when in life.back) for life in lives),
        "by_keyword": open_by_keyword(seen.openings, day),
        "two_sites": sum(seen.sites.get(opening, 0) == 2 for opening in listed),
        "three_sites": sum(seen.sites.get(opening, 0) >= 3 for opening in listed),
        "waiting": seen.waiting,
    }


def openings_section(openings: dict, day: date) -> str:
    after = openings.get("gone_after", 0)
    out = [
        "<h2 id=openings>Openings</h2>"
        "<p class=note>An opening is one job, however many sites post it (docs/openings.md). Gone: its keyword's "
        f"crawl completed on {after} {'day' if after == 1 else 'days'} after it was last seen without finding "
        "it; a keyword that ended partial or failed proves nothing gone. Back (reposted): seen again after it "
        "went.</p>"
    ]
    if openings.get("waiting"):
        out.append(
            f"<p class=note>{openings['waiting']:,} postings are in no opening yet: <code>farm openings update</code> "
            "puts them in one (an account that may only read leaves them waiting).</p>"
        )
    if not openings.get("openings"):
        out.append(f"<p class=empty>No posting was seen by {day}: no opening yet.</p>")
        return "".join(out)
    out.append(
        f"<p>{openings['openings']:,} openings from {openings['postings']:,} postings, first seen by {day}; "
        f"{openings['reposted']:,} came back after they went. Posted on two sites: "
        f"{openings.get('two_sites', 0):,} openings; on three: {openings.get('three_sites', 0):,}.</p>"
        "<h3 id=openings-days>New, gone and back each day</h3>"
    )
    out.append(
        table(
            ["day", "openings new", "gone", "back", "postings new", "gone", "back"],
            [
                [
                    row["day"],
                    row["new_openings"],
                    row["gone_openings"],
                    row["back_openings"],
                    row["new_postings"],
                    row["gone_postings"],
                    row["back_postings"],
                ]
                for row in openings["per_day"]
            ],
            {1, 2, 3, 4, 5, 6},
        )
    )
    out.append(
        "<h3 id=openings-open>Days open, per city and keyword</h3><p class=note>Days open: from the day an opening "
        "was first seen to the day it was last seen, both counted, over the openings gone by "
        f"{escape(day)}; those still open are counted apart.</p>"
    )
    out.append(
        table(
            ["city", "keyword", "gone", "median days open", "still open", "reposted"],
            [
                [r["city"], r["job"] or "–", r["gone"], r["median_days_open"], r["open"], r["reposted"]]
                for r in openings["by_keyword"]
            ],
            {2, 3, 4, 5},
        )
    )
    return "".join(out)
