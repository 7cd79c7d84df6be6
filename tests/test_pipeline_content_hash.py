import logging
from dataclasses import dataclass, field

import pytest
import scrapy
from scrapy.utils.misc import build_from_crawler

from crawler.cache import cache_for
from crawler.items import PageItem
from crawler.pipelines.content_hash import ContentHashPipeline
from tests.helpers import next_run, run


@pytest.fixture
def build(make_component):
    return lambda **settings: make_component(ContentHashPipeline, settings)


def page(content="# Guide\n\nText.", url="https://a.com/guide", title="Guide"):
    return PageItem(url=url, canonical_url=url, title=title, content=content)


def test_new_unchanged_changed(build):
    crawler, pipeline = build()
    stats = crawler.stats
    counts = lambda: [stats.get_value(f"pages/{s}", 0) for s in ("new", "unchanged", "changed")]  # noqa: E731
    first = run(pipeline.process_item(page()))
    assert first.status == "new" and len(first.url_hash) == 40 and len(first.content_hash) == 64
    assert counts() == [1, 0, 0]
    cache = cache_for(crawler)
    next_run(cache)
    again = run(pipeline.process_item(page(content="#  Guide\n\nText. ")))
    assert (again.status, again.content_hash, again.url_hash) == ("unchanged", first.content_hash, first.url_hash)
    assert counts() == [0, 1, 0]  # (one crawler for three runs: the counts are the run's)
    next_run(cache)
    edited = run(pipeline.process_item(page(content="# Guide\n\nNew text.")))
    assert edited.status == "changed"
    assert counts() == [0, 0, 1]
    record = cache.store.get_page(first.url_hash)
    assert {"first_seen", "last_seen", "last_changed", "content_hash", "domain", "run_id"} <= set(record)
    content = cache.store.get_content(first.url_hash)
    assert content["text"] == "# Guide\n\nNew text."
    assert content["previous"]["text"] == "#  Guide\n\nText. "  # the version before, for diffs


def test_a_change_of_the_title_alone_keeps_the_version_before_for_diffs(build):
    """The title is hashed: a page whose title alone changed is ``changed``, and its
    version before is kept with its fields (``scrapy cache diff`` said "it has not
    changed since it was first crawled" of such a page)."""
    crawler, pipeline = build()
    cache = cache_for(crawler)
    first = run(pipeline.process_item(page()))
    next_run(cache)
    retitled = run(pipeline.process_item(page(title="Guide (v2)")))
    assert retitled.status == "changed"
    content = cache.store.get_content(first.url_hash)
    assert content["previous"]["text"] == content["text"] == "# Guide\n\nText."
    assert (content["previous"]["fields"], content["fields"]) == ({"title": "Guide"}, {"title": "Guide (v2)"})


def test_a_page_seen_again_unchanged_is_touched_not_written_whole(build, monkeypatch):
    """Only ``last_seen`` and ``run_id`` of an unchanged page's record move on a recrawl:
    the store gets a narrow update (``touch_page``), not the whole record again; the
    record reads back the same, those two fields moved, the queried column too."""
    crawler, pipeline = build()
    cache = cache_for(crawler)
    first = run(pipeline.process_item(page()))
    next_run(cache)
    run(pipeline.process_item(page()))  # new -> unchanged: the status moves, the record is written
    cache.commit()
    next_run(cache)
    store, calls = cache.store, []
    before = store.get_page(first.url_hash)

    def noted(name):
        call = getattr(store, name)

        def method(*args):
            calls.append(name)
            return call(*args)

        return method

    for name in ("put_page", "touch_page"):
        monkeypatch.setattr(store, name, noted(name))
    assert run(pipeline.process_item(page())).status == "unchanged"
    assert calls == ["touch_page"]
    after = store.get_page(first.url_hash)  # read back before the commit
    assert after["run_id"] == cache.run.run_id != before["run_id"] and after["last_seen"] >= before["last_seen"]
    assert {**after, "run_id": None, "last_seen": None} == {**before, "run_id": None, "last_seen": None}
    cache.commit()
    assert store.get_page(first.url_hash) == after
    assert store.domain_summary()[0]["last_seen"] == after["last_seen"]
    next_run(cache)
    assert run(pipeline.process_item(page(content="# Guide\n\nNew text."))).status == "changed"
    assert calls == ["touch_page", "put_page"]  # a change is written whole


def test_identity_ignores_url_spelling(build):
    crawler, pipeline = build()
    a = run(pipeline.process_item(page(url="https://a.com/guide/")))
    b = run(pipeline.process_item(page(url="https://a.com/guide?utm_source=x#top")))
    assert a.url_hash == b.url_hash
    assert crawler.stats.get_value("pages/duplicates") == 1
    assert crawler.stats.get_value("pages/new") == 1


def index_page(url, content="# Guide\n\nText.", declared=None):
    return PageItem(url=url, canonical_url=declared or url, title="Guide", content=content)


