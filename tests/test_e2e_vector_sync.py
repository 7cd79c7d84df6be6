"""End-to-end: real crawls of a changing local site synced into local-mode Qdrant,
counting every text the embedder is given."""

from __future__ import annotations

import pytest

from crawler.cache.records import STATUS_REMOVED, page_text
from crawler.cache.sqlite import SqliteDocStore
from crawler.lib.chunking import chunk_markdown
from crawler.vectors.qdrant import QdrantVectorStore
from tests.convert import html_bytes_to_markdown
from tests.crawl import run_crawl
from tests.embedders import CountingEmbedder, embedded
from tests.reembedding import reembedded_by_content, reembedded_by_position
from tests.site import Raw, docs_site
from tests.vectorpages import paragraphs

TARGET = 300
LONG = "/guide/long.html"


def vector_settings(log, **more):
    return {
        "VECTOR_SYNC_ENABLED": "True",
        "VECTOR_SYNC_CHUNK_SIZE": str(TARGET),
        "EMBEDDER": "tests.embedders.CountingEmbedder",
        "TEST_EMBEDDER_LOG": str(log),
        **more,
    }


def open_store(cache):
    from scrapy.settings import Settings

    return QdrantVectorStore.from_settings(Settings({"EXTRACTED_DOCS_DIR": str(cache)}))


def points_by_url(cache):
    """url -> [(chunk_index, content_hash, id)] of the store, in chunk order."""
    store = open_store(cache)
    try:
        out = {}
        for point_id, payload in store.iter_points():
            out.setdefault(payload["url"], []).append((payload["chunk_index"], payload["content_hash"], point_id))
        return {url: sorted(points) for url, points in out.items()}
    finally:
        store.close()


def hashes(points):
    return [h for _, h, _ in points]


def expected_total(cache):
    """The chunks of every live page, from the cache's cleaned content."""
    docs = SqliteDocStore(cache, readonly=True)
    try:
        total = 0
        for url_hash, record in docs.iter_pages():
            content = docs.get_content(url_hash)
            if record.get("status") != STATUS_REMOVED and content is not None:
                total += len(chunk_markdown(page_text(content, True), TARGET))
        return total
    finally:
        docs.close()


def page_chunks(cache, url):
    """The chunks of a page as the sync made them, from the cache's cleaned content."""
    docs = SqliteDocStore(cache, readonly=True)
    try:
        for url_hash, record in docs.iter_pages():
            if record.get("url") == url:
                return chunk_markdown(page_text(docs.get_content(url_hash), True), TARGET)
        raise AssertionError(f"{url} is not in the cache")
    finally:
        docs.close()


def search(cache, text):
    store = open_store(cache)
    try:
        [query] = CountingEmbedder().embed([text])
        return store.search(query, limit=1)[0][2]
    finally:
        store.close()


def twenty_chunk_paragraphs(site):
    """Paragraphs for the long page so that its markdown makes exactly 20 chunks."""
    for count in range(20, 90):
        paras = paragraphs(9, count)
        page = site.page(LONG, "Long guide", *paras, links=["/guide/"])
        if len(chunk_markdown(html_bytes_to_markdown(site.render(LONG, page)), TARGET)) == 20:
            return paras
    raise AssertionError("no count of paragraphs makes 20 chunks")


@pytest.fixture
def vsite():
    site = docs_site()
    site.pages["/guide/"].links.append(LONG)
    site.start()
    yield site
    site.stop()


