"""Downloader middleware: JavaScript pages rendered by a browser, and only when they changed."""

from __future__ import annotations

import hashlib
import inspect
import json
import logging
import re
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.exceptions import IgnoreRequest, NotConfigured
from scrapy.http import Headers, HtmlResponse, TextResponse
from scrapy.utils.misc import load_object

from crawler import signals as crawler_signals
from crawler.cache import cache_for
from crawler.cache.records import utcnow
from crawler.cache.responses import RenderedPage
from crawler.choices import run_choices
from crawler.config import typed
from crawler.http import content_type, drop_validators, is_html
from crawler.identity import PageIdentity
from crawler.lib.urls import in_domains
from crawler.meta import (
    FLAG_DUPLICATE,
    FLAG_NOT_MODIFIED,
    FLAG_RENDER_REPLAYED,
    FLAG_REVISIT_SKIPPED,
    META_FORCE_RENDER,
    META_RENDER,
    META_RENDER_CHECK,
    META_RENDER_RAW_SHA256,
    META_RENDER_SCRIPTS,
    META_REVALIDATION,
    wants,
)
from crawler.middlewares.render_assets import AssetCache, AssetRoutes, PageRoutes
from crawler.middlewares.render_scripts import ScriptFailure, ScriptLoads, is_listener, own_script_failures

if TYPE_CHECKING:
    from collections.abc import Callable

    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from scrapy.statscollectors import StatsCollector

    from crawler.cache import Cache
    from crawler.cache.ports import RenderStore

logger = logging.getLogger(__name__)

#: below RetryMiddleware (550), MetaRefreshMiddleware (580), HttpCompressionMiddleware
#: (590) and RedirectMiddleware (600): it sees decompressed bodies (the raw hash is of
#: the HTML, not of its gzip bytes) and final responses only: Scrapy follows a raw
#: page's redirect or meta refresh before any browser sees it, and a rendering is
#: judged once, after RetryMiddleware has retried what it retries
PRIORITY = 540
#: response headers kept with a rendering
KEPT_HEADERS = ("Content-Type", "Content-Language")
WAIT_UNTIL = ("commit", "domcontentloaded", "load", "networkidle")
#: RevalidationMiddleware's flags of a replayed raw page -> the reason no rendering was needed
REPLAY_REASONS = {
    FLAG_NOT_MODIFIED: "304",
    FLAG_REVISIT_SKIPPED: "revisit_skipped",
    FLAG_DUPLICATE: "duplicate",
}
#: meta keys of the raw request that must not reach the browser's request
DROPPED_META = (META_REVALIDATION, META_RENDER_CHECK)
#: scrapy-playwright's meta key of the page's event handlers
EVENT_HANDLERS = "playwright_page_event_handlers"
#: scrapy-playwright's meta key of the function run on a new page (its routes are set there)
PAGE_INIT_CALLBACK = "playwright_page_init_callback"
#: meta keys of a request sent to the browser, not kept when its page is requested anew
BROWSER_META = ("playwright", META_RENDER_RAW_SHA256, "retry_times", META_RENDER_SCRIPTS)
#: the scripts, stylesheets, fonts and images of a crawl's renderings kept to serve again
ASSET_CACHE_MAX_BYTES = 32 * 1024 * 1024
#: runs in a row of a page's failed scripts after which they are the site's state, the
#: run no longer partial for them
SCRIPT_FAILED_RUNS = 3
#: why a run is partial when a page's stored rendering stood in for one whose scripts failed
SCRIPTS_FAILED_REASON = "renderings whose scripts failed to load"
#: why a run is partial when a rendering failed (a page not reached, whatever its spider does)
RENDER_FAILED_REASON = "renderings failed"


class RenderFailed(IgnoreRequest):
    """The browser could not render a page whose raw download succeeded: the page's
    request fails (to its errback), and nothing stored for the page changes."""


