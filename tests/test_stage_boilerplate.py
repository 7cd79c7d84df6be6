import asyncio

import pytest
from scrapy.exceptions import NotConfigured
from scrapy.utils.misc import build_from_crawler

from crawler.cache import cache_for
from crawler.items import PageItem
from crawler.lib.boilerplate import Params
from crawler.lib.hashing import sha256_hex
from crawler.pipelines.content_hash import ContentHashPipeline
from crawler.stages import PageViews
from crawler.stages.boilerplate import (
    BoilerplateStage,
    analyse_domain,
    format_table,
    pages_by_domain,
    previous_decisions,
)
from tests.helpers import next_run

BANNER = "We use cookies to give you the best experience. By continuing you accept our cookie policy."
TOPICS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet", "kilo", "lima"]


def add(pipeline, url, *blocks):
    item = PageItem(url=url, canonical_url=url, title="T", content="\n\n".join(blocks))
    return asyncio.run(pipeline.process_item(item))


def own(n):
    return f"Page about {TOPICS[n % 12]} and {TOPICS[(n * 5 + 1) % 12]}, with text nobody else has at all."


def analyse(store, domain, hashes, params, **kwargs):
    """One domain's analysis, its cleaned inputs written, as the stage does."""
    pages = PageViews(store)
    record = analyse_domain(pages, store, domain, hashes, params, **kwargs)
    pages.flush()
    return record


def gather(stage, cache):
    """The stage on the crawl's domains, as the runner runs it."""
    pages = PageViews(cache.store)
    stage.analyse(cache, pages, pages_by_domain(pages, cache.run.domains))


@pytest.fixture
def setup(make_crawler):
    def factory(**settings):
        crawler = make_crawler(settings)
        return crawler, build_from_crawler(BoilerplateStage, crawler), build_from_crawler(ContentHashPipeline, crawler)

    return factory


def test_not_configured_when_disabled(make_crawler):
    with pytest.raises(NotConfigured, match="BOILERPLATE_ENABLED"):
        build_from_crawler(BoilerplateStage, make_crawler({"BOILERPLATE_ENABLED": False}))


def test_wrong_settings_are_refused(make_crawler):
    with pytest.raises(ValueError, match="BOILERPLATE_THRESHOLD_PCT"):
        build_from_crawler(BoilerplateStage, make_crawler({"BOILERPLATE_THRESHOLD_PCT": 0}))


def test_cleans_crawled_domains_only_and_is_idempotent(setup):
    crawler, extension, pipeline = setup()
    for n in range(6):
        add(pipeline, f"https://a.com/p{n}", f"# P{n}", own(n), BANNER)
        add(pipeline, f"https://b.com/p{n}", f"# P{n}", own(n), BANNER)
    cache = cache_for(crawler)
    cache.run.domains.discard("b.com")  # b.com was not crawled this run
    gather(extension, cache)
    store = cache.store
    grouped = pages_by_domain(PageViews(store))
    a_pages = [store.get_content(h) for h in grouped["a.com"]]
    assert all(BANNER not in c["clean"] and BANNER in c["text"] for c in a_pages)  # original kept
    assert all("clean" not in store.get_content(h) for h in grouped["b.com"])
    assert crawler.stats.get_value("boilerplate/pages_cleaned") == 6
    assert crawler.stats.get_value("boilerplate/domains_analysed") == 1
    before = store.get_domain("a.com")
    again = analyse(store, "a.com", grouped["a.com"], Params(), write=True)
    assert [store.get_content(h) for h in grouped["a.com"]] == a_pages  # idempotent
    assert again["hashes"] == before["hashes"]
    assert again["inputs_changed"] == 6  # none of them extracted yet


