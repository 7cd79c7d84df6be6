"""The asset cache of rendering pages (crawler.middlewares.render_assets), with stand-ins
for Playwright's route, request and fetch response (read by their attributes); the
end-to-end test with Chromium is tests/test_e2e_render.py."""

import asyncio
import pickle
from types import SimpleNamespace

from scrapy import Request

from crawler.middlewares.render import PAGE_INIT_CALLBACK, RenderMiddleware
from crawler.middlewares.render_assets import Asset, AssetCache, AssetRoutes, PageRoutes
from tests.helpers import run
from tests.test_middleware_render import download

JS = "https://app.example.com/assets/main.js"
CSS = "https://app.example.com/assets/site.css"


class Site:
    """Answers the routes' fetches: ``answers`` is URL -> (status, headers, body[, final
    URL]) or an exception; ``gate``, when set, holds every fetch until it is set."""

    def __init__(self, answers):
        self.answers = answers
        self.fetched = []
        self.gate = None

    async def fetch(self, url, headers):
        self.fetched.append((url, headers))
        if self.gate is not None:
            await self.gate.wait()
        answer = self.answers[url]
        if isinstance(answer, Exception):
            raise answer
        status, response_headers, body, *final = answer
        return FetchResponse(status, response_headers, body, final[0] if final else url)


class FetchResponse:
    def __init__(self, status, headers, body, url):
        self.status, self.headers, self.url, self._body = status, headers, url, body
        self.disposed = False

    async def body(self):
        return self._body

    async def dispose(self):
        self.disposed = True


class Route:
    """What a handler did with one browser request: ``fulfilled`` (status, headers,
    body) or ``fell_back``."""

    def __init__(self, site, request):
        self.site, self.request = site, request
        self.fulfilled = None
        self.fell_back = False

    async def fetch(self, headers=None):
        return await self.site.fetch(self.request.url, headers)

    async def fulfill(self, status, headers, body):
        self.fulfilled = (status, headers, body)

    async def fallback(self):
        self.fell_back = True


def browser_request(url, resource_type="script", method="GET"):
    return SimpleNamespace(url=url, resource_type=resource_type, method=method, headers={"accept": "*/*"})


def ask(routes, site, url, resource_type="script", method="GET"):
    route = Route(site, browser_request(url, resource_type, method))
    run(routes.handle(route, route.request, "crawler-ua"))
    return route


JS_OK = (200, {"Content-Type": "application/javascript", "Content-Encoding": "gzip", "Content-Length": "9"}, b"main();")


def test_an_asset_is_fetched_once_then_answered_from_the_cache():
    site = Site({JS: JS_OK})
    cache = AssetCache(max_bytes=1024)
    routes = AssetRoutes(cache)
    first, second = ask(routes, site, JS), ask(routes, site, JS)
    # the decoded body, without the headers of the compressed one
    assert first.fulfilled == second.fulfilled == (200, {"Content-Type": "application/javascript"}, b"main();")
    assert site.fetched == [(JS, {"accept": "*/*", "user-agent": "crawler-ua"})]  # Scrapy's User-Agent
    assert (cache.misses, cache.hits, cache.stored) == (1, 1, 1)


def test_pages_asking_while_the_first_fetch_is_under_way_wait_for_it():
    site = Site({JS: JS_OK})
    routes = AssetRoutes(AssetCache(max_bytes=1024))

    async def story():
        site.gate = asyncio.Event()
        asks = [Route(site, browser_request(JS)) for _ in range(3)]
        tasks = [asyncio.create_task(routes.handle(route, route.request)) for route in asks]
        while len(site.fetched) < 1 or not all(JS in routes.pending for _ in tasks):
            await asyncio.sleep(0)
        for _ in range(5):  # the others reach the pending fetch and wait there
            await asyncio.sleep(0)
        site.gate.set()
        await asyncio.gather(*tasks)
        return asks

    asks = run(story())
    assert len(site.fetched) == 1
    assert all(route.fulfilled[2] == b"main();" for route in asks)


def test_errors_no_store_and_redirected_answers_are_passed_on_not_kept():
    gone = "https://app.example.com/gone.js"
    private = "https://app.example.com/private.js"
    moved = "https://app.example.com/moved.js"
    site = Site(
        {
            gone: (404, {"Content-Type": "text/html"}, b"Not found"),
            private: (200, {"Cache-Control": "private, no-store"}, b"secret();"),
            moved: (200, {}, b"moved();", "https://cdn.example.net/moved.js"),
        }
    )
    cache = AssetCache(max_bytes=1024)
    routes = AssetRoutes(cache)
    for url in (gone, private, moved):
        first, second = ask(routes, site, url), ask(routes, site, url)
        assert first.fulfilled == second.fulfilled and first.fulfilled[0] in (200, 404)
    # each page that asks gets the site's own answer: a failed script is seen by every rendering
    assert [url for url, _ in site.fetched] == [gone, gone, private, private, moved, moved]
    assert (cache.stored, cache.hits) == (0, 0)


