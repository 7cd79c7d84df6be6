"""The embedded store's own guarantees: its files, faults, permissions and the
migration of older caches. What every store does is tests/test_store_contract.py."""

import hashlib
import json
import logging
import os
import pickle
import shutil
import sqlite3
from pathlib import Path

import pytest

from crawler.cache import Cache, CacheCorruptError, CacheLockedError
from crawler.cache.blocktable import SignatureRow
from crawler.cache.codecs import atomic_write_json, read_json, response_decode
from crawler.cache.errors import CacheStorageError
from crawler.cache.lock import CacheLock
from crawler.cache.migrate import LEGACY_FILES, WORK_DIR, migrate
from crawler.cache.responses import StoredResponse
from crawler.cache.sqlite import SqliteDocStore
from crawler.cache.sqlitefile import FORMAT_UPGRADES, FORMAT_VERSION
from crawler.identity import IDENTITY_VERSION
from tests.faulty_store import UncheckedStore
from tests.helpers import garble_middle

FIXTURE = Path(__file__).parent / "fixtures" / "cache-v1"


@pytest.fixture
def store(tmp_path):
    opened = SqliteDocStore(tmp_path / "c")
    yield opened
    opened.close()


def db(tmp_path):
    return sqlite3.connect(tmp_path / "c" / "cache.sqlite")


def test_one_database_file_and_readable_folders(tmp_path, store):
    store.put_page("h1", {"url": "https://a.com/"})
    store.write_extraction("h1", {"url": "https://a.com/"})
    store.commit()
    names = {p.name for p in (tmp_path / "c").iterdir()}
    assert {"cache.sqlite", "extractions", "runs", "boilerplate"} <= names
    assert not names & {*LEGACY_FILES.values(), "metadata"}
    assert store.format_info() == {"format": FORMAT_VERSION, "identity_version": IDENTITY_VERSION}
    assert store.write_extraction("h1", {"input_key": "k1"}) == "extractions/h1.json"


def test_a_cache_of_another_format_or_key_version_is_refused_untouched(tmp_path, store):
    store.close()
    conn = db(tmp_path)
    conn.execute("UPDATE kv SET value = '\"2\"' WHERE key = 'store/identity_version'")
    conn.commit()
    conn.close()
    with pytest.raises(
        CacheCorruptError, match=rf"another version of the crawler \(format {FORMAT_VERSION}, page keys version 2"
    ):
        SqliteDocStore(tmp_path / "c")


def test_a_cache_of_the_previous_format_is_upgraded_on_its_first_open(tmp_path, store, caplog):
    """Format 2 had no selection_widened nor named_out column: whoever opens it first
    (here a command that only reads) adds them, once; its pages are all still there."""
    assert set(FORMAT_UPGRADES) >= set(range(2, FORMAT_VERSION))  # every older format has its way up
    store.put_page("h", {"url": "https://a.com/", "domain": "a.com", "status": "new"})
    store.commit()
    store.close()
    conn = db(tmp_path)
    conn.execute("ALTER TABLE pages DROP COLUMN selection_widened")
    conn.execute("ALTER TABLE pages DROP COLUMN named_out")
    conn.execute("UPDATE kv SET value = '2' WHERE key = 'store/format'")
    conn.commit()
    conn.close()
    with caplog.at_level(logging.INFO, logger="crawler.cache.sqlitefile"):
        reader = SqliteDocStore(tmp_path / "c", readonly=True)
    try:
        assert reader.format_info()["format"] == FORMAT_VERSION
        assert [key for key, _ in reader.query_pages()] == ["h"] and list(reader.query_pages(widened=True)) == []
    finally:
        reader.close()
    assert f"from format 2 to {FORMAT_VERSION}" in caplog.text
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="crawler.cache.sqlitefile"):
        writer = SqliteDocStore(tmp_path / "c")
    try:
        writer.put_page(
            "h", {"url": "https://a.com/", "domain": "a.com", "status": "new", "selection_widened": "t", "named_out": 3}
        )
        writer.commit()
        assert [key for key, _ in writer.query_pages(widened=True)] == ["h"]
        assert [key for key, _ in writer.query_pages(named_out=True)] == ["h"]
    finally:
        writer.close()
    assert "Upgraded" not in caplog.text  # once


def test_an_upgrade_that_fails_is_said_and_changes_nothing(tmp_path, store, monkeypatch):
    store.close()
    conn = db(tmp_path)
    conn.execute("UPDATE kv SET value = '2' WHERE key = 'store/format'")
    conn.commit()
    conn.close()
    failing = ("ALTER TABLE pages ADD COLUMN half_done TEXT", "SELECT * FROM no_such_table")
    monkeypatch.setitem(FORMAT_UPGRADES, 2, failing)
    with pytest.raises(CacheCorruptError, match=r"of an older format; opening it adds .* which failed \(no such"):
        SqliteDocStore(tmp_path / "c", readonly=True)
    conn = db(tmp_path)
    assert conn.execute("SELECT value FROM kv WHERE key = 'store/format'").fetchone() == ("2",)
    assert "half_done" not in {row[1] for row in conn.execute("PRAGMA table_info(pages)")}  # one transaction
    conn.close()


