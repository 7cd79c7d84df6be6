import pytest
from qdrant_client import QdrantClient

from crawler.lib.chunking import chunk_markdown
from crawler.lib.featurehash import hashed_vector
from crawler.vectors.qdrant import QdrantVectorStore
from crawler.vectors.sync import EmbeddingError, PageInput, VectorSyncer
from tests.embedders import CountingEmbedder
from tests.helpers import run
from tests.reembedding import reembedded_by_content
from tests.vectorpages import page_markdown, paragraph, paragraphs

TARGET = 300


class RecordingStore(QdrantVectorStore):
    """The real in-memory Qdrant store, logging its writes in order."""

    def __init__(self):
        super().__init__(QdrantClient(":memory:"), "test", local=True, location=":memory:")
        self.ops = []

    def upsert(self, points):
        self.ops += [("upsert", p.id) for p in points]
        super().upsert(points)

    def set_payload(self, point_id, payload):
        self.ops.append(("set_payload", point_id))
        super().set_payload(point_id, payload)

    def delete(self, ids):
        self.ops += [("delete", i) for i in ids]
        super().delete(ids)


@pytest.fixture
def store():
    opened = RecordingStore()
    yield opened
    opened.close()


def syncer(store, embedder=None, **kwargs):
    return VectorSyncer(store, embedder or CountingEmbedder(), **{"target": TARGET, "batch_size": 64, **kwargs})


def page(text, url_hash="p1", title="Guide"):
    return PageInput(url_hash, f"http://site/{url_hash}", text, title, "site")


def sync(s, *pages):
    run(s.sync(list(pages)))
    return s


def store_chunks(store, url_hash):
    """content hashes of a page's points, in chunk order."""
    points = store.page_points(url_hash)
    return [p["content_hash"] for p in sorted(points.values(), key=lambda p: p["chunk_index"])]


PARAS = paragraphs(2, 40)
TEXT = page_markdown("Guide", PARAS)


def test_first_sync_then_nothing_to_do(store):
    first = sync(syncer(store), page(TEXT))
    chunks = chunk_markdown(TEXT, TARGET)
    assert first.counts["chunks_new"] == first.counts["embedding_calls"] == len(chunks) == store.count()
    assert store_chunks(store, "p1") == [c.content_hash for c in chunks]
    store.ops.clear()
    again = sync(syncer(store), page(TEXT))
    assert again.embedder.requests == 0 and store.ops == []
    assert again.counts["chunks_unchanged"] == again.counts["embedding_calls_saved"] == len(chunks)


def test_edit_reembeds_the_chunk_holding_it_and_deletes_its_old_point_after(store):
    sync(syncer(store), page(TEXT))
    store.ops.clear()
    edited = TEXT.replace(PARAS[20], PARAS[20] + " Now with a warning.")
    s = sync(syncer(store), page(edited))
    holding = [c for c in chunk_markdown(edited, TARGET) if "Now with a warning." in c.text]
    assert [t for t in s.embedder.texts] == [c.embed_text for c in holding]
    assert s.counts["chunks_deleted"] == 1
    kinds = [op for op, _ in store.ops]
    assert kinds.index("delete") > max(i for i, k in enumerate(kinds) if k == "upsert")  # written first
    assert store.count() == len(chunk_markdown(edited, TARGET))


def test_insert_near_the_top_reembeds_at_most_2_and_moves_the_rest(store):
    sync(syncer(store), page(TEXT))
    inserted = TEXT.replace(PARAS[1], "A brand new paragraph about proxies.\n\n" + PARAS[1])
    s = sync(syncer(store), page(inserted))
    new_chunks = chunk_markdown(inserted, TARGET)
    assert 1 <= s.counts["embedding_calls"] <= 2
    assert store_chunks(store, "p1") == [c.content_hash for c in new_chunks]  # chunk_index kept right
    assert s.counts["chunks_moved"] + s.counts["chunks_unchanged"] + s.counts["embedding_calls"] == len(new_chunks)


def test_shrunk_page_loses_its_surplus_points(store):
    sync(syncer(store), page(TEXT))
    shorter = page_markdown("Guide", PARAS[:10])
    s = sync(syncer(store), page(shorter))
    assert store.count() == len(chunk_markdown(shorter, TARGET))
    assert s.counts["chunks_deleted"] >= len(chunk_markdown(TEXT, TARGET)) - store.count()
    assert s.counts["embedding_calls"] <= 1


def test_embedder_failure_leaves_unfinished_pages_as_they_were(store):
    other = paragraphs(3, 10)
    one, two = page(TEXT, "p1"), page(page_markdown("Other", other), "p2")
    sync(syncer(store), one, two)
    before = {h: set(store.page_points(h)) for h in ("p1", "p2")}
    edited_one = page(TEXT.replace(PARAS[3], "Edited early paragraph."), "p1")
    edited_two = page(two.text.replace(other[5], other[5] + " BROKEN"), "p2")
    failing = syncer(store, CountingEmbedder(fail="BROKEN"), batch_size=1)
    with pytest.raises(EmbeddingError, match="on purpose"):
        run(failing.sync([edited_one, edited_two]))
    assert failing.embedder.texts  # it failed mid-run, after embedding page one
    assert set(store.page_points("p1")) != before["p1"]  # page one was fully written
    assert set(store.page_points("p2")) == before["p2"]  # page two: nothing written, nothing deleted
    assert failing.counts["pages_failed"] == 1
    retry = sync(syncer(store), edited_one, edited_two)
    # the next run completes: page two's changed chunks, nothing of page one
    old_two = [c.content_hash for c in chunk_markdown(two.text, TARGET)]
    new_two = [c.content_hash for c in chunk_markdown(edited_two.text, TARGET)]
    assert retry.counts["embedding_calls"] == reembedded_by_content(old_two, new_two)[0] >= 1
    assert any("BROKEN" in t for t in retry.embedder.texts)
    assert store.count() == len(chunk_markdown(edited_one.text, TARGET)) + len(chunk_markdown(edited_two.text, TARGET))


