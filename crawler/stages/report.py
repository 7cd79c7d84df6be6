"""The report stage: the run report, written last, and the run's summary line."""

from __future__ import annotations

import logging
import os
from collections import Counter
from typing import TYPE_CHECKING, Any

from crawler import signals as crawler_signals
from crawler.cache.errors import CacheStorageError
from crawler.cache.records import STATUS_CHANGED, STATUS_NEW, STATUS_REMOVED, STATUS_UNCHANGED
from crawler.cache.run_report import CHANGE_STATUSES, CHANGES_SAMPLE, change_record

if TYPE_CHECKING:
    from collections.abc import Iterator

    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector

    from crawler.cache.ports import ReportStore
    from crawler.cache.records import PageRecord
    from crawler.stages import StageRun

logger = logging.getLogger(__name__)


class ReportStage:
    """Writes the run report (``runs/<run id>.json``, ``runs/latest.json``) once every
    stage before it has added its section, after the ``run_report`` signal lets
    components outside the stages add theirs (the render middleware, the LLM
    extractor). Keep it last in ``PROCESSING_STAGES``; left out, no report is written.

    The run's change list (:func:`changed_pages`) goes to the store's ``changes`` table,
    a batch at a time (:func:`record_changes`); the report keeps its counts and first
    entries (``changes_total``, ``changes_by_status``, ``changes_sample``). Once it is
    written, the ``run_reported`` signal tells the change feeds, the webhook and the
    markdown export, which read the list from the table.

    A crawl that recorded no page at all fails (the run report says so, the crawl
    exits 1), unless ``max_pages`` stopped it.
    """

    name = "report"

    def __init__(self, stats: StatsCollector, crawler: Crawler | None = None) -> None:
        self.stats = stats
        self.crawler = crawler
        #: the run's summary line, logged when the engine stops (the runner does)
        self.summary = ""
        self._run: StageRun | None = None
        #: ``pages_*`` of the run's records, counted by :meth:`run`
        self.counts: dict[str, int] = {}
        #: the run's change list as the report holds it (counts, sample), by :meth:`run`
        self.changes: dict[str, Any] = {}

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> ReportStage:
        assert crawler.stats is not None
        return cls(crawler.stats, crawler)

    def plan(self, run: StageRun) -> None:
        self._run = run

    async def run(self, plan: None) -> None:
        """The run's page counts and change list, once every stage before has run and
        before anything is said to be finished (a shared run's processing may change
        records after): read from the store, a batch of records at a time, so what the
        stages changed is written to it first (the writes the closing stage makes once
        the stages end, made now: it then finds none left)."""
        assert self._run is not None
        run = self._run
        if run.mode == "process":
            self.changes = summarised([], {})
            return
        run.cache.wrote(run.pages.flush())
        run.cache.commit()
        store: ReportStore = run.cache.store  # all this stage asks of the store
        try:
            self.counts, self.changes = record_changes(store, run)
        except CacheStorageError as exc:  # the run is partial (the cache said it): the report is still written
            logger.error(
                "The change list of run %(run)s was not stored: %(error)s", {"run": run.cache.run.run_id, "error": exc}
            )
            self.changes = {"changes_error": str(exc)}

    async def report(self, report: dict[str, Any]) -> None:
        from crawler.cache.run_report import summary_line
        from crawler.frontier import PART_OF_RUN

        assert self._run is not None
        run = self._run
        report.update(self.changes)
        report.update(self.counts)
        self.note_interruption(report)
        if self.crawler is not None:
            await self.crawler.signals.send_catch_log_async(
                signal=crawler_signals.run_report, cache=run.cache, report=report
            )
        self.note_interruption(report)  # a signal during the stages after extraction
        crawled = any(report.get(k) for k in ("pages_new", "pages_changed", "pages_unchanged"))
        # a process of a shared-frontier run may be left no page: the run has them
        not_failed = ("max_pages", PART_OF_RUN)
        start_failed = report.get("start_failed") or {}
        # every start URL gave no page (a mistyped one, a site down): the run failed, even
        # when a sitemap led to other pages
        no_start = bool(start_failed) and len(start_failed) >= len(set(report.get("start_urls") or ())) > 0
        if run.mode == "crawl" and (no_start or not crawled) and not any(r in run.reasons for r in not_failed):
            self.fail(report, no_page_reason(start_failed, crawled))
        store: ReportStore = run.cache.store  # all this stage asks of the store
        path = store.write_run_report(run.cache.run.run_id, report)
        # said when the engine stops: the last line on screen, after Scrapy's stats dump
        self.summary = summary_line(report, where=shown_path(path))
        line = summary_line(report)
        if self.crawler is not None and run.mode != "process" and PART_OF_RUN not in run.reasons:
            await self.crawler.signals.send_catch_log_async(
                signal=crawler_signals.run_reported, report=report, summary=line
            )

    def fail(self, report: dict[str, Any], reason: str) -> None:
        """The run failed as a whole: the log's error line, the run report (``failed``,
        ``complete`` false with the reason), ``cache stats`` and the exit status say it."""
        assert self._run is not None
        self._run.cache.run.failed = reason
        report["failed"] = reason
        report["complete"] = False
        # (what each start URL answered is in the reason)
        others = [r for r in report["incomplete_reasons"] if not str(r).startswith("start page ")]
        report["incomplete_reasons"] = [*others, reason]
        if report.get("start_failed"):
            logger.error("%(reason)s", {"reason": reason[:1].upper() + reason[1:]})
        else:
            logger.error(
                "No page could be crawled (%(failed)d failed, %(gone)d gone, %(missing)d not found): "
                "the warnings above say why",
                {
                    "failed": self.stats.get_value("docs/failed_pages", 0),
                    "gone": self.stats.get_value("docs/gone_pages", 0),
                    "missing": self.stats.get_value("docs/not_found_pages", 0),
                },
            )

    def note_interruption(self, report: dict[str, Any]) -> None:
        assert self._run is not None
        interrupted = self._run.cache.run.interrupted
        if interrupted is None:
            return
        report["interrupted"] = interrupted
        report["extraction_left"] = int(self.stats.get_value("extraction/left", 0))


