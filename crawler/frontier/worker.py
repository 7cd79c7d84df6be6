"""A crawl process's part in a shared-frontier run: its lease, when it may close, its outcome."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Self

from scrapy import signals
from scrapy.exceptions import CloseSpider, DontCloseSpider
from scrapy.utils.asyncio import call_later, create_looping_call
from scrapy.utils.defer import deferred_from_coro

from crawler import signals as crawler_signals
from crawler.cache import peek_cache
from crawler.config import typed
from crawler.frontier import FRONTIER_LOST, NO_REQUEST, PART_OF_RUN, Frontier
from crawler.frontier.revisit import SharedRevisit
from crawler.frontier.runpart import RunPart, broken_link_member, counted, out_of_scope, write_part

if TYPE_CHECKING:
    from collections.abc import Callable

    from scrapy.crawler import Crawler

    from crawler.cache import Cache
    from crawler.cache.ports import PageQueryStore
    from crawler.stages import StageRun

logger = logging.getLogger(__name__)

#: seconds between two looks at the run's queue (Scrapy's engine: 5 s when idle)
POLL_SECONDS = 0.25


class FrontierWorker:
    """Extension (``EXTENSIONS``, set by the add-on with ``FRONTIER_ENABLED``): this
    process as a worker of the run ``FRONTIER_RUN``.

    It registers with a lease it renews, so a worker killed with -9 stops keeping the
    others open once its lease expires. On ``spider_idle`` the spider closes only when the
    run's queue is empty and no live worker has a request in flight; a popped request
    counts until then, so the count may overstate, never understate. Every 0.25 s it pokes
    the engine (``_slot.nextcall``, the one private name used), which would otherwise look
    at its scheduler only every 5 s. On close it writes its part of the run
    (:mod:`crawler.frontier.runpart`). A failed Redis call loses the frontier
    (``frontier_lost``, the run partial) and Redis is not called again. See docs/scaling.md.
    """

    def __init__(self, crawler: Crawler, frontier: Frontier) -> None:
        self.crawler = crawler
        self.frontier = frontier
        frontier.on_lost = self.frontier_lost
        #: makes the looping calls at the spider's open, on the crawl's reactor or event
        #: loop (Scrapy's create_looping_call; made earlier, Twisted's LoopingCall would
        #: install Twisted's default reactor where none runs yet)
        self.looping: Callable[[Callable[[], None]], Any] = create_looping_call
        self.renewal: Any = None
        self.poll: Any = None
        self.joined = False
        self.outcome: str | None = None
        #: Scrapy's finish reason, at the spider's close
        self.reason: str | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        worker = cls(crawler, Frontier.from_crawler(crawler))
        crawler.signals.connect(worker.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(worker.spider_idle, signal=signals.spider_idle)
        crawler.signals.connect(worker.spider_closed, signal=signals.spider_closed)
        crawler.signals.connect(worker.engine_stopped, signal=signals.engine_stopped)
        crawler.signals.connect(worker.run_recorded, signal=crawler_signals.run_recorded)
        return worker

    def spider_opened(self) -> None:
        cache = peek_cache(self.crawler)
        if cache is not None and typed(self.crawler.settings).getbool("REVISIT_ENABLED"):
            # before any request: the revisit schedule decides as the run does
            cache.run.revisit.share = SharedRevisit(self.frontier)
        self.frontier.call("registering this worker", self.frontier.register)
        self.joined = True
        self.renewal = self.looping(self.renew)
        self.poll = self.looping(self.nudge)
        self.renewal.start(self.frontier.lease_seconds / 3, now=False)
        self.poll.start(POLL_SECONDS, now=False)
        logger.info(
            "Run %(run)s: worker %(worker)s joined (lease %(lease)s s)",
            {"run": self.frontier.run, "worker": self.frontier.worker, "lease": self.frontier.lease_seconds},
        )

    def renew(self) -> None:
        self.frontier.call("renewing this worker's lease", self.frontier.renew)
        if self.frontier.lost is not None:
            self._inc("frontier_worker/lease_renewal_failed")

    def spider_idle(self) -> None:
        self.frontier.call("settling this worker's requests", self.frontier.settle)
        drained = self.frontier.call("reading the run's state", self.frontier.drained, False)
        if self.frontier.lost is not None:
            raise CloseSpider(FRONTIER_LOST)
        if not drained:
            raise DontCloseSpider
        self._mark_incomplete(PART_OF_RUN)
        if not self._stat("frontier/requests_taken"):
            self._mark_incomplete(NO_REQUEST)
        logger.info("Run %(run)s: the frontier is empty, this process closes", {"run": self.frontier.run})

    def frontier_lost(self, message: str) -> None:
        """The run's Redis failed (:attr:`Frontier.on_lost`): the run is partial and has
        failed (the exit status is 1), and the crawl stops (``frontier_lost``)."""
        self._inc("frontier_worker/redis_error")
        self._stop(self.renewal)
        cache = peek_cache(self.crawler)
        if cache is not None:
            cache.run.mark_incomplete(message)
            cache.run.failed = cache.run.failed or message
        engine = self.crawler.engine if self.crawler.crawling else None
        if engine is None or engine.spider is None or self.reason is not None:
            return

        def stop() -> None:
            if engine.spider is not None and self.reason is None:
                deferred_from_coro(engine.close_spider_async(reason=FRONTIER_LOST))

        # not awaited here: the caller (the scheduler, a middleware) is part of what closing waits for
        call_later(0, stop)

    def nudge(self) -> None:
        """Ask the engine to take queued requests, or to find itself idle, now."""
        slot = getattr(self.crawler.engine, "_slot", None)
        nextcall = getattr(slot, "nextcall", None)
        if nextcall is not None:
            nextcall.schedule()

    def spider_closed(self, reason: str) -> None:
        self._stop(self.poll)
        # the lease is renewed until the outcome is recorded: while the pages are
        # committed and the part written, the run's processing must wait for this one
        self.reason = reason

    def run_recorded(self, cache: Cache, run: StageRun) -> None:
        """Every page of this process is committed to the store: its part of the run
        (pages, gone, domains, forced, reasons, what its spider's scope leaves out,
        its counts) goes to Redis, then its outcome, ``finished``. The run's processing
        starts only when every process has one, so it finds all of them."""
        if self.frontier.lost is not None:
            return  # nothing more is asked of Redis: the lease expires, the run is partial
        state = cache.run
        scope_out: set[str] = set()
        if run.in_scope is not None:
            store: PageQueryStore = cache.store  # all the worker asks of the store
            for domain in sorted(state.domains):
                urls = (record.get("url", "") for _, record in store.query_pages(domain=domain))
                scope_out |= out_of_scope(urls, run.in_scope)
        # how this process closed is its outcome's; sharing the run is no gap
        shared = (PART_OF_RUN, NO_REQUEST)
        reasons = {r for r in run.reasons if r not in shared and not r.startswith("finish reason")}
        reasons.update(self.frontier.errors)  # a request may have been lost
        part = RunPart(
            pages=set(state.seen),
            gone=set(state.gone),
            domains=set(state.domains),
            forced=set(state.forced),
            reasons=reasons,
            out_of_scope=scope_out,
            counts=counted(self.crawler.stats.get_stats() if self.crawler.stats is not None else {}),
            revisit_skipped=set(state.revisit.skipped),
            revisit_sampled=set(state.revisit.sampled),
            revisit_oldest={state.revisit.oldest_verified} if state.revisit.oldest_verified else set(),
            revisit_tally=state.revisit.tally(),
            broken_links={broken_link_member(link) for link in self._broken_links()},
        )
        self.frontier.call(
            "writing this process's part of the run", lambda: write_part(self.frontier.server, self.frontier.keys, part)
        )
        if self.frontier.lost is not None:
            return  # its outcome stays unrecorded: the lease expires, the run is partial
        self.outcome = "finished"
        self._stop(self.renewal)
        reason = self.reason or "finished"
        self.frontier.call("recording this process's outcome", lambda: self.frontier.finish("finished", reason))

    def _broken_links(self) -> list[dict[str, Any]]:
        """The broken links this process's spider listed (the docs spider's; none for another)."""
        links = getattr(getattr(self.crawler, "spider", None), "broken_links", None)
        listed = getattr(links, "listed", None)
        return list(listed()) if callable(listed) else []

    def engine_stopped(self) -> None:
        self._stop(self.poll)
        self._stop(self.renewal)
        cache = peek_cache(self.crawler)
        if not self.joined:
            return
        if self.frontier.lost is not None:
            return
        if self.outcome is None or (cache is not None and cache.failed is not None):
            reason = cache.failed if cache is not None and cache.failed else "its pages were not all recorded"
            self.frontier.call("recording this process's outcome", lambda: self.frontier.finish("failed", reason))

    def _mark_incomplete(self, reason: str) -> None:
        cache = peek_cache(self.crawler)
        if cache is not None:
            cache.run.mark_incomplete(reason)

    @staticmethod
    def _stop(loop: Any) -> None:
        if loop is not None and loop.running:
            loop.stop()

    def _stat(self, name: str) -> int:
        return int(self.crawler.stats.get_value(name, 0)) if self.crawler.stats is not None else 0

    def _inc(self, stat: str) -> None:
        if self.crawler.stats is not None:
            self.crawler.stats.inc_value(stat)
