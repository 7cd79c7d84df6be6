"""End-to-end: a cache file that fails (damaged, full disk) never hangs a crawl and
never marks a live page removed."""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess

import pytest

from crawler.cache.lock import CacheLock
from crawler.cache.sqlite import SqliteDocStore
from tests.crawl import ROOT, crawl_env, run_crawl, scrapy_command
from tests.helpers import drop_overrides, garble_middle
from tests.site import docs_site


@pytest.fixture
def big_site():
    """The standard site and 40 longer pages: databases of many pages, a middle to damage."""
    site = docs_site()
    for n in range(40):
        site.page(f"/extra/{n}.html", f"Extra {n}", f"Extra page {n}. " + f"The text of page {n}. " * 40)
    site.pages["/"].links += [f"/extra/{n}.html" for n in range(40)]
    yield site.start()
    site.stop()


def removed(cache):
    conn = sqlite3.connect(f"file:{cache / 'cache.sqlite'}?mode=ro", uri=True)
    try:
        return conn.execute("SELECT count(*) FROM pages WHERE status = 'removed'").fetchone()[0]
    finally:
        conn.close()


def lock_free(cache):
    lock = CacheLock(cache)
    lock.acquire()  # raises CacheLockedError if a crawl left it held
    lock.release()
    return True


def test_a_damaged_index_is_refused_at_start_untouched(big_site, tmp_path):
    cache = tmp_path / "cache"
    assert run_crawl(big_site.url + "/", cache).returncode == 0
    damaged = garble_middle(cache / "cache.sqlite")
    second = run_crawl(big_site.url + "/", cache, timeout=120)
    assert second.returncode == 1
    assert "Crawl not started: The cache file" in second.stderr
    assert "cache.sqlite cannot be read or written (damaged:" in second.stderr
    assert "Traceback" not in second.stderr
    assert second.calls == []
    assert (cache / "cache.sqlite").read_bytes() == damaged
    assert lock_free(cache)


def test_a_cache_directory_that_cannot_be_made_is_refused_in_one_line(site, tmp_path):
    """EXTRACTED_DOCS_DIR naming a file (or a read-only place) used to be a traceback."""
    (tmp_path / "a-file").write_text("not a directory")
    crawl = run_crawl(site.url + "/", tmp_path / "a-file")
    assert crawl.returncode == 1
    assert (
        f"Crawl not started: The cache directory {tmp_path / 'a-file' / 'extractions'} cannot be made "
        f"({tmp_path / 'a-file'} is not a directory): set EXTRACTED_DOCS_DIR" in crawl.stderr
    )
    assert "Traceback" not in crawl.stderr
    assert crawl.calls == []


def test_damage_found_mid_crawl_stops_it_and_marks_nothing_removed(big_site, tmp_path):
    """The store opens the file as it did before its start-up check read every page:
    the first read or write of the damaged part fails in SQLite. The crawl used to hang
    forever holding the lock (a failed write in sqlitedict's thread), or mark the pages
    it failed to record removed."""
    cache = tmp_path / "cache"
    assert run_crawl(big_site.url + "/", cache).returncode == 0
    big_site.remove("/hidden.html")  # a page really gone: still not removed by a partial run
    big_site.sitemap = ["/"]
    garble_middle(cache / "cache.sqlite")
    settings = {"EXTRACTED_DOCS_STORE": "tests.faulty_store.UncheckedStore", "EXTRACTED_DOCS_COMMIT_EVERY": "10"}
    second = run_crawl(big_site.url + "/", cache, settings=settings, timeout=120)  # a safety net only
    report = second.report
    assert report["run_id"] != "" and report["complete"] is False
    assert report["pages_removed"] == 0
    assert any("cache.sqlite failed (database disk image is malformed)" in r for r in report["incomplete_reasons"])
    assert "Incomplete crawl, no page marked removed" in second.stderr
    assert "'cache/read_error'" in second.stderr or "'cache/write_error'" in second.stderr
    assert "Inner exception" not in second.stderr  # sqlitedict's thread is quiet: the store says what failed
    assert lock_free(cache)


def test_failing_content_writes_stop_the_crawl_and_keep_what_was_stored(big_site, tmp_path):
    cache = tmp_path / "cache"
    assert run_crawl(big_site.url + "/", cache).returncode == 0
    for n in range(40):  # every page changed: content to write
        big_site.edit(f"/extra/{n}.html", f"Extra page {n}, edited.")
    big_site.remove("/hidden.html")
    big_site.sitemap = ["/"]
    settings = {"EXTRACTED_DOCS_STORE": "tests.faulty_store.FailingWritesStore", "EXTRACTED_DOCS_COMMIT_EVERY": "4"}
    second = run_crawl(big_site.url + "/", cache, settings=settings, env={"TEST_FAIL_TABLE": "content"})
    assert second.returncode == 1
    assert "cache.sqlite failed (database or disk is full); stopping the crawl" in second.stderr
    assert "Closing spider (cache_write_failed)" in second.stderr
    assert second.calls == []  # no extractor call once the cache failed: its answer could not be kept
    assert "Extraction stopped, the cache cannot be written" in second.stderr
    report = second.report
    assert report["complete"] is False and report["pages_removed"] == 0
    assert removed(cache) == 0
    # no record points at content that was not written: the edited pages keep their old record
    store = SqliteDocStore(cache, readonly=True)
    try:
        pages = dict(store.iter_pages())
        assert len(pages) == 46
        for url_hash, record in pages.items():
            assert store.get_content(url_hash)["content_hash"] == record["content_hash"]
    finally:
        store.close()
    assert lock_free(cache)