def test_a_network_failure_is_left_to_the_browser():
    site = Site({JS: ConnectionRefusedError("net::ERR_CONNECTION_REFUSED")})
    cache = AssetCache(max_bytes=1024)
    route = ask(AssetRoutes(cache), site, JS)
    assert route.fell_back and route.fulfilled is None  # the browser's own request fails, and is seen
    assert cache.stored == 0


def test_documents_data_posts_and_aborted_types_go_on_to_the_next_route():
    site = Site({CSS: (200, {"Content-Type": "text/css"}, b"p {}")})
    routes = AssetRoutes(AssetCache(max_bytes=1024), abort_request=lambda request: request.resource_type == "image")
    for resource_type, method in (("document", "GET"), ("fetch", "GET"), ("xhr", "GET"), ("script", "POST")):
        assert ask(routes, site, CSS, resource_type, method).fell_back
    assert ask(routes, site, "https://app.example.com/logo.png", "image").fell_back  # scrapy-playwright aborts it
    assert ask(routes, site, "data:text/css,p{}", "stylesheet").fell_back
    assert site.fetched == []
    assert ask(routes, site, CSS, "stylesheet").fulfilled == (200, {"Content-Type": "text/css"}, b"p {}")


def test_an_async_abort_predicate_is_awaited():
    async def abort_fonts(request):
        return request.resource_type == "font"

    routes = AssetRoutes(AssetCache(max_bytes=1024), abort_request=abort_fonts)
    assert ask(routes, Site({}), "https://app.example.com/a.woff2", "font").fell_back


def test_a_handler_that_fails_lets_the_browser_ask_the_site():
    def broken(request):
        raise RuntimeError("the predicate failed")

    route = ask(AssetRoutes(AssetCache(max_bytes=1024), abort_request=broken), Site({}), JS)
    assert route.fell_back


def test_the_cache_holds_at_most_its_bytes_least_recently_used_dropped_first():
    cache = AssetCache(max_bytes=100)
    for name in "abc":
        assert cache.put(name, Asset(200, {}, b"x" * 40))
    assert list(cache.assets) == ["b", "c"] and cache.bytes == 80 and cache.evicted == 1
    cache.get("b")  # used: "c" is now the oldest
    cache.put("d", Asset(200, {"Content-Type": "text/css"}, b"x" * 30))
    assert list(cache.assets) == ["b", "d"] and cache.evicted == 2
    assert not cache.put("huge", Asset(200, {}, b"x" * 101)) and cache.get("huge") is None
    assert cache.peak_bytes == 40 + 30 + len("Content-Type") + len("text/css")  # b and d, headers counted


def test_page_routes_put_the_asset_route_on_the_page_then_run_the_users_callback():
    calls = []

    class Page:
        async def route(self, pattern, handler):
            calls.append(("route", pattern))
            self.handler = handler

    page = Page()
    scrapy_request = Request("https://app.example.com/", headers={"User-Agent": "crawler-ua"})
    routes = AssetRoutes(AssetCache(max_bytes=1024))
    run(PageRoutes(routes, f"{__name__}.user_init")(page, scrapy_request))
    assert calls == [("route", "**")] and [scrapy_request.url] == USER_INIT
    site = Site({JS: JS_OK})
    route = Route(site, browser_request(JS))
    run(page.handler(route, route.request))
    assert site.fetched[0][1]["user-agent"] == "crawler-ua"
    # a request copied to a queue keeps the user's callback only
    assert pickle.loads(pickle.dumps(PageRoutes(routes, f"{__name__}.user_init"))) == f"{__name__}.user_init"


USER_INIT = []


async def user_init(page, request):
    USER_INIT.append(request.url)


def test_the_middleware_puts_its_routes_on_each_rendering_and_keeps_the_users_callback(make_component):
    crawler, mw = make_component(RenderMiddleware, {"PLAYWRIGHT_ENABLED": True})
    _, render_request = download(mw, meta={PAGE_INIT_CALLBACK: f"{__name__}.user_init"})
    run(mw.process_request(render_request))
    init = render_request.meta[PAGE_INIT_CALLBACK]
    assert isinstance(init, PageRoutes) and init.routes is mw.asset_routes and init.user == f"{__name__}.user_init"
    run(mw.process_request(render_request))  # a retry: wrapped once, not twice
    assert render_request.meta[PAGE_INIT_CALLBACK].user == f"{__name__}.user_init"
    # the page a rendering ended on keeps the user's callback alone
    follow = mw._follow(render_request, "https://app.example.com/moved/")
    assert follow.meta[PAGE_INIT_CALLBACK] == f"{__name__}.user_init"
    # the counts are stats at the close
    mw.assets.hits, mw.assets.misses, mw.assets.stored = 5, 2, 2
    mw.spider_closed()
    assert crawler.stats.get_value("render/asset_cache/hits") == 5
    assert crawler.stats.get_value("render/asset_cache/misses") == 2