def shown_path(path: str) -> str:
    """A report's place as the summary line shows it: relative to the directory the
    crawl runs in when it is under it (a database's location stays as it is)."""
    try:
        relative = os.path.relpath(path)
    except ValueError:
        return path
    return relative if os.path.isabs(path) and not relative.startswith("..") else path


def no_page_reason(start_failed: dict[str, str], crawled: bool = False) -> str:
    """Why a crawl that recorded no page (or no page of its start URLs) failed, naming
    what its start URLs answered.

    >>> no_page_reason({"http://a/en/": "answered 404 Not Found"})
    'no page could be crawled: the start page http://a/en/ answered 404 Not Found'
    >>> no_page_reason({"http://a/en/": "answered 404 Not Found"}, crawled=True)
    'no start page could be crawled: the start page http://a/en/ answered 404 Not Found'
    >>> no_page_reason({})
    'no page could be crawled'
    """
    said = "; ".join(f"the start page {url} {answer}" for url, answer in start_failed.items())
    what = "no start page could be crawled" if crawled else "no page could be crawled"
    return f"{what}: {said}" if said else what


#: records read by one query of :func:`record_changes`, and change rows written by one
#: transaction
PAGES_PER_READ = 500


def record_changes(store: ReportStore, run: StageRun) -> tuple[dict[str, int], dict[str, Any]]:
    """The run's page counts (``pages_new``, ``pages_changed``, ``pages_unchanged``:
    the statuses its recorded pages have once the stages ran, a page whose extraction
    the run paid for being new or changed, :func:`crawler.incremental.ledger.paid_status`;
    counted from their stored statuses, never by adjusting counts made before), and its
    change list (:func:`changed_pages`) written to the store's ``changes`` table a batch
    at a time: what the report keeps of it (:func:`summarised`). Only a batch of
    statuses and of changed pages' records is held at once."""
    counts = Counter({STATUS_NEW: 0, STATUS_CHANGED: 0, STATUS_UNCHANGED: 0})
    run_id = run.cache.run.run_id
    store.clear_run_changes(run_id)  # (a run's processing done again lists it anew)
    sample: list[dict[str, Any]] = []
    by_status: Counter[str] = Counter()
    batch: list[dict[str, Any]] = []
    written = 0
    for url_hash, status, record, recorded in changed_pages(store, run):
        if recorded and status in counts:
            counts[status] += 1
        if record is None or status not in CHANGE_STATUSES:
            continue
        change = change_record(url_hash, record)
        by_status[status] += 1
        if len(sample) < CHANGES_SAMPLE:
            sample.append(change)
        batch.append(change)
        if len(batch) >= PAGES_PER_READ:
            written += store.put_run_changes(run_id, batch, start=written)
            batch = []
    store.put_run_changes(run_id, batch, start=written)
    return {f"pages_{status}": n for status, n in counts.items()}, summarised(sample, by_status)


def summarised(sample: list[dict[str, Any]], by_status: dict[str, int]) -> dict[str, Any]:
    """What the run report keeps of a change list: how many (in all, by status) and
    its first :data:`CHANGES_SAMPLE` entries.

    >>> summarised([{"url": "u"}], {"new": 1})
    {'changes_total': 1, 'changes_by_status': {'new': 1}, 'changes_sample': [{'url': 'u'}]}
    """
    return {
        "changes_total": sum(by_status.values()),
        "changes_by_status": {status: by_status[status] for status in CHANGE_STATUSES if by_status.get(status)},
        "changes_sample": sample,
    }


def changed_pages(store: ReportStore, run: StageRun) -> Iterator[tuple[str, str, PageRecord | None, bool]]:
    """The pages a run's change list may name: ``(url_hash, status, record, recorded)``,
    ``recorded`` when the run recorded the page (its status is this run's). Those it
    recorded come first, in order, their statuses read from the page table's columns
    :data:`PAGES_PER_READ` at a time and the records of those of a change status
    (:data:`CHANGE_STATUSES`; the others' record is None: not decoded); then those it
    marked removed (the removal stage takes them out of the recorded ones; a store
    query), each once. ``scrapy process`` records no page: none."""
    if run.mode == "process":
        return
    listed_removed: set[str] = set()
    for targets in run.target_batches(PAGES_PER_READ):
        heads = store.get_page_heads(targets)
        records = store.get_pages(
            key for key, head in heads.items() if head is not None and head.status in CHANGE_STATUSES
        )
        for url_hash, head in heads.items():
            if head is None:
                continue
            record = records.get(url_hash)
            if url_hash in records and record is None:  # unreadable (counted by the store)
                continue
            status = str(record.get("status")) if record is not None else head.status
            if status == STATUS_REMOVED:
                listed_removed.add(url_hash)
            yield url_hash, status, record, True
    for url_hash, record in store.removed_in_run(run.cache.run.run_id):
        if url_hash not in listed_removed:
            yield url_hash, str(record.get("status")), record, False
