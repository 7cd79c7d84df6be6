from datetime import UTC, datetime, timedelta

import pytest
from scrapy import Request
from scrapy.exceptions import NotConfigured
from scrapy.http import HtmlResponse, Response
from scrapy.utils.misc import build_from_crawler

from crawler.cache import cache_for
from crawler.meta import (
    FLAG_DUPLICATE,
    FLAG_NOT_MODIFIED,
    FLAG_REVISIT_SKIPPED,
    FLAG_SAME_BODY,
    Revalidation,
    revalidation,
)
from crawler.middlewares.revalidation import RevalidationMiddleware
from tests.helpers import run

URL = "https://docs.example.com/guide/"
BODY = b"<html><body><main><h1>Guide</h1><a href='install'>install</a></main></body></html>"


@pytest.fixture
def build(make_component):
    def factory(spider_args=None, **settings):
        return make_component(RevalidationMiddleware, settings, spider_args=spider_args)

    return factory


def fetch(mw, url=URL, headers=None, status=200, body=BODY, *, run_ends=True):
    """A plain fetch of ``url``, stored; then (``run_ends``) the run ends: the requests
    after it are a later run's, which revalidates (within one run another spelling of
    a page just answered is served from the cache)."""
    request = Request(url)
    assert run(mw.process_request(request)) is None
    response = HtmlResponse(
        url,
        status=status,
        body=body,
        request=request,
        headers=headers if headers is not None else {"Content-Type": "text/html", "ETag": '"v1"'},
    )
    result = run(mw.process_response(request, response))
    if run_ends:
        mw.cache.run.fetched.clear()
    return request, result


def test_another_spelling_of_a_page_answered_this_run_is_served_without_a_request(build):
    crawler, mw = build()
    fetch(mw, run_ends=False)
    again = Request(URL + "?utm_source=x#top")
    served = run(mw.process_request(again))
    assert isinstance(served, HtmlResponse) and served.body == BODY and FLAG_DUPLICATE in served.flags
    assert revalidation(again.meta).status == "duplicate" and b"If-None-Match" not in again.headers
    assert run(mw.process_response(again, served)) is served  # passed through, not stored again
    assert crawler.stats.get_value("revalidation/duplicate_spellings") == 1
    assert crawler.stats.get_value("revalidation/not_modified") is None
    # an index file name is a URL of its own (the pipeline decides, on evidence, whether
    # it is this page): asked for
    assert run(mw.process_request(Request(URL + "index.html"))) is None


def test_not_configured_when_disabled(make_crawler):
    with pytest.raises(NotConfigured, match="REVALIDATION_ENABLED"):
        build_from_crawler(RevalidationMiddleware, make_crawler({"REVALIDATION_ENABLED": False}))


def test_first_fetch_is_plain_and_stored(build):
    crawler, mw = build()
    request, _response = fetch(mw)
    assert b"If-None-Match" not in request.headers
    assert revalidation(request.meta).status == "fetched"
    assert crawler.stats.get_value("revalidation/stored_responses") == 1
    stored = cache_for(crawler).store.get_response(revalidation(request.meta).url_hash)
    assert stored.etag == '"v1"' and stored.body == BODY


def test_second_fetch_is_conditional_and_a_304_replays_the_stored_page(build):
    crawler, mw = build()
    fetch(mw, headers={"Content-Type": "text/html", "ETag": '"v1"', "Last-Modified": "Wed, 01 Jan 2025 00:00:00 GMT"})
    # another spelling of the same page
    request = Request(URL + "?utm_source=x#top")
    assert run(mw.process_request(request)) is None
    assert request.headers[b"If-None-Match"] == b'"v1"'
    assert request.headers[b"If-Modified-Since"] == b"Wed, 01 Jan 2025 00:00:00 GMT"
    replay = run(mw.process_response(request, Response(request.url, status=304, request=request)))
    assert isinstance(replay, HtmlResponse)
    assert (replay.status, replay.body, replay.url) == (200, BODY, URL)
    assert FLAG_NOT_MODIFIED in replay.flags
    assert revalidation(request.meta).status == "not_modified"
    assert crawler.stats.get_value("revalidation/conditional_requests") == 1
    assert crawler.stats.get_value("revalidation/not_modified") == 1


