"""The removal stage: pages that are gone, and pages a complete crawl no longer reached."""

from __future__ import annotations

import logging
from collections import Counter, defaultdict
from typing import TYPE_CHECKING, Any

from crawler.cache.records import STATUS_REMOVED, utcnow
from crawler.cache.run_report import REMOVAL_HELD
from crawler.config import typed
from crawler.defaults import SETTINGS
from crawler.incremental import ledger

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector

    from crawler.stages import PageView, StageRun

logger = logging.getLogger(__name__)


#: a site's pages not reached are held only when there are at least this many: a small
#: site losing most of its few pages is a small site changing
MIN_HELD = 10


def _reachable(run: StageRun, domain: str, url: str) -> bool:
    """Whether this run could have reached the page: one of its domains, in its scope."""
    return domain in run.cache.run.domains and (run.in_scope is None or run.in_scope(url))


class RemovalStage:
    """Marks pages ``removed``: those that answered 404/410 this crawl and, after a
    complete crawl only, those of the crawled domains (and in the spider's scope) that
    the crawl no longer reached. It needs a crawl's evidence: ``scrapy process`` skips it.

    Not being reached is weak evidence when most of a site goes at once: a start page
    that answers 200 with a maintenance notice, a login wall or an empty shell reaches
    nothing, and the run is complete. So when a run would mark more than
    ``REMOVAL_MAX_SHARE`` of a site's live pages removed for not being reached (and at
    least :data:`MIN_HELD`), none of them is: the run is partial (``removal held``) and
    warns; a page that answered 404 or 410 is still removed (evidence).
    ``-s REMOVAL_MAX_SHARE=1`` lets one run remove them, after a real reorganisation.
    """

    name = "removal"
    needs_crawl = True

    def __init__(self, stats: StatsCollector, max_share: float = SETTINGS["REMOVAL_MAX_SHARE"]) -> None:
        if not 0 <= max_share <= 1:
            raise ValueError(f"REMOVAL_MAX_SHARE must be a share between 0 and 1, got {max_share!r}")
        self.stats = stats
        self.max_share = max_share
        self.removed = 0

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RemovalStage:
        assert crawler.stats is not None
        return cls(crawler.stats, typed(crawler.settings).getfloat("REMOVAL_MAX_SHARE"))

    def plan(self, run: StageRun) -> list[PageView]:
        """The pages to mark removed. One pass over the page table's columns (after a
        complete crawl) finds the live pages the run could have reached and did not,
        keeping their keys only; a view is read for each page that is then removed."""
        state = run.cache.run
        # a page seen this run is not gone, even if another spelling of its URL 404'd
        evidence = state.gone | state.folded_away  # removed in any run, complete or not
        unreached: dict[str, list[str]] = defaultdict(list)
        live: Counter[str] = Counter()  # the pages a complete run could have reached, by site
        if run.complete and state.domains:
            for head in run.pages.heads():
                reached = head.url_hash in state.seen  # (no scope check: it was crawled)
                if not reached and not _reachable(run, head.domain, head.url):
                    continue
                live[head.domain] += 1
                if not reached and head.url_hash not in evidence:
                    unreached[head.domain].append(head.url_hash)
        held = self._hold_mass_removal(run, {domain: len(keys) for domain, keys in unreached.items()}, live)
        planned = []
        for url_hash in sorted(key for key in evidence if key not in state.seen):
            view = run.pages.get(url_hash)
            if view is None or view.record.get("status") == STATUS_REMOVED:
                continue
            if url_hash in state.gone or str(view.record.get("domain")) not in held:
                planned.append(view)
        for domain in sorted(set(unreached) - held):
            planned.extend(view for key in sorted(unreached[domain]) if (view := run.pages.get(key)) is not None)
        planned.sort(key=lambda view: view.url_hash)
        if run.reasons:
            logger.info(
                "Incomplete crawl, no page marked removed for not being reached: %(r)s",
                {"r": "; ".join(run.reasons)},
            )
        self._run = run
        return planned

    def _hold_mass_removal(self, run: StageRun, unreached: dict[str, int], live: Counter[str]) -> set[str]:
        """The sites of which the pages not reached (``unreached``, by site) are more than
        ``max_share`` of their live pages (and at least :data:`MIN_HELD`): none of their
        pages not reached is removed; each said, and the run made partial."""
        if not unreached or self.max_share >= 1:
            return set()
        state = run.cache.run
        held = {domain: n for domain, n in unreached.items() if n >= MIN_HELD and n > self.max_share * live[domain]}
        for domain, n in sorted(held.items()):
            self.stats.inc_value("removal/held_pages", n)
            logger.warning(
                "%(n)d of the %(live)d pages of %(domain)s were not reached this run: none is marked removed "
                "(more than REMOVAL_MAX_SHARE=%(share)s of a site at once is more likely a start page that "
                "answered a notice, a login wall or an outage than a site that lost them; -s "
                "REMOVAL_MAX_SHARE=1 lets one run remove them)",
                {"n": n, "live": live[domain], "domain": domain, "share": self.max_share},
            )
            state.mark_incomplete(f"{REMOVAL_HELD}: {n} of {live[domain]} pages of {domain} not reached")
        return set(held)

    async def run(self, plan: list[PageView]) -> None:
        state = self._run.cache.run
        now = utcnow()
        for view in plan:
            ledger.removed(view.record, state.run_id, _reason(state, view.url_hash), now)
            view.changed()
            self.removed += 1
            self.stats.inc_value("removal/pages_removed")
            logger.info("Removed: %(url)s", {"url": view.record.get("url")})
        self._run.cache.wrote(len(plan))

    def report(self, report: dict[str, Any]) -> None:
        """``pages_removed`` is the run report's own (from ``removal/pages_removed``)."""


def _reason(state: Any, url_hash: str) -> str:
    """Why a page is removed: answered 404/410, found to be its directory's page (an
    index file spelling, :data:`crawler.incremental.ledger.FOLDED`), or not reached."""
    if url_hash in state.folded_away:
        return ledger.FOLDED
    return "gone" if url_hash in state.gone else "not reached"
