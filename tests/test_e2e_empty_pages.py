"""End-to-end: a page with no text to extract is not sent, and never silently."""

from __future__ import annotations

import json

from tests.crawl import assert_ok, cache_command, run_crawl, stat
from tests.site import Raw

#: a gallery: its main content is an image without alt text
GALLERY = (
    b"<html><head><title>Gallery</title></head><body><nav><a href='/'>Home</a></nav>"
    b"<main><img src='/shot.png'></main><footer>Copyright Example Corp</footer></body></html>"
)
#: a JavaScript shell nobody rendered
SHELL = b"<html><head><title>App</title></head><body><div id='root'></div><script>start()</script></body></html>"


def test_pages_with_no_text_are_counted_listed_and_shown(site, tmp_path):
    site.raw["/gallery.html"] = Raw(GALLERY)
    site.raw["/app.html"] = Raw(SHELL)
    site.pages["/"].links += ["/gallery.html", "/app.html"]
    cache = tmp_path / "cache"

    first = run_crawl(site.url + "/", cache)
    assert_ok(first)
    assert len(first.calls) == 6  # the site's six pages with text
    assert not any(url.endswith(("/gallery.html", "/app.html")) for url in first.calls)
    assert stat(first, "extraction/empty_input") == 2
    report = first.report
    assert (report["pages_new"], report["pages_empty"]) == (8, 2)
    assert sorted(report["empty_pages"]) == [site.url + "/app.html", site.url + "/gallery.html"]
    assert "2 pages with no text, not sent (`scrapy cache ls --empty`)" in first.stderr
    assert "Nothing to extract from" not in first.stderr  # no INFO line per page
    table = cache_command(cache, "ls", "--empty")
    listed = [line for line in table.splitlines() if site.url in line]
    assert len(listed) == 2 and all(" empty " in line for line in listed), table
    assert sorted(line.split()[-1] for line in listed) == [site.url + "/app.html", site.url + "/gallery.html"]

    again = run_crawl(site.url + "/", cache)  # unchanged: still said, still not sent
    assert_ok(again)
    assert again.calls == []
    assert (again.report["pages_empty"], again.report["pages_unchanged"]) == (2, 8)

    site.raw["/gallery.html"] = Raw(GALLERY.replace(b"<img src='/shot.png'>", b"<p>Screenshots of the app.</p>"))
    fixed = run_crawl(site.url + "/", cache)
    assert_ok(fixed)
    assert [url.replace(site.url, "") for url in fixed.calls] == ["/gallery.html"]
    assert (fixed.report["pages_empty"], fixed.report["empty_pages"]) == (1, [site.url + "/app.html"])
    assert [page["url"] for page in json.loads(cache_command(cache, "ls", "--empty", "--json"))] == [
        site.url + "/app.html"
    ]