def test_an_index_file_name_alone_is_no_evidence(build):
    """/guide/auth/default.html, the page about the default backend, is not /guide/auth."""
    crawler, pipeline = build()
    directory = run(pipeline.process_item(page("# Auth\n\nChoose a backend.", url="https://a.com/guide/auth/")))
    default = run(pipeline.process_item(index_page("https://a.com/guide/auth/default.html", "# The default backend")))
    assert directory.url_hash != default.url_hash
    assert (directory.status, default.status) == ("new", "new")
    assert crawler.stats.get_value("pages/new") == 2
    assert not crawler.stats.get_value("pages/duplicates") and not crawler.stats.get_value("pages/folded")
    next_run(cache_for(crawler))  # in either order, each keeps its own text
    again = run(pipeline.process_item(index_page("https://a.com/guide/auth/default.html", "# The default backend")))
    assert (again.url_hash, again.status) == (default.url_hash, "unchanged")
    assert run(pipeline.process_item(page("# Auth\n\nChoose a backend.", url="https://a.com/guide/auth"))).status == (
        "unchanged"
    )


def test_the_same_content_folds_an_index_spelling_into_its_directory(build):
    crawler, pipeline = build()
    directory = run(pipeline.process_item(page(url="https://a.com/guide/")))
    index = run(pipeline.process_item(index_page("https://a.com/guide/index.html")))
    assert (index.url_hash, index.status) == (directory.url_hash, "new")
    assert crawler.stats.get_value("pages/duplicates") == crawler.stats.get_value("pages/folded") == 1
    assert crawler.stats.get_value("pages/new") == 1
    # a later run that reaches only the index spelling: the directory's page, unchanged
    cache = cache_for(crawler)
    next_run(cache)
    later = run(pipeline.process_item(index_page("https://a.com/guide/index.html")))
    assert (later.url_hash, later.status) == (directory.url_hash, "unchanged")
    record = cache.store.get_page(directory.url_hash)  # the page keeps its URL, and knows the spelling
    assert (record["url"], record["folded_from"]) == ("https://a.com/guide/", ["https://a.com/guide/index.html"])


def test_an_index_spelling_that_came_first_joins_its_directory_page_when_their_texts_agree(build):
    crawler, pipeline = build()
    cache = cache_for(crawler)
    index = run(pipeline.process_item(index_page("https://a.com/guide/index.html")))
    assert index.url_hash == pipeline.identity.url_hash("https://a.com/guide/index.html")  # no evidence yet
    directory = run(pipeline.process_item(page(url="https://a.com/guide/")))
    assert directory.status == "new" and directory.url_hash != index.url_hash
    assert cache.store.get_page(index.url_hash) is None and cache.store.get_content(index.url_hash) is None
    assert list(cache.run.seen) == [directory.url_hash]
    stats = crawler.stats
    assert [stats.get_value(k) for k in ("pages/new", "pages/duplicates", "pages/folded")] == [1, 1, 1]
    # other texts: two pages
    other = run(pipeline.process_item(index_page("https://a.com/api/index.html", "# API index")))
    run(pipeline.process_item(page("# API\n\nOverview.", url="https://a.com/api/")))
    assert cache.store.get_page(other.url_hash)["status"] == "new"
    assert len(cache.run.seen) == 3 and stats.get_value("pages/new") == 3


def test_a_declared_canonical_folds_an_index_spelling(build):
    crawler, pipeline = build()
    folded = run(pipeline.process_item(index_page("https://a.com/guide/default.aspx", declared="https://a.com/guide/")))
    assert folded.url_hash == pipeline.identity.url_hash("https://a.com/guide")
    elsewhere = run(
        pipeline.process_item(index_page("https://a.com/api/index.html", declared="https://b.com/api/"))
    )  # another host: no evidence
    assert elsewhere.url_hash == pipeline.identity.url_hash("https://a.com/api/index.html")
    assert crawler.stats.get_value("pages/folded") == 1


def test_a_cache_made_under_the_folding_rule_keeps_its_identities(build):
    """Before, /guide/index.html was recorded as /guide (its url_hash): the first run
    after the change finds it there, unchanged."""
    crawler, pipeline = build()
    cache = cache_for(crawler)
    directory_hash = pipeline.identity.url_hash("https://a.com/guide")
    old = page(url="https://a.com/guide/index.html")
    chash = run(pipeline.process_item(page(url="https://a.com/guide/"))).content_hash
    record = cache.store.get_page(directory_hash)
    assert record["content_hash"] == chash
    record["url"] = old.url  # as the folding rule recorded it
    cache.store.put_page(directory_hash, record)
    next_run(cache)
    again = run(pipeline.process_item(index_page(old.url)))
    assert (again.url_hash, again.status) == (directory_hash, "unchanged")
    assert list(cache.run.seen) == [directory_hash]


