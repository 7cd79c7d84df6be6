"""End-to-end: real crawls (subprocesses) of a local site that changes between runs."""

from __future__ import annotations

import json

import pytest

from tests.crawl import assert_ok, paths, run_crawl, stat

ALL_PAGES = {"/", "/guide/", "/guide/install.html", "/guide/usage.html", "/api.html", "/hidden.html"}


def stored_records(cache):
    """Every page record of the cache, as a cache command reads them."""
    from crawler.cache.sqlite import SqliteDocStore

    store = SqliteDocStore(cache, readonly=True)
    try:
        return [record for _, record in store.iter_pages()]
    finally:
        store.close()


@pytest.mark.parametrize("validators", ["etag", "last-modified", "none", "etag-changing"])
def test_first_crawl_unchanged_recrawl_and_edit(make_site, tmp_path, validators):
    site = make_site(validators)
    cache = tmp_path / "cache"

    first = run_crawl(site.url + "/", cache)
    assert_ok(first)
    assert paths(site, first.calls) == sorted(ALL_PAGES)  # the sitemap-only page included
    report = first.report
    assert (report["pages_new"], report["extractor_calls"], report["finish_reason"]) == (6, 6, "finished")
    assert report["pages_changed"] == report["pages_unchanged"] == report["pages_removed"] == 0

    site.reset_log()
    second = run_crawl(site.url + "/", cache)
    assert_ok(second)
    assert second.calls == []  # zero extractor calls on an unchanged site
    report = second.report
    assert (report["pages_unchanged"], report["pages_new"], report["pages_changed"]) == (6, 0, 0)
    assert report["extraction_cache_hits"] == 6
    expected_304 = 6 if validators in ("etag", "last-modified") else 0
    assert report["responses_not_modified"] == expected_304
    assert site.count_status(304) == expected_304

    site.edit("/guide/install.html", "Run pip install example==2.0 to install it.")
    third = run_crawl(site.url + "/", cache)
    assert_ok(third)
    assert paths(site, third.calls) == ["/guide/install.html"]
    report = third.report
    assert (report["pages_changed"], report["pages_unchanged"], report["extractor_calls"]) == (1, 5, 1)

    extraction = json.loads((cache / "extractions").glob("*.json").__next__().read_text())
    assert {"url", "url_hash", "extractor", "input_hash", "input_key", "extracted_at", "data"} <= set(extraction)


def test_added_page_linked_only_from_unchanged_page_is_found(site, tmp_path):
    cache = tmp_path / "cache"
    # usage.html links to a page that does not exist yet (a 404 on the first crawl)
    site.pages["/guide/usage.html"].links.append("/deep/new.html")
    first = run_crawl(site.url + "/", cache)
    assert_ok(first)
    # a page that never was is a broken link, not a page gone
    assert f"Broken link, not found (404/410 for a page never seen): {site.url}/deep/new.html" in first.stderr
    assert "Gone (404)" not in first.stderr
    assert (stat(first, "docs/not_found_pages"), stat(first, "docs/gone_pages")) == (1, 0)
    site.page("/deep/new.html", "Deeper", "Found through a page that did not change.")
    site.reset_log()
    result = run_crawl(site.url + "/", cache)
    assert_ok(result)
    assert site.requests_for("/guide/usage.html") == [304]  # not downloaded again...
    assert paths(site, result.calls) == ["/deep/new.html"]  # ...but its links were followed
    assert (result.report["pages_new"], result.report["pages_unchanged"]) == (1, 6)

    site.reset_log()
    again = run_crawl(site.url + "/", cache)
    assert_ok(again)
    assert again.calls == []
    assert site.requests_for("/deep/new.html") == [304]


