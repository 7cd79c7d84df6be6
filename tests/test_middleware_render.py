import hashlib
import logging
import pickle
from types import SimpleNamespace

import pytest
from scrapy import Request
from scrapy.core.downloader.middleware import DownloaderMiddlewareManager
from scrapy.exceptions import IgnoreRequest, NotConfigured
from scrapy.http import HtmlResponse, TextResponse
from scrapy.settings import Settings
from scrapy.spidermiddlewares.httperror import HttpError
from scrapy.utils.misc import build_from_crawler
from scrapy.utils.request import request_from_dict
from twisted.python.failure import Failure

from crawler.addons.playwright import PlaywrightAddon
from crawler.cache import cache_for
from crawler.cache.responses import RenderedPage
from crawler.incremental.ledger import invalidate as invalidate_pages
from crawler.meta import FLAG_RENDER_REPLAYED, Revalidation
from crawler.middlewares.render import (
    PRIORITY,
    SCRIPTS_FAILED_REASON,
    RenderFailed,
    RenderMiddleware,
)
from crawler.middlewares.render_scripts import ScriptLoads
from crawler.spiders.docs import DocsSpider
from tests.helpers import run

URL = "https://app.example.com/guide/"
RAW = b"<html><body><div id='app'></div><script>render()</script></body></html>"
RENDERED = b"<html><body><div id='app'><h1>Guide</h1><p>Built by JavaScript.</p></div></body></html>"
HTML = {"Content-Type": "text/html; charset=utf-8"}
#: the add-on on; no download handlers of get_crawler's reactorless test mode (aiohttp),
#: which the add-on refuses to replace
ENABLED = {"ADDONS": {PlaywrightAddon: 0}, "PLAYWRIGHT_ENABLED": True, "DOWNLOAD_HANDLERS": {}}


@pytest.fixture
def build(make_component):
    def factory(spider_args=None, **settings):
        return make_component(RenderMiddleware, {"PLAYWRIGHT_ENABLED": True, **settings}, spider_args=spider_args)

    return factory


def download(mw, url=URL, body=RAW, status=200, flags=None, headers=None, meta=None, request_headers=None):
    """One raw download of ``url`` through the middleware: what the spider (or the
    scheduler, for a request to render) gets back."""
    request = Request(url, meta=meta or {}, headers=request_headers)
    assert run(mw.process_request(request)) is None
    response = HtmlResponse(url, status=status, body=body, headers=headers or HTML, flags=flags or [], request=request)
    return request, run(mw.process_response(request, response))


def render(mw, render_request, body=RENDERED, status=200, events=()):
    """The browser's answer to ``render_request``; ``events`` are the ``(event, object)``
    its page emitted on the way (``script_response``, ``script_failure``)."""
    assert run(mw.process_request(render_request)) is None
    handlers = render_request.meta["playwright_page_event_handlers"]
    for event, emitted in events:
        handlers[event](emitted)
    response = HtmlResponse(render_request.url, status=status, body=body, headers=HTML, flags=["playwright"])
    return run(mw.process_response(render_request, response))


def script_response(url, status, resource_type="script"):
    """A ``response`` event of the browser's page, as Playwright's ``Response`` reads."""
    return "response", SimpleNamespace(url=url, status=status, request=SimpleNamespace(resource_type=resource_type))


def script_failure(url, failure, resource_type="script"):
    """A ``requestfailed`` event, as Playwright's ``Request`` reads."""
    return "requestfailed", SimpleNamespace(url=url, resource_type=resource_type, failure=failure)


#: the page's DOM when its main script did not load: the server's HTML, not hydrated
UNHYDRATED = b"<html><body><div id='app'>Loading...</div></body></html>"
MAIN_JS = "https://app.example.com/assets/js/main.4f2a.js"


def test_not_configured_when_disabled(make_crawler):
    with pytest.raises(NotConfigured, match="PLAYWRIGHT_ENABLED"):
        build_from_crawler(RenderMiddleware, make_crawler())