def test_a_page_recorded_from_its_index_spelling_keeps_its_identity_when_its_text_changes(build):
    """A Sphinx site links its sections only as …/index.html: the page recorded as /guide
    from that URL (a cache made under the folding rule, or a fold) stays /guide."""
    crawler, pipeline = build()
    cache = cache_for(crawler)
    directory_hash = pipeline.identity.url_hash("https://a.com/guide")
    first = run(pipeline.process_item(index_page("https://a.com/guide/index.html", declared="https://a.com/guide")))
    assert first.url_hash == directory_hash
    next_run(cache)
    edited = run(pipeline.process_item(index_page("https://a.com/guide/index.html", "# Guide\n\nNew text.")))
    assert (edited.url_hash, edited.status) == (directory_hash, "changed")
    assert list(cache.run.seen) == [directory_hash]


def test_a_fold_for_last_runs_content_is_undone_when_the_directory_page_differs(build):
    """A cache made under the folding rule holds /guide/auth with the text of
    default.html (the spelling reached first last time). This run reaches default.html
    first again, then /guide/auth/ with its own text: two pages after all."""
    crawler, pipeline = build()
    cache = cache_for(crawler)
    directory_hash = pipeline.identity.url_hash("https://a.com/guide/auth")
    default_text, auth_text = "# The default backend", "# Auth\n\nChoose a backend."
    run(pipeline.process_item(page(default_text, url="https://a.com/guide/auth")))
    before = cache.store.get_page(directory_hash)
    next_run(cache)
    default_item = index_page("https://a.com/guide/auth/default.html", default_text)
    default_item.selection_widened = True
    default = run(pipeline.process_item(default_item))
    assert default.url_hash == directory_hash  # its content was the directory's: folded, for now
    auth = run(pipeline.process_item(page(auth_text, url="https://a.com/guide/auth/")))
    assert (auth.url_hash, auth.status) == (directory_hash, "changed")  # against the record the run found
    default_hash = pipeline.identity.url_hash("https://a.com/guide/auth/default.html")
    record = cache.store.get_page(default_hash)
    assert (record["status"], record["url"]) == ("new", "https://a.com/guide/auth/default.html")
    assert (record["content_hash"], record["title"]) == (default.content_hash, "Guide")
    assert "selection_widened" in record  # what its parse said goes with it
    assert "selection_widened" not in cache.store.get_page(directory_hash)
    assert cache.store.get_content(default_hash)["text"] == default_text
    assert cache.store.get_content(directory_hash)["text"] == auth_text
    assert cache.store.get_page(directory_hash)["first_seen"] == before["first_seen"]
    assert set(cache.run.seen) == {directory_hash, default_hash}
    stats = crawler.stats
    # (one crawler's stats for both runs: the counts are the second run's)
    assert [stats.get_value(f"pages/{s}", 0) for s in ("new", "unchanged", "changed")] == [1, 0, 1]
    assert (stats.get_value("pages/folded"), stats.get_value("pages/unfolded")) == (0, 1)
    assert not stats.get_value("pages/duplicates")


def test_a_widened_selection_is_flagged_until_a_parse_is_not_widened(build):
    """The record says since when the page's main content is widened by the selection's
    audit; a parse reused (the item does not say) and items of other spiders leave it."""
    crawler, pipeline = build()
    cache = cache_for(crawler)
    store = cache.store

    def item(widened):
        return PageItem(
            url="https://a.com/guide", canonical_url="https://a.com/guide", title="Guide",
            content="# Guide\n\nText.", selection_widened=widened,
        )  # fmt: skip

    first = run(pipeline.process_item(item(True)))
    record = store.get_page(first.url_hash)
    assert record["selection_widened"] == record["last_seen"]
    store.put_page(first.url_hash, {**record, "selection_widened": "2026-01-01T00:00:00Z"})
    for widened in (None, True):  # a reused parse; a parse that widens it again
        next_run(cache)
        run(pipeline.process_item(item(widened)))
        assert store.get_page(first.url_hash)["selection_widened"] == "2026-01-01T00:00:00Z"
    next_run(cache)
    run(pipeline.process_item({"url": "https://a.com/guide", "title": "Guide", "content": "# Guide\n\nText."}))
    assert store.get_page(first.url_hash)["selection_widened"] == "2026-01-01T00:00:00Z"
    store.commit()
    assert [key for key, _ in store.query_pages(widened=True)] == [first.url_hash]
    next_run(cache)
    run(pipeline.process_item(item(False)))
    assert "selection_widened" not in store.get_page(first.url_hash)
    store.commit()
    assert list(store.query_pages(widened=True)) == []
    assert crawler.stats.get_value("pages/unchanged") == 1  # (the last run's count)