def test_the_analysis_keeps_the_hosts_trust_as_stored_when_it_writes(setup, monkeypatch):
    """A crawl process adds its observations to the host's trust between the stage's
    read of the domain record and its write: they are kept."""
    crawler, _, pipeline = setup()
    hashes = [add(pipeline, f"https://a.com/p{n}", own(n), BANNER).url_hash for n in range(6)]
    store = cache_for(crawler).store
    store.put_domain("a.com", {"revisit": {"streak": 1, "agree": 1}})
    read = store.get_domain

    def read_then_another_process_writes(domain):
        record = read(domain)
        monkeypatch.setattr(store, "get_domain", read)
        store.update_domain(domain, lambda now: {**now, "revisit": {"streak": 2, "agree": 2}})
        return record

    monkeypatch.setattr(store, "get_domain", read_then_another_process_writes)
    analyse(store, "a.com", hashes, Params(), write=True)
    record = store.get_domain("a.com")
    assert record["revisit"] == {"streak": 2, "agree": 2} and record["pages_analysed"] == 6


def test_small_domains_are_left_alone_and_stale_cleaning_dropped(setup):
    crawler, extension, pipeline = setup()
    hashes = [add(pipeline, f"https://a.com/p{n}", own(n), BANNER).url_hash for n in range(5)]
    gather(extension, cache_for(crawler))
    store = cache_for(crawler).store
    assert "clean" in store.get_content(hashes[0])
    record = analyse(store, "a.com", hashes[:4], Params(), write=True)  # now 4 pages
    assert record["skipped"] and record["inputs_changed"] == 4
    assert "clean" not in store.get_content(hashes[0])


def test_report_totals(setup):
    crawler, extension, pipeline = setup()
    for n in range(5):
        add(pipeline, f"https://a.com/p{n}", own(n), BANNER)
    add(pipeline, "https://small.org/x", own(1))
    gather(extension, cache_for(crawler))
    report = {}
    extension.report(report)
    totals = report["boilerplate"]
    assert (totals["domains_analysed"], totals["domains_skipped"], totals["pages_analysed"]) == (1, 1, 5)
    assert totals["domains"]["a.com"]["boilerplate_pct"] > 0
    assert totals["domains"]["small.org"]["skipped"] is True


#: a valid DNS name of 243 characters (labels of at most 63)
LONG_HOST = ".".join(["a" * 63, "b" * 63, "c" * 63, "d" * 47, "com"])


def test_a_243_character_host_name_gets_its_domain_record(setup):
    """Its record used to be boilerplate/<host>.json: "File name too long"."""
    assert len(LONG_HOST) == 243
    crawler, extension, pipeline = setup()
    for n in range(6):
        add(pipeline, f"https://{LONG_HOST}/p{n}", f"# P{n}", own(n), BANNER)
    cache = cache_for(crawler)
    gather(extension, cache)
    store = cache.store
    assert store.get_domain(LONG_HOST)["domain"] == LONG_HOST
    [path] = (store.directory / "boilerplate").glob("*.json")
    assert len(path.name) == 64 + len(".json")
    assert all(BANNER not in store.get_content(h)["clean"] for h in pages_by_domain(PageViews(store))[LONG_HOST])
    assert crawler.stats.get_value("boilerplate/domains_analysed") == 1


def test_one_domain_failing_never_stops_the_others_and_is_counted(setup, caplog):
    crawler, extension, pipeline = setup()
    for n in range(5):
        add(pipeline, f"https://a.com/p{n}", own(n), BANNER)
        add(pipeline, f"https://b.com/p{n}", own(n), BANNER)
    cache = cache_for(crawler)
    put_domain = cache.store.put_domain

    def failing(domain, record):
        if domain == "a.com":
            raise OSError(36, "File name too long")
        put_domain(domain, record)

    cache.store.put_domain = failing
    gather(extension, cache)
    assert cache.store.get_domain("b.com") is not None  # the domain after it was analysed
    assert crawler.stats.get_value("boilerplate/errors") == 1
    assert "Boilerplate analysis of a.com failed" in caplog.text
    report = {"errors": 0}
    extension.report(report)
    assert report["errors"] == 1
    assert report["boilerplate"]["errors"] == {"a.com": "OSError: [Errno 36] File name too long"}


