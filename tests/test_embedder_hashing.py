import os
import subprocess
import sys

import pytest

from crawler.embedders import check_embedder, embedder_key
from crawler.embedders.hashing import HashingEmbedder
from crawler.lib.featurehash import hashed_vector
from tests.crawl import ROOT


@pytest.fixture
def make_component(make_component):
    """Components built without a cache: embedders never open it (and a test builds
    several on one directory)."""
    return lambda cls, settings=None: make_component(cls, settings, cache=False)


def cosine(a, b):
    return sum(x * y for x, y in zip(a, b, strict=True))


def test_built_from_settings_with_dimensions_in_its_version(make_component):
    _, embedder = make_component(HashingEmbedder, {"EMBEDDER_DIMENSIONS": 64})
    check_embedder(embedder)
    assert embedder_key(embedder) == "feature-hashing/1-d64"
    [vector] = embedder.embed(["install the package"])
    assert len(vector) == 64
    _, default = make_component(HashingEmbedder)
    assert default.dimensions == 256 and default.version == "1-d256"


def test_bad_dimensions_named():
    with pytest.raises(ValueError, match="EMBEDDER_DIMENSIONS"):
        HashingEmbedder(1)


def test_shared_words_score_higher_than_unrelated_text():
    query = hashed_vector("how to install the crawler with pip")
    near = hashed_vector("Install the crawler with pip install crawler.")
    far = hashed_vector("The API returns a report object with page counts.")
    assert cosine(query, near) > cosine(query, far)
    assert cosine(near, near) == pytest.approx(1.0)


@pytest.mark.e2e
def test_vectors_do_not_depend_on_the_process():
    code = "from crawler.lib.featurehash import hashed_vector; print(hashed_vector('stable words here', 16))"
    outputs = set()
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(ROOT)}
        outputs.add(subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True).stdout)
    assert len(outputs) == 1
    assert outputs.pop().strip() == str(hashed_vector("stable words here", 16))


def test_an_embedder_missing_its_name_or_method_is_refused():
    class Nameless:
        name, version = "", "1"

        def embed(self, texts):
            return []

    class NoMethod:
        name, version = "x", "1"

    with pytest.raises(TypeError, match="Embedder Nameless needs a non-empty string attribute 'name', got ''"):
        check_embedder(Nameless())
    with pytest.raises(TypeError, match=r"Embedder NoMethod needs a method embed\(self, texts\) -> list of vectors"):
        check_embedder(NoMethod())
