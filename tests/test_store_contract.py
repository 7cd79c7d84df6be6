"""What every store (``EXTRACTED_DOCS_STORE``) must do: the contract of the ports of
crawler/cache/ports.py, run against each backend.

A backend is one entry of ``BACKENDS``: how to open its store on a fresh location,
how to open it again (another process would), and how to damage one stored entry the
way a broken disk or a hand edit would: the embedded store (a directory) and the
PostgreSQL store (a real server, tests/pg_server.py; never skipped).
"""

from __future__ import annotations

import json
import sqlite3
from array import array
from dataclasses import replace

import psycopg
import pytest

from crawler.cache.backend import KEYS_PER_QUERY
from crawler.cache.lock import CacheLockedError
from crawler.cache.ports import DocStore, DomainPort, ExtractionPort, PagePort, ResponsePort, RunPort, StorePort
from crawler.cache.postgres import PostgresDocStore
from crawler.cache.records import input_hash
from crawler.cache.responses import ParsedPage, RenderedPage, StoredResponse
from crawler.cache.sqlite import SqliteDocStore
from crawler.identity import page_key
from crawler.lib.urls import canonical_url


class EmbeddedBackend:
    """The default store: one directory, ``cache.sqlite`` and JSON files."""

    def __init__(self, tmp_path):
        self.directory = tmp_path / "cache"

    def open(self, readonly=False):
        return SqliteDocStore(self.directory, readonly=readonly)

    def damage_page(self, url_hash):
        """Replace the stored record of ``url_hash`` with bytes that are not JSON."""
        with sqlite3.connect(self.directory / "cache.sqlite") as conn:
            conn.execute("UPDATE pages SET record = ? WHERE key = ?", (b"\x80\x04not json", url_hash))
        conn.close()

    def damage_content(self, url_hash):
        with sqlite3.connect(self.directory / "cache.sqlite") as conn:
            conn.execute("UPDATE kv SET value = ? WHERE key = ?", ("{not json", f"content/{url_hash}"))
        conn.close()

    def damage_extraction(self, url_hash):
        (self.directory / "extractions" / f"{url_hash}.json").write_text("{broken")


class PostgresBackend:
    """The PostgreSQL store on a fresh database of the test's own (tests/pg_server.py);
    opened again on a second connection, as another process would."""

    concurrent_writers = True

    def __init__(self, tmp_path, dsn):
        self.dsn = dsn

    def open(self, readonly=False):
        return PostgresDocStore(self.dsn, readonly=readonly)

    def _sql(self, sql, args):
        with psycopg.connect(self.dsn, autocommit=True) as conn:
            assert conn.execute(sql, args).rowcount == 1

    def damage_page(self, url_hash):
        self._sql("UPDATE pages SET record = %s WHERE key = %s", ("\u0080not json", url_hash))

    def damage_content(self, url_hash):
        self._sql("UPDATE page_data SET content = %s WHERE key = %s", ("{not json", url_hash))

    def damage_extraction(self, url_hash):
        self._sql("UPDATE extractions SET extraction = %s WHERE url_hash = %s", ("{broken", url_hash))

    def expire_claims(self):
        """What time does to every claim (and a crashed owner never renews)."""
        with psycopg.connect(self.dsn, autocommit=True) as conn:
            conn.execute("UPDATE claims SET expires_at = now() - interval '1 second'")


BACKENDS = {"embedded": EmbeddedBackend, "postgres": PostgresBackend}


@pytest.fixture(params=sorted(BACKENDS))
def backend(request, tmp_path):
    if request.param == "postgres":
        return PostgresBackend(tmp_path, request.getfixturevalue("postgres_dsn"))
    return BACKENDS[request.param](tmp_path)


@pytest.fixture
def store(backend):
    opened = backend.open()
    yield opened
    opened.close()


def reopen(backend, store):
    store.close()
    return backend.open()


def record(url, status="new", **extra):
    canonical = canonical_url(url)
    return {
        "url": url,
        "canonical_url": canonical,
        "domain": url.split("/")[2],
        "status": status,
        "content_hash": "c" * 64,
        "first_seen": "2026-01-01T00:00:00Z",
        "last_seen": "2026-01-02T00:00:00Z",
        "run_id": "r1",
        **extra,
    }


def key(url):
    return page_key(canonical_url(url))


def test_a_store_offers_every_port(store):
    for port in (ResponsePort, PagePort, ExtractionPort, DomainPort, RunPort, StorePort, DocStore):
        assert isinstance(store, port), port.__name__
    assert isinstance(store.location, str) and store.location


# -- pages -------------------------------------------------------------------------


def test_pages_round_trip_and_survive_a_reopen(backend, store):
    a = key("https://a.com/x")
    store.put_page(a, record("https://a.com/x", history=[{"at": "t", "event": "new"}]))
    store.put_content(
        a, {"url": "https://a.com/x", "text": "# X \u00e9", "fields": {}, "content_hash": "c", "stored_at": "t"}
    )
    store.commit()
    store = reopen(backend, store)
    try:
        assert store.get_page(a)["history"] == [{"at": "t", "event": "new"}]
        assert store.get_content(a)["text"] == "# X \u00e9"
        assert list(store.iter_page_keys()) == [a]
        assert [k for k, _ in store.iter_pages()] == [a]
        assert store.count_pages() == 1
        assert store.get_page("0" * 40) is None and store.get_content("0" * 40) is None
    finally:
        store.close()


