"""What the docs spider makes of a page request that failed (its errback): a page gone
from the site, a broken link, or a failed page that makes the run partial; and why a
download failed, said in one line.

:class:`PageFailures` is a base class of :class:`~crawler.spiders.docs.DocsSpider`, as
:class:`~crawler.spiders.discovery.SitemapDiscovery` is: an errback is serialized as a
method of the spider, and what it counts is the spider's (``docs/``).
"""

from __future__ import annotations

from http import HTTPStatus
from typing import TYPE_CHECKING, Any

import scrapy
from scrapy.exceptions import DownloadCancelledError, IgnoreRequest
from scrapy.http import Request
from scrapy.spidermiddlewares.httperror import HttpError
from twisted.internet.defer import CancelledError

from crawler.meta import FLAG_REVISIT_SKIPPED, META_DEPTH, META_LINKED_FROM, META_RECHECK, revalidation
from crawler.spiders.brokenlinks import linking_page

if TYPE_CHECKING:
    from scrapy.http import Response
    from twisted.python.failure import Failure

    from crawler.identity import PageIdentity
    from crawler.incremental.spiderport import SpiderPort
    from crawler.spiders.brokenlinks import BrokenLinks
    from crawler.spiders.budget import PageBudget


def too_large(error: BaseException | None) -> bool:
    """Whether a download failed for its size: Scrapy cancels a body that grows past
    ``DOWNLOAD_MAXSIZE`` (``DownloadCancelledError`` with no message: Twisted's
    ``CancelledError`` wrapped), refuses one whose Content-Length is larger
    (``DownloadCancelledError`` saying so), and HttpCompressionMiddleware ignores one
    whose decompressed size is (``IgnoreRequest`` naming ``DOWNLOAD_MAXSIZE``)."""
    if isinstance(error, (CancelledError, DownloadCancelledError)):
        return True
    return isinstance(error, IgnoreRequest) and "DOWNLOAD_MAXSIZE" in str(error)


def failure_reason(error: BaseException | None) -> str:
    """One line saying why a page failed; never empty.

    >>> failure_reason(DownloadCancelledError())
    'cancelled: response larger than DOWNLOAD_MAXSIZE (DownloadCancelledError)'
    >>> failure_reason(ValueError("bad\\ncall log"))
    'ValueError: bad'
    >>> failure_reason(TimeoutError())
    'TimeoutError'
    """
    name = type(error).__name__
    message = next(iter(str(error).strip().splitlines()), "").strip()  # a browser's error has a call log
    if not message and isinstance(error, (CancelledError, DownloadCancelledError)):
        # a timeout is a DownloadTimeoutError: what cancels a download without a word
        # is the body growing past DOWNLOAD_MAXSIZE
        return f"cancelled: response larger than DOWNLOAD_MAXSIZE ({name})"
    return f"{name}: {message}" if message else name


def start_answer(error: BaseException | None) -> str:
    """What a start URL that gave no page answered, for the line that says so.

    >>> from scrapy.http import Request, Response
    >>> start_answer(HttpError(Response("http://a/en/", status=404, request=Request("http://a/en/")), ""))
    'answered 404 Not Found'
    >>> start_answer(ConnectionRefusedError("Connection refused"))
    'failed: ConnectionRefusedError: Connection refused'
    """
    if isinstance(error, HttpError):
        status = error.response.status
        try:
            phrase = HTTPStatus(status).phrase
        except ValueError:
            phrase = ""
        return f"answered {status} {phrase}".rstrip()
    return f"failed: {failure_reason(error)}"


#: the broken links the run's one line names (all are counted)
BROKEN_LINKS_NAMED = 3


def broken_links_line(listed: list[dict[str, Any]], count: int) -> str:
    """The run's one line of broken links: how many, the first few with the page that
    links each ("" for none). One line a run, not one a link: the same links are found
    again every run until the site fixes them.

    >>> broken_links_line([{"url": "http://a/x", "status": 404, "linked_from": "http://a/"}], 1)
    'Broken link, not found (404/410 for a page never seen): http://a/x (linked from http://a/)'
    >>> listed = [{"url": f"http://a/{n}", "status": 404, "linked_from": None} for n in range(5)]
    >>> print(broken_links_line(listed, 12))  # doctest: +NORMALIZE_WHITESPACE
    12 broken links, not found (404/410 for a page never seen): http://a/0 (linked from no known page),
    http://a/1 (linked from no known page), http://a/2 (linked from no known page) and 9 more
    (the run report's broken_links)
    """
    if not count:
        return ""
    named = ", ".join(
        f"{link['url']} (linked from {link.get('linked_from') or 'no known page'})"
        for link in listed[:BROKEN_LINKS_NAMED]
    )
    more = count - min(count, len(listed), BROKEN_LINKS_NAMED)
    what = "Broken link" if count == 1 else f"{count} broken links"
    return f"{what}, not found (404/410 for a page never seen): {named}" + (
        f" and {more} more (the run report's broken_links)" if more else ""
    )