def test_a_200_with_the_stored_bytes_is_flagged_same_body(build):
    # a server without validators (or whose validators change) sends the page again:
    # the stored bytes say its source did not change
    crawler, mw = build()
    _, first = fetch(mw, headers={"Content-Type": "text/html"})
    assert FLAG_SAME_BODY not in first.flags  # nothing stored to compare with
    request, same = fetch(mw, headers={"Content-Type": "text/html"})
    assert FLAG_SAME_BODY in same.flags and same.body == BODY
    assert revalidation(request.meta).compared is None  # not carried to a redirect or to the spider
    _, edited = fetch(mw, headers={"Content-Type": "text/html"}, body=BODY.replace(b"Guide", b"Guides"))
    assert FLAG_SAME_BODY not in edited.flags
    assert crawler.stats.get_value("revalidation/same_body") == 1
    _, again = fetch(mw, headers={"Content-Type": "text/html"}, body=BODY)  # compared with the edit
    assert FLAG_SAME_BODY not in again.flags


def test_no_validators_means_no_conditional_request(build):
    _crawler, mw = build()
    fetch(mw, headers={"Content-Type": "text/html"})
    request = Request(URL)
    run(mw.process_request(request))
    assert b"If-None-Match" not in request.headers and b"If-Modified-Since" not in request.headers
    assert not revalidation(request.meta).conditional


def test_a_304_is_answered_with_the_stored_page_read_for_the_request(build):
    crawler, mw = build()
    fetch(mw)
    request = Request(URL)
    run(mw.process_request(request))
    cache_for(crawler).store.get_response = lambda url_hash: None  # not read again
    replayed = run(mw.process_response(request, Response(URL, status=304, request=request)))
    assert (replayed.status, replayed.flags) == (200, ["revalidation_not_modified"])


def test_a_304_without_a_stored_body_refetches(build):
    crawler, mw = build()
    fetch(mw)
    request = Request(URL)
    run(mw.process_request(request))
    revalidation(request.meta).compared = None  # the stored page is not at hand
    again = run(mw.process_response(request, Response(URL, status=304, request=request)))
    assert isinstance(again, Request)
    assert again.dont_filter and again.meta["dont_revalidate"]
    assert b"If-None-Match" not in again.headers
    assert crawler.stats.get_value("revalidation/stored_missing") == 1


def test_a_page_checked_less_than_the_minimum_interval_ago_is_replayed_without_a_request(build):
    """The revisit schedule's shortest wait holds for a page it has no history of yet
    too (a cache made with the schedule off): its stored response says when it was
    last requested."""
    crawler, mw = build(REVISIT_ENABLED=True, REVISIT_SAMPLE=0, REVISIT_MIN_INTERVAL=1)
    request, _ = fetch(mw)
    url_hash = revalidation(request.meta).url_hash
    mw.store.put_page(url_hash, {"url": URL, "domain": "docs.example.com"})  # recorded, no schedule yet
    again = Request(URL)
    replay = run(mw.process_request(again))
    assert isinstance(replay, HtmlResponse) and FLAG_REVISIT_SKIPPED in replay.flags
    assert revalidation(again.meta).status == "revisit_skipped"
    assert run(mw.process_response(again, replay)) is replay
    assert crawler.stats.get_value("revisit/skipped/min_interval") == 1
    assert mw.cache.run.revisit.skipped == {url_hash}
    # requested a day later
    stored = mw.store.get_response(url_hash)
    stored.fetched_at = stored.checked_at = (datetime.now(UTC) - timedelta(days=1)).isoformat(timespec="seconds")
    mw.store.put_response(url_hash, stored)
    later = Request(URL)
    assert run(mw.process_request(later)) is None
    assert revalidation(later.meta).conditional
    assert crawler.stats.get_value("revisit/requested/unscheduled") == 1


