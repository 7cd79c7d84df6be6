import pytest
from scrapy.exceptions import NotConfigured

from crawler.cache import cache_for
from crawler.cache.records import STATUS_REMOVED
from crawler.stages import PageViews, StageRun
from crawler.stages.vectors import RECORD_KEY, VectorSyncStage
from crawler.vectors import VectorStoreError
from tests.helpers import run

ON = {"VECTOR_SYNC_ENABLED": True, "EMBEDDER": "tests.embedders.CountingEmbedder", "VECTOR_SYNC_CHUNK_SIZE": 200}


@pytest.fixture
def build(make_component):
    built = []

    def factory(settings=None):
        crawler, extension = make_component(VectorSyncStage, {**ON, **(settings or {})})
        built.append(extension)
        return crawler, extension

    yield factory
    for extension in built:
        extension.engine_stopped()


def test_off_by_default_without_a_warning(make_component, caplog):
    with caplog.at_level("DEBUG", logger="crawler.stages.vectors"), pytest.raises(NotConfigured) as raised:
        make_component(VectorSyncStage)
    assert raised.value.args == ()  # Scrapy logs a warning for a NotConfigured with a message
    assert caplog.messages == ["VectorSyncStage is off: VECTOR_SYNC_ENABLED is False"]


@pytest.mark.parametrize(
    ("settings", "named"),
    [
        ({"EMBEDDER": "no.such.Embedder"}, "EMBEDDER="),
        ({"VECTOR_SYNC_STORE": "no.such.Store"}, "VECTOR_SYNC_STORE="),
        ({"VECTOR_SYNC_CHUNK_SIZE": "big"}, "VECTOR_SYNC_CHUNK_SIZE"),
        ({"VECTOR_SYNC_CHUNK_SIZE": 10}, "VECTOR_SYNC_CHUNK_SIZE"),
        ({"EMBEDDER_BATCH_SIZE": 0}, "EMBEDDER_BATCH_SIZE"),
        ({"VECTOR_SYNC_STORE": "os.path"}, "VECTOR_SYNC_STORE='os.path' is not a vector store class"),
        ({"VECTOR_SYNC_STORE": "os.path.nothing"}, "VECTOR_SYNC_STORE="),
        ({"EMBEDDER": "os.path"}, "EMBEDDER='os.path' is not a class"),
        ({"EMBEDDER": "collections.OrderedDict"}, "EMBEDDER='collections.OrderedDict': Embedder OrderedDict needs"),
        ({"QDRANT_PATH": "/proc/nope"}, "/proc/nope .QDRANT_PATH. cannot be opened"),
    ],
)
def test_bad_settings_named(make_component, settings, named):
    with pytest.raises((ValueError, VectorStoreError), match=named):
        make_component(VectorSyncStage, {**ON, **settings})


def sync(stage, cache, report):
    """Plan, run and report, the records written after, as the runner does."""
    pages = PageViews(cache.store)
    run(stage.run(stage.plan(StageRun(cache, pages, complete=report["complete"]))))
    pages.flush()
    stage.report(report)


def add_page(cache, url_hash, text, status="new"):
    url = f"http://site/{url_hash}"
    cache.store.put_page(url_hash, {"url": url, "domain": "site", "title": url_hash, "status": status})
    cache.store.put_content(url_hash, {"url": url, "text": text, "clean": text + " (cleaned)"})
    cache.run.seen[url_hash] = None


def test_syncs_cleaned_content_and_records_it(build):
    crawler, extension = build()
    cache = cache_for(crawler)
    add_page(cache, "a", "# A\n\nFirst page.")
    add_page(cache, "b", "# B\n\nSecond page.")
    report = {"complete": True}
    sync(extension, cache, report)
    section = report["vector_sync"]
    assert (section["chunks_new"], section["points"], section["embedding_calls"]) == (2, 2, 2)
    assert all("(cleaned)" in t for t in extension.syncer.embedder.texts)  # content["clean"]
    assert crawler.stats.get_value("vector_sync/chunks_new") == 2
    assert cache.store.get_page("a")[RECORD_KEY]["points"] == 1


