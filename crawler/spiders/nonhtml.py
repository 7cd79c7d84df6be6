"""Page requests answered with a declared non-HTML type are not downloaded.

The docs spider skips linked files (a ``.yml``, a tarball) anyway, so their bodies need
not be read: :class:`NonHtmlStop` stops the download once the headers declare a type
that is not HTML (``StopDownload(fail=False)``; the response has an empty body and
``download_stopped``). No Content-Type counts as HTML. Only the docs spider's page
requests (those carrying ``docs_depth``) are stopped; handlers that do not send
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