NOTES = "Version 3.0 drops Python 3.8 and renames the setting TIMEOUT to READ_TIMEOUT."


def test_a_page_cleaning_would_empty_is_kept_whole_counted_and_listed(setup):
    crawler, extension, pipeline = setup()
    for n in range(6):
        add(pipeline, f"https://a.com/p{n}", f"# P{n}", own(n), NOTES)
    latest = add(pipeline, "https://a.com/to-3-0", "# Upgrading to 3.0", "## Changes", NOTES).url_hash
    cache = cache_for(crawler)
    gather(extension, cache)
    assert "clean" not in cache.store.get_content(latest)  # its text, whole
    assert all(
        NOTES not in cache.store.get_content(h).get("clean", NOTES)
        for h in pages_by_domain(PageViews(cache.store))["a.com"]
        if h != latest
    )
    assert crawler.stats.get_value("boilerplate/pages_emptied") == 1
    record = cache.store.get_domain("a.com")
    assert (record["pages_emptied"], record["pages_emptied_urls"]) == (1, ["https://a.com/to-3-0"])
    assert "1 page(s) kept whole: cleaning would have left no text" in format_table(extension.records, Params())
    report = {}
    extension.report(report)
    assert report["boilerplate"]["pages_emptied"] == 1
    assert report["boilerplate"]["domains"]["a.com"]["pages_emptied_urls"] == ["https://a.com/to-3-0"]


def test_records_of_version_1_load_and_content_is_remembered():
    assert previous_decisions(None) == ({}, {})
    v1 = {"hashes": ["aa"], "section_hashes": {"blog": ["bb"]}, "blocks": [{"hash": "aa", "pages": 9, "text": "x"}]}
    assert previous_decisions(v1) == ({"": {"aa"}, "blog": {"bb"}}, {})
    v2 = {**v1, "version": 2, "blocks": [
        {"hash": "aa", "section": None, "treated": "boilerplate"},
        {"hash": "cc", "section": None, "treated": "content"},
        {"hash": "dd", "section": "blog", "treated": "content"},
    ]}  # fmt: skip
    assert previous_decisions(v2) == ({"": {"aa"}, "blog": {"bb"}}, {"": {"cc"}, "blog": {"dd"}})
    assert previous_decisions({**v2, "skipped": True}) == ({}, {})


def test_a_block_rising_past_the_threshold_waits_for_threshold_plus_hysteresis(setup):
    crawler, _, pipeline = setup()
    hashes = []
    for n in range(10):
        hashes.append(add(pipeline, f"https://a.com/p{n}", f"# P{n}", own(n), *([BANNER] if n < 6 else [])).url_hash)
    store = cache_for(crawler).store
    first = analyse(store, "a.com", hashes, Params(), write=True)
    assert [(b["treated"], b["why"].partition(":")[0]) for b in first["blocks"]] == [("content", "below threshold")]
    for share in (7, 8):  # 70%: held as content, no page's input changes; 80%: boilerplate
        next_run(cache_for(crawler))  # a later crawl, in which one more page has it
        n = share - 1
        add(pipeline, f"https://a.com/p{n}", f"# P{n}", own(n), BANNER)
        record = analyse(store, "a.com", hashes, Params(), write=True)
        assert [(b["treated"], b["pages"]) for b in record["blocks"]] == [
            ("content" if share == 7 else "boilerplate", share)
        ]
        assert record["pages_cleaned"] == (0 if share == 7 else 8)


