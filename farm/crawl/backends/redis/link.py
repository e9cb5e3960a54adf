"""The crawl's link to Redis: one client, one thread, first in first out.

Scrapy's scheduler methods are synchronous and run on the reactor; a Redis round
trip there stalls the whole crawl (scrapy-redis does exactly that, and with
SCHEDULER_IDLE_BEFORE_CLOSE it blocks in BRPOP). Every Redis call of a crawl goes
through ``run`` instead, on this link's own thread, in the order it was asked:
a page's follow-up requests are queued before its acknowledgement.

A call that cannot reach Redis is retried with a growing pause for up to
FARM_OUTAGE_GRACE seconds; after that ``on_lost`` closes the crawl (its keywords
are released ``partial`` in the keyword table; Redis is a cache of work the table
can rebuild). A call retried may have run already, its reply lost (a stall past the
socket timeout, a reset): a call that must not run twice carries a call id chosen
before it is first made, and answers as it did (farm.crawl.backends.redis.queue). The client itself
retries nothing: every call made again is made here, so the queue knows a call made again from a
first one (a first call skips the look for its earlier reply).

Every new connection (the first, and each after an outage) runs the link's ``on_connect``
callbacks before any call is made on it: a Redis restarted from an older snapshot is found
there, before a pop reads its past as current (farm.crawl.backends.redis.queue.went_back).
"""

import builtins
import logging
import time
from collections.abc import Callable
from typing import Any, ParamSpec, Protocol, TypeVar, cast

import redis
from redis.backoff import NoBackoff
from redis.commands.core import Script
from redis.retry import Retry
from twisted.internet import reactor
from twisted.internet.defer import Deferred
from twisted.internet.interfaces import IReactorFromThreads
from twisted.internet.threads import deferToThreadPool

from farm.display import mask_url
from farm.errors import FarmStartError, RedisUnreachable
from farm.threads import single_thread_pool

logger = logging.getLogger(__name__)

_P = ParamSpec("_P")
_T = TypeVar("_T")
# ``command(*args)``: one command sent on a new connection, its reply read (``RedisLink.on_connect``)
Command = Callable[..., Any]


class RedisConnection(Protocol):
    """What ``RedisLink._connected`` does with a new redis-py connection (which leaves these untyped)."""

    def on_connect(self) -> None: ...
    def send_command(self, *args: Any) -> None: ...
    def read_response(self) -> Any: ...


class BytesRedis(Protocol):
    """The link's client (``RedisLink.server``) as farm uses it: its replies are bytes, as it sets no
    decode_responses (redis-py types each reply as text or bytes, for either client)."""

    def ping(self) -> object: ...
    def close(self) -> None: ...
    def register_script(self, script: str) -> Script: ...
    def eval(self, script: str, numkeys: int, *keys_and_args: str) -> Any: ...
    def get(self, name: str) -> bytes | None: ...
    def set(self, name: str, value: str, *, nx: bool = False) -> object: ...
    def hget(self, name: str, key: str) -> bytes | None: ...
    def hset(self, name: str, key: str, value: int) -> object: ...
    def hgetall(self, name: str) -> dict[bytes, bytes]: ...
    def sadd(self, name: str, *values: str) -> object: ...
    def smembers(self, name: str) -> builtins.set[bytes]: ...  # ``set`` is the command here
    def zrange(self, name: str, start: int, end: int) -> list[bytes]: ...
    def zcard(self, name: str) -> int: ...


class RedisLink:
    def __init__(self, url: str, grace: float, setting: str = "FARM_REDIS_URL") -> None:
        self.url = url
        self.grace = grace
        self._on_connect: list[Callable[[Command], object]] = []
        try:
            # one connection, as there is one thread: a pooled command first asks its socket whether
            # anything is pending, one more system call, after which this thread waits for the crawl's GIL
            client = redis.Redis.from_url(
                url,
                socket_timeout=10,
                socket_connect_timeout=5,
                health_check_interval=30,
                single_connection_client=True,
                redis_connect_func=self._connected,
                retry=Retry(NoBackoff(), 0),  # made again by ``run`` only (see the module docstring)
            )
            self.server = cast(BytesRedis, client)
            self.server.ping()
        except ValueError as exc:
            raise RedisUnreachable(f"{setting}={mask_url(url)!r} is not a Redis URL ({exc})") from None
        except redis.RedisError as exc:
            raise RedisUnreachable(f"cannot reach Redis at {setting}={mask_url(url)!r}: {exc}") from None
        self._pool = single_thread_pool("farm-redis")

    def on_connect(self, callback: Callable[[Command], object]) -> None:
        """``callback(command)`` runs at every new connection, before any call made on it (on the link's
        thread): ``command(*args)`` sends one command on that connection and returns its reply."""
        self._on_connect.append(callback)

    def _connected(self, connection: RedisConnection) -> None:
        connection.on_connect()  # what redis-py does without this hook: the handshake, AUTH, SELECT

        def command(*args: Any) -> Any:
            connection.send_command(*args)
            return connection.read_response()

        for callback in self._on_connect:
            callback(command)

    def start(self) -> None:
        """Start the link's thread (calls made before wait for it)."""
        self._pool.start()

    def run(self, function: Callable[_P, _T], *args: _P.args, **kwargs: _P.kwargs) -> Deferred[_T]:
        """``function(*args)`` on the link's thread, riding out a Redis outage; a Deferred of its result."""
        # every reactor provides IReactorFromThreads, though twisted.internet types ``reactor`` without it
        threads = cast(IReactorFromThreads, reactor)
        return deferToThreadPool(threads, self._pool, self._patiently, function, args, kwargs)

    def _patiently(self, function: Callable[..., _T], args: tuple[Any, ...], kwargs: dict[str, Any]) -> _T:
        deadline = time.monotonic() + self.grace
        pause = 0.1
        while True:
            try:
                return function(*args, **kwargs)
            except (redis.ConnectionError, redis.TimeoutError) as exc:
                if time.monotonic() >= deadline:
                    raise RedisUnreachable(
                        f"Redis at {mask_url(self.url)} unreachable for FARM_OUTAGE_GRACE ({self.grace:.0f}s): {exc}"
                    ) from None
                logger.warning("farm: Redis unreachable (%s); trying again in %.1fs", exc, pause)
                time.sleep(pause)
                pause = min(pause * 2, 5.0)

    def close(self) -> None:
        """Blocking: waits for the calls queued so far (call it off the reactor)."""
        self._pool.stop()
        self.server.close()


def check_reach(url: str | None, timeout: float) -> str:
    """``farm doctor``'s look at FARM_REDIS_URL: the line to show when Redis answers within ``timeout``
    seconds; FarmStartError with the line that says what to do when not. No secret of the URL in either."""
    if not url:
        raise FarmStartError("FARM_WORK_BACKEND names the Redis backend: set FARM_REDIS_URL to a Redis URL")
    shown = mask_url(url)
    try:
        client = redis.Redis.from_url(url, socket_connect_timeout=timeout, socket_timeout=timeout)
    except ValueError:  # its text may quote a piece of the password: not shown
        raise FarmStartError(
            f"FARM_REDIS_URL={shown!r} is not a Redis URL: e.g. redis://host:6379/0 "
            "(write a / or @ in a password as %2F or %40)"
        ) from None
    try:
        client.ping()
    except redis.RedisError as exc:
        raise FarmStartError(
            f"{shown} does not answer: {exc}: start Redis there, or fix or unset FARM_REDIS_URL"
        ) from None
    finally:
        client.close()
    return f"{shown} answers"
