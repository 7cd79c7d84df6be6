import json
from http.server import BaseHTTPRequestHandler

import pytest
from qdrant_client import QdrantClient
from scrapy.settings import Settings

from crawler.lib.chunking import point_id
from crawler.lib.featurehash import hashed_vector
from crawler.support import secrets
from crawler.vectors import Point, VectorStore, VectorStoreError
from crawler.vectors.qdrant import QdrantVectorStore
from tests.helpers import serve, stop_serving


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


class FakeQdrantServer:
    """Answers ``GET /collections`` as a Qdrant server does (an empty list), recording
    each request's API key; any other request gets a 404."""

    def __init__(self):
        keys = self.keys = []

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                keys.append(self.headers.get("api-key"))
                ok = self.path.split("?")[0] == "/collections"
                body = json.dumps({"result": {"collections": []}, "status": "ok", "time": 0.0}).encode()
                self.send_response(200 if ok else 404)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = serve(Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def stop(self):
        stop_serving(self.server)


@pytest.mark.filterwarnings("ignore:Api key is used with an insecure connection")
def test_server_settings_and_the_key_sent_at_start_up(monkeypatch):
    monkeypatch.setenv("QDRANT_API_KEY", "secret-qdrant-key")
    server = FakeQdrantServer()
    try:
        store = QdrantVectorStore.from_settings(Settings({"QDRANT_URL": server.url, "VECTOR_SYNC_COLLECTION": "c"}))
        assert not store.local and store.location == f"{server.url}#c"
        assert server.keys == ["secret-qdrant-key"]  # the server was asked once, at start-up, with the key
        assert secrets.mask("refused: secret-qdrant-key") == "refused: ***"  # registered: masked in logs
        store.close()
    finally:
        server.stop()


def test_an_unreachable_server_fails_at_start_in_one_line():
    with pytest.raises(VectorStoreError, match=r"QDRANT_URL=http://127.0.0.1:1 does not answer") as caught:
        QdrantVectorStore.from_settings(Settings({"QDRANT_URL": "http://127.0.0.1:1", "QDRANT_TIMEOUT": 2}))
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize("damage", ["meta.json", "storage.sqlite"])
def test_a_corrupt_local_store_is_named_and_left_as_it_is(tmp_path, damage):
    settings = Settings({"EXTRACTED_DOCS_DIR": str(tmp_path)})
    store = QdrantVectorStore.from_settings(settings)
    store.upsert([point("a", "kept")])
    store.close()
    [target] = (tmp_path / "qdrant").rglob(damage)
    target.write_bytes(b"{not json nor sqlite\x01" * 10)
    before = {p: p.read_bytes() for p in (tmp_path / "qdrant").rglob("*") if p.is_file()}
    with pytest.raises(VectorStoreError, match=r"qdrant \(QDRANT_PATH\) cannot be opened: .*Nothing was changed"):
        QdrantVectorStore.from_settings(settings)
    assert {p: p.read_bytes() for p in (tmp_path / "qdrant").rglob("*") if p.is_file()} == before
