"""A crawler run from a command (``scrapy crawl``, and ``scrapy process``'s crawl of no
page) to its exit status, with a plain message instead of a traceback when it cannot
start.

A crawl refused at start (the cache is locked by another crawl, a cache file is
unreadable, a setting or a spider argument is wrong, the browser that
PLAYWRIGHT_ENABLED needs is missing) logs one clear line and exits with status 1,
touching nothing. A crawl whose cache writes failed (a damaged file, a full disk) stops
and exits with status 1 too. A robots.txt that could not be downloaded is one line, not
a traceback (at LOG_LEVEL=DEBUG, both).
"""

from __future__ import annotations

import asyncio
import logging
import signal
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from scrapy.exceptions import (
    CannotResolveHostError,
    DownloadConnectionRefusedError,
    DownloadFailedError,
    DownloadTimeoutError,
    IgnoreRequest,
    ResponseDataLossError,
)
from twisted.internet.defer import Deferred
from twisted.internet.error import ConnectError, ConnectionDone, ConnectionLost

from crawler.addons.playwright import ChromiumNotFoundError
from crawler.cache import CacheCorruptError, CacheLockedError, CacheNotOpenError, peek_cache
from crawler.config import install_hint
from crawler.frontier import FrontierError
from crawler.vectors import VectorStoreError

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from twisted.python.failure import Failure

logger = logging.getLogger(__name__)