def test_with_the_schedule_off_every_known_page_is_requested(build):
    crawler, mw = build(REVISIT_MIN_INTERVAL=1)  # REVISIT_ENABLED is off by default
    request, _ = fetch(mw)
    mw.store.put_page(revalidation(request.meta).url_hash, {"url": URL, "domain": "docs.example.com"})
    again = Request(URL)
    assert run(mw.process_request(again)) is None and revalidation(again.meta).conditional
    assert crawler.stats.get_value("revisit/skipped/min_interval") is None


def test_dont_revalidate_sends_a_request_unconditionally(build):
    crawler, mw = build()
    fetch(mw)
    request = Request(URL, meta={"dont_revalidate": True})
    assert run(mw.process_request(request)) is None
    assert b"If-None-Match" not in request.headers
    assert crawler.stats.get_value("revalidation/unconditional") == 1
    assert cache_for(crawler).run.forced == set()  # extraction is not the middleware's: force_extraction


def test_gone_pages_are_noted_only_when_known(build):
    crawler, mw = build()
    never, _ = fetch(mw, url="https://docs.example.com/never-seen", status=404)
    assert crawler.stats.get_value("revalidation/gone") is None
    assert revalidation(never.meta).status is None  # a broken link, not a page gone (the spider words it so)
    cache = cache_for(crawler)
    cache.store.put_page(mw.identity.url_hash(URL), {"url": URL, "status": "unchanged"})
    gone, _ = fetch(mw, status=410)
    assert crawler.stats.get_value("revalidation/gone") == 1
    assert cache.run.gone == {mw.identity.url_hash(URL)}
    assert revalidation(gone.meta).status == "gone"


def test_a_gone_index_spelling_is_its_directory_page_when_recorded_from_it(build):
    crawler, mw = build()
    cache = cache_for(crawler)
    index, other = URL + "index.html", URL + "default.html"
    cache.store.put_page(mw.identity.url_hash(URL), {"url": index, "status": "unchanged"})  # folded from index.html
    fetch(mw, url=other, status=404)  # not the URL the page was recorded from
    assert crawler.stats.get_value("revalidation/gone") is None
    fetch(mw, url=index, status=404)
    assert cache.run.gone == {mw.identity.url_hash(URL)}


def test_an_index_spelling_is_replayed_as_its_directory_page_only_once_fetched_and_folded(build):
    """Review: a spelling never fetched (``default.html`` linked for the first time) was
    served its directory page's body, and the page behind it never requested."""
    crawler, mw = build(REVISIT_ENABLED=True, REVISIT_SAMPLE=0)
    request, _ = fetch(mw)
    store = cache_for(crawler).store
    checked = datetime.now(UTC).isoformat(timespec="seconds")
    directory = {"url": URL, "domain": "docs.example.com", "revisit": {"interval": 3.0, "verified_at": checked}}
    store.put_page(revalidation(request.meta).url_hash, {**directory, "folded_from": [URL + "index.html"]})
    assert run(mw.process_request(Request(URL + "default.html"))) is None  # never fetched: requested
    folded = Request(URL + "index.html")
    served = run(mw.process_request(folded))  # fetched and folded by an earlier run: decided as the directory
    assert isinstance(served, HtmlResponse) and FLAG_REVISIT_SKIPPED in served.flags


def test_only_pages_and_sitemaps_are_stored(build):
    crawler, mw = build(REVALIDATION_MAX_STORED_BYTES=100)
    fetch(mw, url="https://a.com/file.pdf", headers={"Content-Type": "application/pdf", "ETag": '"p"'})
    fetch(mw, url="https://a.com/big", body=b"x" * 101)
    fetch(mw, url="https://a.com/sitemap.xml", headers={"Content-Type": "application/xml"}, body=b"<urlset/>")
    assert crawler.stats.get_value("revalidation/stored_responses") == 1


