"""``scrapy process``'s run: a crawl of no page (:class:`ProcessSpider`) whose closing
stages process the stored pages; with ``--run ID``, once for all the crawl processes of
a shared frontier's run, under a claim renewed while it runs."""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from typing import TYPE_CHECKING, Any, Self

from scrapy import Spider

from crawler import signals as crawler_signals
from crawler.cache import (
    CacheCorruptError,
    CacheLockedError,
    CacheMissingError,
    StoreSettingError,
    open_store,
    peek_cache,
)
from crawler.config import typed
from crawler.crawlcli import quiet_start_up, run_crawler
from crawler.identity import PageIdentity
from crawler.spiders.brokenlinks import BrokenLinks
from crawler.support.plural import plural
from crawler.support.secrets import mask_credentials

if TYPE_CHECKING:
    import argparse
    from collections.abc import AsyncIterator, Callable

    from scrapy.crawler import Crawler, CrawlerProcessBase
    from scrapy.settings import BaseSettings

    from crawler.frontier.runstate import RunState


logger = logging.getLogger(__name__)

#: the exit status of ``--run`` while the run's crawl processes still run (sysexits'
#: EX_TEMPFAIL: cron tries again later)
EX_TEMPFAIL = 75


class ClaimRenewal:
    """Renews the claim on a run's processing every third of its time, in a thread (the
    processing runs the reactor), until :meth:`stop`; a claim lost (the machine was
    stalled past its expiry) is said once. A failed renewal is tried again once, at the
    next third (the claim still holds then); failed twice, it is said once and no more
    tried: the claim expires."""

    #: renewals in a row that may fail before the claim is given up
    ATTEMPTS = 2

    def __init__(self, renew: Callable[[], bool]) -> None:
        from crawler.frontier.runpart import PROCESSING_CLAIM_SECONDS

        self.renew = renew
        self.every = PROCESSING_CLAIM_SECONDS / 3
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self.loop, name="run-claim", daemon=True)
        self.thread.start()

    def loop(self) -> None:
        failures = 0
        while not self.stopped.wait(self.every):
            try:
                held = self.renew()
            except Exception as exc:  # noqa: BLE001 - Redis away for a moment: tried once more
                failures += 1
                if failures < self.ATTEMPTS:
                    continue
                logger.error(
                    "Could not renew the claim on the run's processing (%(exc)s): it expires, another "
                    "processing may run it too",
                    {"exc": mask_credentials(str(exc))},
                )
                return
            failures = 0
            if not held:
                logger.error("The claim on the run's processing expired: another processing may run it too")
                return

    def stop(self) -> None:
        self.stopped.set()
        self.thread.join()


def choices(opts: argparse.Namespace) -> dict[str, Any]:
    """The run's choices (:mod:`crawler.choices`), given to its spider as a crawl's are."""
    return {"redo": ",".join(opts.redo), "dry_run": opts.dry_run}