def test_values_are_json_never_pickle(tmp_path, store):
    store.put_page("h", {"url": "https://a.com/", "status": "new"})
    store.put_content("h", {"text": "A"})
    store.commit()
    conn = db(tmp_path)
    assert conn.execute("SELECT record, url, status FROM pages").fetchone() == (
        '{"url":"https://a.com/","status":"new"}',
        "https://a.com/",
        "new",
    )
    text_sha256 = hashlib.sha256(b"A").hexdigest()  # kept beside the text: its hash read without it
    assert conn.execute("SELECT value FROM kv WHERE key = 'content/h'").fetchone() == (
        f'{{"text":"A","text_sha256":"{text_sha256}"}}',
    )
    conn.close()


def test_a_tampered_entry_is_not_executed_but_treated_as_missing(tmp_path, store):
    class Evil:
        def __reduce__(self):
            return (print, ("pwned",))

    store.commit()
    conn = db(tmp_path)
    conn.execute("INSERT INTO kv (key, value) VALUES (?, ?)", ("content/evil", pickle.dumps(Evil())))
    conn.execute("INSERT INTO pages (key, record) VALUES (?, ?)", ("evil", pickle.dumps(Evil())))
    conn.commit()
    conn.close()
    errors = []
    store.on_read_error = lambda table, key: errors.append((table, key))
    assert store.get_content("evil") is None
    assert store.get_page("evil") is None
    assert errors == [("content", "evil"), ("pages", "evil")]
    assert store.read_errors == 2


def test_corrupt_database_file_is_refused_untouched(tmp_path):
    directory = tmp_path / "c"
    directory.mkdir()
    (directory / "cache.sqlite").write_bytes(b"garbage" * 50)
    with pytest.raises(CacheCorruptError, match=r"cache\.sqlite cannot be read or written \(file is not a database"):
        SqliteDocStore(directory)
    assert (directory / "cache.sqlite").read_bytes() == b"garbage" * 50


def test_atomic_write_leaves_no_temporary_file(tmp_path):
    atomic_write_json(tmp_path / "x" / "a.json", {"k": "v"})
    assert read_json(tmp_path / "x" / "a.json") == {"k": "v"}
    assert [p.name for p in (tmp_path / "x").iterdir()] == ["a.json"]


def test_run_reports_are_files_and_latest_json_a_link_to_the_last_never_a_copy(store):
    path = store.write_run_report("r1", {"run_id": "r1"})
    assert read_json(Path(path)) == read_json(store.directory / "runs" / "latest.json") == {"run_id": "r1"}
    store.write_run_report("r2", {"run_id": "r2", "pages_new": 2})
    latest = store.directory / "runs" / "latest.json"
    assert latest.is_symlink() and os.readlink(latest) == "r2.json"  # relative: the cache may move
    assert read_json(latest) == store.latest_run_report() == {"run_id": "r2", "pages_new": 2}
    assert sorted(p.name for p in latest.parent.iterdir()) == ["latest.json", "r1.json", "r2.json"]
    assert [r["run_id"] for r in store.run_reports(5)] == ["r1", "r2"]


def test_latest_json_is_a_pointer_where_the_file_system_has_no_links_and_a_copy_still_reads(store, monkeypatch):
    def no_links(*args, **kwargs):
        raise OSError(1, "Operation not permitted")

    monkeypatch.setattr(os, "symlink", no_links)
    store.write_run_report("r1", {"run_id": "r1", "pages_new": 1})
    latest = store.directory / "runs" / "latest.json"
    assert read_json(latest) == {"run_id": "r1", "report": "runs/r1.json"}
    assert store.latest_run_report() == {"run_id": "r1", "pages_new": 1}
    atomic_write_json(latest, {"run_id": "r0", "pages_new": 5})  # a copy, as versions before wrote it
    assert store.latest_run_report() == {"run_id": "r0", "pages_new": 5}


def test_a_cache_of_format_4_has_its_reports_change_lists_moved_into_the_table(tmp_path, store, caplog):
    """Format 4 kept each run's change list inline in its report: the upgrade copies
    every report's list into the changes table, in order, once; the reports stay."""
    old_changes = [
        {"url": f"https://a.com/{n}", "url_hash": f"h{n}", "status": "removed" if n == 2 else "new",
         "content_hash": f"c{n}", "extraction_file": None}
        for n in range(3)
    ]  # fmt: skip
    runs = store.directory / "runs"
    atomic_write_json(runs / "20260101T000000000Z-aaaaaa.json", {"run_id": "20260101T000000000Z-aaaaaa",
                                                                 "changes": old_changes})  # fmt: skip
    atomic_write_json(runs / "20260102T000000000Z-bbbbbb.json", {"run_id": "20260102T000000000Z-bbbbbb"})  # older
    atomic_write_json(runs / "latest.json", {"run_id": "20260101T000000000Z-aaaaaa", "changes": old_changes})
    store.close()
    conn = db(tmp_path)
    conn.execute("DROP TABLE changes")
    conn.execute("UPDATE kv SET value = '4' WHERE key = 'store/format'")
    conn.commit()
    conn.close()
    with caplog.at_level(logging.INFO, logger="crawler.cache.sqlitefile"):
        reader = SqliteDocStore(tmp_path / "c", readonly=True)
    try:
        assert list(reader.iter_run_changes("20260101T000000000Z-aaaaaa")) == old_changes
        assert reader.count_run_changes("20260101T000000000Z-aaaaaa") == {"new": 2, "removed": 1}
        assert list(reader.iter_run_changes("20260102T000000000Z-bbbbbb")) == []
        assert reader.latest_run_report()["changes"] == old_changes  # the copy still reads
    finally:
        reader.close()
    assert f"from format 4 to {FORMAT_VERSION}" in caplog.text
    assert read_json(runs / "20260101T000000000Z-aaaaaa.json")["changes"] == old_changes  # nothing lost
    conn = db(tmp_path)
    assert conn.execute("SELECT count(*) FROM changes").fetchone() == (3,)  # once, not per report copy
    conn.close()


