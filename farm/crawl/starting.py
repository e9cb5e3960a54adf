"""What a farm crawl's start checks and opens, before its parts (farm.crawl.parts) are built
around them: the scheduler it runs under, its JOBDIR (the lock and the checkpoint) and the work
backend its pages wait in (FARM_WORK_BACKEND).

Each failure is a ``FarmStartError`` whose one line names the setting and what to do, logged
here once with no secret in it.
"""

import logging
import sqlite3

from scrapy.crawler import Crawler
from scrapy.settings import BaseSettings
from scrapy.utils.job import job_dir
from scrapy.utils.misc import build_from_crawler, load_object

from farm.crawl.backends.base import Crawl, WorkBackend
from farm.crawl.backends.checkpoint import Checkpoint, open_checkpoint
from farm.crawl.backends.joblock import JobdirLock
from farm.crawl.backends.local import LocalBackend
from farm.display import without_secrets
from farm.errors import FarmStartError, JobdirInUse, OtherSpider, SettingError
from farm.state.store import KeywordStore

logger = logging.getLogger(__name__)

# The scheduler whose ``open`` starts the crawl's parts (named, not imported: it imports the parts)
FARM_SCHEDULER = "farm.crawl.scheduler.FarmScheduler"


def start_failed(message: str, *urls: str) -> FarmStartError:
    """The error to raise, logged first in one line, with no secret of ``urls`` (the settings it
    may quote) in it; farm.commands.crawl keeps Scrapy from printing it again."""
    message = without_secrets(message, *urls)
    logger.error("farm: %s", message)
    return FarmStartError(message)


def make_jobdir(settings: BaseSettings) -> str | None:
    """The JOBDIR, made if need be (Scrapy's ``job_dir``), None when unset; SettingError naming it
    when it cannot be made (a file on its path, no permission, a name too long)."""
    try:
        return job_dir(settings)
    except OSError as exc:
        raise SettingError(
            f"JOBDIR={settings['JOBDIR']!r} cannot be created: {exc.strerror or exc}: give a directory this "
            "user may create and write, or leave JOBDIR unset"
        ) from None


def require_farm_scheduler(settings: BaseSettings) -> None:
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


def open_jobdir(
    crawler: Crawler, store: KeywordStore, crawler_id: str
) -> tuple[JobdirLock | None, Checkpoint | None, str | None]:
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


def build_backend(crawler: Crawler, crawl: Crawl | None = None) -> WorkBackend:
    """The crawl's work backend, of the class FARM_WORK_BACKEND names, built by its ``from_crawler``
    (``crawl``: the parts of a farm crawl; None for a spider not of farm's, which gets the local one)."""
    if crawl is None:
        return LocalBackend.from_crawler(crawler)
    path = crawl.config.work_backend
    try:
        backend_cls = load_object(path)
    except (ImportError, ValueError, NameError, AttributeError) as exc:
        raise start_failed(f"FARM_WORK_BACKEND={path!r} cannot be loaded: {exc}") from None
    if not (isinstance(backend_cls, type) and issubclass(backend_cls, WorkBackend)):
        raise start_failed(f"FARM_WORK_BACKEND={path!r} is not a farm.crawl.backends.base.WorkBackend")
    try:
        return build_from_crawler(backend_cls, crawler, crawl)
    except FarmStartError as exc:
        raise start_failed(str(exc)) from None
