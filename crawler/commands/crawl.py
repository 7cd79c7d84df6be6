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
        if cache is not None and cache.failed is not None:
            self.exitcode = 1  # writing the cache failed: the crawl stopped, its report says why
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