@pytest.mark.parametrize(
    ("settings", "name"),
    [
        ({"RENDER_URL_PATTERNS": "/docs/,(unclosed"}, "RENDER_URL_PATTERNS"),
        ({"RENDER_WAIT_UNTIL": "idle"}, "RENDER_WAIT_UNTIL"),
    ],
)
def test_bad_settings_name_the_setting(make_crawler, settings, name):
    with pytest.raises(ValueError, match=name):
        build_from_crawler(RenderMiddleware, make_crawler({"PLAYWRIGHT_ENABLED": True, **settings}))


def test_a_new_page_is_sent_to_the_browser_without_validators(build):
    crawler, mw = build()
    _, render_request = download(
        mw,
        meta={"revalidation": Revalidation("x", conditional=True), "docs_depth": 2},
        request_headers={"If-None-Match": '"v1"', "If-Modified-Since": "Wed, 01 Jan 2025 00:00:00 GMT"},
    )
    assert isinstance(render_request, Request) and render_request.url == URL
    assert render_request.meta["playwright"] is True
    assert render_request.meta["render_raw_sha256"] == hashlib.sha256(RAW).hexdigest()
    assert render_request.meta["playwright_page_goto_kwargs"] == {"wait_until": "networkidle"}
    assert render_request.meta["docs_depth"] == 2
    assert "revalidation" not in render_request.meta
    assert b"If-None-Match" not in render_request.headers and b"If-Modified-Since" not in render_request.headers
    assert render_request.dont_filter
    assert crawler.stats.get_value("render/reason/new") == 1
    assert crawler.stats.get_value("render/requests") == 1


def test_a_rendering_is_stored_and_reused_while_the_raw_html_is_unchanged(build):
    crawler, mw = build()
    _, render_request = download(mw)
    response = render(mw, render_request)
    assert response.body == RENDERED
    assert crawler.stats.get_value("render/pages_rendered") == 1
    stored = cache_for(crawler).store.get_rendered(mw.identity.url_hash(URL))
    assert stored.body == RENDERED and stored.raw_sha256 == hashlib.sha256(RAW).hexdigest()
    # next run: the same raw HTML (a 200 of the same bytes, or RevalidationMiddleware's replay of a 304)
    _, replayed = download(mw)
    assert isinstance(replayed, HtmlResponse) and replayed.body == RENDERED and FLAG_RENDER_REPLAYED in replayed.flags
    assert "Built by JavaScript." in replayed.text
    _, replayed = download(mw, url=URL + "?utm_source=x#top", flags=["revalidation_not_modified"])
    assert replayed.body == RENDERED and "revalidation_not_modified" in replayed.flags
    _, replayed = download(mw, flags=["revalidation_revisit_skipped"])
    assert replayed.body == RENDERED
    assert crawler.stats.get_value("render/avoided_raw_unchanged") == 1
    assert crawler.stats.get_value("render/avoided_304") == 1
    assert crawler.stats.get_value("render/avoided_revisit_skipped") == 1
    assert crawler.stats.get_value("render/renders_avoided") == 3
    assert crawler.stats.get_value("render/pages_rendered") == 1


def test_changed_raw_html_is_rendered_again(build):
    crawler, mw = build()
    _, render_request = download(mw)
    render(mw, render_request)
    _, again = download(mw, body=RAW.replace(b"render()", b"render({v: 2})"))
    assert isinstance(again, Request) and again.meta["playwright"]
    assert crawler.stats.get_value("render/reason/raw_changed") == 1
    render(mw, again, body=RENDERED.replace(b"Built", b"Rebuilt"))
    _, replayed = download(mw, body=RAW.replace(b"render()", b"render({v: 2})"))
    assert b"Rebuilt" in replayed.body


def test_untrusted_raw_html_is_always_rendered(build):
    crawler, mw = build(RENDER_TRUST_RAW_HTML=False)
    _, render_request = download(mw)
    render(mw, render_request)
    _, again = download(mw, flags=["revalidation_not_modified"])
    assert isinstance(again, Request) and again.meta["playwright"]
    assert crawler.stats.get_value("render/reason/not_trusted") == 1
    assert crawler.stats.get_value("render/renders_avoided") is None


