"""Progress of the fetching: requests done of those known so far, rate and time left.

Replaces Scrapy's ``LogStats`` (``Crawled 120 pages (at 35 pages/min), scraped 118
items``), which says neither how many are known nor how long is left.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.exceptions import NotConfigured
from scrapy.utils.asyncio import create_looping_call

from crawler.support.plural import plural

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.utils.asyncio import AsyncioLoopingCall
    from twisted.internet.task import LoopingCall

logger = logging.getLogger(__name__)


def progress_line(done: int, known: int, per_minute: float, recorded: int, failed: int, shown: int = 0) -> str:
    """One progress line. ``known`` grows as links are found, so the time left is the
    time for the requests known now; the share never goes below ``shown`` (the last
    one said): links found make the work grow, they do not undo what was done.

    >>> progress_line(120, 450, 60.0, 118, 2)
    'Fetched 120 of 450 known requests (26%), 60/min, about 6 min left for those; 118 pages recorded, 2 failed'
    >>> progress_line(0, 3, 0.0, 0, 0)
    'Fetched 0 of 3 known requests (0%); 0 pages recorded'
    >>> progress_line(93, 225, 0.0, 90, 0, shown=52)
    'Fetched 93 of 225 known requests (52%); 90 pages recorded'
    """
    line = f"Fetched {done:,} of {known:,} known requests ({shown_share(done, known, shown)}%)"
    if per_minute > 0:
        left = (known - done) / per_minute
        when = f"about {left:.0f} min" if left >= 1 else "under a minute"
        line += f", {per_minute:,.0f}/min, {when} left for those"
    line += f"; {plural(recorded, 'page', grouped=True)} recorded"
    if failed:
        line += f", {failed:,} failed"
    return line


def shown_share(done: int, known: int, shown: int = 0) -> int:
    """The share of the work done as the progress line says it: of the requests known
    now, never below the share said before, and under 100 until the crawl ends.

    >>> shown_share(93, 225), shown_share(93, 225, 52), shown_share(10, 10)
    (41, 52, 99)
    """
    share = 100 * done // known if known else 0
    return min(99, max(shown, share))


def counts(stats: dict[str, Any], in_flight: int) -> tuple[int, int, int, int]:
    """``(done, known, recorded, failed)`` from the crawl's stats. A process of a
    shared-frontier run also takes requests other processes queued: what it knows is
    what it queued or took, never fewer than it fetched.

    >>> counts({"scheduler/enqueued": 55, "scheduler/dequeued": 81, "pages/new": 80}, 0)
    (81, 81, 80, 0)

    The pages a sitemap listed that wait to be queued are known too:

    >>> counts({"scheduler/enqueued": 1000, "scheduler/dequeued": 900, "docs/sitemap_urls_waiting": 49000}, 10)
    (890, 50000, 0, 0)
    """
    done = max(0, int(stats.get("scheduler/dequeued", 0)) - in_flight)
    known = max(int(stats.get("scheduler/enqueued", 0)), int(stats.get("scheduler/dequeued", 0)))
    known += int(stats.get("docs/sitemap_urls_waiting", 0))
    recorded = sum(int(stats.get(f"pages/{status}", 0)) for status in ("new", "changed", "unchanged"))
    return done, known, recorded, int(stats.get("docs/failed_pages", 0))


class CrawlProgress:
    """Every ``LOGSTATS_INTERVAL`` seconds (Scrapy's setting, 0: never) while fetching,
    a line from the crawl's stats: requests done of those scheduled so far, the rate
    over the last interval, the time left at that rate, pages recorded and failed."""

    def __init__(self, crawler: Crawler, interval: float) -> None:
        self.crawler = crawler
        self.interval = interval
        self.previous = 0
        #: the share of the work the last line said (the next never says less)
        self.shown = 0
        self.task: AsyncioLoopingCall | LoopingCall | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> CrawlProgress:
        interval = crawler.settings.getfloat("LOGSTATS_INTERVAL")
        if not interval:
            raise NotConfigured
        extension = cls(crawler, interval)
        crawler.signals.connect(extension.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(extension.spider_closed, signal=signals.spider_closed)
        return extension

    def spider_opened(self) -> None:
        self.task = create_looping_call(self.log)
        self.task.start(self.interval, now=False)

    def counts(self) -> tuple[int, int, int, int]:
        """``(done, known, recorded, failed)`` from the stats."""
        assert self.crawler.stats is not None
        engine = self.crawler.engine
        in_flight = len(engine.downloader.active) if engine is not None else 0
        return counts(self.crawler.stats.get_stats(), in_flight)

    def log(self) -> None:
        done, known, recorded, failed = self.counts()
        per_minute = (done - self.previous) * 60.0 / self.interval
        self.previous = done
        logger.info("%(line)s", {"line": progress_line(done, known, per_minute, recorded, failed, self.shown)})
        self.shown = shown_share(done, known, self.shown)

    def spider_closed(self) -> None:
        if self.task is not None and self.task.running:
            self.task.stop()