def test_after_the_upgrade_an_unchanged_extracted_page_keeps_its_input(setup):
    crawler, _, pipeline = setup()

    def dated(n, day):
        return add(pipeline, f"https://a.com/p{n}", f"# P{n}", f"Last updated: May {day}, 2025", own(n)).url_hash

    hashes = [dated(n, n + 1) for n in range(6)]
    store = cache_for(crawler).store
    for url_hash in hashes[:5]:  # extracted by the rule by repetition alone: the text whole
        record = store.get_page(url_hash)
        record["extraction"] = {"input_hash": sha256_hex(store.get_content(url_hash)["text"])}
        store.put_page(url_hash, record)
    store.put_domain("a.com", {"domain": "a.com", "skipped": False, "hashes": [], "blocks": []})  # version 1
    first = analyse(store, "a.com", hashes, Params(), write=True)
    assert (first["pages_held"], first["inputs_changed"], first["pages_cleaned"]) == (5, 1, 1)
    assert [store.get_content(h).get("clean_rule") for h in hashes] == [1, 1, 1, 1, 1, None]
    assert "Last updated" not in store.get_content(hashes[5])["clean"]  # never extracted: the new rule
    again = analyse(store, "a.com", hashes, Params(), write=True)  # a version 2 record now
    assert (again["pages_held"], again["inputs_changed"]) == (5, 1)
    next_run(cache_for(crawler))
    dated(0, 30)  # its text changes: stored anew, the new rule applies
    after = analyse(store, "a.com", hashes, Params(), write=True)
    assert (after["pages_held"], after["inputs_changed"]) == (4, 2)
    assert store.get_content(hashes[0])["clean"] == f"# P0\n\n{own(0)}"


def test_after_the_upgrade_text_given_back_waits_for_a_change_or_apply(setup):
    """Notes between each page's own text were stripped by repetition alone: the new
    rule gives them back, but an extracted page whose text did not change keeps its
    input (a better input is not paid for silently) until it changes, or at once with
    CONVERTER_UPGRADE=apply (``hold=False``)."""
    crawler, _, pipeline = setup()
    hashes = [
        add(pipeline, f"https://a.com/p{n}", f"# P{n}", own(n), NOTES, own(n + 6) + " The end.").url_hash
        for n in range(6)
    ]
    store = cache_for(crawler).store
    old = analyse(store, "a.com", hashes, Params(position=False), write=True)
    assert old["pages_cleaned"] == 6
    for url_hash in hashes:
        record = store.get_page(url_hash)
        record["extraction"] = {"input_hash": sha256_hex(store.get_content(url_hash)["clean"])}
        store.put_page(url_hash, record)
    v1 = {k: v for k, v in store.get_domain("a.com").items() if k != "version"}
    store.put_domain("a.com", v1)
    kept = analyse(store, "a.com", hashes, Params(), write=True)
    assert (kept["pages_held"], kept["inputs_changed"], kept["pages_cleaned"]) == (6, 0, 6)
    assert all(NOTES not in store.get_content(h)["clean"] for h in hashes)
    again = analyse(store, "a.com", hashes, Params(), write=True)  # a version 2 record now: still held
    assert (again["pages_held"], again["inputs_changed"]) == (6, 0)
    new = analyse(store, "a.com", hashes, Params(), write=True, hold=False)
    assert (new["pages_held"], new["inputs_changed"], new["pages_cleaned"]) == (0, 6, 0)
    assert all("clean" not in store.get_content(h) for h in hashes)  # the notes are back


def counting_analyses(monkeypatch):
    from crawler.stages import boilerplate as module

    calls = []
    real = module.analyse_pages

    def counting(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, "analyse_pages", counting)
    return calls


NOTE = "Note: this release changes the configuration format, read the upgrade guide first."


def domain_pages(n, edited=None, title="T", noted=0):
    """``n`` pages of a.com (docs and blog sections) with a banner; page ``edited`` says
    more; the first ``noted`` pages end with a shared note."""
    pages = []
    for i in range(n):
        section = "docs" if i % 2 else "blog"
        extra = ["An edit of this page."] if i == edited else []
        extra += [NOTE] if i < noted else []
        pages.append(
            (f"https://a.com/{section}/p{i}", f"# P{i}", own(i), *extra, f"Section {section} footer text.", BANNER)
        )
    return pages


