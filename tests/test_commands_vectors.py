"""``scrapy vectors verify [--repair]`` and ``scrapy vectors search``, run as a user runs them."""

from __future__ import annotations

import json
import subprocess

import pytest

from crawler.cache.records import STATUS_REMOVED
from crawler.cache.sqlite import SqliteDocStore
from crawler.lib.chunking import point_id
from crawler.lib.featurehash import hashed_vector
from crawler.stages.vectors import RECORD_KEY
from crawler.vectors import Point
from tests.commands import run_command
from tests.crawl import ROOT, copy_of_crawl, crawl_env, crawled_once, run_crawl, scrapy_command
from tests.embedders import embedded
from tests.test_e2e_vector_sync import expected_total, open_store, points_by_url, vector_settings

pytestmark = pytest.mark.e2e  # every test runs `scrapy vectors` as a user does, in a process of its own


def vectors(cache, log, *args, **more):
    """``scrapy vectors ARGS`` in this process (tests.commands); a test below runs it in its own."""
    return run_command(["vectors", *args], cache, vector_settings(log, **more))


@pytest.fixture(scope="module")
def synced_site(tmp_path_factory):
    """The standard site crawled once for the module with vector sync on (each test
    has a copy: ``synced``)."""
    log = tmp_path_factory.mktemp("synced") / "embedded.log"
    once = crawled_once(tmp_path_factory, vector_settings(log))
    assert embedded(log)  # the first crawl embedded its chunks
    yield once
    once[0].stop()


@pytest.fixture
def synced(synced_site, tmp_path):
    """A fresh standard site, the cache of its first crawl (a copy of the module's) and
    the log of what the test's commands embed (nothing yet)."""
    site, cache = copy_of_crawl(synced_site, tmp_path)
    return site, cache, tmp_path / "embedded.log"


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
    assert "Repaired: 2 points written (2 embeddings), 1 deleted" in repaired.stdout
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
    assert unknown.returncode == 2 and "invalid choice" in unknown.stderr


def test_without_the_qdrant_extra_the_error_names_it_in_one_line(synced, tmp_path):
    _, cache, log = synced
    hidden = tmp_path / "no-qdrant"  # an installation without the package's qdrant extra
    (hidden / "qdrant_client").mkdir(parents=True)
    (hidden / "qdrant_client" / "__init__.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'qdrant_client'\", name='qdrant_client')\n"
    )
    env = crawl_env()
    env["PYTHONPATH"] = f"{hidden}:{env['PYTHONPATH']}"
    command = scrapy_command(["vectors", "verify"], cache, vector_settings(log))
    result = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        "Error: The Qdrant vector store needs qdrant-client "
        "(install the package's extra: pip install 'incremental-docs-crawler[qdrant]')"
    ]


def test_crawl_refused_in_one_line_while_the_local_store_is_open(synced):
    site, cache, log = synced
    store = open_store(cache)
    try:
        result = run_crawl(site.url + "/", cache, settings=vector_settings(log))
    finally:
        store.close()
    assert result.returncode != 0
    assert "in use by another process" in result.stderr and "Traceback" not in result.stderr


def files(directory):
    return {p: p.read_bytes() for p in directory.rglob("*") if p.is_file() and p.name != ".lock"}


def test_verify_repairs_stale_points_and_points_of_another_embedder(synced):
    site, cache, log = synced
    store = open_store(cache)
    install = next(p for p in store.iter_points() if p[1]["url"] == site.url + "/guide/install.html")
    api_id = next(i for i, p in store.iter_points() if p["url"] == site.url + "/api.html")
    text = "A paragraph the page no longer has."
    stale = Point(point_id(install[1]["url_hash"], "gone"), hashed_vector(text, 64), {**install[1], "text": text})
    store.upsert([stale])
    store.set_payload(api_id, {"embedder": "other/9"})
    store.close()
    found = vectors(cache, log, "verify", "--json")
    assert found.returncode == 1
    kinds = {(p["kind"], p["target"]) for p in json.loads(found.stdout)["problems"]}
    assert kinds == {("stale points", site.url + "/guide/install.html"), ("other embedder", site.url + "/api.html")}
    repaired = vectors(cache, log, "verify", "--repair")
    assert repaired.returncode == 0, repaired.stdout + repaired.stderr
    assert "Repaired: 1 point written (1 embedding), 1 deleted" in repaired.stdout
    assert len(embedded(log)) == 1 and "run()" in embedded(log)[0]  # the api chunk re-embedded, no other
    assert "agrees" in vectors(cache, log, "verify").stdout
    store = open_store(cache)
    assert store.count() == expected_total(cache) and stale.id not in dict(store.iter_points())
    store.close()


def drop_sync_record(cache, url):
    docs = SqliteDocStore(cache)
    for url_hash, record in docs.iter_pages():
        if record["url"] == url:
            record.pop(RECORD_KEY)
            docs.put_page(url_hash, record)
    docs.commit()
    docs.close()


