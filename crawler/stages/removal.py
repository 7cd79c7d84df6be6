"""The removal stage: pages that are gone, and pages a complete crawl no longer reached."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from crawler.cache.records import STATUS_REMOVED, add_history, utcnow

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector

    from crawler.stages import PageView, StageRun

logger = logging.getLogger(__name__)


class RemovalStage:
    """Marks pages ``removed``: those that answered 404/410 this crawl and, after a
    complete crawl only, those of the crawled domains (and in the spider's scope) that
    the crawl no longer reached. It needs a crawl's evidence: ``scrapy process`` skips it.
    """

    name = "removal"
    needs_crawl = True

    def __init__(self, stats: StatsCollector) -> None:
        self.stats = stats
        self.removed = 0

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RemovalStage:
        assert crawler.stats is not None
        return cls(crawler.stats)

    def plan(self, run: StageRun) -> list[PageView]:
        cache = run.cache
        state = cache.run
        # a page seen this run is not gone, even if another spelling of its URL 404'd
        candidates = {url_hash for url_hash in state.gone if url_hash not in state.seen}
        if run.complete and state.domains:
            run.pages.load_all()
            candidates.update(key for key in run.pages.views if key not in state.seen)
        planned = []
        for url_hash in sorted(candidates):
            view = run.pages.get(url_hash)
            if view is None or view.record.get("status") == STATUS_REMOVED:
                continue
            reachable = view.record.get("domain") in state.domains and (
                run.in_scope is None or run.in_scope(view.record.get("url", ""))
            )
            if url_hash in state.gone or reachable:
                planned.append(view)
        if run.reasons:
            logger.info(
                "Incomplete crawl, no page marked removed for not being reached: %(r)s",
                {"r": "; ".join(run.reasons)},
            )
        self._run = run
        return planned

    async def run(self, plan: list[PageView]) -> None:
        state = self._run.cache.run
        now = utcnow()
        for view in plan:
            record: Any = view.record
            # a removal is a change: `scrapy cache ls --since` lists it
            record.update(status=STATUS_REMOVED, removed_at=now, last_changed=now, run_id=state.run_id)
            add_history(record, STATUS_REMOVED, now, reason="gone" if view.url_hash in state.gone else "not reached")
            view.changed()
            self.removed += 1
            self.stats.inc_value("removal/pages_removed")
            logger.info("Removed: %(url)s", {"url": record.get("url")})
        self._run.cache.wrote(len(plan))

    def report(self, report: dict[str, Any]) -> None:
        """``pages_removed`` is the run report's own (from ``removal/pages_removed``)."""