def test_writes_are_read_back_before_the_commit(store):
    a, b = key("https://a.com/a"), key("https://a.com/b")
    store.put_page(a, record("https://a.com/a"))
    store.commit()
    store.put_page(b, record("https://a.com/b"))
    store.put_page(a, record("https://a.com/a", status="changed"))
    store.put_content(b, {"text": "B"})
    store.link_extraction("k1", b)
    assert store.get_page(a)["status"] == "changed"
    assert store.get_content(b) == {"text": "B"}
    assert store.find_extraction("k1") == b
    assert list(store.iter_page_keys()) == [a, b]  # in the order first recorded
    assert [(k, r["status"]) for k, r in store.iter_pages()] == [(a, "changed"), (b, "new")]
    assert store.count_pages() == 2
    store.delete_page(a)
    assert store.get_page(a) is None and list(store.iter_page_keys()) == [b]


def test_a_scan_of_every_page_reads_a_batch_at_a_time_with_the_writes_not_committed(store, monkeypatch):
    from crawler.cache import base

    monkeypatch.setattr(base, "ROWS_PER_READ", 2)  # a scan of 5 pages: 3 reads
    urls = [f"https://a.com/{n}" for n in range(5)]
    keys = [key(url) for url in urls]
    for url, k in zip(urls, keys, strict=True):
        store.put_page(k, record(url))
    store.commit()
    late, fresh = key("https://a.com/late"), key("https://b.com/fresh")
    store.put_page(keys[1], record(urls[1], status="changed"))  # pending: the scan sees it
    store.delete_page(keys[2])
    store.put_page(fresh, record("https://b.com/fresh"))
    scan = store.iter_pages()
    first = [next(scan), next(scan)]
    store.put_page(late, record("https://a.com/late"))  # after the scan began: not its page
    store.commit()  # a commit while it scans: no page twice, none lost
    rest = list(scan)
    assert [(k, r["status"]) for k, r in first + rest] == [
        (keys[0], "new"), (keys[1], "changed"), (keys[3], "new"), (keys[4], "new"), (fresh, "new"),
    ]  # fmt: skip
    heads = list(store.iter_page_heads())
    assert [(h.url_hash, h.url, h.domain, h.status) for h in heads][-2:] == [
        (fresh, "https://b.com/fresh", "b.com", "new"), (late, "https://a.com/late", "a.com", "new"),
    ]  # fmt: skip
    store.put_page(keys[0], record(urls[0], status="removed"))
    assert next(iter(store.iter_page_heads())).status == "removed"  # a pending write, as the record says
    assert list(store.iter_page_keys()) == [keys[0], keys[1], keys[3], keys[4], fresh, late]


def test_a_domain_s_live_keys_come_in_key_order_a_batch_at_a_time(store, monkeypatch):
    import crawler.cache.base

    monkeypatch.setattr(crawler.cache.base, "ROWS_PER_READ", 3)
    urls = {key(f"https://a.com/{n}"): f"https://a.com/{n}" for n in range(12)}
    others = {key(f"https://b.com/{n}"): f"https://b.com/{n}" for n in range(4)}
    for k, url in {**urls, **others}.items():
        store.put_page(k, record(url, status="removed" if url.endswith("/3") else "new"))
    store.commit()
    live = sorted(k for k, url in urls.items() if not url.endswith("/3"))
    assert list(store.iter_live_keys("a.com")) == live
    # pending: a page removed, one deleted, a new one, one moved from b.com, one back
    gone, deleted = live[0], live[5]
    store.put_page(gone, record(urls[gone], status="removed"))
    store.delete_page(deleted)
    fresh = key("https://a.com/fresh")
    store.put_page(fresh, record("https://a.com/fresh"))
    moved = next(iter(others))
    store.put_page(moved, {**record(others[moved]), "domain": "a.com"})
    back = key("https://a.com/3")
    store.put_page(back, record("https://a.com/3", status="changed"))
    expected = sorted({*live, fresh, moved, back} - {gone, deleted})
    assert list(store.iter_live_keys("a.com")) == expected
    assert moved not in set(store.iter_live_keys("b.com"))
    store.commit()
    assert list(store.iter_live_keys("a.com")) == expected
    assert list(store.iter_live_keys("nowhere.com")) == []


def test_records_are_read_many_at_a_time(store):
    keys = [key(f"https://a.com/{n}") for n in range(KEYS_PER_QUERY + 3)]
    for n, k in enumerate(keys):
        store.put_page(k, record(f"https://a.com/{n}"))
    store.commit()
    store.put_page(keys[0], record("https://a.com/0", status="changed"))
    found = store.get_pages([*reversed(keys), "0" * 40])
    assert list(found) == [*reversed(keys), "0" * 40]  # every key given, in order
    assert found["0" * 40] is None and found[keys[0]]["status"] == "changed"
    assert all(found[k]["url"] == f"https://a.com/{n}" for n, k in enumerate(keys))


