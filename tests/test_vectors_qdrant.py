import pytest
from qdrant_client import QdrantClient
from scrapy.settings import Settings

from crawler.lib.chunking import point_id
from crawler.lib.featurehash import hashed_vector
from crawler.vectors import Point, VectorStore, VectorStoreError
from crawler.vectors.qdrant import QdrantVectorStore


def point(url_hash, text, index=0):
    pid = point_id(url_hash, text)
    payload = {"url_hash": url_hash, "url": f"http://x/{url_hash}", "chunk_index": index, "text": text}
    return Point(pid, hashed_vector(text, 16), payload)


@pytest.fixture
def store(tmp_path):
    opened = QdrantVectorStore.from_settings(Settings({"EXTRACTED_DOCS_DIR": str(tmp_path)}))
    yield opened
    opened.close()


def test_local_mode_under_the_cache_directory(store, tmp_path):
    assert isinstance(store, VectorStore)
    assert store.local and store.location == f"{(tmp_path / 'qdrant').resolve()}#pages"
    assert store.count() == 0 and store.page_points("a") == {} and store.search([0.1] * 16) == []
    a1, a2, b1 = point("a", "install with pip"), point("a", "run it", 1), point("b", "the api")
    store.upsert([a1, a2, b1])
    assert store.count() == 3
    assert set(store.page_points("a")) == {a1.id, a2.id}
    assert "text" not in store.page_points("a")[a1.id]  # listings leave the text out
    store.set_payload(a2.id, {"chunk_index": 5})
    assert store.page_points("a")[a2.id]["chunk_index"] == 5
    store.delete([a1.id])
    assert set(store.page_points("a")) == {a2.id} and store.count() == 2
    [(best, _, payload)] = store.search(hashed_vector("the api", 16), limit=1)
    assert best == b1.id and payload["text"] == "the api"
    assert {pid for pid, _ in store.iter_points()} == {a2.id, b1.id}


def test_points_persist_and_a_second_process_is_refused(tmp_path):
    settings = Settings({"EXTRACTED_DOCS_DIR": str(tmp_path)})
    first = QdrantVectorStore.from_settings(settings)
    first.upsert([point("a", "kept")])
    with pytest.raises(VectorStoreError, match="in use by another process"):
        QdrantVectorStore.from_settings(settings)
    first.close()
    again = QdrantVectorStore.from_settings(settings)
    assert set(again.page_points("a")) == {point("a", "kept").id}
    again.close()


def test_other_vector_size_refused_with_the_setting_named(store):
    store.upsert([point("a", "sixteen")])
    with pytest.raises(VectorStoreError, match="VECTOR_SYNC_COLLECTION"):
        store.upsert([Point(point_id("a", "x"), [1.0, 0.0], {"url_hash": "a"})])
    assert store.count() == 1


class IndexRecordingClient(QdrantClient):
    """An in-memory client that records the payload indexes asked for (local mode
    forgets them)."""

    def __init__(self):
        super().__init__(":memory:")
        self.indexes = {}

    def create_payload_index(self, collection_name, field_name, field_schema=None, **kwargs):
        self.indexes[field_name] = field_schema
        return super().create_payload_index(collection_name, field_name, field_schema, **kwargs)


def test_server_mode_indexes_payload_and_filters_by_page():
    # an in-memory client in the server's role: the payload indexes are created
    # (local mode warns that it ignores them) and a page's points come from a filter
    client = IndexRecordingClient()
    store = QdrantVectorStore(client, "docs", local=False, location="http://qdrant:6333")
    with pytest.warns(UserWarning, match="Payload indexes"):
        store.upsert([point("a", "one"), point("b", "two")])
    assert set(client.indexes) == {"url", "url_hash", "content_hash"}
    assert {str(v) for v in client.indexes.values()} == {"keyword"}
    assert set(store.page_points("b")) == {point("b", "two").id}
    store.close()


def test_server_settings(monkeypatch):
    monkeypatch.setenv("MY_QDRANT_KEY", "secret")
    url = "https://127.0.0.1:1"
    store = QdrantVectorStore.from_settings(
        Settings({"QDRANT_URL": url, "QDRANT_API_KEY_ENV": "MY_QDRANT_KEY", "VECTOR_SYNC_COLLECTION": "c"})
    )
    assert not store.local and store.location == f"{url}#c"
    assert store.client._client._rest_headers["api-key"] == "secret"
    store.close()