def test_a_removed_pages_points_go_though_its_record_lost_them(synced):
    # points in the store, no record of them in the page (a sync killed before the
    # cache commit; records rebuilt from extractions/): a complete crawl deletes them
    site, cache, log = synced
    api = site.url + "/api.html"
    drop_sync_record(cache, api)
    site.remove("/api.html")
    result = run_crawl(site.url + "/", cache, settings=vector_settings(log))
    assert result.returncode == 0, result.stderr[-2000:]
    vs = result.report["vector_sync"]
    assert result.report["complete"] and result.report["pages_removed"] == 1
    assert (vs["pages_removed"], vs["chunks_deleted"]) == (1, 1) and api not in points_by_url(cache)
    assert "agrees" in vectors(cache, log, "verify").stdout


def test_verify_repair_deletes_the_points_of_removed_pages(synced):
    site, cache, log = synced
    api = site.url + "/api.html"
    drop_sync_record(cache, api)
    docs = SqliteDocStore(cache)
    for url_hash, record in docs.iter_pages():
        if record["url"] == api:
            docs.put_page(url_hash, {**record, "status": STATUS_REMOVED})
    docs.commit()
    docs.close()
    noted = vectors(cache, log, "verify")
    assert noted.returncode == 0 and "1 removed page(s) are kept" in noted.stdout and "--repair" in noted.stdout
    assert json.loads(vectors(cache, log, "verify", "--json").stdout)["removed_pages_points"] == 1
    repaired = vectors(cache, log, "verify", "--repair")
    assert repaired.returncode == 0 and "Deleted the 1 point(s) of 1 removed page(s)" in repaired.stdout
    assert api not in points_by_url(cache)
    assert "removed page" not in vectors(cache, log, "verify").stdout


def test_search_refuses_another_embedder(synced):
    _, cache, log = synced
    other = vectors(cache, log, "search", "pip install", TEST_EMBEDDER_VERSION="2")
    assert other.returncode == 1 and "made by counting/1, not by EMBEDDER counting/2" in other.stderr
    dims = vectors(cache, log, "search", "pip install", EMBEDDER="crawler.embedders.hashing.HashingEmbedder")
    assert dims.returncode == 1 and "holds 64-dimension vectors and EMBEDDER makes 256" in dims.stderr
    assert len(other.stderr.strip().splitlines()) == len(dims.stderr.strip().splitlines()) == 1


BAD_SETTINGS = [
    ({"EMBEDDER": "os.path"}, "EMBEDDER='os.path' is not a class"),
    ({"VECTOR_SYNC_STORE": "os.path"}, "VECTOR_SYNC_STORE='os.path' is not a vector store class"),
    ({"QDRANT_URL": "http://127.0.0.1:1", "QDRANT_TIMEOUT": "2"}, "QDRANT_URL=http://127.0.0.1:1 does not answer"),
    ({"QDRANT_PATH": "/proc/nope"}, "/proc/nope (QDRANT_PATH) cannot be opened"),
]


def test_bad_settings_are_one_line(synced):
    _, cache, log = synced
    for settings, message in BAD_SETTINGS:
        result = vectors(cache, log, "verify", **settings)
        assert result.returncode == 1 and message in result.stderr, (settings, result.stderr)
        assert len(result.stderr.strip().splitlines()) == 1


def test_a_corrupt_local_store_is_one_line_and_nothing_is_lost(synced):
    site, cache, log = synced
    (cache / "qdrant" / "meta.json").write_text("{broken\x01", encoding="utf-8")
    before = files(cache / "qdrant")
    checked = vectors(cache, log, "verify")
    assert checked.returncode == 1 and len(checked.stderr.strip().splitlines()) == 1
    assert "qdrant (QDRANT_PATH) cannot be opened: JSONDecodeError" in checked.stderr
    crawled = run_crawl(site.url + "/", cache, settings=vector_settings(log))
    assert crawled.returncode == 1 and "Traceback" not in crawled.stderr
    assert "Crawl not started: The local Qdrant store" in crawled.stderr
    assert files(cache / "qdrant") == before  # nothing written, nothing deleted


def test_redo_vectors_embeds_every_chunk_again_for_that_run_only(synced):
    site, cache, log = synced
    redone = run_crawl(site.url + "/", cache, settings=vector_settings(log), args={"redo": "vectors"})
    assert redone.returncode == 0, redone.stderr[-2000:]
    chunks = redone.report["vector_sync"]["chunks_updated"]
    assert chunks > 0 and len(embedded(log)) == chunks and redone.calls == []  # no extractor call
    log.unlink()
    again = run_crawl(site.url + "/", cache, settings=vector_settings(log))
    assert again.returncode == 0 and embedded(log) == []


def test_no_sync_on_a_dry_run(synced):
    site, cache, log = synced
    site.edit("/api.html", "The API has two functions now, run() and stop().")
    result = run_crawl(site.url + "/", cache, settings=vector_settings(log), args={"dry_run": "true"})
    assert result.returncode == 0, result.stderr[-2000:]
    assert "vector_sync" not in result.report and embedded(log) == []
    assert "VectorSyncStage skipped: a dry run" in result.stderr
