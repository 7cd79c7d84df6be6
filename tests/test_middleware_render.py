import hashlib

import pytest
from scrapy import Request
from scrapy.exceptions import NotConfigured
from scrapy.http import HtmlResponse, TextResponse
from scrapy.utils.misc import build_from_crawler

from crawler.cache import cache_for
from crawler.middlewares.render import FLAG_REPLAYED, RenderMiddleware
from tests.helpers import run

URL = "https://app.example.com/guide/"
RAW = b"<html><body><div id='app'></div><script>render()</script></body></html>"
RENDERED = b"<html><body><div id='app'><h1>Guide</h1><p>Built by JavaScript.</p></div></body></html>"
HTML = {"Content-Type": "text/html; charset=utf-8"}


@pytest.fixture
def build(make_component):
    return lambda **settings: make_component(RenderMiddleware, {"PLAYWRIGHT_ENABLED": True, **settings})


def download(mw, url=URL, body=RAW, status=200, flags=None, headers=None, meta=None, request_headers=None):
    """One raw download of ``url`` through the middleware: what the spider (or the
    scheduler, for a request to render) gets back."""
    request = Request(url, meta=meta or {}, headers=request_headers)
    assert run(mw.process_request(request)) is None
    response = HtmlResponse(url, status=status, body=body, headers=headers or HTML, flags=flags or [], request=request)
    return request, run(mw.process_response(request, response))


def render(mw, render_request, body=RENDERED, status=200):
    """The browser's answer to ``render_request``."""
    assert run(mw.process_request(render_request)) is None
    response = HtmlResponse(render_request.url, status=status, body=body, headers=HTML, flags=["playwright"])
    return run(mw.process_response(render_request, response))


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
        meta={"dedup_conditional": True, "dedup_url_hash": "x", "docs_depth": 2},
        request_headers={"If-None-Match": '"v1"', "If-Modified-Since": "Wed, 01 Jan 2025 00:00:00 GMT"},
    )
    assert isinstance(render_request, Request) and render_request.url == URL
    assert render_request.meta["playwright"] is True
    assert render_request.meta["render_raw_sha256"] == hashlib.sha256(RAW).hexdigest()
    assert render_request.meta["playwright_page_goto_kwargs"] == {"wait_until": "networkidle"}
    assert render_request.meta["docs_depth"] == 2
    assert "dedup_conditional" not in render_request.meta and "dedup_url_hash" not in render_request.meta
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
    # next run: the same raw HTML (a 200 of the same bytes, or dedup's replay of a 304)
    _, replayed = download(mw)
    assert isinstance(replayed, HtmlResponse) and replayed.body == RENDERED and FLAG_REPLAYED in replayed.flags
    assert "Built by JavaScript." in replayed.text
    _, replayed = download(mw, url=URL + "index.html?utm_source=x", flags=["dedup_not_modified"])
    assert replayed.body == RENDERED and "dedup_not_modified" in replayed.flags
    _, replayed = download(mw, flags=["dedup_recheck_skipped"])
    assert replayed.body == RENDERED
    assert crawler.stats.get_value("render/avoided_raw_unchanged") == 1
    assert crawler.stats.get_value("render/avoided_304") == 1
    assert crawler.stats.get_value("render/avoided_recheck_skipped") == 1
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
    _, again = download(mw, flags=["dedup_not_modified"])
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


def test_a_failed_rendering_is_counted_reported_and_changes_nothing_stored(build):
    crawler, mw = build()
    _, render_request = download(mw)
    render(mw, render_request)
    _, again = download(mw, body=RAW + b"<!-- v2 -->")
    error = TimeoutError("Timeout 5000ms exceeded.\nCall log:\n  - navigating")
    assert run(mw.process_exception(again, error)) is None  # the request fails on to the spider
    _, broken = download(mw, body=RAW + b"<!-- v3 -->")
    assert render(mw, broken, status=500).status == 500
    assert crawler.stats.get_value("render/errors") == 2
    stored = cache_for(crawler).store.get_rendered(mw.identity.url_hash(URL))
    assert stored.body == RENDERED and stored.raw_sha256 == hashlib.sha256(RAW).hexdigest()
    report = {}
    mw.extraction_finished(cache_for(crawler), report)
    assert report["render"] == {
        "pages_rendered": 1,
        "renders_avoided": 0,
        "errors": 2,
        "failed": {URL: "the browser got status 500"},
    }
    # the next run's raw HTML is the failed one: it is rendered, not replayed
    _, retried = download(mw, body=RAW + b"<!-- v3 -->")
    assert isinstance(retried, Request)