def contents_read(monkeypatch, store):
    """The keys whose content the store is asked for from now on."""
    keys = []
    get_contents, get_content = store.get_contents, store.get_content

    def many(url_hashes):
        url_hashes = list(url_hashes)
        keys.extend(url_hashes)
        return get_contents(url_hashes)

    def one(url_hash):
        keys.append(url_hash)
        return get_content(url_hash)

    monkeypatch.setattr(store, "get_contents", many)
    monkeypatch.setattr(store, "get_content", one)
    return keys


class DomainOnly:
    """A store that keeps no statistics (no BoilerplateStore): the full pass."""

    def __init__(self, store):
        self.get_domain, self.update_domain = store.get_domain, store.update_domain


def full_pass(cache, domain):
    """The full pass over the domain's pages in ascending key order, written, as the
    stage made it before the statistics were kept."""
    pages = PageViews(cache.store)
    hashes = sorted(pages_by_domain(pages)[domain])
    record = analyse_domain(pages, DomainOnly(cache.store), domain, hashes, Params(), write=True)
    pages.flush()
    cache.store.commit()
    return record


def comparable(record):
    return {k: v for k, v in record.items() if k not in ("analysed_at", "pages_digest", "texts_read")}


def test_an_unchanged_recrawl_reads_no_text_and_keeps_the_analysis(setup, monkeypatch):
    crawler, stage, pipeline = setup()
    for url, *blocks in domain_pages(10):
        add(pipeline, url, *blocks)
    cache = cache_for(crawler)
    gather(stage, cache)
    store = cache.store
    first = store.get_domain("a.com")
    calls = counting_analyses(monkeypatch)
    next_run(cache)
    hashes = [add(pipeline, url, *blocks).url_hash for url, *blocks in domain_pages(10)]  # unchanged
    contents = [store.get_content(h) for h in hashes]
    read = contents_read(monkeypatch, store)
    stats_before = store.get_block_stats("a.com")
    written = []
    put_block_stats = store.put_block_stats
    monkeypatch.setattr(store, "put_block_stats", lambda *args: written.append(args) or put_block_stats(*args))
    stage.records.clear()
    gather(stage, cache)
    assert calls == [] and read == []  # no full pass, no text read
    assert written == [] and store.get_block_stats("a.com") == stats_before  # the same: not written again
    kept = stage.records[-1]
    assert comparable(store.get_domain("a.com")) == comparable(first)
    assert [store.get_content(h) for h in hashes] == contents
    assert kept["inputs_changed"] == 10 and crawler.stats.get_value("boilerplate/inputs_changed") == 20