@pytest.mark.parametrize(
    ("settings", "url", "meta", "rendered"),
    [
        ({}, URL, {}, True),
        ({"RENDER_DOMAINS": "example.com"}, URL, {}, True),
        ({"RENDER_DOMAINS": "example.com"}, "https://other.org/x", {}, False),
        ({"RENDER_URL_PATTERNS": "/guide/"}, URL, {}, True),
        ({"RENDER_URL_PATTERNS": "/api/"}, URL, {}, False),
        ({"RENDER_URL_PATTERNS": "/api/"}, URL, {"render": True}, True),
        ({}, URL, {"render": False}, False),
    ],
)
def test_scope(build, settings, url, meta, rendered):
    _, result = download(build(**settings)[1], url=url, meta=meta)
    assert isinstance(result, Request) is rendered


def test_other_responses_pass_through(build):
    crawler, mw = build()
    _, response = download(mw, status=404)
    assert response.status == 404
    request = Request(URL + "data.json")
    run(mw.process_request(request))
    json_response = TextResponse(request.url, body=b"{}", headers={"Content-Type": "application/json"})
    assert run(mw.process_response(request, json_response)) is json_response
    post = Request(URL, method="POST", body=b"q=1")
    run(mw.process_request(post))
    assert "render_check" not in post.meta
    assert crawler.stats.get_value("render/requests") is None


def test_a_failed_rendering_is_counted_once_per_page_reported_and_changes_nothing_stored(build):
    crawler, mw = build()
    _, render_request = download(mw)
    render(mw, render_request)
    _, again = download(mw, body=RAW + b"<!-- v2 -->")
    error = TimeoutError("Timeout 5000ms exceeded.\nCall log:\n  - navigating")
    assert run(mw.process_exception(again, error)) is None  # the request fails on to the spider
    _, broken = download(mw, body=RAW + b"<!-- v3 -->")
    with pytest.raises(RenderFailed, match="the browser got status 403"):
        render(mw, broken, status=403)
    _, other = download(mw, url=URL + "other/")
    with pytest.raises(RenderFailed, match="the browser got status 503"):
        render(mw, other, status=503)
    assert crawler.stats.get_value("render/errors") == 2  # pages, not attempts
    stored = cache_for(crawler).store.get_rendered(mw.identity.url_hash(URL))
    assert stored.body == RENDERED and stored.raw_sha256 == hashlib.sha256(RAW).hexdigest()
    assert cache_for(crawler).store.get_rendered(mw.identity.url_hash(URL + "other/")) is None
    report = {"errors": 1}  # an error the crawl logged
    mw.run_report(cache_for(crawler), report)
    assert report["render"] == {
        "pages_rendered": 1,
        "renders_avoided": 0,
        "errors": 2,
        "failed": {URL: "the browser got status 403", URL + "other/": "the browser got status 503"},
        "script_failed": {},
        "script_failed_recorded": {},
        "script_failed_standing": [],
    }
    # the run's errors count each failed rendering once: the 503's is the error line
    # RetryMiddleware logged when it gave up (counted in the given 1)
    assert report["errors"] == 2
    # the next run's raw HTML is the failed one: it is rendered, not replayed
    _, retried = download(mw, body=RAW + b"<!-- v3 -->")
    assert isinstance(retried, Request)


@pytest.mark.parametrize("status", [404, 410])
def test_a_browser_404_after_a_raw_200_is_a_failed_rendering_not_a_gone_page(build, status):
    crawler, mw = build()
    _, render_request = download(mw)
    with pytest.raises(RenderFailed) as failure:
        render(mw, render_request, status=status)
    # not an HttpError: the spider's errback counts a failed page (the run is
    # incomplete), not a gone one (which a complete run would mark removed)
    assert isinstance(failure.value, IgnoreRequest) and not isinstance(failure.value, HttpError)
    assert crawler.stats.get_value("render/errors") == 1
    assert cache_for(crawler).store.get_rendered(mw.identity.url_hash(URL)) is None


def test_the_spider_counts_a_failed_rendering_as_a_failed_page(make_crawler):
    crawler = make_crawler(spidercls=DocsSpider)
    crawler.spider = spider = DocsSpider.from_crawler(crawler, start_urls=URL)
    cache = cache_for(crawler)  # open, as in a crawl
    failure = Failure(RenderFailed(f"Rendering {URL} failed: the browser got status 404"))
    failure.request = Request(URL)
    spider.failed(failure)
    assert crawler.stats.get_value("docs/failed_pages") == 1
    assert crawler.stats.get_value("docs/gone_pages") is None
    assert cache.run.incomplete_reasons == ["failed pages"]


