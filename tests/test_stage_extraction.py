import asyncio
import json

import pytest
from scrapy.utils.misc import build_from_crawler

from crawler.cache import cache_for
from crawler.items import PageItem
from crawler.pipelines.content_hash import ContentHashPipeline
from crawler.stages import PageViews, StageRun
from crawler.stages.extraction import ExtractionStage
from crawler.stages.jobs import input_key
from tests.helpers import next_run, run


class Counting:
    name = "counting"
    version = "1"

    def __init__(self):
        self.calls = []

    async def extract(self, url, content):
        self.calls.append(url)
        if "fail" in url:
            raise RuntimeError("boom")
        if "slow" in url:
            await asyncio.sleep(5)
        if "notdict" in url:
            return ["not", "a", "dict"]
        return {"chars": len(content)}


@pytest.fixture
def setup(make_crawler):
    def factory(**settings):
        crawler = make_crawler({"EXTRACTOR": "tests.extractors.SyncExtractor", **settings})
        stage = build_from_crawler(ExtractionStage, crawler)
        stage.extractor = Counting()
        stage.is_async = True
        pipeline = build_from_crawler(ContentHashPipeline, crawler)
        return crawler, stage, pipeline

    return factory


def add(pipeline, url, text="# T\n\nSome text."):
    return run(pipeline.process_item(PageItem(url=url, canonical_url=url, title="T", content=text)))


def extract_all(stage):
    """The extraction stage alone on this crawl's pages, as the closing stages run it:
    plan, run, the records written at the end."""
    cache = stage.cache
    pages = PageViews(stage.store, use_clean=stage.use_clean)
    try:
        run(stage.run(stage.plan(StageRun(cache, pages, interruption=stage.interruption))))
    finally:
        cache.wrote(pages.flush())
        cache.commit()


def new_run(crawler):
    next_run(cache_for(crawler))


def test_calls_only_when_input_changes(setup):
    crawler, stage, pipeline = setup()
    add(pipeline, "https://a.com/1")
    add(pipeline, "https://a.com/2", "# Two\n\nOther.")
    extract_all(stage)
    assert sorted(stage.extractor.calls) == ["https://a.com/1", "https://a.com/2"]
    extraction = cache_for(crawler).store.read_extraction(add(pipeline, "https://a.com/1").url_hash)
    assert extraction["data"] == {"chars": len("# T\n\nSome text.")}
    assert extraction["extractor"] == {"name": "counting", "version": "1"}

    new_run(crawler)
    stage.extractor.calls.clear()
    add(pipeline, "https://a.com/1")
    add(pipeline, "https://a.com/2", "# Two\n\nChanged.")
    extract_all(stage)
    assert stage.extractor.calls == ["https://a.com/2"]
    assert crawler.stats.get_value("extraction/cache_hits") == 1


def test_new_version_reextracts(setup):
    crawler, stage, pipeline = setup()
    add(pipeline, "https://a.com/1")
    extract_all(stage)
    new_run(crawler)
    add(pipeline, "https://a.com/1")
    stage.extractor.version = "2"
    extract_all(stage)
    assert stage.extractor.calls == ["https://a.com/1"] * 2


def test_force_and_forced_pages(setup):
    crawler, stage, pipeline = setup()
    item = add(pipeline, "https://a.com/1")
    add(pipeline, "https://a.com/2")
    extract_all(stage)
    new_run(crawler)
    add(pipeline, "https://a.com/1")
    add(pipeline, "https://a.com/2")
    cache_for(crawler).run.forced.add(item.url_hash)  # force_extraction on its request
    stage.extractor.calls.clear()
    extract_all(stage)
    assert stage.extractor.calls == ["https://a.com/1"]
    stage.force = True
    stage.extractor.calls.clear()
    extract_all(stage)
    assert sorted(stage.extractor.calls) == ["https://a.com/1", "https://a.com/2"]


