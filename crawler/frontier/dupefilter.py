"""The duplicate filter of a shared-frontier run: the project's page identity, in Redis."""

from __future__ import annotations

from typing import TYPE_CHECKING, Self

from crawler.dupefilters import RedirectAwareDupeFilter
from crawler.frontier import Frontier
from crawler.identity import PageIdentity

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.http import Response


class RunDupeFilter(RedirectAwareDupeFilter):
    """The duplicate filter of every process of one run (``DUPEFILTER_CLASS``, set by
    the add-on with ``FRONTIER_ENABLED``): a request is a duplicate when its page was
    requested before in this run, by any process.

    Keyed by the project's page identity, not scrapy-redis's URL hash, so ``/guide`` and
    ``/guide/`` are one page fetched once (a redirect within its own chain is never a
    duplicate). The seen set (``frontier:{FRONTIER_RUN}:seen``) is the run's: the next run
    requests every page again, conditionally. A dropped redirect whose target no process
    reached makes the run partial, as in RedirectAwareDupeFilter. See docs/scaling.md.
    """

    frontier: Frontier
    identity: PageIdentity

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        frontier = Frontier.from_crawler(crawler)
        dupefilter = super().from_crawler(crawler)
        dupefilter.frontier = frontier
        dupefilter.identity = PageIdentity.from_crawler(crawler)
        return dupefilter

    def request_seen(self, request: Request) -> bool:
        fingerprint = self._fingerprint(request)
        chain = request.meta.get("redirect_urls") or []
        if chain and fingerprint in {self._url_fingerprint(url) for url in chain}:
            return False  # /guide -> /guide/: the same page, its own request
        return self.frontier.see(fingerprint)

    def _fingerprint(self, request: Request) -> bytes:
        if request.method != "GET" or request.body:
            return super()._fingerprint(request)
        return self._url_fingerprint(request.url)

    def _url_fingerprint(self, url: str) -> bytes:
        return bytes.fromhex(self.identity.url_hash(url))

    def response_received(self, response: Response, request: Request) -> None:
        chain = request.meta.get("redirect_urls") or []
        self.frontier.mark_reached([self._fingerprint(request), *(self._url_fingerprint(url) for url in chain)])

    def unreached(self) -> list[bytes]:
        candidates = list({*self.dropped_redirects, *self.leads_to})
        reached = self.frontier.reached_among(candidates) if candidates else set()
        if self.frontier.lost is not None:
            return []  # unknown: another process may have reached them
        return self.unreached_given(reached)

    def spider_idle(self) -> None:
        if self.frontier.lost is not None:
            return
        if self.dropped_redirects and self.frontier.drained():  # every response of the run is in
            super().spider_idle()

    def close(self, reason: str) -> None:
        """The seen set is the run's: it stays (and expires with the run)."""
