import os
import pickle
import sqlite3

import pytest

from crawler.cache import Cache, CacheCorruptError, CacheLockedError
from crawler.cache.lock import CacheLock
from crawler.cache.sqlite import SqliteDocStore, atomic_write_json, read_json
from crawler.cache.store import CacheStorageError, DocStore, StoredResponse
from tests.faulty_store import UncheckedStore
from tests.helpers import garble_middle


@pytest.fixture
def store(tmp_path):
    opened = SqliteDocStore(tmp_path / "c")
    yield opened
    opened.close()


def test_is_a_docstore(store):
    assert isinstance(store, DocStore)


def test_round_trips_and_persistence(tmp_path):
    store = SqliteDocStore(tmp_path / "c")
    store.put_page("h1", {"url": "https://a.com/", "status": "new"})
    store.put_content("h1", {"text": "# A"})
    store.put_response("h1", StoredResponse("https://a.com/", 200, {"ETag": '"x"'}, b"\x00\xffbody", "t1", "t2"))
    store.link_extraction("k1", "h1")
    assert store.write_extraction("h1", {"input_key": "k1"}) == "extractions/h1.json"
    store.close()

    reopened = SqliteDocStore(tmp_path / "c")
    assert reopened.get_page("h1") == {"url": "https://a.com/", "status": "new"}
    assert reopened.get_content("h1") == {"text": "# A"}
    response = reopened.get_response("h1")
    assert (response.body, response.etag, response.checked_at) == (b"\x00\xffbody", '"x"', "t2")
    assert reopened.find_extraction("k1") == "h1"
    assert reopened.read_extraction("h1") == {"input_key": "k1"}
    assert list(reopened.iter_page_keys()) == ["h1"]
    assert reopened.count_pages() == 1
    assert reopened.get_page("missing") is None
    reopened.close()


def test_values_are_json_never_pickle(tmp_path, store):
    store.put_page("h", {"a": 1})
    store.commit()
    raw = sqlite3.connect(tmp_path / "c" / "index.sqlite").execute("SELECT value FROM pages").fetchone()[0]
    assert raw == '{"a":1}'


def test_a_tampered_entry_is_not_executed_but_treated_as_missing(tmp_path, store):
    class Evil:
        def __reduce__(self):
            return (print, ("pwned",))

    store.commit()
    conn = sqlite3.connect(tmp_path / "c" / "index.sqlite")
    conn.execute("INSERT INTO pages (key, value) VALUES (?, ?)", ("evil", pickle.dumps(Evil())))
    conn.commit()
    conn.close()
    errors = []
    store.on_read_error = lambda table, key: errors.append((table, key))
    assert store.get_page("evil") is None
    assert errors == [("pages", "evil")]
    assert store.read_errors == 1


def test_unreadable_extraction_file_is_missing(store):
    store.write_extraction("h", {"ok": True})
    store.extraction_path("h").write_text("{broken")
    assert store.read_extraction("h") is None
    assert store.read_errors == 1


def test_corrupt_database_file_is_refused_untouched(tmp_path):
    directory = tmp_path / "c"
    directory.mkdir()
    (directory / "content.sqlite").write_bytes(b"garbage" * 50)
    with pytest.raises(CacheCorruptError, match=r"content\.sqlite"):
        SqliteDocStore(directory)
    assert (directory / "content.sqlite").read_bytes() == b"garbage" * 50


def test_atomic_write_leaves_no_temporary_file(tmp_path):
    atomic_write_json(tmp_path / "x" / "a.json", {"k": "v"})
    assert read_json(tmp_path / "x" / "a.json") == {"k": "v"}
    assert [p.name for p in (tmp_path / "x").iterdir()] == ["a.json"]


def test_run_reports(store):
    path = store.write_run_report("r1", {"run_id": "r1"})
    assert read_json(path) == read_json(store.directory / "runs" / "latest.json") == {"run_id": "r1"}


def test_lock_is_exclusive_and_released(tmp_path):
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
    cache.store.commit = lambda: commits.append(1)
    cache.wrote()
    cache.wrote()
    assert commits == []
    cache.wrote()
    assert commits == [1]
    cache.store.close()
    cache.lock.release()