def test_heads_of_some_pages_are_read_many_at_a_time_from_the_columns(store):
    keys = [key(f"https://a.com/{n}") for n in range(KEYS_PER_QUERY + 3)]
    for n, k in enumerate(keys):
        store.put_page(k, record(f"https://a.com/{n}"))
    store.commit()
    store.put_page(keys[0], record("https://a.com/0", status="changed"))  # pending
    store.delete_page(keys[1])  # pending
    heads = store.get_page_heads([*reversed(keys), "0" * 40])
    assert list(heads) == [*reversed(keys), "0" * 40]  # every key given, in order
    assert heads["0" * 40] is None and heads[keys[1]] is None
    assert (heads[keys[0]].status, heads[keys[0]].url) == ("changed", "https://a.com/0")
    assert all((heads[k].url, heads[k].domain, heads[k].status) == (f"https://a.com/{n}", "a.com", "new")
               for n, k in enumerate(keys) if n > 1)  # fmt: skip


def test_a_commit_is_kept_and_what_was_not_committed_is_not_seen_by_another_reader(backend, store):
    a = key("https://a.com/a")
    store.put_page(a, record("https://a.com/a"))
    other = backend.open(readonly=True)
    try:
        assert other.get_page(a) is None
        store.commit()
        assert other.get_page(a)["url"] == "https://a.com/a"
    finally:
        other.close()


def test_a_transaction_stores_its_writes_together_or_none_of_them(backend, store):
    a, b, c = (key(f"https://a.com/{n}") for n in "abc")
    store.put_page(a, record("https://a.com/a"))  # pending before: not the transaction's
    with pytest.raises(RuntimeError), store.transaction():
        store.put_page(b, record("https://b.com/b"))
        store.put_content(b, {"url": "https://a.com/b", "text": "B"})
        raise RuntimeError("a failure in the middle")
    assert store.get_page(b) is None and store.get_content(b) is None  # none of them
    with store.transaction():
        store.put_page(c, record("https://b.com/c"))
    other = backend.open(readonly=True)
    try:
        assert other.get_page(a) is not None and other.get_page(c) is not None  # stored at its end
        assert other.get_page(b) is None
    finally:
        other.close()


def test_a_record_put_is_a_snapshot_and_a_record_read_is_the_readers_own(store):
    a = key("https://a.com/a")
    written = record("https://a.com/a")
    store.put_page(a, written)
    written["status"] = "changed after the put"
    read = store.get_page(a)
    assert read["status"] == "new"
    read["status"] = "changed by a reader"
    assert store.get_page(a)["status"] == "new"
    store.commit()
    assert store.get_page(a)["status"] == "new"


def test_values_come_back_as_json(store):
    a = key("https://a.com/a")
    store.put_page(a, record("https://a.com/a", extra_tuple=(1, 2)))
    store.commit()
    assert store.get_page(a)["extra_tuple"] == [1, 2]


def put_everything(store, h, url):
    """Every part a page may have: record, content, responses, parse, extraction."""
    store.put_page(h, record(url))
    store.put_content(h, {"text": url})
    store.put_response(h, StoredResponse(url, 200, {"ETag": '"1"'}, b"body", "t", "t"))
    store.put_rendered(h, RenderedPage(url, {}, b"<p>r</p>", "ab" * 32, "t"))
    store.put_parsed(h, ParsedPage("ab" * 32, "conv", {"title": "T"}, [url]))
    store.write_extraction(h, {"url": url, "url_hash": h, "input_key": "k"})


def test_delete_page_removes_everything_of_the_page(backend, store):
    a, b = key("https://a.com/a"), key("https://a.com/b")
    for h, url in ((a, "https://a.com/a"), (b, "https://a.com/b")):
        put_everything(store, h, url)
    store.commit()
    store.delete_page(a)
    store.commit()
    store = reopen(backend, store)
    try:
        assert (store.get_page(a), store.get_content(a), store.get_response(a)) == (None, None, None)
        assert (store.get_rendered(a), store.get_parsed(a), store.read_extraction(a)) == (None, None, None)
        assert list(store.iter_extraction_keys()) == [b]
        assert store.get_page(b) is not None and store.get_parsed(b).links == ["https://a.com/b"]
    finally:
        store.close()


def test_delete_page_keeping_what_was_fetched(backend, store):
    # a spelling merged into its directory page: its record, content and extraction go,
    # its responses and what they parsed into stay for its next conditional request
    url = "https://a.com/a/index.html"
    a = key(url)
    put_everything(store, a, url)
    store.commit()
    store.delete_page(a, keep_fetched=True)
    store.commit()
    store = reopen(backend, store)
    try:
        assert (store.get_page(a), store.get_content(a), store.read_extraction(a)) == (None, None, None)
        assert store.get_response(a).headers["ETag"] == '"1"'
        assert store.get_rendered(a) is not None and store.get_parsed(a).links == [url]
    finally:
        store.close()


