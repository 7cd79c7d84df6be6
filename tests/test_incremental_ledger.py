"""The ledger's facts: what each thing a stage or a command tells of a page does to its
record, and the writes that only the ledger makes (crawler.incremental.ledger). A
page's recording by a crawl is tested through the pipeline that tells it
(tests/test_pipeline_content_hash.py) and against a model (tests/test_model_runs.py)."""

from __future__ import annotations

import pytest

from crawler.cache.sqlite import SqliteDocStore
from crawler.incremental import ledger


def record(**fields):
    return {"url": "https://a.com/x", "status": "unchanged", "run_id": "r", "content_hash": "c", **fields}


@pytest.mark.parametrize(
    ("before", "recorded", "status"),
    [
        (record(), True, "new"),  # recorded unchanged this run, never extracted: new to the change list
        (record(extraction={"input_key": "old"}), True, "changed"),  # extracted before: changed
        (record(status="changed"), True, None),  # already in the change list
        (record(), False, None),  # not recorded by this run (scrapy process): its status is another run's
    ],
)
def test_an_extraction_the_run_paid_for_lists_its_page(before, recorded, status):
    reference = {"input_key": "k", "input_hash": "i", "extractor": "x", "version": "1", "file": "f"}
    page = dict(before, extraction_error={"at": "t", "error": "e", "input_key": "k"}, invalidated="t")
    assert ledger.extracted(page, reference, "i", "2026-01-01T00:00:00Z", recorded=recorded) == status
    assert page["status"] == (status or before["status"])
    assert ("last_changed" in page) == (status is not None)
    assert page["extraction"] == reference and page["last_extracted"] == "2026-01-01T00:00:00Z"
    assert "extraction_error" not in page and "invalidated" not in page
    assert page["history"][-1] == {"at": "2026-01-01T00:00:00Z", "event": "extracted", "input_hash": "i"}


def test_a_removal_a_failure_and_an_empty_input_are_written_into_the_record():
    page = record()
    ledger.extraction_failed(page, "Timeout: " + "x" * 3000, "k", "t1")
    assert len(page["extraction_error"]["error"]) == 2000 and page["extraction_error"]["input_key"] == "k"
    assert page["history"][-1]["event"] == "extraction_failed" and len(page["history"][-1]["error"]) == 200
    assert ledger.empty_input(page, empty=True) and not ledger.empty_input(page, empty=True)  # since when: kept
    assert ledger.empty_input(page, empty=False) and not ledger.empty_input(page, empty=False)
    ledger.removed(page, "r2", ledger.FOLDED, "t2")
    assert (page["status"], page["removed_at"], page["last_changed"], page["run_id"]) == ("removed", "t2", "t2", "r2")
    assert page["history"][-1] == {"at": "t2", "event": "removed", "reason": "folded"}


@pytest.fixture
def store(tmp_path):
    docs = SqliteDocStore(tmp_path / "cache")
    yield docs
    docs.close()


def test_written_back_once_and_told_by_the_commands(store):
    pages = {"a": record(url="https://a.com/a"), "b": record(url="https://a.com/b")}
    assert ledger.write_back(store, pages.items()) == 2
    pages["a"]["status"] = "changed"  # a copy was written: the stages' view is not the store's
    assert store.get_page("a")["status"] == "unchanged"
    assert ledger.invalidate(store, ["a", "missing"]) == 1
    assert store.get_page("a")["history"][-1]["event"] == "invalidated" and "invalidated" not in store.get_page("b")
    assert ledger.put_vectors(store, "b", {"key": "k", "points": 0})
    assert store.get_page("b")["vectors"] == {"key": "k", "points": 0}
    assert ledger.put_vectors(store, "b", None) and "vectors" not in store.get_page("b")  # synced again
    assert not ledger.put_vectors(store, "missing", {"key": "k"})
