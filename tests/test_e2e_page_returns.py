"""End-to-end: a page removed (it answers 404) that comes back is reported ``new`` by
the run that sees it again, whether the server answers that run's conditional request
with a 304 or the page in full: in the summary line, the run report's ``changes``,
``scrapy cache ls --run last``, ``scrapy cache show`` history and the stats; its chunks
are written to the vector store again, and its extraction, kept while it was removed,
is reused when its text did not change (no extractor call paid twice)."""

from __future__ import annotations

import json
import re

import pytest

from tests.crawl import assert_ok, cache_command, paths, run_crawl, stat
from tests.embedders import embedded
from tests.test_e2e_postgres import STORE, latest_report, run_command
from tests.test_e2e_vector_sync import points_by_url, vector_settings

PAGE = "/api.html"  # linked from the home page: while it is away, it answers 404


@pytest.mark.parametrize(
    ("validators", "edited", "answer"),
    [
        ("etag", False, 304),  # back as it was: the stored ETag still matches
        ("none", False, 200),  # no validators: downloaded in full, the same text
        ("etag", True, 200),  # back with other text
    ],
    ids=["304", "200-same-text", "200-edited"],
)
def test_a_removed_page_that_comes_back_is_reported_new(make_site, tmp_path, validators, edited, answer):
    site = make_site(validators)
    cache = tmp_path / "cache"
    embedder_log = tmp_path / "embedded.log"
    settings = vector_settings(embedder_log)
    url = site.url + PAGE

    first = assert_ok(run_crawl(site.url + "/", cache, settings=settings))
    assert len(first.calls) == 6
    points = len(points_by_url(cache)[url])
    assert points > 0

    page = site.pages[PAGE]
    site.remove(PAGE)
    gone = assert_ok(run_crawl(site.url + "/", cache, settings=settings))
    assert gone.calls == []
    assert {c["url"]: c["status"] for c in gone.report["changes_sample"]} == {url: "removed"}
    assert url not in points_by_url(cache)  # its points deleted (a complete crawl)

    site.pages[PAGE] = page  # put back, as it was
    if edited:
        site.edit(PAGE, "The API has two functions, run() and stop().")
    site.reset_log()
    embedder_log.unlink()
    back = assert_ok(run_crawl(site.url + "/", cache, settings=settings))
    assert site.requests_for(PAGE) == [answer]
    # its extraction, kept while it was removed, is reused when its text is the same
    assert paths(site, back.calls) == ([PAGE] if edited else [])
    report = back.report
    assert {c["url"]: c["status"] for c in report["changes_sample"]} == {url: "new"}
    (change,) = report["changes_sample"]
    assert change["extraction_file"] == f"extractions/{change['url_hash']}.json"
    assert (cache / change["extraction_file"]).exists()
    counts = (report["pages_new"], report["pages_changed"], report["pages_unchanged"], report["pages_removed"])
    assert counts == (1, 0, 5, 0)
    assert report["extractor_calls"] == (1 if edited else 0)
    assert re.search(rf"run {report['run_id']} \(finished in \w+\): 1 new, 0 changed, 5 unchanged, 0 removed", back.log)
    not_modified = f"{report['responses_not_modified']} of {report['requests']} requests not modified (304)"
    assert report["requests"] == stat(back, "downloader/request_count") and not_modified in back.log
    assert (stat(back, "pages/new"), stat(back, "pages/changed"), stat(back, "pages/returned")) == (1, 0, 1)

    listed = json.loads(cache_command(cache, "ls", "--run", "last", "--json"))
    assert [(c["url"], c["status"]) for c in listed] == [(url, "new")]
    record = json.loads(cache_command(cache, "show", url, "--json"))["record"]
    assert record["status"] == "new" and "removed_at" not in record
    events = [h["event"] for h in record["history"]]
    tail = ["removed", "new", "extracted"] if edited else ["removed", "new"]  # no extraction: reused
    assert events[-len(tail) :] == tail
    last = record["history"][-len(tail) + 1]
    assert (last["event"], last["reason"], last["content_hash"]) == ("new", "returned", change["content_hash"])
    assert last["at"] == record["last_changed"]
    shown = cache_command(cache, "show", url)
    assert "reason=returned" in shown

    # its chunks are in the vector store again, embedded once more (its points were deleted)
    assert len(points_by_url(cache)[url]) == points
    assert len(embedded(embedder_log)) == points
    assert back.report["vector_sync"]["pages_synced"] == 1

    # reported once: the next recrawl finds it unchanged
    again = assert_ok(run_crawl(site.url + "/", cache, settings=settings))
    assert again.calls == [] and again.report["changes_sample"] == []
    assert (again.report["pages_new"], again.report["pages_unchanged"]) == (0, 6)


def test_a_removed_page_that_comes_back_is_reported_new_on_postgresql(site, tmp_path, postgres_dsn):
    """The same on the PostgreSQL store (a 304 brings it back), as shared runs use it."""
    cache = tmp_path / "cache"  # no directory is made: the store is the database
    env = {"EXTRACTED_DOCS_DSN": postgres_dsn}
    url = site.url + PAGE
    assert len(assert_ok(run_crawl(site.url + "/", cache, settings=STORE, env=env)).calls) == 6
    page = site.pages[PAGE]
    site.remove(PAGE)
    assert_ok(run_crawl(site.url + "/", cache, settings=STORE, env=env))
    assert {c["url"]: c["status"] for c in latest_report(postgres_dsn)["changes_sample"]} == {url: "removed"}

    site.pages[PAGE] = page
    site.reset_log()
    back = assert_ok(run_crawl(site.url + "/", cache, settings=STORE, env=env))
    assert site.requests_for(PAGE) == [304] and back.calls == []
    report = latest_report(postgres_dsn)
    assert {c["url"]: c["status"] for c in report["changes_sample"]} == {url: "new"}
    assert (report["pages_new"], report["pages_unchanged"], report["extractor_calls"]) == (1, 5, 0)
    listed = run_command(["cache", "ls", "--run", "last", "--json"], tmp_path, postgres_dsn)
    assert listed.returncode == 0, listed.stderr[-3000:]
    assert [(c["url"], c["status"]) for c in json.loads(listed.stdout)] == [(url, "new")]
    shown = run_command(["cache", "show", url, "--json"], tmp_path, postgres_dsn)
    history = json.loads(shown.stdout)["record"]["history"]
    assert [(h["event"], h.get("reason")) for h in history][-2:] == [("removed", "gone"), ("new", "returned")]
