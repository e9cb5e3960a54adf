"""Work shared through Redis (FARM_REDIS_URL): one request queue, one dupefilter and one pace per site.

scrapy-redis gives the shape (a per-spider ZSET queue, a fingerprint SET) but loses
work in the ways farm must not (destructive pops, a close that deletes everyone's
state, pickled payloads, a dupefilter that never expires). farm keeps its shape and
its settings' meaning, and subclasses its queue and dupefilter to fix each gap:

- queue.py      a reliable queue: a taken request stays in its worker's in-flight set
                until its page is recorded; a worker whose heartbeat stops has its
                in-flight requests put back and its keywords adopted by a survivor
- codec.py      requests as JSON data (Request.to_dict), never pickle; anything else is refused
- dupefilter.py page fingerprints that belong to a keyword's lease, whatever the day
- scripts/      the Lua scripts: every move between keys is one atomic script, and one that must not
                run twice answers a call made again (its reply lost) as it did (scripts/once.lua)

Redis is a cache of work the keyword table can always rebuild (see the scheduler).
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from farm.crawl.backends.redis.backend import RedisBackend as RedisBackend


def __getattr__(name: str) -> "type[RedisBackend]":
    # FARM_WORK_BACKEND names farm.crawl.backends.redis.RedisBackend: loaded when named, so that the
    # package's modules import one another without it
    if name == "RedisBackend":
        try:
            from farm.crawl.backends.redis.backend import RedisBackend
        except ImportError as exc:
            missing = (exc.name or "").split(".")[0]
            if missing not in ("redis", "scrapy_redis"):
                raise
            raise ImportError(
                f"the Redis work backend needs the {missing} package: pip install 'farm[redis]'", name=missing
            ) from None
        return RedisBackend
    raise AttributeError(name)
