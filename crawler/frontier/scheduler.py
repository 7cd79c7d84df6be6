"""The scheduler of a shared-frontier crawl: scrapy-redis's, adapted to Scrapy 2.19 and to runs."""

from __future__ import annotations

import logging
from collections import deque
from typing import TYPE_CHECKING, Any, Self

from redis.exceptions import RedisError
from scrapy.utils.misc import build_from_crawler, load_object
from scrapy_redis.scheduler import Scheduler as RedisScheduler

from crawler.frontier import Frontier

if TYPE_CHECKING:
    from scrapy import Request, Spider
    from scrapy.crawler import Crawler
    from scrapy.dupefilters import BaseDupeFilter
    from scrapy.statscollectors import StatsCollector

logger = logging.getLogger(__name__)

QUEUE_CLASS = "scrapy_redis.queue.PriorityQueue"


class FrontierScheduler(RedisScheduler):  # type: ignore[misc]
    """scrapy-redis's ``Scheduler`` with its ``PriorityQueue`` and pickle serialization,
    on the run's keys (``SCHEDULER``, set by the add-on with ``FRONTIER_ENABLED``).

    Only what scrapy-redis 0.9.1 gets wrong on Scrapy 2.19 is changed: the duplicate
    filter is built with the crawler and opened/closed; keys are the run's
    (``frontier:{FRONTIER_RUN}:...``), shared and never deleted by one process; a request
    is popped and counted in flight in one Lua step, so a peer never sees the queue empty
    while a request is nowhere; an unpicklable request stays in this process; a Redis
    failure loses the frontier (:meth:`Frontier.failed`) instead of erroring for ever in
    the idle check. ``RedisSpider`` is not used: the spider keeps its own ``start()``
    (:class:`crawler.frontier.start.StartOncePerRun`). See docs/scaling.md.
    """

    def __init__(self, frontier: Frontier, dupefilter: BaseDupeFilter, stats: StatsCollector | None = None) -> None:
        super().__init__(
            server=frontier.server,
            persist=True,
            queue_key=frontier.keys.requests,
            queue_cls=QUEUE_CLASS,
            dupefilter=dupefilter,
        )
        self.frontier = frontier
        self.stats = stats
        #: requests kept in this process: those pickle cannot serialize
        self.local: deque[Request] = deque()

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        frontier = Frontier.from_crawler(crawler)
        dupefilter = build_from_crawler(load_object(crawler.settings["DUPEFILTER_CLASS"]), crawler)
        return cls(frontier, dupefilter, crawler.stats)

    def open(self, spider: Spider) -> Any:
        self.spider = spider
        self.queue = load_object(self.queue_cls)(
            server=self.server, spider=spider, key=self.queue_key, serializer=self.serializer
        )
        if len(self.queue):
            logger.info(
                "Run %(run)s: %(count)d requests queued by other processes",
                {"run": self.frontier.run, "count": len(self.queue)},
            )
        return self.df.open()

    def close(self, reason: str) -> Any:
        return self.df.close(reason)  # the queue and the seen set are the run's: kept

    def __len__(self) -> int:
        return len(self.local) + self._queued()

    def has_pending_requests(self) -> bool:
        return self.frontier.lost is None and (bool(self.local) or self._queued() > 0)

    def _queued(self) -> int:
        """The length of the run's queue (0 once the frontier is lost)."""
        return int(self.frontier.call("reading the length of the run's queue", lambda: len(self.queue), 0))

    def enqueue_request(self, request: Request) -> bool:
        if not request.dont_filter and self.df.request_seen(request):
            self.df.log(request, self.spider)
            return False
        if self.frontier.lost is not None:
            return False  # the crawl is stopping; the run is partial
        try:
            self.queue.push(request)
        except RedisError as exc:
            self.frontier.failed("queueing a request", exc)
            return False
        except Exception as exc:  # noqa: BLE001 - pickle's errors are of many kinds
            self.local.append(request)
            self._inc("frontier/unserializable")
            logger.debug("Request %(request)s kept in this process: %(exc)s", {"request": request, "exc": exc})
        else:
            self._inc("scheduler/enqueued/redis")
        self._inc("scheduler/enqueued")
        return True

    def next_request(self) -> Request | None:
        if self.local:
            request: Request | None = self.local.popleft()
        else:
            request = self._pop()
        if request is not None:
            self._inc("scheduler/dequeued")
        return request

    def _pop(self) -> Request | None:
        data = self.frontier.pop()
        if data is None:
            return None
        self._inc("frontier/requests_taken")
        request: Request = self.queue._decode_request(data)
        return request

    def _inc(self, stat: str) -> None:
        if self.stats is not None:
            self.stats.inc_value(stat)