def test_many_pages_contents_are_read_as_one_by_one(backend, store):
    """get_contents: get_content of each key given, in order, pending writes first, an
    unreadable content missing and counted, more pages than one query takes."""
    urls = [f"https://a.com/{n}" for n in range(KEYS_PER_QUERY + 20)]
    keys = [key(url) for url in urls]
    for h, url in zip(keys, urls, strict=True):
        store.put_content(h, {"url": url, "text": f"# {url} \u00e9"})
    store.commit()
    store.put_content(keys[1], {"text": "pending"})
    store.put_content(keys[2], {"text": "also pending", "never": "committed"})
    assert store.get_contents([]) == {}
    wanted = [keys[2], "0" * 40, *keys]
    read = store.get_contents(wanted)
    assert list(read) == list(dict.fromkeys(wanted))
    assert read == {h: store.get_content(h) for h in wanted}
    assert read[keys[1]] == {"text": "pending"} and read["0" * 40] is None
    store.commit()
    store.close()
    backend.damage_content(keys[3])
    store = backend.open()
    errors = []
    store.on_read_error = lambda table, key: errors.append((table, key))
    try:
        read = store.get_contents(keys)
        assert read[keys[3]] is None and errors == [("content", keys[3])]
        assert read[keys[0]] == {"url": urls[0], "text": f"# {urls[0]} \u00e9"}
        assert read[keys[2]] == {"text": "also pending", "never": "committed"}
        assert read == {h: store.get_content(h) for h in keys}
    finally:
        store.close()


def test_an_unreadable_record_is_missing_counted_and_its_key_still_listed(backend, store):
    a, b = key("https://a.com/a"), key("https://a.com/b")
    store.put_page(a, record("https://a.com/a"))
    store.put_page(b, record("https://a.com/b"))
    store.put_content(a, {"text": "A"})
    store.commit()
    store.close()
    backend.damage_page(a)
    backend.damage_content(a)
    store = backend.open()
    errors = []
    store.on_read_error = lambda table, key: errors.append((table, key))
    try:
        assert store.get_page(a) is None
        assert store.get_content(a) is None
        assert [k for k, _ in store.iter_pages()] == [b]
        assert set(store.iter_page_keys()) == {a, b}  # what `verify --repair` restores
        assert ("pages", a) in errors and ("content", a) in errors
        assert store.read_errors >= 2
    finally:
        store.close()


def test_fields_of_records_are_read_as_the_records_say_pending_touched_and_unreadable_too(backend, store):
    """``get_record_fields``: a few fields of many records (the boilerplate analysis's
    pass over every live page), as decoding each record would give them."""
    keys = [key(f"https://a.com/{n}") for n in range(KEYS_PER_QUERY + 3)]
    for n, k in enumerate(keys):
        store.put_page(k, record(f"https://a.com/{n}", extraction={"input_hash": f"i{n}"}, flag=True))
    bad, touched = keys[-1], keys[-2]
    store.commit()
    store.close()
    backend.damage_page(bad)
    store = backend.open()
    errors = []
    store.on_read_error = lambda table, k: errors.append((table, k))
    try:
        store.put_page(keys[0], record("https://a.com/zero", extraction={"input_hash": "new"}))  # pending
        store.delete_page(keys[1])  # pending
        store.touch_page(touched, "2026-02-02T00:00:00Z", "run-2")
        fields = ("url", "extraction.input_hash", "content_hash", "missing.deeper", "run_id", "extraction")
        found = store.get_record_fields([*reversed(keys), "0" * 40], fields)
        assert list(found) == [*reversed(keys), "0" * 40]  # every key given, in order
        assert found["0" * 40] is None and found[keys[1]] is None and found[bad] is None
        assert ("pages", bad) in errors  # counted, as get_page counts it
        assert found[keys[0]][:4] == ("https://a.com/zero", "new", "c" * 64, None)
        assert found[touched][4] == "run-2"
        for n, k in enumerate(keys[2:-2], start=2):
            whole = store.get_page(k)
            assert found[k][:5] == (f"https://a.com/{n}", f"i{n}", "c" * 64, None, whole.get("run_id"))
            assert found[k][5] == {"input_hash": f"i{n}"}  # an object as it is
        with pytest.raises(ValueError, match="dotted name"):
            store.get_record_fields(keys[:1], ("url) FROM pages; --",))
    finally:
        store.close()


