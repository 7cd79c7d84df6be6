"""The docs spider's crawl trap guard (crawler/spiders/traps.py): the path pattern and the bounds."""

from __future__ import annotations

import logging

import pytest
from scrapy.utils.test import get_crawler

from crawler.spiders.docs import DocsSpider
from crawler.spiders.traps import TrapGuard, path_pattern


@pytest.mark.parametrize(
    ("path", "pattern"),
    [
        ("/calendar/2026/11/26", "/calendar/N/N/N"),
        ("/calendar/2026/11/26/", "/calendar/N/N/N/"),
        ("/events/2026-11-26", "/events/N"),
        ("/archive/26.11.2026/page/3", "/archive/N/page/N"),
        ("/log/20261126T120000Z", "/log/N"),
        ("/s/3f2a9c1e7b", "/s/N"),
        ("/s/123e4567-e89b-12d3-a456-426614174000/x", "/s/N/x"),
        # names stay names, even with digits in them
        ("/api/Frame.html", "/api/Frame.html"),
        ("/docs/section-3/page-12.html", "/docs/section-3/page-12.html"),
        ("/p/12.html", "/p/12.html"),
        ("/v2/guide", "/v2/guide"),
        ("/deadbeef/", "/deadbeef/"),  # hex letters only: a word
        ("/", "/"),
        ("", ""),
    ],
)
def test_path_pattern(path, pattern):
    assert path_pattern(path) == pattern


def test_a_pattern_is_bounded_per_site_and_warned_about_once(caplog):
    guard = TrapGuard(max_query_variants=100, max_per_pattern=3)
    days = [f"http://a.test/calendar/2026/11/{d}" for d in range(1, 7)]
    with caplog.at_level(logging.WARNING):
        assert [guard.admit(url) for url in days] == [None, None, None, "pattern", "pattern", "pattern"]
    assert guard.admit("http://b.test/calendar/2026/11/1") is None  # another site, its own count
    assert guard.admit("http://a.test/calendar/2026/11") is None  # another pattern
    warnings = [r.getMessage() for r in caplog.records]
    assert warnings == [
        "Crawl trap? http://a.test/calendar/N/N/N has more than 3 pages: its further links are not followed "
        "(CRAWL_TRAP_MAX_PER_PATTERN; 0 for no bound); the run is partial, nothing is marked removed"
    ]


def test_query_variants_are_bounded_per_path():
    guard = TrapGuard(max_query_variants=2, max_per_pattern=1000)
    assert guard.admit("http://a.test/feed?s=1") is None
    assert guard.admit("http://a.test/feed?s=2") is None
    assert guard.admit("http://a.test/feed?s=3") == "query_variants"
    assert guard.admit("http://a.test/feed") is None  # no query: no variant
    assert guard.admit("http://a.test/other?s=3") is None


def test_zero_is_no_bound_and_a_negative_bound_is_refused():
    guard = TrapGuard(0, 0)
    assert all(guard.admit(f"http://a.test/c/{n}?q={n}") is None for n in range(5000))
    with pytest.raises(ValueError, match="CRAWL_TRAP_MAX_PER_PATTERN must be >= 0"):
        TrapGuard(1, -1)


def test_the_spider_reads_its_bounds_from_the_settings():
    crawler = get_crawler(DocsSpider, {"CRAWL_TRAP_MAX_QUERY_VARIANTS": 7, "CRAWL_TRAP_MAX_PER_PATTERN": 0})
    spider = DocsSpider.from_crawler(crawler, start_urls="http://a.test/")
    assert (spider.traps.max_query_variants, spider.traps.max_per_pattern) == (7, 0)
    default = DocsSpider.from_crawler(get_crawler(DocsSpider), start_urls="http://a.test/")
    assert (default.traps.max_query_variants, default.traps.max_per_pattern) == (100, 1000)