def scrapy_downloader(crawler, answers):
    """Scrapy's downloader middlewares as the add-on sets them up, around a download
    function answering each request with ``answers(request)``: a status and a body."""
    manager = DownloaderMiddlewareManager.from_crawler(crawler)
    downloads = []

    async def download_func(request):
        status, body = answers(request)
        downloads.append((request.url, bool(request.meta.get("playwright")), status))
        return HtmlResponse(request.url, status=status, body=body, headers=HTML, request=request)

    async def fetch(request):
        """What the spider gets for ``request``: requests returned by the middlewares
        are downloaded in turn, as the engine does."""
        result = await manager.download_async(download_func, request)
        while isinstance(result, Request):
            result = await manager.download_async(download_func, result)
        return result

    middleware = next(m for m in manager.middlewares if isinstance(m, RenderMiddleware))
    return middleware, downloads, fetch


@pytest.fixture
def scrapy_stack(make_crawler):
    def factory(answers, **settings):
        crawler = make_crawler({**ENABLED, **settings})
        crawler.spider = DocsSpider.from_crawler(crawler, start_urls=URL)
        return crawler, *scrapy_downloader(crawler, answers)

    return factory


@pytest.mark.browser  # the add-on, enabled, looks for Chromium
def test_a_browser_5xx_is_retried_before_it_is_judged_once(scrapy_stack, caplog):
    browser = iter([503, 503, 503, 503, 200])  # the first page always; the second once

    def answers(request):
        if request.meta.get("playwright"):
            return next(browser), RENDERED
        return 200, RAW

    crawler, mw, downloads, fetch = scrapy_stack(answers)
    with pytest.raises(RenderFailed), caplog.at_level(logging.WARNING):
        run(fetch(Request(URL)))
    assert [d for d in downloads if d[1]] == [(URL, True, 503)] * 3  # RetryMiddleware's 2 retries
    assert crawler.stats.get_value("retry/count") == 2
    assert crawler.stats.get_value("render/errors") == 1
    assert caplog.text.count("failed (rendered again next run)") == 1
    # a retry that succeeds is no failure at all
    response = run(fetch(Request(URL + "flaky/")))
    assert response.status == 200 and response.body == RENDERED
    assert crawler.stats.get_value("render/errors") == 1
    assert list(mw.failed) == [URL]


@pytest.mark.browser  # the add-on, enabled, looks for Chromium
def test_scrapy_follows_a_raw_meta_refresh_before_any_rendering(scrapy_stack):
    def answers(request):
        if request.url == URL:
            return 200, b'<html><head><meta http-equiv="refresh" content="0; url=/target/"></head></html>'
        return 200, RAW if not request.meta.get("playwright") else RENDERED

    _, _, downloads, fetch = scrapy_stack(answers)
    response = run(fetch(Request(URL)))
    target = "https://app.example.com/target/"
    assert response.url == target and response.body == RENDERED
    assert downloads == [(URL, False, 200), (target, False, 200), (target, True, 200)]


def test_the_render_middleware_sits_below_retry_meta_refresh_and_redirect():
    base = Settings().getdict("DOWNLOADER_MIDDLEWARES_BASE")
    for name in ("retry.RetryMiddleware", "redirect.MetaRefreshMiddleware", "redirect.RedirectMiddleware"):
        assert base[f"scrapy.downloadermiddlewares.{name}"] > PRIORITY


def test_a_replayed_rendering_keeps_the_encoding_it_was_made_in(build):
    # scrapy-playwright encodes the DOM's text in the header's charset when it can,
    # else in UTF-8, and says which: the header alone would decode it wrongly
    text = "日本語 et café"
    latin = {"Content-Type": "text/html; charset=iso-8859-1"}
    _, mw = build()
    _, render_request = download(mw, headers=latin)
    body = f"<html><body><p>{text}</p></body></html>".encode()
    assert run(mw.process_request(render_request)) is None
    rendered = HtmlResponse(URL, body=body, headers=latin, encoding="utf-8", request=render_request)
    assert text in run(mw.process_response(render_request, rendered)).text
    _, replayed = download(mw, headers=latin)
    assert FLAG_RENDER_REPLAYED in replayed.flags
    assert text in replayed.text


