"""ChangeFeeds: a run's change list through Scrapy's feed exports (``CHANGES_FEEDS``)."""

from __future__ import annotations

import csv
import json
import logging

import pytest
from scrapy import Spider
from scrapy.exceptions import NotConfigured

from crawler import signals as crawler_signals
from crawler.cache import cache_for
from crawler.extensions.changefeeds import ChangeFeeds
from tests.helpers import run


@pytest.fixture
def make_crawler(make_crawler, tmp_path):
    """Crawlers with a cache each (the change list is read from the store), in a
    directory of its own (a test builds several crawlers)."""
    made = iter(range(100))
    return lambda settings=None, spidercls=None: make_crawler(
        {"EXTRACTED_DOCS_DIR": str(tmp_path / f"cache{next(made)}"), **(settings or {})}, spidercls
    )


CHANGES = [
    {"url": "https://a.com/x", "url_hash": "h1", "status": "changed", "content_hash": "c1",
     "extraction_file": "extractions/h1.json"},
    {"url": "https://a.com/y", "url_hash": "h2", "status": "removed", "content_hash": "c2", "extraction_file": None},
]  # fmt: skip


class NamedSpider(Spider):
    name = "named"


def feeds_of(make_crawler, feeds, **settings):
    crawler = make_crawler({"CHANGES_FEEDS": feeds, **settings}, NamedSpider)
    crawler.spider = NamedSpider()
    return crawler, ChangeFeeds.from_crawler(crawler)


def send(crawler, run_id="r1", changes=CHANGES):
    """The run ``run_id`` reported, its ``changes`` in the store as the report stage writes them."""
    cache_for(crawler).store.put_run_changes(run_id, changes)
    run(crawler.signals.send_catch_log_async(
        signal=crawler_signals.run_reported, report={"run_id": run_id, "changes_total": len(changes)}, summary="s"
    ))  # fmt: skip


def test_off_without_feeds(make_crawler):
    with pytest.raises(NotConfigured):
        ChangeFeeds.from_crawler(make_crawler())


def test_each_run_is_one_feed_per_uri_with_scrapys_formats_and_uri_parameters(make_crawler, tmp_path):
    feeds = {
        str(tmp_path / "%(name)s" / "%(run_id)s.jsonl"): {"format": "jsonlines"},
        f"file://{tmp_path}/all-%(run_id)s.csv": {"format": "csv"},
    }
    crawler, _ = feeds_of(make_crawler, feeds)
    send(crawler, "r1")
    send(crawler, "r2", CHANGES[:1])
    lines = [json.loads(line) for line in (tmp_path / "named" / "r1.jsonl").read_text().splitlines()]
    assert lines == [{"run_id": "r1", **change} for change in CHANGES]
    assert len((tmp_path / "named" / "r2.jsonl").read_text().splitlines()) == 1
    with open(tmp_path / "all-r1.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert [row["status"] for row in rows] == ["changed", "removed"]
    assert list(rows[0]) == ["run_id", "url", "url_hash", "status", "content_hash", "extraction_file"]
    assert crawler.stats.get_value("changefeeds/records") == 3  # the records, whatever the number of feeds


def test_the_items_export_fields_do_not_apply_a_feeds_own_fields_do(make_crawler, tmp_path):
    feeds = {
        str(tmp_path / "all.jsonl"): {"format": "jsonlines"},
        str(tmp_path / "urls.csv"): {"format": "csv", "fields": ["url", "status"]},
    }
    crawler, _ = feeds_of(make_crawler, feeds, FEED_EXPORT_FIELDS=["title", "content"])
    send(crawler)
    assert json.loads((tmp_path / "all.jsonl").read_text().splitlines()[0]) == {"run_id": "r1", **CHANGES[0]}
    assert (tmp_path / "urls.csv").read_text().splitlines()[0] == "url,status"


def test_a_run_without_changes_writes_an_empty_feed_unless_told_not_to(make_crawler, tmp_path):
    feeds = {
        str(tmp_path / "kept-%(run_id)s.json"): {"format": "json"},
        str(tmp_path / "skipped-%(run_id)s.json"): {"format": "json", "store_empty": False},
    }
    crawler, _ = feeds_of(make_crawler, feeds)
    send(crawler, "r1", [])
    assert json.loads((tmp_path / "kept-r1.json").read_text()) == []
    assert not (tmp_path / "skipped-r1.json").exists()


@pytest.mark.parametrize(
    ("uri", "options", "message"),
    [
        ("changes.xyz", {}, "unknown format 'xyz'"),
        ("changes", {}, "unknown format ''"),
        ("gopher://host/changes.jsonl", {}, "unknown storage scheme 'gopher'"),
    ],
)
def test_a_feed_scrapy_cannot_write_stops_the_crawl_at_its_start(make_crawler, uri, options, message):
    with pytest.raises(ValueError, match=message):
        feeds_of(make_crawler, {uri: options})


def test_a_feed_that_cannot_be_written_is_an_error_and_nothing_else(make_crawler, tmp_path, caplog):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    good = tmp_path / "good-%(run_id)s.jsonl"
    crawler, _ = feeds_of(make_crawler, {str(blocker / "changes.jsonl"): {"format": "jsonlines"}})
    with caplog.at_level(logging.ERROR):
        send(crawler)
    assert crawler.stats.get_value("changefeeds/failed") == 1
    assert "The change feed of run r1 was not written" in caplog.text
    assert blocker.read_text() == "not a directory"
    crawler, _ = feeds_of(make_crawler, {str(good): {"format": "jsonlines"}})
    send(crawler)  # another crawler, a writable feed: written
    assert len((tmp_path / "good-r1.jsonl").read_text().splitlines()) == 2


def test_the_crawls_items_are_not_in_the_change_feed(make_crawler, tmp_path):
    crawler, _ = feeds_of(make_crawler, {str(tmp_path / "c.jsonl"): {"format": "jsonlines"}})
    run(crawler.signals.send_catch_log_async(signal=__import__("scrapy").signals.item_scraped,
                                             item={"url": "i"}, response=None, spider=crawler.spider))  # fmt: skip
    send(crawler)
    assert [json.loads(line)["url"] for line in (tmp_path / "c.jsonl").read_text().splitlines()] == [
        "https://a.com/x",
        "https://a.com/y",
    ]