def test_items_of_any_kind(build):
    crawler, pipeline = build(CONTENT_HASH_FIELDS=["title", "tags"])

    class Dataset(scrapy.Item):
        url = scrapy.Field()
        title = scrapy.Field()
        tags = scrapy.Field()

    @dataclass
    class Plain:
        url: str
        title: str
        tags: list

    item = run(pipeline.process_item(Dataset(url="https://d.org/1", title="Pop", tags=["b", "a"])))
    assert "url_hash" not in item  # no field for it: left as it is, still recorded
    as_dict = run(pipeline.process_item({"url": "https://d.org/2", "title": "Pop", "tags": ["a", "b"]}))
    assert as_dict["status"] == "new"
    dc = run(pipeline.process_item(Plain("https://d.org/3", "Pop", ["a", "b"])))
    assert not hasattr(dc, "status")
    assert crawler.stats.get_value("pages/new") == 3  # all three recorded
    assert as_dict["content_hash"] == content_of(crawler, "https://d.org/1")
    text = cache_for(crawler).store.get_content(as_dict["url_hash"])["text"]
    assert text == "tags: a, b\ntitle: Pop"  # what the extractor reads for items without content


def test_nested_items_hash_and_store_as_dicts(build):
    crawler, pipeline = build(CONTENT_HASH_FIELDS=["title", "publisher"])

    @dataclass
    class Publisher:
        name: str
        country: str

    publisher = {"country": "RW", "name": "NISR"}
    nested = run(
        pipeline.process_item({"url": "https://d.org/1", "title": "Pop", "publisher": Publisher("NISR", "RW")})
    )
    plain = run(pipeline.process_item({"url": "https://d.org/2", "title": "Pop", "publisher": publisher}))
    assert nested["content_hash"] == plain["content_hash"]
    stored = cache_for(crawler).store.get_content(nested["url_hash"])
    assert stored["fields"]["publisher"] == {"name": "NISR", "country": "RW"}


def test_unset_dataclass_field_reads_as_missing(build):
    crawler, pipeline = build()

    @dataclass
    class Page:
        url: str
        content: str
        title: str = field(init=False)  # never set: reading it raises AttributeError

    run(pipeline.process_item(Page("https://d.org/1", "# Text")))
    assert crawler.stats.get_value("pages/new") == 1 and not crawler.stats.get_value("pages/errors")


def content_of(crawler, url):
    cache = cache_for(crawler)
    from crawler.identity import PageIdentity

    return cache.store.get_page(PageIdentity.from_crawler(crawler).url_hash(url))["content_hash"]


def test_item_without_url_is_an_error_not_a_crash(build):
    crawler, pipeline = build()
    item = {"title": "no url"}
    assert run(pipeline.process_item(item)) is item
    assert run(pipeline.process_item({"url": "not a url"}))
    assert crawler.stats.get_value("pages/errors") == 2


def test_empty_fields_setting_is_refused(build):
    with pytest.raises(ValueError, match="CONTENT_HASH_FIELDS"):
        build(CONTENT_HASH_FIELDS=[])


def test_a_page_that_cannot_be_recorded_makes_the_run_incomplete(build, caplog):
    """The page answered but is not in the index: a complete run would mark it removed."""
    import sqlite3

    crawler, pipeline = build()
    cache = cache_for(crawler)
    run(pipeline.process_item(page(url="https://a.com/other")))
    cache.commit()
    cache.store._found_empty(False)  # (a cache with pages: the store asks the database for every page)
    with sqlite3.connect(cache.store.path) as conn:  # every read of the store now fails in SQLite
        conn.execute("DROP TABLE kv")  # "no such table"
    conn.close()
    item = run(pipeline.process_item(page()))
    assert getattr(item, "status", None) is None  # not recorded
    assert crawler.stats.get_value("pages/errors") == 1
    assert crawler.stats.get_value("cache/read_error") == 1
    assert "a page could not be recorded" in cache.run.incomplete_reasons
    assert any("cache.sqlite failed (no such table: kv)" in reason for reason in cache.run.incomplete_reasons)
    assert "Recording https://a.com/guide in the cache failed: Reading the cache file" in caplog.text
    assert "Traceback" not in caplog.text


def test_any_recording_error_makes_the_run_incomplete(build, monkeypatch):
    crawler, pipeline = build()

    def broken(url_hash):
        raise KeyError(url_hash)

    monkeypatch.setattr(cache_for(crawler).store, "get_page", broken)
    run(pipeline.process_item(page()))
    assert cache_for(crawler).run.incomplete_reasons == ["a page could not be recorded"]


def test_a_page_no_run_reported_is_new_until_a_run_reports_it(build):
    crawler, pipeline = build()
    first = run(pipeline.process_item(page()))
    cache = cache_for(crawler)
    cache.run.seen.clear()  # the run was killed: no report, the page never extracted
    from crawler.cache import RunState

    cache.run = RunState()
    assert run(pipeline.process_item(page())).status == "new"
    next_run(cache)  # that run finished and reported it
    assert run(pipeline.process_item(page())).status == "unchanged"
    record = cache.store.get_page(first.url_hash)
    assert [event["event"] for event in record["history"]] == ["new"]