def test_a_content_is_stored_with_its_texts_hashes_and_they_answer_for_it(store):
    """``put_content`` stores the SHA-256 of ``text`` and ``clean`` in the content (made
    from the texts, a stale one given replaced); ``get_input_hashes`` answers from them
    what an extraction's input hash of the content is, pending writes too, and None for
    a content stored without them (an older cache's) or none."""
    a, b, c, old, none = (key(f"https://a.com/{n}") for n in "abcde")
    store.put_content(a, {"text": "A"})
    store.put_content(b, {"text": "B", "clean": "b", "clean_sha256": "stale"})
    store.put_content(old, {"text": "D"})
    store.commit()
    store._put_part(old, "content", json.dumps({"text": "D"}))  # as an older version stored it
    store.commit()
    store.put_content(c, {"text": "C", "clean": ""})  # pending
    assert store.get_content(b) == {"text": "B", "clean": "b"}  # as it was put, the hashes kept aside
    assert store.get_contents([b])[b] == {"text": "B", "clean": "b"}
    for use_clean in (True, False):
        found = store.get_input_hashes([none, c, b, a, old], use_clean=use_clean)
        assert list(found) == [none, c, b, a, old]
        assert found[none] is None and found[old] is None
        for k in (a, b, c):
            assert found[k] == input_hash(store.get_content(k), use_clean), (k, use_clean)
    assert store.get_input_hashes([b], use_clean=True)[b] == input_hash({"text": "b"})
    assert store.get_input_hashes([c], use_clean=True)[c] == input_hash({"text": ""})  # an empty clean is one
    store.put_content(none, {"text": "E", "clean": 5})  # a clean that is not text reads as ""
    store.commit()
    for use_clean in (True, False):
        assert store.get_input_hashes([none], use_clean=use_clean) == {
            none: input_hash({"text": "E", "clean": 5}, use_clean)
        }


def test_a_touch_moves_last_seen_and_run_id_only(backend, store):
    """``touch_page``: a page seen again, stored as a narrow update; the record reads
    back with its other fields (and their order) as they were, before and after the
    commit and another process's read; a page put and not yet committed gets the
    fields in what it puts; an unreadable record is left alone, the commit goes on."""
    a, b, c, bad = (key(u) for u in ("https://a.com/a", "https://b.com/b", "https://b.com/c", "https://a.com/bad"))
    nested = {"history": [{"at": "t0", "event": "new", "content_hash": "c"}], "title": "Ünïcode \u0000 text"}
    for k, u in ((a, "a"), (bad, "bad")):
        store.put_page(k, record(f"https://a.com/{u}", **nested))
    store.commit()
    store.close()
    backend.damage_page(bad)
    store = backend.open()
    try:
        store.touch_page(a, "2026-03-01T00:00:00Z", "r2")
        store.touch_page(bad, "2026-03-01T00:00:00Z", "r2")
        store.put_page(b, record("https://b.com/b"))
        store.touch_page(b, "2026-03-02T00:00:00Z", "r3")  # pending: applied to what is put
        store.put_page(c, record("https://b.com/c"))
        store.touch_page(c, "2026-03-02T00:00:00Z", "r3")
        store.put_page(c, record("https://b.com/c", title="again"))  # a later put wins whole
        expected = {**record("https://a.com/a", **nested), "last_seen": "2026-03-01T00:00:00Z", "run_id": "r2"}
        assert store.get_page(a) == expected and dict(store.iter_pages())[a] == expected
        store.commit()
        other = backend.open(readonly=True)
        try:
            assert list(other.get_page(a)) == list(expected) and other.get_page(a) == expected
            assert (other.get_page(b)["last_seen"], other.get_page(b)["run_id"]) == ("2026-03-02T00:00:00Z", "r3")
            assert other.get_page(c)["run_id"] == "r1" and other.get_page(c)["title"] == "again"
            assert other.get_page(bad) is None  # still unreadable, still there
            assert bad in set(other.iter_page_keys())
            summary = sorted((d["domain"], d["last_seen"]) for d in other.domain_summary())
            assert summary == [("a.com", "2026-03-01T00:00:00Z"), ("b.com", "2026-03-02T00:00:00Z")]  # the column
            assert [k for k, _ in other.query_pages(changed_since=None)] and other.count_pages() == 4
        finally:
            other.close()
    finally:
        store.close()


# -- questions over all pages ----------------------------------------------------------


@pytest.fixture
def filled(store):
    pages = {
        "https://a.com/x": record(
            "https://a.com/x", extraction={"input_key": "k1"}, last_changed="2026-03-01T00:00:00Z"
        ),
        "https://a.com/y/": record("https://a.com/y/", status="removed", removed_at="2026-02-01T00:00:00Z"),
        "https://a.com/z": record(
            "https://a.com/z",
            status="unchanged",
            extraction_error={"at": "t", "error": "boom", "input_key": "k"},
            invalidated="t",
            last_changed="2026-01-15T00:00:00Z",
            selection_widened="t",
        ),
        "https://b.com/": record("https://b.com/", converter_pending="c2", empty_input="t"),
    }
    for url, page in pages.items():
        store.put_page(key(url), page)
    store.commit()
    return store


def test_status_and_extraction_counts(filled):
    assert filled.status_counts() == {"new": 2, "removed": 1, "unchanged": 1}
    assert filled.extraction_counts() == {"extracted": 1, "failed": 1, "invalidated": 1}