def test_new_embedder_version_or_force_reembeds_every_chunk_under_the_same_ids(store):
    sync(syncer(store), page(TEXT))
    ids = set(store.page_points("p1"))
    newer = sync(syncer(store, CountingEmbedder(version="2")), page(TEXT))
    assert newer.counts["chunks_updated"] == len(ids) and newer.counts["chunks_new"] == 0
    assert set(store.page_points("p1")) == ids
    assert {p["embedder"] for p in store.page_points("p1").values()} == {"counting/2"}
    forced = sync(syncer(store, CountingEmbedder(version="2"), force=True), page(TEXT))
    assert forced.counts["chunks_updated"] == len(ids) and store.count() == len(ids)


def test_texts_batched_across_pages(store):
    pages = [page(f"# P{i}\n\n{paragraph(__import__('random').Random(i))}", f"h{i}") for i in range(5)]
    s = sync(syncer(store, batch_size=2), *pages)
    assert s.counts["embedding_requests"] == 3 and s.counts["embedding_calls"] == 5


def test_removed_page_deleted_whole(store):
    s = sync(syncer(store), page(TEXT, "p1"), page("# Other\n\nText.", "p2"))
    assert s.delete_page("p1") == len(chunk_markdown(TEXT, TARGET))
    assert store.count() == 1 and s.counts["pages_removed"] == 1


class WrongCount(CountingEmbedder):
    def embed(self, texts):
        return [hashed_vector("x", 8)]


def test_wrong_number_of_vectors_is_an_embedding_error(store):
    with pytest.raises(EmbeddingError, match="returned 1 vectors for 2 texts"):
        run(syncer(store, WrongCount()).sync([page("# A\n\n" + "x " * 200 + "\n\n" + "y " * 200)]))
    assert store.count() == 0


def test_bad_settings_refused():
    with pytest.raises(ValueError, match="EMBEDDER_BATCH_SIZE"):
        VectorSyncer(RecordingStore(), CountingEmbedder(), target=TARGET, batch_size=0)
    with pytest.raises(ValueError, match="VECTOR_SYNC_CHUNK_SIZE"):
        VectorSyncer(RecordingStore(), CountingEmbedder(), target=10, batch_size=64)
    with pytest.raises(TypeError, match="attribute 'name'"):
        VectorSyncer(RecordingStore(), object(), target=TARGET, batch_size=64)


class FlakyStore(RecordingStore):
    """Fails on delete while ``fail_delete``: the store dies between upsert and delete."""

    fail_delete = False

    def delete(self, ids):
        if self.fail_delete and ids:
            raise RuntimeError("store down on delete")
        super().delete(ids)


def test_store_failure_between_upsert_and_delete_counts_the_pages_and_loses_nothing():
    store = FlakyStore()
    other = page(page_markdown("Other", paragraphs(3, 10)), "p2")
    third = page(page_markdown("Third", paragraphs(4, 10)), "p3")
    sync(syncer(store), page(TEXT), other, third)
    before = set(store.page_points("p1"))
    edited = page(TEXT.replace(PARAS[20], PARAS[20] + " Edited once."))
    store.fail_delete = True
    failing = syncer(store)
    with pytest.raises(RuntimeError, match="store down"):
        run(failing.sync([edited, other, page(third.text + "\n\nMore.", "p3")]))
    # page one was written but not cleaned; it and the page never reached both failed
    assert failing.counts["pages_failed"] == 3 and failing.counts["pages_synced"] == 0
    wanted = {c.point_id("p1") for c in chunk_markdown(edited.text, TARGET)}
    assert wanted <= set(store.page_points("p1"))  # its new point was written
    assert before <= set(store.page_points("p1")) and wanted != before  # and nothing deleted
    store.fail_delete = False
    retry = sync(syncer(store), edited, other, page(third.text + "\n\nMore.", "p3"))
    assert retry.counts["pages_failed"] == 0 and retry.counts["chunks_deleted"] >= 1
    expected = sum(len(chunk_markdown(t, TARGET)) for t in (edited.text, other.text, third.text + "\n\nMore."))
    assert store.count() == expected
    store.close()


def test_a_text_the_embedder_refuses_fails_its_page_only(store):
    poison = page("# A\n\nA text too long for the model POISON.\n\n" + "\n\n".join(paragraphs(5, 8)), "a")
    fine = [page(f"# {h}\n\n" + "\n\n".join(paragraphs(6 + i, 4)), h) for i, h in enumerate("bc")]
    chunks = {p.url_hash: len(chunk_markdown(p.text, TARGET)) for p in fine}
    for run_number in range(2):  # the same on every run: the other pages are synced all the same
        s = sync(syncer(store, CountingEmbedder(reject="POISON"), batch_size=4), poison, *fine)
        assert s.counts["pages_failed"] == 1 and list(s.failed) == ["http://site/a"]
        assert "too long" in s.failed["http://site/a"]
        assert store.page_points("a") == {}  # nothing of the refused page written
        for p in fine:
            assert len(store.page_points(p.url_hash)) == chunks[p.url_hash]
        if run_number == 0:  # the refused batch was embedded again text by text
            assert s.counts["embedding_calls"] == sum(chunks.values())
            assert not any("POISON" in t for t in s.embedder.texts)
    assert s.counts["embedding_calls"] == 0 and s.counts["chunks_unchanged"] == sum(chunks.values())