def test_a_download_stopped_at_its_headers_is_never_stored(build):
    """A page request answered application/xml, stopped at its headers (NonHtmlStop):
    its empty body is not the file's, never stored (a sitemap read in full is)."""
    crawler, mw = build()
    request = Request("https://a.com/feed.xml")
    assert run(mw.process_request(request)) is None
    response = Response(
        request.url, headers={"Content-Type": "application/xml"}, request=request, flags=["download_stopped"]
    )
    assert run(mw.process_response(request, response)) is response
    assert crawler.stats.get_value("revalidation/stored_responses") is None
    assert cache_for(crawler).store.get_response(revalidation(request.meta).url_hash) is None


def test_post_requests_are_left_alone(build):
    _crawler, mw = build()
    request = Request(URL, method="POST", body=b"q=1")
    assert run(mw.process_request(request)) is None
    assert revalidation(request.meta) is None


def test_a_redirect_does_not_carry_the_first_urls_validators(build):
    _, mw = build()
    fetch(mw, url="https://docs.example.com/old", headers={"Content-Type": "text/html", "ETag": '"old"'})
    fetch(mw, url="https://docs.example.com/new", headers={"Content-Type": "text/html"})  # no validators
    first = Request("https://docs.example.com/old")
    run(mw.process_request(first))
    assert first.headers[b"If-None-Match"] == b'"old"'
    # RedirectMiddleware copies headers and meta to the new URL
    redirected = first.replace(url="https://docs.example.com/new")
    assert run(mw.process_request(redirected)) is None
    assert b"If-None-Match" not in redirected.headers
    assert not revalidation(redirected.meta).conditional
    assert revalidation(first.meta).conditional  # a verdict of its own: the first one's stays


def test_a_request_rendered_by_a_browser_is_never_conditional_nor_stored(build):
    crawler, mw = build()
    fetch(mw)  # stored, with an ETag
    request = Request(URL, meta={"playwright": True, "revalidation": Revalidation("copied", "fetched")})
    request.headers[b"If-None-Match"] = b'"copied"'
    assert run(mw.process_request(request)) is None
    assert b"If-None-Match" not in request.headers
    assert revalidation(request.meta) is None  # a copied verdict is not this request's
    rendered = HtmlResponse(URL, body=b"<html><body>rendered</body></html>", headers={"Content-Type": "text/html"})
    assert run(mw.process_response(request, rendered)) is rendered
    assert crawler.stats.get_value("revalidation/stored_responses") == 1
    assert cache_for(crawler).store.get_response(mw.identity.url_hash(URL)).body == BODY


def test_a_304_s_new_validators_replace_the_stored_ones(build):
    """RFC 9111 section 4.3.4 (HttpCacheMiddleware's _freshen_cached_response): a
    server whose ETag changed while the page did not says so on the 304."""
    crawler, mw = build()
    fetch(mw, headers={"Content-Type": "text/html", "ETag": '"v1"', "Last-Modified": "Wed, 01 Jan 2025 00:00:00 GMT"})
    store = cache_for(crawler).store
    request = Request(URL)
    run(mw.process_request(request))
    assert request.headers[b"If-None-Match"] == b'"v1"'
    not_modified = Response(URL, status=304, request=request, headers={"ETag": '"v2"'})
    replay = run(mw.process_response(request, not_modified))
    assert replay.body == BODY and FLAG_NOT_MODIFIED in replay.flags
    stored = store.get_response(mw.identity.url_hash(URL))
    assert (stored.etag, stored.last_modified, stored.body) == ('"v2"', "Wed, 01 Jan 2025 00:00:00 GMT", BODY)
    assert crawler.stats.get_value("revalidation/validators_freshened") == 1
    mw.cache.run.fetched.clear()
    again = Request(URL)
    run(mw.process_request(again))
    assert again.headers[b"If-None-Match"] == b'"v2"'
    # the same validators again: nothing is rewritten
    store.put_response = lambda *args: pytest.fail("rewritten")
    run(mw.process_response(again, Response(URL, status=304, request=again, headers={"ETag": '"v2"'})))
    assert crawler.stats.get_value("revalidation/validators_freshened") == 1


