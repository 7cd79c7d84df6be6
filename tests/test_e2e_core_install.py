"""End-to-end: a crawl with the core alone, as ``make crawl`` installs it
(``requirements-core.txt``: Scrapy, w3lib, itemadapter). The optional parts' modules
(openai, jsonschema, qdrant-client, Playwright, psycopg, redis, scrapy-redis) cannot be
imported in the crawl's process: a ``sitecustomize`` refuses them. A crawl works; a
setting that needs an extra stops the crawl at start with one line naming the extra."""

from __future__ import annotations

import pytest

from tests.crawl import assert_ok, run_crawl

pytestmark = pytest.mark.e2e

#: the top-level modules of the package's extras (pyproject.toml)
EXTRA_MODULES = (
    "openai",
    "jsonschema",
    "qdrant_client",
    "scrapy_playwright",
    "playwright",
    "psycopg",
    "redis",
    "scrapy_redis",
)
BLOCKER = f"""import sys

class Refuse:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {set(EXTRA_MODULES)!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None

sys.meta_path.insert(0, Refuse())
"""


@pytest.fixture
def core_only(tmp_path):
    """The environment of a crawl process in which no extra can be imported."""
    folder = tmp_path / "core-only"
    folder.mkdir()
    (folder / "sitecustomize.py").write_text(BLOCKER)
    return {"PYTHONPATH": str(folder), "FRONTIER_REDIS_URL": "redis://127.0.0.1:9/0"}


def test_the_core_crawls_and_a_setting_that_needs_an_extra_names_it_in_one_line(site, tmp_path, core_only):
    first = assert_ok(run_crawl(site.url + "/", tmp_path / "cache", env=core_only))
    assert first.calls and "(finished in " in first.stderr
    needs = {
        "playwright": {"PLAYWRIGHT_ENABLED": "True"},
        "qdrant": {"VECTOR_SYNC_ENABLED": "True"},
        "postgres": {"EXTRACTED_DOCS_STORE": "crawler.cache.postgres.PostgresDocStore"},
        "redis": {"FRONTIER_ENABLED": "True", "FRONTIER_RUN": "r1"},
        "llm": {"EXTRACTOR": "crawler.extractors.llm.LLMExtractor"},
    }
    for extra, settings in needs.items():
        result = run_crawl(site.url + "/", tmp_path / f"cache-{extra}", settings=settings, env=core_only)
        assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr[-3000:]
        errors = [line for line in result.stderr.splitlines() if " ERROR: " in line]
        assert len(errors) == 1 and f"pip install 'incremental-docs-crawler[{extra}]'" in errors[0], errors
        assert result.calls == []
