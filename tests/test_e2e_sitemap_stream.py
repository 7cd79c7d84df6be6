"""End to end: a large sitemap's pages are requested as the crawl drains its queue, not
all queued at once (Scrapy's scheduler holds at most a batch of them: the probe
extension of ``bench/sitemap_stream.py`` says how many requests it held at most), and
every page it lists is still crawled and recorded, the run complete; with the revisit
schedule (the sitemaps read before any page) too."""

from __future__ import annotations

import json

import pytest

from crawler.spiders.discovery import LISTED_BATCH
from tests.crawl import assert_ok, run_crawl, stat
from tests.site import Page, Site

LISTED = 3000
PROBE = {
    "EXTENSIONS": json.dumps({"bench.sitemap_stream.SchedulerProbe": 0, "crawler.extensions.progress.CrawlProgress": 0})
}


def listed_page(path: str) -> Page | None:
    """/p/N.html: a page only the sitemap lists (it links nowhere)."""
    number = path.removeprefix("/p/").removesuffix(".html")
    return Page(f"Page {number}", [f"The page number {number} of the reference."]) if number.isdigit() else None


@pytest.fixture
def large_sitemap():
    site = Site(noise=False)
    site.page("/", "Home", "The reference, every page listed in the sitemap.", links=["/p/0.html"])
    site.generated["/p/"] = listed_page
    site.sitemap = ["/", *(f"/p/{n}.html" for n in range(LISTED))]
    site.lastmod = "2026-11-01"
    yield site.start()
    site.stop()


@pytest.mark.parametrize("revisit", [False, True], ids=["links-and-sitemaps", "sitemaps-first"])
def test_a_large_sitemap_is_crawled_whole_without_being_queued_at_once(large_sitemap, tmp_path, revisit):
    settings = {**PROBE, "REVISIT_ENABLED": str(revisit)}
    result = assert_ok(run_crawl(large_sitemap.url + "/", tmp_path / "cache", settings=settings, timeout=600))
    assert stat(result, "docs/sitemap_urls") == LISTED + 1
    assert "'docs/sitemap_urls_waiting': 0" in result.stderr  # (every one requested)
    # the scheduler held at most a batch of them (and robots.txt, the sitemap, a link);
    # read first, they are start requests, made as the downloader has room
    assert 0 < stat(result, "bench/scheduler_max") <= (100 if revisit else LISTED_BATCH + 5)
    with large_sitemap.lock:
        requested = [path for path, _ in large_sitemap.log if path.startswith("/p/")]
    assert sorted(set(requested)) == sorted(f"/p/{n}.html" for n in range(LISTED))
    assert len(requested) == LISTED  # each once
    report = result.report
    assert report["pages_new"] == LISTED + 1
    assert report["incomplete_reasons"] == []