def test_the_response_carries_the_stored_response_it_is(build):
    """What the spider keeps its parse against, and compares with on a replay."""
    _, mw = build()
    request, response = fetch(mw)
    assert revalidation(request.meta).stored.body == BODY and revalidation(response.meta) is revalidation(request.meta)
    again = Request(URL)
    run(mw.process_request(again))
    replay = run(mw.process_response(again, Response(URL, status=304, request=again)))
    assert revalidation(replay.meta).stored.body == BODY
    redirected = again.replace(url="https://docs.example.com/elsewhere")  # a copy of the meta
    run(mw.process_request(redirected))
    assert revalidation(redirected.meta).stored is None


def test_a_page_the_revisit_schedule_says_is_not_due_is_replayed_without_a_request(build):
    crawler, mw = build(REVISIT_ENABLED=True, REVISIT_SAMPLE=0)
    request, _ = fetch(mw)
    url_hash = revalidation(request.meta).url_hash
    store = cache_for(crawler).store
    checked = datetime.now(UTC).isoformat(timespec="seconds")
    store.put_page(
        url_hash, {"url": URL, "domain": "docs.example.com", "revisit": {"interval": 3.0, "verified_at": checked}}
    )
    again = Request(URL)
    served = run(mw.process_request(again))
    assert isinstance(served, HtmlResponse) and served.body == BODY and FLAG_REVISIT_SKIPPED in served.flags
    assert revalidation(again.meta).status == "revisit_skipped"
    assert run(mw.process_response(again, served)) is served  # nothing compared nor stored
    assert crawler.stats.get_value("revisit/skipped/interval") == 1
    assert mw.cache.run.revisit.skipped == {url_hash} and mw.cache.run.revisit.oldest_verified == checked
    # asked to extract or render again: requested
    assert run(mw.process_request(Request(URL, meta={"force_extraction": True}))) is None
    # a page whose interval elapsed: requested, conditionally
    old = (datetime.now(UTC) - timedelta(days=4)).isoformat(timespec="seconds")
    store.put_page(
        url_hash, {"url": URL, "domain": "docs.example.com", "revisit": {"interval": 3.0, "verified_at": old}}
    )
    due = Request(URL)
    assert run(mw.process_request(due)) is None and due.headers[b"If-None-Match"] == b'"v1"'
    assert crawler.stats.get_value("revisit/requested/due") == 1


@pytest.mark.parametrize(
    ("settings", "spider_args", "skipping", "learning"),
    [
        ({}, None, False, False),
        ({"REVISIT_ENABLED": True}, None, True, True),
        ({"REVISIT_ENABLED": True}, {"redo": "download"}, False, True),
    ],
)
def test_the_revisit_schedule_is_off_by_default_and_a_run_that_downloads_all_again_still_learns(
    build, settings, spider_args, skipping, learning
):
    _, mw = build(spider_args, **settings)
    assert (mw.revisit is not None, mw.learn is not None) == (skipping, learning)


@pytest.mark.parametrize("settings", [{}, {"REVISIT_ENABLED": True}])
def test_redo_download_sends_no_validator_with_the_schedule_on_or_off(build, settings):
    crawler, mw = build({"redo": "download"}, **settings)
    fetch(mw)
    again = Request(URL)
    assert run(mw.process_request(again)) is None
    assert b"If-None-Match" not in again.headers
    assert crawler.stats.get_value("revisit/unconditional/redo") == 1


def test_wrong_revisit_settings_are_refused_naming_them(make_crawler):
    with pytest.raises(ValueError, match="REVISIT_SAMPLE"):
        build_from_crawler(RevalidationMiddleware, make_crawler({"REVISIT_ENABLED": True, "REVISIT_SAMPLE": 2}))


