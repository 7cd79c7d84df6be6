"""End-to-end: pages the crawl reached but could not read never make pages look removed."""

from __future__ import annotations

import gzip

from tests.crawl import run_crawl
from tests.site import Raw, Stream
from tests.test_e2e_robustness import stat


def removed_count(result):
    return result.report["pages_removed"]


def test_redirect_loop_makes_the_run_partial_and_removes_nothing(site, tmp_path):
    # /p/1 and ten pages only it links to
    children = [f"/p/1/child-{n}.html" for n in range(10)]
    for n, path in enumerate(children):
        site.page(path, f"Child {n}", f"Child page {n}, linked only from page one.")
    site.page("/p/1", "Page one", "The page that will loop.", links=children)
    site.pages["/"].links.append("/p/1")
    cache = tmp_path / "cache"
    first = run_crawl(site.url + "/", cache)
    assert first.returncode == 0, first.stderr[-2000:]
    assert first.report["pages_new"] == 17
    assert first.report["complete"] is True

    # /p/1 -> /p/1?r=1 -> /p/1: Scrapy's duplicate filter drops the last request
    site.redirects["/p/1"] = "/p/1?r=1"
    site.redirects["/p/1?r=1"] = "/p/1"
    second = run_crawl(site.url + "/", cache)
    assert second.returncode == 0, second.stderr[-2000:]
    assert removed_count(second) == 0
    assert stat(second, "dedup/pages_removed") == 0
    report = second.report
    assert report["complete"] is False
    assert any("redirect" in reason for reason in report["incomplete_reasons"]), report["incomplete_reasons"]
    assert stat(second, "dupefilter/redirect_unreached") == 1
    assert any(
        "WARNING" in line and f"{site.url}/p/1" in line and "redirect" in line for line in second.stderr.splitlines()
    ), second.stderr[-3000:]


def test_redirect_to_a_crawled_page_is_an_ordinary_duplicate(site, tmp_path):
    site.redirects["/old-guide"] = "/guide/"
    site.redirects["/older-guide"] = "/old-guide"
    site.pages["/"].links += ["/old-guide", "/older-guide"]
    cache = tmp_path / "cache"
    result = run_crawl(site.url + "/", cache)
    assert result.returncode == 0, result.stderr[-2000:]
    assert stat(result, "dupefilter/redirect_filtered") >= 1
    assert stat(result, "dupefilter/redirect_unreached") == 0
    assert result.report["complete"] is True
    assert result.report["pages_new"] == 6


def test_oversized_responses_fail_with_a_reason_and_remove_nothing(site, tmp_path):
    big = ["/big/endless.html", "/big/declared.html", "/big/bomb.html"]
    for path in big:
        site.page(path, "Big", f"The page {path} before it grew.", links=["/big/child.html"])
    site.page("/big/child.html", "Child", "Linked only from the big pages.")
    site.pages["/"].links += big
    cache = tmp_path / "cache"
    settings = {"DOWNLOAD_MAXSIZE": str(1024 * 1024), "DOWNLOAD_WARNSIZE": str(256 * 1024), "RETRY_TIMES": "0"}
    first = run_crawl(site.url + "/", cache, settings=settings)
    assert first.report["complete"] is True, first.stderr[-2000:]

    for path in big:
        site.remove(path)
    site.streams["/big/endless.html"] = Stream()  # no Content-Length, never ends
    site.streams["/big/declared.html"] = Stream(declared_length=500 * 1024 * 1024)
    bomb = gzip.compress(b"<html><body><main><p>" + b"boom " * (4 * 1024 * 1024) + b"</p></main></body></html>")
    assert len(bomb) < 64 * 1024  # small on the wire, 20 MiB decompressed
    site.raw["/big/bomb.html"] = Raw(bomb, headers={"Content-Encoding": "gzip"})
    second = run_crawl(site.url + "/", cache, settings=settings)
    assert second.returncode == 0, second.stderr[-2000:]
    failures = [line for line in second.stderr.splitlines() if "Page failed:" in line]
    assert len(failures) == 3, failures
    for line in failures:
        assert line.split("Page failed: ", 1)[1].split(": ", 1)[1].strip(), line  # a reason after the URL
    assert any("DOWNLOAD_MAXSIZE" in line for line in failures if "endless" in line), failures
    assert stat(second, "docs/failed_pages") == 3
    assert stat(second, "docs/too_large") == 3
    assert second.report["complete"] is False
    assert second.report["pages_removed"] == 0