def test_a_rendering_that_ends_on_another_page_requests_that_page(build):
    crawler, mw = build()
    target = "https://app.example.com/moved/"
    _, render_request = download(
        mw, meta={"docs_depth": 1}, request_headers={"If-None-Match": '"v1"'}, flags=["revalidation_not_modified"]
    )
    assert run(mw.process_request(render_request)) is None
    landed = HtmlResponse(target, body=RENDERED, headers=HTML, request=render_request)
    follow = run(mw.process_response(render_request, landed))
    assert isinstance(follow, Request) and follow.url == target and not follow.dont_filter
    assert follow.meta["docs_depth"] == 1 and follow.meta["redirect_urls"] == [URL]
    assert not {"playwright", "render_raw_sha256", "render_check", "playwright_page_goto_kwargs"} & set(follow.meta)
    assert b"If-None-Match" not in follow.headers
    # nothing of the other page is stored as this one's
    stored = cache_for(crawler).store.get_rendered(mw.identity.url_hash(URL))
    assert stored.url == target and stored.body == b""
    assert crawler.stats.get_value("render/pages_rendered") is None
    # recrawl, raw HTML unchanged (a 304): no browser, the other page is requested anew
    _, follow = download(mw, flags=["revalidation_not_modified"], request_headers={"If-None-Match": '"v1"'})
    assert isinstance(follow, Request) and follow.url == target and "playwright" not in follow.meta
    assert b"If-None-Match" not in follow.headers
    assert crawler.stats.get_value("render/redirected") == 2
    assert crawler.stats.get_value("render/renders_avoided") == 1
    # the other page goes through its own check: rendered and stored under its own key
    _, own = download(mw, url=target)
    assert isinstance(own, Request) and own.meta["playwright"]


def test_a_stale_rendering_of_another_page_is_never_replayed(build):
    """Renderings stored before redirects were told apart: the other page is requested."""
    crawler, mw = build()
    target = "https://app.example.com/moved/"
    cache_for(crawler).store.put_rendered(
        mw.identity.url_hash(URL),
        RenderedPage(
            url=target, headers=HTML, body=RENDERED, raw_sha256=hashlib.sha256(RAW).hexdigest(), rendered_at="x"
        ),
    )
    _, follow = download(mw)
    assert isinstance(follow, Request) and follow.url == target


@pytest.mark.parametrize(
    ("spider_args", "meta", "invalidate"),
    [({"redo": "render"}, {}, False), (None, {"force_render": True}, False), (None, {}, True)],
)
def test_a_forced_or_invalidated_page_is_rendered_again(build, spider_args, meta, invalidate):
    crawler, mw = build(spider_args)
    _, render_request = download(mw)
    render(mw, render_request)
    if invalidate:
        store = cache_for(crawler).store
        store.put_page(mw.identity.url_hash(URL), {"url": URL, "status": "unchanged"})
        invalidate_pages(store, [mw.identity.url_hash(URL)])
    _, again = download(mw, meta=meta)
    assert isinstance(again, Request) and again.meta["playwright"]
    assert crawler.stats.get_value("render/reason/forced") == 1


def test_an_unmarked_page_replays(build):
    crawler, mw = build()
    _, render_request = download(mw)
    render(mw, render_request)
    cache_for(crawler).store.put_page(mw.identity.url_hash(URL), {"url": URL, "status": "unchanged"})
    _, replayed = download(mw)
    assert FLAG_RENDER_REPLAYED in replayed.flags


def test_a_rendering_larger_than_the_cap_is_parsed_not_stored(build):
    crawler, mw = build(REVALIDATION_MAX_STORED_BYTES=len(RENDERED) - 1)
    _, render_request = download(mw)
    assert render(mw, render_request).body == RENDERED
    assert cache_for(crawler).store.get_rendered(mw.identity.url_hash(URL)) is None
    assert crawler.stats.get_value("render/not_stored_too_large") == 1
    assert crawler.stats.get_value("render/pages_rendered") == 1


