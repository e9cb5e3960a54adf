"""What a farm crawl's start checks and opens, before its parts (farm.crawl.parts) are built
around them: the scheduler it runs under, its JOBDIR (the lock and the checkpoint) and the work
backend it shares pages through (local, or Redis with FARM_REDIS_URL).

Each failure is a ``FarmStartError`` whose one line names the setting and what to do, logged
here once with no secret in it.
"""

import logging
import sqlite3

from scrapy.utils.job import job_dir
from scrapy.utils.misc import load_object

from farm.crawl.backends.checkpoint import open_checkpoint
from farm.crawl.backends.joblock import JobdirLock
from farm.crawl.backends.local import LocalBackend
from farm.display import without_secrets
from farm.errors import FarmStartError, JobdirInUse, OtherSpider, SettingError

logger = logging.getLogger(__name__)

# The scheduler whose ``open`` starts the crawl's parts (named, not imported: it imports the parts)
FARM_SCHEDULER = "farm.crawl.scheduler.FarmScheduler"


def start_failed(message: str, *urls) -> FarmStartError:
    """The error to raise, logged first in one line, with no secret of ``urls`` (the settings it
    may quote) in it; farm.commands.crawl keeps Scrapy from printing it again."""
    message = without_secrets(message, *urls)
    logger.error("farm: %s", message)
    return FarmStartError(message)


def make_jobdir(settings) -> str | None:
    """The JOBDIR, made if need be (Scrapy's ``job_dir``), None when unset; SettingError naming it
    when it cannot be made (a file on its path, no permission, a name too long)."""
    try:
        return job_dir(settings)
    except OSError as exc:
        raise SettingError(
            f"JOBDIR={settings['JOBDIR']!r} cannot be created: {exc.strerror or exc}: give a directory this "
            "user may create and write, or leave JOBDIR unset"
        ) from None


def require_farm_scheduler(settings) -> None:
    """A farm spider's pages go through farm's scheduler, whose ``open`` starts the state writer,
    the DB thread and the backend: under any other SCHEDULER the crawl would claim keywords and
    never write them, so it does not start."""
    setting = settings.get("SCHEDULER")
    try:
        scheduler = load_object(setting) if isinstance(setting, str) else setting
    except (ImportError, ValueError, NameError) as exc:
        raise start_failed(f"SCHEDULER={setting!r} cannot be loaded: {exc}") from None
    names = {f"{cls.__module__}.{cls.__qualname__}" for cls in getattr(scheduler, "__mro__", ())}
    if FARM_SCHEDULER not in names:
        raise start_failed(
            f"SCHEDULER={setting!r} is not farm's: a farm spider needs {FARM_SCHEDULER} or a subclass "
            f"(the add-on, farm.addon.FarmAddon, sets it; a project setting overrides it)"
        )


def open_jobdir(crawler, store, crawler_id):
    """JOBDIR set: the crawl's lock on it (farm.crawl.backends.joblock: a JOBDIR another crawl holds is refused here,
    before its checkpoint is read), its checkpoint (farm.crawl.backends.checkpoint), and why the crawl must not run,
    if so."""
    try:
        jobdir = make_jobdir(crawler.settings)
    except SettingError as exc:  # a crawl not started by farm's `scrapy crawl`, which checks it first
        raise start_failed(str(exc)) from None
    if not jobdir:
        return None, None, None
    try:
        lock = JobdirLock.take(jobdir)
    except JobdirInUse as exc:
        raise start_failed(str(exc)) from None
    except OSError as exc:
        raise start_failed(f"JOBDIR={jobdir}: the checkpoint cannot be kept there: {exc}") from None
    try:
        checkpoint = open_checkpoint(jobdir, crawler.spidercls.name, store.today().isoformat(), crawler_id)
        lock.note(checkpoint.crawler_id)
        return lock, checkpoint, None
    except OtherSpider as exc:
        logger.error("farm: %s", exc)  # the crawl closes at open, before it claims anything
        lock.note(crawler_id)
        return lock, None, str(exc)
    except (OSError, sqlite3.Error) as exc:  # not writable, disk full: a setting to fix
        lock.release()
        raise start_failed(f"JOBDIR={jobdir}: the checkpoint cannot be kept there: {exc}") from None
    except BaseException:
        lock.release()
        raise


def plain_backend(crawler) -> LocalBackend:
    """The backend of a spider not of farm's: Scrapy's scheduler queues, JOBDIR and all."""
    return LocalBackend.from_crawler(crawler)


def redis_backend(crawler, parts, redis_url: str, rate, block_delays, resuming):
    """This worker's part in the work shared through Redis: the backend, the shared pace, and how
    to make the proxy pool whose quarantine every worker shares."""
    from farm.crawl.backends.redis.backend import RedisBackend
    from farm.crawl.backends.redis.dupefilter import DayDupeFilter
    from farm.crawl.backends.redis.link import RedisLink
    from farm.crawl.backends.redis.proxies import SharedProxyPool
    from farm.crawl.backends.redis.queue import SharedQueue
    from farm.crawl.pace import SharedPace
    from farm.state.clock import utcnow

    settings = crawler.settings
    timeout = settings.getfloat("FARM_WORKER_TIMEOUT")
    if timeout <= 0:
        raise ValueError(f"FARM_WORKER_TIMEOUT must be positive, got {timeout}")
    try:
        link = RedisLink(redis_url, settings.getfloat("FARM_OUTAGE_GRACE"))
    except RuntimeError as exc:  # RedisUnreachable: the setting named, the password masked
        raise start_failed(str(exc), redis_url) from None
    key = f"{settings.get('FARM_REDIS_PREFIX')}:{parts.site}"
    dupefilter = DayDupeFilter(link.server, f"{key}:seen", parts.store.tz, utcnow)
    queue = SharedQueue(link.server, crawler.spider, key, parts.crawler_id, dupefilter)
    pace = SharedPace(rate, *block_delays, link, queue)
    backend = RedisBackend(
        crawler,
        link,
        queue,
        parts.store,
        parts.registry,
        timeout,
        window=parts.window,
        pace=pace,
        wake=parts.wake,
        run_db=parts.run,
        on_lost=lambda reason: parts.close_crawl("farm_redis_error"),
        resuming=resuming,
    )

    def make_pool(proxies, seconds):
        return SharedProxyPool.for_crawl(crawler, proxies, seconds, backend.work)

    return backend, pace, make_pool
