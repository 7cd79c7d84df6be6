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