def test_a_cache_of_format_5_gets_the_boilerplate_tables_empty_and_keeps_everything(tmp_path, store, caplog):
    """Format 5 kept no page signatures nor domain statistics: the upgrade makes their
    tables, empty (the next analysis of each domain reads its pages once); nothing
    stored is touched."""
    store.put_page("h", {"url": "https://a.com/", "domain": "a.com", "status": "new"})
    store.put_content("h", {"url": "https://a.com/", "text": "A", "clean": "A"})
    store.put_domain("a.com", {"version": 2, "pages_analysed": 1})
    store.commit()
    store.close()
    conn = db(tmp_path)
    conn.execute("DROP TABLE block_signatures")
    conn.execute("DROP TABLE block_stats")
    conn.execute("UPDATE kv SET value = '5' WHERE key = 'store/format'")
    conn.commit()
    conn.close()
    with caplog.at_level(logging.INFO, logger="crawler.cache.sqlitefile"):
        writer = SqliteDocStore(tmp_path / "c")
    try:
        assert f"from format 5 to {FORMAT_VERSION}" in caplog.text and writer.format_info()["format"] == 7
        assert writer.get_content("h")["clean"] == "A" and writer.get_domain("a.com")["pages_analysed"] == 1
        assert list(writer.iter_signature_marks("a.com")) == [] and writer.get_block_stats("a.com") is None
        writer.put_signatures("a.com", [SignatureRow("h", "m", 1, 0, "i", b"sig")])
        writer.put_block_stats("a.com", b"stats")
        assert writer.get_signatures(["h"]) == {"h": b"sig"} and writer.get_block_stats("a.com") == b"stats"
    finally:
        writer.close()


def test_cache_open_takes_the_stores_lock(tmp_path):
    first = Cache.open(tmp_path / "c")
    with pytest.raises(CacheLockedError, match="in use by another crawl"):
        Cache.open(tmp_path / "c")
    assert CacheLock(tmp_path / "c").is_locked_elsewhere()
    first.close()
    assert not CacheLock(tmp_path / "c").is_locked_elsewhere()
    Cache.open(tmp_path / "c").close()


def test_cache_commits_every_n_writes(tmp_path):
    cache = Cache.open(tmp_path / "c", commit_every=3)
    commits = []
    commit = cache.store.commit
    cache.store.commit = lambda: commits.append(1)
    cache.wrote()
    cache.wrote()
    assert commits == []
    cache.wrote()
    assert commits == [1]
    cache.store.commit = commit
    cache.close()


def test_writes_wait_for_the_commit_and_go_in_one_transaction(tmp_path, store):
    store.put_page("h1", {"url": "https://a.com/1"})
    store.put_content("h1", {"text": "# 1"})
    store.put_page("h2", {"url": "https://a.com/2"})
    store.delete_page("h2")
    assert store.get_page("h1") == {"url": "https://a.com/1"}  # read from the pending writes
    other = db(tmp_path)
    assert other.execute("SELECT count(*) FROM pages").fetchone() == (0,)
    store.commit()
    assert other.execute("SELECT key FROM pages").fetchall() == [("h1",)]
    assert other.execute("SELECT count(*) FROM kv WHERE key LIKE 'content/%'").fetchone() == (1,)
    store.put_page("h3", {"url": "https://a.com/3"})
    store.close()  # closing writes what is pending
    assert other.execute("SELECT count(*) FROM pages").fetchone() == (2,)
    other.close()


