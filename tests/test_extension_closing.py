import json
from collections import Counter

import pytest
from scrapy import Spider
from scrapy.utils.misc import build_from_crawler

from crawler import signals as crawler_signals
from crawler.cache import cache_for
from crawler.cache.sqlite import SqliteDocStore
from crawler.extensions.closing import ClosingStages, crawl_scope, incomplete_reasons
from crawler.items import PageItem
from crawler.pipelines.content_hash import ContentHashPipeline
from tests.helpers import next_run, run

STAGES = [
    "crawler.stages.removal.RemovalStage",
    "crawler.stages.boilerplate.BoilerplateStage",
    "crawler.stages.extraction.ExtractionStage",
    "crawler.stages.report.ReportStage",
]


class CountingStore(SqliteDocStore):
    """The default store, counting the calls made to it (``calls``: method -> count)."""

    def __getattribute__(self, name):
        attribute = super().__getattribute__(name)
        if not name.startswith("_") and callable(attribute) and name != "commit":
            super().__getattribute__("__dict__").setdefault("calls", Counter())[name] += 1
        return attribute


class Cleaner:
    """A stage of a test: the footer out of every page's input, before extraction."""

    name = "cleaner"

    def __init__(self):
        self.seen = []

    def plan(self, run):
        return [run.pages.get(url_hash) for url_hash in run.targets]

    async def run(self, views):
        for view in views:
            content = dict(view.content)
            view.set_content({**content, "clean": content["text"].replace("\n\nrepeated footer", "")})
            self.seen.append(view.url_hash)

    def report(self, report):
        report["cleaner"] = len(self.seen)


@pytest.fixture
def setup(make_crawler):
    def factory(**settings):
        crawler = make_crawler({"EXTRACTOR": "tests.extractors.SyncExtractor", "PROCESSING_STAGES": STAGES, **settings})
        pipeline = build_from_crawler(ContentHashPipeline, crawler)
        return crawler, pipeline

    return factory


def add(pipeline, url, text="# T\n\nSome text."):
    return run(pipeline.process_item(PageItem(url=url, canonical_url=url, title="T", content=text)))


def latest(crawler):
    return json.loads((cache_for(crawler).store.directory / "runs" / "latest.json").read_text())


def test_the_stages_run_in_order_and_write_the_report(setup):
    crawler, pipeline = setup(PROCESSING_STAGES=[*STAGES[:2], "tests.test_extension_closing.Cleaner", *STAGES[2:]])
    item = add(pipeline, "https://a.com/1", "# One\n\nrepeated footer")
    closing = build_from_crawler(ClosingStages, crawler)
    assert [stage.name for stage in closing.stages] == ["removal", "boilerplate", "cleaner", "extraction", "report"]

    def finished(cache, report):
        report["extra"] = "added by a handler"

    crawler.signals.connect(finished, signal=crawler_signals.run_report)
    run(closing.spider_closed(Spider("t"), "finished"))
    report = latest(crawler)
    assert (report["pages_new"], report["extractor_calls"], report["extra"]) == (1, 1, "added by a handler")
    assert (report["kind"], report["complete"], report["cleaner"]) == ("crawl", True, 1)
    assert report["extractor"] == {"name": "sync", "version": "1"} and "boilerplate" in report
    extraction = cache_for(crawler).store.read_extraction(item.url_hash)
    assert extraction["data"] == {"length": len("# One")}  # the extractor read the cleaned input
    assert closing.summary.startswith(f"run {report['run_id']} (finished in ")
    assert "): 1 new, 0 changed" in closing.summary


def test_a_stage_left_out_does_not_run(setup):
    crawler, pipeline = setup(PROCESSING_STAGES=[STAGES[0], STAGES[3]])
    add(pipeline, "https://a.com/1")
    closing = build_from_crawler(ClosingStages, crawler)
    run(closing.spider_closed(Spider("t"), "finished"))
    report = latest(crawler)
    assert "extractor" not in report and report["extractor_calls"] == 0 and "boilerplate" not in report
    assert "extraction" not in cache_for(crawler).store.get_page(add(pipeline, "https://a.com/1").url_hash)


def test_a_disabled_stage_is_skipped(setup):
    crawler, _ = setup(BOILERPLATE_ENABLED=False)
    assert [s.name for s in build_from_crawler(ClosingStages, crawler).stages] == ["removal", "extraction", "report"]


def test_what_is_not_a_stage_is_refused(setup):
    crawler, _ = setup(PROCESSING_STAGES=["tests.extractors.SyncExtractor"])
    with pytest.raises(ValueError, match="is not a stage"):
        build_from_crawler(ClosingStages, crawler)


def test_an_incomplete_crawl_removes_nothing_unreached(setup):
    crawler, pipeline = setup()
    add(pipeline, "https://a.com/1")
    unreached = add(pipeline, "https://a.com/2")
    next_run(cache_for(crawler))
    add(pipeline, "https://a.com/1")
    closing = build_from_crawler(ClosingStages, crawler)
    run(closing.spider_closed(Spider("t"), "shutdown"))
    assert cache_for(crawler).store.get_page(unreached.url_hash)["status"] != "removed"
    assert latest(crawler)["complete"] is False


