"""The closing stage: removed pages, content analysis, extraction, run report."""

from __future__ import annotations

import asyncio
import inspect
import logging
import sys
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.utils.misc import build_from_crawler

from crawler import signals as crawler_signals
from crawler.cache import cache_for
from crawler.cache.report import build_run_report, summary_line
from crawler.cache.store import STATUS_REMOVED, add_history, metadata_of, page_text, parse_time, utcnow
from crawler.config import load_named, typed, unknown_settings
from crawler.extractors import ExtractorUnavailable, check_extractor
from crawler.lib.hashing import sha256_hex
from crawler.lib.interrupt import Interruption, until_done_or_abandoned
from crawler.lib.progress import Progress
from crawler.lib.secrets import mask_error

if TYPE_CHECKING:
    from collections.abc import Callable

    from scrapy import Spider
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector

    from crawler.cache import Cache

logger = logging.getLogger(__name__)

DEFAULT_EXTRACTOR = "crawler.extractors.outline.OutlineExtractor"
#: stats that mean some page may not have been reached (a page the cache failed to
#: record marks the run incomplete itself: ContentHashPipeline.not_recorded)
INCOMPLETE_STATS = ("retry/max_reached",)
#: stat prefixes that mean the same: a server error given up on, a crashed callback
INCOMPLETE_PREFIXES = ("httperror/response_ignored_status_count/5", "spider_exceptions/")
#: pages with no text to extract listed by URL in the run report (all are counted)
EMPTY_PAGES_LISTED = 50
#: characters of extractor input kept in memory for queued calls; the rest is re-read
QUEUE_TEXT_BUDGET = 128 * 1024 * 1024


@dataclass
class Job:
    """One extractor call to make: the page, its input's identity, and (while they
    fit in memory) its input and index record."""

    url_hash: str
    key: str
    input_hash: str
    text: str | None
    record: dict[str, Any] | None
    forced: bool = False
    #: estimated prompt tokens of this call (a dry run), and of the boilerplate kept out of it
    tokens: int = 0
    boilerplate_tokens: int = 0


def input_key(name: str, version: str, input_hash: str) -> str:
    """The cache identity of one extraction: extractor name and version, input hash.

    >>> input_key("outline", "1", "ab") == input_key("outline", "2", "ab")
    False
    """
    return sha256_hex(f"{name}\0{version}\0{input_hash}")


def expiry_days(url_hash: str, max_age_days: float) -> float:
    """The age at which this page's extraction expires: ``max_age_days`` spread over
    75% to 125% by the page's hash, so a site extracted in one day does not all expire
    in one later run.

    >>> expiry_days("00000000", 10), expiry_days("ffffffff", 10)
    (7.5, 12.5)
    """
    spread = int(url_hash[:8], 16) / 0xFFFFFFFF
    return max_age_days * (0.75 + 0.5 * spread)


def incomplete_reasons(reason: str, stats: dict[str, Any], run_reasons: list[str]) -> list[str]:
    """Why this crawl may not have reached every page (empty: it did).

    >>> incomplete_reasons("finished", {}, [])
    []
    >>> incomplete_reasons("closespider_pagecount", {"retry/max_reached": 2}, ["max_pages"])
    ['finish reason closespider_pagecount', 'max_pages', 'retry/max_reached: 2']
    """
    reasons = [] if reason == "finished" else [f"finish reason {reason}"]
    reasons.extend(run_reasons)
    for stat in INCOMPLETE_STATS:
        if stats.get(stat):
            reasons.append(f"{stat}: {stats[stat]}")
    for stat, value in stats.items():
        if value and stat.startswith(INCOMPLETE_PREFIXES):
            reasons.append(f"{stat}: {value}")
    return reasons


