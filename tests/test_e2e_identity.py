"""End-to-end: which URLs are one page. An index file name (``default.html``,
``index.html``) alone never makes two URLs one page; evidence does."""

from __future__ import annotations

import pytest

from tests.crawl import assert_ok, paths, run_crawl, stat
from tests.site import Site, docs_site


def counts(report):
    return {k: report[k] for k in ("pages_new", "pages_changed", "pages_unchanged", "pages_removed", "extractor_calls")}


@pytest.fixture
def served():
    started = []

    def start(site):
        started.append(site.start())
        return site

    yield start
    for site in started:
        site.stop()


def test_a_default_html_page_and_its_directory_are_two_pages(served, tmp_path):
    site = docs_site()
    site.pages["/guide/"].links.append("/guide/auth/")
    site.page("/guide/auth/", "Auth", "Authentication: choose a backend.", links=["/guide/auth/default.html"])
    site.page("/guide/auth/default.html", "Default backend", "The default backend keeps users in a file.")
    served(site)
    cache = tmp_path / "cache"

    first = run_crawl(site.url + "/", cache)
    assert_ok(first)
    called = paths(site, first.calls)
    assert called.count("/guide/auth/") == called.count("/guide/auth/default.html") == 1
    assert counts(first.report) == {
        "pages_new": 8,
        "pages_changed": 0,
        "pages_unchanged": 0,
        "pages_removed": 0,
        "extractor_calls": 8,
    }
    assert stat(first, "pages/duplicates") == stat(first, "pages/folded") == 0

    second = run_crawl(site.url + "/", cache)  # unchanged: neither page flips to the other's text
    assert_ok(second)
    assert second.calls == []
    assert counts(second.report) == {
        "pages_new": 0,
        "pages_changed": 0,
        "pages_unchanged": 8,
        "pages_removed": 0,
        "extractor_calls": 0,
    }


def test_an_index_html_link_with_the_directorys_content_is_that_page(served, tmp_path):
    site = docs_site()  # /guide/index.html serves the page of /guide/
    site.pages["/"].links.append("/guide/index.html")
    served(site)
    cache = tmp_path / "cache"

    first = run_crawl(site.url + "/", cache)
    assert_ok(first)
    assert len(first.calls) == 6  # the six pages of the site, /guide/ once
    assert sum(1 for p in paths(site, first.calls) if p.startswith("/guide/index") or p == "/guide/") == 1
    assert counts(first.report)["pages_new"] == 6
    # whichever spelling came first, the other one was found to be it
    assert stat(first, "pages/folded") == stat(first, "pages/duplicates") == 1

    second = run_crawl(site.url + "/", cache)
    assert_ok(second)
    assert second.calls == []
    assert counts(second.report) == {
        "pages_new": 0,
        "pages_changed": 0,
        "pages_unchanged": 6,
        "pages_removed": 0,
        "extractor_calls": 0,
    }


def linked_site(site, guide):
    """A small site whose pages link the guide as ``guide`` (``/guide/`` or
    ``/guide/index.html``), with the same link text either way."""
    back = f'<p><a href="{guide}">Back to the guide</a></p>'
    site.page("/", "Home", "Welcome to the docs.", extra_html=f'<p><a href="{guide}">The guide</a></p>')
    site.page(
        "/guide/", "Guide", "The guide explains installation.", extra_html='<p><a href="install.html">Install</a></p>'
    )
    site.page("/guide/install.html", "Install", "Run pip install example.", extra_html=back)
    site.sitemap = ["/"]
    return site


def test_a_cache_made_when_index_names_were_folded_keeps_its_pages(served, tmp_path):
    """The page was recorded as /guide (the identity the folding rule gave
    /guide/index.html too); the site now links it only as /guide/index.html. Its record
    is found by its content: no extractor call, nothing removed."""
    site = served(linked_site(Site(), "/guide/"))
    cache = tmp_path / "cache"
    first = run_crawl(site.url + "/", cache)
    assert_ok(first)
    assert paths(site, first.calls) == ["/", "/guide/", "/guide/install.html"]

    linked_site(site, "/guide/index.html")
    site.reset_log()
    second = run_crawl(site.url + "/", cache)
    assert_ok(second)
    assert second.calls == []
    assert counts(second.report) == {
        "pages_new": 0,
        "pages_changed": 0,
        "pages_unchanged": 3,
        "pages_removed": 0,
        "extractor_calls": 0,
    }
    assert second.report["complete"] is True
    assert site.requests_for("/guide/") == []
    # its first request under the new spelling has no stored validators: one full download
    assert site.requests_for("/guide/index.html") == [200]
    assert stat(second, "pages/folded") == 1

    site.reset_log()
    third = run_crawl(site.url + "/", cache)
    assert_ok(third)
    assert third.calls == []
    assert (third.report["pages_unchanged"], third.report["pages_removed"]) == (3, 0)
    # the spelling known to be the page: asked for once, under the URL the page has
    assert site.requests_for("/guide/index.html") == [] and site.requests_for("/guide/") == [304]


def test_an_index_html_fetched_before_its_directory_keeps_its_validators(served, tmp_path):
    """/guide/index.html is reached first (the home page links it), /guide/ only later
    (from a page under it): the spelling was recorded as a page, then merged into the
    directory page when that came with the same text. The next crawl knows them for one
    page: it asks for it once, conditionally, under the URL it is recorded as."""
    site = Site()
    site.page("/", "Home", "Welcome to the docs.", extra_html='<p><a href="/guide/index.html">The guide</a></p>')
    site.page(
        "/guide/", "Guide", "The guide explains installation.", extra_html='<p><a href="install.html">Install</a></p>'
    )
    site.page("/guide/install.html", "Install", "Run pip install.", extra_html='<p><a href="/guide/">Up</a></p>')
    site.sitemap = ["/"]
    served(site)
    cache = tmp_path / "cache"
    first = assert_ok(run_crawl(site.url + "/", cache))
    fetched = [path for path, status in site.log if status == 200 and path.startswith("/guide/")]
    assert fetched == ["/guide/index.html", "/guide/install.html", "/guide/"]  # the spelling first
    assert paths(site, first.calls) == ["/", "/guide/", "/guide/install.html"]  # extracted once, as /guide/
    assert stat(first, "pages/folded") == stat(first, "pages/duplicates") == 1

    site.reset_log()
    second = assert_ok(run_crawl(site.url + "/", cache))
    assert second.calls == [] and second.report["pages_unchanged"] == 3
    assert site.requests_for("/guide/index.html") == []
    assert site.requests_for("/guide/") == [304]


class ReversedFingerprinter:
    """A REQUEST_FINGERPRINTER_CLASS of a plugin: Scrapy's scheduler uses it, the cache does not."""

    def fingerprint(self, request):
        from scrapy.utils.request import RequestFingerprinter

        return RequestFingerprinter().fingerprint(request)[::-1]


def test_another_request_fingerprinter_keeps_every_pages_identity(served, tmp_path):
    site = served(docs_site())
    cache = tmp_path / "cache"
    first = run_crawl(site.url + "/", cache)
    assert_ok(first)
    pages = first.report["pages_new"]
    assert pages > 3 and first.calls
    other = {"REQUEST_FINGERPRINTER_CLASS": "tests.test_e2e_identity.ReversedFingerprinter"}
    second = run_crawl(site.url + "/", cache, settings=other)
    assert_ok(second)
    assert counts(second.report) == {
        "pages_new": 0,
        "pages_changed": 0,
        "pages_unchanged": pages,
        "pages_removed": 0,
        "extractor_calls": 0,
    }
    assert second.calls == []