def test_a_change_no_run_reported_is_a_change_until_a_run_reports_it(build):
    from crawler.cache import RunState

    crawler, pipeline = build()
    first = run(pipeline.process_item(page()))
    cache = cache_for(crawler)
    next_run(cache)  # the first run reported the page new
    assert run(pipeline.process_item(page(content="# Guide\n\nEdited."))).status == "changed"
    cache.run = RunState()  # that run was killed: no report, the change never extracted
    assert run(pipeline.process_item(page(content="# Guide\n\nEdited."))).status == "changed"
    next_run(cache)  # that run finished and reported it
    assert run(pipeline.process_item(page(content="# Guide\n\nEdited."))).status == "unchanged"
    record = cache.store.get_page(first.url_hash)
    assert [event["event"] for event in record["history"]] == ["new", "changed"]


def removed(cache, url_hash):
    """Mark the page removed, as the removal stage does, and end the run."""
    from crawler.cache.records import add_history

    record = cache.store.get_page(url_hash)
    record.update(status="removed", removed_at="2026-01-02T00:00:00Z", last_changed="2026-01-02T00:00:00Z")
    add_history(record, "removed", "2026-01-02T00:00:00Z", reason="gone")
    cache.store.put_page(url_hash, record)
    next_run(cache)


@pytest.mark.parametrize("content", ["# Guide\n\nText.", "# Guide\n\nText back, edited."])
def test_a_removed_page_seen_again_is_new_with_its_return_in_its_history(build, content):
    crawler, pipeline = build()
    cache = cache_for(crawler)
    first = run(pipeline.process_item(page()))
    next_run(cache)
    first_seen = cache.store.get_page(first.url_hash)["first_seen"]
    removed(cache, first.url_hash)
    back = run(pipeline.process_item(page(content=content)))
    assert back.status == "new"
    record = cache.store.get_page(first.url_hash)
    assert record["status"] == "new" and "removed_at" not in record
    assert record["first_seen"] == first_seen
    assert [(h["event"], h.get("reason")) for h in record["history"]] == [
        ("new", None),
        ("removed", "gone"),
        ("new", "returned"),
    ]
    assert record["history"][-1]["content_hash"] == back.content_hash == record["content_hash"]
    assert record["last_changed"] == record["history"][-1]["at"]
    assert cache.store.get_content(first.url_hash)["text"] == content
    stats = crawler.stats
    assert [stats.get_value(f"pages/{s}") for s in ("new", "returned", "changed", "unchanged")] == [1, 1, None, None]
    next_run(cache)
    assert run(pipeline.process_item(page(content=content))).status == "unchanged"  # reported once


def test_a_return_no_run_reported_is_new_until_a_run_reports_it(build):
    from crawler.cache import RunState

    crawler, pipeline = build()
    cache = cache_for(crawler)
    first = run(pipeline.process_item(page()))
    next_run(cache)
    removed(cache, first.url_hash)
    assert run(pipeline.process_item(page())).status == "new"
    cache.run = RunState()  # that run was killed: no report
    assert run(pipeline.process_item(page())).status == "new"
    next_run(cache)  # that run finished and reported it
    assert run(pipeline.process_item(page())).status == "unchanged"
    history = cache.store.get_page(first.url_hash)["history"]
    assert [h["event"] for h in history] == ["new", "removed", "new"]  # one return


OLD, NEW = "markdown/1;links=urls", "markdown/2;links=text"
URLS_TEXT, PLAIN_TEXT = "# Guide\n\nSee [usage](https://a.com/usage).", "# Guide\n\nSee usage."


def converted(content, converter=NEW, source_unchanged=True):
    item = page(content=content)
    item.converter, item.source_unchanged = converter, source_unchanged
    return item


def test_a_new_converter_keeps_the_stored_text_of_pages_whose_source_did_not_change(build):
    crawler, pipeline = build()
    cache = cache_for(crawler)
    first = run(pipeline.process_item(converted(URLS_TEXT, OLD, source_unchanged=False)))
    assert cache.store.get_page(first.url_hash)["converter"] == OLD
    next_run(cache)
    kept = run(pipeline.process_item(converted(PLAIN_TEXT)))
    assert (kept.status, kept.content_hash) == ("unchanged", first.content_hash)
    assert cache.store.get_content(first.url_hash)["text"] == URLS_TEXT  # what the extractor read
    record = cache.store.get_page(first.url_hash)
    assert (record["converter"], record["converter_pending"]) == (OLD, NEW)
    assert crawler.stats.get_value("converter/pages_pending") == 1
    assert crawler.stats.get_value("converter/tokens_pending") == (len(PLAIN_TEXT) + 3) // 4
    assert cache.run.converter == {"id": NEW, "upgrade": "keep"}

    next_run(cache)  # the site changes: the page gets the new converter's text
    edited = run(pipeline.process_item(converted(PLAIN_TEXT + " Now.", source_unchanged=False)))
    assert edited.status == "changed"
    assert cache.store.get_content(first.url_hash)["text"] == PLAIN_TEXT + " Now."
    record = cache.store.get_page(first.url_hash)
    assert record["converter"] == NEW and "converter_pending" not in record
    assert crawler.stats.get_value("converter/pages_pending") == 1  # counted once, in the run before


