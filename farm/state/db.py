"""``make_engine``: an engine for the state database, its deadlines FARM_DB_TIMEOUT and
FARM_DB_POOL_TIMEOUT unless given (farm.state.engine makes it; farm.config checks the settings)."""

from typing import cast

from sqlalchemy.engine import Engine

from farm.config import read
from farm.errors import DatabaseUrlError as DatabaseUrlError

# farm.state.engine's names that scripts and tests reach through this module too
from farm.state.engine import URL_EXAMPLES as URL_EXAMPLES
from farm.state.engine import engine_for, parse_url
from farm.state.engine import postgresql_state as postgresql_state
from farm.state.engine import postgresql_unreachable as postgresql_unreachable
from farm.state.engine import reader as reader
from farm.state.engine import without_read_deadline as without_read_deadline


def make_engine(
    url: str,
    setting: str = "FARM_DB_URL",
    *,
    timeout: float | None = None,
    pool_timeout: float | None = None,
    read_deadline: bool = True,
    connections: int | None = None,
) -> Engine:
    """farm.state.engine.engine_for, a deadline not given taking its setting's value (checked:
    SettingError names a bad one)."""
    parse_url(url, setting)  # a bad URL is named before a bad deadline
    return engine_for(
        url,
        setting,
        timeout=_seconds("db_timeout", timeout),
        pool_timeout=_seconds("db_pool_timeout", pool_timeout),
        read_deadline=read_deadline,
        connections=connections,
    )


def _seconds(name: str, value: float | None) -> float:
    return value if value is not None else cast(float, read(None, name))