def test_failures_are_recorded_and_retried(setup):
    crawler, stage, pipeline = setup(EXTRACTOR_TIMEOUT=0.2)
    for url in ("https://a.com/fail", "https://a.com/slow", "https://a.com/notdict", "https://a.com/ok"):
        add(pipeline, url, f"# {url}")
    extract_all(stage)
    assert crawler.stats.get_value("extraction/errors") == 3
    store = cache_for(crawler).store
    errors = {r["url"]: r["extraction_error"]["error"] for _, r in store.iter_pages() if "extraction_error" in r}
    assert errors["https://a.com/fail"] == "RuntimeError: boom"
    assert errors["https://a.com/slow"] == "TimeoutError"
    assert "returned list, expected dict" in errors["https://a.com/notdict"]
    new_run(crawler)
    for url in ("https://a.com/fail", "https://a.com/slow", "https://a.com/notdict", "https://a.com/ok"):
        add(pipeline, url, f"# {url}")
    stage.extractor.calls.clear()
    extract_all(stage)
    assert sorted(stage.extractor.calls) == ["https://a.com/fail", "https://a.com/notdict", "https://a.com/slow"]


def test_identical_input_elsewhere_is_reused(setup):
    crawler, stage, pipeline = setup()
    add(pipeline, "https://a.com/old", "# Same\n\nText.")
    extract_all(stage)
    new_run(crawler)
    moved = add(pipeline, "https://a.com/new", "# Same\n\nText.")
    extract_all(stage)
    assert stage.extractor.calls == ["https://a.com/old"]
    data = cache_for(crawler).store.read_extraction(moved.url_hash)
    assert (data["url"], data["reused_from"]) == ("https://a.com/new", "https://a.com/old")
    assert crawler.stats.get_value("extraction/reused") == 1


def test_extraction_file_written_before_the_index_is_recovered(setup):
    crawler, stage, pipeline = setup()
    item = add(pipeline, "https://a.com/1")
    extract_all(stage)
    store = cache_for(crawler).store
    record = store.get_page(item.url_hash)
    del record["extraction"]  # as if killed between the file write and the index write
    store.put_page(item.url_hash, record)
    new_run(crawler)
    add(pipeline, "https://a.com/1")
    stage.extractor.calls.clear()
    extract_all(stage)
    assert stage.extractor.calls == []
    assert crawler.stats.get_value("extraction/recovered") == 1
    assert store.get_page(item.url_hash)["extraction"]["input_key"]


def test_empty_input_is_not_sent_but_counted_listed_and_marked(setup, monkeypatch):
    crawler, stage, pipeline = setup()
    monkeypatch.setattr("crawler.stages.extraction.EMPTY_PAGES_LISTED", 2)
    empty = [add(pipeline, f"https://a.com/empty{n}", "   ") for n in range(3)]
    add(pipeline, "https://a.com/full")
    extract_all(stage)
    assert stage.extractor.calls == ["https://a.com/full"]
    assert crawler.stats.get_value("extraction/empty_input") == 3  # all counted...
    assert stage.empty_pages == ["https://a.com/empty0", "https://a.com/empty1"]  # ...the first listed
    store = cache_for(crawler).store
    assert all(store.get_page(item.url_hash).get("empty_input") for item in empty)
    assert "empty_input" not in store.get_page(pipeline.identity.url_hash("https://a.com/full"))
    # the page has text again: no longer marked, and sent
    new_run(crawler)
    add(pipeline, "https://a.com/empty0", "# Back\n\nWith text.")
    stage.extractor.calls.clear()
    extract_all(stage)
    assert stage.extractor.calls == ["https://a.com/empty0"]
    assert "empty_input" not in store.get_page(empty[0].url_hash)