def test_a_page_written_since_it_was_read_is_not_fetched_again_after_the_commit(tmp_path, store, monkeypatch):
    store.put_page("h0", {"url": "https://a.com/0", "n": 0})
    store.put_content("h0", {"text": "# 0"})
    store.commit()
    for key in ("h0", "h1", "h2"):
        store.get_response(key)  # (the middleware's read: every part of the page fetched)
    response = StoredResponse(
        url="https://a.com/1", status=200, headers={}, body=b"<p>1</p>", fetched_at="2026-01-02T00:00:00Z"
    )
    store.put_response("h1", response)
    store.put_content("h1", {"text": "# 1"})
    store.put_page("h1", {"url": "https://a.com/1"})
    store.delete_page("h2")
    store.put_content("h0", {"text": "# 0 again"})
    store.touch_page("h0", "2026-01-02T00:00:00Z", "r2")
    store.commit()
    queried = []
    read_parts = store._read_parts
    monkeypatch.setattr(store, "_read_parts", lambda key: queried.append(key) or read_parts(key))
    seen = {key: (store.get_page(key), store.get_content(key), store.get_response(key)) for key in ("h1", "h2")}
    assert queried == []  # what was committed is what a read fetches: kept, not fetched again
    assert seen == {"h1": ({"url": "https://a.com/1"}, {"text": "# 1"}, response), "h2": (None, None, None)}
    # a page only seen again is fetched: the database changed its record
    assert store.get_page("h0") == {
        "url": "https://a.com/0",
        "n": 0,
        "last_seen": "2026-01-02T00:00:00Z",
        "run_id": "r2",
    }
    assert store.get_content("h0") == {"text": "# 0 again"}
    assert queried == ["h0"]
    fresh = SqliteDocStore(tmp_path / "c", readonly=True)
    assert {key: (fresh.get_page(key), fresh.get_content(key), fresh.get_response(key)) for key in seen} == seen
    fresh.close()


def test_a_store_empty_when_its_lock_was_taken_asks_only_for_the_pages_written_since(tmp_path, monkeypatch):
    def opened():
        cache = Cache.open(tmp_path / "c")
        read_parts = cache.store._read_parts
        monkeypatch.setattr(cache.store, "_read_parts", lambda key: queried.append(key) or read_parts(key))
        return cache

    queried: list[str] = []
    cache = opened()
    store = cache.store
    assert store.get_page("h1") is None and store.get_response("h2") is None
    assert queried == []  # a new cache: nothing stored, nothing asked
    store.put_page("h1", {"url": "https://a.com/1"})
    store.put_content("h3", {"text": "# 3"})
    store.commit()
    store._recent = type(store._recent)()  # (what was read is forgotten: asked again)
    assert store.get_page("h1") == {"url": "https://a.com/1"} and store.get_content("h3") == {"text": "# 3"}
    assert store.get_page("h4") is None
    assert queried == ["h1", "h3"]  # written since: asked
    cache.close()
    assert store._written_since_empty is None  # the lock released: known no more
    queried.clear()
    cache = opened()  # a cache with pages: every page asked for
    assert cache.store.get_page("h4") is None and cache.store.get_page("h1") == {"url": "https://a.com/1"}
    assert queried == ["h4", "h1"]
    cache.close()


def test_a_store_empty_when_its_lock_was_taken_asks_only_for_the_inputs_linked_since(tmp_path, monkeypatch):
    cache = Cache.open(tmp_path / "c")
    store = cache.store
    select = store._select
    queried: list[str] = []
    monkeypatch.setattr(store, "_select", lambda sql, args=(): queried.extend(args) or select(sql, args))
    assert store.find_extraction("k1") is None and queried == []  # a new cache: nothing asked
    store.link_extraction("k1", "h1")
    assert store.find_extraction("k1") == "h1" and queried == []  # pending
    store.commit()
    assert store.find_extraction("k1") == "h1" and store.find_extraction("k2") is None
    assert queried == ["input/k1"]  # linked since: asked
    cache.close()
    queried.clear()
    cache = Cache.open(tmp_path / "c")  # a cache with an input: every input asked for
    select = cache.store._select
    monkeypatch.setattr(cache.store, "_select", lambda sql, args=(): queried.extend(args) or select(sql, args))
    assert cache.store.find_extraction("k2") is None and cache.store.find_extraction("k1") == "h1"
    assert queried == ["input/k2", "input/k1"]
    cache.close()


def test_a_failed_commit_writes_nothing_keeps_the_writes_and_says_so_at_close(tmp_path, caplog):
    store = SqliteDocStore(tmp_path / "c")
    store.put_page("h0", {"url": "https://a.com/0"})
    store.commit()
    conn = db(tmp_path)  # a failure in SQLite after the content was written, before the commit
    conn.execute("CREATE TRIGGER fail BEFORE INSERT ON pages BEGIN SELECT RAISE(ABORT, 'disk I/O error'); END")
    conn.commit()
    store.put_content("h1", {"text": "# A"})
    store.put_page("h1", {"url": "https://a.com/1"})
    failures = []
    store.on_storage_error = lambda kind, what: failures.append(kind)
    with pytest.raises(CacheStorageError, match=r"Writing the cache file .*cache\.sqlite failed \(disk I/O error\)"):
        store.commit()
    assert failures == ["write"]
    assert conn.execute("SELECT count(*) FROM kv WHERE key = 'content/h1'").fetchone() == (0,)  # one transaction
    assert store.get_page("h1") == {"url": "https://a.com/1"}  # still pending
    store.close()
    assert "last 2 writes at close failed" in caplog.text
    conn.execute("DROP TRIGGER fail")
    conn.commit()
    conn.close()
    reopened = SqliteDocStore(tmp_path / "c")
    assert reopened.get_page("h0") is not None and reopened.get_page("h1") is None
    reopened.put_page("h1", {"url": "https://a.com/1"})
    reopened.commit()
    assert reopened.get_page("h1") is not None
    reopened.close()


