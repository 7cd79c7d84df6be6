"""End-to-end: pages the crawl reached but could not read never make pages look removed."""

from __future__ import annotations

from tests.crawl import run_crawl
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