def test_vector_sync_across_recrawls(vsite, tmp_path):
    cache, log = tmp_path / "cache", tmp_path / "embedded.log"
    paras = twenty_chunk_paragraphs(vsite)
    url = vsite.url + LONG
    figures = []

    def crawl(**more):
        log.unlink(missing_ok=True)
        result = run_crawl(vsite.url + "/", cache, settings=vector_settings(log, **more))
        assert result.returncode == 0, result.stderr[-3000:]
        return result.report, result.report["vector_sync"], embedded(log)

    def step(name, section, before, after):
        by_content = reembedded_by_content(hashes(before), hashes(after))
        by_position = reembedded_by_position(hashes(before), hashes(after))
        figures.append((name, section["embedding_calls"], section["chunks_deleted"], *by_content, *by_position))

    def edit(new_paras):
        vsite.edit(LONG, *new_paras)
        return new_paras

    # 1. first crawl: every chunk embedded once; the long page has 20 points
    _, vs, texts = crawl()
    points = points_by_url(cache)
    assert len(points[url]) == 20
    assert vs["chunks_new"] == vs["embedding_calls"] == len(texts) == vs["points"] == expected_total(cache)
    figures.append(("first crawl", vs["embedding_calls"], 0, vs["points"], 0, vs["points"], 0))
    first_ids = {p for page in points.values() for _, _, p in page}

    # 2. recrawl unchanged: 0 embedding calls, 0 upserts, 0 deletes
    report, vs, texts = crawl()
    assert (vs["embedding_calls"], vs["chunks_new"], vs["chunks_updated"], vs["chunks_deleted"]) == (0, 0, 0, 0)
    assert (vs["chunks_moved"], vs["pages_synced"], vs["embedding_requests"]) == (0, 0, 0)
    assert vs["pages_unchanged"] == report["pages_unchanged"] == len(points)  # skipped: already synced
    assert texts == [] and vs["embedding_calls_saved"] == vs["points"] == len(first_ids)
    assert {p for page in points_by_url(cache).values() for _, _, p in page} == first_ids
    step("recrawl unchanged", vs, points[url], points_by_url(cache)[url])

    # 3. edit one paragraph: exactly the chunk(s) holding it
    before = points_by_url(cache)[url]
    paras = edit([*paras[:10], paras[10] + " The timeout is now 45 seconds.", *paras[11:]])
    _, vs, texts = crawl()
    after = points_by_url(cache)[url]
    holding = [c for c in page_chunks(cache, url) if "45 seconds" in c.text]
    assert len(holding) == 1  # the edited paragraph sits in one chunk of the page
    assert texts == [holding[0].embed_text.replace("\n", " ")]  # that chunk and nothing else embedded
    assert vs["embedding_calls"] == len(texts) == 1
    assert vs["chunks_deleted"] == 1 and vs["points"] == expected_total(cache)
    assert "The timeout is now 45 seconds." in search(cache, "timeout is now 45 seconds")["text"]
    step("edit one paragraph", vs, before, after)

    # 4. insert a paragraph near the top: at most 2
    before = after
    # a paragraph of the target size or more always ends a chunk: the chunk it lands
    # in splits in two, and every later chunk moves down one position
    inserted = "Proxies: set HTTPS_PROXY before the first run of the crawler. " + " ".join(paragraphs(4, 3))
    assert len(inserted) >= TARGET
    paras = edit([paras[0], inserted, *paras[1:]])
    _, vs, texts = crawl()
    after = points_by_url(cache)[url]
    assert 1 <= vs["embedding_calls"] == len(texts) <= 2
    assert any("HTTPS_PROXY" in t for t in texts)
    assert vs["points"] == expected_total(cache) and len(after) == 21
    assert "HTTPS_PROXY" in search(cache, "Proxies: set HTTPS_PROXY before the first run")["text"]
    assert [i for i, _, _ in after] == list(range(len(after)))  # moved chunks have their new index
    step("insert near the top", vs, before, after)

    # 5. a page that shrank: its surplus points gone
    before = after
    paras = edit(paras[:-8])
    _, vs, texts = crawl()
    after = points_by_url(cache)[url]
    assert vs["embedding_calls"] <= 1 and vs["chunks_deleted"] == len(before) - len(after) + vs["embedding_calls"]
    assert len(after) < len(before) and vs["points"] == expected_total(cache)
    assert search(cache, paras[-1])["text"].endswith(paras[-1])
    step("page shrank", vs, before, after)

    # 6. a removed page: kept after a partial crawl, gone after a complete one
    api = vsite.url + "/api.html"
    api_points = len(points_by_url(cache)[api])
    assert search(cache, "The API has one function")["url"] == api
    vsite.remove("/api.html")  # still linked: a 404
    vsite.raw["/guide/usage.html"] = Raw(b"<h1>down</h1>", status=500)  # the crawl is partial
    report, vs, texts = crawl(RETRY_TIMES="0")
    assert report["complete"] is False and report["pages_removed"] == 1
    assert vs["removed_pages_kept"] == 1 and vs["chunks_deleted"] == 0 and texts == []
    assert len(points_by_url(cache)[api]) == api_points
    figures.append(("removed page, partial crawl", 0, 0, 0, 0, 0, 0))
    del vsite.raw["/guide/usage.html"]
    report, vs, texts = crawl()
    assert report["complete"] is True
    assert api not in points_by_url(cache)
    assert (vs["pages_removed"], vs["chunks_deleted"], vs["embedding_calls"]) == (1, api_points, 0)
    assert search(cache, "The API has one function")["url"] != api  # its text is no longer found
    assert vs["points"] == expected_total(cache)
    figures.append(("removed page, complete crawl", 0, api_points, 0, api_points, 0, api_points))

    # 7. the embedder fails mid-run: nothing deleted; the next run completes
    before = points_by_url(cache)
    paras = edit(
        [*paras[:2], paras[2] + " Early edit.", *paras[3:15], paras[15] + " Late edit FAILS-HERE.", *paras[16:]]
    )
    _, vs, texts = crawl(TEST_EMBEDDER_FAIL="FAILS-HERE", EMBEDDER_BATCH_SIZE="1")
    assert "on purpose" in vs["error"]
    assert texts and all("Early edit." in t for t in texts)  # it failed after embedding a chunk
    assert (vs["chunks_new"], vs["chunks_deleted"], vs["pages_failed"]) == (0, 0, 1)
    assert points_by_url(cache) == before  # nothing written, nothing deleted
    failed_calls = vs["embedding_calls"]
    _, vs, texts = crawl()
    after = points_by_url(cache)[url]
    assert "error" not in vs
    assert vs["embedding_calls"] == reembedded_by_content(hashes(before[url]), hashes(after))[0] == len(texts)
    assert any("FAILS-HERE" in t for t in texts) and any("Early edit." in t for t in texts)
    assert vs["points"] == expected_total(cache)
    assert "Late edit FAILS-HERE." in search(cache, "Late edit FAILS-HERE")["text"]
    figures.append(("embedder fails mid-run", failed_calls, 0, 0, 0, 0, 0))
    step("next run completes", vs, before[url], after)

    print("\nstep | embedded | deleted | content-keyed embeds/deletes | position-keyed embeds/deletes")
    for name, calls, deleted, ce, cd, pe, pd in figures:
        print(f"{name} | {calls} | {deleted} | {ce}/{cd} | {pe}/{pd}")
