"""The page views the stages share (crawler/stages/__init__.py)."""

import json

from crawler import stages
from crawler.cache.sqlite import SqliteDocStore
from crawler.lib.hashing import sha256_hex
from crawler.stages import PageViews, Stage
from crawler.stages.boilerplate import BoilerplateStage
from crawler.stages.extraction import ExtractionStage
from crawler.stages.removal import RemovalStage
from crawler.stages.report import ReportStage
from crawler.stages.vectors import VectorSyncStage


def store_with_pages(tmp_path, count=3):
    store = SqliteDocStore(tmp_path / "cache")
    for n in range(count):
        url = f"https://a.com/{n}"
        store.put_page(f"h{n}", {"url": url, "domain": "a.com", "status": "new"})
        store.put_content(f"h{n}", {"url": url, "text": f"# Page {n}", "clean": f"Page {n}"})
    store.put_page("gone", {"url": "https://a.com/gone", "domain": "a.com", "status": "removed"})
    return store


def test_a_view_reads_its_page_once_and_hashes_its_input_once(tmp_path):
    store = store_with_pages(tmp_path)
    pages = PageViews(store)
    view = pages.get("h1")
    assert view.content["text"] == "# Page 1" and view.content is view.content  # read once, kept
    assert view.text == "Page 1" and view.input_hash == sha256_hex("Page 1")  # the clean text
    assert PageViews(store, use_clean=False).get("h1").text == "# Page 1"
    assert pages.live() == ["h0", "h1", "h2"]  # removed pages left out
    assert pages.get("nothing") is None
    store.close()


def test_changes_are_written_once_by_flush(tmp_path):
    store = store_with_pages(tmp_path)
    pages = PageViews(store)
    view = pages.get("h0")
    view.set_content({**view.content, "clean": "Cleaned"}, input_hash=sha256_hex("Cleaned"))
    assert view.text == "Cleaned" and view.input_hash == sha256_hex("Cleaned")
    view.record["title"] = "Zero"
    view.changed()
    assert store.get_page("h0").get("title") is None  # not yet
    assert pages.flush(records=False) == 1 and store.get_content("h0")["clean"] == "Cleaned"
    assert store.get_page("h0").get("title") is None
    assert pages.flush() == 1 and store.get_page("h0")["title"] == "Zero"
    assert pages.flush() == 0  # nothing changed since
    store.close()


def test_past_the_budget_content_is_read_again_not_kept(tmp_path):
    store = store_with_pages(tmp_path)
    pages = PageViews(store, budget=15)
    assert pages.get("h0").content is not None and pages.get("h1").content is not None
    assert pages.rereads == 1  # the first fits in 15 characters (text and clean), the second does not
    store.close()


def test_batches_read_records_and_contents_in_one_query_each(tmp_path, monkeypatch):
    store = store_with_pages(tmp_path, count=5)
    store.commit()
    queries = []
    monkeypatch.setattr(store, "get_content", lambda key: queries.append(key))
    monkeypatch.setattr(store, "get_page", lambda key: queries.append(key))
    read_part_of, get_pages = store._read_part_of, store.get_pages
    monkeypatch.setattr(store, "_read_part_of", lambda part, keys: queries.append(keys) or read_part_of(part, keys))
    monkeypatch.setattr(store, "get_pages", lambda keys: queries.append(("records", list(keys))) or get_pages(keys))
    monkeypatch.setattr(stages, "CONTENTS_PER_READ", 3)
    pages = PageViews(store)
    pages._read(["h0"], contents=False)[0].set_content({"text": "# Page 0", "clean": "mine"})  # not read again
    batches = [[view.url_hash for view in batch] for batch in pages.batches(["h0", "h1", "nothing", "h2", "h3", "h4"])]
    assert batches == [["h0", "h1"], ["h2", "h3", "h4"]]  # (a page without a record left out)
    assert queries == [
        ("records", ["h0"]),
        ("records", ["h1", "nothing"]),
        ["h1"],
        ("records", ["h2", "h3", "h4"]),
        ["h2", "h3", "h4"],
    ]
    assert pages.get("h0").text == "mine" and pages.get("h3").content["text"] == "# Page 3"
    assert len(queries) == 5  # held: not read again
    monkeypatch.undo()
    assert store.get_content("h0")["clean"] == "mine"  # written when its batch was let go
    store.close()


def test_views_past_the_budget_go_least_recently_used_first_changed_ones_when_written(tmp_path, monkeypatch):
    store = store_with_pages(tmp_path, count=40)
    monkeypatch.setattr(stages, "CONTENTS_PER_READ", 4)
    pages = PageViews(store, budget=10 * stages.RECORD_COST)  # room for about ten views
    changed = pages.get("h0")
    changed.record["title"] = "Zero"
    changed.changed()
    seen = 0
    for batch in pages.batches(f"h{n}" for n in range(1, 40)):
        seen += len(batch)
        assert pages.cost <= pages.budget + stages.RECORD_COST  # (the changed view is held whatever)
        for view in batch:
            view.record["title"] = view.url_hash
            view.changed()
    assert seen == 39 and len(pages.views) <= 10 and "h0" in pages.views  # held until written
    assert store.get_page("h7")["title"] == "h7"  # written as its batch was let go
    assert pages.flush() == 1 and store.get_page("h0")["title"] == "Zero"
    # a view a stage kept after it went is held again when changed, and written
    kept = pages.get("h1")
    for n in range(2, 40):
        pages.get(f"h{n}")
    assert "h1" not in pages.views
    kept.record["title"] = "One"
    kept.changed()
    assert pages.flush() == 1 and store.get_page("h1")["title"] == "One"
    store.close()