def test_removed_pages_deleted_after_a_complete_crawl_only(build):
    crawler, extension = build()
    cache = cache_for(crawler)
    add_page(cache, "a", "# A\n\nStays.")
    add_page(cache, "b", "# B\n\nGoes.")
    sync(extension, cache, {"complete": True})
    record = cache.store.get_page("b")
    record["status"] = STATUS_REMOVED
    cache.store.put_page("b", record)
    cache.run.seen.pop("b")
    partial = {"complete": False}
    sync(extension, cache, partial)
    assert partial["vector_sync"]["removed_pages_kept"] == 1
    assert partial["vector_sync"]["points"] == 2 and partial["vector_sync"]["chunks_deleted"] == 0
    complete = {"complete": True}
    sync(extension, cache, complete)
    assert complete["vector_sync"]["points"] == 1 and complete["vector_sync"]["pages_removed"] == 1
    assert cache.store.get_page("b")[RECORD_KEY]["points"] == 0  # deleted: not looked up again
    extension.syncer.counts.clear()  # one extension per crawl: counts are per run
    again = {"complete": True}
    sync(extension, cache, again)
    assert again["vector_sync"]["pages_removed"] == 0 and again["vector_sync"]["points"] == 1


def test_embedder_failure_is_reported_and_the_report_still_written(build):
    crawler, extension = build({"TEST_EMBEDDER_FAIL": "Never"})
    cache = cache_for(crawler)
    add_page(cache, "a", "# A\n\nNever embedded.")
    report = {"complete": True}
    sync(extension, cache, report)
    assert "on purpose" in report["vector_sync"]["error"]
    assert report["vector_sync"]["points"] == 0 and report["vector_sync"]["pages_failed"] == 1
    assert crawler.stats.get_value("vector_sync/errors") == 1
    assert RECORD_KEY not in cache.store.get_page("a")


def test_off_for_a_dry_run(make_component):
    with pytest.raises(NotConfigured, match="a dry run"):
        make_component(VectorSyncStage, ON, spider_args={"dry_run": "true"})


def remove(cache, url_hash):
    record = cache.store.get_page(url_hash)
    record["status"] = STATUS_REMOVED
    cache.store.put_page(url_hash, record)
    cache.run.seen.pop(url_hash, None)


def test_removed_page_without_a_record_of_its_points_still_loses_them(build):
    # points in the store but no "vectors" in the record: a sync killed before the
    # cache commit, or records rebuilt from extractions/
    crawler, extension = build()
    cache = cache_for(crawler)
    add_page(cache, "a", "# A\n\nStays.")
    add_page(cache, "b", "# B\n\nGoes.")
    sync(extension, cache, {"complete": True})
    remove(cache, "b")
    record = cache.store.get_page("b")
    del record[RECORD_KEY]
    cache.store.put_page("b", record)
    partial = {"complete": False}
    sync(extension, cache, partial)
    assert partial["vector_sync"]["removed_pages_kept"] == 1 and partial["vector_sync"]["points"] == 2
    complete = {"complete": True}
    sync(extension, cache, complete)
    assert complete["vector_sync"]["pages_removed"] == 1 and complete["vector_sync"]["chunks_deleted"] == 1
    assert extension.syncer.store.page_points("b") == {} and complete["vector_sync"]["points"] == 1


