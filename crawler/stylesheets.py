"""What the stylesheets a page links on its own site hide, each fetched once per crawl."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Self
from urllib.parse import urlsplit

from scrapy import Request
from scrapy.exceptions import DownloadCancelledError, IgnoreRequest, NotConfigured
from scrapy.http import TextResponse
from scrapy.utils.response import get_base_url
from twisted.internet.defer import CancelledError

from crawler.config import typed
from crawler.http import content_type
from crawler.lib.css import NO_RULES, HiddenRules, parse_hidden_rules, stylesheet_links
from crawler.meta import META_DONT_REVALIDATE

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from scrapy.crawler import Crawler
    from scrapy.http import HtmlResponse, Response
    from scrapy.settings import BaseSettings
    from scrapy.statscollectors import StatsCollector

logger = logging.getLogger(__name__)

#: bytes; a larger stylesheet is not read (``download_maxsize`` of its request)
MAX_BYTES = 2 * 1024 * 1024
#: the stylesheets read per page, the first in document order
MAX_PER_PAGE = 10
#: times a crawl a stylesheet that failed for a reason that may pass is tried
MAX_TRIES = 3
#: seconds a stylesheet's download may take (pages wait for it)
STYLESHEET_TIMEOUT = 30
#: statuses that may not last: a stylesheet answered so may be read next crawl
PASSING_STATUSES = frozenset({408, 429, 500, 502, 503, 504})


class SiteStylesheets:
    """The rules (:class:`crawler.lib.css.HiddenRules`) of the stylesheets a page links,
    for the converter's ``site_rules``: text a site's own stylesheet hides (Doxygen's
    code tooltips) is no text a reader sees. Off with ``MARKDOWN_SITE_STYLESHEETS = False``.

    Each stylesheet is fetched once per crawl through the engine, never as a page
    (``dont_revalidate``, ``render: False``); a failure is no error of the crawl
    (``stylesheets/failed``), but a failure that may pass leaves the page's rules incomplete,
    so the page is parsed again next crawl. Only the page's own host's stylesheets are
    fetched: other hosts are outside the crawl's ``allowed_domains``, a framework's rules
    hide states its scripts show, and a third party's changes would change the markdown
    when the site did not.
    """

    def __init__(
        self,
        download: Callable[[Request], Awaitable[Response]],
        stats: StatsCollector,
        *,
        max_bytes: int = MAX_BYTES,
        max_per_page: int = MAX_PER_PAGE,
    ) -> None:
        self.download = download
        self.stats = stats
        self.max_bytes = max_bytes
        self.max_per_page = max_per_page
        #: stylesheet URL -> its rules, fetched (or being fetched) this crawl; ``None``:
        #: not read for a reason that may pass (tried again by a later page, up to
        #: :data:`MAX_TRIES` times a crawl)
        self.fetched: dict[str, asyncio.Future[HiddenRules | None]] = {}
        self.tries: dict[str, int] = {}

    @staticmethod
    def enabled(settings: BaseSettings) -> bool:
        """Whether ``settings`` turn it on (``MARKDOWN_SITE_STYLESHEETS``): part of the
        converter's identity, known before the crawl starts."""
        return typed(settings).getbool("MARKDOWN_SITE_STYLESHEETS")

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        if not cls.enabled(crawler.settings):
            raise NotConfigured("Site stylesheets are off: MARKDOWN_SITE_STYLESHEETS is False")
        engine = crawler.engine
        return cls(engine.download_async, crawler.stats)

    def links(self, response: HtmlResponse) -> list[str]:
        """The stylesheets of ``response``'s page this reads: those that apply on a
        screen, on the page's own host, the first :attr:`max_per_page`."""
        host = urlsplit(response.url).hostname
        urls = stylesheet_links(response.selector.root, get_base_url(response))
        own = [url for url in urls if urlsplit(url).scheme in ("http", "https") and urlsplit(url).hostname == host]
        return own[: self.max_per_page]

    async def rules(self, urls: list[str]) -> tuple[HiddenRules, bool]:
        """The rules of the stylesheets ``urls``, merged (as one stylesheet of them
        all), and whether they are complete: no stylesheet failed for a reason that may
        pass."""
        if not urls:
            return NO_RULES, True
        futures = [self._rules_of(url) for url in urls]
        pending = [future for future in futures if not future.done()]
        if pending:
            # (asyncio.wait: a page whose callback is cancelled does not cancel the
            # downloads other pages wait for)
            await asyncio.wait(pending)
        each = [future.result() for future in futures]
        merged = NO_RULES
        for rules in each:
            merged = merged.merged(NO_RULES if rules is None else rules)
        return merged, None not in each

    def _rules_of(self, url: str) -> asyncio.Future[HiddenRules | None]:
        future = self.fetched.get(url)
        if future is not None and future.done() and future.result() is None and self.tries.get(url, 0) < MAX_TRIES:
            future = None  # it failed for a reason that may pass: a later page tries again
        if future is None:
            self.tries[url] = self.tries.get(url, 0) + 1
            future = self.fetched[url] = asyncio.ensure_future(self._fetch(url))
        return future

    async def _fetch(self, url: str) -> HiddenRules | None:
        try:
            return await self._read(url)
        except Exception as exc:  # noqa: BLE001 - a stylesheet that cannot be read hides nothing
            return self._failed(url, f"{type(exc).__name__}: {exc}")

    async def _read(self, url: str) -> HiddenRules | None:
        meta = {
            META_DONT_REVALIDATE: True,
            "render": False,
            "download_maxsize": self.max_bytes,
            # not a page: one try, soon given up (a page waits for it), never an error
            "dont_retry": True,
            "download_timeout": STYLESHEET_TIMEOUT,
        }
        try:
            response = await self.download(Request(url, meta=meta))
        except Exception as exc:  # noqa: BLE001 - a stylesheet that failed hides nothing
            # refused (robots.txt, offsite) or too large: so it stays; else it may pass
            lasting = isinstance(exc, (IgnoreRequest, DownloadCancelledError, CancelledError))
            reason = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            return self._failed(url, reason, lasting=lasting)
        if response.status != 200:
            return self._failed(url, f"HTTP {response.status}", lasting=response.status not in PASSING_STATUSES)
        media_type = content_type(response)
        if media_type != b"text/css":
            return self._failed(url, f"not CSS ({media_type.decode('latin-1') or 'no Content-Type'})")
        text = response.text if isinstance(response, TextResponse) else response.body.decode("utf-8", "replace")
        self.stats.inc_value("stylesheets/fetched")
        rules = parse_hidden_rules(text)
        count = sum(len(found) for table in (rules.by_class, rules.by_id, rules.by_tag) for found in table.values())
        logger.debug("Stylesheet %(url)s read: %(count)s rules hide text", {"url": url, "count": count})
        return rules

    def _failed(self, url: str, reason: str, *, lasting: bool = True) -> HiddenRules | None:
        self.stats.inc_value("stylesheets/failed")
        logger.debug("Stylesheet %(url)s not read, taken as hiding nothing: %(reason)s", {"url": url, "reason": reason})
        return NO_RULES if lasting else None