def test_domain_summary(filled):
    summary = filled.domain_summary()
    assert [d["domain"] for d in summary] == ["a.com", "b.com"]
    assert summary[0] == {
        "domain": "a.com",
        "pages": 3,
        "removed": 1,
        "extracted": 1,
        "failed": 1,
        "last_seen": "2026-01-02T00:00:00Z",
        "last_changed": "2026-03-01T00:00:00Z",
    }


def test_query_pages_filters(filled):
    def urls(**filters):
        return [r["url"] for _, r in filled.query_pages(**filters)]

    assert urls() == ["https://a.com/x", "https://a.com/y/", "https://a.com/z", "https://b.com/"]  # by URL
    assert urls(domain="b.com") == ["https://b.com/"]
    assert urls(status="removed") == ["https://a.com/y/"]
    assert urls(domain="a.com", status="new") == ["https://a.com/x"]
    assert urls(changed_since="2026-02-01T00:00:00Z") == ["https://a.com/x"]
    assert urls(failed=True) == ["https://a.com/z"]
    assert urls(converter_pending=True) == urls(empty=True) == ["https://b.com/"]
    assert urls(widened=True) == ["https://a.com/z"]
    assert urls(widened=True, domain="b.com") == []
    assert urls(limit=2) == ["https://a.com/x", "https://a.com/y/"]
    assert [h for h, _ in filled.query_pages(domain="b.com")] == [key("https://b.com/")]


def test_find_page_by_any_spelling_or_key(filled):
    y = key("https://a.com/y/")
    assert filled.find_page(y)[0] == y
    assert filled.find_page("https://a.com/y/")[0] == y
    assert filled.find_page("https://a.com/y/?utm_source=news#top")[0] == y
    assert filled.find_page("https://A.com:443/y")[0] == y
    assert filled.find_page("https://a.com/nowhere") is None
    assert filled.find_page("f" * 40) is None


# -- responses, renderings, parsed pages ---------------------------------------------------


def test_responses_renderings_and_parsed_pages_round_trip(backend, store):
    a = key("https://a.com/a")
    response = StoredResponse("https://a.com/a", 200, {"ETag": '"x"'}, b"\x00\xffbody", "t1", "t2")
    rendered = RenderedPage("https://a.com/a", {"Content-Type": "text/html"}, b"<p>\x00</p>", "ab" * 32, "t", "utf-8")
    parsed = ParsedPage("cd" * 32, "markdown:2", {"title": "A", "content": "# A"}, ["https://a.com/b"], "t")
    store.put_response(a, response)
    store.put_rendered(a, rendered)
    store.put_parsed(a, parsed)
    assert (store.get_response(a), store.get_rendered(a), store.get_parsed(a)) == (response, rendered, parsed)
    store.commit()
    store = reopen(backend, store)
    try:
        assert store.get_response(a) == response and store.get_response(a).etag == '"x"'
        assert store.get_rendered(a) == rendered
        assert store.get_parsed(a) == parsed
        assert store.get_response("0" * 40) is None and store.get_parsed("0" * 40) is None
        # the runs in a row its scripts failed while it stood in
        standing = replace(rendered, failed_runs=2)
        store.put_rendered(a, standing)
        store.commit()
        assert store.get_rendered(a).failed_runs == 2
    finally:
        store.close()


# -- extractions ------------------------------------------------------------------------------


def test_extractions_by_page_and_by_input(backend, store):
    a = key("https://a.com/a")
    store.put_page(a, record("https://a.com/a"))
    where = store.write_extraction(a, {"url": "https://a.com/a", "url_hash": a, "input_key": "k1", "data": {"n": 1}})
    assert isinstance(where, str) and a in where
    store.link_extraction("k1", a)
    store.commit()
    store = reopen(backend, store)
    try:
        assert store.read_extraction(a)["data"] == {"n": 1}
        assert store.find_extraction("k1") == a and store.find_extraction("k2") is None
        assert list(store.iter_extraction_keys()) == [a]
        store.delete_extraction(a)
        assert store.read_extraction(a) is None and list(store.iter_extraction_keys()) == []
    finally:
        store.close()


def test_an_unreadable_extraction_is_missing_and_counted(backend, store):
    a = key("https://a.com/a")
    store.write_extraction(a, {"url": "https://a.com/a"})
    backend.damage_extraction(a)
    assert store.read_extraction(a) is None
    assert store.read_errors == 1


# -- domains and runs ----------------------------------------------------------------------------


def test_domain_records(backend, store):
    store.put_domain("b.com", {"domain": "b.com", "hashes": ["1"]})
    store.put_domain("a.com", {"domain": "a.com", "hashes": ["2"]})
    store = reopen(backend, store)
    try:
        assert store.get_domain("a.com") == {"domain": "a.com", "hashes": ["2"]}
        assert store.get_domain("c.com") is None
        assert list(store.iter_domains()) == ["a.com", "b.com"]
    finally:
        store.close()