def test_each_page_is_read_once_and_written_once_at_the_close(setup):
    crawler, pipeline = setup(EXTRACTED_DOCS_STORE="tests.test_extension_closing.CountingStore")
    footer = "The same footer on every page here, with a cookie banner and a form."
    for n, word in enumerate(("alpha", "bravo", "charlie", "delta", "echo", "foxtrot")):
        own = f"Its own text on {word}: a paragraph long enough to count as what this page says on its own."
        add(pipeline, f"https://a.com/{n}", f"# Page {n}\n\n{own}\n\n{footer}")
    store = cache_for(crawler).store
    store.calls.clear()
    run(build_from_crawler(ClosingStages, crawler).spider_closed(Spider("t"), "finished"))
    calls = store.calls
    assert calls["get_contents"] == 1 and calls["get_content"] == 0  # read once, in one query
    assert calls["put_content"] == 6  # the clean input written once
    assert calls["get_page"] == 0 and calls["get_pages"] == 2  # the records in one query, then the report's
    assert calls["put_page"] == 6  # extracted: each record written once


def test_the_processing_memory_bounds_what_the_stages_hold_and_a_small_one_changes_no_result(
    setup, make_crawler, tmp_path
):
    """``PROCESSING_MEMORY_MB``: the views' budget; pages past it are read again per
    pass (stat ``stages/content_reread``), and the records and contents written are those
    of a close that holds every page."""
    footer = "The same footer on every page here, with a cookie banner and a form."
    stored, reads = [], []
    for memory in (48, 0.004):  # (0.004 MB: a record and a bit)
        crawler, pipeline = setup(
            PROCESSING_MEMORY_MB=memory,
            EXTRACTED_DOCS_STORE="tests.test_extension_closing.CountingStore",
            EXTRACTED_DOCS_DIR=str(tmp_path / str(memory)),
        )
        for n in range(12):
            add(
                pipeline,
                f"https://a.com/{n}",
                f"# Page {n}\n\nIts own text on page {n}, long enough to be its own.\n\n{footer}",
            )
        extension = build_from_crawler(ClosingStages, crawler)
        assert extension.budget == int(memory * 1024 * 1024)
        run(extension.spider_closed(Spider("t"), "finished"))
        store = cache_for(crawler).store
        keys = sorted(store.iter_page_keys())
        stored.append(
            [
                (
                    store.get_content(k),
                    {
                        f: v
                        for f, v in store.get_page(k).items()
                        if f not in ("first_seen", "last_seen", "last_changed", "last_extracted", "run_id", "history")
                    },
                )
                for k in keys
            ]
        )
        assert crawler.stats.get_value("extraction/calls") == 12
        reads.append(store.calls["get_contents"])
    assert stored[0] == stored[1]
    assert reads[0] < reads[1]  # held once at the default, read again a batch at a time in 4 kB
    with pytest.raises(ValueError, match="PROCESSING_MEMORY_MB must be more than 0"):
        build_from_crawler(ClosingStages, make_crawler({"PROCESSING_MEMORY_MB": 0}))


def test_a_misspelt_setting_is_named_with_the_closest_one(make_crawler, caplog):
    crawler = make_crawler(
        {"EXTRACTOR_MAXAGE": 3, "LLM_MODLE": "x", "DOWNLOAD_DELAY": 1, "PLAYWRIGHT_BROWSER_TYPE": "x"}
    )
    with caplog.at_level("WARNING", logger="crawler.extensions.closing"):
        build_from_crawler(ClosingStages, crawler)
    assert [r.getMessage() for r in caplog.records] == [
        "Unknown setting EXTRACTOR_MAXAGE, ignored (did you mean EXTRACTOR_MAX_AGE?)",
        "Unknown setting LLM_MODLE, ignored (did you mean LLM_MODEL?)",
    ]


def test_a_revisit_setting_without_the_schedule_is_named_as_ignored(make_crawler, caplog, tmp_path):
    """``-s REVISIT_MIN_INTERVAL=abc`` without ``REVISIT_ENABLED`` used to pass in silence."""
    crawler = make_crawler({"REVISIT_MIN_INTERVAL": "abc", "REVISIT_SAMPLE": 0.1})
    with caplog.at_level("WARNING", logger="crawler.extensions.closing"):
        build_from_crawler(ClosingStages, crawler)
    assert [r.getMessage() for r in caplog.records] == [
        "REVISIT_MIN_INTERVAL is set but REVISIT_ENABLED is off: ignored",
        "REVISIT_SAMPLE is set but REVISIT_ENABLED is off: ignored",
    ]
    caplog.clear()
    with caplog.at_level("WARNING", logger="crawler.extensions.closing"):  # -s REVISIT_ENABLE=True: one warning
        build_from_crawler(
            ClosingStages, make_crawler({"REVISIT_ENABLE": True, "EXTRACTED_DOCS_DIR": str(tmp_path / "t")})
        )
    assert [r.getMessage() for r in caplog.records] == [
        "Unknown setting REVISIT_ENABLE, ignored (did you mean REVISIT_ENABLED?)"
    ]
    caplog.clear()
    with caplog.at_level("WARNING", logger="crawler.extensions.closing"):
        on = {"REVISIT_ENABLED": True, "REVISIT_MIN_INTERVAL": 2, "EXTRACTED_DOCS_DIR": str(tmp_path / "on")}
        build_from_crawler(ClosingStages, make_crawler(on))
    assert caplog.records == []


def test_incomplete_reasons():
    assert incomplete_reasons("finished", {"spider_exceptions/ValueError": 1}, []) == [
        "spider_exceptions/ValueError: 1"
    ]
    assert incomplete_reasons("finished", {"httperror/response_ignored_status_count/503": 2}, [])
    assert incomplete_reasons("finished", {"httperror/response_ignored_status_count/404": 2}, []) == []


def test_the_scope_hook_keeps_pages_out_of_removal():
    class Current(Spider):
        name = "current"

        def in_crawl_scope(self, url):
            return "/blog/" not in url

    assert crawl_scope(Current())("/blog/a") is False
    assert crawl_scope(Spider(name="plain")) is None