class ProcessSpider(Spider):
    """Requests nothing: the crawl it stands for closes at once, and the closing
    stages run on the stored pages (``processing`` says which stages and domains)."""

    name = "process"

    def __init__(
        self,
        stages: list[str] | None = None,
        domains: list[str] | None = None,
        run: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.processing: dict[str, Any] = {"stages": list(stages or ()), "domains": list(domains or ())}
        #: a page's identity, for the run's broken links (one per page)
        self.identity = PageIdentity()
        if run is not None:  # --run: what the crawl processes of the run found (RunPart), and why it is partial
            self.processing.update(run)

    @classmethod
    def from_crawler(cls, crawler: Crawler, *args: Any, **kwargs: Any) -> Self:
        spider = super().from_crawler(crawler, *args, **kwargs)
        spider.identity = PageIdentity.from_crawler(crawler)
        crawler.signals.connect(spider.run_report, signal=crawler_signals.run_report)
        return spider

    def run_report(self, cache: Any, report: dict[str, Any]) -> None:
        """A run's report (``--run``) lists the broken links its crawl processes listed,
        one per page (by URL, as one process lists them)."""
        from crawler.frontier.runpart import RunPart

        part = self.processing.get("run")
        if isinstance(part, RunPart):
            links = BrokenLinks(key=self.identity.url_hash)
            for url, status, linked_from in part.broken_link_entries():
                links.note(url, status, linked_from)
            report["broken_links"] = links.listed()

    async def start(self) -> AsyncIterator[Any]:
        return
        yield  # an async generator that yields nothing


def process(crawler_process: CrawlerProcessBase, settings: BaseSettings, opts: argparse.Namespace) -> int:
    """The stages on the stored pages (or ``--run``'s): the exit status of a crawl."""
    if not cache_exists(settings):
        where = typed(settings).get("EXTRACTED_DOCS_DIR")
        logger.error("Processing not started: no cache in %(dir)s: run a crawl first", {"dir": where})
        return 1
    if opts.run:
        return process_run(crawler_process, settings, opts)
    quiet_start_up(settings.get("LOG_LEVEL", "DEBUG"))
    crawler = crawler_process.create_crawler(ProcessSpider)
    status = run_crawler(
        crawler_process, crawler, "Processing", stages=opts.stage, domains=opts.domain, **choices(opts)
    )
    # the cache never opened (locked, damaged): said by the start-up error, never a 0
    return 1 if peek_cache(crawler) is None else status


def process_run(crawler_process: CrawlerProcessBase, settings: BaseSettings, opts: argparse.Namespace) -> int:
    """``--run ID``: once every crawl process of the run has ended (finished or
    died), the stages once for the run; 75 (try again later) while they run."""
    from redis.exceptions import RedisError

    from crawler.frontier import FrontierError, connect, redis_url
    from crawler.frontier.runstate import RunState

    try:
        state = RunState(connect(redis_url()), opts.run)
    except (FrontierError, ValueError) as exc:
        logger.error("Processing not started: %(exc)s", {"exc": exc})
        return 1
    try:
        return process_state(crawler_process, settings, opts, state)
    except RedisError as exc:  # never retried: the run is processed again by the next call
        logger.error(
            "Run %(run)s: the frontier's Redis failed (%(exc)s); the run's processing stopped: run "
            "`scrapy process --run %(run)s` again when Redis answers",
            {"run": opts.run, "exc": f"{type(exc).__name__}: {mask_credentials(str(exc))}"},
        )
        return 1


def process_state(
    crawler_process: CrawlerProcessBase, settings: BaseSettings, opts: argparse.Namespace, state: RunState
) -> int:
    from crawler.frontier.runpart import claim_processing, renew_processing

    deadline = time.monotonic() + opts.wait

    def wait() -> bool:
        if time.monotonic() >= deadline:
            return False
        time.sleep(min(1.0, max(0.0, deadline - time.monotonic())))
        return True

    while not state.workers():  # (a processing started with the crawls: they join soon)
        if not wait():
            logger.error("Processing not started: no crawl process joined the run %(run)s", {"run": opts.run})
            return 1
    while running := sum(1 for w in state.workers() if w.state == "running"):
        if not wait():
            logger.error(
                "Run %(run)s is still crawling (%(n)s): try again when they end (--wait SECONDS)",
                {"run": opts.run, "n": plural(running, "process", "processes")},
            )
            return EX_TEMPFAIL
    owner = f"{socket.gethostname()}:{os.getpid()}"
    claimed, value = claim_processing(state.server, state.keys, owner)
    if claimed == "processed":
        logger.info("Run %(run)s: processed already (report %(report)s)", {"run": opts.run, "report": value})
        return 0
    if claimed == "held":
        logger.error(
            "Run %(run)s is being processed by %(holder)s: try again later", {"run": opts.run, "holder": value}
        )
        return EX_TEMPFAIL
    renewal = ClaimRenewal(lambda: renew_processing(state.server, state.keys, owner))
    status = 1
    try:
        status = process_claimed(crawler_process, settings, opts, state)
    finally:
        renewal.stop()
        recorded = record_processed(state, owner, opts.run, processed=status == 0)
    return status if recorded else 1


def process_claimed(
    crawler_process: CrawlerProcessBase, settings: BaseSettings, opts: argparse.Namespace, state: RunState
) -> int:
    """The stages once for the run whose processing this process claimed."""
    from crawler.frontier.runpart import read_run, run_gaps

    part = read_run(state.server, state.keys)
    reasons = run_gaps(state, part)
    if reasons:
        logger.warning(
            "Run %(run)s is partial, no page is marked removed for not being reached: %(why)s",
            {"run": opts.run, "why": "; ".join(reasons)},
        )
    quiet_start_up(settings.get("LOG_LEVEL", "DEBUG"))
    crawler = crawler_process.create_crawler(ProcessSpider)
    run = {"run": part, "run_id": opts.run, "reasons": reasons}
    status = run_crawler(crawler_process, crawler, "Processing", stages=opts.stage, run=run, **choices(opts))
    return 1 if peek_cache(crawler) is None else status


def record_processed(state: RunState, owner: str, run: str, *, processed: bool) -> bool:
    """Ends the claim on ``run`` in the frontier's Redis, ``processed`` or not (its
    report then has the run's id). False when recording a processed run failed (only
    Redis's record of it is missing); a failure for a run not processed is raised."""
    report_id = run if processed else None
    from redis.exceptions import RedisError

    from crawler.frontier.runpart import finish_processing

    try:
        finish_processing(state.server, state.keys, owner, report_id)
    except RedisError as exc:
        if report_id is None:
            raise
        logger.error(
            "Run %(run)s was processed (report %(report)s), but recording that in the frontier's Redis "
            "failed (%(exc)s): the next `scrapy process --run %(run)s` processes it again, from the cache "
            "(its extractions are cached)",
            {"run": run, "report": report_id, "exc": f"{type(exc).__name__}: {mask_credentials(str(exc))}"},
        )
        return False
    return True


def cache_exists(settings: BaseSettings) -> bool:
    """Whether ``EXTRACTED_DOCS_STORE`` has a cache to process (asked of the store,
    which never creates one here: a store without a directory too). Any other
    problem with it (a damaged file, a lock, a wrong setting) is said by the run's
    start-up, as for a crawl."""
    try:
        open_store(settings, readonly=True).close()
    except CacheMissingError:
        return False
    except (CacheCorruptError, CacheLockedError, StoreSettingError):
        pass  # there is a cache; what is wrong with it is said when the run starts
    return True