def test_removed_and_unlinked_pages(crawled):
    site, cache = crawled  # the first crawl, made once for the module
    site.remove("/api.html")  # still linked from the home page, answers 404 now
    site.pages["/guide/"].links = ["/guide/install.html"]  # usage.html still served, unlinked
    result = run_crawl(site.url + "/", cache)
    assert_ok(result)
    assert f"Gone (404): {site.url}/api.html" in result.stderr  # a stored page removed
    assert "Broken link" not in result.stderr
    assert (stat(result, "docs/gone_pages"), stat(result, "docs/not_found_pages")) == (1, 0)
    assert paths(site, result.calls) == ["/guide/"]  # its links changed: new input
    report = result.report
    assert report["pages_removed"] == 2
    assert report["complete"] is True
    records = {record["url"].replace(site.url, ""): record for record in stored_records(cache)}
    assert records["/api.html"]["status"] == "removed"
    assert records["/guide/usage.html"]["status"] == "removed"
    assert records["/guide/install.html"]["status"] != "removed"

    # it comes back with the same text: new again (a change feed adds it back), no extractor call
    site.pages["/guide/"].links.append("/guide/usage.html")
    back = run_crawl(site.url + "/", cache)
    assert_ok(back)
    assert paths(site, back.calls) == ["/guide/"]
    assert (back.report["pages_new"], back.report["pages_changed"], back.report["pages_removed"]) == (1, 1, 0)
    assert {c["url"]: c["status"] for c in back.report["changes_sample"]} == {
        f"{site.url}/guide/usage.html": "new",
        f"{site.url}/guide/": "changed",
    }


def test_cut_short_crawl_never_marks_pages_removed(crawled):
    site, cache = crawled  # the first crawl, made once for the module
    result = run_crawl(site.url + "/", cache, args={"max_pages": "2"})
    assert_ok(result)
    report = result.report
    assert report["pages_removed"] == 0
    assert report["complete"] is False
    assert "max_pages" in report["incomplete_reasons"]
    limited = run_crawl(site.url + "/", cache, settings={"CLOSESPIDER_PAGECOUNT": "2"})
    assert_ok(limited)
    assert limited.report["finish_reason"] == "closespider_pagecount"
    assert limited.report["pages_removed"] == 0


def test_moved_page_reuses_extraction(crawled):
    site, cache = crawled  # the first crawl, made once for the module
    site.move("/guide/usage.html", "/guide/using.html")
    result = run_crawl(site.url + "/", cache)
    assert_ok(result)
    # identical text at the new URL: its cached extraction is reused; only the page
    # whose link changed is extracted again
    assert paths(site, result.calls) == ["/guide/"]
    report = result.report
    assert (report["pages_new"], report["pages_removed"], report["extraction_reused"]) == (1, 1, 1)
    moved = [json.loads(p.read_text()) for p in (cache / "extractions").glob("*.json")]
    using = next(e for e in moved if e["url"].endswith("/guide/using.html"))
    assert using["reused_from"].endswith("/guide/usage.html")
    assert using["data"]["title"] == "Usage"


def test_url_variants_are_one_page(site, tmp_path):
    cache = tmp_path / "cache"
    site.pages["/"].links += ["/guide/index.html", "/guide?utm_source=news", "/api.html#section", "/guide/#top"]
    result = run_crawl(site.url + "/", cache)
    assert_ok(result)
    assert result.report["pages_new"] == 6
    assert len(result.calls) == 6


def test_redo_extraction_extracts_everything(crawled):
    site, cache = crawled  # the first crawl, made once for the module
    forced = run_crawl(site.url + "/", cache, args={"redo": "extraction"})
    assert_ok(forced)
    assert len(forced.calls) == 6
    assert forced.report["responses_not_modified"] == 6  # downloads stay conditional


def test_pages_checked_less_than_the_minimum_interval_ago_are_not_requested(crawled):
    """The revisit schedule's REVISIT_MIN_INTERVAL (a day by default) holds for pages
    first crawled with the schedule off: their stored responses say when."""
    site, cache = crawled  # the first crawl, made once for the module
    site.reset_log()
    result = run_crawl(site.url + "/", cache, settings={"REVISIT_ENABLED": "True", "REVISIT_SAMPLE": "0"})
    assert_ok(result)
    assert result.calls == []
    assert result.report["revisit"]["requests_saved"] == 6
    assert stat(result, "revisit/skipped/min_interval") == 6
    # no page was requested at all: only the discovery files (the schedule reads the sitemap's lastmods)
    assert {path for path, _ in site.log} == {"/robots.txt", "/sitemap.xml"}
    assert result.report["pages_unchanged"] == 6  # but every page was still followed