def test_writes_wait_for_the_commit_and_go_in_one_batch(tmp_path):
    store = SqliteDocStore(tmp_path / "c")
    handed = []
    store._conns["pages"].set_trace_callback(
        lambda statement: statement.startswith("SELECT") or handed.append(statement)
    )
    store.put_page("h1", {"url": "https://a.com/1"})
    store.put_page("h2", {"url": "https://a.com/2"})
    store.put_page("h1", {"url": "https://a.com/1", "status": "new"})
    store.delete_page("h2")
    assert handed == []  # nothing written yet
    assert store.get_page("h1") == {"url": "https://a.com/1", "status": "new"}  # read from the pending writes
    assert store.get_page("h2") is None
    other = sqlite3.connect(tmp_path / "c" / "index.sqlite")
    assert other.execute("SELECT count(*) FROM pages").fetchone() == (0,)
    store.commit()
    # one transaction, the last write of each key only
    assert handed[0] == "BEGIN IMMEDIATE"
    assert handed[-1] == "COMMIT"
    writes = [s for s in handed if s.startswith(('REPLACE INTO "pages"', 'DELETE FROM "pages"'))]
    assert {(w.split()[0], w.rsplit("'", 2)[-2]) for w in writes} == {
        ("REPLACE", '{"url":"https://a.com/1","status":"new"}'),
        ("DELETE", "h2"),
    }
    assert other.execute("SELECT key FROM pages").fetchall() == [("h1",)]
    store.put_page("h3", {"url": "https://a.com/3"})
    store.close()  # closing writes what is pending
    assert other.execute("SELECT count(*) FROM pages").fetchone() == (2,)
    other.close()


def test_close_writes_content_before_records_and_says_when_it_fails(tmp_path, caplog, monkeypatch):
    store = SqliteDocStore(tmp_path / "c")
    store.put_page("h1", {"url": "https://a.com/1"})
    store.put_content("h1", {"text": "# A"})
    flushed = []
    flush = SqliteDocStore._flush

    def failing_flush(conn, table, dirty):
        flushed.append(table)
        if table == "pages":
            raise sqlite3.OperationalError("disk I/O error")
        flush(conn, table, dirty)

    monkeypatch.setattr(SqliteDocStore, "_flush", staticmethod(failing_flush))
    store.close()
    assert flushed == ["content", "pages"]  # a record never points at content a failure lost
    assert "last 1 writes at close failed" in caplog.text
    monkeypatch.undo()
    reopened = SqliteDocStore(tmp_path / "c")
    assert reopened.get_content("h1") == {"text": "# A"} and reopened.get_page("h1") is None
    reopened.close()


def test_a_read_only_store_refuses_writes(tmp_path):
    SqliteDocStore(tmp_path / "c").close()
    store = SqliteDocStore(tmp_path / "c", readonly=True)
    with pytest.raises(RuntimeError, match="read-only"):
        store.put_page("h1", {"url": "https://a.com/1"})
    with pytest.raises(RuntimeError, match="read-only"):
        store.delete_input("k1")
    store.close()


def test_page_summary_follows_every_write(tmp_path):
    store = SqliteDocStore(tmp_path / "c")
    store.put_page(
        "a", {"url": "https://a.com/x", "domain": "a.com", "status": "new", "extraction": {"input_key": "k"}}
    )
    store.put_page("b", {"url": "https://a.com/y", "domain": "a.com", "status": "new"})
    store.put_page(
        "b", {"url": "https://a.com/y/", "canonical_url": "https://a.com/y", "domain": "a.com", "status": "removed"}
    )
    store.commit()
    reader = SqliteDocStore(tmp_path / "c", readonly=True)
    assert reader.status_counts() == {"new": 1, "removed": 1}
    assert reader.extraction_counts()["extracted"] == 1
    assert reader.find_page("https://a.com/y/?utm_source=z")[0] == "b"
    reader.close()
    store.delete_page("b")
    store.commit()
    store.close()
    reader = SqliteDocStore(tmp_path / "c", readonly=True)
    assert reader.status_counts() == {"new": 1}
    reader.close()


def test_summary_is_built_for_a_cache_made_before_it(tmp_path):
    store = SqliteDocStore(tmp_path / "c")
    store.put_page("a", {"url": "https://a.com/x", "domain": "a.com", "status": "unchanged"})
    store.close()
    conn = sqlite3.connect(tmp_path / "c" / "index.sqlite")
    conn.executescript("DROP TABLE page_summary; DROP TRIGGER IF EXISTS page_summary_insert;")
    conn.close()
    reader = SqliteDocStore(tmp_path / "c", readonly=True)
    assert reader.status_counts() == {"unchanged": 1}
    reader.close()


