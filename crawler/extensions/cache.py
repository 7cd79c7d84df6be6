"""The one owner of the crawl's cache: :class:`CacheOwner`."""

from __future__ import annotations

import logging
import weakref
from typing import TYPE_CHECKING

from scrapy import signals
from scrapy.utils.asyncio import call_later
from scrapy.utils.defer import deferred_from_coro

from crawler.cache import Cache, own_cache, peek_cache
from crawler.config import typed

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)


class CacheOwner:
    """Opens the extracted-docs cache with the crawl and closes it with the crawl, as
    Scrapy's HttpCacheMiddleware owns its storage; every other component looks the
    same :class:`~crawler.cache.Cache` up (:func:`crawler.cache.cache_for`).

    It opens the store (``EXTRACTED_DOCS_STORE`` on ``EXTRACTED_DOCS_DIR``) and takes its
    writer lock when the crawl starts: built with the extensions, before the engine,
    its middlewares and pipelines, so that a cache another crawl holds, or one that
    cannot be read, stops the crawl before it starts, nothing in the store changed.
    (Not at ``spider_opened``: Scrapy logs what a signal handler raises and goes on.)
    It commits when the spider closes, before the closing stages (500) decide what is
    removed, so that a failed commit makes the run incomplete first; stops the crawl
    (``cache_write_failed``) when a write fails; and closes the store when the engine
    stops. ``IncrementalAddon`` installs it (``EXTENSIONS``, 400).
    """

    def __init__(self, cache: Cache) -> None:
        self.cache = cache
        #: the spider is closing: a failed write no longer stops the crawl
        self.closing = False
        self.crawler: Crawler | None = None
        # through a weak reference: the cache must not keep its owner alive (from_crawler)
        owner = weakref.ref(self)

        def write_failed(message: str) -> None:
            if (alive := owner()) is not None:
                alive.write_failed(message)

        cache.on_write_failed = write_failed

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> CacheOwner:
        if peek_cache(crawler) is not None:
            raise RuntimeError("The crawl's cache is open already: one CacheOwner per crawl")
        settings = typed(crawler.settings)
        cache = Cache.open(
            settings.get("EXTRACTED_DOCS_DIR"),
            settings.get("EXTRACTED_DOCS_STORE"),
            commit_every=settings.getint("EXTRACTED_DOCS_COMMIT_EVERY"),
            settings=crawler.settings,
        )
        try:
            own_cache(crawler, cache)
        except BaseException:
            cache.close()
            raise
        cache.stats = crawler.stats
        owner = cls(cache)
        owner.crawler = crawler
        # kept by the crawl's ExtensionManager; a crawl that fails to start after this (an
        # extension built later, the engine) sends no engine_stopped and drops its owner:
        # the cache is closed, its lock released, when the owner goes (weak connections:
        # pydispatch would keep an owner connected with weak=False, and its crawler, forever)
        weakref.finalize(owner, cache.close)
        crawler.signals.connect(owner.spider_closed, signal=signals.spider_closed)
        crawler.signals.connect(owner.engine_stopped, signal=signals.engine_stopped)
        logger.info("Using the cache in %(dir)s (run %(run)s)", {"dir": cache.store.location, "run": cache.run.run_id})
        return owner

    def spider_closed(self) -> None:
        self.closing = True
        self.cache.commit()

    def engine_stopped(self) -> None:
        self.cache.close()

    def write_failed(self, message: str) -> None:
        """A write failed (the cache said why): the spider is closed, unless it closes already."""
        engine = None if self.crawler is None else self.crawler.engine
        if self.closing or engine is None or engine.spider is None:
            return

        def stop() -> None:
            if not self.closing and engine.spider is not None:
                deferred_from_coro(engine.close_spider_async(reason="cache_write_failed"))

        # not awaited here: the caller (a pipeline, a middleware) is part of what closing waits for
        call_later(0, stop)