def test_a_page_that_is_all_boilerplate_is_an_empty_input(setup, caplog):
    crawler, stage, pipeline = setup()
    item = add(pipeline, "https://a.com/chrome", "# Menu\n\nCookie banner.")
    store = cache_for(crawler).store
    content = store.get_content(item.url_hash)
    store.put_content(item.url_hash, {**content, "clean": ""})  # the analysis found only boilerplate
    with caplog.at_level("DEBUG"):
        extract_all(stage)
    assert stage.extractor.calls == [] and stage.empty_pages == ["https://a.com/chrome"]
    (line,) = [r for r in caplog.records if r.getMessage().startswith("Nothing to extract from")]
    assert line.getMessage() == (
        "Nothing to extract from https://a.com/chrome (all of its text is the site's boilerplate): not sent"
    )
    assert line.levelname == "DEBUG"  # the summary line counts them: no INFO line per page


def test_bad_extractor_settings(make_crawler):
    with pytest.raises(ValueError, match="cannot be imported"):
        build_from_crawler(ExtractionStage, make_crawler({"EXTRACTOR": "no.such.Extractor"}, cache=False))
    with pytest.raises(TypeError, match="version"):
        stage = make_crawler({"EXTRACTOR": "tests.extractors.NoVersionExtractor"}, cache=False)
        build_from_crawler(ExtractionStage, stage)
    with pytest.raises(ValueError, match="EXTRACTOR_CONCURRENCY"):
        build_from_crawler(ExtractionStage, make_crawler({"EXTRACTOR_CONCURRENCY": 0}, cache=False))


def test_sync_extractor_runs_in_a_thread(make_crawler):
    crawler = make_crawler({"EXTRACTOR": "tests.extractors.SyncExtractor"})
    stage = build_from_crawler(ExtractionStage, crawler)
    assert stage.is_async is False
    assert run(stage._call("https://a.com/", "abc")) == {"length": 3}


def test_input_key():
    assert input_key("a", "1", "h") != input_key("b", "1", "h")


def test_expiry_is_spread_over_pages():
    from crawler.stages.jobs import expiry_days

    days = sorted(expiry_days(f"{n:08x}" + "0" * 32, 30) for n in range(0, 0xFFFFFFFF, 0x0FFFFFFF))
    assert days[0] == 22.5 and days[-1] < 37.5 and len(set(days)) == len(days)


def test_expired_extraction_is_called_again(setup):
    crawler, stage, pipeline = setup(EXTRACTOR_MAX_AGE=10)
    stage.max_age_days = 10
    item = add(pipeline, "https://a.com/1")
    extract_all(stage)
    store = cache_for(crawler).store
    record = store.get_page(item.url_hash)
    record["last_extracted"] = "2000-01-01T00:00:00Z"
    store.put_page(item.url_hash, record)
    new_run(crawler)
    add(pipeline, "https://a.com/1")
    extract_all(stage)
    assert stage.extractor.calls == ["https://a.com/1"] * 2
    assert crawler.stats.get_value("extraction/expired") == 1


def test_non_blocking_extractor_runs_inline(make_crawler):
    import threading

    crawler = make_crawler({"EXTRACTOR": "crawler.extractors.outline.OutlineExtractor"})
    stage = build_from_crawler(ExtractionStage, crawler)
    assert stage.inline
    seen = []
    stage.extractor.extract = lambda url, content: seen.append(threading.current_thread()) or {"ok": 1}
    assert run(stage._call("https://a.com/", "abc")) == {"ok": 1}
    assert seen == [threading.main_thread()]


class Paid(Counting):
    """An extractor with a token estimate (4 tokens of overhead plus one per character)."""

    def estimate_tokens(self, url, content):
        return 4 + len(content)


def paid_stage(setup, **settings):
    crawler, stage, pipeline = setup(**settings)
    stage.extractor = Paid()
    stage.estimate = stage.extractor.estimate_tokens
    return crawler, stage, pipeline


def clean(crawler, footer):
    """What the boilerplate analysis does: the input without ``footer``."""
    store = cache_for(crawler).store
    for url_hash in cache_for(crawler).run.seen:
        content = store.get_content(url_hash)
        content["clean"] = content["text"].replace(footer, "")
        store.put_content(url_hash, content)


