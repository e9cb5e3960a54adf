"""The paces identities learned at each site (``identity_pace``): read when a crawl starts, kept when it ends;
and each site's identities as its latest crawl holds them, running or ended, for `farm stats` and the report.

An identity is a proxy of FARM_PROXIES (named by its id, a hash of its URL: no credentials are stored) or
this machine's own address (``direct``); farm.crawl.identities says how its pace is learned.
"""

import json
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.engine import Connection, Engine

from farm.state.clock import utcnow
from farm.state.models import CrawlRun, IdentityPaceRow

IDENTITY_PREFIX = "farm/identity/"  # a crawl's stats of its identities (farm.crawl.identities)


def learned_paces(engine: Engine, source: str) -> dict[str, float]:
    """identity -> the pace (requests per second) it learned at ``source`` in past crawls."""
    table = IdentityPaceRow.__table__
    with engine.connect() as conn:
        rows = conn.execute(select(table.c.identity, table.c.pace).where(table.c.source == source))
        return {identity: float(pace) for identity, pace in rows}


def keep_learned_paces(engine: Engine, source: str, paces: dict[str, float]) -> None:
    """Keep each identity's learned pace at ``source`` (replacing what a past crawl kept)."""
    if not paces:
        return
    table = IdentityPaceRow.__table__
    now = utcnow()
    with engine.begin() as conn:
        conn.execute(delete(table).where(table.c.source == source, table.c.identity.in_(list(paces))))
        conn.execute(
            table.insert(),
            [{"source": source, "identity": i, "pace": pace, "updated_at": now} for i, pace in paces.items()],
        )


RUNS_LOOKED_AT = 5  # a site's latest runs looked at for one that names identities (a run just opened names none)
NUMBERS = ("pages", "blocks", "sessions", "session_pages")


def site_identities(conn: Connection, sources: list[str]) -> dict[str, dict[str, Any]]:
    """source -> {"run": id, "status", "ended_at": ISO time or None while it runs, "identities": [{identity,
    pages, blocks, sessions, session_pages, pages_a_session, pace, state}]}: each site's identities as its
    latest crawl that names them holds them, a running one included (its row's stats, written every second,
    farm.extensions.walls; labels with passwords masked, farm.crawl.identities); a source with no such crawl
    is left out."""
    runs = CrawlRun.__table__.c
    found: dict[str, dict[str, Any]] = {}
    for source in sources:
        rows = conn.execute(
            select(runs.id, runs.status, runs.ended_at, runs.stats)
            .where(runs.source == source)
            .order_by(runs.started_at.desc(), runs.id.desc())
            .limit(RUNS_LOOKED_AT)
        )
        for row in rows:
            identities = identities_in(json.loads(row.stats or "{}"))
            if identities:
                ended_at = row.ended_at.isoformat() if row.ended_at is not None else None
                found[source] = {"run": row.id, "status": row.status, "ended_at": ended_at, "identities": identities}
                break
    return found


def identities_in(stats: dict[str, Any]) -> list[dict[str, Any]]:
    """Each identity a crawl's stats name (``farm/identity/<label>/<what>``), in the order first named, with
    its pages a session (the pages its sessions served over the sessions it earned; None: it earned none)."""
    by_label: dict[str, dict[str, Any]] = {}
    for name, value in stats.items():
        if not name.startswith(IDENTITY_PREFIX):
            continue
        label, _, what = name[len(IDENTITY_PREFIX) :].rpartition("/")
        if label and what in (*NUMBERS, "pace", "state"):
            row = by_label.setdefault(
                label, {"identity": label, **dict.fromkeys(NUMBERS, 0), "pace": None, "state": None}
            )
            row[what] = value
    for row in by_label.values():
        sessions = row["sessions"]
        row["pages_a_session"] = round(row["session_pages"] / sessions, 1) if sessions else None
    return list(by_label.values())
