"""The docs spider's sitemap discovery: each site's robots.txt ``Sitemap:`` lines and
``/sitemap.xml``, sitemap indexes followed, and the pages a sitemap lists requested.

A base class of :class:`~crawler.spiders.docs.DocsSpider`, not an object beside it: the
shared frontier serializes a request's callback as a method of the spider, and what
it counts is the spider's (``docs/sitemap*``). Scrapy's ``SitemapSpider`` is not used:
its requests have no errback, so a failed sitemap would leave the run complete.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import urljoin, urlsplit

import scrapy
from scrapy.http import Request, XmlResponse
from scrapy.spidermiddlewares.httperror import HttpError
from scrapy.utils.gz import gunzip, gzip_magic_number
from scrapy.utils.sitemap import Sitemap, sitemap_urls_from_robots
from twisted.python.failure import Failure

from crawler.spiders.failures import failure_reason

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterator

    from scrapy.http import Response

    from crawler.incremental.spiderport import SpiderPort

SITEMAP_MAX_BYTES = 50 * 1024 * 1024


class SitemapDiscovery(scrapy.Spider):
    """Reads robots.txt and sitemaps (callbacks :meth:`parse_robots` and
    :meth:`parse_sitemap`, errback :meth:`ignore`) for the pages they list. The spider
    says which URLs are its own (:meth:`in_crawl_scope`) and what a listed page becomes
    (:meth:`listed_page`)."""

    #: all the spider asks of the crawl's cache and run (the spider's)
    cache: SpiderPort
    #: the sitemaps are read before any page is requested, their lastmods noted for the
    #: revisit schedule (the spider's)
    sitemaps_first: bool

    def in_crawl_scope(self, url: str) -> bool:
        raise NotImplementedError

    def left_out(self, url: str, depth: int, *, listed: bool = False) -> None:
        """A URL (here a sitemap's entry, at depth 1) the crawl's rules leave out: not
        requested (the spider counts those its path scope leaves out)."""
        raise NotImplementedError

    def listed_page(self, url: str) -> Request | None:
        """The request for a page a sitemap lists, in this crawl's scope; None for none."""
        raise NotImplementedError

    def discovery_requests(self, site: str) -> list[Request]:
        """The requests for a site's robots.txt and ``/sitemap.xml``, after its pages."""
        robots = Request(f"{site}/robots.txt", callback=self.parse_robots, errback=self.ignore, priority=-1)
        return [robots, self.sitemap_request(f"{site}/sitemap.xml")]

    def sitemap_request(self, url: str) -> Request:
        # a sitemap may be 50 MB (its protocol's limit), more than DOWNLOAD_MAXSIZE
        meta = {"download_maxsize": SITEMAP_MAX_BYTES}
        return Request(url, callback=self.parse_sitemap, errback=self.ignore, priority=-1, meta=meta)

    def parse_robots(self, response: Response) -> Iterator[Request]:
        for url in sitemap_urls_from_robots(response.body, base_url=response.url):
            yield self.sitemap_request(url)

    def parse_sitemap(self, response: Response) -> Iterator[Request]:
        body = self._sitemap_body(response)
        if body is None:
            return
        try:
            sitemap = Sitemap(body)
        except Exception as exc:  # noqa: BLE001
            self.crawler.stats.inc_value("docs/sitemap_malformed")
            self.logger.warning("Unreadable sitemap %(url)s: %(exc)s", {"url": response.url, "exc": exc})
            return
        self.crawler.stats.inc_value("docs/sitemaps")
        for entry in sitemap:
            loc = entry.get("loc")
            if not loc:
                continue
            loc = urljoin(response.url, loc.strip())
            if sitemap.type == "sitemapindex":
                yield self.sitemap_request(loc)
            elif sitemap.type == "urlset":
                if not self.in_crawl_scope(loc):
                    self.left_out(loc, 1, listed=True)
                    continue
                self.crawler.stats.inc_value("docs/sitemap_urls")
                if self.sitemaps_first:  # (the revisit schedule's)
                    self.cache.note_lastmod(loc, entry.get("lastmod"))
                if (request := self.listed_page(loc)) is not None:
                    yield request

    def _sitemap_body(self, response: Response) -> bytes | None:
        if isinstance(response, XmlResponse):
            return response.body
        if gzip_magic_number(response):
            try:
                return gunzip(response.body, max_size=SITEMAP_MAX_BYTES)
            except Exception:  # noqa: BLE001
                return None
        if response.url.endswith((".xml", ".xml.gz")) and response.body.lstrip().startswith(b"<"):
            return response.body
        return None

    async def _sitemaps_first(self, sites: list[str]) -> AsyncIterator[Request]:
        """Reads each site's robots.txt and sitemaps before any page is requested, so
        that the revisit schedule knows every listed page's lastmod when it decides
        whether to request it; then the pages they list. (Through the engine, as the
        site stylesheets: downloader middlewares and settings apply, no scheduler.)"""
        queue: list[Request] = []
        for site in sites:
            robots = Request(f"{site}/robots.txt", callback=self.parse_robots, errback=self.ignore)
            response = await self._discover(robots)
            if response is not None:
                queue.extend(self.parse_robots(response))
            queue.append(self.sitemap_request(f"{site}/sitemap.xml"))
        read: set[str] = set()
        while queue:
            request = queue.pop(0)
            if request.url in read:
                continue
            read.add(request.url)
            response = await self._discover(request)
            if response is None:
                continue
            for output in self.parse_sitemap(response):
                if output.callback == self.parse_sitemap:
                    queue.append(output)
                else:
                    yield output

    async def _discover(self, request: Request) -> Response | None:
        """A discovery download (robots.txt, a sitemap) through the engine: its 200
        response, else None (handled as the errback ``ignore`` handles a failure)."""
        assert self.crawler.engine is not None
        try:
            response = await self.crawler.engine.download_async(request)
        except Exception as exc:  # noqa: BLE001 - a failed discovery never stops the crawl
            failure = Failure(exc)  # type: ignore[no-untyped-call]
            failure.request = request  # type: ignore[attr-defined]  # (as Scrapy's errbacks get it)
            self.ignore(failure)
            return None
        if response.status >= 500:
            self._discovery_failed(request.url, f"status {response.status}")
        return response if 200 <= response.status < 300 else None

    def ignore(self, failure: Failure) -> None:
        """Discovery requests (robots.txt, sitemaps) may fail: most sites lack one (a
        4xx, ignored). A server error (5xx) or a download that failed otherwise (too
        large, cancelled, a lost connection) may hide the pages only that sitemap
        lists: the run is partial."""
        error = failure.value
        if isinstance(error, HttpError) and error.response.status < 500:
            return
        request = getattr(failure, "request", None)
        url = request.url if request is not None else "?"
        reason = f"status {error.response.status}" if isinstance(error, HttpError) else failure_reason(error)
        self._discovery_failed(url, reason, error)

    def _discovery_failed(self, url: str, reason: str, error: BaseException | None = None) -> None:
        """robots.txt or a sitemap failed: the pages only it lists may be missed, the run
        is partial; said as what failed (``robots.txt failed``, ``Sitemap failed``)."""
        what = "robots.txt" if urlsplit(url).path == "/robots.txt" else "Sitemap"
        self.crawler.stats.inc_value("docs/sitemap_failed")
        self.cache.mark_incomplete(f"{what.lower()} failed")
        self.logger.warning(
            "%(what)s failed: %(url)s: %(reason)s", {"what": what, "url": url, "reason": reason, "exception": error}
        )