def test_dry_run_counts_pages_and_tokens_and_calls_nothing(setup):
    crawler, stage, pipeline = paid_stage(setup)
    stage.dry_run = True
    for n in (1, 2):
        add(pipeline, f"https://a.com/{n}", f"# T{n}\n\nText.")  # 11 characters
    extract_all(stage)
    assert stage.extractor.calls == []
    assert stage.dry_run_result == {"pages": 2, "tokens": 2 * (4 + 11)}
    assert crawler.stats.get_value("extraction/dry_run_pages") == 2
    assert crawler.stats.get_value("extraction/calls") is None
    store = cache_for(crawler).store
    assert all("extraction" not in record for _, record in store.iter_pages())
    stage.dry_run = False  # the real run extracts what the dry run counted
    extract_all(stage)
    assert sorted(stage.extractor.calls) == ["https://a.com/1", "https://a.com/2"]


def test_tokens_saved_by_skipping_and_by_boilerplate(setup):
    crawler, stage, pipeline = paid_stage(setup)
    footer = "\n\nCookie banner and footer."  # 27 characters
    add(pipeline, "https://a.com/1", "# One" + footer)
    add(pipeline, "https://a.com/2", "# Two" + footer)
    clean(crawler, footer)
    extract_all(stage)
    assert crawler.stats.get_value("extraction/tokens_estimate_saved_boilerplate") == 2 * 27
    new_run(crawler)
    add(pipeline, "https://a.com/1", "# One" + footer)
    add(pipeline, "https://a.com/2", "# Two" + footer)
    clean(crawler, footer)
    extract_all(stage)
    assert len(stage.extractor.calls) == 2  # none on the second run
    assert crawler.stats.get_value("extraction/tokens_estimate_saved_unchanged") == 2 * (4 + 5)
    report = {}
    stage.add_token_figures(report)
    assert report["tokens"] == {"saved_unchanged_estimate": 18, "saved_boilerplate_estimate": 54}


def test_unavailable_extractor_stops_the_phase_and_leaves_pages_for_the_next_run(setup):
    from crawler.extractors import ExtractorUnavailable

    crawler, stage, pipeline = setup(EXTRACTOR_CONCURRENCY=1)

    class Revoked(Counting):
        async def extract(self, url, content):
            self.calls.append(url)
            raise ExtractorUnavailable("HTTP 401: Incorrect API key provided.")

    stage.extractor = Revoked()
    for n in range(5):
        add(pipeline, f"https://a.com/{n}", f"# Page {n}")
    extract_all(stage)
    assert len(stage.extractor.calls) == 1  # not one call per page
    assert stage.stopped == "HTTP 401: Incorrect API key provided."
    assert crawler.stats.get_value("extraction/errors") == 1
    store = cache_for(crawler).store
    assert not any("extraction_error" in r or "extraction" in r for _, r in store.iter_pages())
    stage.extractor, stage.stopped = Counting(), None
    extract_all(stage)
    assert len(stage.extractor.calls) == 5


def test_own_timeout_extractors_are_not_cut_by_the_stage(setup):
    _, stage, _ = setup(EXTRACTOR_TIMEOUT=0.1)

    class Patient(Counting):
        own_timeout = True

        async def extract(self, url, content):
            await asyncio.sleep(0.3)  # retries and rate-limit waits take longer than one attempt
            return {"ok": True}

    stage.extractor = Patient()
    assert run(stage._call("https://a.com/", "x")) == {"ok": True}