def test_a_read_only_store_refuses_writes(tmp_path):
    SqliteDocStore(tmp_path / "c").close()
    store = SqliteDocStore(tmp_path / "c", readonly=True)
    with pytest.raises(RuntimeError, match="read-only"):
        store.put_page("h1", {"url": "https://a.com/1"})
    with pytest.raises(RuntimeError, match="read-only"):
        store.delete_input("k1")
    store.close()


def test_renderings_are_deleted_with_their_page_and_unreadable_ones_are_missing(tmp_path, store):
    from crawler.cache.responses import RenderedPage

    page = RenderedPage("https://a.com/app", {"Content-Type": "text/html"}, b"<p>rendered \x00</p>", "ab" * 32, "t1")
    store.put_rendered("h1", page)
    store.put_page("h1", {"url": "https://a.com/app"})
    store.commit()
    assert list(store.iter_rendered_keys()) == ["h1"]
    store.delete_page("h1")
    assert store.get_rendered("h1") is None and list(store.iter_rendered_keys()) == []
    store.commit()
    conn = db(tmp_path)
    conn.execute("INSERT INTO kv (key, value) VALUES ('rendered/h3', ?)", (b"not zlib",))
    conn.commit()
    conn.close()
    assert store.get_rendered("h3") is None and store.read_errors == 1


def test_a_store_that_cannot_be_imported_is_named_and_nothing_locked(tmp_path):
    with pytest.raises(ValueError, match=r"EXTRACTED_DOCS_STORE='no\.such\.Store' cannot be imported"):
        Cache.open(tmp_path / "c", store_cls="no.such.Store")
    assert not CacheLock(tmp_path / "c").is_locked_elsewhere()


def filled(directory, pages=3000):
    store = SqliteDocStore(directory)
    for n in range(pages):
        store.put_page(f"h{n}", {"url": f"https://a.com/{n}", "status": "new", "title": f"Page {n} " * 5})
    store.close()
    return directory / "cache.sqlite"


def test_a_database_damaged_in_the_middle_is_refused_at_open(tmp_path):
    path = filled(tmp_path / "c")
    damaged = garble_middle(path)
    with pytest.raises(CacheCorruptError, match=r"cache\.sqlite cannot be read or written \(damaged: "):
        SqliteDocStore(tmp_path / "c")
    assert path.read_bytes() == damaged
    SqliteDocStore(tmp_path / "c", readonly=True).close()  # the cache commands still read what they can


def test_a_failing_write_raises_at_once_and_the_cache_stops_cleanly(tmp_path, caplog):
    """sqlitedict's writer thread died on such a commit and the crawl waited for it forever."""
    garble_middle(filled(tmp_path / "c"))
    cache = Cache.open(tmp_path / "c", UncheckedStore)  # damage the start-up check did not see
    stopped = []
    cache.on_write_failed = stopped.append
    for n in range(3000):
        cache.store.put_page(f"h{n}", {"url": f"https://a.com/{n}", "status": "changed"})
    with pytest.raises(CacheStorageError, match=r"Writing the cache file .*cache\.sqlite failed \(database disk image"):
        cache.store.commit()
    cache.commit()  # the crawl's commit: recorded, not raised
    assert cache.failed is not None and "cache.sqlite failed" in cache.failed
    assert stopped == [cache.failed]
    assert cache.run.incomplete_reasons == [f"cache write failed: {cache.failed}"]
    cache.commit()  # a known failure is not tried again, nor reported twice
    assert stopped == [cache.failed]
    cache.close()
    assert not CacheLock(tmp_path / "c").is_locked_elsewhere()
    assert "last 3000 writes at close failed, they are lost" in caplog.text
    assert "Traceback" not in caplog.text and "Inner exception" not in caplog.text


def test_a_read_that_meets_damage_after_its_first_row_raises_instead_of_hanging(tmp_path):
    """sqlitedict's thread read the rows after the first outside its error handling: a
    damaged page there ended the thread and the reader waited forever (a crawl hung)."""
    import threading

    garble_middle(filled(tmp_path / "c", pages=3100))  # (its middle page one of the page table's)
    store = UncheckedStore(tmp_path / "c", readonly=True)
    outcome = []

    def read_all():
        try:
            outcome.append(len(list(store.iter_pages())))
        except CacheStorageError as exc:
            outcome.append(exc)

    reader = threading.Thread(target=read_all, daemon=True)
    reader.start()
    reader.join(timeout=60)  # a safety net only: the answer comes at once
    assert outcome and isinstance(outcome[0], CacheStorageError), outcome
    assert "database disk image is malformed" in str(outcome[0])
    store.close()