#: errors that are the user's input, not a bug: no traceback
PLAIN_ERRORS = (
    CacheLockedError,
    CacheCorruptError,
    CacheNotOpenError,
    VectorStoreError,
    ChromiumNotFoundError,
    FrontierError,
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


class OneLineRobotsFailures(logging.Filter):
    """Scrapy's RobotsTxtMiddleware logs a robots.txt it could not download (a timeout, a
    refused connection, an unknown host) as an error with the download's whole traceback,
    some 60 lines of Scrapy's and Twisted's frames. This keeps the error's one line and
    says what follows; any other exception keeps its traceback."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if str(record.msg).startswith("Error downloading") and isinstance(exc, NETWORK_ERRORS):
            record.msg = f"{record.msg} (robots.txt not read: the crawl goes on as if it allowed every page)"
            record.exc_info = None
            record.exc_text = None
        return True


#: what a server that does not answer raises in a download: the exceptions Scrapy's
#: RetryMiddleware retries by default (``RETRY_EXCEPTIONS``)
NETWORK_ERRORS: tuple[type[BaseException], ...] = (
    CannotResolveHostError,
    DownloadConnectionRefusedError,
    DownloadFailedError,
    DownloadTimeoutError,
    ResponseDataLossError,
    ConnectionDone,
    ConnectError,
    ConnectionLost,
    OSError,
)


#: what a host that cannot be reached raises, whatever is asked of it: its cause is the
#: host, not the page (a refused connection, a name that does not resolve, no route)
HOST_ERRORS: tuple[type[BaseException], ...] = (DownloadConnectionRefusedError, CannotResolveHostError, ConnectError)


class OneLinePerCause(logging.Filter):
    """A host that cannot be reached fails every request to it: robots.txt, the start
    page, the sitemap, each said by Scrapy's retry and robots.txt middlewares and by the
    spider (seven lines for one refused connection). This keeps the first line of each
    cause (the host and the error's kind) and says that the others are not logged;
    and it leaves out Scrapy's "Gave up retrying" line for a page the docs spider says
    failed itself (its errback), and the spider's line for a robots.txt whose download
    failed earlier (said then).

    Installed on the loggers that say such failures (:func:`one_line_per_cause`)."""

    def __init__(self) -> None:
        super().__init__()
        self.said: set[tuple[str, str]] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.WARNING:  # (Scrapy's "Retrying ..." lines: DEBUG)
            return True
        args = record.args if isinstance(record.args, dict) else {}
        request = args.get("request")
        url = getattr(request, "url", None) or args.get("url")
        error = next(
            (args[key] for key in ("reason", "f_exception", "exception") if isinstance(args.get(key), BaseException)),
            record.exc_info[1] if record.exc_info else None,
        )
        if not isinstance(url, str) or error is None:
            return True
        if isinstance(error, HOST_ERRORS):
            host = urlsplit(url).netloc
            cause = (host, type(error).__name__)
            if cause in self.said:
                return False
            self.said.add(cause)
            record.msg = f"{record.msg} (other requests to {host.replace('%', '%%')} failing so are not logged)"
            return True
        if isinstance(error, IgnoreRequest) and "failed earlier in this crawl" in str(error):
            return False
        errback = getattr(request, "errback", None)
        spider_says = hasattr(getattr(errback, "__self__", None), "start_failures")  # PageFailures
        return not (str(record.msg).startswith("Gave up retrying") and spider_says)


#: the loggers that say a download failed: Scrapy's retry and robots.txt middlewares
#: (the spider's own logger is added by name)
FAILURE_LOGGERS = ("scrapy.downloadermiddlewares.retry", "scrapy.downloadermiddlewares.robotstxt")


def one_line_per_cause(spider_logger: str) -> OneLinePerCause:
    """Install one :class:`OneLinePerCause` on the loggers that say failed downloads."""
    found = OneLinePerCause()
    for name in (*FAILURE_LOGGERS, spider_logger):
        logging.getLogger(name).addFilter(found)
    return found


def quiet_start_up(level: str | int) -> None:
    """Leave Scrapy's start-up listings, and the traceback of a robots.txt that could
    not be downloaded, out of the log unless ``level`` is DEBUG."""
    if logging.getLevelName(level) == logging.DEBUG or level == logging.DEBUG:
        return
    for name, prefixes in START_UP_LISTINGS.items():
        target = logging.getLogger(name)
        if not any(isinstance(f, StartUpListings) for f in target.filters):
            target.addFilter(StartUpListings(prefixes))
    robots = logging.getLogger("scrapy.downloadermiddlewares.robotstxt")
    if not any(isinstance(f, OneLineRobotsFailures) for f in robots.filters):
        robots.addFilter(OneLineRobotsFailures())


class ShutdownSignal(logging.Filter):
    """Notes the signal of Scrapy's graceful shutdown ("Received SIGINT, shutting down
    gracefully"): a crawl stopped so while it fetches ends with finish reason
    ``shutdown``, which Scrapy's exit status (0) does not tell from a finished crawl."""

    def __init__(self) -> None:
        super().__init__()
        self.signame: str | None = None

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if self.signame is None and str(record.msg).startswith("Received %(signame)s") and isinstance(args, dict):
            name = args.get("signame")
            self.signame = name if name in ("SIGINT", "SIGTERM") else None
        return True


def run_crawler(process: Any, crawler: Crawler, what: str, **kwargs: Any) -> int:
    """Run ``crawler`` (a crawl, or ``scrapy process``'s crawl of no page) in
    ``process`` until it ends; its exit status. A start-up failure is one line
    (``{what} not started: ...``); the status says what the run report says: 1 when no
    page could be crawled or writing the cache failed, 128 + the signal when it was
    interrupted, while fetching or in the closing stages (130 for SIGINT, 143 for
    SIGTERM), never a silent 0."""

    def start_failed(exc: BaseException) -> None:
        if isinstance(exc, PLAIN_ERRORS):
            hint = install_hint(exc)  # (a bare import of an extra's module: the frontier's redis)
            logger.error("%(what)s not started: %(error)s%(hint)s", {"what": what, "error": exc, "hint": hint})
        else:
            logger.error("%(what)s not started", {"what": what}, exc_info=exc)

    def task_done(task: asyncio.Future[Any]) -> None:
        if not task.cancelled() and (exc := task.exception()) is not None:
            start_failed(exc)

    def deferred_failed(failure: Failure) -> None:
        if failure.value is not None:
            start_failed(failure.value)

    started: Any = process.crawl(crawler, **kwargs)
    if isinstance(started, asyncio.Future):
        started.add_done_callback(task_done)
    elif isinstance(started, Deferred):
        started.addErrback(deferred_failed)
    shutdown = ShutdownSignal()
    scrapy_log = logging.getLogger("scrapy.crawler")
    scrapy_log.addFilter(shutdown)
    spider_logger = str(getattr(crawler.spidercls, "name", "") or "")
    causes = one_line_per_cause(spider_logger)
    try:
        process.start()
    finally:
        scrapy_log.removeFilter(shutdown)
        for name in (*FAILURE_LOGGERS, spider_logger):
            logging.getLogger(name).removeFilter(causes)
    status = 1 if process.bootstrap_failed else 0
    cache = peek_cache(crawler)
    if cache is not None:
        cache.close()  # closed at engine_stopped; not sent when the crawl failed to start
    if cache is not None and (cache.run.failed or cache.failed is not None):
        status = 1  # the log and the run report say why
    if cache is not None and cache.run.interrupted:
        status = 128 + signal.Signals[cache.run.interrupted].value
    elif shutdown.signame is not None:  # Ctrl-C while fetching: the summary line says "shutdown"
        status = 128 + signal.Signals[shutdown.signame].value
    return status