class ExtractionStage:
    """Runs when the spider closes, once every page of the crawl is recorded:

    1. marks pages ``removed``: those that answered 404/410, and, after a complete
       crawl only, those of the crawled domains that the crawl no longer reached;
    2. sends ``pages_gathered`` so analysers (domain boilerplate) can clean inputs;
    3. calls the extractor for each page whose input (with the extractor's name and
       version) differs from its last successful extraction, whose last extraction
       failed, or that is forced; reuses the extraction of identical input at another
       URL; writes ``extractions/`` and ``metadata/`` files, then the index;
    4. writes the run report (``runs/<run id>.json``, ``runs/latest.json``).

    Always on: a crawl without it would fill a cache nobody reads.
    """

    def __init__(
        self,
        cache: Cache,
        extractor: Any,
        stats: StatsCollector,
        *,
        force: bool = False,
        concurrency: int = 4,
        timeout: float = 120.0,
        use_clean: bool = True,
        max_age_days: float = 0.0,
        dry_run: bool = False,
        progress_interval: float = 30.0,
        progress_bar: bool = True,
        interrupt_wait: float = 30.0,
        crawler: Crawler | None = None,
    ) -> None:
        self.check(extractor, concurrency)
        self.cache = cache
        self.store = cache.store
        self.extractor = extractor
        self.stats = stats
        self.force = force
        self.concurrency = concurrency
        self.timeout = timeout
        self.use_clean = use_clean
        self.max_age_days = max_age_days
        self.dry_run = dry_run
        self.progress_interval = progress_interval
        self.progress_bar = progress_bar
        self.interrupt_wait = interrupt_wait
        #: SIGINT/SIGTERM while the closing stage runs (set by spider_closed)
        self.interruption: Interruption | None = None
        #: the run's summary line, logged last (engine_stopped)
        self.summary = ""
        self.crawler = crawler
        #: the extractor's token estimate, for extractors that call a paid API
        self.estimate: Callable[[str, str], int] | None = getattr(extractor, "estimate_tokens", None)
        #: why the extractor became unavailable (ExtractorUnavailable), None while it is not
        self.stopped: str | None = None
        self.dry_run_result: dict[str, Any] | None = None
        #: URLs of this run's pages with no text to extract (the first EMPTY_PAGES_LISTED)
        self.empty_pages: list[str] = []
        #: input keys being extracted now -> done when the call ends
        self._running: dict[str, asyncio.Future[None]] = {}
        self.is_async = inspect.iscoroutinefunction(extractor.extract)
        # a plain extractor that says it never blocks (pure computation, like the
        # default one) runs inline: a thread would only add a hand-over per page
        self.inline = not self.is_async and getattr(extractor, "blocking", True) is False

    @staticmethod
    def check(extractor: Any, concurrency: int) -> None:
        check_extractor(extractor)
        if concurrency < 1:
            raise ValueError(f"EXTRACTOR_CONCURRENCY must be at least 1, got {concurrency!r}")

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> ExtractionStage:
        for name, close in unknown_settings(crawler.settings):  # a misspelt name is otherwise ignored
            logger.warning(
                "Unknown setting %(name)s, ignored%(hint)s",
                {"name": name, "hint": f" (did you mean {close}?)" if close else ""},
            )
        settings = typed(crawler.settings)
        extractor_path = settings.get("EXTRACTOR") or DEFAULT_EXTRACTOR
        extractor = build_from_crawler(load_named("EXTRACTOR", extractor_path), crawler)
        concurrency = settings.getint("EXTRACTOR_CONCURRENCY", 4)
        max_age = settings.getfloat("DEDUP_MAX_AGE", 0.0)
        if max_age < 0:
            raise ValueError(f"DEDUP_MAX_AGE must be >= 0 days, got {max_age!r}")
        timeout = settings.getfloat("EXTRACTOR_TIMEOUT", 120.0)
        if timeout <= 0:
            raise ValueError(f"EXTRACTOR_TIMEOUT must be more than 0 seconds, got {timeout!r}")
        interval = settings.getfloat("EXTRACTOR_PROGRESS_INTERVAL", 30.0)
        if interval < 0:
            raise ValueError(
                f"EXTRACTOR_PROGRESS_INTERVAL must be >= 0 seconds (0: no progress lines), got {interval!r}"
            )
        interrupt_wait = settings.getfloat("EXTRACTOR_INTERRUPT_WAIT", 30.0)
        if interrupt_wait < 0:
            raise ValueError(f"EXTRACTOR_INTERRUPT_WAIT must be >= 0 seconds, got {interrupt_wait!r}")
        cls.check(extractor, concurrency)  # before the cache is opened and locked
        assert crawler.stats is not None
        stage = cls(
            cache_for(crawler),
            extractor,
            crawler.stats,
            force=settings.getbool("DEDUP_FORCE") or not settings.getbool("DEDUP_ENABLED", True),
            concurrency=concurrency,
            timeout=timeout,
            use_clean=settings.getbool("BOILERPLATE_ENABLED", True),
            max_age_days=max_age,
            dry_run=settings.getbool("EXTRACTOR_DRY_RUN"),
            progress_interval=interval,
            progress_bar=settings.getbool("EXTRACTOR_PROGRESS_BAR", True),
            interrupt_wait=interrupt_wait,
            crawler=crawler,
        )
        crawler.signals.connect(stage.spider_closed, signal=signals.spider_closed)
        crawler.signals.connect(stage.engine_stopped, signal=signals.engine_stopped)
        return stage

    def engine_stopped(self) -> None:
        if self.summary:
            logger.info("%(summary)s", {"summary": self.summary})

    @property
    def extractor_id(self) -> dict[str, str]:
        return {"name": self.extractor.name, "version": self.extractor.version}

    async def spider_closed(self, spider: Spider, reason: str) -> None:
        # SIGINT/SIGTERM from here on: no new extractor call, the calls in flight finish
        # (or are given up), the report says interrupted and the crawl exits non-zero
        def note(signame: str) -> None:
            # the one record of the interruption: the workers, the vector sync, the run
            # report and the exit status all read it
            self.cache.run.interrupted = signame

        with Interruption(self.interrupt_wait, what="extractor calls in flight", on_signal=note) as interruption:
            self.interruption = interruption
            try:
                await self._close(spider, reason)
            except Exception as exc:
                # (an extraction file that cannot be written: a full disk...) the crawl
                # exits 1 and says why; what was stored before stays
                self.cache.run.failed = f"the closing stage failed: {type(exc).__name__}: {exc}"
                logger.exception("The closing stage failed; no run report was written")
            finally:
                self.interruption = None

    @property
    def interrupted(self) -> bool:
        return self.cache.run.interrupted is not None

    async def _close(self, spider: Spider, reason: str) -> None:
        stats = self.stats.get_stats()
        reasons = incomplete_reasons(reason, stats, self.cache.run.incomplete_reasons)
        self.mark_removed(complete=not reasons, in_scope=getattr(spider, "dedup_in_scope", None))
        if reasons:
            logger.info(
                "Incomplete crawl, no page marked removed for not being reached: %(r)s", {"r": "; ".join(reasons)}
            )
        self.cache.commit()
        await self._send(crawler_signals.pages_gathered, cache=self.cache)
        await self.extract_all()
        self.cache.commit()
        report = build_run_report(
            self.cache.run,
            self.stats.get_stats(),
            spider=spider.name,
            finish_reason=reason,
            complete=not reasons,
            extractor=self.extractor_id,
            empty_pages=self.empty_pages,
        )
        self.add_token_figures(report)
        self._note_interruption(report)
        await self._send(crawler_signals.extraction_finished, cache=self.cache, report=report)
        self._note_interruption(report)  # a signal during the stages after extraction
        if not any(report[k] for k in ("pages_new", "pages_changed", "pages_unchanged")) and "max_pages" not in reasons:
            self.cache.run.failed = "no page could be crawled"
            logger.error(
                "No page could be crawled (%(failed)d failed, %(gone)d gone): the warnings above say why",
                {
                    "failed": self.stats.get_value("docs/failed_pages", 0),
                    "gone": self.stats.get_value("docs/gone_pages", 0),
                },
            )
        path = self.store.write_run_report(self.cache.run.run_id, report)
        # said when the engine stops: the last line on screen, after Scrapy's stats dump
        self.summary = f"{summary_line(report)}; report {path}"

    def _note_interruption(self, report: dict[str, Any]) -> None:
        if self.cache.run.interrupted is None:
            return
        report["interrupted"] = self.cache.run.interrupted
        report["extraction_left"] = int(self.stats.get_value("extraction/left", 0))

    def add_token_figures(self, report: dict[str, Any]) -> None:
        """The dry run's figures, and the estimated tokens saved (for extractors with a
        token estimate), in the run report."""
        if self.dry_run_result is not None:
            report["dry_run"] = self.dry_run_result
        if self.stopped is not None:
            report["extraction_stopped"] = self.stopped
        if self.estimate is not None:
            report["tokens"] = {
                "saved_unchanged_estimate": int(self.stats.get_value("extraction/tokens_estimate_saved_unchanged", 0)),
                "saved_boilerplate_estimate": int(
                    self.stats.get_value("extraction/tokens_estimate_saved_boilerplate", 0)
                ),
            }

    async def _send(self, signal: object, **kwargs: Any) -> None:
        if self.crawler is not None:
            await self.crawler.signals.send_catch_log_async(signal=signal, **kwargs)

    # -- removed pages -------------------------------------------------------

    def mark_removed(self, *, complete: bool, in_scope: Callable[[str], bool] | None = None) -> int:
        """Mark gone pages removed, and unreached ones after a complete crawl.

        ``in_scope`` (the spider's ``dedup_in_scope(url)``, when it has one) says which
        URLs this crawl could have reached: a page its include/exclude rules leave out
        is not removed for not being reached."""
        run = self.cache.run
        # a page seen this run is not gone, even if another spelling of its URL 404'd
        candidates: set[str] = {url_hash for url_hash in run.gone if url_hash not in run.seen}
        if complete and run.domains:
            candidates.update(key for key in self.store.iter_page_keys() if key not in run.seen)
        removed = 0
        now = utcnow()
        for url_hash in candidates:
            record = self.store.get_page(url_hash)
            if record is None or record.get("status") == STATUS_REMOVED:
                continue
            reachable = record.get("domain") in run.domains and (in_scope is None or in_scope(record.get("url", "")))
            if url_hash not in run.gone and not reachable:
                continue
            # a removal is a change: `scrapy cache ls --since` lists it
            record.update(status=STATUS_REMOVED, removed_at=now, last_changed=now, run_id=run.run_id)
            add_history(record, STATUS_REMOVED, now, reason="gone" if url_hash in run.gone else "not reached")
            self.store.put_page(url_hash, record)
            self.store.write_metadata(url_hash, metadata_of(url_hash, record))
            run.seen.pop(url_hash, None)
            removed += 1
            self.stats.inc_value("dedup/pages_removed")
            logger.info("Removed: %(url)s", {"url": record.get("url")})
        self.cache.wrote(removed)
        return removed

    # -- extraction ----------------------------------------------------------

    async def extract_all(self) -> None:
        """Decide for every page seen; call the extractor for those that need it.

        An inline extractor (pure computation) runs as each page is decided; calls to
        any other wait in a queue, so the progress lines know the total."""
        started = time.monotonic()
        jobs: list[Job] = []
        held = 0  # characters of input kept in the queue; past the budget, re-read at call time
        seen = list(self.cache.run.seen)
        for index, url_hash in enumerate(seen):
            if self.stopped is not None:
                break
            if self.interrupted:
                self._left(len(seen) - index, planned=False)
                break
            job = self.plan_page(url_hash)
            if job is None:
                continue
            if self.inline and not self.dry_run:
                await self.run_job(job, recheck=False)  # planned this instant
                continue
            job.record = None
            if held + len(job.text or "") > QUEUE_TEXT_BUDGET:
                job.text = None
            held += len(job.text or "")
            jobs.append(job)
        if self.dry_run:
            self.dry_run_summary(jobs)
            return
        if jobs:
            await self.run_jobs(jobs)
        logger.info(
            "Extraction phase: %(total)d pages in %(secs).1fs, %(calls)d extractor calls",
            {
                "total": len(self.cache.run.seen),
                "secs": time.monotonic() - started,
                "calls": self.stats.get_value("extraction/calls", 0),
            },
        )

    async def run_jobs(self, jobs: list[Job]) -> None:
        terminal = sys.stderr if self.progress_bar and sys.stderr.isatty() else None
        progress = Progress(
            len(jobs),
            logger=logger,
            label="Extraction",
            interval=self.progress_interval,
            terminal=terminal,
            note=getattr(self.extractor, "progress_note", None),
        )
        pending = iter(jobs)
        finished = 0

        async def worker() -> None:
            nonlocal finished
            for job in pending:
                if self.stopped is not None or self.interrupted:
                    return
                await self.run_job(job)
                finished += 1
                progress.advance()

        async def ticker() -> None:  # progress lines also while every call waits (rate limits, retries)
            while True:
                await asyncio.sleep(1.0)
                progress.tick()

        ticking = asyncio.ensure_future(ticker())
        workers = [asyncio.ensure_future(worker()) for _ in range(min(self.concurrency, len(jobs)))]
        try:
            await until_done_or_abandoned(workers, self.interruption)
        finally:
            ticking.cancel()
            progress.finish()
        if self.interrupted:
            self._left(len(jobs) - finished, planned=True)

    def _left(self, count: int, *, planned: bool) -> None:
        """An interruption left ``count`` pages (planned calls, or pages not yet looked
        at) for the next run, which finds them as they are now."""
        self.stats.inc_value("extraction/left", count)
        logger.warning(
            "Extraction interrupted: %(n)d %(what)s left for the next run",
            {"n": count, "what": "planned calls" if planned else "pages not yet looked at"},
        )

    def plan_page(self, url_hash: str) -> Job | None:
        """The call this page needs, or None: its extraction is cached, found on disk
        (:meth:`_adopt`), or there is nothing to extract."""
        record = self.store.get_page(url_hash)
        content = self.store.get_content(url_hash)
        if record is None or content is None:
            self.stats.inc_value("extraction/missing_content")
            logger.warning("No stored content for page %(h)s; not extracted", {"h": url_hash})
            return None
        text = page_text(content, self.use_clean)
        if not text.strip():
            self.empty_input(url_hash, record, content)
            return None
        if record.pop("empty_input", None) is not None:  # it has text again
            self.store.put_page(url_hash, record)
            self.cache.wrote()
        input_hash = sha256_hex(text)
        key = input_key(self.extractor.name, self.extractor.version, input_hash)
        forced = self.force or url_hash in self.cache.run.forced or self._invalidated_or_expired(url_hash, record)
        if not forced and self._cached(url_hash, record, key):
            self.stats.inc_value("extraction/cache_hits")
            unchanged = True
        else:
            unchanged = not forced and self._adopt(url_hash, record, key, input_hash)
        if unchanged:
            if self.estimate is not None:
                self.stats.inc_value("extraction/tokens_estimate_saved_unchanged", self.estimate(record["url"], text))
            return None
        job = Job(url_hash, key, input_hash, text, record, forced=forced)
        if self.estimate is not None:
            if self.dry_run:
                job.tokens = self.estimate(record["url"], text)
            raw = content.get("text", "")
            if self.use_clean and isinstance(raw, str) and raw != text:
                job.boilerplate_tokens = self.estimate(record["url"], raw) - self.estimate(record["url"], text)
        return job

    def empty_input(self, url_hash: str, record: dict[str, Any], content: dict[str, Any]) -> None:
        """A page with nothing to send (its main content came out empty, or all of it is
        the domain's boilerplate): not sent, but never silently: counted, listed in the
        run report (``empty_pages``), marked in its record for ``scrapy cache ls --empty``."""
        self.stats.inc_value("extraction/empty_input")
        url = str(record.get("url", url_hash))
        if len(self.empty_pages) < EMPTY_PAGES_LISTED:
            self.empty_pages.append(url)
        all_boilerplate = bool(str(content.get("text") or "").strip())
        logger.info(
            "Nothing to extract from %(url)s (%(why)s): not sent",
            {"url": url, "why": "all of its text is the site's boilerplate" if all_boilerplate else "no main content"},
        )
        if record.get("empty_input") is None:
            record["empty_input"] = utcnow()
            self.store.put_page(url_hash, record)
            self.cache.wrote()

    async def run_job(self, job: Job, *, recheck: bool = True) -> None:
        """Call the extractor for one planned page. ``recheck``: first look again for an
        extraction of the same input made since the page was planned (a mirror of it
        extracted earlier in this phase, or being extracted right now)."""
        record = job.record if job.record is not None else self.store.get_page(job.url_hash)
        if record is None:
            return
        if recheck and not job.forced:
            running = self._running.get(job.key)
            if running is not None:
                await asyncio.shield(running)
            if self._adopt(job.url_hash, record, job.key, job.input_hash):
                return
        text = job.text
        if text is None:  # past the queue's memory budget: read again, and checked against the plan
            content = self.store.get_content(job.url_hash)
            text = page_text(content, self.use_clean) if content is not None else ""
            if sha256_hex(text) != job.input_hash:
                logger.warning("Page %(h)s changed during the extraction phase; not extracted", {"h": job.url_hash})
                return
        done = self._running.setdefault(job.key, asyncio.get_running_loop().create_future())
        try:
            await self._extract(job, record, text)
        finally:
            if self._running.get(job.key) is done:
                del self._running[job.key]
                done.set_result(None)

    async def _extract(self, job: Job, record: dict[str, Any], text: str) -> None:
        self.stats.inc_value("extraction/calls")
        try:
            data = await self._call(record["url"], text)
        except asyncio.CancelledError:
            # given up on an interruption: no answer, nothing recorded; the next run calls again
            self.stats.inc_value("extraction/calls", -1)
            self.stats.inc_value("extraction/abandoned")
            raise
        except ExtractorUnavailable as exc:
            self.stats.inc_value("extraction/calls", -1)  # nothing came of it; the page waits for the next run
            self._stop(exc)
            return
        except Exception as exc:  # noqa: BLE001 - one page's failure never stops the others
            self._failed(job.url_hash, record, job.key, exc)
            return
        self._save(job.url_hash, record, job.key, job.input_hash, data)
        if job.boilerplate_tokens:
            self.stats.inc_value("extraction/tokens_estimate_saved_boilerplate", job.boilerplate_tokens)

    def _stop(self, exc: ExtractorUnavailable) -> None:
        if self.stopped is not None:
            return
        self.stopped = str(exc)
        self.stats.inc_value("extraction/errors")
        self.stats.set_value("extraction/stopped", 1)
        logger.error(
            "Extractor unavailable, extraction stopped (the pages left are extracted by the next run): %(e)s",
            {"e": self.stopped},
        )

    def dry_run_summary(self, jobs: list[Job]) -> None:
        """EXTRACTOR_DRY_RUN: what this run would have sent, and nothing sent."""
        tokens = None
        if self.estimate is not None:
            tokens = sum(job.tokens for job in jobs)
            self.stats.set_value("extraction/dry_run_tokens_estimate", tokens)
        self.stats.set_value("extraction/dry_run_pages", len(jobs))
        boilerplate = sum(job.boilerplate_tokens for job in jobs)
        if boilerplate:  # what the boilerplate analysis would keep out of these calls
            self.stats.inc_value("extraction/tokens_estimate_saved_boilerplate", boilerplate)
        self.dry_run_result = {"pages": len(jobs), "tokens": tokens}
        logger.info(
            "Dry run: the extractor would be called for %(n)d pages%(tokens)s; nothing was sent",
            {"n": len(jobs), "tokens": f", about {tokens:,} prompt tokens (estimate)" if tokens is not None else ""},
        )

    def _invalidated_or_expired(self, url_hash: str, record: dict[str, Any]) -> bool:
        if record.get("invalidated"):
            self.stats.inc_value("extraction/invalidated")
            return True
        if self.max_age_days and "extraction" in record:
            extracted = parse_time(record.get("last_extracted"))
            limit = expiry_days(url_hash, self.max_age_days) * 86400
            if extracted is not None and (datetime.now(UTC) - extracted).total_seconds() > limit:
                self.stats.inc_value("extraction/expired")
                return True
        return False

    def _cached(self, url_hash: str, record: dict[str, Any], key: str) -> bool:
        extraction = record.get("extraction")
        if not extraction or extraction.get("input_key") != key or record.get("extraction_error"):
            return False
        stored = self.store.read_extraction(url_hash)
        if stored is None or stored.get("input_key") != key:
            self.stats.inc_value("extraction/file_missing")
            logger.warning(
                "Extraction file of %(url)s is missing or unreadable; extracting again", {"url": record.get("url")}
            )
            return False
        return True

    def _adopt(self, url_hash: str, record: dict[str, Any], key: str, input_hash: str) -> bool:
        """Use an extraction already on disk for this input: this page's own (a run
        killed after writing the file, before the index), or another URL's (a moved
        or mirrored page)."""
        own = self.store.read_extraction(url_hash)
        if own is not None and own.get("input_key") == key:
            self.stats.inc_value("extraction/recovered")
            self.stats.inc_value("extraction/cache_hits")
            self._index(url_hash, record, key, input_hash, own.get("extracted_at") or utcnow())
            return True
        other = self.store.find_extraction(key)
        if other is None or other == url_hash:
            return False
        data = self.store.read_extraction(other)
        if data is None or data.get("input_key") != key:
            return False
        self.stats.inc_value("extraction/reused")
        self.stats.inc_value("extraction/cache_hits")
        logger.debug(
            "Reusing the extraction of %(other)s for %(url)s", {"other": data.get("url"), "url": record["url"]}
        )
        self._save(url_hash, record, key, input_hash, data.get("data", {}), reused_from=data.get("url"))
        return True

    async def _call(self, url: str, text: str) -> dict[str, Any]:
        if self.is_async and getattr(self.extractor, "own_timeout", False):
            result = await self.extractor.extract(url, text)
        elif self.is_async:
            result = await asyncio.wait_for(self.extractor.extract(url, text), self.timeout)
        elif self.inline:
            result = self.extractor.extract(url, text)
        else:
            result = await asyncio.wait_for(asyncio.to_thread(self.extractor.extract, url, text), self.timeout)
        if not isinstance(result, dict):
            name = type(self.extractor).__name__
            raise TypeError(f"{name}.extract() returned {type(result).__name__}, expected dict")
        return result

    def _save(
        self,
        url_hash: str,
        record: dict[str, Any],
        key: str,
        input_hash: str,
        data: dict[str, Any],
        reused_from: str | None = None,
    ) -> None:
        now = utcnow()
        extraction = {
            "url": record["url"],
            "url_hash": url_hash,
            "title": record.get("title", ""),
            "extractor": self.extractor_id,
            "input_hash": input_hash,
            "input_key": key,
            "extracted_at": now,
            "data": data,
        }
        if reused_from:
            extraction["reused_from"] = reused_from
        # the file first, then the index: a crash between the two is recovered by _adopt
        self.store.write_extraction(url_hash, extraction)
        self.store.link_extraction(key, url_hash)
        self._index(url_hash, record, key, input_hash, now)

    def _index(self, url_hash: str, record: dict[str, Any], key: str, input_hash: str, when: str) -> None:
        record["extraction"] = {
            "input_key": key,
            "input_hash": input_hash,
            "extractor": self.extractor.name,
            "version": self.extractor.version,
            "file": f"extractions/{url_hash}.json",
        }
        record["last_extracted"] = when
        record.pop("extraction_error", None)
        record.pop("invalidated", None)
        add_history(record, "extracted", when, input_hash=input_hash)
        self.store.put_page(url_hash, record)
        self.store.write_metadata(url_hash, metadata_of(url_hash, record))
        self.cache.wrote(2)

    def _failed(self, url_hash: str, record: dict[str, Any], key: str, exc: BaseException) -> None:
        message = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        message = mask_error(message)  # an endpoint's error may echo a key: never stored
        self.stats.inc_value("extraction/errors")
        logger.error("Extraction failed for %(url)s: %(error)s", {"url": record["url"], "error": message})
        now = utcnow()
        record["extraction_error"] = {"at": now, "error": message[:2000], "input_key": key}
        add_history(record, "extraction_failed", now, error=message[:200])
        self.store.put_page(url_hash, record)
        self.store.write_metadata(url_hash, metadata_of(url_hash, record))
        self.cache.wrote()
