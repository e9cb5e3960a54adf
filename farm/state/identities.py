"""The paces identities learned at each site (``identity_pace``): read when a crawl starts, kept when it ends;
and each site's identities as its last crawl left them, for `farm stats`.

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


def last_run_identities(conn: Connection, sources: list[str]) -> dict[str, dict[str, Any]]:
    """source -> {"run": id, "ended_at": ISO time, "identities": [{identity, pages, blocks, pace, state}]}: each
    site's identities as its last finished crawl left them (its stats in ``crawl_run``: labels with passwords
    masked, farm.crawl.identities); a source with no finished crawl that had any is left out."""
    runs = CrawlRun.__table__.c
    found: dict[str, dict[str, Any]] = {}
    for source in sources:
        row = conn.execute(
            select(runs.id, runs.ended_at, runs.stats)
            .where(runs.source == source, runs.ended_at.is_not(None))
            .order_by(runs.ended_at.desc())
            .limit(1)
        ).first()
        if row is None:
            continue
        identities = identities_in(json.loads(row.stats or "{}"))
        if identities:
            found[source] = {"run": row.id, "ended_at": row.ended_at.isoformat(), "identities": identities}
    return found


def identities_in(stats: dict[str, Any]) -> list[dict[str, Any]]:
    """Each identity a crawl's stats name (``farm/identity/<label>/<what>``), in the order first named."""
    by_label: dict[str, dict[str, Any]] = {}
    for name, value in stats.items():
        if not name.startswith(IDENTITY_PREFIX):
            continue
        label, _, what = name[len(IDENTITY_PREFIX) :].rpartition("/")
        if label and what in ("pages", "blocks", "pace", "state"):
            row = by_label.setdefault(label, {"identity": label, "pages": 0, "blocks": 0, "pace": None, "state": None})
            row[what] = value
    return list(by_label.values())