def test_a_page_without_a_content_type_is_rendered(build):
    # the spider parses it as HTML, so it is checked as HTML
    _, result = download(build()[1], headers={"Server": "x"})
    assert isinstance(result, Request) and result.meta["playwright"]


def test_url_patterns_as_a_json_list_keep_their_commas(build):
    _, mw = build(RENDER_URL_PATTERNS=r'["/v\\d{1,2}/"]')  # as -s gives it
    assert [p.pattern for p in mw.patterns] == [r"/v\d{1,2}/"]
    assert mw.in_scope(Request("https://x.org/v12/a")) and not mw.in_scope(Request("https://x.org/v123/a"))


@pytest.mark.parametrize("value", [r'["/v\\d{1,2}/"', r'["/v\d{1,2}/"]', "[1, 2]", '["(unclosed"]'])
def test_bad_url_patterns_name_the_setting(make_crawler, value):
    with pytest.raises(ValueError, match="RENDER_URL_PATTERNS"):
        build_from_crawler(RenderMiddleware, make_crawler({"PLAYWRIGHT_ENABLED": True, "RENDER_URL_PATTERNS": value}))


def test_a_rendering_whose_own_script_failed_is_not_stored_and_the_stored_rendering_answers(build, caplog):
    crawler, mw = build()
    _, render_request = download(mw)
    render(mw, render_request, events=[script_response("https://ads.example.net/ad.js", 404)])
    assert crawler.stats.get_value("render/pages_rendered") == 1  # another site's script: no matter
    # a new build: the raw HTML names a main script that is not there (yet)
    new_raw = RAW.replace(b"render()", b"render({build: 2})")
    _, again = download(mw, body=new_raw)
    events = [
        script_response(MAIN_JS, 404),
        script_failure(MAIN_JS, "net::ERR_ABORTED"),  # Chromium's end of a script answered 404
        script_response("https://app.example.com/assets/css/site.css", 404, resource_type="stylesheet"),
        script_response("https://ads.example.net/ad.js", 404),
        script_failure("https://app.example.com/assets/js/chunk.js", "net::ERR_CONNECTION_RESET"),
    ]
    with caplog.at_level(logging.WARNING, logger="crawler.middlewares.render"):
        response = render(mw, again, body=UNHYDRATED, events=events)
    # the page reads as it did: its stored rendering, flagged as a replay (source unchanged)
    assert isinstance(response, HtmlResponse) and response.body == RENDERED
    assert FLAG_RENDER_REPLAYED in response.flags and "playwright" not in response.flags
    assert crawler.stats.get_value("render/script_failed") == 1  # one page, two scripts
    assert crawler.stats.get_value("render/pages_rendered") == 1
    assert crawler.stats.get_value("render/errors") is None
    stored = cache_for(crawler).store.get_rendered(mw.identity.url_hash(URL))
    assert stored.body == RENDERED and stored.raw_sha256 == hashlib.sha256(RAW).hexdigest()
    # by URL, whatever order they failed in: the same failures read the same each run
    scripts = f"https://app.example.com/assets/js/chunk.js (net::ERR_CONNECTION_RESET), {MAIN_JS} (404)"
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert [r.getMessage() for r in warnings] == [
        f"Rendering {URL} not trusted, its scripts failed to load: {scripts}; "
        "its stored rendering is used (rendered again next run)"
    ]
    assert isinstance(warnings[0].args, dict)  # lazy arguments
    assert cache_for(crawler).run.incomplete_reasons == [SCRIPTS_FAILED_REASON]
    report = {}
    mw.run_report(cache_for(crawler), report)
    assert report["render"]["script_failed"] == {URL: scripts}
    assert report["render"]["failed"] == {} and report["errors"] == 0
    # the next run: the raw HTML is not the stored rendering's, so the page is rendered
    _, next_run = download(mw, body=new_raw)
    assert isinstance(next_run, Request) and next_run.meta["playwright"]
    hydrated = render(mw, next_run, body=RENDERED.replace(b"Built", b"Rebuilt"))
    assert b"Rebuilt" in hydrated.body and FLAG_RENDER_REPLAYED not in hydrated.flags
    assert (
        cache_for(crawler).store.get_rendered(mw.identity.url_hash(URL)).raw_sha256
        == hashlib.sha256(new_raw).hexdigest()
    )


