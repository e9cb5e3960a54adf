"""The keyword state table: models, the store, migrations."""

from farm.state.lease import Lease, PageWrite
from farm.state.store import KeywordStore
from farm.state.validation import KeywordError

__all__ = ["KeywordStore", "Lease", "PageWrite", "KeywordError"]