def test_domain_records_are_named_by_hash_and_old_names_are_still_found(tmp_path):
    store = SqliteDocStore(tmp_path / "c")
    long_host = ".".join(["a" * 63, "b" * 63, "c" * 63, "d" * 47, "com"])  # 243 characters
    assert len(long_host) == 243
    store.put_domain(long_host, {"domain": long_host, "hashes": ["1"]})
    assert store.get_domain(long_host) == {"domain": long_host, "hashes": ["1"]}
    boilerplate = tmp_path / "c" / "boilerplate"
    assert [p.name for p in boilerplate.iterdir()] == [store.domain_path(long_host).name]
    assert len(store.domain_path(long_host).name) == 69
    # a cache made before: boilerplate/<domain>.json, found, and moved to the new name
    old = {"domain": "docs.a.com", "hashes": ["2"]}
    atomic_write_json(boilerplate / "docs.a.com.json", old)
    atomic_write_json(boilerplate / "b.com.json", {"domain": "b.com", "hashes": ["3"]})
    atomic_write_json(boilerplate / "x_y.com.json", {"domain": "x:y.com", "hashes": ["4"]})
    readonly = SqliteDocStore(tmp_path / "c", readonly=True)
    assert readonly.get_domain("docs.a.com") == old
    readonly.close()
    assert (boilerplate / "docs.a.com.json").exists()  # a reader moves nothing
    assert store.get_domain("docs.a.com") == old
    assert not (boilerplate / "docs.a.com.json").exists() and read_json(store.domain_path("docs.a.com")) == old
    store.put_domain("b.com", {"domain": "b.com", "hashes": ["5"]})  # written: the old file goes
    assert not (boilerplate / "b.com.json").exists() and store.get_domain("b.com")["hashes"] == ["5"]
    assert store.get_domain("x_y.com") is None  # another domain's old file with the same name
    store.put_domain("x_y.com", {"domain": "x_y.com"})
    assert (boilerplate / "x_y.com.json").exists()
    store.close()


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o037])
def test_cache_files_are_private_unless_the_umask_is_stricter(tmp_path, umask):
    old = os.umask(umask)
    try:
        cache = Cache.open(tmp_path / "c")
        cache.store.put_page("h1", {"url": "https://a.com/"})
        cache.store.write_extraction("h1", {"url": "https://a.com/"})
        cache.store.put_domain("a.com", {"domain": "a.com"})
        cache.store.write_run_report("r1", {"run_id": "r1"})
        cache.commit()
        found = {p: p.stat().st_mode & 0o777 for p in [tmp_path / "c", *(tmp_path / "c").rglob("*")]}
        cache.close()
    finally:
        os.umask(old)
    assert any(p.name == "cache.sqlite-wal" for p in found)  # SQLite's own files too
    wrong = {str(p.relative_to(tmp_path)): oct(m) for p, m in found.items() if m != (0o700 if p.is_dir() else 0o600)}
    assert wrong == {}


# -- the migration of older caches ---------------------------------------------------------


@pytest.fixture
def legacy(tmp_path):
    """A copy of the cache written by the code of 90a8e42 (tests/fixtures/cache-v1)."""
    directory = tmp_path / "legacy"
    shutil.copytree(FIXTURE, directory)
    return directory


def legacy_rows(directory, table):
    conn = sqlite3.connect(directory / LEGACY_FILES[table])
    try:
        return {key: value for key, value in conn.execute(f"SELECT key, value FROM {table}")}
    finally:
        conn.close()


def test_an_older_cache_is_migrated_once_in_place(legacy, caplog):
    pages = {k: json.loads(v) for k, v in legacy_rows(legacy, "pages").items()}
    content = {k: json.loads(v) for k, v in legacy_rows(legacy, "content").items()}
    responses = legacy_rows(legacy, "responses")
    inputs = {k: json.loads(v) for k, v in legacy_rows(legacy, "inputs").items()}
    extractions = sorted(p.name for p in (legacy / "extractions").iterdir())
    others = {p: p.read_bytes() for sub in ("boilerplate", "runs") for p in (legacy / sub).iterdir()}
    with caplog.at_level(logging.INFO, logger="crawler.cache.migrate"):
        store = SqliteDocStore(legacy, readonly=True)  # a cache command opens it
    try:
        assert dict(store.iter_pages()) == pages  # every record, history and vectors record included
        assert {k: store.get_content(k) for k in content} == content
        assert {k: store.get_response(k) for k in responses} == {k: response_decode(v) for k, v in responses.items()}
        assert dict(store.iter_inputs()) == inputs
        assert sorted(p.name for p in (legacy / "extractions").iterdir()) == extractions
        assert {p: p.read_bytes() for p in others} == others
        assert store.format_info() == {"format": FORMAT_VERSION, "identity_version": IDENTITY_VERSION}
    finally:
        store.close()
    names = {p.name for p in legacy.iterdir()}
    assert "cache.sqlite" in names and not names & {*LEGACY_FILES.values(), "metadata", WORK_DIR}
    assert "Migrated the cache in" in caplog.text and "6 pages (20 history events)" in caplog.text
    assert "0 pages re-keyed" in caplog.text
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="crawler.cache.migrate"):
        SqliteDocStore(legacy).close()
    assert "Migrated" not in caplog.text  # once


