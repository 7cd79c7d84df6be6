"""The page views the stages share (crawler/stages/__init__.py)."""

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
    assert [v.url_hash for v in pages.live()] == ["h0", "h1", "h2"]  # removed pages left out
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


def test_contents_read_ahead_in_one_query_each_kept_as_if_read_one_by_one(tmp_path, monkeypatch):
    store = store_with_pages(tmp_path, count=5)
    store.commit()
    queries = []
    monkeypatch.setattr(store, "get_content", lambda key: queries.append(key))
    read_part_of = store._read_part_of
    monkeypatch.setattr(store, "_read_part_of", lambda part, keys: queries.append(keys) or read_part_of(part, keys))
    pages = PageViews(store)
    pages.load_all()  # the records in one pass (as the stages do): no page read yet
    pages.get("h0").set_content({"text": "# Page 0", "clean": "mine"})  # a stage's: not read again
    pages.load_contents(["h0", "h1", "nothing", "h2", "h3", "h4"])
    assert queries == [["h1", "h2", "h3", "h4"]]
    assert pages.get("h0").text == "mine" and pages.get("h3").content["text"] == "# Page 3"
    pages.load_contents(["h1", "h2"])
    assert len(queries) == 1  # read already
    assert pages.held == len("# Page 0mine") + 4 * len("# Page 1Page 1")
    # past the budget: kept as load_content keeps them, then nothing more read ahead
    tight = PageViews(store, budget=2 * len("# Page 1Page 1"))
    tight.load_all()
    monkeypatch.setattr(stages, "CONTENTS_PER_READ", 2)
    tight.load_contents(["h1", "h2", "h3", "h4"])
    assert [tight.get(f"h{n}")._loaded for n in range(1, 5)] == [True, True, False, False]
    assert queries[1:] == [["h1", "h2"]]
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