def test_a_forced_rendering_whose_script_failed_is_rendered_again_next_run(build):
    crawler, mw = build()
    _, render_request = download(mw)
    render(mw, render_request)
    _, forced = download(mw, meta={"force_render": True})  # same raw HTML
    response = render(mw, forced, body=UNHYDRATED, events=[script_response(MAIN_JS, 503)])
    assert response.body == RENDERED and FLAG_RENDER_REPLAYED in response.flags
    # the stored rendering no longer stands for this raw HTML: the next run renders,
    # although the page is not forced then and its raw HTML did not change
    _, next_run = download(mw)
    assert isinstance(next_run, Request) and next_run.meta["playwright"]
    assert crawler.stats.get_value("render/reason/raw_changed") == 1
    # the stored body is still there to stand in, should the script fail again
    response = render(mw, next_run, body=UNHYDRATED, events=[script_failure(MAIN_JS, "net::ERR_EMPTY_RESPONSE")])
    assert response.body == RENDERED
    assert crawler.stats.get_value("render/script_failed") == 1  # pages: the same page twice


def test_a_page_counts_once_a_run_whatever_the_spelling_of_its_url(build):
    # two spellings of one page fail in one run: one run of failed scripts, one page
    crawler, mw = build()
    _, render_request = download(mw)
    render(mw, render_request)
    new_raw = RAW.replace(b"render()", b"render({build: 2})")
    for url in (URL, URL + "?utm_source=news"):
        _, again = download(mw, url=url, body=new_raw)
        assert isinstance(again, Request)
        assert render(mw, again, body=UNHYDRATED, events=[script_response(MAIN_JS, 404)]).body == RENDERED
    assert cache_for(crawler).store.get_rendered(mw.identity.url_hash(URL)).failed_runs == 1
    assert crawler.stats.get_value("render/script_failed") == 1


def test_a_rendering_with_its_scripts_loaded_starts_the_count_again_even_when_too_large_to_keep(build):
    crawler, mw = build(REVALIDATION_MAX_STORED_BYTES=len(RENDERED) + 10)
    key = mw.identity.url_hash(URL)
    _, render_request = download(mw)
    render(mw, render_request)
    _, again = download(mw, body=RAW.replace(b"render()", b"render({build: 2})"))
    render(mw, again, body=UNHYDRATED, events=[script_response(MAIN_JS, 404)])
    assert cache_for(crawler).store.get_rendered(key).failed_runs == 1
    mw.scripts_failed_keys.clear()  # the next run (a new middleware would start empty)
    _, loaded = download(mw, body=RAW.replace(b"render()", b"render({build: 3})"))
    big = render(mw, loaded, body=RENDERED + b"<!--" + b"x" * 100 + b"-->")
    assert FLAG_RENDER_REPLAYED not in big.flags and crawler.stats.get_value("render/not_stored_too_large") == 1
    assert cache_for(crawler).store.get_rendered(key).failed_runs == 0


