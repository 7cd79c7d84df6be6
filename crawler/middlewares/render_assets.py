"""The static assets of rendered pages, fetched once per crawl.

scrapy-playwright intercepts every request of a rendering page, which turns off
Chromium's HTTP cache, so each page fetched the site's scripts and stylesheets again.
:class:`AssetRoutes`, a route registered after scrapy-playwright's (so asked first),
answers GETs of scripts, stylesheets, fonts and images from :class:`AssetCache` (per
crawl, keyed by URL, bounded in bytes). Only a storable 200 is kept, so a failed
script is seen by every rendering, as the browser would. Playwright's objects are read
by their attributes, never imported. See docs/rendering.md.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from scrapy.utils.misc import load_object

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Mapping

logger = logging.getLogger(__name__)

#: the resource types (Chromium's names) whose responses are kept
CACHED_TYPES = frozenset({"script", "stylesheet", "font", "image"})
#: response headers never replayed: the body kept is decoded (Playwright's fetch
#: decompresses it) and its length is the fulfilled body's; cookies were set once
DROPPED_HEADERS = frozenset({"content-encoding", "content-length", "transfer-encoding", "connection", "set-cookie"})


def storable(status: int, headers: Mapping[str, str]) -> bool:
    """Whether a response may be kept for the rest of the crawl: a 200 without
    ``Cache-Control: no-store``.

    >>> storable(200, {"cache-control": "public, max-age=60"})
    True
    >>> storable(200, {"Cache-Control": "private, No-Store"}), storable(404, {})
    (False, False)
    """
    if status != 200:
        return False
    value = ",".join(v for name, v in headers.items() if name.lower() == "cache-control")
    directives = {part.strip().split("=", 1)[0].lower() for part in value.split(",")}
    return "no-store" not in directives


def replayed_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """The headers an asset is answered with (those of :data:`DROPPED_HEADERS` left out).

    >>> replayed_headers({"Content-Type": "text/css", "Content-Encoding": "gzip", "content-length": "20"})
    {'Content-Type': 'text/css'}
    """
    return {name: value for name, value in headers.items() if name.lower() not in DROPPED_HEADERS}


@dataclass(frozen=True)
class Asset:
    """A response kept for the pages that ask for its URL again."""

    status: int
    headers: dict[str, str] = field(repr=False)
    body: bytes = field(repr=False)

    @property
    def size(self) -> int:
        return len(self.body) + sum(len(name) + len(value) for name, value in self.headers.items())


class AssetCache:
    """Assets by URL, the least recently used dropped past ``max_bytes``; it counts what
    it did (``hits``, ``misses``: fetched for it, ``stored``, ``evicted``, the ``peak_bytes``
    held).

    >>> cache = AssetCache(max_bytes=10)
    >>> cache.put("a", Asset(200, {}, b"12345")), cache.put("b", Asset(200, {}, b"123456"))
    (True, True)
    >>> cache.get("a") is None, cache.get("b").body, cache.evicted, cache.bytes
    (True, b'123456', 1, 6)
    >>> cache.put("big", Asset(200, {}, b"x" * 11)), cache.get("big")
    (False, None)
    """

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.assets: OrderedDict[str, Asset] = OrderedDict()
        self.bytes = 0
        self.hits = self.misses = self.stored = self.evicted = self.peak_bytes = 0

    def get(self, url: str) -> Asset | None:
        asset = self.assets.get(url)
        if asset is not None:
            self.assets.move_to_end(url)
        return asset

    def put(self, url: str, asset: Asset) -> bool:
        """Keep ``asset`` (dropping the least recently used ones to make room); False
        when it alone is larger than the cache."""
        if asset.size > self.max_bytes:
            return False
        old = self.assets.pop(url, None)
        if old is not None:
            self.bytes -= old.size
        while self.assets and self.bytes + asset.size > self.max_bytes:
            _, dropped = self.assets.popitem(last=False)
            self.bytes -= dropped.size
            self.evicted += 1
        self.assets[url] = asset
        self.bytes += asset.size
        self.stored += 1
        self.peak_bytes = max(self.peak_bytes, self.bytes)
        return True


class AssetRoutes:
    """The route handler of rendering pages: static assets from :class:`AssetCache`
    (fetched once, concurrent asks waiting for that fetch), the rest to the next route
    (scrapy-playwright's). ``abort_request`` is ``PLAYWRIGHT_ABORT_REQUEST``: what it
    aborts is left to scrapy-playwright's route to abort."""

    def __init__(self, cache: AssetCache, abort_request: Callable[[Any], Any] | None = None) -> None:
        self.cache = cache
        self.abort_request = abort_request
        #: URL -> the fetch under way for it, done when the asset is kept (or not)
        self.pending: dict[str, asyncio.Future[None]] = {}

    async def handle(self, route: Any, request: Any, user_agent: str | None = None) -> None:
        """Answer ``request`` (a Playwright request) on ``route``; never raises (a page
        closed meanwhile is no error of the crawl)."""
        try:
            if not await self._cacheable(request):
                await route.fallback()
                return
            url = request.url
            while (pending := self.pending.get(url)) is not None:
                await asyncio.shield(pending)
            asset = self.cache.get(url)
            if asset is not None:
                self.cache.hits += 1
                await route.fulfill(status=asset.status, headers=asset.headers, body=asset.body)
                return
            await self._fetch(route, request, user_agent)
        except Exception as exc:  # noqa: BLE001 - the page closed, the browser went away...
            logger.debug("Asset route of %(url)s ended: %(exc)r", {"url": getattr(request, "url", "?"), "exc": exc})
            with contextlib.suppress(Exception):  # ...or anything else: the browser asks the site itself
                await route.fallback()

    async def _cacheable(self, request: Any) -> bool:
        if request.method != "GET" or request.resource_type not in CACHED_TYPES:
            return False
        if not request.url.startswith(("http://", "https://")):
            return False
        return not await self._aborted(request)

    async def _aborted(self, request: Any) -> bool:
        if self.abort_request is None:
            return False
        verdict = self.abort_request(request)
        if inspect.isawaitable(verdict):
            verdict = await verdict
        return bool(verdict)

    async def _fetch(self, route: Any, request: Any, user_agent: str | None) -> None:
        """Fetch the asset once for every page (the browser's headers, Scrapy's
        User-Agent as scrapy-playwright sends it), keep it if it may be kept, answer."""
        url = request.url
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.pending[url] = done
        try:
            headers = {**request.headers, "user-agent": user_agent} if user_agent else None
            try:
                response = await route.fetch(headers=headers)
            except Exception:  # noqa: BLE001 - a network failure: the browser tries and sees it
                await route.fallback()
                return
            try:
                body = await response.body()
            finally:
                await response.dispose()  # the driver keeps a fetched body until then
            self.cache.misses += 1
            asset = Asset(response.status, replayed_headers(response.headers), body)
            if response.url == url and storable(response.status, response.headers):
                self.cache.put(url, asset)
        finally:
            del self.pending[url]
            done.set_result(None)
        await route.fulfill(status=asset.status, headers=asset.headers, body=asset.body)


class PageRoutes:
    """``playwright_page_init_callback`` of a rendering: puts :class:`AssetRoutes` on the
    page, then runs the user's own callback (``user``: a function or its import path),
    whose routes then come first.

    A request copied to a queue (pickled) carries the user's callback alone: the
    middleware puts the routes back on it before it is downloaded.
    """

    def __init__(self, routes: AssetRoutes, user: Any = None) -> None:
        self.routes = routes
        self.user = user

    async def __call__(self, page: Any, request: Any) -> None:
        user_agent = request.headers.get("User-Agent")
        agent = user_agent.decode("latin-1") if isinstance(user_agent, bytes) else user_agent
        routes = self.routes

        async def handler(route: Any, browser_request: Any) -> None:
            await routes.handle(route, browser_request, agent)

        await page.route("**", handler)
        if self.user:
            callback: Callable[[Any, Any], Awaitable[None]] = load_object(self.user)
            await callback(page, request)

    def __reduce__(self) -> tuple[Callable[[Any], Any], tuple[Any]]:
        return _same, (self.user,)


def _same(value: Any) -> Any:
    return value
