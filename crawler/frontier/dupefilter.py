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

    - Keyed by the project's page identity (:func:`crawler.identity.page_key` of the
      canonical URL, 20 bytes), not by scrapy-redis's own URL hash, nor by
      ``REQUEST_FINGERPRINTER_CLASS``: ``/guide``, ``/guide/`` and
      ``/guide?utm_source=x`` are one page, fetched once. A redirect to another
      spelling of a URL of its own chain (``/guide`` -> ``/guide/``) is that page's
      own request, never a duplicate. (Requests other than a GET without a body are
      keyed by the crawler's request fingerprinter.)
    - Scoped to the run: the seen set is ``frontier:{FRONTIER_RUN}:seen``, which
      expires a few days after the run's last activity; the next run (another
      FRONTIER_RUN) requests every page again, conditionally.
    - RedirectAwareDupeFilter's check, across processes: a redirect dropped as a
      duplicate whose target no response came for, in any process of the run (a
      shared set of pages reached), is a warning and makes the run partial; checked
      when the run's frontier is empty.
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
        self.reached = self.frontier.reached_among(candidates) if candidates else set()
        if self.frontier.lost is not None:
            return []  # unknown: another process may have reached them
        return super().unreached()

    def spider_idle(self) -> None:
        if self.frontier.lost is not None:
            return
        if self.dropped_redirects and self.frontier.drained():  # every response of the run is in
            super().spider_idle()

    def close(self, reason: str) -> None:
        """The seen set is the run's: it stays (and expires with the run)."""
