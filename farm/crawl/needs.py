"""What the keyword registry needs of the crawl's parts and of its spider, as Protocols.

farm.crawl.parts.CrawlParts builds the registry (farm.crawl.registry), so the registry imports
neither it nor a spider (no module imports itself through others): it is typed against these. mypy
holds CrawlParts to ``RegistryParts`` where it builds the registry; the spider is the one the parts
serve, a LeaseSpider.
"""

from collections.abc import Callable
from typing import Any, Protocol

from twisted.internet.defer import Deferred

from farm.crawl.backends.base import LeaseKey, PageSpider, WorkBackend, page_spider
from farm.crawl.backends.checkpoint import Checkpoint
from farm.crawl.outbox import Outbox
from farm.crawl.paging import KeywordPaging
from farm.crawl.window import PageWindow
from farm.state.store import KeywordStore

__all__ = ["ForgetsPages", "PageSpider", "RegistryParts", "page_spider"]  # the spider's, from the contract


class ForgetsPages(Protocol):
    """The page progress (farm.crawl.progress.PageProgress), as the registry tells it of pages gone."""

    def forget(self, lease_key: LeaseKey, page: int | None = None) -> None: ...


class RegistryParts(Protocol):
    """What the registry uses of the crawl's parts (farm.crawl.parts.CrawlParts)."""

    @property
    def store(self) -> KeywordStore: ...

    @property
    def crawler_id(self) -> str: ...

    @property
    def backend(self) -> WorkBackend: ...

    @property
    def checkpoint(self) -> Checkpoint | None: ...

    @property
    def window(self) -> PageWindow: ...

    @property
    def outbox(self) -> Outbox: ...

    @property
    def progress(self) -> ForgetsPages: ...

    @property
    def paging(self) -> KeywordPaging: ...

    def run(self, function: Callable[..., Any], *args: Any, **kwargs: Any) -> Deferred[Any]: ...
