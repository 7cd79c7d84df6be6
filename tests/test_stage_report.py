"""ReportStage: the run's change list (the store's ``changes`` table; the report's
counts and ``changes_sample``), and the ``run_reported`` signal that sends it on once
the report is written."""

from __future__ import annotations

import json

import pytest
from scrapy.utils.misc import build_from_crawler

from crawler import signals as crawler_signals
from crawler.cache import RunState, cache_for
from crawler.cache.run_report import CHANGES_SAMPLE, build_run_report, change_record
from crawler.items import PageItem
from crawler.pipelines.content_hash import ContentHashPipeline
from crawler.stages import PageViews, StageRun
from crawler.stages.removal import RemovalStage
from crawler.stages.report import ReportStage
from tests.helpers import run


@pytest.fixture
def setup(make_crawler):
    crawler = make_crawler()
    return crawler, build_from_crawler(ContentHashPipeline, crawler)


def add(pipeline, url, text="Text."):
    return run(pipeline.process_item(PageItem(url=url, canonical_url=url, title="T", content=f"# T\n\n{text}")))


def close_run(crawler, *, mode="crawl", reasons=()):
    """The stages of a crawl's close, removal and report, as the runner calls them; the
    report written, and what ``run_reported`` sent."""
    cache = cache_for(crawler)
    pages = PageViews(cache.store)
    stage_run = StageRun(cache, pages, mode=mode, complete=not reasons, reasons=list(reasons))
    removal, report_stage = build_from_crawler(RemovalStage, crawler), build_from_crawler(ReportStage, crawler)
    sent = []

    async def run_reported(report, summary):
        sent.append((report, summary))

    crawler.signals.connect(run_reported, signal=crawler_signals.run_reported, weak=False)
    run(removal.run(removal.plan(stage_run)))
    run(report_stage.run(report_stage.plan(stage_run)))
    pages.flush()
    report = build_run_report(cache.run, crawler.stats.get_stats(), spider="docs", finish_reason="finished",
                              complete=True, kind=mode)  # fmt: skip
    run(report_stage.report(report))
    crawler.signals.disconnect(run_reported, signal=crawler_signals.run_reported)
    return cache.store.run_report(cache.run.run_id), sent


def next_crawl(crawler):
    cache = cache_for(crawler)
    cache.run = RunState()
    return cache


def test_the_report_lists_the_new_changed_and_removed_pages_of_the_run_only(setup):
    crawler, pipeline = setup
    for name in ("same", "edited", "gone"):
        add(pipeline, f"https://a.com/{name}")
    first, sent = close_run(crawler)
    assert [(c["url"], c["status"]) for c in first["changes_sample"]] == [
        ("https://a.com/same", "new"),
        ("https://a.com/edited", "new"),
        ("https://a.com/gone", "new"),
    ]
    assert first["changes_total"] == 3 and first["changes_by_status"] == {"new": 3}
    assert list(cache_for(crawler).store.iter_run_changes(first["run_id"])) == first["changes_sample"]
    assert sent[0][0]["changes_sample"] == first["changes_sample"] and sent[0][1].startswith(f"run {first['run_id']}")

    cache = next_crawl(crawler)
    add(pipeline, "https://a.com/same")
    edited = add(pipeline, "https://a.com/edited", "Text, edited.")
    added = add(pipeline, "https://a.com/added")
    gone = cache.store.find_page("https://a.com/gone")
    cache.run.gone.add(gone[0])  # it answered 404
    second, _ = close_run(crawler)
    assert [(c["url"], c["status"]) for c in second["changes_sample"]] == [
        ("https://a.com/edited", "changed"),
        ("https://a.com/added", "new"),
        ("https://a.com/gone", "removed"),
    ]
    assert second["changes_by_status"] == {"new": 1, "changed": 1, "removed": 1}
    assert [c["status"] for c in cache.store.iter_run_changes(second["run_id"], "removed")] == ["removed"]
    change = second["changes_sample"][0]
    assert change == {
        "url": "https://a.com/edited",
        "url_hash": edited.url_hash,
        "status": "changed",
        "content_hash": edited.content_hash,
        "extraction_file": None,  # no extraction stage ran
    }
    assert second["changes_sample"][1]["url_hash"] == added.url_hash


def test_a_page_with_an_extraction_names_its_file_one_whose_extraction_failed_none():
    record = {"url": "u", "status": "changed", "content_hash": "c",
              "extraction": {"file": "extractions/h.json"}}  # fmt: skip
    assert change_record("h", record)["extraction_file"] == "extractions/h.json"
    failed = {**record, "extraction_error": {"at": "t", "error": "boom", "input_key": "k"}}
    empty = {**record, "empty_input": "t"}
    assert [change_record(h, r)["extraction_file"] for h, r in (("h", failed), ("i", empty))] == [None, None]