@pytest.mark.parametrize("change", ["edit", "new page", "removed page", "note", "params"])
def test_a_change_reads_what_changed_and_gives_what_a_full_pass_gives(setup, make_crawler, tmp_path, change):
    """Two caches, the same pages: one analysed from the statistics kept, the other by
    the full pass in key order; the same records and cleaned contents, the first having
    read the texts of the pages that changed only."""
    crawler, stage, pipeline = setup()
    full_crawler = make_crawler({"EXTRACTED_DOCS_DIR": str(tmp_path / "full")})
    full_pipeline = build_from_crawler(ContentHashPipeline, full_crawler)
    cache, full = cache_for(crawler), cache_for(full_crawler)
    n = 30
    for url, *blocks in domain_pages(n, noted=5):
        add(pipeline, url, *blocks)
        add(full_pipeline, url, *blocks)
    gather(stage, cache)
    full_pass(full, "a.com")
    assert comparable(cache.store.get_domain("a.com")) == comparable(full.store.get_domain("a.com"))
    next_run(cache)
    next_run(full)
    # (a note on a 6th page: its count crosses own_below, the pages holding it located again)
    now = domain_pages(
        n + 1 if change == "new page" else n, edited=3 if change == "edit" else None, noted=6 if change == "note" else 5
    )
    hashes = []
    for url, *blocks in now:
        hashes.append(add(pipeline, url, *blocks).url_hash)
        add(full_pipeline, url, *blocks)
    if change == "removed page":  # as a crawl marks a page gone
        for store in (cache.store, full.store):
            store.put_page(hashes[5], {**store.get_page(hashes[5]), "status": "removed"})
            store.commit()
        del hashes[5]
    if change == "params":
        stage.params = Params(threshold_pct=0.8)
    read = contents_read(pytest.MonkeyPatch(), cache.store)
    stage.records.clear()
    gather(stage, cache)
    record = stage.records[-1]
    if change == "params":
        full.store.put_domain("a.com", {})  # (the full pass of other parameters: no previous decision)
        cache_record = cache.store.get_domain("a.com")
        assert cache_record["params"]["threshold_pct"] == 0.8
        assert record["texts_read"] >= n  # made again
        return
    if change == "removed page":  # no text, but of the pages whose text samples a block it held
        assert len(set(read)) <= 2 and record["texts_read"] <= 2
    else:
        expected = {"edit": hashes[3:4], "new page": hashes[n:], "note": hashes[5:6]}[change]
        # (the note now on own_below pages: its text sampled from its second page, read)
        sampled = 1 if change == "note" else 0
        assert set(expected) <= set(read) and len(set(read)) == record["texts_read"] <= 1 + sampled
    full_record = full_pass(full, "a.com")
    assert comparable(cache.store.get_domain("a.com")) == comparable(full.store.get_domain("a.com"))
    assert record["pages_analysed"] == full_record["pages_analysed"] == len(hashes)
    # (each cache's pipeline stamped its own stored_at: a second may pass between the two)
    assert [unstamped(cache.store.get_content(h)) for h in hashes] == [
        unstamped(full.store.get_content(h)) for h in hashes
    ]
    assert cache.store.get_signatures(hashes).keys() == set(hashes)


def unstamped(content):
    return {key: value for key, value in content.items() if key != "stored_at"}


def test_statistics_that_cannot_be_read_are_made_again_nothing_lost(setup, caplog):
    crawler, stage, pipeline = setup()
    hashes = [add(pipeline, url, *blocks).url_hash for url, *blocks in domain_pages(10)]
    cache = cache_for(crawler)
    gather(stage, cache)
    store = cache.store
    first, contents = store.get_domain("a.com"), [store.get_content(h) for h in hashes]
    store.put_block_stats("a.com", b"BLKSTATS\xff\xff\xff\x7fgarbage")
    stage.records.clear()
    gather(stage, cache)
    assert "cannot be read" in caplog.text and stage.records[-1]["texts_read"] == 10
    assert comparable(store.get_domain("a.com")) == comparable(first)
    assert [store.get_content(h) for h in hashes] == contents
    assert store.get_block_stats("a.com").startswith(b"BLKSTATS")


def test_signatures_that_disagree_with_the_statistics_make_them_again(setup, caplog):
    crawler, stage, pipeline = setup()
    hashes = [add(pipeline, url, *blocks).url_hash for url, *blocks in domain_pages(10)]
    cache = cache_for(crawler)
    gather(stage, cache)
    store = cache.store
    first = store.get_domain("a.com")
    store.delete_signatures(hashes[:1])  # (a signature lost: the page is read again)
    stage.records.clear()
    gather(stage, cache)
    assert "made again" in caplog.text and stage.records[-1]["texts_read"] == 10
    assert comparable(store.get_domain("a.com")) == comparable(first)


def test_a_deleted_page_loses_its_signature(setup):
    crawler, stage, pipeline = setup()
    hashes = [add(pipeline, url, *blocks).url_hash for url, *blocks in domain_pages(10)]
    cache = cache_for(crawler)
    gather(stage, cache)
    store = cache.store
    assert len(store.get_signatures(hashes)) == 10
    store.delete_page(hashes[0])
    assert len(store.get_signatures(hashes)) == 10  # at the commit
    store.commit()
    assert set(store.get_signatures(hashes)) == set(hashes[1:])
