"""The docs spider's sitemap discovery: each site's robots.txt ``Sitemap:`` lines and
``/sitemap.xml``, sitemap indexes followed, and the pages a sitemap lists requested as
the crawl drains its queue (at most :data:`LISTED_BATCH` of them put in the scheduler
at once, or, read first, as start requests made as the downloader has room; the others
wait as URLs, :class:`~crawler.spiders.listed.ListedPages`).

A base class of :class:`~crawler.spiders.docs.DocsSpider`, not an object beside it: the
shared frontier serializes a request's callback as a method of the spider, and what
it counts is the spider's (``docs/sitemap*``). Scrapy's ``SitemapSpider`` is not used:
its requests have no errback, so a failed sitemap would leave the run complete.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sized
from typing import TYPE_CHECKING
from urllib.parse import urljoin, urlsplit

import scrapy
from scrapy import signals
from scrapy.http import Request, XmlResponse
from scrapy.spidermiddlewares.httperror import HttpError
from scrapy.utils.gz import gunzip, gzip_magic_number
from scrapy.utils.sitemap import Sitemap, sitemap_urls_from_robots
from twisted.python.failure import Failure

from crawler.meta import META_LINKED_FROM
from crawler.spiders.failures import failure_reason

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterator

    from scrapy.http import Response

    from crawler.incremental.spiderport import SpiderPort
    from crawler.spiders.listed import ListedPages

SITEMAP_MAX_BYTES = 50 * 1024 * 1024
#: the most page requests for sitemap entries put in Scrapy's scheduler at once: the
#: others wait as URLs (:class:`~crawler.spiders.listed.ListedPages`) until the
#: scheduler is empty and the downloader has room (``scheduler_empty``). Not a setting:
#: a batch is many times any downloader's concurrency (so the downloader never waits
#: for the next one) and its requests a few MB (a queued request held about 5 KB), the
#: same for every site; nothing a user would tune. A shared-frontier run puts them all
#: in the run's queue at once (in Redis, not this process, and its peers must see them
#: to know the run is not done).
LISTED_BATCH = 1000


class SitemapDiscovery(scrapy.Spider):
    """Reads robots.txt and sitemaps (callbacks :meth:`parse_robots` and
    :meth:`parse_sitemap`, errback :meth:`ignore`) for the pages they list, and requests
    those pages as the crawl drains its queue (:meth:`request_listed`: when a sitemap is
    read, on Scrapy's ``scheduler_empty`` and at the spider's idle check).
    The spider says which URLs are its own (:meth:`in_crawl_scope`), which listed pages
    wait (:meth:`listed_pages`) and what a listed page becomes (:meth:`listed_page`)."""

    #: all the spider asks of the crawl's cache and run (the spider's)
    cache: SpiderPort
    #: the sitemaps are read before any page is requested, their lastmods noted for the
    #: revisit schedule (the spider's)
    sitemaps_first: bool
    #: a shared-frontier run (the spider's): the listed pages all go to the run's queue
    shared_run: bool
    #: the pages the sitemaps listed that wait to be requested (the spider's)
    listed: ListedPages

    def in_crawl_scope(self, url: str) -> bool:
        raise NotImplementedError

    def left_out(self, url: str, depth: int, *, listed: bool = False) -> None:
        """A URL (here a sitemap's entry, at depth 1) the crawl's rules leave out: not
        requested (the spider counts those its path scope leaves out)."""
        raise NotImplementedError

    def listed_pages(self, urls: list[str]) -> list[str]:
        """Of the pages a sitemap lists in this crawl's scope, those that wait to be
        requested (:meth:`listed_page` later), each URL as it will be requested."""
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
        """A sitemap index's sitemaps; a sitemap's pages in the crawl's scope wait in
        :attr:`listed` (their lastmods noted first, with the revisit schedule), the first
        of them put in the scheduler now if it has room (:meth:`request_listed`)."""
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
        listed: list[str] = []
        for entry in sitemap:
            loc = entry.get("loc")
            if not loc:
                continue
            loc = absolute_url(response.url, loc)
            if sitemap.type == "sitemapindex":
                yield self.sitemap_request(loc)
            elif sitemap.type == "urlset":
                if not self.in_crawl_scope(loc):
                    self.left_out(loc, 1, listed=True)
                    continue
                if self.sitemaps_first:  # (the revisit schedule's)
                    self.cache.note_lastmod(loc, entry.get("lastmod"))
                listed.append(loc)
        if listed:
            self.crawler.stats.inc_value("docs/sitemap_urls", len(listed))
            # (read first, from start(): no Referer would name the sitemap)
            self.listed.add(self.listed_pages(listed), None if self.sitemaps_first else response.url)
            if not self.request_listed():
                self._count_waiting()

    def listed_requests(self) -> Iterator[Request]:
        """Requests for the pages waiting in :attr:`listed`, in the order listed, while
        the scheduler holds fewer than :data:`LISTED_BATCH` requests (all of them in a
        shared-frontier run); none while the sitemaps are read first. A page
        ``max_pages`` leaves no room for is held by its budget, as a link is."""
        if not self.listed or not self.listed.open:
            return
        room = self._listed_room()
        while room is None or room > 0:
            entry = self.listed.pop()
            if entry is None:
                return
            url, linking = entry
            request = self.listed_page(url)
            if request is None:
                continue
            if linking is not None:
                # (given to the engine, not output by a callback: no Referer names the sitemap)
                request.meta[META_LINKED_FROM] = linking
            if room is not None:
                room -= 1
            yield request

    def _listed_room(self) -> int | None:
        """How many listed pages may be put in the scheduler now: :data:`LISTED_BATCH`
        less the requests it holds; None (all) in a shared-frontier run."""
        if self.shared_run:
            return None
        engine = self.crawler.engine if self.crawler.crawling else None
        scheduler = engine.scheduler if engine is not None else None
        if scheduler is None:
            return LISTED_BATCH
        if isinstance(scheduler, Sized):
            return max(0, LISTED_BATCH - len(scheduler))
        return 0 if scheduler.has_pending_requests() else LISTED_BATCH

    def request_listed(self) -> bool:
        """The next listed pages put in the scheduler (:meth:`listed_requests`), through
        the engine: each is in it when the next is made, so the room counts it (a
        callback's or start()'s output is scheduled later, as Scrapy takes it); whether
        any was (none without a running crawl)."""
        if not self.listed or not self.listed.open:
            return False
        engine = self.crawler.engine if self.crawler.crawling else None
        if engine is None or engine.spider is None:
            return False
        made = False
        for request in self.listed_requests():
            engine.crawl(request)
            made = True
        self._count_waiting()
        return made

    async def listed_start(self) -> AsyncIterator[Request]:
        """The listed pages as start requests (the sitemaps read first), in the order
        listed, each made once the downloader has room: while it has none, the
        scheduler is let empty first (Scrapy's lazy start requests), so it holds a few of
        them at a time. All at once in a shared-frontier run."""
        engine = self.crawler.engine if self.crawler.crawling else None
        while self.listed:
            if engine is not None and not self.shared_run and engine.needs_backout():
                await self.crawler.signals.wait_for(signals.scheduler_empty)
            entry = self.listed.pop()
            if entry is None:
                break
            self._count_waiting()
            request = self.listed_page(entry[0])
            if request is not None:
                yield request

    def _count_waiting(self) -> None:
        """The listed pages waiting now (``docs/sitemap_urls_waiting``: the progress
        line counts them as known)."""
        self.crawler.stats.set_value("docs/sitemap_urls_waiting", len(self.listed))

    def scheduler_empty(self) -> None:
        """Scrapy's ``scheduler_empty``: the downloader has room and the scheduler gave it
        all it had; the next listed pages go in."""
        self.request_listed()

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

    async def read_sitemaps(self, sites: list[str]) -> None:
        """Reads each site's robots.txt and sitemaps before any page is requested, so
        that the revisit schedule knows every listed page's lastmod when it decides
        whether to request it; the pages they list wait in :attr:`listed`, closed until
        the caller opens it. (Through the engine, as the site stylesheets: downloader
        middlewares and settings apply, no scheduler.)"""
        self.listed.open = False
        queue: deque[Request] = deque()
        for site in sites:
            robots = Request(f"{site}/robots.txt", callback=self.parse_robots, errback=self.ignore)
            response = await self._discover(robots)
            if response is not None:
                queue.extend(self.parse_robots(response))
            queue.append(self.sitemap_request(f"{site}/sitemap.xml"))
        read: set[str] = set()
        while queue:
            request = queue.popleft()
            if request.url in read:
                continue
            read.add(request.url)
            response = await self._discover(request)
            if response is not None:
                # (a sitemap index's sitemaps: the pages wait, the listed pages closed)
                queue.extend(self.parse_sitemap(response))

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


def absolute_url(base: str, loc: str) -> str:
    """A sitemap entry's URL: absolute, as the protocol asks (``urljoin`` only for one
    that is not, which costs as much as the rest of an entry's reading).

    >>> absolute_url("http://a/sitemap.xml", " http://a/x "), absolute_url("http://a/s/sitemap.xml", "x")
    ('http://a/x', 'http://a/s/x')
    """
    loc = loc.strip()
    if loc.startswith(("http://", "https://")):
        return loc
    return urljoin(base, loc)