def test_progress_lines_during_the_phase(setup, caplog):
    _, stage, pipeline = setup(EXTRACTOR_CONCURRENCY=2)
    stage.progress_interval = 0.05

    class Slow(Counting):
        async def extract(self, url, content):
            await asyncio.sleep(0.06)
            return {}

        def progress_note(self):
            return "42 tokens sent"

    stage.extractor = Slow()
    for n in range(4):
        add(pipeline, f"https://a.com/{n}", f"# Page {n}")
    with caplog.at_level("INFO", logger="crawler.stages.extraction"):
        extract_all(stage)
    lines = [m for m in caplog.messages if m.startswith("Extraction: ")]
    assert lines and all(" of 4" not in m and "/4 pages (" in m and m.endswith("42 tokens sent") for m in lines)


@pytest.mark.parametrize("concurrency", [1, 3])
def test_identical_input_in_one_run_is_extracted_once(setup, concurrency):
    crawler, stage, pipeline = setup(EXTRACTOR_CONCURRENCY=concurrency)

    class Slowish(Counting):
        async def extract(self, url, content):
            self.calls.append(url)
            await asyncio.sleep(0.05)  # the mirrors are planned while this runs
            return {"chars": len(content)}

    stage.extractor = Slowish()
    for path in ("latest/a", "stable/a", "v2/a"):
        add(pipeline, f"https://a.com/{path}", "# Same page\n\nMirrored under three versions.")
    extract_all(stage)
    assert len(stage.extractor.calls) == 1
    assert crawler.stats.get_value("extraction/reused") == 2


def test_inline_extractor_stops_when_unavailable(make_crawler):
    from crawler.extractors import ExtractorUnavailable

    crawler = make_crawler({"EXTRACTOR": "crawler.extractors.outline.OutlineExtractor"})
    stage = build_from_crawler(ExtractionStage, crawler)
    pipeline = build_from_crawler(ContentHashPipeline, crawler)
    calls = []

    def refuse(url, content):
        calls.append(url)
        raise ExtractorUnavailable("licence expired")

    stage.extractor.extract = refuse
    for n in range(4):
        add(pipeline, f"https://a.com/{n}", f"# Page {n}")
    extract_all(stage)
    assert len(calls) == 1 and stage.stopped == "licence expired"


def test_an_extractor_missing_a_version_or_its_method_is_refused():
    from crawler.extractors import check_extractor

    class NoVersion:
        name = "x"

        def extract(self, url, content):
            return {}

    class NoMethod:
        name, version = "x", "1"

    with pytest.raises(TypeError, match="Extractor NoVersion needs a non-empty string attribute 'version', got None"):
        check_extractor(NoVersion())
    with pytest.raises(TypeError, match=r"Extractor NoMethod needs a method extract\(self, url, content\) -> dict"):
        check_extractor(NoMethod())


def test_an_answer_kept_in_the_spool_is_adopted_over_the_cached_one_without_a_call(setup):
    """A run that could not write an answer kept it (pending-extractions/): the next run
    writes it to the store and calls nothing, even where the record points to an older
    extraction of the same input (a forced call whose answer the store refused)."""
    crawler, stage, pipeline = setup()
    url_hash = add(pipeline, "https://a.com/1").url_hash
    extract_all(stage)
    cached = stage.store.read_extraction(url_hash)
    stage.spool.keep(url_hash, {**cached, "data": {"chars": 999}})
    new_run(crawler)
    stage.extractor.calls.clear()
    add(pipeline, "https://a.com/1")
    extract_all(stage)
    assert stage.extractor.calls == []
    assert stage.store.read_extraction(url_hash)["data"] == {"chars": 999}
    assert crawler.stats.get_value("extraction/recovered_pending") == 1
    assert stage.spool.load() == {}


def test_the_record_s_extraction_key_is_trusted_and_a_lost_file_is_for_verify(setup, monkeypatch):
    crawler, stage, pipeline = setup()
    url_hash = add(pipeline, "https://a.com/1").url_hash
    extract_all(stage)
    store = cache_for(crawler).store
    store.extraction_path(url_hash).unlink()  # lost
    opened = []
    monkeypatch.setattr(store, "read_extraction", lambda h: opened.append(h))
    new_run(crawler)
    stage.extractor.calls.clear()
    add(pipeline, "https://a.com/1")
    extract_all(stage)
    assert (stage.extractor.calls, opened) == ([], [])  # the record says it was extracted: no file opened
    assert crawler.stats.get_value("extraction/cache_hits") == 1


