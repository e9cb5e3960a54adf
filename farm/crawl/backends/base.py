"""The work backend: where a crawl's requests wait between the spider and the downloader.

farm has one scheduler (farm.crawl.scheduler.FarmScheduler) and two backends: the local one
(farm.crawl.backends.local: this process's memory, and the JOBDIR checkpoint) and the Redis one
(farm.crawl.backends.redis: a queue every worker shares). The scheduler applies farm's gates (the
page window, the site's pace, the proxies, the retry lane) to what a backend hands out; a backend
only keeps requests, hands them out and settles them. The mode is the backend, chosen once when the
crawl's parts are built (farm.crawl.parts); nothing else asks which one it is.
"""

from abc import ABC, abstractmethod

from twisted.internet.defer import succeed


class WorkBackend(ABC):
    """The contract every backend keeps; each backend's docstring says only how it differs.

    Life: ``join`` once, before the first request (from the scheduler's ``open``); ``close`` when the
    engine closes the scheduler; ``leave`` once, when the engine has stopped. Every method runs on
    the reactor and never blocks on I/O: what a backend must fetch from elsewhere it fetches in the
    background and wakes the engine (``wake``, given at construction) when it has something.

    - ``enqueue(request)`` keeps the request; False only when it is refused as a duplicate.
    - ``fetch()`` hands out the next request, or None. None does not mean the crawl is finished:
      requests may be on their way to this process, or held by others; ask ``is_finished``.
    - A page request handed out is this crawl's until ``mark_handled`` (its page recorded or given
      up): until then no one else gets it, and if this process dies it is handed out again.
    - ``keyword_ended(lease, outcome)``: the keyword's requests still queued are dropped, wherever
      they wait, and whoever must know of the end is told.
    - ``has_pending()`` and ``len()``: what this process holds and has not handed out.
    - ``is_finished()``: no request is queued or held anywhere, and no keyword is being taken on: the
      crawl may end once its own keywords have.
    - Keywords: ``claiming()`` before a claim, ``hold(leases)`` once it took them (before their first
      requests are queued); ``adopted_elsewhere()``: the keywords others took over, which a resumed
      crawl does not take back; ``held_pages()``: the (lease key, page) this process took and has
      not settled; ``closing()`` once the crawl closes, ``keep_listed()`` when it could not release
      its keywords.
    - Others: ``others_busy()`` says, without asking anyone, whether other processes hold work
      (None: not known, ask ``look_at_others``).
    - ``paced``: True when ``fetch`` hands requests out at the site's pace itself; the scheduler
      then paces only what it sends again (the retry lane).
    """

    paced = False
    # True when a keyword's pages wait where other processes take them (farm.crawl.keywordrun.KeywordRun.shared)
    shared = False

    def start(self) -> None:
        """Start the threads it needs (once, when the crawl's parts start: farm.crawl.parts)."""
        return None  # nothing to do, unless a backend says otherwise

    def join(self, spider):
        """Start taking part (before the first request); may return a Deferred."""
        return None  # nothing to do, unless a backend says otherwise

    @abstractmethod
    def close(self, reason: str) -> None:
        """The engine closes the scheduler: stop fetching in the background."""

    def leave(self):
        """The engine stopped: give back what this process took and did not settle; may return a
        Deferred."""
        return None  # nothing to do, unless a backend says otherwise

    def stop(self) -> None:
        """Without a crawl (a tool or a test that built the parts): stop at once, giving nothing back."""
        return None  # nothing to do, unless a backend says otherwise

    @abstractmethod
    def enqueue(self, request) -> bool: ...

    @abstractmethod
    def fetch(self): ...

    @abstractmethod
    def has_pending(self) -> bool: ...

    @abstractmethod
    def __len__(self) -> int: ...

    def mark_handled(self, lease_key, page: int) -> None:
        """The page is recorded, or given up: its request is settled."""
        return None  # nothing to do, unless a backend says otherwise

    def keyword_ended(self, lease, outcome: str) -> None:
        """The lease's keyword ended here, with ``outcome``."""
        return None  # nothing to do, unless a backend says otherwise

    def is_finished(self) -> bool:
        return True

    # --- keywords -----------------------------------------------------------------------------

    def claiming(self):
        """Before a claim: a Deferred that fires once the claim may go ahead."""
        return succeed(None)  # no one else to tell

    def hold(self, leases) -> None:
        """A claim (or a take-back) made these leases this process's."""
        return None  # nothing to do, unless a backend says otherwise

    def adopted_elsewhere(self):
        """(keyword id, token) of the keywords another process took over: not to be taken back."""
        return ()

    def held_pages(self):
        """(lease key, page) of the page requests this process took and has not settled."""
        return ()

    def closing(self):
        """The crawl closes: a Deferred that fires once keywords being taken on have become runs."""
        return succeed(None)  # none is taken on from elsewhere

    def keep_listed(self) -> str | None:
        """The crawl closes with keywords it could not release: stay findable by those who take
        them over; says who does (for the log), or None when no one does."""
        return None  # no one else to take them over

    # --- others -------------------------------------------------------------------------------

    def others_busy(self) -> bool | None:
        """Whether other processes hold work, as far as known without asking; None: ask
        ``look_at_others``."""
        return False  # no one else

    def look_at_others(self, then) -> None:
        """Ask whether other processes hold work or take keywords on; ``then(busy)`` once known."""
        then(False)