def test_renderings_round_trip_are_deleted_with_their_page_and_unreadable_ones_are_missing(tmp_path):
    from crawler.cache.store import RenderedPage

    store = SqliteDocStore(tmp_path / "c")
    page = RenderedPage("https://a.com/app", {"Content-Type": "text/html"}, b"<p>rendered \x00</p>", "ab" * 32, "t1")
    store.put_rendered("h1", page)
    store.put_page("h1", {"url": "https://a.com/app"})
    store.close()
    store = SqliteDocStore(tmp_path / "c")
    assert store.get_rendered("h1") == page
    assert store.get_rendered("h2") is None
    store.delete_page("h1")
    assert store.get_rendered("h1") is None
    store.close()
    conn = sqlite3.connect(tmp_path / "c" / "rendered.sqlite")
    conn.execute("INSERT INTO rendered (key, value) VALUES ('h3', ?)", (b"not zlib",))
    conn.commit()
    conn.close()
    store = SqliteDocStore(tmp_path / "c")
    assert store.get_rendered("h3") is None and store.read_errors == 1
    store.close()


def test_a_store_that_cannot_be_imported_is_named_and_the_lock_released(tmp_path):
    with pytest.raises(ValueError, match=r"EXTRACTED_DOCS_STORE='no\.such\.Store' cannot be imported"):
        Cache.open(tmp_path / "c", store_cls="no.such.Store")
    assert not CacheLock(tmp_path / "c").is_locked_elsewhere()


def filled(directory, pages=3000):
    store = SqliteDocStore(directory)
    for n in range(pages):
        store.put_page(f"h{n}", {"url": f"https://a.com/{n}", "status": "new", "title": f"Page {n} " * 5})
    store.close()
    return directory / "index.sqlite"


def test_a_database_damaged_in_the_middle_is_refused_at_open(tmp_path):
    index = filled(tmp_path / "c")
    damaged = garble_middle(index)
    with pytest.raises(CacheCorruptError, match=r"index\.sqlite cannot be read or written \(damaged: "):
        SqliteDocStore(tmp_path / "c")
    assert index.read_bytes() == damaged
    SqliteDocStore(tmp_path / "c", readonly=True).close()  # the cache commands still read what they can


def test_a_failing_write_raises_at_once_and_the_cache_stops_cleanly(tmp_path, caplog):
    """sqlitedict's writer thread died on such a commit and the crawl waited for it forever."""
    garble_middle(filled(tmp_path / "c"))
    cache = Cache.open(tmp_path / "c", UncheckedStore)  # damage the start-up check did not see
    stopped = []
    cache.on_write_failed = stopped.append
    for n in range(3000):
        cache.store.put_page(f"h{n}", {"url": f"https://a.com/{n}", "status": "changed"})
    with pytest.raises(CacheStorageError, match=r"Writing the cache file .*index\.sqlite failed \(database disk image"):
        cache.store.commit()
    cache.commit()  # the crawl's commit: recorded, not raised
    assert cache.failed is not None and "index.sqlite failed" in cache.failed
    assert stopped == [cache.failed]
    assert cache.run.incomplete_reasons == [f"cache write failed: {cache.failed}"]
    cache.commit()  # a known failure is not tried again, nor reported twice
    assert stopped == [cache.failed]
    cache.close()
    assert not CacheLock(tmp_path / "c").is_locked_elsewhere()
    assert "last 3000 writes at close failed, they are lost" in caplog.text
    assert "Traceback" not in caplog.text


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
        cache.store.write_metadata("h1", {"url": "https://a.com/"})
        cache.store.put_domain("a.com", {"domain": "a.com"})
        cache.store.write_run_report("r1", {"run_id": "r1"})
        cache.commit()
        found = {p: p.stat().st_mode & 0o777 for p in [tmp_path / "c", *(tmp_path / "c").rglob("*")]}
        cache.close()
    finally:
        os.umask(old)
    assert any(p.name == "index.sqlite-wal" for p in found)  # SQLite's own files too
    wrong = {str(p.relative_to(tmp_path)): oct(m) for p, m in found.items() if m != (0o700 if p.is_dir() else 0o600)}
    assert wrong == {}