def test_every_change_is_listed_in_the_store_the_report_keeps_counts_and_a_sample(setup, monkeypatch):
    """More changes than the report's sample and than a batch of the stage's reads and
    writes: the store lists every one, in order; the report stays small."""
    from crawler.stages import report as report_module

    monkeypatch.setattr(report_module, "PAGES_PER_READ", 7)  # several batches
    crawler, pipeline = setup
    for n in range(CHANGES_SAMPLE + 20):
        add(pipeline, f"https://a.com/{n}")
    report, _ = close_run(crawler)
    assert report["changes_total"] == CHANGES_SAMPLE + 20 and len(report["changes_sample"]) == CHANGES_SAMPLE
    assert "changes" not in report and len(json.dumps(report)) < 40_000  # whatever the run's size
    listed = [c["url"] for c in cache_for(crawler).store.iter_run_changes(report["run_id"])]
    assert listed == [f"https://a.com/{n}" for n in range(CHANGES_SAMPLE + 20)]
    assert (
        report["changes_sample"] == list(cache_for(crawler).store.iter_run_changes(report["run_id"]))[:CHANGES_SAMPLE]
    )


def test_scrapy_process_and_a_part_of_a_shared_frontier_run_send_no_change_list(setup):
    from crawler.frontier import PART_OF_RUN

    crawler, pipeline = setup
    add(pipeline, "https://a.com/x")
    report, sent = close_run(crawler, reasons=[PART_OF_RUN])
    assert report["changes_total"] == 1 and sent == []  # the run's processing sends the run's
    next_crawl(crawler)
    report, sent = close_run(crawler, mode="process")
    assert report["changes_total"] == 0 and report["changes_sample"] == [] and sent == []


def test_a_shared_frontier_runs_processing_lists_what_its_crawl_processes_recorded(setup):
    """``scrapy process --run ID``: the pages carry the run ids of the crawl processes
    that recorded them, the report the run's own id."""
    crawler, pipeline = setup
    recorded = [add(pipeline, f"https://a.com/{n}") for n in range(3)]
    cache = next_crawl(crawler)
    cache.run.run_id = "shared-run"
    cache.run.seen.update(dict.fromkeys(item.url_hash for item in recorded))  # what ClosingStages.start_run does
    report, sent = close_run(crawler, mode="run")
    assert [c["url"] for c in report["changes_sample"]] == [f"https://a.com/{n}" for n in range(3)]
    assert len(sent) == 1


def test_the_reports_page_counts_are_the_statuses_of_the_runs_records(setup):
    """``pages_*`` are counted from the records of the pages the run recorded, as the
    stages left them: a page recorded unchanged whose extraction the run paid for is
    changed there (the ledger wrote it so), never by adjusting the crawl's counts."""
    from crawler.cache.records import extraction_ref
    from crawler.incremental import ledger
    from crawler.stages import PageViews

    crawler, pipeline = setup
    pages = [add(pipeline, f"https://a.com/{n}") for n in range(3)]
    close_run(crawler)
    cache = next_crawl(crawler)
    for item in pages:
        add(pipeline, item.url)
    add(pipeline, "https://a.com/new")
    views = PageViews(cache.store)
    view = views.get(pages[0].url_hash)
    extraction = {"input_key": "k", "input_hash": "i", "extractor": {"name": "x", "version": "1"}}
    # an extraction this page had before (a changed extractor): the run paid again
    reference = view.record["extraction"] = extraction_ref(view.url_hash, extraction)
    assert ledger.extracted(view.record, reference, "i", "t", recorded=True) == "changed"
    view.changed()
    views.flush()
    assert crawler.stats.get_value("pages/unchanged") == 3  # (the crawl's own: itself unchanged)
    report, _ = close_run(crawler)
    assert [report[f"pages_{s}"] for s in ("new", "changed", "unchanged")] == [1, 1, 2]
    assert [(c["url"], c["status"]) for c in report["changes_sample"]] == [
        ("https://a.com/0", "changed"),
        ("https://a.com/new", "new"),
    ]


def test_a_change_list_the_store_cannot_take_is_an_error_and_the_report_is_still_written(setup, monkeypatch, caplog):
    from crawler.cache.errors import CacheStorageError

    crawler, pipeline = setup
    add(pipeline, "https://a.com/x")
    store = cache_for(crawler).store

    def fails(*args, **kwargs):
        raise CacheStorageError("Writing the cache file failed (disk I/O error)")

    monkeypatch.setattr(store, "put_run_changes", fails)
    report, sent = close_run(crawler)
    assert report["changes_error"] == "Writing the cache file failed (disk I/O error)"
    assert "changes_total" not in report and len(sent) == 1
    assert "The change list of run" in caplog.text and "was not stored" in caplog.text