def url_patterns(name: str, value: Any) -> list[re.Pattern[str]]:
    r"""``RENDER_URL_PATTERNS`` compiled: a list, a JSON list (for patterns with a
    comma) or comma-separated; a bad one names the setting.

    >>> [p.pattern for p in url_patterns("P", '["/v\\\\d{1,2}/", "/app/"]')]
    ['/v\\d{1,2}/', '/app/']
    >>> [p.pattern for p in url_patterns("P", "/docs/, /app/")]
    ['/docs/', '/app/']
    """
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("["):
            try:
                value = json.loads(text)
            except ValueError as exc:
                raise ValueError(f"Setting {name}={text!r} is not a JSON list: {exc}") from None
        else:
            value = [part.strip() for part in text.split(",")]
    if not isinstance(value, list | tuple) or not all(isinstance(p, str) for p in value):
        raise ValueError(f"Setting {name}={value!r} must be a list of regular expressions")
    compiled = []
    for pattern in value:
        if not pattern.strip():
            continue
        try:
            compiled.append(re.compile(pattern))
        except re.error as exc:
            raise ValueError(f"Setting {name} has a bad pattern {pattern!r}: {exc}") from None
    return compiled


class RenderMiddleware:
    """Renders the pages in scope with a browser (scrapy-playwright), once per change.

    A page is first downloaded as usual; only when its raw HTML differs from the one its
    stored rendering was made from is it rendered again, because the browser is the
    costly step. A rendering that fails is stored nowhere and the page renders again
    next run. Script failures, renderings that end on another page,
    ``RENDER_TRUST_RAW_HTML`` and the stats: see docs/rendering.md.

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
        domains: list[str],
        patterns: list[str],
        trust_raw_html: bool,
        wait_until: str,
        force: bool,
        max_stored_bytes: int,
        retry_codes: frozenset[int] = frozenset(),
        script_domains: list[str] | None = None,
        abort_request: Callable[[Any], Any] | None = None,
    ) -> None:
        self.cache = cache
        #: the store's methods this component calls (:mod:`crawler.cache.ports`)
        self.store: RenderStore = cache.store
        self.identity = identity
        self.stats = stats
        self.domains = [d for d in domains if d.strip()]
        self.patterns = url_patterns("RENDER_URL_PATTERNS", patterns)
        self.trust_raw_html = trust_raw_html
        self.wait_until = wait_until
        self.force = force
        self.max_stored_bytes = max_stored_bytes
        #: statuses RetryMiddleware retries, then logs an error for ("Gave up retrying")
        self.retry_codes = retry_codes
        #: domains whose scripts count as the page's own, besides the page's host
        self.script_domains = [d for d in script_domains or [] if d.strip()]
        #: PLAYWRIGHT_ABORT_REQUEST: a script it aborts is no failure
        self.abort_request = abort_request
        #: the scripts, stylesheets, fonts and images of rendered pages, fetched once per crawl
        self.assets = AssetCache(ASSET_CACHE_MAX_BYTES)
        self.asset_routes = AssetRoutes(self.assets, abort_request)
        self.failed: dict[str, str] = {}
        #: pages whose rendering was not trusted, its scripts having failed -> those scripts
        self.scripts_failed: dict[str, str] = {}
        #: pages recorded as rendered though their scripts failed (never hydrated) -> those scripts
        self.scripts_failed_recorded: dict[str, str] = {}
        #: pages of scripts_failed whose failure is taken as the site's state (the run stays complete)
        self.scripts_failed_standing: set[str] = set()
        #: the keys of the pages of scripts_failed: a page counts once a run, by any spelling
        self.scripts_failed_keys: set[str] = set()
        #: failed pages whose error a line at ERROR level counted already
        self.error_logged: set[str] = set()

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RenderMiddleware:
        settings = typed(crawler.settings)
        if not settings.getbool("PLAYWRIGHT_ENABLED", False):
            raise NotConfigured("RenderMiddleware is off: PLAYWRIGHT_ENABLED is False")
        patterns = [p.pattern for p in url_patterns("RENDER_URL_PATTERNS", settings.get("RENDER_URL_PATTERNS") or [])]
        wait_until = str(settings.get("RENDER_WAIT_UNTIL"))
        if wait_until not in WAIT_UNTIL:
            raise ValueError(f"Setting RENDER_WAIT_UNTIL={wait_until!r} must be one of {', '.join(WAIT_UNTIL)}")
        assert crawler.stats is not None
        middleware = cls(
            cache_for(crawler),
            PageIdentity.from_crawler(crawler),
            crawler.stats,
            domains=settings.getlist("RENDER_DOMAINS"),
            patterns=patterns,
            trust_raw_html=settings.getbool("RENDER_TRUST_RAW_HTML"),
            wait_until=wait_until,
            force="render" in run_choices(crawler).redo,
            max_stored_bytes=settings.getint("REVALIDATION_MAX_STORED_BYTES"),
            retry_codes=frozenset(int(c) for c in settings.getlist("RETRY_HTTP_CODES", []))
            if settings.getbool("RETRY_ENABLED", True)
            else frozenset(),
            script_domains=settings.getlist("RENDER_SCRIPT_DOMAINS"),
            abort_request=_callable(settings.get("PLAYWRIGHT_ABORT_REQUEST")),
        )
        crawler.signals.connect(middleware.run_report, signal=crawler_signals.run_report)
        crawler.signals.connect(middleware.spider_closed, signal=signals.spider_closed)
        return middleware

    def in_scope(self, request: Request) -> bool:
        explicit = request.meta.get(META_RENDER)
        if explicit is not None:
            return bool(explicit)
        if not self.domains and not self.patterns:
            return True
        return in_domains(request.url, self.domains) or any(p.search(request.url) for p in self.patterns)

    async def process_request(self, request: Request) -> None:
        if META_RENDER_RAW_SHA256 in request.meta:
            self._prepare_page(request)
            return
        if request.meta.get("playwright") or request.method != "GET" or request.body:
            return  # rendered already, or not a page
        if self.in_scope(request):
            request.meta[META_RENDER_CHECK] = True

    async def process_response(self, request: Request, response: Response) -> Request | Response:
        if META_RENDER_RAW_SHA256 in request.meta:
            return self._rendered(request, response, await self._failed_scripts(request, response))
        if not request.meta.get(META_RENDER_CHECK) or response.status != 200 or not is_html(response):
            return response
        url_hash = self.identity.url_hash(request.url)
        raw_sha256 = hashlib.sha256(response.body).hexdigest()
        stored = self.store.get_rendered(url_hash)
        if stored is None:
            reason = "new"
        elif self._forced(request, url_hash):
            reason = "forced"
        elif not self.trust_raw_html:
            reason = "not_trusted"
        elif stored.scripts_failed:
            # recorded while its scripts failed: they may load now
            reason = "scripts_failed"
        elif stored.raw_sha256 != raw_sha256:
            reason = "raw_changed"
        else:
            avoided = next((r for flag, r in REPLAY_REASONS.items() if flag in response.flags), "raw_unchanged")
            self.stats.inc_value("render/renders_avoided")
            self.stats.inc_value(f"render/avoided_{avoided}")
            if self.identity.url_hash(stored.url) != url_hash:
                # the browser ended on another page from this raw HTML: request that one
                self.stats.inc_value("render/redirected")
                return self._follow(request, stored.url)
            return self._replay(request, response, stored)
        self.stats.inc_value(f"render/reason/{reason}")
        return self._render_request(request, raw_sha256)

    def _forced(self, request: Request, url_hash: str) -> bool:
        """``-a redo=render``, ``meta["force_render"]``, or a page marked by ``scrapy cache
        invalidate``: its stored rendering is not trusted either."""
        if self.force or wants(request.meta, META_FORCE_RENDER):
            return True
        record = self.store.get_page(url_hash)
        return bool(record and record.get("invalidated"))

    def _render_request(self, request: Request, raw_sha256: str) -> Request:
        """The same request, to be rendered by the browser: never conditional (a browser
        cannot use a 304), and the raw hash it stands for travels with it."""
        meta = {k: v for k, v in request.meta.items() if k not in DROPPED_META}
        meta.update({"playwright": True, META_RENDER_RAW_SHA256: raw_sha256})
        meta.setdefault("playwright_page_goto_kwargs", {"wait_until": self.wait_until})
        headers = request.headers.copy()
        drop_validators(headers)
        self.stats.inc_value("render/requests")
        return request.replace(meta=meta, headers=headers, dont_filter=True)

    def _prepare_page(self, request: Request) -> None:
        """A fresh listener of the script loads of this attempt's page (a retry's copy
        carries the last one's); the user's own handlers of other events are kept, and
        theirs win for the same event. The asset routes go on the page before the
        user's own page init callback, which runs after them."""
        loads = ScriptLoads()
        own = {e: h for e, h in (request.meta.get(EVENT_HANDLERS) or {}).items() if not is_listener(h)}
        request.meta[META_RENDER_SCRIPTS] = loads
        request.meta[EVENT_HANDLERS] = {**loads.handlers(), **own}
        user = request.meta.get(PAGE_INIT_CALLBACK)
        if isinstance(user, PageRoutes):
            user = user.user
        request.meta[PAGE_INIT_CALLBACK] = PageRoutes(self.asset_routes, user)

    def _follow(self, request: Request, url: str) -> Request:
        """``url``, where rendering ``request`` ended, requested as a page of its own (like
        a redirect: its own raw check, its own rendering; a duplicate is filtered)."""
        meta = {
            k: v
            for k, v in request.meta.items()
            if k not in DROPPED_META and k not in BROWSER_META and not k.startswith("redirect_")
        }
        if meta.get("playwright_page_goto_kwargs") == {"wait_until": self.wait_until}:
            del meta["playwright_page_goto_kwargs"]
        handlers = {e: h for e, h in (meta.pop(EVENT_HANDLERS, None) or {}).items() if not is_listener(h)}
        if handlers:
            meta[EVENT_HANDLERS] = handlers
        init = meta.pop(PAGE_INIT_CALLBACK, None)
        if isinstance(init, PageRoutes):
            init = init.user
        if init:
            meta[PAGE_INIT_CALLBACK] = init
        meta["redirect_urls"] = [*request.meta.get("redirect_urls", []), request.url]
        headers = request.headers.copy()
        drop_validators(headers)
        logger.debug("Rendering %(url)s ends on %(to)s", {"url": request.url, "to": url})
        return request.replace(url=url, meta=meta, headers=headers, dont_filter=False)

    async def _failed_scripts(self, request: Request, response: Response) -> list[ScriptFailure]:
        """The page's own scripts that failed to load while it was rendered, less those
        ``PLAYWRIGHT_ABORT_REQUEST`` aborted (on purpose: no failure of the site)."""
        loads = request.meta.get(META_RENDER_SCRIPTS)
        if not isinstance(loads, ScriptLoads):
            return []
        failed = []
        for failure in own_script_failures(loads.failures, response.url, self.script_domains):
            if failure.request is None or not await self._aborted(failure.request):
                failed.append(failure)
        return failed

    async def _aborted(self, browser_request: Any) -> bool:
        if self.abort_request is None:
            return False
        try:
            verdict = self.abort_request(browser_request)
            if inspect.isawaitable(verdict):
                verdict = await verdict
        except Exception:  # noqa: BLE001 - the predicate is the user's: a failure it cannot judge stays one
            return False
        return bool(verdict)

    def _rendered(
        self, request: Request, response: Response, failed_scripts: list[ScriptFailure]
    ) -> Request | Response:
        if response.status != 200 or not is_html(response):
            # the raw page was a 200 but the browser got something else (a 404 here is
            # not the page being gone): nothing stored, the request fails
            got = f"status {response.status}" if response.status != 200 else content_type(response).decode("latin-1")
            if response.status in self.retry_codes and not request.meta.get("dont_retry"):
                self.error_logged.add(request.url)  # RetryMiddleware gave up, with an error line
            raise self._failed(request, f"the browser got {got}")
        url_hash = self.identity.url_hash(request.url)
        self.failed.pop(request.url, None)
        if self.identity.url_hash(response.url) != url_hash:
            # a script (or a refresh) took the browser to another page: its DOM is not
            # this page's; store where this raw HTML leads, and request that page
            self.store.put_rendered(
                url_hash,
                RenderedPage(
                    url=response.url,
                    headers={},
                    body=b"",
                    raw_sha256=request.meta[META_RENDER_RAW_SHA256],
                    rendered_at=utcnow(),
                ),
            )
            self.cache.wrote()
            self.stats.inc_value("render/redirected")
            return self._follow(request, response.url)
        scripts = ", ".join(sorted(str(failure) for failure in failed_scripts))  # stable across runs
        stored = self.store.get_rendered(url_hash) if failed_scripts else None
        if stored is not None and self._hydrated(stored, url_hash):
            return self._scripts_failed(request, response, url_hash, stored, scripts)
        if failed_scripts:
            self._recorded_scripts_failed(request, scripts)
        self.stats.inc_value("render/pages_rendered")
        if len(response.body) > self.max_stored_bytes:
            # parsed this once, rendered again next run
            self.stats.inc_value("render/not_stored_too_large")
            if not failed_scripts and (old := self.store.get_rendered(url_hash)) is not None and old.failed_runs:
                # its scripts loaded: the count of runs they failed in starts again
                self.store.put_rendered(url_hash, replace(old, failed_runs=0))
                self.cache.wrote()
            return response
        self.store.put_rendered(
            url_hash,
            RenderedPage(
                url=response.url,
                headers={n: v.decode("latin-1") for n in KEPT_HEADERS if (v := response.headers.get(n)) is not None},
                body=response.body,
                raw_sha256=request.meta[META_RENDER_RAW_SHA256],
                rendered_at=utcnow(),
                encoding=response.encoding if isinstance(response, TextResponse) else "",
                scripts_failed=scripts,
            ),
        )
        self.cache.wrote()
        return response

    async def process_exception(self, request: Request, exception: Exception) -> None:
        if META_RENDER_RAW_SHA256 in request.meta and not isinstance(exception, IgnoreRequest):
            # the request fails on to the spider's errback: the page is not recorded
            # this run, its stored content and extraction stay as they were
            first_line = next(iter(str(exception).splitlines()), "")
            self._failed(request, f"{type(exception).__name__}: {first_line}")

    def _failed(self, request: Request, error: str) -> RenderFailed:
        if request.url not in self.failed:
            self.stats.inc_value("render/errors")  # pages, however often they failed
        self.failed[request.url] = error
        self.cache.run.mark_incomplete(RENDER_FAILED_REASON)
        logger.warning(
            "Rendering %(url)s failed (rendered again next run): %(error)s", {"url": request.url, "error": error}
        )
        return RenderFailed(f"Rendering {request.url} failed: {error}")

    def _hydrated(self, stored: RenderedPage, url_hash: str) -> bool:
        """Whether the page's stored rendering is its own, made while its scripts
        loaded: a rendering whose scripts fail now is a passing fault (a deployment half
        done), not the page."""
        return bool(stored.body) and not stored.scripts_failed and self.identity.url_hash(stored.url) == url_hash

    def _recorded_scripts_failed(self, request: Request, scripts: str) -> None:
        """A page that never rendered with its scripts loaded, whose scripts failed again:
        its DOM as it stands is the page (recorded, and rendered again next run, in case
        they load then); counted and warned about, the run stays complete."""
        if request.url not in self.scripts_failed_recorded:
            self.stats.inc_value("render/script_failed_recorded")  # pages, not scripts
        self.scripts_failed_recorded[request.url] = scripts
        logger.warning(
            "Rendering %(url)s recorded as it stands, not hydrated: its scripts failed to load: %(scripts)s "
            "(it never rendered with them loaded; rendered again next run)",
            {"url": request.url, "scripts": scripts},
        )

    def _scripts_failed(
        self, request: Request, response: Response, url_hash: str, stored: RenderedPage, scripts: str
    ) -> Response:
        """A rendering whose own scripts failed to load, of a page stored hydrated, is not
        trusted: not stored, the page gets its stored rendering; rendered again next run.
        The run is partial until this has happened to the page on
        ``SCRIPT_FAILED_RUNS`` runs in a row (counted in the stored rendering)."""
        first = url_hash not in self.scripts_failed_keys  # (a page counts once a run, by any spelling)
        self.scripts_failed_keys.add(url_hash)
        runs = stored.failed_runs + 1 if first else stored.failed_runs
        if first:
            self.stats.inc_value("render/script_failed")  # pages, not scripts
        self.scripts_failed[request.url] = scripts
        if runs >= SCRIPT_FAILED_RUNS:
            if first:
                self.stats.inc_value("render/script_failed_standing")
            self.scripts_failed_standing.add(request.url)
            logger.warning(
                "Rendering %(url)s not trusted, its scripts failed to load: %(scripts)s; its stored rendering "
                "is used, as on the last %(runs)s runs in a row: taken as the site's state, the run stays complete "
                "(rendered again next run)",
                {"url": request.url, "scripts": scripts, "runs": runs},
            )
        else:
            logger.warning(
                "Rendering %(url)s not trusted, its scripts failed to load: %(scripts)s; "
                "its stored rendering is used (rendered again next run)",
                {"url": request.url, "scripts": scripts},
            )
            self.cache.run.mark_incomplete(SCRIPTS_FAILED_REASON)
        kept = replace(stored, failed_runs=runs)
        if stored.raw_sha256 == request.meta[META_RENDER_RAW_SHA256]:
            # a forced rendering of unchanged raw HTML: the stored one no longer stands
            # for it, so the next run renders the page (the body stays for a replay)
            kept = replace(kept, raw_sha256="")
        if kept != stored:
            self.store.put_rendered(url_hash, kept)
            self.cache.wrote()
        return self._replay(request, response, stored, flags=[FLAG_RENDER_REPLAYED])

    @staticmethod
    def _replay(request: Request, response: Response, stored: RenderedPage, flags: list[str] | None = None) -> Response:
        # the raw response's flags stay (FLAG_NOT_MODIFIED...) unless ``flags`` says
        # otherwise: the page is what it was
        return HtmlResponse(
            url=stored.url,
            status=200,
            headers=Headers(stored.headers),
            body=stored.body,
            flags=[*response.flags, FLAG_RENDER_REPLAYED] if flags is None else flags,
            request=request,
            encoding=stored.encoding or None,
        )

    def run_report(self, cache: Cache, report: dict[str, Any]) -> None:
        """Adds ``render`` to the run report: renderings made, avoided, failed (by URL),
        not trusted because scripts failed (by URL: the scripts); each page whose
        rendering failed counts once in its ``errors``."""
        report["render"] = {
            "pages_rendered": int(self.stats.get_value("render/pages_rendered", 0)),
            "renders_avoided": int(self.stats.get_value("render/renders_avoided", 0)),
            "errors": len(self.failed),
            "failed": dict(sorted(self.failed.items())),
            "script_failed": dict(sorted(self.scripts_failed.items())),
            "script_failed_recorded": dict(sorted(self.scripts_failed_recorded.items())),
            "script_failed_standing": sorted(self.scripts_failed_standing),
        }
        report["errors"] = int(report.get("errors", 0)) + len(self.failed.keys() - self.error_logged)

    def spider_closed(self) -> None:
        if self.assets.hits or self.assets.misses:
            self.stats.set_value("render/asset_cache/hits", self.assets.hits)
            self.stats.set_value("render/asset_cache/misses", self.assets.misses)
            self.stats.set_value("render/asset_cache/stored", self.assets.stored)
            self.stats.set_value("render/asset_cache/evicted", self.assets.evicted)
            self.stats.set_value("render/asset_cache/peak_bytes", self.assets.peak_bytes)
        self.cache.commit()


def _callable(value: Any) -> Callable[[Any], Any] | None:
    """A setting naming a function (its import path, or the function itself)."""
    if not value:
        return None
    function = load_object(value) if isinstance(value, str) else value
    return function if callable(function) else None
