"""Page requests answered with a declared non-HTML type are not downloaded.

A documentation site links to files as well as pages (a ``.yml``, a ``.json``, a
tarball without a known extension): the docs spider only skips them, so their bodies
are not read. Once a page request's response headers are in and declare a type that is
not HTML, :class:`NonHtmlStop` stops the download there (Scrapy's ``headers_received``
signal and ``StopDownload(fail=False)``): the response reaches the spider with its
headers, an empty body and Scrapy's ``download_stopped`` flag, and the spider skips it
as not HTML. A response without a Content-Type is read in full (it counts as HTML).

Only the docs spider's page requests (those carrying ``docs_depth``, and their
redirects and retries, which copy it) are stopped: never robots.txt, the sitemaps, the
site stylesheets, nor any request of another spider. Download handlers that do not send
``headers_received`` (the browser's) download as before.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Self

from scrapy import signals
from scrapy.exceptions import StopDownload

from crawler.http import declared_not_html
from crawler.meta import META_DEPTH

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Headers, Request


def page_request(request: Request) -> bool:
    """Whether ``request`` is one of the docs spider's page requests.

    >>> from scrapy import Request
    >>> page_request(Request("http://a/", meta={"docs_depth": 0})), page_request(Request("http://a/robots.txt"))
    (True, False)
    """
    return META_DEPTH in request.meta


class NonHtmlStop:
    """Stops the download of a page request's response declared not HTML, at its
    headers (the docs spider builds it: ``build_from_crawler(NonHtmlStop, crawler)``,
    and keeps it: the signal holds its handler weakly)."""

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        stop = cls()
        crawler.signals.connect(stop.headers_received, signal=signals.headers_received)
        return stop

    def headers_received(self, headers: Headers, body_length: int, request: Request, **kwargs: Any) -> None:
        """Scrapy 2.19's ``headers_received`` (``headers``, ``body_length``, ``request``,
        ``spider``): raises ``StopDownload(fail=False)`` for a page request whose
        response declares a type that is not HTML."""
        if page_request(request) and declared_not_html(headers):
            raise StopDownload(fail=False)
