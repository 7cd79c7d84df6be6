import pytest

from crawler.embedders import EmbeddingRejected, check_embedder, embedder_key
from crawler.embedders.openai_compat import OpenAIEmbedder
from crawler.lib.featurehash import hashed_vector
from tests.embeddings_server import EmbeddingsServer
from tests.helpers import run


@pytest.fixture
def make_component(make_component):
    """Components built without a cache: embedders never open it (and a test builds
    several on one directory)."""
    return lambda cls, settings=None: make_component(cls, settings, cache=False)


@pytest.fixture
def server():
    served = EmbeddingsServer().start()
    yield served
    served.stop()


def settings(server, **more):
    return {
        "EMBEDDER_BASE_URL": server.url,
        "EMBEDDER_MODEL": "test-embed",
        **more,
    }


async def embed(embedder, texts):
    try:
        return await embedder.embed(texts)
    finally:
        await embedder.close()


def test_batches_in_order_with_the_key_from_the_environment(server, make_component, monkeypatch):
    monkeypatch.setenv("EMBEDDER_API_KEY", "sk-test-123")
    _, embedder = make_component(OpenAIEmbedder, settings(server, EMBEDDER_BATCH_SIZE=2))
    check_embedder(embedder)
    assert embedder_key(embedder) == "openai-compatible/test-embed"
    texts = ["one text", "two texts", "three texts", "four", "five"]
    vectors = run(embed(embedder, texts))
    assert vectors == [hashed_vector(t, 32) for t in texts]  # in order, though served reversed
    assert [r["input"] for r in server.requests] == [texts[0:2], texts[2:4], texts[4:]]
    assert {r["auth"] for r in server.requests} == {"Bearer sk-test-123"}
    assert {(r["path"], r["model"], r["encoding_format"]) for r in server.requests} == {
        ("/v1/embeddings", "test-embed", "float")
    }


def test_dimensions_sent_and_part_of_the_version(server, make_component):
    _, embedder = make_component(OpenAIEmbedder, settings(server, EMBEDDER_DIMENSIONS=8))
    [vector] = run(embed(embedder, ["x"]))
    assert len(vector) == 8 and server.requests[0]["dimensions"] == 8
    assert embedder.version == "test-embed-d8"


def test_rate_limited_and_server_errors_are_retried(server, make_component):
    server.fail_next = [429, 500]
    crawler, embedder = make_component(OpenAIEmbedder, settings(server))
    waits = []

    async def sleep(seconds):
        waits.append(seconds)

    embedder.sleep = sleep
    assert run(embed(embedder, ["retry me"])) == [hashed_vector("retry me", 32)]
    assert len(server.requests) == 3
    assert waits == [0.005, 0.005]  # the server's retry-after-ms, as the LLM extractor obeys it
    stats = crawler.stats
    assert stats.get_value("embedder/retries") == 2
    assert stats.get_value("embedder/retry_reason/429") == stats.get_value("embedder/retry_reason/500") == 1


def test_gives_up_after_the_retries(server, make_component):
    server.fail_next = [503] * 5
    _, embedder = make_component(OpenAIEmbedder, settings(server))
    embedder.max_retries = 1
    with pytest.raises(Exception, match="503"):
        run(embed(embedder, ["down"]))
    assert len(server.requests) == 2


def test_bad_settings_named(server, make_component):
    with pytest.raises(ValueError, match="EMBEDDER_BATCH_SIZE"):
        make_component(OpenAIEmbedder, settings(server, EMBEDDER_BATCH_SIZE=0))
    with pytest.raises(ValueError, match="EMBEDDER_RATE_LIMIT_PER_MIN"):
        make_component(OpenAIEmbedder, settings(server, EMBEDDER_RATE_LIMIT_PER_MIN="fast"))
    with pytest.raises(ValueError, match=r"EMBEDDER_RATE_LIMIT_PER_MIN must be 0 .* got -1"):
        make_component(OpenAIEmbedder, settings(server, EMBEDDER_RATE_LIMIT_PER_MIN=-1))


@pytest.mark.parametrize("status", [400, 413, 422])
def test_a_refused_text_is_rejected_not_retried(server, make_component, status):
    server.fail_next = [status]
    _, embedder = make_component(OpenAIEmbedder, settings(server))
    with pytest.raises(EmbeddingRejected, match=f"HTTP {status}"):
        run(embed(embedder, ["a text over the model's token limit"]))
    assert len(server.requests) == 1


def test_an_unauthorized_answer_is_not_a_rejected_text(server, make_component):
    server.fail_next = [401]
    _, embedder = make_component(OpenAIEmbedder, settings(server))
    with pytest.raises(Exception, match="401") as caught:
        run(embed(embedder, ["x"]))
    assert not isinstance(caught.value, EmbeddingRejected)


def test_openai_key_is_not_sent_to_another_endpoint(server, make_component, monkeypatch):
    """OPENAI_API_KEY goes to api.openai.com only, as with the LLM extractor."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-real-openai-key-1234")
    _, embedder = make_component(OpenAIEmbedder, {"EMBEDDER_BASE_URL": server.url, "EMBEDDER_MODEL": "test-embed"})
    run(embed(embedder, ["x"]))
    [request] = server.requests
    assert "sk-real-openai-key-1234" not in str(request["auth"])


def test_the_embedders_own_key_goes_where_the_user_points(server, make_component, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-real-openai-key-1234")
    monkeypatch.setenv("EMBEDDER_API_KEY", "sk-the-users-embedder-key")
    _, embedder = make_component(OpenAIEmbedder, settings(server))
    run(embed(embedder, ["x"]))
    assert server.requests[0]["auth"] == "Bearer sk-the-users-embedder-key"


def test_openai_still_needs_a_key_and_both_variables_are_named(make_component, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("EMBEDDER_API_KEY", raising=False)
    with pytest.raises(ValueError, match="environment variable EMBEDDER_API_KEY or OPENAI_API_KEY"):
        make_component(OpenAIEmbedder, {})