def test_no_extractor_call_starts_after_the_index_fails_and_the_next_run_makes_the_others(big_site, tmp_path):
    """The index fails at the extraction stage's first commit (a full disk): the calls
    already started finish and are kept; no other starts. It used to go on calling the
    extractor for every page, answers the next run paid for again when the disk was full."""
    cache = tmp_path / "cache"
    settings = {
        "EXTRACTED_DOCS_STORE": "tests.faulty_store.FailingWritesStore",
        "EXTRACTED_DOCS_COMMIT_EVERY": "4",
        "EXTRACTOR_CONCURRENCY": "2",
    }
    first = run_crawl(big_site.url + "/", cache, settings=settings, env={"TEST_FAIL_TABLE": "input"})
    assert "cache.sqlite failed (database or disk is full)" in first.stderr
    assert "Extraction stopped, the cache cannot be written" in first.stderr
    assert 0 < len(first.calls) <= 3  # the 2 calls of the failed commit, and the one running beside
    assert removed(cache) == 0
    second = run_crawl(big_site.url + "/", cache)
    assert second.returncode == 0, second.stderr[-3000:]
    assert set(first.calls).isdisjoint(second.calls) and len(set(second.calls)) == len(second.calls)
    assert len(first.calls) + len(second.calls) == 46  # every page paid for once
    third = run_crawl(big_site.url + "/", cache)
    assert third.calls == []
    assert lock_free(cache)


def test_an_answer_the_store_refuses_is_kept_and_adopted_by_the_next_run(big_site, tmp_path):
    """``extractions/`` cannot be written after 5 files: the 6th answer goes to
    ``pending-extractions/``, no call starts after it, and the next run adopts it."""
    cache = tmp_path / "cache"
    settings = {"EXTRACTED_DOCS_STORE": "tests.faulty_store.FailingExtractionsStore", "EXTRACTOR_CONCURRENCY": "1"}
    first = run_crawl(big_site.url + "/", cache, settings=settings, env={"TEST_FAIL_AFTER": "5"})
    assert len(first.calls) == 6, first.stderr[-3000:]
    assert "Permission denied" in first.stderr and "the next run adopts it without a call" in first.stderr
    assert "Traceback" not in first.stderr
    assert len(list((cache / "pending-extractions").glob("*.json"))) == 1
    assert any("Permission denied" in r for r in first.report["incomplete_reasons"]) and removed(cache) == 0
    second = run_crawl(big_site.url + "/", cache)
    assert second.returncode == 0, second.stderr[-3000:]
    assert set(first.calls).isdisjoint(second.calls) and len(second.calls) == 46 - 6
    assert "'extraction/recovered_pending': 1" in second.stderr
    assert list((cache / "pending-extractions").glob("*.json")) == []
    assert run_crawl(big_site.url + "/", cache).calls == []


def test_an_unwritable_extractions_directory_is_one_error_and_a_partial_run(site, tmp_path):
    """``extractions/`` cannot be written (its permissions): one clear error, no
    traceback, the answers kept for the next run, and a run report that says the run
    is partial and why."""
    cache = tmp_path / "cache"
    assert run_crawl(site.url + "/", cache).returncode == 0
    edited = ("/", "/guide/", "/api.html")
    for path in edited:
        site.edit(path, f"{path} was edited.")
    (cache / "extractions").chmod(0o555)
    try:
        command = scrapy_command(["crawl", "docs", "-a", f"start_urls={site.url}/"], cache)
        done = subprocess.run(
            drop_overrides(command), cwd=ROOT, env=crawl_env(), capture_output=True, text=True, timeout=120
        )
    finally:
        (cache / "extractions").chmod(0o700)
    assert done.returncode == 1
    log = done.stderr
    assert "Traceback" not in log and "Task exception was never retrieved" not in log, log[-3000:]
    errors = [line for line in log.splitlines() if "] ERROR: " in line]
    assert len(errors) == 1 and "Writing an extraction failed" in errors[0] and "Permission denied" in errors[0]
    report = json.loads((cache / "runs" / "latest.json").read_text())
    assert report["complete"] is False and report["pages_removed"] == 0
    assert any("Permission denied" in reason for reason in report["incomplete_reasons"])
    held = "partial, no page marked removed for not being reached"
    assert re.search(rf"run {report['run_id']} \(finished in \w+, {held}: cache write failed", log)
    verified = subprocess.run(
        scrapy_command(["cache", "verify"], cache), cwd=ROOT, env=crawl_env(), capture_output=True, text=True
    )
    assert verified.returncode == 0, verified.stdout + verified.stderr  # the kept answers are no damage
    assert "the next run adopts 3 extractions (3 kept in pending-extractions/" in verified.stdout
    again = run_crawl(site.url + "/", cache)
    assert again.returncode == 0 and again.calls == []  # the kept answers adopted: none paid twice
    assert f"'extraction/recovered_pending': {len(edited)}" in again.stderr
