"""Linked files that are not pages (issue 26): a page request answered with a declared
non-HTML type is stopped at its headers, on the first crawl and on a recrawl."""

from __future__ import annotations

import time

from tests.crawl import assert_ok, run_crawl, stat
from tests.site import Stream

#: a 2 MiB file linked from the home page, declared application/json
SIZE = 2 * 1024 * 1024


def responses_sent(stream: Stream, count: int) -> list[int]:
    """The stream's bytes per response once ``count`` responses are done (the server
    ends one after its pause, maybe after the crawl has)."""
    deadline = time.monotonic() + 10
    while len(stream.sent) < count and time.monotonic() < deadline:
        time.sleep(0.05)
    return stream.sent


def test_a_linked_non_html_file_is_not_downloaded_past_its_headers(site, tmp_path):
    stream = Stream(
        chunk=b'{"key": "value"}\n' * 4096,
        cap=SIZE,
        content_type="application/json",
        declared_length=SIZE,
        pause=0.5,  # the body is written after the crawler has seen the headers
    )
    site.streams["/files/schema.json"] = stream
    # without a Content-Type: read in full, as HTML
    untyped_body = b"<html><body><main><p>A file without a type of its own.</p></main></body></html>"
    site.streams["/files/untyped"] = untyped = Stream(
        chunk=untyped_body, cap=len(untyped_body), content_type="", declared_length=len(untyped_body)
    )
    site.pages["/"].links += ["/files/schema.json", "/files/untyped"]
    cache = tmp_path / "cache"

    first = run_crawl(site.url + "/", cache)
    assert_ok(first)
    sent = responses_sent(stream, 1)
    assert len(sent) == 1
    assert sent[0] < SIZE // 8, sent  # the socket took at most a few chunks
    assert stat(first, "docs/non_html_skipped") == 1
    assert stat(first, "docs/non_html_stopped") == 1
    assert stat(first, "docs/non_html_bytes_not_downloaded") == SIZE
    assert stat(first, "downloader/response_bytes") < SIZE // 8
    assert untyped.sent == [len(untyped_body)]
    report = first.report
    # the site's six pages and the untyped file, read as an (empty) HTML page
    assert (report["pages_new"], report["finish_reason"]) == (7, "finished")

    second = run_crawl(site.url + "/", cache)
    assert_ok(second)
    sent = responses_sent(stream, 2)
    assert len(sent) == 2
    assert sent[1] < SIZE // 8, sent
    assert stat(second, "docs/non_html_stopped") == 1
    assert stat(second, "docs/non_html_bytes_not_downloaded") == SIZE
    assert stat(second, "downloader/response_bytes") < SIZE // 8
    report = second.report
    assert (report["pages_unchanged"], report["pages_new"], report["pages_changed"]) == (7, 0, 0)
