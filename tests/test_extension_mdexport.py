"""MarkdownExport: the folder MARKDOWN_EXPORT_DIR kept in step with the cache once each
run is reported (the ``run_reported`` signal), its changes' files only."""

from __future__ import annotations

import logging
import os

import pytest
from scrapy.exceptions import NotConfigured
from scrapy.utils.misc import build_from_crawler

from crawler.cache import RunState, cache_for
from crawler.cache.run_report import build_run_report
from crawler.extensions.mdexport import MarkdownExport
from crawler.items import PageItem
from crawler.lib.mdfiles import index_entries
from crawler.mdfolder import MarkdownFolder
from crawler.pipelines.content_hash import ContentHashPipeline
from crawler.stages import PageViews, StageRun
from crawler.stages.removal import RemovalStage
from crawler.stages.report import ReportStage
from tests.helpers import run

SITE = "https://docs.example.com"


def test_off_without_a_directory(make_crawler):
    with pytest.raises(NotConfigured):
        MarkdownExport.from_crawler(make_crawler(cache=False))


def test_a_directory_that_cannot_be_the_export_s_stops_the_crawl_at_its_start(make_crawler, tmp_path):
    a_file = tmp_path / "a-file"
    a_file.write_text("x")
    with pytest.raises(ValueError, match=f"{a_file} is not a directory"):
        MarkdownExport.from_crawler(make_crawler({"MARKDOWN_EXPORT_DIR": str(a_file / "md")}, cache=False))
    assert a_file.read_text() == "x"


@pytest.fixture
def crawl(make_crawler, tmp_path):
    """``(crawler, crawl)``: ``crawl({path: text})`` records those pages as a
    complete crawl does, then runs its removal and report stages (the report is reported)."""
    crawler = make_crawler({"MARKDOWN_EXPORT_DIR": str(tmp_path / "md")})
    extension = build_from_crawler(MarkdownExport, crawler)  # kept below: signals hold weak references
    pipeline = build_from_crawler(ContentHashPipeline, crawler)

    def crawl_pages(pages):
        cache = cache_for(crawler)
        cache.run = RunState()
        for path, text in pages.items():
            url = SITE + path
            run(pipeline.process_item(PageItem(url=url, canonical_url=url, title=path, content=text)))
        views = PageViews(cache.store)
        stage_run = StageRun(cache, views, mode="crawl", complete=True, reasons=[])
        removal, report_stage = build_from_crawler(RemovalStage, crawler), build_from_crawler(ReportStage, crawler)
        run(removal.run(removal.plan(stage_run)))
        run(report_stage.run(report_stage.plan(stage_run)))
        views.flush()
        stats = crawler.stats.get_stats()
        report = build_run_report(cache.run, stats, spider="docs", finish_reason="finished", complete=True)
        run(report_stage.report(report))  # the run report written, then sent: run_reported
        return report

    yield crawler, crawl_pages
    del extension


def files(directory):
    return {
        path.relative_to(directory).as_posix(): (path.read_bytes(), os.stat(path).st_ino, os.stat(path).st_mtime_ns)
        for path in sorted(directory.rglob("*.md"))
    }


def test_each_run_writes_its_changed_pages_deletes_its_removed_ones_and_leaves_the_rest(crawl, tmp_path):
    crawler, crawl_pages = crawl
    out = tmp_path / "md"
    crawl_pages({"/": "# Home", "/a.html": "# A", "/b/": "# B"})
    first = files(out)
    assert sorted(first) == ["docs.example.com/a.md", "docs.example.com/b/index.md", "docs.example.com/index.md",
                             "index.md"]  # fmt: skip
    assert first["docs.example.com/a.md"][0].endswith(b"\n---\n# A\n")
    assert crawler.stats.get_value("mdexport/files_written") == 3

    report = crawl_pages({"/": "# Home", "/a.html": "# A, edited"})  # /b/ is no longer reached
    assert {c["url"]: c["status"] for c in report["changes_sample"]} == {
        SITE + "/a.html": "changed",
        SITE + "/b/": "removed",
    }
    second = files(out)
    assert second["docs.example.com/index.md"] == first["docs.example.com/index.md"]  # untouched: same inode, mtime
    assert second["docs.example.com/a.md"][0].endswith(b"\n---\n# A, edited\n")
    assert "docs.example.com/b/index.md" not in second and not (out / "docs.example.com" / "b").exists()
    assert sorted(index_entries(second["index.md"][0].decode())) == [
        "docs.example.com/a.md",
        "docs.example.com/index.md",
    ]
    assert (crawler.stats.get_value("mdexport/files_written"), crawler.stats.get_value("mdexport/files_removed")) == (
        4,
        1,
    )
    whole = tmp_path / "whole"
    MarkdownFolder(whole).export_all(cache_for(crawler).store)
    assert {p: f[0] for p, f in files(whole).items()} == {p: f[0] for p, f in second.items()}


def test_a_failed_write_is_an_error_and_a_stat_the_run_stays_reported(crawl, tmp_path, caplog):
    crawler, crawl_pages = crawl
    out = tmp_path / "md"
    out.write_text("in the way")  # after the crawl started: the export's directory is a file
    with caplog.at_level(logging.ERROR):
        report = crawl_pages({"/": "# Home"})
    assert crawler.stats.get_value("mdexport/failed") == 1
    assert f"The markdown export in {out} was not brought in step with run {report['run_id']}" in caplog.text
    assert cache_for(crawler).store.run_report(report["run_id"]) is not None
    assert out.read_text() == "in the way"