def test_a_cached_page_is_planned_from_its_record_and_stored_hash_without_its_content(setup, monkeypatch):
    """The plan of a recrawl reads the content of the pages whose input changed, and
    of those whose stored content does not say its hash (an older cache's): the others
    are cache hits by their record and the hash the store keeps (issue 40)."""
    crawler, stage, pipeline = setup()
    pages = {n: add(pipeline, f"https://a.com/{n}", f"# {n}\n\nText {n}.").url_hash for n in range(5)}
    extract_all(stage)
    store = cache_for(crawler).store
    read = []
    get_contents = store.get_contents
    monkeypatch.setattr(store, "get_contents", lambda keys: read.extend(keys := list(keys)) or get_contents(keys))

    new_run(crawler)
    stage.extractor.calls.clear()
    for n in range(5):
        add(pipeline, f"https://a.com/{n}", f"# {n}\n\nText {n}." if n != 1 else "# 1\n\nChanged.")
    old = store.get_content(pages[2])
    store._put_part(pages[2], "content", json.dumps(old))  # stored as before its hashes were kept
    store.commit()
    hits = crawler.stats.get_value("extraction/cache_hits", 0)
    extract_all(stage)
    assert stage.extractor.calls == ["https://a.com/1"]
    assert crawler.stats.get_value("extraction/cache_hits") - hits == 4
    assert set(read) == {pages[1], pages[2]}  # the changed page (and its call), the one without hashes
    assert store.get_input_hashes([pages[2]], use_clean=True)[pages[2]] is not None  # stored again, with them
    assert store.get_content(pages[2]) == old

    new_run(crawler)
    read.clear()
    stage.extractor.calls.clear()
    for n in range(5):
        add(pipeline, f"https://a.com/{n}", f"# {n}\n\nText {n}." if n != 1 else "# 1\n\nChanged.")
    extract_all(stage)
    assert read == [] and stage.extractor.calls == []  # every page a cache hit by its record and hash


def test_a_paid_extractor_s_unchanged_pages_count_their_saved_tokens_from_the_record(setup, monkeypatch):
    """An extractor with a token estimate: the estimate is kept with the extraction, so
    a recrawl counts what its unchanged pages save without reading their text; a record
    kept before it (an older cache's) is read once and given it."""
    crawler, stage, pipeline = paid_stage(setup)
    texts = {n: f"# Page {n}" for n in range(4)}
    pages = {n: add(pipeline, f"https://a.com/{n}", text).url_hash for n, text in texts.items()}
    extract_all(stage)
    store = cache_for(crawler).store
    assert [store.get_page(pages[n])["extraction"]["tokens_estimate"] for n in range(4)] == [12] * 4
    record = store.get_page(pages[0])
    del record["extraction"]["tokens_estimate"]  # as a record of an older version
    store.put_page(pages[0], record)
    store.commit()
    read = []
    get_contents = store.get_contents
    monkeypatch.setattr(store, "get_contents", lambda keys: read.extend(keys := list(keys)) or get_contents(keys))
    for run_number in range(2):
        new_run(crawler)
        saved = crawler.stats.get_value("extraction/tokens_estimate_saved_unchanged", 0)
        for n, text in texts.items():
            add(pipeline, f"https://a.com/{n}", text)
        extract_all(stage)
        assert crawler.stats.get_value("extraction/tokens_estimate_saved_unchanged") - saved == 4 * 12
        assert read == ([pages[0]] if run_number == 0 else [])  # the older record once, then none
        read.clear()
    assert len(stage.extractor.calls) == 4  # the first run's only
    assert store.get_page(pages[0])["extraction"]["tokens_estimate"] == 12
