"""Downloader middleware: JavaScript pages rendered by a browser, and only when they changed."""

from __future__ import annotations

import hashlib
import logging
import re
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.exceptions import NotConfigured
from scrapy.http import Headers, HtmlResponse

from crawler import signals as crawler_signals
from crawler.cache import cache_for
from crawler.cache.store import RenderedPage, utcnow
from crawler.config import typed
from crawler.identity import PageIdentity
from crawler.lib.urls import in_domains

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from scrapy.statscollectors import StatsCollector

    from crawler.cache import Cache

logger = logging.getLogger(__name__)

#: below HttpCompressionMiddleware (590) and RedirectMiddleware (600): it sees
#: decompressed bodies (the raw hash is of the HTML, not of its gzip bytes) and final
#: responses only; above RetryMiddleware (550): a failed rendering is counted first
PRIORITY = 580
HTML_TYPES = (b"text/html", b"application/xhtml+xml")
#: response headers kept with a rendering
KEPT_HEADERS = ("Content-Type", "Content-Language")
WAIT_UNTIL = ("commit", "domcontentloaded", "load", "networkidle")
FLAG_REPLAYED = "render_replayed"
#: dedup's flags of a replayed raw page -> the reason no rendering was needed
REPLAY_REASONS = {"dedup_not_modified": "304", "dedup_recheck_skipped": "recheck_skipped"}
#: meta keys of the raw request that must not reach the browser's request
DROPPED_META = ("dedup_conditional", "dedup_url_hash", "render_check")


