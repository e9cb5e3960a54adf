"""The paces identities learned at each site (``identity_pace``): read when a crawl starts, kept when it ends.

An identity is a proxy of FARM_PROXIES (named by its id, a hash of its URL: no credentials are stored) or
this machine's own address (``direct``); farm.crawl.identities says how its pace is learned.
"""

from sqlalchemy import delete, select
from sqlalchemy.engine import Engine

from farm.state.clock import utcnow
from farm.state.models import IdentityPaceRow


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
            table.insert(), [{"source": source, "identity": i, "pace": pace, "updated_at": now} for i, pace in paces.items()]
        )
