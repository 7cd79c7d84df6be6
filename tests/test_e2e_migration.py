"""End-to-end: a cache written by the code before the one-file store
(tests/fixtures/cache-v1: five SQLite files, metadata/) is migrated in place by the
next crawl, which then finds every page unchanged: 0 extractor calls, 0 embeddings."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from crawler.cache.migrate import LEGACY_FILES
from crawler.cache.sqlite import SqliteDocStore
from tests.crawl import run_crawl
from tests.fixtures.legacy_cache import BASE, SETTINGS, legacy_site

FIXTURE = Path(__file__).parent / "fixtures" / "cache-v1"


@pytest.fixture
def site():
    started = legacy_site().start()
    yield started
    started.stop()


def legacy_records(directory):
    conn = sqlite3.connect(directory / "index.sqlite")
    try:
        return {key: json.loads(value) for key, value in conn.execute("SELECT key, value FROM pages")}
    finally:
        conn.close()


def test_an_older_cache_is_migrated_by_the_next_crawl_and_nothing_is_paid_again(site, tmp_path):
    cache = tmp_path / "extracted-docs"
    shutil.copytree(FIXTURE, cache)
    before = legacy_records(cache)
    extractions = {p.name: json.loads(p.read_text()) for p in (cache / "extractions").glob("*.json")}
    embedded = tmp_path / "embedded.log"
    settings = {**SETTINGS, "TEST_EMBEDDER_LOG": str(embedded)}
    result = run_crawl(f"{BASE}/", cache, settings=settings, env=site.proxy_env)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Migrated the cache in" in result.stderr and "6 pages (20 history events)" in result.stderr
    assert result.calls == []  # 0 extractor calls
    assert not embedded.exists() or embedded.read_text() == ""  # 0 embeddings
    report = result.report
    assert (report["pages_unchanged"], report["pages_changed"], report["pages_new"]) == (5, 0, 0)
    assert report["extractor_calls"] == 0
    names = {p.name for p in cache.iterdir()}
    assert "cache.sqlite" in names and not names & {*LEGACY_FILES.values(), "metadata"}
    store = SqliteDocStore(cache, readonly=True)
    try:
        after = dict(store.iter_pages())
        assert set(after) == set(before)  # every page kept, under its key
        for key, old in before.items():
            new = after[key]
            assert new["history"][: len(old["history"])] == old["history"]  # history kept, then this run's
            assert new["first_seen"] == old["first_seen"]
            assert new.get("extraction") == old.get("extraction")
            assert new.get("vectors", {}).get("input_hash") == old.get("vectors", {}).get("input_hash")
            assert store.read_extraction(key) == extractions[f"{key}.json"]
        removed = [r for r in after.values() if r["status"] == "removed"]
        assert [r["url"] for r in removed] == [f"{BASE}/old/"]  # the removed page still removed
        assert len(store.run_reports(10)) == 3  # the two runs of the older code, and this one
    finally:
        store.close()


def test_a_cache_command_migrates_an_older_cache_too(tmp_path):
    import subprocess

    from tests.crawl import ROOT, crawl_env, scrapy_command

    cache = tmp_path / "extracted-docs"
    shutil.copytree(FIXTURE, cache)
    proc = subprocess.run(
        scrapy_command(["cache", "stats", "--json"], cache, {}),
        cwd=ROOT,
        env=crawl_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    stats = json.loads(proc.stdout)
    assert stats["pages"] == 6 and stats["statuses"] == {"new": 0, "changed": 2, "removed": 1, "unchanged": 3}
    assert stats["extractions"]["extracted"] == 6
    assert (cache / "cache.sqlite").exists() and not (cache / "index.sqlite").exists()
    with sqlite3.connect(cache / "cache.sqlite") as conn:  # what was migrated, kept in the database
        migrated = json.loads(conn.execute("SELECT value FROM kv WHERE key = 'store/migration'").fetchone()[0])
    conn.close()
    assert (migrated["pages"], migrated["history_events"], migrated["rekeyed"]) == (6, 20, {})


def rekey_with_points(cache, path):
    """Make ``cache`` as another REQUEST_FINGERPRINTER_CLASS would have: the page
    ``path`` under key F (record, content, response, links, metadata, extraction file)
    and its Qdrant points too (ids and payload of F). Returns (its own key K, F)."""
    from qdrant_client import QdrantClient, models

    from crawler.lib.chunking import point_id

    own = next(k for k, r in legacy_records(cache).items() if r["url"] == f"{BASE}{path}")
    foreign = "f" * 40
    for table in ("pages", "content", "responses"):
        with sqlite3.connect(cache / LEGACY_FILES[table]) as conn:
            conn.execute(f"UPDATE {table} SET key = ? WHERE key = ?", (foreign, own))
        conn.close()
    with sqlite3.connect(cache / "inputs.sqlite") as conn:
        conn.execute("UPDATE inputs SET value = ? WHERE value = ?", (json.dumps(foreign), json.dumps(own)))
    conn.close()
    (cache / "metadata" / f"{own}_meta.json").rename(cache / "metadata" / f"{foreign}_meta.json")
    extraction = json.loads((cache / "extractions" / f"{own}.json").read_text())
    (cache / "extractions" / f"{own}.json").unlink()
    (cache / "extractions" / f"{foreign}.json").write_text(json.dumps({**extraction, "url_hash": foreign}))
    client = QdrantClient(path=str(cache / "qdrant"))
    try:
        points = [p for p in client.scroll("pages", with_vectors=True, limit=1000)[0] if p.payload["url_hash"] == own]
        assert points
        client.upsert(
            "pages",
            [
                models.PointStruct(
                    id=point_id(foreign, p.payload["content_hash"], p.payload["occurrence"]),
                    vector=p.vector,
                    payload={**p.payload, "url_hash": foreign},
                )
                for p in points
            ],
        )
        client.delete("pages", points_selector=models.PointIdsList(points=[p.id for p in points]))
    finally:
        client.close()
    return own, foreign, len(points)


def points_by_page(cache):
    from qdrant_client import QdrantClient

    client = QdrantClient(path=str(cache / "qdrant"))
    try:
        by_page: dict[str, set[str]] = {}
        for point in client.scroll("pages", limit=1000)[0]:
            by_page.setdefault(point.payload["url_hash"], set()).add(str(point.id))
        return by_page
    finally:
        client.close()


def test_the_points_of_a_re_keyed_page_are_moved_by_the_next_sync_without_embedding(site, tmp_path):
    """A cache made with another REQUEST_FINGERPRINTER_CLASS: the migration re-keys a
    page; the next crawl's vector sync moves its points to the new key (read and written
    again, not embedded), and none is left under the old key."""
    from crawler.lib.chunking import point_id

    cache = tmp_path / "extracted-docs"
    shutil.copytree(FIXTURE, cache)
    own, foreign, count = rekey_with_points(cache, "/api/")
    embedded = tmp_path / "embedded.log"
    result = run_crawl(f"{BASE}/", cache, settings={**SETTINGS, "TEST_EMBEDDER_LOG": str(embedded)}, env=site.proxy_env)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "1 pages re-keyed" in result.stderr and "the vector points of 1 of them are moved" in result.stderr
    assert "Moved the vector points of 1 page(s) re-keyed" in result.stderr
    assert not embedded.exists() or embedded.read_text() == ""  # 0 embeddings
    assert result.report["extractor_calls"] == 0
    by_page = points_by_page(cache)
    assert foreign not in by_page  # no point left under the old key
    store = SqliteDocStore(cache, readonly=True)
    try:
        record = store.get_page(own)
        assert record["vectors"]["points"] == count == len(by_page[own]) and "moved_from" not in record["vectors"]
        stored = {point_id(own, p["content_hash"], p["occurrence"]) for p in store_payloads(cache, own)}
        assert by_page[own] == stored  # under the new key's point ids
    finally:
        store.close()


def store_payloads(cache, url_hash):
    from qdrant_client import QdrantClient

    client = QdrantClient(path=str(cache / "qdrant"))
    try:
        return [p.payload for p in client.scroll("pages", limit=1000)[0] if p.payload["url_hash"] == url_hash]
    finally:
        client.close()


def test_vectors_verify_names_a_re_keyed_page_and_repair_moves_its_points(tmp_path):
    import subprocess

    from tests.crawl import ROOT, crawl_env, scrapy_command

    cache = tmp_path / "extracted-docs"
    shutil.copytree(FIXTURE, cache)
    own, foreign, count = rekey_with_points(cache, "/api/")
    embedded = tmp_path / "embedded.log"
    settings = {**SETTINGS, "TEST_EMBEDDER_LOG": str(embedded)}

    def verify(*options):
        proc = subprocess.run(
            scrapy_command(["vectors", "verify", "--json", *options], cache, settings),
            cwd=ROOT,
            env=crawl_env(),
            capture_output=True,
            text=True,
            timeout=120,
        )
        return proc.returncode, json.loads(proc.stdout or "{}"), proc.stderr

    status, found, stderr = verify()  # migrates the cache, changes no point
    assert status == 1, stderr[-2000:]
    assert [p["kind"] for p in found["problems"]] == ["re-keyed page"]
    assert set(points_by_page(cache)[foreign]) and own not in points_by_page(cache)
    status, repaired, stderr = verify("--repair")
    assert status == 0 and repaired["ok"] and repaired["problems"] == [], stderr[-2000:]
    assert not embedded.exists() or embedded.read_text() == ""  # moved, not embedded
    by_page = points_by_page(cache)
    assert foreign not in by_page and len(by_page[own]) == count
    status, again, _ = verify()
    assert status == 0 and again["problems"] == []
