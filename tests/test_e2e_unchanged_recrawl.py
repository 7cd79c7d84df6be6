"""End-to-end: an unchanged recrawl reuses what each stored response parsed into
(``docs/parse_reused``) instead of parsing and converting the page again, and finds
exactly what a parse would."""

from __future__ import annotations

import json

from tests.crawl import assert_ok, run_crawl, stat

PAGES = 6  # tests/site.py's docs_site


def fetched(site):
    """The paths the crawl asked for (robots.txt and the sitemap left out), sorted."""
    return sorted({path for path, _ in site.log if path not in ("/robots.txt", "/sitemap.xml")})


def test_an_unchanged_recrawl_reuses_every_page_and_follows_the_same_links(site, tmp_path):
    cache = tmp_path / "cache"
    first = run_crawl(site.url + "/", cache)
    assert_ok(first)
    assert stat(first, "docs/parse_reused") == 0
    found_first = fetched(site)
    contents = {path.name: path.read_bytes() for path in (cache / "extractions").glob("*.json")}

    site.reset_log()
    again = run_crawl(site.url + "/", cache)
    assert_ok(again)
    assert site.count_status(304) == PAGES
    assert stat(again, "docs/parse_reused") == PAGES  # no page parsed nor converted
    assert fetched(site) == found_first  # the stored links were followed
    assert again.calls == []
    report = again.report
    assert (report["pages_unchanged"], report["pages_new"], report["pages_changed"]) == (PAGES, 0, 0)
    assert report["complete"] is True and report["pages_removed"] == 0
    assert {p.name: p.read_bytes() for p in (cache / "extractions").glob("*.json")} == contents

    # the revisit schedule, every page checked less than REVISIT_MIN_INTERVAL ago: no
    # request at all, the pages still reused and followed
    site.reset_log()
    skipped = run_crawl(site.url + "/", cache, settings={"REVISIT_ENABLED": "True", "REVISIT_SAMPLE": "0"})
    assert_ok(skipped)
    assert stat(skipped, "docs/parse_reused") == PAGES and fetched(site) == []
    assert skipped.report["pages_unchanged"] == PAGES


def test_a_page_whose_html_changed_is_parsed_again(crawled):
    site, cache = crawled  # the first crawl, made once for the module
    site.edit("/guide/usage.html", "Call example.run() with a config file or a dict.")
    site.pages["/guide/usage.html"].links.append("/deep/new.html")
    site.page("/deep/new.html", "Deeper", "A page only the edited page links to.")
    result = run_crawl(site.url + "/", cache)
    assert_ok(result)
    assert stat(result, "docs/parse_reused") == PAGES - 1
    assert sorted(u.replace(site.url, "") for u in result.calls) == ["/deep/new.html", "/guide/usage.html"]
    assert (result.report["pages_changed"], result.report["pages_new"]) == (1, 1)
    again = run_crawl(site.url + "/", cache)
    assert_ok(again)
    assert stat(again, "docs/parse_reused") == PAGES + 1 and again.calls == []


def test_the_rules_of_the_day_apply_to_the_stored_links(crawled):
    site, cache = crawled  # the first crawl, made once for the module
    site.reset_log()
    narrowed = run_crawl(site.url + "/", cache, args={"exclude": "/guide/install"})
    assert_ok(narrowed)
    assert "/guide/install.html" not in fetched(site)
    assert stat(narrowed, "docs/parse_reused") == PAGES - 1
    assert narrowed.report["pages_removed"] == 0  # excluded, not gone
    site.reset_log()
    shallow = run_crawl(site.url + "/", cache, args={"max_depth": "1", "sitemaps": "false"})
    assert_ok(shallow)
    assert fetched(site) == ["/", "/api.html", "/guide/"]  # the links of depth 2 are not followed
    assert "max_depth" in shallow.report["incomplete_reasons"]


def test_another_converter_parses_again(crawled):
    site, cache = crawled  # the first crawl, made once for the module
    urls = {"MARKDOWN_LINKS": "urls", "CONVERTER_UPGRADE": "apply"}
    upgraded = run_crawl(site.url + "/", cache, settings=urls)
    assert_ok(upgraded)
    assert stat(upgraded, "docs/parse_reused") == 0
    assert len(upgraded.calls) == PAGES - 1  # the pages with links read differently: extracted again
    again = run_crawl(site.url + "/", cache, settings=urls)
    assert_ok(again)
    assert stat(again, "docs/parse_reused") == PAGES and again.calls == []


def test_the_stored_response_is_read_once_per_page(site, tmp_path):
    """Store reads of an unchanged recrawl, counted by a store (EXTRACTED_DOCS_STORE):
    one stored response per request (the 304 and the spider use the one the middleware
    read), one parsed page per page."""
    cache, counts = tmp_path / "cache", tmp_path / "counts.json"
    settings = {"EXTRACTED_DOCS_STORE": "tests.counting_store.CountingStore"}
    assert_ok(run_crawl(site.url + "/", cache, settings=settings))
    site.reset_log()
    again = run_crawl(site.url + "/", cache, settings=settings, env={"TEST_STORE_COUNTS": str(counts)})
    assert_ok(again)
    calls = json.loads(counts.read_text())
    assert len(site.log) == PAGES + 2  # robots.txt once (Scrapy's download serves the spider too), the sitemap
    assert calls["get_response"] == len(site.log)  # one per request, none by the 304 path nor the spider
    assert calls["get_parsed"] == PAGES
    assert "put_parsed" not in calls
    assert calls["put_response"] == 1  # the sitemap, which has no validators (pages answered 304: none)