def test_a_pass_over_every_page_reads_the_columns_and_sees_what_a_stage_changed(tmp_path):
    store = store_with_pages(tmp_path)
    pages = PageViews(store)
    view = pages.get("h1")
    view.record["status"] = "removed"
    view.changed()  # not written yet
    assert [head.url_hash for head in pages.heads()] == ["h0", "h2"]
    assert [head.url for head in pages.heads({"b.com"})] == []
    store.close()


def test_every_stage_has_a_name_plan_run_and_report():
    stages = (RemovalStage, BoilerplateStage, ExtractionStage, VectorSyncStage, ReportStage)
    assert [s.name for s in stages] == ["removal", "boilerplate", "extraction", "vectors", "report"]
    assert all(callable(getattr(s, m, None)) for s in stages for m in ("plan", "run", "report"))
    assert isinstance(RemovalStage(stats=None), Stage)


def test_content_a_stage_changed_counts_against_the_budget_and_goes_once_written(tmp_path):
    store = store_with_pages(tmp_path)
    pages = PageViews(store, budget=len("# Page 0") + len("Cleaned"))  # room for one page's texts
    views = [pages.get(f"h{n}") for n in range(3)]
    for view in views:
        content = dict(view.content)
        view.set_content({**content, "clean": "Cleaned"}, input_hash=sha256_hex("Cleaned"))
    assert pages.held > pages.budget  # changed content is held until it is written
    assert pages.flush(records=False) == 3
    assert pages.held <= pages.budget  # written, and let go past the budget
    assert all(store.get_content(view.url_hash)["clean"] == "Cleaned" for view in views)
    assert [view.text for view in views] == ["Cleaned"] * 3  # read again when asked
    assert all(view.input_hash == sha256_hex("Cleaned") for view in views)
    store.close()


def test_a_page_read_ahead_is_given_even_when_the_budget_cannot_hold_its_batch(tmp_path):
    store = store_with_pages(tmp_path, count=6)
    pages = PageViews(store, budget=1)  # smaller than one view: every unchanged view goes at once
    pages.read_ahead(f"h{n}" for n in range(6))
    view = pages.get("h3")
    assert view is not None and view.content["text"] == "# Page 3" and "h3" not in pages.views
    view.record["title"] = "Three"
    view.changed()  # held again, and written
    assert "h3" in pages.views and pages.flush() == 1 and store.get_page("h3")["title"] == "Three"
    store.close()


def test_pages_read_ahead_come_a_batch_at_a_time_asked_in_order_or_not(tmp_path, monkeypatch):
    """A miss reads the pages read ahead from it on, one batch; a page asked for out of
    order (before the last batch read) is found too; one not read ahead alone."""
    store = store_with_pages(tmp_path, count=10)
    store.commit()
    reads = []
    get_pages, get_page = store.get_pages, store.get_page
    monkeypatch.setattr(store, "get_pages", lambda keys: reads.append(list(keys)) or get_pages(keys))
    monkeypatch.setattr(store, "get_page", lambda key: reads.append(key) or get_page(key))
    monkeypatch.setattr(stages, "CONTENTS_PER_READ", 3)
    pages = PageViews(store, budget=1)  # nothing held: every page asked for is a miss
    pages.read_ahead(f"h{n}" for n in range(8))
    assert pages.get("h4").url_hash == "h4" and reads == [["h4", "h5", "h6"]]
    assert pages.get("h1").url_hash == "h1" and reads[-1] == ["h1", "h2", "h3"]  # before the last batch
    assert pages.get("h9").url_hash == "h9" and reads[-1] == "h9"  # not read ahead: alone
    pages.read_ahead(())
    assert pages.get("h5").url_hash == "h5" and reads[-1] == "h5"
    store.close()


def test_a_content_stored_without_its_hashes_is_stored_again_with_them_once_read(tmp_path):
    """``input_hashes`` answers from the hashes the store keeps with a content; one an
    older version stored without them is None, and once its content is read (held by an
    earlier pass or read now) it is stored again with them, unchanged."""
    store = store_with_pages(tmp_path)
    store.commit()
    for key in ("h0", "h1"):
        store._put_part(key, "content", json.dumps(store.get_content(key)))  # an older version's
    store.commit()
    pages = PageViews(store)
    held = pages.get("h0")
    assert held.content["text"] == "# Page 0"  # held by an earlier pass
    found = pages.input_hashes(["h0", "h1", "h2"])
    assert found == {"h0": None, "h1": None, "h2": sha256_hex("Page 2")}
    pages.read_contents([held, pages.get("h1"), pages.get("h2")])
    store.commit()
    assert store.get_input_hashes(["h0", "h1"], use_clean=True) == {
        "h0": sha256_hex("Page 0"),
        "h1": sha256_hex("Page 1"),
    }
    assert store.get_content("h1") == {"url": "https://a.com/1", "text": "# Page 1", "clean": "Page 1"}
    writes = []
    pages.wrote = writes.append
    pages.read_contents([held, pages.get("h1")])  # once
    assert writes == []
    store.close()
