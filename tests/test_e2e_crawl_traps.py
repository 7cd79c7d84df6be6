"""End to end: a site with crawl traps (an endless calendar, a page linking to a new URL
on every request) is crawled to an end by the default trap guard; a site of many pages
in one directory is crawled whole."""

from __future__ import annotations

from datetime import date, timedelta

import pytest

from tests.crawl import assert_ok, run_crawl, stat
from tests.site import Page, Site, docs_site


def calendar_day(path):
    """/calendar/Y/M/D: the day's page, linking the day before and the day after (endless)."""
    try:
        year, month, day = (int(part) for part in path.split("?")[0].strip("/").split("/")[1:4])
        today = date(year, month, day)
    except ValueError:
        return None
    links = [f"/calendar/{d.year}/{d.month}/{d.day}" for d in (today - timedelta(days=1), today + timedelta(days=1))]
    return Page(f"Events on {today}", [f"Nothing happens on {today.isoformat()}."], links)


def feed(path):
    """/feed?page=N: each page links to the next, without end."""
    n = int(path.partition("page=")[2] or 0)
    return Page(f"Feed page {n}", [f"Entry number {n} of the feed."], [f"/feed?page={n + 1}"])


@pytest.fixture
def trap_site():
    site = docs_site()
    site.generated["/calendar/"] = calendar_day
    site.generated["/feed"] = feed
    site.pages["/"].links += ["/calendar/2026/11/26", "/feed?page=1"]
    yield site.start()
    site.stop()


def fetched(site, prefix):
    return {path for path, status in site.log if path.startswith(prefix) and status == 200}


def test_an_endless_calendar_and_feed_end_at_the_guard(trap_site, tmp_path):
    site = trap_site
    settings = {"CRAWL_TRAP_MAX_PER_PATTERN": "40", "CRAWL_TRAP_MAX_QUERY_VARIANTS": "15"}
    result = run_crawl(site.url + "/", tmp_path / "cache", settings=settings, timeout=300)  # a safety net only
    assert_ok(result)
    assert len(fetched(site, "/calendar/")) == 40
    assert len([1 for path, _ in site.log if path == "/feed"]) == 15  # 15 query variants of /feed
    assert stat(result, "docs/trap_pattern") >= 1 and stat(result, "docs/trap_query_variants") >= 1
    warnings = [line for line in result.stderr.splitlines() if "Crawl trap?" in line]
    assert len(warnings) == 2, warnings  # one per trapped pattern or path
    assert any("/calendar/N/N/N has more than 40 pages" in w and "CRAWL_TRAP_MAX_PER_PATTERN" in w for w in warnings)
    assert any("/feed has more than 15 query variants" in w for w in warnings)
    report = result.report
    assert report["complete"] is False and report["pages_removed"] == 0
    assert "crawl trap: links past CRAWL_TRAP_MAX_PER_PATTERN not followed" in report["incomplete_reasons"]
    assert {"/guide/", "/guide/install.html", "/hidden.html"} <= {p for p, s in site.log if s == 200}


def test_many_pages_in_one_directory_are_crawled_whole(tmp_path):
    """200 word-named API pages and 200 numbered files under one directory, with bounds
    well below that: names are no trap, and the run is complete."""
    site = Site(noise=False)
    names = [
        f"{word}{chr(97 + n // 26)}{chr(97 + n % 26)}"
        for word in ("Frame", "Series", "Index", "Style")
        for n in range(50)
    ]
    api = [f"/api/{name}.html" for name in names] + [f"/api/{n}.html" for n in range(200)]
    for path in api:
        site.page(path, path, f"The reference of {path}.")
    site.page("/", "Home", "The reference.", links=api)
    site.start()
    try:
        settings = {"CRAWL_TRAP_MAX_PER_PATTERN": "100", "CRAWL_TRAP_MAX_QUERY_VARIANTS": "10"}
        result = assert_ok(run_crawl(site.url + "/", tmp_path / "cache", settings=settings))
        assert {p for p, s in site.log if s == 200} >= set(api)
        assert "Crawl trap?" not in result.stderr and stat(result, "docs/trap_pattern") == 0
        assert result.report["complete"] is True
    finally:
        site.stop()


def test_links_to_anchors_of_one_page_are_one_url_not_a_trap(tmp_path):
    """A Sphinx index links one page hundreds of times, each to another anchor
    (changelog.html#index-175): one page, one request, no trap, the run complete."""
    site = Site(noise=False)
    anchors = [f"/changelog.html#index-{n}" for n in range(60)] + [f"/api.html?v=1#s{n}" for n in range(30)]
    site.page("/", "Index", "The general index.", links=anchors)
    site.page("/changelog.html", "Changelog", "What changed in each version.")
    site.page("/api.html", "API", "The reference.")
    site.start()
    try:
        settings = {"CRAWL_TRAP_MAX_PER_PATTERN": "10", "CRAWL_TRAP_MAX_QUERY_VARIANTS": "5"}
        result = assert_ok(run_crawl(site.url + "/", tmp_path / "cache", settings=settings))
        assert site.requests_for("/changelog.html") == [200]
        assert "Crawl trap?" not in result.stderr
        assert stat(result, "docs/trap_pattern") == stat(result, "docs/trap_query_variants") == 0
        assert result.report["complete"] is True and result.report["pages_new"] == 3
    finally:
        site.stop()