def test_converter_upgrade_apply_stores_the_new_text_as_a_change(build):
    crawler, pipeline = build(CONVERTER_UPGRADE="apply")
    cache = cache_for(crawler)
    first = run(pipeline.process_item(converted(URLS_TEXT, OLD)))
    next_run(cache)
    applied = run(pipeline.process_item(converted(PLAIN_TEXT)))
    assert applied.status == "changed"
    assert cache.store.get_content(first.url_hash)["text"] == PLAIN_TEXT
    assert cache.store.get_page(first.url_hash)["converter"] == NEW
    assert crawler.stats.get_value("converter/pages_upgraded") == 1
    assert crawler.stats.get_value("converter/pages_pending") is None
    assert cache.run.converter == {"id": NEW, "upgrade": "apply"}


def test_same_text_under_both_converters_only_updates_the_converter(build):
    crawler, pipeline = build()
    cache = cache_for(crawler)
    first = run(pipeline.process_item(converted(PLAIN_TEXT, OLD)))
    next_run(cache)
    again = run(pipeline.process_item(converted(PLAIN_TEXT)))
    assert again.status == "unchanged"
    assert cache.store.get_page(first.url_hash)["converter"] == NEW
    assert crawler.stats.get_value("converter/pages_pending") is None


def test_a_legacy_record_without_converter_is_the_old_converter(build):
    crawler, pipeline = build()
    cache = cache_for(crawler)
    first = run(pipeline.process_item(page(content=URLS_TEXT)))  # no converter: as older caches recorded
    assert "converter" not in cache.store.get_page(first.url_hash)
    next_run(cache)
    assert run(pipeline.process_item(converted(PLAIN_TEXT))).status == "unchanged"
    record = cache.store.get_page(first.url_hash)
    assert (record["converter"], record["converter_pending"]) == ("markdown/1;links=urls", NEW)
    next_run(cache)  # the old converter again: nothing pending any more
    assert run(pipeline.process_item(converted(URLS_TEXT, "markdown/1;links=urls"))).status == "unchanged"
    assert "converter_pending" not in cache.store.get_page(first.url_hash)


def test_a_page_never_extracted_gets_the_new_text(build):
    # recorded by a run killed before its report: no extraction to spare
    crawler, pipeline = build()
    cache = cache_for(crawler)
    first = run(pipeline.process_item(converted(URLS_TEXT, OLD)))
    from crawler.cache import RunState

    cache.run = RunState()
    assert run(pipeline.process_item(converted(PLAIN_TEXT))).status == "new"
    assert cache.store.get_content(first.url_hash)["text"] == PLAIN_TEXT


def test_items_without_converter_are_left_alone(build):
    crawler, pipeline = build()
    cache = cache_for(crawler)
    first = run(pipeline.process_item(page(content=URLS_TEXT)))
    next_run(cache)
    assert run(pipeline.process_item(page(content=PLAIN_TEXT))).status == "changed"
    assert "converter" not in cache.store.get_page(first.url_hash)
    assert cache.run.converter == {}


def test_a_bad_converter_upgrade_is_refused(make_crawler):
    from scrapy.utils.misc import build_from_crawler

    with pytest.raises(ValueError, match="CONVERTER_UPGRADE must be keep or apply, got 'yes'"):
        build_from_crawler(ContentHashPipeline, make_crawler({"CONVERTER_UPGRADE": "yes"}, cache=False))
    # -a redo=extraction re-extracts every page: from the newest converter's text
    forced = build_from_crawler(ContentHashPipeline, make_crawler(spider_args={"redo": "extraction"}))
    assert forced.ledger.converter_upgrade == "apply"


