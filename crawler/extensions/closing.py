"""The processing after a crawl: the stages of ``PROCESSING_STAGES``, in order."""

from __future__ import annotations

import inspect
import logging
from typing import TYPE_CHECKING, Any, cast

from scrapy import signals
from scrapy.exceptions import NotConfigured
from scrapy.utils.misc import build_from_crawler

from crawler import signals as crawler_signals
from crawler.cache import cache_for
from crawler.cache.run_report import build_run_report
from crawler.choices import run_choices
from crawler.config import load_named, removed_setting_error, typed, unknown_settings, user_set
from crawler.incremental.revisit import older
from crawler.incremental.schedule import idle_revisit_settings
from crawler.stages import BUDGET, PageViews, Stage, StageRun
from crawler.support.interrupt import Interruption
from crawler.support.mistakes import Mistake

if TYPE_CHECKING:
    from collections.abc import Callable

    from scrapy import Spider
    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings
    from scrapy.signalmanager import SignalManager
    from scrapy.statscollectors import StatsCollector

    from crawler.cache import Cache
    from crawler.frontier.runpart import RunPart

logger = logging.getLogger(__name__)

#: stats that mean some page may not have been reached (a page the cache failed to
#: record marks the run incomplete itself: Ledger.not_recorded)
INCOMPLETE_STATS = ("retry/max_reached",)
#: stat prefixes that mean the same: a server error given up on, a crashed callback
INCOMPLETE_PREFIXES = ("httperror/response_ignored_status_count/5", "spider_exceptions/")


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


def setting_mistakes(settings: BaseSettings) -> list[Mistake]:
    """The settings the user set that the crawl ignores: a misspelt name (this
    project's or Scrapy's), a ``REVISIT_*`` setting while the schedule is off. The crawl
    warns of each and counts them in its summary line and run report; the cron wrapper
    refuses to start with one.

    >>> from scrapy.settings import Settings
    >>> mistakes = setting_mistakes(Settings({"DOWNLOAD_DELAYY": 1, "REVISIT_MIN_INTERVAL": 2}, priority="cmdline"))
    >>> [mistake.line for mistake in mistakes]  # doctest: +NORMALIZE_WHITESPACE
    ['Unknown setting DOWNLOAD_DELAYY, ignored (did you mean DOWNLOAD_DELAY?)',
     'REVISIT_MIN_INTERVAL is set but REVISIT_ENABLED is off: ignored']
    """
    mistakes = [Mistake("setting", name, meant=close) for name, close in unknown_settings(user_set(settings))]
    mistakes.extend(Mistake("setting", name, why="REVISIT_ENABLED is off") for name in idle_revisit_settings(settings))
    return mistakes


def build_stages(crawler: Crawler) -> list[Stage]:
    """The stages of ``PROCESSING_STAGES``, in order; those that raise
    ``NotConfigured`` are off for this run."""
    stages: list[Stage] = []
    for path in typed(crawler.settings).getlist("PROCESSING_STAGES"):
        try:
            stage = build_from_crawler(load_named("PROCESSING_STAGES", path), crawler)
        except NotConfigured as exc:
            if exc.args:
                logger.info("%(why)s", {"why": exc.args[0]})
            continue
        if not isinstance(stage, Stage):
            raise ValueError(f"PROCESSING_STAGES: {path!r} is not a stage (name, plan, run, report)")
        stages.append(stage)
    return stages