def test_implements_every_port(store):
    from crawler.cache import ports

    assert isinstance(store, ports.DocStore)
    assert store.location == str(store.directory)


def page(n, **more):
    url = f"https://a.com/p{n}"
    return {"url": url, "canonical_url": url, "domain": "a.com", "status": "unchanged", **more}


def test_queries_over_all_pages(store):
    store.put_page("a" * 40, page(1, last_changed="2026-11-01T00:00:00Z", extraction={"input_key": "k1"}))
    store.put_page("b" * 40, page(2, last_changed="2026-11-20T00:00:00Z", status="changed", empty_input="t"))
    failed = page(3, extraction_error={"at": "t", "error": "x", "input_key": "k"}, converter_pending="md2")
    store.put_page("c" * 40, failed)
    store.put_page("d" * 40, {**page(4), "domain": "b.com", "status": "removed"})
    # pending writes are answered too (committed first)
    assert store.status_counts() == {"unchanged": 2, "changed": 1, "removed": 1}
    assert store.extraction_counts() == {"extracted": 1, "failed": 1, "invalidated": 0}
    assert [(d["domain"], d["pages"], d["removed"]) for d in store.domain_summary()] == [
        ("a.com", 3, 0),
        ("b.com", 1, 1),
    ]

    def keys(**filters):
        return [key[0] for key, _ in store.query_pages(**filters)]

    assert keys() == ["a", "b", "c", "d"]  # by URL
    assert keys(domain="a.com", limit=2) == ["a", "b"]
    assert keys(status="removed") == ["d"]
    assert keys(changed_since="2026-11-10T00:00:00Z") == ["b"]
    assert keys(failed=True) == keys(converter_pending=True) == ["c"]
    assert keys(empty=True) == ["b"]
    assert store.find_page("HTTPS://a.com/p2?utm_source=x")[0] == "b" * 40  # any spelling
    assert store.find_page("c" * 40)[1]["url"] == "https://a.com/p3"  # or its url_hash
    assert store.find_page("https://a.com/nope") is None


def test_find_page_says_when_the_record_cannot_be_read(tmp_path, store):
    store.put_page("a" * 40, page(1))
    store.close()
    conn = sqlite3.connect(tmp_path / "c" / "index.sqlite")
    conn.execute("UPDATE pages SET value = '{' WHERE key = ?", ("a" * 40,))
    conn.commit()
    conn.close()
    reader = SqliteDocStore(tmp_path / "c", readonly=True)
    with pytest.raises(CacheCorruptError, match="cannot be read; `scrapy cache verify --repair`"):
        reader.find_page("a" * 40)
    reader.close()


def test_runs_domains_and_extractions_by_port(store):
    assert store.run_reports(5) == [] and store.latest_run_report() is None
    for run_id in ("20261101T000000000Z-a", "20261102T000000000Z-b", "20261103T000000000Z-c"):
        store.write_run_report(run_id, {"run_id": run_id})
    assert [r["run_id"] for r in store.run_reports(2)] == ["20261102T000000000Z-b", "20261103T000000000Z-c"]
    assert store.run_reports(0) == []
    assert store.latest_run_report()["run_id"] == "20261103T000000000Z-c"
    store.put_domain("docs.a.com", {"domain": "docs.a.com"})
    store.put_domain("b.com:8080", {"domain": "b.com:8080"})
    assert sorted(store.iter_domains()) == ["b.com:8080", "docs.a.com"]
    store.write_extraction("h1", {"url": "https://a.com/"})
    store.write_extraction("h2", {"url": "https://a.com/2"})
    store.delete_extraction("h1")
    assert list(store.iter_extraction_keys()) == ["h2"] and store.read_extraction("h1") is None


def test_lock_is_the_directorys(tmp_path, store):
    with store.lock():
        with pytest.raises(CacheLockedError, match="in use by another crawl"):
            Cache.open(tmp_path / "c")
    Cache.open(tmp_path / "c").close()  # released


def test_opened_without_create_a_missing_cache_is_said_and_nothing_made(tmp_path):
    from crawler.cache import CacheMissingError

    for options in ({"readonly": True}, {"create": False}):
        with pytest.raises(CacheMissingError, match=r"No cache in .*: run a crawl first"):
            SqliteDocStore(tmp_path / "none", **options)
    assert not (tmp_path / "none").exists()
