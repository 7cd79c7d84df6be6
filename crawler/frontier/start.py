"""The start requests of a shared-frontier run, made by one process of the run."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Self

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
    requests from the run's queue. The spider keeps its own ``async def start()``."""

    def __init__(self, frontier: Frontier) -> None:
        self.frontier = frontier

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(Frontier.from_crawler(crawler))

    async def process_start(self, start: AsyncIterator[Any]) -> AsyncIterator[Any]:
        if not self.frontier.claim_start():
            logger.info(
                "Run %(run)s: the start requests were made by another process; taking requests from the run's queue",
                {"run": self.frontier.run},
            )
            return
        logger.info("Run %(run)s: this process makes the start requests", {"run": self.frontier.run})
        async for item in start:
            yield item