def test_an_index_spelling_of_a_page_held_back_under_a_new_converter_is_that_page(build):
    """A cache from before both changes (old converter, index file names folded) of a
    site linking a page as /guide/ and as /guide/index.html: the new converter's text
    of either spelling is the page held back, in either order, run after run."""
    crawler, pipeline = build()
    cache = cache_for(crawler)
    first = run(pipeline.process_item(converted(URLS_TEXT, OLD, source_unchanged=False)))
    directory_hash = first.url_hash

    def index(source_unchanged=False):
        item = index_page("https://a.com/guide/index.html", PLAIN_TEXT)
        item.converter, item.source_unchanged = NEW, source_unchanged
        return item

    next_run(cache)  # the index spelling first: no evidence yet, then the directory page
    alone = run(pipeline.process_item(index()))
    assert alone.url_hash != directory_hash
    held = run(pipeline.process_item(converted(PLAIN_TEXT)))
    assert (held.url_hash, held.status) == (directory_hash, "unchanged")
    assert cache.store.get_page(alone.url_hash) is None  # merged: the same text
    assert list(cache.run.seen) == [directory_hash]

    next_run(cache)  # the index spelling first again, downloaded in full: the page held back
    again = run(pipeline.process_item(index()))
    assert (again.url_hash, again.status, again.content_hash) == (directory_hash, "unchanged", first.content_hash)
    assert cache.store.get_content(directory_hash)["text"] == URLS_TEXT
    assert crawler.stats.get_value("converter/pages_pending") == 2
    assert not crawler.stats.get_value("pages/changed") and crawler.stats.get_value("pages/unchanged") == 1


def test_items_that_carry_the_configured_fields_hash_and_read_as_before(build, make_crawler, tmp_path, caplog):
    """The hashes and the extractor's text of items that carry their configured fields
    are pinned: an upgrade never makes a cache's pages changed (and extracted again)."""
    crawler, pipeline = build()
    item = run(pipeline.process_item(page()))
    assert item.content_hash == "b1022caa886702e694ae9cd7c83e26edad0552a4a0508eec0bb4770af49ed2eb"
    assert cache_for(crawler).store.get_content(item.url_hash)["text"] == "# Guide\n\nText."
    # the same under the add-on (its defaults at the add-on's priority)
    addon = make_crawler(
        {"ADDONS": {"crawler.addons.IncrementalAddon": 100}, "EXTRACTED_DOCS_DIR": str(tmp_path / "a")}
    )
    assert run(build_from_crawler(ContentHashPipeline, addon).process_item(page())).content_hash == item.content_hash
    # items without a content field whose CONTENT_HASH_FIELDS are set: name: value lines
    crawler, pipeline = build(CONTENT_HASH_FIELDS=["title", "tags"], EXTRACTED_DOCS_DIR=str(tmp_path / "b"))
    listed = run(pipeline.process_item({"url": "https://d.org/1", "title": "Pop", "tags": ["b", "a"], "n": "x"}))
    assert listed["content_hash"] == "2a42d6f5429cd2bc39e938195f1ba7cbca526ed01261800fbfa7c91ad512914d"
    assert cache_for(crawler).store.get_content(listed["url_hash"])["text"] == "tags: a, b\ntitle: Pop"
    assert "lack" not in caplog.text


def test_under_the_defaults_an_item_without_content_is_hashed_by_its_text_fields(build, caplog):
    crawler, pipeline = build()
    cache = cache_for(crawler)

    def item(text="Install it with pip.", title="Install", link="https://a.com/x"):
        return {"url": "https://a.com/install", "title": title, "text": text, "link": link, "words": 4}

    first = run(pipeline.process_item(item()))
    assert cache.store.get_content(first["url_hash"])["text"] == "# Install\n\nInstall it with pip."
    assert cache.store.get_content(first["url_hash"])["fields"] == {"text": "Install it with pip.", "title": "Install"}
    warnings = [r for r in caplog.records if r.levelname == "WARNING"]
    assert len(warnings) == 1
    message = warnings[0].getMessage()
    assert "content" in message and "link, text, title, url, words" in message  # what the item carries
    assert "(text, title) are hashed and sent to the extractor instead" in message
    assert "words is not text and left out" in message  # a number: an edit of it goes unnoticed
    assert "Set CONTENT_HASH_FIELDS" in message and "CONTENT_HASH_CONTENT_FIELD" in message
    next_run(cache)
    assert run(pipeline.process_item(item(link="https://a.com/y")))["status"] == "unchanged"  # a URL is no text
    next_run(cache)
    assert run(pipeline.process_item(item(text="Install it with uv.")))["status"] == "changed"  # the body
    next_run(cache)
    assert run(pipeline.process_item(item(text="Install it with uv.", title="Setup")))["status"] == "changed"
    assert len([r for r in caplog.records if r.levelname == "WARNING"]) == 1  # once a crawl


def test_an_item_of_text_fields_alone_is_said_once_as_information_and_a_list_is_named(build, caplog):
    caplog.set_level(logging.INFO)
    _, pipeline = build()

    def said(item):
        caplog.clear()
        pipeline.warned = False  # (said once a crawl: each item here as the first of a crawl)
        run(pipeline.process_item(item))
        (record,) = [r for r in caplog.records if "Items lack" in r.getMessage()]
        return record.levelname, record.getMessage()

    level, message = said({"url": "https://a.com/a", "title": "A", "text": "One."})
    assert level == "INFO" and "(text, title) are hashed" in message  # nothing goes unnoticed
    level, message = said({"url": "https://a.com/b", "title": "B", "paragraphs": ["One.", "Two."]})
    assert level == "WARNING" and "paragraphs is not text and left out" in message
    level, message = said({"url": "https://a.com/c"})
    assert level == "WARNING" and "(none) are hashed" in message


