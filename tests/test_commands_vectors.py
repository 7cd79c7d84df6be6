"""``scrapy vectors verify [--repair]`` and ``scrapy vectors search``, run as a user runs them."""

from __future__ import annotations

import json
import subprocess

import pytest

from crawler.lib.chunking import point_id
from crawler.vectors import Point
from tests.crawl import ROOT, crawl_env, run_crawl, scrapy_command
from tests.embedders import embedded
from tests.test_e2e_vector_sync import expected_total, open_store, vector_settings


def vectors(cache, log, *args):
    command = scrapy_command(["vectors", *args], cache, vector_settings(log))
    return subprocess.run(command, cwd=ROOT, env=crawl_env(), capture_output=True, text=True, timeout=120)


@pytest.fixture
def synced(site, tmp_path):
    cache, log = tmp_path / "cache", tmp_path / "embedded.log"
    result = run_crawl(site.url + "/", cache, settings=vector_settings(log))
    assert result.returncode == 0, result.stderr[-2000:]
    log.unlink()
    return site, cache, log


def test_verify_finds_and_repairs_drift(synced):
    site, cache, log = synced
    ok = vectors(cache, log, "verify")
    assert ok.returncode == 0, ok.stderr
    assert "agrees with the cache: 6 pages" in ok.stdout
    # drift: two pages lose their points, a point of an unknown page appears
    store = open_store(cache)
    by_url = {}
    for pid, payload in store.iter_points():
        by_url.setdefault(payload["url"], []).append(pid)
    lost = [by_url[site.url + "/api.html"][0], by_url[site.url + "/guide/install.html"][0]]
    store.delete(lost)
    stranger = Point(point_id("f" * 64, "x"), [1.0] + [0.0] * 63, {"url_hash": "f" * 64, "url": "http://gone/"})
    store.upsert([stranger])
    store.close()
    found = vectors(cache, log, "verify")
    assert found.returncode == 1
    assert found.stdout.count("missing points") == 2 and "unknown page" in found.stdout
    assert "--repair" in found.stdout
    as_json = json.loads(vectors(cache, log, "verify", "--json").stdout)
    assert as_json["ok"] is False and len(as_json["problems"]) == 3
    assert embedded(log) == []  # checking embeds nothing
    repaired = vectors(cache, log, "verify", "--repair")
    assert repaired.returncode == 0, repaired.stderr
    assert "Repaired: 2 point(s) written (2 embeddings), 1 deleted" in repaired.stdout
    assert len(embedded(log)) == 2  # the two missing chunks only
    again = vectors(cache, log, "verify")
    assert again.returncode == 0 and "agrees" in again.stdout
    store = open_store(cache)
    assert store.count() == expected_total(cache)
    store.close()


def test_search_finds_the_page(synced):
    site, cache, log = synced
    result = vectors(cache, log, "search", "pip install example", "--limit", "1")
    assert result.returncode == 0, result.stderr
    assert site.url + "/guide/install.html" in result.stdout
    hits = json.loads(vectors(cache, log, "search", "the API has one function", "--json").stdout)
    assert hits[0]["url"] == site.url + "/api.html" and "run()" in hits[0]["text"]


def test_errors_are_one_line(synced, tmp_path):
    _, cache, log = synced
    store = open_store(cache)  # local mode: one process at a time
    try:
        busy = vectors(cache, log, "verify")
    finally:
        store.close()
    assert busy.returncode == 1 and "in use by another process" in busy.stderr
    assert len(busy.stderr.strip().splitlines()) == 1
    missing = vectors(tmp_path / "nothing", log, "verify")
    assert missing.returncode == 1 and "No cache" in missing.stderr
    unknown = vectors(cache, log, "fix")
    assert unknown.returncode == 2 and "unknown sub-command" in unknown.stderr


def test_crawl_refused_in_one_line_while_the_local_store_is_open(synced):
    site, cache, log = synced
    store = open_store(cache)
    try:
        result = run_crawl(site.url + "/", cache, settings=vector_settings(log))
    finally:
        store.close()
    assert result.returncode != 0
    assert "in use by another process" in result.stderr and "Traceback" not in result.stderr