def test_extractor_version_change_reextracts(crawled):
    site, cache = crawled  # the first crawl, made once for the module
    bumped = run_crawl(site.url + "/", cache, settings={"TEST_EXTRACTOR_VERSION": "2"})
    assert_ok(bumped)
    assert len(bumped.calls) == 6
    again = run_crawl(site.url + "/", cache, settings={"TEST_EXTRACTOR_VERSION": "2"})
    assert again.calls == []


def test_failed_extraction_is_recorded_and_retried(site, tmp_path):
    cache = tmp_path / "cache"
    first = run_crawl(site.url + "/", cache, settings={"TEST_EXTRACTOR_FAIL": "install"})
    assert first.returncode == 0
    assert len(first.calls) == 6
    report = first.report
    assert (report["extraction_errors"], report["errors"]) == (1, 1)
    meta = stored_records(cache)
    failed = [m for m in meta if "extraction_error" in m]
    assert len(meta) == 6 and len(failed) == 1  # the failure is recorded with the page
    assert failed[0]["url"].endswith("/guide/install.html") and "on purpose" in failed[0]["extraction_error"]["error"]
    second = run_crawl(site.url + "/", cache)
    assert_ok(second)
    assert paths(site, second.calls) == ["/guide/install.html"]  # unchanged, but retried
    # paid this run: in its change list (a downstream job hears of it now, never before)
    changes = {change["url"].replace(site.url, ""): change["status"] for change in second.report["changes_sample"]}
    assert changes == {"/guide/install.html": "new"}
    assert (second.report["pages_new"], second.report["pages_unchanged"]) == (1, 5)
    third = run_crawl(site.url + "/", cache)
    assert third.calls == []


def test_meta_keys_send_one_request_unconditionally_and_extract_it_again(site, tmp_path):
    cache = tmp_path / "cache"
    spider = "tests/optout_spider.py"
    assert_ok(run_crawl(site.url + "/", cache, runspider=spider))
    site.reset_log()
    result = run_crawl(site.url + "/", cache, runspider=spider)
    assert_ok(result)
    assert paths(site, result.calls) == ["/api.html"]  # unchanged, but force_extraction: extracted again
    assert site.requests_for("/api.html") == [200]  # and downloaded without validators
    assert site.requests_for("/guide/") == [304]


def test_max_age_reextracts_old_extractions_spread_over_time(site, tmp_path):
    from crawler.cache.sqlite import SqliteDocStore

    cache = tmp_path / "cache"
    age = {"EXTRACTOR_MAX_AGE": "10"}  # days, spread over 7.5 to 12.5 days per page
    assert_ok(run_crawl(site.url + "/", cache, settings=age))
    assert run_crawl(site.url + "/", cache, settings=age).calls == []  # younger than that
    store = SqliteDocStore(cache)  # time passes: every extraction is now older than 12.5 days
    for url_hash, record in list(store.iter_pages()):
        record["last_extracted"] = "2000-01-01T00:00:00Z"
        store.put_page(url_hash, record)
    store.close()
    expired = run_crawl(site.url + "/", cache, settings=age)
    assert len(expired.calls) == 6
    assert "'extraction/expired': 6" in expired.stderr
    assert run_crawl(site.url + "/", cache).calls == []  # without EXTRACTOR_MAX_AGE nothing expires


def test_redirected_page_costs_nothing_on_recrawl(make_site, tmp_path):
    site = make_site("last-modified")
    cache = tmp_path / "cache"
    site.page("/new.html", "New home of the page", "The text moved here long ago.")  # older than old.html
    site.page("/old.html", "Old page", "This page will become a redirect.")
    site.pages["/"].links.append("/old.html")
    assert_ok(run_crawl(site.url + "/", cache))
    site.remove("/old.html")
    site.redirects["/old.html"] = "/new.html"  # its stored validators must not follow the redirect
    assert paths(site, run_crawl(site.url + "/", cache).calls) == ["/new.html"]
    for _ in range(2):
        again = run_crawl(site.url + "/", cache)
        assert_ok(again)
        assert again.calls == []
        assert "stored body is unreadable" not in again.stderr