class ClosingStages:
    """Runs the stages of ``PROCESSING_STAGES`` (removal, boilerplate, extraction,
    vector sync, report) when the spider closes, once every page of the crawl is
    recorded; ``scrapy process`` runs them without crawling (its spider says which
    stages and pages: ``processing``).

    Each stage plans, then runs, in order; then each adds its report section. The
    pages are read once for all stages (:class:`crawler.stages.PageViews`) and what
    they changed is written at the end. SIGINT/SIGTERM while they run: no new
    extractor call, calls in flight may finish for ``EXTRACTOR_INTERRUPT_WAIT``
    seconds, the report says interrupted and the crawl exits 130/143.
    """

    def __init__(
        self,
        cache: Cache,
        stages: list[Stage],
        stats: StatsCollector,
        *,
        use_clean: bool,
        interrupt_wait: float,
        budget: int = BUDGET,
        signals: SignalManager | None = None,
        part_of_run: bool = False,
    ) -> None:
        self.cache = cache
        self.stages = stages
        self.stats = stats
        self.use_clean = use_clean
        self.interrupt_wait = interrupt_wait
        #: what the stages' views hold of the pages at once (PROCESSING_MEMORY_MB)
        self.budget = budget
        self.signals = signals
        #: a crawl process of a shared-frontier run (FRONTIER_ENABLED): it records its
        #: pages and its report; the run's processing (``scrapy process --run``) runs
        #: the other stages once for the whole run
        self.part_of_run = part_of_run
        #: the run's summary line, logged last (engine_stopped)
        self.summary = ""

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> ClosingStages:
        if removed := removed_setting_error(crawler.settings):
            raise ValueError(removed)
        run_choices(crawler)  # a wrong -a redo= or -a dry_run= stops the crawl here
        mistakes = setting_mistakes(crawler.settings)
        for mistake in mistakes:  # otherwise ignored without a word
            logger.warning("%(mistake)s", {"mistake": mistake.line})
        settings = typed(crawler.settings)
        interrupt_wait = settings.getfloat("EXTRACTOR_INTERRUPT_WAIT")
        if interrupt_wait < 0:
            raise ValueError(f"EXTRACTOR_INTERRUPT_WAIT must be >= 0 seconds, got {interrupt_wait!r}")
        memory = settings.getfloat("PROCESSING_MEMORY_MB")
        if not memory > 0:
            raise ValueError(
                f"PROCESSING_MEMORY_MB must be more than 0 (MB the stages hold of the pages), got {memory!r}"
            )
        stages = build_stages(crawler)
        assert crawler.stats is not None
        cache = cache_for(crawler)
        for mistake in mistakes:  # the summary line and the run report count them
            cache.run.note_mistake(mistake)
        extension = cls(
            cache,
            stages,
            crawler.stats,
            use_clean=settings.getbool("BOILERPLATE_ENABLED"),
            interrupt_wait=interrupt_wait,
            budget=int(memory * 1024 * 1024),
            signals=crawler.signals,
            part_of_run=settings.getbool("FRONTIER_ENABLED"),
        )
        crawler.signals.connect(extension.spider_closed, signal=signals.spider_closed)
        crawler.signals.connect(extension.engine_stopped, signal=signals.engine_stopped)
        return extension

    def engine_stopped(self) -> None:
        if self.summary:
            logger.info("%(summary)s", {"summary": self.summary})

    async def spider_closed(self, spider: Spider, reason: str) -> None:
        # SIGINT/SIGTERM from here on: no new extractor call, the calls in flight finish
        # (or are given up), the report says interrupted and the crawl exits non-zero
        def note(signame: str) -> None:
            # the one record of the interruption: the stages, the run report and the
            # exit status all read it
            self.cache.run.interrupted = signame

        with Interruption(self.interrupt_wait, what="extractor calls in flight", on_signal=note) as interruption:
            try:
                await self.close(spider, reason, interruption)
            except Exception as exc:
                # (an extraction file that cannot be written: a full disk...) the crawl
                # exits 1 and says why; what was stored before stays
                self.cache.run.failed = f"the closing stage failed: {type(exc).__name__}: {exc}"
                logger.exception("The closing stage failed; no run report was written")

    def start(self, spider: Spider, reason: str, interruption: Interruption | None) -> StageRun:
        """This run of the stages: at a crawl's close, or ``scrapy process``'s."""
        pages = PageViews(self.cache.store, use_clean=self.use_clean, budget=self.budget, wrote=self.cache.wrote)
        processing = getattr(spider, "processing", None)
        if processing is None:
            reasons = incomplete_reasons(reason, self.stats.get_stats(), self.cache.run.incomplete_reasons)
            return StageRun(
                self.cache,
                pages,
                complete=not reasons,
                reasons=reasons,
                in_scope=crawl_scope(spider),
                interruption=interruption,
            )
        run_part = processing.get("run")
        if run_part is not None:  # scrapy process --run: the pages of a shared-frontier run
            return self.start_run(processing, run_part, reason, pages, interruption)
        # scrapy process: every live stored page (of --domain), nothing fetched
        domains = set(processing.get("domains") or ()) or None
        live = list(pages.heads(domains))
        self.cache.run.domains.update(head.domain for head in live)
        self.stats.set_value("process/pages", len(live))
        reasons = [] if reason == "finished" else [f"finish reason {reason}"]
        return StageRun(
            self.cache,
            pages,
            mode="process",
            complete=not reasons,
            reasons=reasons,
            selected=[head.url_hash for head in live],
            domain_filter=domains,
            interruption=interruption,
        )

    def start_run(
        self,
        processing: dict[str, Any],
        part: RunPart,
        reason: str,
        pages: PageViews,
        interruption: Interruption | None,
    ) -> StageRun:
        """The stages on what every crawl process of a run recorded, as at the close of
        one crawl of it all: the run's pages, what was found gone, its domains, and the
        processes' counts for the report; complete only when every process finished."""
        state = self.cache.run
        state.run_id = str(processing["run_id"])
        state.seen.update(dict.fromkeys(sorted(part.pages)))
        state.gone.update(part.gone)
        state.domains.update(part.domains)
        state.forced.update(part.forced)
        for name, value in part.counts.items():
            self.stats.set_value(name, value)
        # what the revisit schedule did in the processes, for the report (their
        # observations are in the hosts' trust already: run_recorded is a crawl's)
        state.revisit.skipped.update(part.revisit_skipped)
        state.revisit.sampled.update(part.revisit_sampled)
        for oldest in part.revisit_oldest:
            state.revisit.oldest_verified = older(state.revisit.oldest_verified, oldest)
        state.revisit.add_tally(part.revisit_tally)
        reasons = list(processing.get("reasons") or ()) + ([] if reason == "finished" else [f"finish reason {reason}"])
        left_out = part.out_of_scope
        return StageRun(
            self.cache,
            pages,
            mode="run",
            complete=not reasons,
            reasons=reasons,
            in_scope=(lambda url: url not in left_out) if left_out else None,
            interruption=interruption,
        )

    def selected_stages(self, spider: Spider, run: StageRun) -> list[Stage]:
        processing = getattr(spider, "processing", None)
        if processing is None:
            if self.part_of_run:  # the run's processing runs the others, once
                return [stage for stage in self.stages if stage.name == "report"]
            return self.stages
        names = set(processing.get("stages") or ())
        crawled = run.mode == "run"  # a whole run's evidence: removal may run
        return [
            stage
            for stage in self.stages
            if (crawled or not getattr(stage, "needs_crawl", False))
            and (not names or stage.name in names or stage.name == "report")
        ]

    async def close(self, spider: Spider, reason: str, interruption: Interruption | None = None) -> None:
        run = self.start(spider, reason, interruption)
        for mistake in getattr(spider, "input_mistakes", ()):  # its arguments' (DocsSpider)
            self.cache.run.note_mistake(mistake)
        for why in run.reasons:  # every reason in the report (a dead process's, Scrapy's stats')
            self.cache.run.mark_incomplete(why)
        stages = self.selected_stages(spider, run)
        try:
            for stage in stages:
                if hasattr(stage, "interruption"):
                    stage.interruption = interruption
                plan = stage.plan(run)
                await stage.run(plan)
                # what it changed, written: the next stage's passes over every page
                # read the store (PageViews holds a bounded number of pages)
                self.cache.wrote(run.pages.flush())
        finally:
            # every record a stage changed, once; then the store's commit
            self.cache.wrote(run.pages.flush())
            self.cache.commit()
        if run.mode == "crawl" and self.signals is not None:
            await self.signals.send_catch_log_async(signal=crawler_signals.run_recorded, cache=self.cache, run=run)
        if run.pages.rereads:
            self.stats.set_value("stages/content_reread", run.pages.rereads)
        report = build_run_report(
            self.cache.run,
            self.stats.get_stats(),
            spider=spider.name or "",
            finish_reason=reason,
            # a reason found while the stages ran (the cache failed to write) makes it partial too
            complete=run.complete and not self.cache.run.incomplete_reasons,
            kind=run.mode,
        )
        for stage in stages:
            added = stage.report(report)
            if inspect.isawaitable(added):
                await added
            self.summary = getattr(stage, "summary", "") or self.summary


def crawl_scope(spider: Spider) -> Callable[[str], bool] | None:
    """The spider's ``in_crawl_scope(url)`` hook: pages its rules leave out are not
    marked removed."""
    hook = getattr(spider, "in_crawl_scope", None)
    return cast("Callable[[str], bool] | None", hook)
