"""The duplicate filter: Scrapy's, plus a check that no page is lost to it silently."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Self

from scrapy import Request, signals
from scrapy.dupefilters import RFPDupeFilter

from crawler.cache import peek_cache
from crawler.lib.keyset import FixedKeySet

if TYPE_CHECKING:
    from scrapy import Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Response

logger = logging.getLogger(__name__)

INCOMPLETE_REASON = "redirects dropped as duplicates of pages never reached"


class RedirectAwareDupeFilter(RFPDupeFilter):
    """Scrapy's ``RFPDupeFilter`` (``DUPEFILTER_CLASS``) that accounts for the
    redirects it drops.

    A redirect whose target was requested before is dropped silently by Scrapy, even when
    that earlier request never reached a page (``/p/1 -> /p/1?r=1 -> /p/1``); a crawl
    counted complete would then mark ``/p/1`` removed. So each dropped redirect is counted
    (``dupefilter/redirect_filtered``), and at idle a target no response came for is warned
    about (``dupefilter/redirect_unreached``) and makes the run partial.

    The fingerprints of the requests made are held compactly (:class:`FixedKeySet`,
    about 27 bytes each, not 105), and of them only those no response came for yet are
    held apart (``unanswered``): a crawl's memory grows by its requests' count, little
    by what it keeps of each.
    """

    crawler: Crawler | None = None

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        # (Scrapy's set, filled from the JOBDIR's requests.seen, moved into a compact one)
        self.seen = FixedKeySet(self._fingerprints)
        self._fingerprints = set()
        #: fingerprint of a dropped redirect's target -> (its URL, where its chain began)
        self.dropped_redirects: dict[bytes, tuple[str, str]] = {}
        #: fingerprint of a URL a dropped redirect chain went through -> its targets
        self.leads_to: dict[bytes, set[bytes]] = {}
        #: fingerprints of the requests made that no response came for, directly or as
        #: a redirect to another (in flight, failed or dropped by a middleware)
        self.unanswered: set[bytes] = set()

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        dupefilter = super().from_crawler(crawler)
        dupefilter.crawler = crawler
        crawler.signals.connect(dupefilter.response_received, signal=signals.response_received)
        crawler.signals.connect(dupefilter.spider_idle, signal=signals.spider_idle)
        return dupefilter

    def request_seen(self, request: Request) -> bool:
        fingerprint = self._fingerprint(request)
        if not self.seen.add(fingerprint):
            return True
        self.unanswered.add(fingerprint)
        if self.file:
            self.file.write(len(fingerprint).to_bytes(2, "big") + fingerprint)  # (Scrapy's JOBDIR format)
        return False

    def log(self, request: Request, spider: Spider) -> None:
        super().log(request, spider)
        chain = request.meta.get("redirect_urls") or []
        if not request.meta.get("redirect_times") and not chain:
            return
        self._inc("dupefilter/redirect_filtered")
        target = self._fingerprint(request)
        self.dropped_redirects.setdefault(target, (request.url, chain[0] if chain else "?"))
        for url in chain:
            self.leads_to.setdefault(self._url_fingerprint(url), set()).add(target)
        logger.debug(
            "Redirect to %(url)s (from %(origin)s) dropped as a duplicate",
            {"url": request.url, "origin": chain[0] if chain else "?"},
        )

    def response_received(self, response: Response, request: Request) -> None:
        self.unanswered.discard(self._fingerprint(request))
        if self.unanswered and (chain := request.meta.get("redirect_urls")):
            self.unanswered.difference_update(self._url_fingerprint(url) for url in chain)

    def unreached(self) -> list[bytes]:
        """The dropped redirects' targets that no response came for, directly or by a
        redirect of their own that was dropped as a duplicate of a page reached."""
        candidates = {*self.dropped_redirects, *self.leads_to}
        return self.unreached_given({fp for fp in candidates if fp in self.seen and fp not in self.unanswered})

    def unreached_given(self, reached: set[bytes]) -> list[bytes]:
        """:meth:`unreached`, ``reached`` being those of the dropped redirects' targets
        and chains' URLs that a response came for."""
        reached = set(reached)
        grew = True
        while grew:
            grew = False
            for source, targets in self.leads_to.items():
                if source not in reached and targets & reached:
                    reached.add(source)
                    grew = True
        return [fp for fp in self.dropped_redirects if fp not in reached]

    def spider_idle(self) -> None:
        for fingerprint in self.unreached():
            url, origin = self.dropped_redirects.pop(fingerprint)
            self._inc("dupefilter/redirect_unreached")
            logger.warning(
                "Page never reached: the redirect from %(origin)s to %(url)s was dropped as a duplicate "
                "of a request that got no response of its own (a redirect loop?); the crawl is partial",
                {"origin": origin, "url": url},
            )
            cache = peek_cache(self.crawler) if self.crawler is not None else None
            if cache is not None:
                cache.run.mark_incomplete(INCOMPLETE_REASON)

    def _url_fingerprint(self, url: str) -> bytes:
        return self.fingerprinter.fingerprint(Request(url))

    def _inc(self, stat: str) -> None:
        if self.crawler is not None and self.crawler.stats is not None:
            self.crawler.stats.inc_value(stat)
