"""The keyword state table: models, the store, migrations.

``from farm.state import KeywordStore`` (or Lease, PageWrite, KeywordError) loads its module when first
asked for: a module of the package (``farm.state.lease``, ``farm.state.models``) imports without the
store and all it imports (the spiders and ``scrapy list`` need no store).
"""

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from farm.errors import KeywordError
    from farm.state.lease import Lease, PageWrite
    from farm.state.store import KeywordStore

PUBLIC = {
    "KeywordStore": "farm.state.store",
    "Lease": "farm.state.lease",
    "PageWrite": "farm.state.lease",
    "KeywordError": "farm.errors",
}
__all__ = ["KeywordStore", "Lease", "PageWrite", "KeywordError"]


def __getattr__(name: str) -> object:
    module = PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'farm.state' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value  # asked once
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(PUBLIC))