def test_pages_outside_the_crawl_rules_are_not_removed(crawled):
    site, cache = crawled  # the first crawl, made once for the module
    narrowed = run_crawl(site.url + "/", cache, args={"exclude": "/guide/"})
    assert_ok(narrowed)
    assert narrowed.report["complete"] is True
    assert narrowed.report["pages_removed"] == 0  # excluded, not gone
    no_sitemaps = run_crawl(site.url + "/", cache, args={"sitemaps": "false"})
    assert no_sitemaps.report["pages_removed"] == 0  # hidden.html is only in the sitemap
    assert "sitemaps off" in no_sitemaps.report["incomplete_reasons"]


def test_spellings_of_one_page_are_fetched_once_and_a_first_crawl_has_no_304(site, tmp_path):
    site.pages["/"].links += ["/guide/index.html", "/guide/?utm_source=news", "/guide/#install", "/api.html?fbclid=x"]
    # one request at a time (downloader middlewares see a request when the downloader
    # takes it): each other spelling comes after its page was answered
    one = {"CONCURRENT_REQUESTS_PER_DOMAIN": "1", "CONCURRENT_REQUESTS": "1"}
    first = run_crawl(site.url + "/", tmp_path / "cache", settings=one)
    assert_ok(first)
    report = first.report
    assert report["responses_not_modified"] == 0  # nothing to revalidate on a first crawl
    assert report["pages_new"] == 6
    fetched = [path for path, _ in site.log if path not in ("/robots.txt", "/sitemap.xml")]
    # 2 other spellings (Scrapy drops /guide/#install itself), served from what their
    # page's request stored: no request, and no conditional one (the 304s it reported);
    # /guide/index.html is a URL of its own, fetched, and found to be /guide by its content
    assert (len(fetched), stat(first, "revalidation/duplicate_spellings")) == (7, 2)
    assert site.requests_for("/guide/index.html") == [200]
    assert stat(first, "pages/folded") == 1


def test_a_404_of_another_spelling_never_removes_the_page(crawled):
    site, cache = crawled  # the first crawl, made once for the module
    site.redirects["/guide"] = "/gone-for-good"  # /guide (no slash) now leads to a 404...
    site.pages["/"].links.insert(0, "/guide")
    site.pages["/api.html"].links.append("/guide/")  # ...while /guide/ is still there
    result = run_crawl(site.url + "/", cache)
    assert_ok(result)
    assert result.report["pages_removed"] == 0 and result.report["complete"] is True


def test_a_redirect_between_spellings_keeps_the_page_and_its_subtree(site, tmp_path):
    cache = tmp_path / "cache"
    site.pages["/"].links = ["/guide", "/api.html"]  # the site links /guide, which redirects to /guide/
    site.redirects["/guide"] = "/guide/"
    first = run_crawl(site.url + "/", cache)
    assert_ok(first)
    assert first.report["pages_new"] == 6 and first.report["complete"] is True
    again = run_crawl(site.url + "/", cache)
    assert_ok(again)
    assert (again.report["pages_unchanged"], again.report["pages_removed"]) == (6, 0)


def interlinked(site, pages, first_links=()):
    """``pages`` more pages under /many/, each linking to the next five, the home page to
    all of them (after ``first_links``)."""
    for n in range(pages):
        links = [f"/many/{(n + k) % pages}.html" for k in range(1, 6)]
        site.page(f"/many/{n}.html", f"Many {n}", f"Page {n} of many.", links=links)
    site.pages["/"].links = [*first_links, *(f"/many/{n}.html" for n in range(pages))]


def page_downloads(site):
    return [path for path, _ in site.log if path not in ("/robots.txt", "/sitemap.xml")]


