"""The start requests of a shared-frontier run, made by one process of the run."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Self

from crawler.cache import peek_cache
from crawler.frontier import Frontier

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)


class StartOncePerRun:
    """Spider middleware (``SPIDER_MIDDLEWARES``, set by the add-on with
    ``FRONTIER_ENABLED``): the spider's ``start()`` (start URLs, robots.txt and sitemap
    discovery) runs in the first process of the run to ask (an atomic ``SET NX`` on
    ``frontier:{run}:started``); the other processes start with nothing and take their
    requests from the run's queue. The spider keeps its own ``async def start()``.

    With the revisit schedule (``REVISIT_ENABLED``), the spider reads the sitemaps
    before it makes any page request: the lastmods they list are published to the run
    (:class:`crawler.frontier.revisit.SharedRevisit`) before the first request leaves
    this process, so the process that takes a page from the queue knows its lastmod."""

    def __init__(self, frontier: Frontier, crawler: Crawler | None = None) -> None:
        self.frontier = frontier
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(Frontier.from_crawler(crawler), crawler)

    async def process_start(self, start: AsyncIterator[Any]) -> AsyncIterator[Any]:
        if not self.frontier.claim_start():
            logger.info(
                "Run %(run)s: the start requests were made by another process; taking requests from the run's queue",
                {"run": self.frontier.run},
            )
            return
        logger.info("Run %(run)s: this process makes the start requests", {"run": self.frontier.run})
        published: dict[str, str] | None = None
        async for item in start:
            if published is None:
                published = self._publish_lastmods({})
            yield item
        self._publish_lastmods(published or {})

    def _publish_lastmods(self, published: dict[str, str]) -> dict[str, str]:
        """The lastmods the spider noted and the run was not given yet, published;
        what the run now has."""
        cache = peek_cache(self.crawler) if self.crawler is not None else None
        if cache is None or cache.run.revisit.share is None:
            return published
        lastmods = cache.run.revisit.lastmods
        new = {key: value for key, value in lastmods.items() if published.get(key) != value}
        cache.run.revisit.share.publish_lastmods(new)
        return {**published, **new}