class PageFailures(scrapy.Spider):
    """The errback of the page requests (:meth:`failed`), the broken links it lists for
    the run report (:meth:`run_report`), and the known broken links whose 404 was
    replayed, asked for again when the run may have missed a page through one
    (:meth:`_recheck_missing`)."""

    #: the spider's: all it asks of the crawl's cache and run, canonical URLs, the
    #: ``max_pages`` budget
    cache: SpiderPort
    identity: PageIdentity
    budget: PageBudget
    #: the spider's: the links to pages never seen that answered 404 or 410
    broken_links: BrokenLinks
    #: the spider's: known broken links answered with their 404 this run, not asked for
    #: (the revisit schedule's): url_hash -> (URL, depth, linking page)
    missing_replayed: dict[str, tuple[str, int, str | None]]
    #: the spider's: start URL -> what it answered (a start URL that gave no page)
    start_failures: dict[str, str]

    def in_crawl_scope(self, url: str) -> bool:
        raise NotImplementedError

    def failed(self, failure: Failure) -> None:
        request = getattr(failure, "request", None)
        url = request.url if request is not None else "?"
        error = failure.value
        self.budget.came_to_nothing()
        start = request is not None and request.meta.get(META_DEPTH) == 0 and not request.meta.get(META_RECHECK)
        if start:
            self._start_failed(url, error)
        if isinstance(error, HttpError) and error.response.status in (404, 410):
            verdict = revalidation(request.meta) if request is not None else None
            if verdict is not None and verdict.status == "gone":
                # a page the cache has, answered 404/410: removed from the site
                self.crawler.stats.inc_value("docs/gone_pages")
                self.logger.info("Gone (%(status)s): %(url)s", {"status": error.response.status, "url": url})
            elif not start:  # (a start URL is linked from no page: said above)
                # a link to a page that never was (or was never recorded): a broken link,
                # counted once whatever the spelling of its URL (/x/ and /x: one page)
                status = error.response.status
                linked_from = linking_page(request) if request is not None else None
                known = FLAG_REVISIT_SKIPPED in error.response.flags  # not asked for again yet
                if known and request is not None:
                    depth = request.meta.get(META_DEPTH, 1)
                    self.missing_replayed[self.identity.url_hash(url)] = (url, depth, linked_from)
                if not self.broken_links.note(url, status, linked_from):
                    return
                self.crawler.stats.inc_value("docs/not_found_pages")
                self.logger.debug(  # one INFO line at the end counts them all (broken_links_line)
                    "Broken link, not found (%(status)s%(known)s): %(url)s (linked from %(page)s)",
                    {
                        "status": status,
                        "known": ", known: not asked for again yet" if known else "",
                        "url": url,
                        "page": linked_from or self._no_referer(request),
                    },
                )
            return
        # a page that failed may hide the pages only it links to: no removals this run
        self.crawler.stats.inc_value("docs/failed_pages")
        self.cache.mark_incomplete("failed pages")
        if too_large(error):
            self.crawler.stats.inc_value("docs/too_large")
        if not start:
            self.logger.warning(
                "Page failed: %(url)s: %(error)s", {"url": url, "error": failure_reason(error), "exception": error}
            )

    def _start_failed(self, url: str, error: BaseException | None) -> None:
        """A start URL gave no page: the run is partial (the pages only it links to are
        not reached), and failed when no page at all is recorded (ReportStage says so,
        with what each start URL answered)."""
        answer = start_answer(error)
        self.start_failures[url] = answer
        self.cache.mark_incomplete(f"start page {url} {answer}")
        self.logger.warning("Start page %(url)s %(answer)s", {"url": url, "answer": answer, "exception": error})

    @staticmethod
    def _no_referer(request: Request | None) -> str:
        """What linked a request without a ``Referer``: the start URLs, or no known page
        (a sitemap read before the crawl, a ``REFERRER_POLICY`` that sends none)."""
        return "a start URL" if request is not None and request.meta.get(META_DEPTH, 0) == 0 else "no known page"

    def _found_after_all(self, response: Response) -> None:
        """A known broken link whose 404 was replayed earlier this run, asked for again,
        answered (a page, a redirect to one, a file): no broken link."""
        asked = [*response.meta.get("redirect_urls", ()), response.url][0]  # (the URL asked for first)
        if self.broken_links.forget(asked):
            self.crawler.stats.inc_value("docs/not_found_pages", -1)
            self.logger.info("Known broken link answered after all: %(url)s", {"url": asked})

    def _recheck_missing(self) -> bool:
        """A page the cache knows that this run has not reached may be reached now only
        through a link known as broken (a new hub page, the old way to it changed or
        gone): then every known broken link replayed this run is asked for before the
        run ends, so no page is marked removed for not being reached while a replayed
        404 hid it. Whether any was asked for."""
        if not self.missing_replayed or not self.cache.unreached(self.in_crawl_scope):
            return False
        engine = self.crawler.engine
        assert engine is not None
        self.budget.sent(len(self.missing_replayed))
        for url, depth, linking in self.missing_replayed.values():
            meta: dict[str, Any] = {META_DEPTH: depth, META_RECHECK: True}
            if linking is not None:
                meta[META_LINKED_FROM] = linking  # (engine.crawl: no spider middleware sets a Referer)
            engine.crawl(Request(url, callback=self.parse, errback=self.failed, meta=meta, dont_filter=True))
        self.missing_replayed.clear()
        return True

    def run_report(self, cache: Any, report: dict[str, Any]) -> None:
        """The run report's ``broken_links``: the first broken links, each with its page;
        and ``start_failed``: what each start URL that gave no page answered."""
        report["broken_links"] = self.broken_links.listed()
        if line := broken_links_line(
            self.broken_links.listed(), int(self.crawler.stats.get_value("docs/not_found_pages", 0))
        ):
            self.logger.info("%(line)s", {"line": line})
        report["start_urls"] = list(self.start_urls)
        report["start_failed"] = dict(self.start_failures)