def test_max_pages_bounds_downloads(site, tmp_path):
    interlinked(site, 30)
    site.delay = 0.05  # downloads slower than parsing, as on a real network (localhost: 1 ms)
    parallel = {"CONCURRENT_REQUESTS_PER_DOMAIN": "16", "CONCURRENT_REQUESTS": "16"}
    result = run_crawl(site.url + "/", tmp_path / "cache", args={"max_pages": "3"}, settings=parallel)
    assert_ok(result)
    report = result.report
    assert report["finish_reason"] == "closespider_itemcount"
    assert report["pages_new"] == 3 and len(result.calls) == 3
    # no page request beyond the budget, however many may be in flight (before: 20 of
    # the 32 pages downloaded with these settings)
    pages = page_downloads(site)
    assert len(pages) == 3, pages
    assert stat(result, "docs/max_pages_held") > 0
    assert report["complete"] is False and report["pages_removed"] == 0
    assert "max_pages" in report["incomplete_reasons"]


def test_a_max_pages_recrawl_checks_the_pages_it_recorded_not_new_ones(site, tmp_path):
    """The sitemap lists the pages in another order on the second run (as a site sorting
    them by date does; on a real site, the run's timing alone changes which links come
    first): a max_pages recrawl asks first for the pages it recorded, so it checks the
    same pages and calls nothing. Before, it took the first listed: new pages, a call each."""
    site.pages.clear()
    listed = [f"/p/{n}.html" for n in range(10)]
    for path in listed:
        site.page(path, path, f"The page {path}.")
    site.page("/", "Home", "The home page.")
    site.sitemap = listed
    cache = tmp_path / "cache"
    first = assert_ok(run_crawl(site.url + "/", cache, args={"max_pages": "4"}))
    assert paths(site, first.calls) == ["/", "/p/0.html", "/p/1.html", "/p/2.html"]
    site.sitemap = listed[::-1]
    site.reset_log()
    second = assert_ok(run_crawl(site.url + "/", cache, args={"max_pages": "4"}))
    assert second.calls == []
    assert (second.report["pages_new"], second.report["pages_unchanged"]) == (0, 4)
    assert sorted(page_downloads(site)) == ["/", "/p/0.html", "/p/1.html", "/p/2.html"]
    assert stat(second, "docs/max_pages_recorded_first") == 3


def test_a_max_pages_larger_than_the_site_still_finds_a_page_no_longer_linked(site, tmp_path):
    """Fewer pages recorded than max_pages: nothing is asked for because it was recorded
    (all of them fit), so the run is complete and a page no link reaches any more is
    marked removed; with max_depth, neither (a recorded page's depth is not known)."""
    site.pages.clear()
    site.sitemap = None
    site.page("/", "Home", "The home page.", links=["/a.html", "/b.html"])
    site.page("/a.html", "A", "The page a.", links=["/c.html"])
    site.page("/b.html", "B", "The page b.")
    site.page("/c.html", "C", "The page c.")
    cache = tmp_path / "cache"
    assert_ok(run_crawl(site.url + "/", cache, args={"max_pages": "10"}))
    site.pages["/"].links = ["/a.html"]  # /b.html still served, linked no more
    second = assert_ok(run_crawl(site.url + "/", cache, args={"max_pages": "10"}))
    assert second.report["complete"] is True and second.report["pages_removed"] == 1
    assert stat(second, "docs/max_pages_recorded_first") == 0
    site.reset_log()
    third = assert_ok(run_crawl(site.url + "/", cache, args={"max_pages": "2", "max_depth": "1"}))
    assert sorted(page_downloads(site)) == ["/", "/a.html"] and stat(third, "docs/max_pages_recorded_first") == 0


def test_max_pages_counts_pages_not_failed_requests(site, tmp_path):
    """Links that come to nothing (404s) leave room for others: max_pages pages are
    recorded, and the downloads are those pages and the failed requests. (Here the
    two 404s take the budget's last places: the links held are requested once the
    crawl is idle.)"""
    interlinked(site, 30, first_links=["/missing/1.html", "/missing/2.html"])
    result = run_crawl(site.url + "/", tmp_path / "cache", args={"max_pages": "3"})
    assert_ok(result)
    assert result.report["pages_new"] == 3 and len(result.calls) == 3
    pages = page_downloads(site)
    assert sorted(p for p in pages if p.startswith("/missing/")) == ["/missing/1.html", "/missing/2.html"]
    assert len(pages) == 3 + 2, pages
