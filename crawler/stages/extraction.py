"""The extraction stage: the extractor called for each page whose input changed."""

from __future__ import annotations

import asyncio
import inspect
import logging
import sys
import time
from typing import TYPE_CHECKING, Any

from scrapy.utils.misc import build_from_crawler

from crawler.cache import CacheStorageError, cache_for
from crawler.cache.records import extraction_ref, utcnow
from crawler.cache.run_report import EXTRACTION_STOPPED
from crawler.choices import run_choices
from crawler.config import load_named, typed
from crawler.extractors import Extractor, ExtractorUnavailable, check_extractor
from crawler.incremental import ledger
from crawler.stages import CONTENTS_PER_READ, StageRun
from crawler.stages.calls import call_extractor, run_calls
from crawler.stages.claims import Claims
from crawler.stages.jobs import Job, cached, expired, extracted_too_long_ago, input_key
from crawler.stages.spool import Spool
from crawler.support.plural import plural
from crawler.support.secrets import mask_data, mask_error

if TYPE_CHECKING:
    from collections.abc import Callable

    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector

    from crawler.cache import Cache
    from crawler.cache.ports import ExtractionStore
    from crawler.cache.records import Extraction, ExtractorId
    from crawler.stages import PageView, PageViews
    from crawler.support.interrupt import Interruption

logger = logging.getLogger(__name__)

#: pages with no text to extract listed by URL in the run report (all are counted)
EMPTY_PAGES_LISTED = 50


#: what :meth:`ExtractionStage.cached_by_fields` reads of each record of the run
#: (as :func:`crawler.stages.jobs.cached` and :func:`~crawler.stages.jobs.expired` read them)
CACHE_FIELDS = (
    "extraction.input_key",
    "extraction_error",
    "empty_input",
    "invalidated",
    "last_extracted",
    "extraction.tokens_estimate",
)