def test_a_domain_record_is_updated_from_what_is_stored_or_left_as_it_was(backend, store):
    def add(name):
        def update(record):
            return {**(record or {"domain": "a.com"}), "seen": [*(record or {}).get("seen", []), name]}

        return update

    assert store.update_domain("a.com", add("first")) == {"domain": "a.com", "seen": ["first"]}
    other = backend.open()  # another process of the run
    try:
        assert other.update_domain("a.com", add("second"))["seen"] == ["first", "second"]
    finally:
        other.close()

    def fails(record):
        raise ValueError("no")

    with pytest.raises(ValueError, match="no"):
        store.update_domain("a.com", fails)
    with pytest.raises(ValueError, match="no"):
        store.update_domain("b.com", fails)  # nothing stored for a domain that had no record
    store = reopen(backend, store)
    try:
        assert store.get_domain("a.com") == {"domain": "a.com", "seen": ["first", "second"]}
        assert store.get_domain("b.com") is None and list(store.iter_domains()) == ["a.com"]
    finally:
        store.close()


def test_run_reports_oldest_first_and_the_latest(store):
    assert store.run_reports(5) == [] and store.latest_run_report() is None
    for run_id in ("20260101T000000000Z-aaaaaa", "20260102T000000000Z-bbbbbb", "20260103T000000000Z-cccccc"):
        assert isinstance(store.write_run_report(run_id, {"run_id": run_id}), str)
    assert [r["run_id"] for r in store.run_reports(2)] == ["20260102T000000000Z-bbbbbb", "20260103T000000000Z-cccccc"]
    assert len(store.run_reports(10)) == 3 and store.run_reports(0) == []
    assert store.latest_run_report()["run_id"] == "20260103T000000000Z-cccccc"
    assert store.has_run_report("20260101T000000000Z-aaaaaa") and not store.has_run_report("nope")
    assert not store.has_run_report("")
    assert store.run_report("20260101T000000000Z-aaaaaa")["run_id"] == "20260101T000000000Z-aaaaaa"
    assert store.run_report("nope") is None and store.run_report("") is None


# -- the lock -----------------------------------------------------------------------------------------


def test_the_lock_admits_one_writer_and_is_released(backend, store):
    other = backend.open()
    try:
        with store.lock():
            with pytest.raises(CacheLockedError), other.lock():
                pass
        with other.lock():
            pass
    finally:
        other.close()


def test_the_writer_lock_is_refused_while_the_lock_is_held(backend, store):
    """A crawl (writer_lock) never runs beside a maintenance command (lock); on a store
    with one writer two crawls exclude each other too, on a server store they share it."""
    other = backend.open()
    try:
        with store.lock():
            with pytest.raises(CacheLockedError), other.writer_lock():
                pass
        with store.writer_lock():
            with pytest.raises(CacheLockedError), other.lock():
                pass
            if getattr(backend, "concurrent_writers", False):
                with other.writer_lock():
                    pass
            else:
                with pytest.raises(CacheLockedError), other.writer_lock():
                    pass
        with other.lock():
            pass
    finally:
        other.close()


def test_an_extraction_claim_is_held_by_one_owner_until_released_or_expired(backend, store):
    other = backend.open()
    try:
        assert store.claim_extraction("k1", "a", 60)
        assert store.claim_extraction("k1", "a", 60)  # its owner renews it
        if not getattr(backend, "concurrent_writers", False):
            return  # one writer: every claim is granted, there is no one to exclude
        assert not other.claim_extraction("k1", "b", 60)  # a live claim of another owner
        assert other.claim_extraction("k2", "b", 60)  # another input
        other.release_extraction("k1", "b")  # not its claim: nothing released
        assert not other.claim_extraction("k1", "b", 60)
        store.release_extraction("k1", "a")
        assert other.claim_extraction("k1", "b", 60)
        assert not store.claim_extraction("k1", "a", 60)
        backend.expire_claims()  # b crashed: its claims lapse
        assert store.claim_extraction("k1", "a", 60)
        assert store.claim_extraction("k2", "a", 60)
    finally:
        other.close()


def change(n, status="new"):
    return {"url": f"https://a.com/{n}", "url_hash": f"h{n}", "status": status, "content_hash": f"c{n}",
            "extraction_file": None if status == "removed" else f"extractions/h{n}.json"}  # fmt: skip


def test_a_runs_change_list_is_listed_in_order_by_status_and_counted(backend, store, monkeypatch):
    """Written a batch at a time, read a page of rows at a time (here 7), whatever the
    length; each run's own; written again (a run's processing done again) it is anew."""
    from crawler.cache import changetable

    monkeypatch.setattr(changetable, "CHANGES_PER_READ", 7)
    assert list(store.iter_run_changes("r1")) == [] and store.count_run_changes("r1") == {}
    first = [change(n, "removed" if n % 5 == 0 else "new") for n in range(30)]
    assert store.put_run_changes("r1", first[:12]) == 12
    assert store.put_run_changes("r1", first[12:], start=12) == 18
    store.put_run_changes("r2", [change(99, "changed")])
    store = reopen(backend, store)
    try:
        assert list(store.iter_run_changes("r1")) == first
        assert [c["url_hash"] for c in store.iter_run_changes("r1", "removed")] == [f"h{n}" for n in range(0, 30, 5)]
        assert store.count_run_changes("r1") == {"new": 24, "removed": 6}
        assert list(store.iter_run_changes("r2")) == [change(99, "changed")]
        store.clear_run_changes("r1")
        store.put_run_changes("r1", first[:2])
        assert list(store.iter_run_changes("r1")) == first[:2] and store.count_run_changes("r2") == {"changed": 1}
    finally:
        store.close()