def test_pages_keyed_by_another_fingerprinter_are_re_keyed(legacy, caplog):
    """A cache made with another REQUEST_FINGERPRINTER_CLASS: its keys are not
    page_key(canonical_url); each page's parts move to its own key."""
    pages = {k: json.loads(v) for k, v in legacy_rows(legacy, "pages").items()}
    own = next(k for k, r in pages.items() if r["url"].endswith("/api/"))
    foreign = "f" * 40
    for table in ("pages", "content", "responses"):
        conn = sqlite3.connect(legacy / LEGACY_FILES[table])
        conn.execute(f"UPDATE {table} SET key = ? WHERE key = ?", (foreign, own))
        conn.commit()
        conn.close()
    conn = sqlite3.connect(legacy / "inputs.sqlite")
    conn.execute("UPDATE inputs SET value = ? WHERE value = ?", (json.dumps(foreign), json.dumps(own)))
    conn.commit()
    conn.close()
    (legacy / "extractions" / f"{own}.json").rename(legacy / "extractions" / f"{foreign}.json")
    with caplog.at_level(logging.INFO, logger="crawler.cache.migrate"):
        store = SqliteDocStore(legacy)
    try:
        assert store.get_page(foreign) is None and store.get_page(own)["url"].endswith("/api/")
        assert store.get_page(own)["extraction"]["file"] == f"extractions/{own}.json"
        assert store.get_content(own) is not None and store.get_response(own) is not None
        assert store.read_extraction(own)["url_hash"] == own
        assert not (legacy / "extractions" / f"{foreign}.json").exists()
        assert own in dict(store.iter_inputs()).values() and foreign not in dict(store.iter_inputs()).values()
    finally:
        store.close()
    assert "1 pages re-keyed" in caplog.text


def test_an_interrupted_migration_leaves_the_old_cache_and_is_done_again(legacy, monkeypatch):
    before = {p: p.read_bytes() for p in legacy.rglob("*") if p.is_file()}

    def crash(*args):
        raise KeyboardInterrupt  # killed just before the rename

    monkeypatch.setattr("crawler.cache.migrate._fsync", crash)
    with pytest.raises(KeyboardInterrupt):
        SqliteDocStore(legacy)
    monkeypatch.undo()
    assert (legacy / WORK_DIR).exists()  # what a killed migration leaves
    after = {p: p.read_bytes() for p in legacy.rglob("*") if p.is_file() and WORK_DIR not in p.parts}
    assert {p: b for p, b in after.items() if p.name not in (".migrate.lock", ".lock")} == before  # as it was
    store = SqliteDocStore(legacy)
    try:
        assert store.count_pages() == 6
    finally:
        store.close()
    assert not (legacy / WORK_DIR).exists() and not (legacy / "index.sqlite").exists()


def test_a_migration_interrupted_after_its_rename_is_finished_at_the_next_open(legacy, monkeypatch):
    monkeypatch.setattr("crawler.cache.migrate._clean_up", lambda directory, migrated: None)
    migrate(legacy)  # killed after the rename, before the old files went
    monkeypatch.undo()
    assert (legacy / "cache.sqlite").exists() and (legacy / "index.sqlite").exists()
    store = SqliteDocStore(legacy, readonly=True)
    try:
        assert store.count_pages() == 6
    finally:
        store.close()
    names = {p.name for p in legacy.iterdir()}
    assert not names & {*LEGACY_FILES.values(), "metadata", WORK_DIR}


def test_a_damaged_file_of_an_older_cache_is_not_migrated(legacy):
    (legacy / "content.sqlite").write_bytes(b"garbage" * 100)
    with pytest.raises(CacheCorruptError, match=r"content\.sqlite \(of the older layout\) cannot be read"):
        SqliteDocStore(legacy)
    assert (legacy / "index.sqlite").exists() and not (legacy / "cache.sqlite").exists()


def test_responses_stored_before_and_after_the_migration_read_the_same(legacy):
    store = SqliteDocStore(legacy)
    try:
        key = next(iter(store.iter_page_keys()))
        response = store.get_response(key)
        assert response.status == 200 and response.etag
        store.put_response(key, StoredResponse(response.url, 200, response.headers, response.body, "t", "t"))
        assert store.get_response(key).body == response.body
    finally:
        store.close()


def test_opened_without_create_a_missing_cache_is_said_and_nothing_made(tmp_path):
    from crawler.cache import CacheMissingError

    for options in ({"readonly": True}, {"create": False}):
        with pytest.raises(CacheMissingError, match=r"No cache in .*: run a crawl first"):
            SqliteDocStore(tmp_path / "none", **options)
    assert not (tmp_path / "none").exists()