def test_embedder_failure_in_a_complete_crawl_keeps_a_removed_pages_points_until_the_next(build):
    crawler, extension = build({"TEST_EMBEDDER_FAIL": "BROKEN"})
    cache = cache_for(crawler)
    add_page(cache, "a", "# A\n\nStays.")
    add_page(cache, "b", "# B\n\nGoes.")
    sync(extension, cache, {"complete": True})
    remove(cache, "b")
    add_page(cache, "a", "# A\n\nStays, BROKEN now.")
    failed = {"complete": True}
    sync(extension, cache, failed)
    assert "on purpose" in failed["vector_sync"]["error"] and failed["vector_sync"]["pages_failed"] == 1
    assert failed["vector_sync"]["chunks_deleted"] == 0 and failed["vector_sync"]["points"] == 2
    extension.syncer.embedder.fail = None  # the service is back
    extension.syncer.counts.clear()
    after = {"complete": True}
    sync(extension, cache, after)
    assert "error" not in after["vector_sync"]
    assert (after["vector_sync"]["pages_removed"], after["vector_sync"]["chunks_new"]) == (1, 1)
    assert after["vector_sync"]["points"] == 1


def test_a_refused_text_fails_its_page_only_and_is_reported(build):
    crawler, extension = build({"TEST_EMBEDDER_REJECT": "POISON"})
    cache = cache_for(crawler)
    add_page(cache, "a", "# A\n\nPOISON for the model.")
    add_page(cache, "b", "# B\n\nFine.")
    report = {"complete": True}
    sync(extension, cache, report)
    section = report["vector_sync"]
    assert "error" not in section and section["pages_failed"] == 1 and section["points"] == 1
    assert list(section["failed"]) == ["http://site/a"] and "too long" in section["failed"]["http://site/a"]
    assert RECORD_KEY not in cache.store.get_page("a") and RECORD_KEY in cache.store.get_page("b")
    assert crawler.stats.get_value("vector_sync/pages_failed") == 1


def test_an_empty_store_trusts_no_record_of_a_last_sync(build, tmp_path):
    # the store moved aside (or lost): pages recorded as synced are synced again
    crawler, extension = build()
    cache = cache_for(crawler)
    add_page(cache, "a", "# A\n\nFirst page.")
    sync(extension, cache, {"complete": True})
    store = extension.syncer.store
    store.delete(list(store.page_points("a")))
    extension.syncer.counts.clear()
    report = {"complete": True}
    sync(extension, cache, report)
    assert (report["vector_sync"]["chunks_new"], report["vector_sync"]["points"]) == (1, 1)


@pytest.mark.parametrize("reads_vectors", [True, False])
def test_the_points_of_a_page_re_keyed_by_the_migration_are_moved_once(build, monkeypatch, reads_vectors):
    """The migration of an older cache moved page "old" to key "new" (its vectors
    record says ``moved_from``): the sync moves its points without embedding; a store
    that cannot read vectors (no ``get_points``) loses the old points and the page is
    embedded again. Either way no point is left under the old key."""
    from crawler.lib.chunking import point_id
    from crawler.vectors.qdrant import QdrantVectorStore

    crawler, extension = build()
    cache = cache_for(crawler)
    add_page(cache, "old", "# Old\n\nA page and its text.")
    add_page(cache, "other", "# Other\n\nNot re-keyed.")
    sync(extension, cache, {"complete": True})
    record = cache.store.get_page("old")
    content = cache.store.get_content("old")
    cache.store.delete_page("old")
    cache.run.seen.pop("old")
    record[RECORD_KEY]["moved_from"] = "old"
    cache.store.put_page("new", record)
    cache.store.put_content("new", content)
    cache.run.seen["new"] = None
    if not reads_vectors:
        monkeypatch.delattr(QdrantVectorStore, "get_points")
    extension.syncer.counts.clear()
    report = {"complete": True}
    sync(extension, cache, report)
    store = extension.syncer.store
    assert store.page_points("old") == {} and len(store.page_points("new")) == 1
    moved = store.page_points("new")
    assert {p["url_hash"] for p in moved.values()} == {"new"}
    assert set(moved) == {point_id("new", p["content_hash"], p["occurrence"]) for p in moved.values()}
    assert report["vector_sync"]["embedding_calls"] == (0 if reads_vectors else 1)
    assert "moved_from" not in cache.store.get_page("new")[RECORD_KEY]
    assert report["vector_sync"]["points"] == 2