def test_with_the_fields_set_an_item_lacking_one_is_warned_about_and_hashed_as_set(build, caplog):
    crawler, pipeline = build(CONTENT_HASH_FIELDS=["title", "body"], CONTENT_HASH_CONTENT_FIELD="body")
    cache = cache_for(crawler)
    first = run(pipeline.process_item({"url": "https://a.com/a", "title": "A", "text": "One."}))
    assert cache.store.get_content(first["url_hash"])["text"] == "title: A"
    (warning,) = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert "lack the field(s) body" in warning and "carries text, title, url" in warning
    assert "an edit of a field not in CONTENT_HASH_FIELDS goes unnoticed" in warning
    next_run(cache)
    assert run(pipeline.process_item({"url": "https://a.com/a", "title": "A", "text": "Two."}))["status"] == (
        "unchanged"
    )


def test_the_outline_of_an_item_without_content_has_its_title_and_text(build):
    from crawler.extractors.outline import OutlineExtractor

    crawler, pipeline = build()
    store = cache_for(crawler).store
    item = run(pipeline.process_item({"url": "https://a.com/i", "title": "Install", "text": "Run pip install x."}))
    outline = OutlineExtractor().extract(item["url"], store.get_content(item["url_hash"])["text"])
    assert outline["title"] == "Install"
    assert outline["sections"] == [{"heading": "Install", "level": 1, "text": "Run pip install x."}]
    empty = run(pipeline.process_item({"url": "https://a.com/e", "title": "Empty", "text": " "}))
    assert store.get_content(empty["url_hash"])["text"] == ""  # no text to extract: not sent


def hashes_of_text(monkeypatch):
    """The calls of the ledger's content hash that covered the page's text."""
    from crawler.incremental import ledger as module

    calls = []
    real = module.content_hash

    def counting(fields, names):
        if "content" in set(names):
            calls.append(fields.get("content"))
        return real(fields, names)

    monkeypatch.setattr(module, "content_hash", counting)
    return calls


def test_a_page_saying_what_its_stored_content_says_is_not_hashed_again(build, monkeypatch):
    crawler, pipeline = build()
    calls = hashes_of_text(monkeypatch)
    first = run(pipeline.process_item(page()))
    assert len(calls) == 1
    cache = cache_for(crawler)
    for _ in range(2):
        next_run(cache)
        again = run(pipeline.process_item(page()))
        assert (again.status, again.content_hash) == ("unchanged", first.content_hash)
    assert len(calls) == 1  # the stored content's hash: the same text and title
    next_run(cache)
    assert run(pipeline.process_item(page(title="Guide 2"))).status == "changed"  # another title: hashed
    next_run(cache)
    assert run(pipeline.process_item(page(content="#  Guide\n\nText. "))).status == "changed"
    assert len(calls) == 3


def test_a_stored_hash_made_without_the_text_is_not_taken_for_one_with_it(build):
    crawler, pipeline = build(CONTENT_HASH_FIELDS=["title"])
    first = run(pipeline.process_item(page()))
    next_run(cache_for(crawler))
    pipeline.fields = ["title", "content"]  # the next crawl's settings: the text is hashed too
    again = run(pipeline.process_item(page()))
    assert again.content_hash != first.content_hash and again.status == "changed"


def test_a_spelling_unfolded_from_a_held_back_text_keeps_the_hash_of_the_text_it_is_given(build):
    """The index spelling folded on the directory's held-back text (its new converter's
    hash), then unfolded when the directory came with another text: it is recorded with
    the text stored, and with that text's hash, not the held-back one's."""
    crawler, pipeline = build()
    cache = cache_for(crawler)
    first = run(pipeline.process_item(converted(URLS_TEXT, OLD, source_unchanged=False)))
    next_run(cache)
    held = run(pipeline.process_item(converted(PLAIN_TEXT)))  # the new converter's text held back
    assert (held.status, held.content_hash) == ("unchanged", first.content_hash)
    next_run(cache)
    spelling = index_page("https://a.com/guide/index.html", PLAIN_TEXT)
    spelling.converter = NEW
    assert run(pipeline.process_item(spelling)).url_hash == first.url_hash  # folded on the held-back hash
    run(pipeline.process_item(converted("# Guide\n\nAnother text.", source_unchanged=False)))
    own = cache.store.find_page("https://a.com/guide/index.html")
    assert own is not None and own[0] != first.url_hash  # unfolded: a page of its own
    stored = cache.store.get_content(own[0])
    assert stored["text"] == URLS_TEXT and own[1]["content_hash"] == stored["content_hash"] == first.content_hash