class RenderMiddleware:
    """Renders the pages in scope with a browser (scrapy-playwright), once per change.

    Each page in scope is first downloaded as usual (a conditional request when
    DedupMiddleware knows it). Then:

    * its raw HTML is the one the stored rendering was made from (a 304 replays the
      raw page unchanged; an unchanged 200 hashes the same): the stored rendering is
      the response, no browser is used (``render/renders_avoided``);
    * otherwise the request is issued again with ``meta["playwright"] = True``: the
      browser renders the page, the rendering and its raw hash are stored, and the
      rendered DOM is the response the spider parses (``render/pages_rendered``).

    ``RENDER_TRUST_RAW_HTML = False`` is for sites whose JavaScript loads the text from
    elsewhere (an API): unchanged raw HTML then proves nothing, and every page in scope
    is rendered on every run. A rendering that fails (timeout, crashed browser) is
    counted (``render/errors``), listed in the run report, and the page's request
    fails: nothing stored for it changes and the next run renders it again.

    Enabled by :class:`crawler.addons.playwright.PlaywrightAddon` (``PLAYWRIGHT_ENABLED``);
    in scope: pages of ``RENDER_DOMAINS`` or matching ``RENDER_URL_PATTERNS`` (every
    page when both are empty); ``request.meta["render"]`` True or False overrides.
    """

    def __init__(
        self,
        cache: Cache,
        identity: PageIdentity,
        stats: StatsCollector,
        *,
        domains: list[str] | None = None,
        patterns: list[str] | None = None,
        trust_raw_html: bool = True,
        wait_until: str = "networkidle",
    ) -> None:
        self.cache = cache
        self.store = cache.store
        self.identity = identity
        self.stats = stats
        self.domains = [d for d in domains or [] if d.strip()]
        self.patterns = [re.compile(p) for p in patterns or []]
        self.trust_raw_html = trust_raw_html
        self.wait_until = wait_until
        self.failed: dict[str, str] = {}

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RenderMiddleware:
        settings = typed(crawler.settings)
        if not settings.getbool("PLAYWRIGHT_ENABLED", False):
            raise NotConfigured("RenderMiddleware is off: PLAYWRIGHT_ENABLED is False")
        patterns = settings.getlist("RENDER_URL_PATTERNS", [])
        for pattern in patterns:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"Setting RENDER_URL_PATTERNS has a bad pattern {pattern!r}: {exc}") from None
        wait_until = str(settings.get("RENDER_WAIT_UNTIL", "networkidle"))
        if wait_until not in WAIT_UNTIL:
            raise ValueError(f"Setting RENDER_WAIT_UNTIL={wait_until!r} must be one of {', '.join(WAIT_UNTIL)}")
        assert crawler.stats is not None
        middleware = cls(
            cache_for(crawler),
            PageIdentity.from_crawler(crawler),
            crawler.stats,
            domains=settings.getlist("RENDER_DOMAINS", []),
            patterns=patterns,
            trust_raw_html=settings.getbool("RENDER_TRUST_RAW_HTML", True),
            wait_until=wait_until,
        )
        crawler.signals.connect(middleware.extraction_finished, signal=crawler_signals.extraction_finished)
        crawler.signals.connect(middleware.spider_closed, signal=signals.spider_closed)
        return middleware

    def in_scope(self, request: Request) -> bool:
        explicit = request.meta.get("render")
        if explicit is not None:
            return bool(explicit)
        if not self.domains and not self.patterns:
            return True
        return in_domains(request.url, self.domains) or any(p.search(request.url) for p in self.patterns)

    async def process_request(self, request: Request) -> None:
        if request.meta.get("playwright") or request.method != "GET" or request.body:
            return  # rendered already, or not a page
        if self.in_scope(request):
            request.meta["render_check"] = True

    async def process_response(self, request: Request, response: Response) -> Request | Response:
        if "render_raw_sha256" in request.meta:
            return self._rendered(request, response)
        if not request.meta.get("render_check") or response.status != 200 or not _is_html(response):
            return response
        url_hash = self.identity.url_hash(request.url)
        raw_sha256 = hashlib.sha256(response.body).hexdigest()
        stored = self.store.get_rendered(url_hash)
        if stored is None:
            reason = "new"
        elif not self.trust_raw_html:
            reason = "not_trusted"
        elif stored.raw_sha256 != raw_sha256:
            reason = "raw_changed"
        else:
            avoided = next((r for flag, r in REPLAY_REASONS.items() if flag in response.flags), "raw_unchanged")
            self.stats.inc_value("render/renders_avoided")
            self.stats.inc_value(f"render/avoided_{avoided}")
            return self._replay(request, response, stored)
        self.stats.inc_value(f"render/reason/{reason}")
        return self._render_request(request, raw_sha256)

    def _render_request(self, request: Request, raw_sha256: str) -> Request:
        """The same request, to be rendered by the browser: never conditional (a browser
        cannot use a 304), and the raw hash it stands for travels with it."""
        meta = {k: v for k, v in request.meta.items() if k not in DROPPED_META}
        meta.update(playwright=True, render_raw_sha256=raw_sha256)
        meta.setdefault("playwright_page_goto_kwargs", {"wait_until": self.wait_until})
        headers = request.headers.copy()
        headers.pop(b"If-None-Match", None)
        headers.pop(b"If-Modified-Since", None)
        self.stats.inc_value("render/requests")
        return request.replace(meta=meta, headers=headers, dont_filter=True)

    def _rendered(self, request: Request, response: Response) -> Response:
        if response.status != 200 or not _is_html(response):
            # the raw page was a 200 but the browser got something else: nothing stored
            self._failed(request, f"the browser got status {response.status}")
            return response
        url_hash = self.identity.url_hash(request.url)
        self.store.put_rendered(
            url_hash,
            RenderedPage(
                url=response.url,
                headers={n: v.decode("latin-1") for n in KEPT_HEADERS if (v := response.headers.get(n)) is not None},
                body=response.body,
                raw_sha256=request.meta["render_raw_sha256"],
                rendered_at=utcnow(),
            ),
        )
        self.cache.wrote()
        self.failed.pop(request.url, None)
        self.stats.inc_value("render/pages_rendered")
        return response

    async def process_exception(self, request: Request, exception: Exception) -> None:
        if "render_raw_sha256" in request.meta:
            # the request fails on to the spider's errback: the page is not recorded
            # this run, its stored content and extraction stay as they were
            first_line = next(iter(str(exception).splitlines()), "")
            self._failed(request, f"{type(exception).__name__}: {first_line}")

    def _failed(self, request: Request, error: str) -> None:
        self.stats.inc_value("render/errors")
        self.failed[request.url] = error
        logger.warning(
            "Rendering %(url)s failed (rendered again next run): %(error)s", {"url": request.url, "error": error}
        )

    @staticmethod
    def _replay(request: Request, response: Response, stored: RenderedPage) -> Response:
        # the raw response's flags stay (dedup_not_modified...): the page is what it was
        return HtmlResponse(
            url=stored.url,
            status=200,
            headers=Headers(stored.headers),
            body=stored.body,
            flags=[*response.flags, FLAG_REPLAYED],
            request=request,
        )

    def extraction_finished(self, cache: Cache, report: dict[str, Any]) -> None:
        """Adds ``render`` to the run report: renderings made, avoided, failed (by URL)."""
        report["render"] = {
            "pages_rendered": int(self.stats.get_value("render/pages_rendered", 0)),
            "renders_avoided": int(self.stats.get_value("render/renders_avoided", 0)),
            "errors": int(self.stats.get_value("render/errors", 0)),
            "failed": dict(sorted(self.failed.items())),
        }

    def spider_closed(self) -> None:
        self.cache.commit()


def _is_html(response: Response) -> bool:
    content_type = (response.headers.get("Content-Type") or b"").split(b";")[0].strip().lower()
    return content_type in HTML_TYPES
