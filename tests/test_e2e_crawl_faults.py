"""End-to-end: pages the crawl reached but could not read never make pages look removed."""

from __future__ import annotations

import gzip
import json
import random

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
    assert stat(second, "removal/pages_removed") == 0
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


def extraction_inputs(cache):
    inputs = {}
    for path in (cache / "extractions").glob("*.json"):
        record = json.loads(path.read_text())
        inputs[record["url"]] = record["data"]["input"]
    return inputs


def test_binary_served_as_html_is_skipped_and_removes_nothing(site, tmp_path):
    site.page("/files/notes.html", "Notes", "Release notes.", links=["/files/child.html"])
    site.page("/files/child.html", "Child", "Linked only from the notes.")
    site.pages["/"].links.append("/files/notes.html")
    cache = tmp_path / "cache"
    first = run_crawl(site.url + "/", cache)
    assert first.report["complete"] is True, first.stderr[-2000:]

    site.remove("/files/notes.html")
    # random bytes, no NUL anywhere: the old check (a NUL in the first 4 KiB) let them through
    site.raw["/files/notes.html"] = Raw(random.Random(4).randbytes(300_000).replace(b"\x00", b"\x01"))
    second = run_crawl(site.url + "/", cache)
    assert second.returncode == 0, second.stderr[-2000:]
    assert stat(second, "docs/binary_skipped") == 1
    assert f"Skipped {site.url}/files/notes.html: binary content served as HTML" in second.stderr
    assert f"{site.url}/files/notes.html" not in second.calls
    report = second.report
    assert report["complete"] is False
    assert "binary content served as HTML" in report["incomplete_reasons"]
    assert report["pages_removed"] == 0


def test_deep_nesting_and_charset_mismatch_keep_the_text(site, tmp_path):
    deep = b"<div>" * 100_000 + b"<p>Deep text survives.</p>" + b"</div>" * 100_000
    site.raw["/deep.html"] = Raw(
        b"<html><head><title>Deep</title></head><body><main><h1>Deep</h1>"
        + deep
        + b"<p>After the divs, a <a href='/deep-child.html'>link</a>.</p></main></body></html>"
    )
    site.page("/deep-child.html", "Deep child", "Linked only after the deep divs.")
    latin = "<html><head><title>Café</title></head><body><main><h1>Café</h1><p>Déjà vu à la crème brûlée.</p>"
    site.raw["/latin.html"] = Raw((latin + "</main></body></html>").encode("cp1252"))  # declared utf-8
    site.pages["/"].links += ["/deep.html", "/latin.html"]
    cache = tmp_path / "cache"
    result = run_crawl(site.url + "/", cache)
    assert result.returncode == 0, result.stderr[-2000:]
    inputs = extraction_inputs(cache)
    deep_input = inputs[f"{site.url}/deep.html"]
    assert "Deep text survives." in deep_input and "After the divs" in deep_input
    assert f"{site.url}/deep-child.html" in inputs
    assert "Déjà vu à la crème brûlée." in inputs[f"{site.url}/latin.html"]
    assert stat(result, "docs/deep_html") == 1
    assert stat(result, "docs/encoding_mismatch") == 1
    assert f"{site.url}/latin.html declares utf-8 but its body is not: read as cp1252" in result.stderr
    assert result.report["complete"] is True


def test_a_sitemap_too_large_to_download_makes_the_run_partial(site, tmp_path):
    cache = tmp_path / "cache"
    first = run_crawl(site.url + "/", cache)
    assert first.report["pages_new"] == 6 and first.report["complete"] is True

    # /hidden.html is only in the sitemap; a 404 sitemap would be a site without one,
    # but one that fails to download may list pages the crawl no longer reached
    site.streams["/sitemap.xml"] = Stream(content_type="application/xml", declared_length=200 * 1024 * 1024)
    second = run_crawl(site.url + "/", cache)
    assert second.returncode == 0, second.stderr[-2000:]
    assert second.report["pages_removed"] == 0
    assert second.report["complete"] is False
    assert stat(second, "docs/sitemap_failed") == 1
    assert f"Sitemap failed: {site.url}/sitemap.xml: DownloadCancelledError" in second.stderr


def test_a_start_page_answering_a_maintenance_notice_removes_nothing(site, tmp_path):
    """The start page answers 200 with a notice and no link: the run reaches nothing
    else and is complete, but most of a site is not gone for that (REMOVAL_MAX_SHARE)."""
    for n in range(10):
        site.page(f"/doc-{n}.html", f"Doc {n}", f"Documentation page {n}.")
    site.pages["/"].links.extend(f"/doc-{n}.html" for n in range(10))
    home = site.pages["/"]
    cache = tmp_path / "cache"
    first = run_crawl(site.url + "/", cache)
    assert first.returncode == 0 and first.report["pages_new"] == 16
    site.page("/", "Maintenance", "We are down for maintenance. Please come back later.")
    down = run_crawl(site.url + "/", cache)
    assert (removed_count(down), down.report["pages_changed"], down.report["complete"]) == (0, 1, False)
    # (the page the sitemap lists is reached; the other 14 are not)
    held = f"removal held: 14 of 16 pages of {site.url.split('//')[1]} not reached"
    assert down.report["incomplete_reasons"] == [held]
    assert "none is marked removed" in down.stderr and "REMOVAL_MAX_SHARE=1" in down.stderr
    assert stat(down, "removal/held_pages") == 14
    site.pages["/"] = home  # back: nothing was lost, nothing is new
    back = run_crawl(site.url + "/", cache)
    assert (back.report["pages_new"], removed_count(back), back.report["complete"]) == (0, 0, True)