@pytest.fixture
def held_elsewhere(legacy):
    """Another process (a crawl of the older code) holds the cache's lock until the test ends."""
    import subprocess
    import sys

    code = (
        "import sys; from crawler.cache.lock import CacheLock; "
        "CacheLock(sys.argv[1]).acquire(); print(1, flush=True); sys.stdin.read()"
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", code, str(legacy)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout.readline().strip() == "1"  # it holds the lock from here on
        yield holder
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
        holder.stdout.close()


@pytest.mark.e2e
def test_an_older_cache_in_use_by_a_crawl_is_not_migrated_under_it(legacy, held_elsewhere):
    before = {p: p.read_bytes() for p in legacy.rglob("*") if p.is_file() and p.name != ".migrate.lock"}
    for options in ({"readonly": True}, {}):
        with pytest.raises(CacheLockedError, match=r"in use by a crawl \(pid \d+\); it is migrated .* Nothing was"):
            SqliteDocStore(legacy, **options)
    after = {p: p.read_bytes() for p in legacy.rglob("*") if p.is_file() and p.name != ".migrate.lock"}
    assert after == before  # the files the crawl writes to, untouched
    held_elsewhere.stdin.close()
    held_elsewhere.wait(timeout=30)  # the crawl ends: the next open migrates
    cache = Cache.open(legacy)  # the migration's lock released before the store takes it
    try:
        assert cache.store.count_pages() == 6 and not (legacy / "index.sqlite").exists()
    finally:
        cache.close()
    assert not CacheLock(legacy).is_locked_elsewhere()


def test_a_process_holding_the_caches_lock_migrates_it_itself(legacy):
    lock = CacheLock(legacy)  # scrapy cache verify --repair: the lock first, then the store
    lock.acquire()
    try:
        store = SqliteDocStore(legacy)
        try:
            assert store.count_pages() == 6
        finally:
            store.close()
        assert lock.held_by_this_process() and not (legacy / "index.sqlite").exists()
    finally:
        lock.release()


def test_of_two_old_keys_of_one_page_only_the_kept_ones_parts_are_migrated(legacy, caplog):
    """One canonical URL under its own key K (seen first) and another fingerprinter's F
    (seen later: kept, re-keyed to K): K's content, response and input links are not
    the kept record's, and are dropped, whatever order the old rows are in."""
    pages = {k: json.loads(v) for k, v in legacy_rows(legacy, "pages").items()}
    own = next(k for k, r in pages.items() if r["url"].endswith("/guide/"))
    foreign = "f" * 40
    newer = {**pages[own], "last_seen": "2099-01-01T00:00:00Z", "content_hash": "NEWER"}
    conn = sqlite3.connect(legacy / "index.sqlite")
    conn.execute("INSERT INTO pages (key, value) VALUES (?, ?)", (foreign, json.dumps(newer)))
    conn.commit()
    conn.close()
    conn = sqlite3.connect(legacy / "content.sqlite")
    old_content = conn.execute("SELECT value FROM content WHERE key = ?", (own,)).fetchone()[0]
    conn.execute("INSERT INTO content (key, value) VALUES (?, ?)", (foreign, json.dumps({"markdown": "NEWER"})))
    conn.execute("DELETE FROM content WHERE key = ?", (own,))  # K's row after F's, as a REPLACE leaves it
    conn.execute("INSERT INTO content (key, value) VALUES (?, ?)", (own, old_content))
    conn.commit()
    conn.close()
    assert own in legacy_rows(legacy, "responses") and own in map(json.loads, legacy_rows(legacy, "inputs").values())
    with caplog.at_level(logging.INFO, logger="crawler.cache.migrate"):
        store = SqliteDocStore(legacy)
    try:
        assert store.get_page(own)["content_hash"] == "NEWER" and store.get_page(foreign) is None
        assert store.get_content(own) == {"markdown": "NEWER"}  # the kept record's content
        assert store.get_response(own) is None  # the dropped page's response is not the kept one's
        assert own not in dict(store.iter_inputs()).values()
        migrated = store._kv_get("store/migration", "store")
    finally:
        store.close()
    assert migrated["merged"] == 1 and migrated["skipped"] >= 3  # content, response, input link (and more)
    assert f"1 merged ({migrated['skipped']} rows of the pages merged into another dropped)" in caplog.text


def test_the_migration_streams_the_old_tables(legacy, monkeypatch):
    """The old cache is read row by row and written in batches: 20 MB of stored
    responses migrate in a few MB of memory (they were once held all at once)."""
    import tracemalloc

    legacy_responses = legacy_rows(legacy, "responses")
    conn = sqlite3.connect(legacy / "responses.sqlite")
    blob = os.urandom(200_000)
    rows = ((f"{i:040x}", blob[i:] + blob[:i]) for i in range(100))
    conn.executemany("INSERT INTO responses (key, value) VALUES (?, ?)", rows)
    conn.commit()
    conn.close()
    monkeypatch.setattr("crawler.cache.migrate.COMMIT_BYTES", 1_000_000, raising=False)
    tracemalloc.start()
    try:
        migrate(legacy)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8_000_000, peak
    conn = sqlite3.connect(legacy / "cache.sqlite")
    try:
        stored = conn.execute("SELECT count(*) FROM kv WHERE key LIKE 'response/%'").fetchone()[0]
    finally:
        conn.close()
    assert stored == 100 + len(legacy_responses)
