"""The keyword state table: models, the store, migrations."""

from farm.errors import KeywordError
from farm.state.lease import Lease, PageWrite
from farm.state.store import KeywordStore

__all__ = ["KeywordStore", "Lease", "PageWrite", "KeywordError"]
