"""``scrapy crawl``, with a plain message instead of a traceback when a crawl cannot start.

Scrapy's own command, unchanged but for one thing: a crawl refused at start (the cache
is locked by another crawl, a cache file is unreadable, a setting or a spider argument
is wrong, the browser that PLAYWRIGHT_ENABLED needs is missing) logs one clear line
and exits with status 1, touching nothing. A crawl whose cache writes failed (a
damaged file, a full disk) stops and exits with status 1 too.
"""

from __future__ import annotations

import asyncio
import logging
import signal
from typing import TYPE_CHECKING, Any

from scrapy.commands.crawl import Command as ScrapyCrawlCommand
from twisted.internet.defer import Deferred

from crawler.addons.playwright import ChromiumNotFoundError
from crawler.cache import CacheCorruptError, CacheLockedError, peek_cache
from crawler.vectors import VectorStoreError

if TYPE_CHECKING:
    import argparse

    from twisted.python.failure import Failure

logger = logging.getLogger(__name__)

#: errors that are the user's input, not a bug: no traceback
PLAIN_ERRORS = (
    CacheLockedError,
    CacheCorruptError,
    VectorStoreError,
    ChromiumNotFoundError,
    ValueError,
    TypeError,
    ImportError,
    NameError,
)


#: Scrapy's start-up listings (add-ons, components, overridden settings): some 50
#: lines before anything happens, shown with LOG_LEVEL=DEBUG only (LOG_VERSIONS is
#: empty in the project's settings: `scrapy version -v` lists the versions)
START_UP_LISTINGS = {
    "scrapy.addons": ("Enabled addons:",),
    "scrapy.middleware": ("Enabled ",),
    "scrapy.crawler": ("Overridden settings:",),
}


class StartUpListings(logging.Filter):
    """Drops the INFO start-up listing records of one of Scrapy's loggers."""

    def __init__(self, prefixes: tuple[str, ...]) -> None:
        super().__init__()
        self.prefixes = prefixes

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.levelno == logging.INFO and str(record.msg).startswith(self.prefixes))


def quiet_start_up(level: str | int) -> None:
    """Leave Scrapy's start-up listings out of the log unless ``level`` is DEBUG."""
    if logging.getLevelName(level) == logging.DEBUG or level == logging.DEBUG:
        return
    for name, prefixes in START_UP_LISTINGS.items():
        target = logging.getLogger(name)
        if not any(isinstance(f, StartUpListings) for f in target.filters):
            target.addFilter(StartUpListings(prefixes))


def log_start_error(exc: BaseException) -> None:
    if isinstance(exc, PLAIN_ERRORS):
        logger.error("Crawl not started: %(error)s", {"error": exc})
    else:
        logger.error("Crawl not started", exc_info=exc)


class Command(ScrapyCrawlCommand):
    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        if len(args) != 1:
            super().run(args, opts)  # Scrapy's usage errors
            return
        assert self.crawler_process
        assert self.settings is not None
        quiet_start_up(self.settings.get("LOG_LEVEL", "DEBUG"))
        crawler = self._create_crawler(args[0])
        started: Any = self.crawler_process.crawl(crawler, **opts.spargs)
        if isinstance(started, asyncio.Future):
            started.add_done_callback(_task_done)
        elif isinstance(started, Deferred):
            started.addErrback(_deferred_failed)
        self.crawler_process.start()
        if self.crawler_process.bootstrap_failed:
            self.exitcode = 1
        cache = peek_cache(crawler)
        if cache is not None and (cache.run.failed or cache.failed is not None):
            # no page could be crawled, or writing the cache failed (the crawl stopped):
            # the log and the run report say why
            self.exitcode = 1
        if cache is not None and cache.run.interrupted:
            # the closing stage was interrupted: the shell's status of a process the
            # signal ended (130 for SIGINT, 143 for SIGTERM), never a silent 0
            self.exitcode = 128 + signal.Signals[cache.run.interrupted].value


def _task_done(task: asyncio.Future[Any]) -> None:
    if not task.cancelled() and (exc := task.exception()) is not None:
        log_start_error(exc)


def _deferred_failed(failure: Failure) -> None:
    if failure.value is not None:
        log_start_error(failure.value)