class ExtractionStage:
    """Calls the extractor for each page of the run whose input (with the extractor's
    name and version: its key) differs from its last successful extraction, whose
    last extraction failed, or that is forced; reuses the extraction of identical
    input at another URL, or a file a killed run wrote; writes ``extractions/`` (the
    file first, then the index).

    Input: the page's text without its domain's boilerplate (the page view's
    ``text``). A dry run (``-a dry_run=true``): counts the calls (and their tokens) and calls
    nothing. A stage like the others: left out of ``PROCESSING_STAGES``, nothing is
    extracted.
    """

    name = "extraction"

    def __init__(
        self,
        cache: Cache,
        extractor: Extractor,
        stats: StatsCollector,
        *,
        force: bool,
        concurrency: int,
        timeout: float,
        use_clean: bool,
        max_age_days: float,
        dry_run: bool,
        progress_interval: float,
        spool: Spool | None = None,
    ) -> None:
        self.cache = cache
        #: the store's methods this component calls (:mod:`crawler.cache.ports`)
        self.store: ExtractionStore = cache.store
        self.extractor = self.check(extractor, concurrency)
        self.stats = stats
        self.force = force
        self.concurrency = concurrency
        self.timeout = timeout
        self.use_clean = use_clean
        self.max_age_days = max_age_days
        self.dry_run = dry_run
        self.progress_interval = progress_interval
        #: finished calls the store could not take, kept for the next run (None: not kept)
        self.spool = spool
        #: the spool's extractions, by page, loaded when the stage plans
        self.pending: dict[str, dict[str, Any]] = {}
        #: SIGINT/SIGTERM while the stages run (set by the runner)
        self.interruption: Interruption | None = None
        #: the extractor's token estimate, for extractors that call a paid API
        self.estimate: Callable[[str, str], int] | None = getattr(extractor, "estimate_tokens", None)
        #: why the extractor became unavailable (ExtractorUnavailable), None while it is not
        self.stopped: str | None = None
        self.dry_run_result: dict[str, Any] | None = None
        #: URLs of this run's pages with no text to extract (the first EMPTY_PAGES_LISTED)
        self.empty_pages: list[str] = []
        self._started = time.monotonic()
        self._planned = 0
        #: the run's pages (the plan's), and those whose planned call ended with an extraction
        self.pages: PageViews | None = None
        self.done: set[str] = set()
        self.is_async = inspect.iscoroutinefunction(extractor.extract)
        #: who extracts an input now: this process's claims, its calls running
        self.claims = Claims(self.store, cache.run.run_id, timeout)
        self.shared_store = self.store.concurrent_writers
        # a plain extractor that says it never blocks (pure computation, like the
        # default one) runs inline: a thread would only add a hand-over per page
        self.inline = not self.is_async and getattr(extractor, "blocking", True) is False

    @staticmethod
    def check(extractor: object, concurrency: int) -> Extractor:
        checked = check_extractor(extractor)
        if concurrency < 1:
            raise ValueError(f"EXTRACTOR_CONCURRENCY must be at least 1, got {concurrency!r}")
        return checked

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> ExtractionStage:
        settings = typed(crawler.settings)
        extractor_path = settings.get("EXTRACTOR")
        extractor = build_from_crawler(load_named("EXTRACTOR", extractor_path), crawler)
        concurrency = settings.getint("EXTRACTOR_CONCURRENCY")
        max_age = settings.getfloat("EXTRACTOR_MAX_AGE")
        if max_age < 0:
            raise ValueError(f"EXTRACTOR_MAX_AGE must be >= 0 days, got {max_age!r}")
        timeout = settings.getfloat("EXTRACTOR_TIMEOUT")
        if timeout <= 0:
            raise ValueError(f"EXTRACTOR_TIMEOUT must be more than 0 seconds, got {timeout!r}")
        interval = settings.getfloat("LOGSTATS_INTERVAL")  # Scrapy's stats lines, and the phase's
        if interval < 0:
            raise ValueError(f"LOGSTATS_INTERVAL must be >= 0 seconds (0: no progress lines), got {interval!r}")
        cls.check(extractor, concurrency)  # before the cache is opened and locked
        choices = run_choices(crawler)
        assert crawler.stats is not None
        return cls(
            cache_for(crawler),
            extractor,
            crawler.stats,
            force="extraction" in choices.redo,
            concurrency=concurrency,
            timeout=timeout,
            use_clean=settings.getbool("BOILERPLATE_ENABLED"),
            max_age_days=max_age,
            dry_run=choices.dry_run,
            progress_interval=interval,
            spool=Spool(settings.get("EXTRACTED_DOCS_DIR")),
        )

    @property
    def extractor_id(self) -> ExtractorId:
        return {"name": self.extractor.name, "version": self.extractor.version}

    @property
    def interrupted(self) -> bool:
        return self.cache.run.interrupted is not None

    @property
    def store_failed(self) -> bool:
        """The store failed to write: no call is started (its answer could be lost)."""
        return self.cache.failed is not None

    def _no_more_calls(self) -> bool:
        return self.stopped is not None or self.interrupted or self.store_failed

    # -- the stage -----------------------------------------------------------

    def plan(self, run: StageRun) -> list[Job]:
        """The calls to make: one per page of the run whose extraction is not cached
        (pages with nothing to extract are counted and marked, cached ones counted)."""
        self._started = time.monotonic()
        self.interruption = run.interruption
        if self.spool is not None and not self.dry_run:
            self.pending = self.spool.load()
        self.pages = run.pages
        jobs: list[Job] = []
        keys: set[str] = set()
        self._planned = len(run.targets)
        looked_at = 0
        # a batch of pages at a time, let go after it (what the plan changed written then);
        # a page whose record's fields and stored input hash say it is cached: neither
        # its record nor its content decoded
        for targets in run.target_batches(CONTENTS_PER_READ):
            if self.interrupted:
                break
            found = run.pages.record_fields(targets, CACHE_FIELDS)
            hashes = run.pages.input_hashes([key for key, fields in found.items() if fields is not None])
            rest = []
            for key, fields in found.items():
                if fields is not None:
                    looked_at += 1
                    if not self.cached_by_fields(key, fields, hashes.get(key)):
                        rest.append(key)
            for batch in run.pages.batches(rest):
                for view in batch:
                    job = self.plan_page(view)
                    if job is not None:
                        job.duplicate = job.key in keys
                        keys.add(job.key)
                        jobs.append(job)
        if self.interrupted:
            self._left(self._planned - looked_at, planned=False)
        missing = self._planned - looked_at if not self.interrupted else 0
        if missing:
            self.stats.inc_value("extraction/missing_content", missing)
            logger.warning("No stored record for %(n)s of this run; not extracted", {"n": plural(missing, "page")})
        return jobs

    async def run(self, jobs: list[Job]) -> None:
        if self.dry_run:
            self.dry_run_summary(jobs)
            return
        if jobs and self.pages is not None:
            self.pages.read_ahead(job.url_hash for job in jobs)  # read a batch at a time
        if jobs and self.store_failed:
            self._left(len(jobs), planned=True)
        elif jobs and self.inline:
            for index, job in enumerate(jobs):  # pure computation, planned this instant
                if self._no_more_calls():
                    if self.stopped is None:
                        self._left(len(jobs) - index, planned=True)
                    break
                await self.run_job(job)
        elif jobs:
            await self.run_jobs(jobs)
        if self.pages is not None:
            self.pages.read_ahead(())
        figures = {
            "total": plural(self._planned, "page"),
            "secs": time.monotonic() - self._started,
            "calls": plural(self.stats.get_value("extraction/calls", 0), "extractor call"),
        }
        if self.stopped is None:
            logger.info("Extraction phase: %(total)s in %(secs).1fs, %(calls)s", figures)
            return
        self._stopped_with(sum(1 for job in jobs if job.url_hash not in self.done), figures)

    def _stopped_with(self, left: int, figures: dict[str, Any]) -> None:
        """The extractor became unavailable (:meth:`_stop`) and ``left`` planned pages
        have no extraction: the next run extracts them (what was extracted is kept).
        The run is partial, and failed: ``scrapy crawl`` (``scrapy process``) exits 1."""
        self.stats.inc_value("extraction/left", left)
        reason = f"{EXTRACTION_STOPPED}: {plural(left, 'page')} left for the next run"
        self.cache.run.mark_incomplete(reason)
        self.cache.run.failed = self.cache.run.failed or reason
        logger.warning(
            "Extraction stopped after %(secs).1fs, %(calls)s: %(left)d of %(total)s left for the next run",
            {**figures, "left": left},
        )

    def report(self, report: dict[str, Any]) -> None:
        report["extractor"] = self.extractor_id
        report["empty_pages"] = list(self.empty_pages)
        self.add_token_figures(report)

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

    # -- calls -----------------------------------------------------------------

    async def run_jobs(self, jobs: list[Job]) -> None:
        finished = await run_calls(
            jobs,
            self.run_job,
            concurrency=self.concurrency,
            stopped=self._no_more_calls,
            interruption=self.interruption,
            logger=logger,
            interval=self.progress_interval,
            terminal=sys.stderr if self.progress_interval and sys.stderr.isatty() else None,
            note=getattr(self.extractor, "progress_note", None),
        )
        if self.interrupted or self.store_failed:
            self._left(len(jobs) - finished, planned=True)

    def _left(self, count: int, *, planned: bool) -> None:
        """An interruption (or a store that failed to write) left ``count`` pages
        (planned calls, or pages not yet looked at) for the next run, which finds them
        as they are now."""
        if count <= 0:
            return
        self.stats.inc_value("extraction/left", count)
        why = "interrupted" if self.interrupted or not self.store_failed else "stopped, the cache cannot be written"
        logger.warning(
            "Extraction %(why)s: %(n)d %(what)s left for the next run",
            {"why": why, "n": count, "what": "planned calls" if planned else "pages not yet looked at"},
        )

    def cached_by_fields(self, url_hash: str, fields: tuple[Any, ...], input_hash: str | None) -> bool:
        """The page's extraction is cached, as :meth:`plan_page` would find, said by
        :data:`CACHE_FIELDS` of its record and the hash of its input the store keeps
        (:meth:`PageViews.input_hashes`) alone: counted as a cache hit, neither its record
        nor its content decoded (the tokens it saves, for an extractor with a token
        estimate, are the record's). False (planned as usual) whenever that needs more: an
        unknown hash, a forced, invalidated, expired or spooled page, one marked empty, a
        token estimate the record does not have."""
        input_key_of, failed, empty, invalidated, last_extracted, tokens = fields
        if (  # (a field set in any way: planned as usual, which reads it as plan_page does)
            input_hash is None
            or not input_key_of
            or failed is not None
            or empty is not None
            or invalidated
            or (self.estimate is not None and not isinstance(tokens, int))
            or self.force
            or url_hash in self.cache.run.forced
            or url_hash in self.pending
            or extracted_too_long_ago(last_extracted, url_hash, self.max_age_days)
        ):
            return False
        if input_key_of != input_key(self.extractor.name, self.extractor.version, input_hash):
            return False
        self.stats.inc_value("extraction/cache_hits")
        if self.estimate is not None:
            self.stats.inc_value("extraction/tokens_estimate_saved_unchanged", tokens)
        return True

    def plan_page(self, view: PageView) -> Job | None:
        """The call this page needs, or None: its extraction is cached, found on disk
        (:meth:`_adopt`), or there is nothing to extract."""
        record = view.record
        content = view.content
        if content is None:
            self.stats.inc_value("extraction/missing_content")
            logger.warning("No stored content for page %(h)s; not extracted", {"h": view.url_hash})
            return None
        text = view.text
        if not text.strip():
            self.empty_input(view)
            return None
        if ledger.empty_input(record, empty=False):  # it has text again
            view.changed()
        key = input_key(self.extractor.name, self.extractor.version, view.input_hash)
        forced = self.force or view.url_hash in self.cache.run.forced or self._invalidated_or_expired(view)
        # an answer a run could not write (the spool) is newer than what the record points to
        kept = self.pending.get(view.url_hash, {}).get("input_key") == key
        if not forced and not kept and cached(view.record, key):
            self.stats.inc_value("extraction/cache_hits")
            unchanged = True
        else:
            unchanged = not forced and self._adopt(view, key)
        if unchanged:
            if self.estimate is not None:
                extraction = view.record["extraction"]
                if "tokens_estimate" not in extraction:
                    # (kept with the extraction from now on: the next runs need not read the text)
                    extraction["tokens_estimate"] = self.estimate(record["url"], text)
                    view.changed()
                self.stats.inc_value("extraction/tokens_estimate_saved_unchanged", extraction["tokens_estimate"])
            return None
        job = Job(view.url_hash, key, forced=forced)
        if self.estimate is not None:
            if self.dry_run:
                job.tokens = self.estimate(record["url"], text)
            raw = content.get("text", "")
            if self.use_clean and isinstance(raw, str) and raw != text:
                job.boilerplate_tokens = self.estimate(record["url"], raw) - self.estimate(record["url"], text)
        return job

    def empty_input(self, view: PageView) -> None:
        """A page with nothing to send (its main content came out empty, or all of it is
        the domain's boilerplate): not sent, but never silently: counted, listed in the
        run report (``empty_pages``), marked in its record for ``scrapy cache ls --empty``."""
        self.stats.inc_value("extraction/empty_input")
        record = view.record
        url = str(record.get("url", view.url_hash))
        if len(self.empty_pages) < EMPTY_PAGES_LISTED:
            self.empty_pages.append(url)
        content = view.content
        all_boilerplate = content is not None and bool(content["text"].strip())
        # no INFO line per page: the summary line counts them, `scrapy cache ls --empty` lists them
        logger.debug(
            "Nothing to extract from %(url)s (%(why)s): not sent",
            {"url": url, "why": "all of its text is the site's boilerplate" if all_boilerplate else "no main content"},
        )
        if ledger.empty_input(record, empty=True):
            view.changed()

    async def run_job(self, job: Job) -> None:
        """Call the extractor for one planned page, its record and input read again
        (with the next pages', :meth:`PageViews.read_ahead`), and let go once done
        (its record written)."""
        assert self.pages is not None
        view = self.pages.get(job.url_hash)
        if view is None:  # (deleted since the plan: `scrapy cache` runs in another process)
            self.stats.inc_value("extraction/missing_content")
            return
        try:
            await self._run_job(job, view)
        finally:
            self.cache.wrote(self.pages.release([view]))

    async def _run_job(self, job: Job, view: PageView) -> None:
        """A page whose input another page of the run has (a mirror) first looks again
        for an extraction of it made since the page was planned (earlier in this phase,
        or being made right now)."""
        if job.duplicate and not job.forced:
            await self.claims.finished(job.key)
            if self._adopt(view, job.key):
                self.done.add(job.url_hash)
                return
        if self._no_more_calls():
            return  # a call started now could not be written: the page waits for the next run
        try:
            claimed = self.claims.claim(job.key)
        except CacheStorageError as exc:
            self._store_error(exc)
            return
        if not claimed:
            # another process of a shared store extracts this input right now: it writes
            # the extraction, the next run finds it
            self.stats.inc_value("extraction/claimed_elsewhere")
            logger.info("%(url)s is being extracted by another process: skipped", {"url": view.record["url"]})
            return
        with self.claims.held(job.key, release_failed=self._store_error):
            # on a shared store another process may have written it since the plan
            if self.shared_store and not job.forced and self._adopt(view, job.key):
                self.done.add(job.url_hash)
            else:
                await self._extract(job, view)

    async def _extract(self, job: Job, view: PageView) -> None:
        self.stats.inc_value("extraction/calls")
        try:
            data = await self._call(view.record["url"], view.text)
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
            self._failed(view, job.key, exc)
            return
        self._save(view, job.key, mask_data(data))  # an answer may echo a key: never stored
        self.done.add(job.url_hash)
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
        """A dry run: what this run would have sent, and nothing sent."""
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
            "Dry run: the extractor would be called for %(n)s%(tokens)s; nothing was sent",
            {
                "n": plural(len(jobs), "page"),
                "tokens": f", about {tokens:,} prompt tokens (estimate)" if tokens is not None else "",
            },
        )

    def _invalidated_or_expired(self, view: PageView) -> bool:
        if view.record.get("invalidated"):
            self.stats.inc_value("extraction/invalidated")
            return True
        if expired(view.record, view.url_hash, self.max_age_days):
            self.stats.inc_value("extraction/expired")
            return True
        return False

    def _adopt(self, view: PageView, key: str) -> bool:
        """Use an extraction already on disk for this input: this page's own (a run
        killed after writing the file, before the index), or another URL's (a moved
        or mirrored page), or a finished call the store could not take (:class:`Spool`)."""
        kept = self.pending.get(view.url_hash)
        if kept is not None and kept.get("input_key") == key and not self.store_failed and self._store(view, kept):
            self.pending.pop(view.url_hash, None)
            self.stats.inc_value("extraction/recovered")
            self.stats.inc_value("extraction/recovered_pending")
            self.stats.inc_value("extraction/cache_hits")
            self._index(view, kept)  # type: ignore[arg-type]
            return True
        own = self.store.read_extraction(view.url_hash)
        if own is not None and own.get("input_key") == key:
            self.stats.inc_value("extraction/recovered")
            self.stats.inc_value("extraction/cache_hits")
            self._index(view, own)  # type: ignore[arg-type]
            return True
        other = self.store.find_extraction(key)
        if other is None or other == view.url_hash:
            return False
        data = self.store.read_extraction(other)
        if data is None or data.get("input_key") != key:
            return False
        self.stats.inc_value("extraction/reused")
        self.stats.inc_value("extraction/cache_hits")
        logger.debug(
            "Reusing the extraction of %(other)s for %(url)s", {"other": data.get("url"), "url": view.record["url"]}
        )
        self._save(view, key, data.get("data", {}), reused_from=data.get("url"))
        return True

    async def _call(self, url: str, text: str) -> dict[str, Any]:
        return await call_extractor(
            self.extractor, url, text, is_async=self.is_async, inline=self.inline, timeout=self.timeout
        )

    def _save(self, view: PageView, key: str, data: dict[str, Any], reused_from: str | None = None) -> None:
        record = view.record
        extraction: Extraction = {
            "url": record["url"],
            "url_hash": view.url_hash,
            "title": record.get("title", ""),
            "extractor": self.extractor_id,
            "input_hash": view.input_hash,
            "input_key": key,
            "extracted_at": utcnow(),
            "data": data,
        }
        if reused_from:
            extraction["reused_from"] = reused_from
        if self._store(view, dict(extraction)):
            self._index(view, extraction)

    def _store(self, view: PageView, extraction: dict[str, Any]) -> bool:
        """Write an extraction: the file first, then the index (a crash between the two
        is recovered by :meth:`_adopt`). When the store refuses it, the answer is kept in
        the spool for the next run (a paid call is never thrown away) and no call is
        started after this one; False."""
        try:
            self.store.write_extraction(view.url_hash, extraction)
            self.store.link_extraction(extraction["input_key"], view.url_hash)
        except (CacheStorageError, OSError) as exc:
            self._store_error(exc)
            kept = self.spool.keep(view.url_hash, extraction) if self.spool is not None else None
            if kept is not None:
                self.stats.inc_value("extraction/kept_pending")
                logger.warning(
                    "Extraction of %(url)s kept in %(path)s: the next run adopts it without a call",
                    {"url": extraction.get("url"), "path": kept},
                )
            else:
                self.stats.inc_value("extraction/lost")
                logger.error(
                    "Extraction of %(url)s could not be written nor kept: the next run calls again",
                    {"url": extraction.get("url")},
                )
            return False
        if self.spool is not None and view.url_hash in self.pending:  # adopted, or a newer answer
            self.spool.drop(view.url_hash)
        return True

    def _store_error(self, exc: BaseException) -> None:
        """The store failed: the cache is marked failed (the run partial, the crawl or
        processing stops starting calls)."""
        if self.cache.failed is None:
            message = str(exc) if isinstance(exc, CacheStorageError) else f"Writing an extraction failed ({exc})"
            self.cache.storage_error("write", mask_error(message))

    def _index(self, view: PageView, extraction: Extraction) -> None:
        """The page record points to ``extraction``: written when the stages end (a
        kill before that finds the file, :meth:`_adopt`). A page this run recorded
        unchanged is listed in its change list (:func:`crawler.incremental.ledger.paid_status`)."""
        when = extraction.get("extracted_at") or utcnow()
        reference = extraction_ref(view.url_hash, extraction)
        if self.estimate is not None:  # (what a recrawl that finds it unchanged counts as saved)
            reference["tokens_estimate"] = self.estimate(view.record["url"], view.text)
        recorded = view.url_hash in self.cache.run.seen  # (a shared run's: what its processes recorded)
        status = ledger.extracted(view.record, reference, extraction["input_hash"], when, recorded=recorded)
        if status is not None:
            self.stats.inc_value(f"extraction/listed_{status}")  # (the report counts it new or changed)
        view.changed()
        self.cache.wrote(2)

    def _failed(self, view: PageView, key: str, exc: BaseException) -> None:
        record = view.record
        message = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        message = mask_error(message)  # an endpoint's error may echo a key: never stored
        self.stats.inc_value("extraction/errors")
        logger.error("Extraction failed for %(url)s: %(error)s", {"url": record["url"], "error": message})
        ledger.extraction_failed(record, message, key, utcnow())
        view.changed()
        self.cache.wrote()
