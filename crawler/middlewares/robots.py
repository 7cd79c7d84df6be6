"""Downloader middleware: each site's robots.txt downloaded once per crawl process.

Scrapy's RobotsTxtMiddleware (its rules) and the docs spider (its ``Sitemap:`` lines)
both request robots.txt; without this a site saw two requests, and one that did not
answer cost its timeout and retries twice. :class:`RobotsTxtOnce` (right after
RobotsTxtMiddleware, :data:`PRIORITY`) answers the second request with the first one's
response (``robotstxt_shared``) or error, once. Off without ``ROBOTSTXT_OBEY``. What is
kept is bounded (:data:`KEPT_SITES`, :data:`KEPT_BYTES`). See docs/meta-keys.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from scrapy.exceptions import IgnoreRequest, NotConfigured

from crawler.meta import FLAG_ROBOTSTXT_SHARED

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from scrapy.statscollectors import StatsCollector

#: right after Scrapy's RobotsTxtMiddleware (100): a request it let through meets its download
PRIORITY = 101
#: the downloads kept for a second asker: the most recent sites' ...
KEPT_SITES = 32
#: ... and only a robots.txt body up to this size (Google reads the first 500 KiB)
KEPT_BYTES = 512 * 1024


def robots_key(request: Request) -> str | None:
    """The robots.txt URL a request asks for (the first URL of a redirected one), else None.

    >>> from scrapy import Request
    >>> robots_key(Request("https://a.example/robots.txt?x=1")), robots_key(Request("https://a.example/"))
    ('https://a.example/robots.txt', None)
    >>> robots_key(Request("https://b.example/robots.txt", meta={"redirect_urls": ["http://a.example/robots.txt"]}))
    'http://a.example/robots.txt'
    """
    parsed = urlsplit(request.meta.get("redirect_urls", [request.url])[0])
    if parsed.path != "/robots.txt":
        return None
    return f"{parsed.scheme}://{parsed.netloc}/robots.txt"


class RobotsTxtOnce:
    """Answers a second request for a robots.txt with what RobotsTxtMiddleware's download got."""

    def __init__(self, stats: StatsCollector) -> None:
        self.stats = stats
        #: robots.txt URL -> the response or the error RobotsTxtMiddleware's download ended
        #: in, oldest first (at most KEPT_SITES)
        self._kept: dict[str, Response | Exception] = {}

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RobotsTxtOnce:
        if not crawler.settings.getbool("ROBOTSTXT_OBEY"):
            raise NotConfigured("RobotsTxtOnce is off: ROBOTSTXT_OBEY is False")
        assert crawler.stats is not None
        return cls(crawler.stats)

    @staticmethod
    def _rules_download(request: Request) -> str | None:
        """The robots.txt URL of RobotsTxtMiddleware's own request, else None."""
        return robots_key(request) if request.meta.get("dont_obey_robotstxt") else None

    async def process_request(self, request: Request) -> Response | None:
        key = robots_key(request)
        if key is None or request.meta.get("dont_obey_robotstxt") or key not in self._kept:
            return None
        kept = self._kept.pop(key)  # once: RobotsTxtMiddleware and the spider ask once each
        self.stats.inc_value("robots/shared")
        if isinstance(kept, Exception):
            reason = next(iter(str(kept).splitlines()), "").strip()
            raise IgnoreRequest(f"its download failed earlier in this crawl: {type(kept).__name__} {reason}".strip())
        # already retried (a 5xx) and redirected by the download it comes from
        request.meta["dont_retry"] = True
        return kept.replace(request=request, flags=[*kept.flags, FLAG_ROBOTSTXT_SHARED])

    async def process_response(self, request: Request, response: Response) -> Response:
        if (key := self._rules_download(request)) is not None and len(response.body) <= KEPT_BYTES:
            self._keep(key, response)
        return response

    async def process_exception(self, request: Request, exception: Exception) -> None:
        if (key := self._rules_download(request)) is not None and not isinstance(exception, IgnoreRequest):
            self._keep(key, exception)

    def _keep(self, key: str, outcome: Response | Exception) -> None:
        self._kept.pop(key, None)
        self._kept[key] = outcome
        while len(self._kept) > KEPT_SITES:
            del self._kept[next(iter(self._kept))]  # the oldest: a site the spider did not ask about