def test_a_page_never_hydrated_is_recorded_as_it_stands_and_rendered_again_each_run(build, caplog):
    """Its scripts fail on its first rendering: no stored rendering of it with its
    scripts loaded, so the failure is the page's own (a broken link), not a passing one:
    recorded, counted, warned about, the run complete; rendered again each run until
    its scripts load."""
    crawler, mw = build(RENDER_SCRIPT_DOMAINS="static.example.org")
    cdn_js = "https://static.example.org/app.js"
    scripts = f"{MAIN_JS} (404), {cdn_js} (net::ERR_NAME_NOT_RESOLVED)"
    events = [script_response(MAIN_JS, 404), script_failure(cdn_js, "net::ERR_NAME_NOT_RESOLVED")]
    _, render_request = download(mw)
    with caplog.at_level(logging.WARNING):
        response = render(mw, render_request, body=UNHYDRATED, events=events)
    assert response.body == UNHYDRATED and FLAG_RENDER_REPLAYED not in response.flags
    assert crawler.stats.get_value("render/script_failed_recorded") == 1
    assert crawler.stats.get_value("render/pages_rendered") == 1
    assert crawler.stats.get_value("render/errors") is None and crawler.stats.get_value("render/script_failed") is None
    stored = cache_for(crawler).store.get_rendered(mw.identity.url_hash(URL))
    assert stored.body == UNHYDRATED and stored.scripts_failed == scripts
    assert stored.raw_sha256 == hashlib.sha256(RAW).hexdigest()
    assert [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING] == [
        f"Rendering {URL} recorded as it stands, not hydrated: its scripts failed to load: {scripts} "
        "(it never rendered with them loaded; rendered again next run)"
    ]
    assert cache_for(crawler).run.incomplete_reasons == []
    report = {}
    mw.run_report(cache_for(crawler), report)
    assert report["render"]["script_failed_recorded"] == {URL: scripts}
    assert report["render"]["failed"] == {} and report["render"]["script_failed"] == {} and report["errors"] == 0
    # the next run: the same raw HTML, yet rendered (its scripts may load now); they
    # fail again, in another order: recorded again, the same
    _, next_run = download(mw, flags=["revalidation_not_modified"])
    assert isinstance(next_run, Request) and next_run.meta["playwright"]
    assert crawler.stats.get_value("render/reason/scripts_failed") == 1
    assert render(mw, next_run, body=UNHYDRATED, events=events[::-1]).body == UNHYDRATED
    assert cache_for(crawler).store.get_rendered(mw.identity.url_hash(URL)).scripts_failed == scripts
    assert crawler.stats.get_value("render/script_failed_recorded") == 1  # pages: the same page twice
    # the scripts load: stored as any rendering, replayed while the raw HTML is unchanged
    _, fixed = download(mw)
    assert render(mw, fixed).body == RENDERED
    stored = cache_for(crawler).store.get_rendered(mw.identity.url_hash(URL))
    assert stored.body == RENDERED and stored.scripts_failed == ""
    _, replayed = download(mw)
    assert isinstance(replayed, HtmlResponse) and replayed.body == RENDERED
    # from now on a failure is a passing one: the hydrated rendering stands in
    _, changed = download(mw, body=RAW + b"<!-- v2 -->")
    assert render(mw, changed, body=UNHYDRATED, events=events).body == RENDERED
    assert crawler.stats.get_value("render/script_failed") == 1


def abort_widgets(request):
    return request.url.endswith("/widget.js")


def test_a_script_aborted_by_playwright_abort_request_is_no_failure(build):
    crawler, mw = build(PLAYWRIGHT_ABORT_REQUEST=f"{__name__}.abort_widgets")
    _, render_request = download(mw)
    widget = script_failure("https://app.example.com/widget.js", "net::ERR_FAILED")  # route.abort()'s error
    assert render(mw, render_request, events=[widget]).body == RENDERED
    assert crawler.stats.get_value("render/script_failed") is None
    assert crawler.stats.get_value("render/pages_rendered") == 1


def test_each_browser_attempt_listens_afresh_and_a_queued_copy_pickles(build):
    _, mw = build()
    user_handler = print  # a handler of the user's own, for another event
    _, render_request = download(mw, meta={"playwright_page_event_handlers": {"console": user_handler}})
    run(mw.process_request(render_request))
    first = render_request.meta["render_scripts"]
    render_request.meta["playwright_page_event_handlers"]["response"](script_response(MAIN_JS, 404)[1])
    assert [f.url for f in first.failures] == [MAIN_JS]
    # a retry's copy goes through a disk or shared queue (pickled) and back to the browser
    queued = pickle.loads(pickle.dumps(render_request.copy().to_dict()))
    retry = request_from_dict(queued)
    assert isinstance(retry.meta["render_scripts"], ScriptLoads) and retry.meta["render_scripts"].failures == []
    run(mw.process_request(retry))
    handlers = retry.meta["playwright_page_event_handlers"]
    assert handlers["console"] is user_handler
    assert handlers["response"].__self__ is retry.meta["render_scripts"] is not first
    # the page requested where a rendering ended keeps the user's handlers, not the listener
    follow = mw._follow(render_request, "https://app.example.com/moved/")
    assert follow.meta["playwright_page_event_handlers"] == {"console": user_handler}
    assert "render_scripts" not in follow.meta