def test_a_validator_that_hid_a_change_on_its_host_is_not_sent_and_a_200_notes_which_moved(build):
    headers = {"Content-Type": "text/html", "ETag": '"v1"', "Last-Modified": "Mon, 02 Nov 2026 10:00:00 GMT"}
    crawler, mw = build(REVISIT_ENABLED=True, REVISIT_SAMPLE=0)
    request, _ = fetch(mw, headers=headers)
    url_hash = request.meta["revalidation"].url_hash
    cache_for(crawler).store.put_domain("docs.example.com", {"revisit": {"etag": {"agree": 3, "stale": 1}}})
    again = Request(URL)
    assert run(mw.process_request(again)) is None
    assert (
        b"If-None-Match" not in again.headers
        and again.headers[b"If-Modified-Since"] == headers["Last-Modified"].encode()
    )
    assert crawler.stats.get_value("revisit/unconditional/distrusted") == 1
    moved = {**headers, "Last-Modified": "Tue, 03 Nov 2026 10:00:00 GMT"}
    run(mw.process_response(again, HtmlResponse(URL, body=BODY + b" ", headers=moved, request=again)))
    assert mw.cache.run.revisit.validator_moves == {url_hash: {"etag": False, "last_modified": True}}


def test_without_the_revisit_schedule_every_stored_validator_is_sent_and_nothing_noted(build):
    crawler, mw = build()
    fetch(mw)
    cache_for(crawler).store.put_domain("docs.example.com", {"revisit": {"etag": {"stale": 1}}})
    again = Request(URL)
    run(mw.process_request(again))
    assert again.headers[b"If-None-Match"] == b'"v1"'
    run(mw.process_response(again, HtmlResponse(URL, body=BODY + b" ", headers={"ETag": '"v1"'}, request=again)))
    assert mw.cache.run.revisit.validator_moves == {}


class RunShare:
    """A shared run's common ground (:class:`crawler.incremental.revisit.RevisitShare`)
    as another process left it: the sitemaps' lastmods it published and each host's
    trust as the run first read it."""

    draw = "run-1"

    def __init__(self, lastmods, trust):
        self.published = dict(lastmods)
        self.trust = dict(trust)

    def publish_lastmods(self, lastmods):
        self.published.update(lastmods)

    def lastmods(self):
        return dict(self.published)

    def host_trust(self, domain, read):
        if domain not in self.trust:
            self.trust[domain] = read()
        return self.trust[domain]


def test_a_shared_run_decides_with_the_trust_and_lastmods_the_run_first_read(build):
    # another process of the run read the sitemaps and the host's trust before this one
    # decided its first page; since then a process that closed added observations that
    # broke the host's streak in the store: this process still decides as the run does
    crawler, mw = build(REVISIT_ENABLED=True, REVISIT_SAMPLE=0, REVISIT_TRUST_EVIDENCE=3)
    request, _ = fetch(mw)
    url_hash = revalidation(request.meta).url_hash
    store = cache_for(crawler).store
    checked = (datetime.now(UTC) - timedelta(days=5)).isoformat(timespec="seconds")  # past its interval
    store.put_page(
        url_hash,
        {
            "url": URL,
            "domain": "docs.example.com",
            "revisit": {"interval": 1.0, "verified_at": checked, "lastmod": "2026-11-01"},
        },
    )
    store.put_domain("docs.example.com", {"revisit": {"streak": 0, "agree": 3, "noisy": 0, "stale": 1}})
    trusted = {"streak": 3, "agree": 3, "noisy": 0, "stale": 0}
    mw.cache.run.revisit.share = RunShare({url_hash: "2026-11-01"}, {"docs.example.com": trusted})
    again = Request(URL)
    served = run(mw.process_request(again))
    assert isinstance(served, HtmlResponse) and FLAG_REVISIT_SKIPPED in served.flags
    assert crawler.stats.get_value("revisit/skipped/lastmod_unchanged") == 1
