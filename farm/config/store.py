"""StoreSettings: where farm keeps its state (the database, Redis) and the rules of its leases.

farm.config.base says how a setting is declared and read; FarmConfig holds these with the rest.
"""

import os
import socket
from typing import Annotated

from pydantic import Field

from farm.config.base import Group, setting
from farm.config.kinds import CLASS_PATH, DB_URL, REDIS_URL, TIMEZONE, Kind, number, text, whole

# the work backends FARM_WORK_BACKEND names when it is empty (farm.crawl.backends)
LOCAL_BACKEND = "farm.crawl.backends.local.LocalBackend"
REDIS_BACKEND = "farm.crawl.backends.redis.RedisBackend"


def seconds(above: bool = False, example: str = "") -> Kind:
    """A number of seconds from 0 (or above it)."""
    return number(0, above=above, takes=f"a number of seconds {'above' if above else 'from'} 0, e.g. {example}")


def _crawler_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


class StoreSettings(Group):
    """The database, Redis, the day's time zone, and what a lease may take."""

    db_url: Annotated[
        str,
        setting(
            DB_URL,
            "SQLAlchemy URL of the state and postings database (`mysql+pymysql://user:pw@host:3306/farm` or "
            "`postgresql+psycopg://user:pw@host:5432/farm` in production; see [The database](database.md))",
        ),
    ] = "sqlite:///farm.db"
    redis_url: Annotated[
        str,
        setting(
            REDIS_URL,
            "Redis shared by the workers of a site: one request queue, one dupefilter and one pace per site "
            "(see [On many machines](many-machines.md)); unset, crawlers share work through the keyword "
            "table alone",
        ),
    ] = ""
    redis_prefix: Annotated[
        str,
        setting(
            text("a Redis key prefix, e.g. farm", empty=False),
            "the prefix of farm's Redis keys (`<prefix>:<site>:…`): one Redis may serve several farms",
        ),
    ] = "farm"
    # FARM_WORK_BACKEND as given: ``work_backend`` says which backend it is when it is empty
    work_backend_class: Annotated[
        str,
        setting(
            Kind(
                f"nothing ({LOCAL_BACKEND}, or {REDIS_BACKEND} with FARM_REDIS_URL), or a work backend's class path",
                CLASS_PATH.parser,
            ),
            "the class of the crawl's work backend, as Scrapy's `SCHEDULER_QUEUE` names one; unset: "
            f"`{REDIS_BACKEND}` when `FARM_REDIS_URL` is set, else `{LOCAL_BACKEND}`",
            key="FARM_WORK_BACKEND",
        ),
    ] = ""
    worker_timeout: Annotated[
        float,
        setting(
            seconds(above=True, example="30"),
            "seconds without a worker's heartbeat in Redis before the others put its requests back and "
            "adopt its keywords",
        ),
    ] = 30.0
    outage_grace: Annotated[
        float,
        setting(
            seconds(example="60"),
            "seconds a crawl rides out a lost Redis or database before it closes with its leases `partial`",
        ),
    ] = 60.0
    db_timeout: Annotated[
        float,
        setting(
            seconds(above=True, example="5"),
            "seconds a MySQL/MariaDB call may wait on the server: to connect, and for each read and write "
            "(PostgreSQL: to connect, for each statement, for unacknowledged data; `farm db upgrade` has no "
            "read deadline); a silent server is then an outage, a 503 from `farm api`, not a hang (see "
            "[The database](database.md#deadlines))",
        ),
    ] = 5.0
    db_pool_timeout: Annotated[
        float,
        setting(
            seconds(above=True, example="5"),
            "seconds a call waits for a pooled database connection when all are busy",
        ),
    ] = 5.0
    timezone: Annotated[str, setting(TIMEZONE, 'where "today" is judged')] = "Asia/Shanghai"
    lease_timeout: Annotated[
        int,
        setting(
            whole(1, takes="a whole number of seconds, at least 1, e.g. 1800"),
            "seconds without a heartbeat before a `crawling` row becomes `partial`",
        ),
    ] = 1800
    max_retries: Annotated[
        int,
        setting(
            whole(0, 1000, "a whole number from 0 to 1000, e.g. 3"),
            "claims of a `failed` row per day, each at least `FARM_RETRY_DELAY` after it failed",
        ),
    ] = 3
    retry_delay: Annotated[
        float, setting(seconds(example="600"), "seconds before a `failed` row may be claimed again")
    ] = 600.0
    max_blocked_claims: Annotated[
        int,
        setting(
            whole(1, 1000, "a whole number from 1 to 1000, e.g. 5"),
            "claims in one day that may end in a site block before the keyword ends `failed` for the day",
        ),
    ] = 5
    crawler_id: Annotated[
        str,
        setting(
            text("a name for this crawler, e.g. host:pid", empty=False),
            "who holds a lease",
            shown="host name and pid",
        ),
    ] = Field(default_factory=_crawler_id)