def test_many_pages_records_are_read_as_one_by_one(backend, store):
    """``get_pages``: every key given, in order; pending writes first; a page with no
    record None; more keys than one query takes."""
    urls = [f"https://a.com/{n}" for n in range(KEYS_PER_QUERY + 3)]
    for url in urls:
        store.put_page(key(url), record(url))
    store.commit()
    store.put_page(key(urls[0]), record(urls[0], status="changed"))  # pending
    keys = [key(url) for url in reversed(urls)] + ["nope"]
    found = store.get_pages(keys)
    assert list(found) == keys and found["nope"] is None
    assert found[key(urls[0])]["status"] == "changed"
    assert all(found[key(url)] == store.get_page(key(url)) for url in urls)


def test_the_pages_a_run_marked_removed_are_found_by_a_query(backend, store):
    store.put_page(key("https://a.com/a"), record("https://a.com/a", status="removed", run_id="run-2"))
    store.put_page(key("https://a.com/b"), record("https://a.com/b", status="removed", run_id="run-1"))
    store.put_page(key("https://a.com/c"), record("https://a.com/c", status="new", run_id="run-2"))
    store.put_page(key("https://a.com/d"), record("https://a.com/d", status="removed", run_id="run-2"))
    # a URL that holds the run's id is no sieve's mistake
    store.put_page(key("https://a.com/run-2"), record("https://a.com/run-2", status="removed", run_id="run-1"))
    store.commit()
    assert [k for k, _ in store.removed_in_run("run-2")] == [key("https://a.com/a"), key("https://a.com/d")]
    assert list(store.removed_in_run("")) == []


def test_a_domains_signatures_and_statistics_are_kept_scanned_and_deleted_with_their_page(backend, store, monkeypatch):
    """The boilerplate analysis's rows: a domain's scanned by url_hash a page of rows at
    a time (here 7), without or with the signature (an empty one: not counted); its
    statistics kept and dropped; a page deleted loses its row, and its domain the
    statistics that counted it, at the commit."""
    from crawler.cache import blocktable
    from crawler.cache.blocktable import SignatureMark, SignatureRow

    monkeypatch.setattr(blocktable, "SIGNATURES_PER_READ", 7)
    rows = [
        SignatureRow(f"h{n:02}", f"m{n}", n, n // 2, f"i{n}", b"" if n == 3 else bytes([n, 0, n])) for n in range(20)
    ]
    assert store.put_signatures("a.com", reversed(rows)) == 20
    store.put_signatures("b.com", [SignatureRow("g1", "m", 1, 0, "i", b"\x01")])
    store.put_block_stats("a.com", b"\x00stats\xff")
    store.put_block_stats("b.com", bytearray(b"other"))
    # (what DomainStats.to_parts gives: its parts in order, arrays' own memory among them)
    store.put_block_stats("c.com", [b"head", memoryview(array("I", [1, 2])).cast("B"), b"", bytearray(b"end")])
    store.put_block_stats("c.com", [b"again", memoryview(array("Q", [7])).cast("B")])  # (over the last: shorter)
    store = reopen(backend, store)
    try:
        assert list(store.iter_signature_marks("a.com")) == [
            SignatureMark(r.url_hash, r.made_from, r.text_bytes, r.removed_bytes, r.input_hash, bool(r.signature))
            for r in rows
        ]
        assert list(store.iter_signatures("a.com")) == [(r.url_hash, r.signature) for r in rows if r.signature]
        assert store.get_signatures(["h05", "h03", "nope", "g1"]) == {"h05": b"\x05\x00\x05", "g1": b"\x01"}
        assert store.get_block_stats("a.com") == b"\x00stats\xff" and store.get_block_stats("d.com") is None
        assert store.get_block_stats("c.com") == b"again" + array("Q", [7]).tobytes()
        store.put_signatures("a.com", [rows[5]._replace(removed_bytes=99)])  # written again
        assert [m.removed_bytes for m in store.iter_signature_marks("a.com")][5] == 99
        store.delete_signatures(["h00", "h01"])
        assert [m.url_hash for m in store.iter_signature_marks("a.com")][:2] == ["h02", "h03"]
        store.put_page("h02", record("https://a.com/2"))
        store.commit()
        store.delete_page("h02")
        assert store.get_block_stats("a.com") is not None  # at the commit
        store.commit()
        assert "h02" not in store.get_signatures(["h02"]) and store.get_block_stats("a.com") is None
        assert store.get_block_stats("b.com") == b"other"
        store.put_block_stats("b.com", None)
        assert store.get_block_stats("b.com") is None
    finally:
        store.close()
