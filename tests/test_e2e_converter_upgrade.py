"""End-to-end: a new converter (or link mode) never re-extracts pages whose site did not
change unless asked (CONVERTER_UPGRADE), and link targets are part of the extractor's
input only with MARKDOWN_LINKS=urls."""

from __future__ import annotations

import contextlib
import json
import sqlite3
import subprocess

import pytest

from crawler.lib.pagetext import LEGACY_CONVERTER, converter_id
from crawler.lib.tokens import estimate_tokens
from tests.convert import html_bytes_to_markdown
from tests.crawl import ROOT, assert_ok, crawl_env, paths, run_crawl, scrapy_command
from tests.test_e2e_recrawl import ALL_PAGES

#: the revisit schedule: every page checked within a month replayed, none sampled
NO_REQUESTS = {"REVISIT_ENABLED": "True", "REVISIT_MIN_INTERVAL": "30", "REVISIT_SAMPLE": "0"}


def markdown(site, path, links):
    return html_bytes_to_markdown(site.render(path, site.pages[path]), site.url + path, links=links)


def pending_urls(cache):
    command = scrapy_command(["cache", "ls", "--converter-pending", "--json"], cache)
    proc = subprocess.run(command, cwd=ROOT, env=crawl_env(), capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return sorted(page["url"] for page in json.loads(proc.stdout))


def test_a_new_converter_re_extracts_only_when_asked_and_from_stored_responses(site, tmp_path):
    cache = tmp_path / "cache"
    first = run_crawl(site.url + "/", cache, settings={"MARKDOWN_LINKS": "urls"})
    assert_ok(first)
    assert paths(site, first.calls) == sorted(ALL_PAGES)
    # the pages whose markdown the text converter writes differently: those with links
    differ = sorted(p for p in ALL_PAGES if markdown(site, p, "urls") != markdown(site, p, "text"))
    assert differ == sorted(ALL_PAGES - {"/hidden.html"})
    tokens = sum(estimate_tokens(markdown(site, p, "text")) for p in differ)
    text_converter = converter_id("text")

    # the upgrade (here: another link mode), unchanged site: what it would cost, no call
    for args in ({"dry_run": "true"}, {}):
        kept = run_crawl(site.url + "/", cache, args=args)
        assert_ok(kept)
        assert kept.calls == []
        report = kept.report
        assert report["converter"] == {
            "id": text_converter,
            "upgrade": "keep",
            "pages_pending": len(differ),
            "tokens_pending": tokens,
            "pages_upgraded": 0,
        }
        assert (report["pages_unchanged"], report["pages_changed"]) == (len(ALL_PAGES), 0)
        assert (
            f"{len(differ)} pages' input differs under converter {text_converter} (~{tokens:,} tokens): "
            "-s CONVERTER_UPGRADE=apply"
        ) in kept.stderr
    assert kept.report["extraction_cache_hits"] == len(ALL_PAGES)
    assert paths(site, pending_urls(cache)) == differ

    # opted in, from the stored responses: not one page downloaded
    site.reset_log()
    applied = run_crawl(site.url + "/", cache, settings={"CONVERTER_UPGRADE": "apply", **NO_REQUESTS})
    assert_ok(applied)
    assert paths(site, applied.calls) == differ
    assert all(site.requests_for(p) == [] for p in ALL_PAGES)
    report = applied.report
    assert (report["pages_changed"], report["revisit"]["requests_saved"]) == (len(differ), len(ALL_PAGES))
    assert (report["converter"]["pages_upgraded"], report["converter"]["pages_pending"]) == (len(differ), 0)
    assert pending_urls(cache) == []

    after = run_crawl(site.url + "/", cache)
    assert_ok(after)
    assert after.calls == []
    assert (after.report["pages_unchanged"], after.report["converter"]["pages_pending"]) == (len(ALL_PAGES), 0)
    assert "differs under converter" not in after.stderr


@pytest.mark.parametrize(("links", "re_extracted"), [("text", []), ("urls", ["/", "/api.html"])])
def test_a_host_move_of_link_targets_re_extracts_only_when_urls_are_read(site, tmp_path, links, re_extracted):
    for path in ("/", "/api.html"):
        site.pages[path].extra_html = '<p>Read <a href="https://old.example/ref/#run">the reference</a>.</p>'
    cache = tmp_path / "cache"
    assert_ok(run_crawl(site.url + "/", cache, settings={"MARKDOWN_LINKS": links}))
    for path in ("/", "/api.html"):  # the pages are served again (new ETags), links to another host
        site.page(
            path,
            site.pages[path].title,
            *site.pages[path].paragraphs,
            links=site.pages[path].links,
            extra_html='<p>Read <a href="https://new.example/ref/#run">the reference</a>.</p>',
        )
    site.reset_log()
    moved = run_crawl(site.url + "/", cache, settings={"MARKDOWN_LINKS": links})
    assert_ok(moved)
    assert site.requests_for("/") == [200]  # downloaded again: the source changed
    assert paths(site, moved.calls) == re_extracted
    assert moved.report["pages_changed"] == len(re_extracted)
    assert moved.report["converter"]["pages_pending"] == 0


def test_a_cache_older_than_converter_ids_counts_as_the_old_converter(site, tmp_path):
    cache = tmp_path / "cache"
    assert_ok(run_crawl(site.url + "/", cache, settings={"MARKDOWN_LINKS": "urls"}))
    with contextlib.closing(sqlite3.connect(cache / "cache.sqlite")) as db, db:
        db.execute("UPDATE pages SET record = json_remove(record, '$.converter')")  # as older caches recorded
    upgraded = run_crawl(site.url + "/", cache)
    assert_ok(upgraded)
    assert upgraded.calls == []
    assert upgraded.report["converter"]["pages_pending"] == len(ALL_PAGES) - 1  # /hidden.html reads the same
    with contextlib.closing(sqlite3.connect(cache / "cache.sqlite")) as db:
        records = [json.loads(value) for (value,) in db.execute("SELECT record FROM pages")]
    assert sorted((r["converter"], r.get("converter_pending")) for r in records) == sorted(
        [(LEGACY_CONVERTER, converter_id("text"))] * (len(ALL_PAGES) - 1) + [(converter_id("text"), None)]
    )


@pytest.mark.parametrize("validators", ["none", "etag-changing"])
def test_a_server_without_usable_validators_re_extracts_nothing_either(make_site, tmp_path, validators):
    """No 304 and never the same bytes (a nonce, a CSRF token, a timestamp on every
    response): the page stored before, read with the new converter, says whether the
    site changed or only the converter did."""
    site = make_site(validators)  # with per-request noise
    cache = tmp_path / "cache"
    assert_ok(run_crawl(site.url + "/", cache, settings={"MARKDOWN_LINKS": "urls"}))
    upgraded = run_crawl(site.url + "/", cache)
    assert_ok(upgraded)
    assert upgraded.calls == []
    assert upgraded.report["converter"]["pages_pending"] == len(ALL_PAGES) - 1  # all but the page without links
    site.edit("/guide/install.html", "Run pip install example==3.0 to install it.")
    edited = run_crawl(site.url + "/", cache)
    assert_ok(edited)
    assert paths(site, edited.calls) == ["/guide/install.html"]  # a real change: the new converter's text
    assert edited.report["converter"]["pages_pending"] == len(ALL_PAGES) - 2
    assert run_crawl(site.url + "/", cache).calls == []


def test_an_old_cache_of_a_site_linking_index_file_names_re_extracts_nothing(make_site, tmp_path):
    """Sphinx links every section as …/index.html: a cache from when index file names
    were folded (and the old converter) holds that page as /guide, recorded and its
    response stored from /guide/index.html. The first crawl after the upgrade asks for
    it with those validators: a 304, the page held back, no call, nothing removed."""
    from crawler.cache.sqlite import SqliteDocStore
    from crawler.identity import PageIdentity

    site = make_site("etag")
    for page in site.pages.values():
        page.links = [link + "index.html" if link == "/guide/" else link for link in page.links]
    cache = tmp_path / "cache"
    assert_ok(run_crawl(site.url + "/", cache, settings={"MARKDOWN_LINKS": "urls"}))
    identity = PageIdentity()
    own, folded = identity.url_hash(site.url + "/guide/index.html"), identity.url_hash(site.url + "/guide")
    store = SqliteDocStore(cache)  # moved where the folding rule kept it
    record, content, response = store.get_page(own), store.get_content(own), store.get_response(own)
    assert record is not None and content is not None and response is not None
    assert response.url == site.url + "/guide/index.html"
    store.put_page(folded, {**record, "canonical_url": site.url + "/guide"})
    store.put_content(folded, content)
    store.put_response(folded, response)
    store.extraction_path(own).rename(store.extraction_path(folded))
    store.delete_page(own)
    store.commit()
    store.close()

    site.reset_log()
    upgraded = run_crawl(site.url + "/", cache)
    assert_ok(upgraded)
    assert upgraded.calls == []
    assert site.requests_for("/guide/index.html") == [304]  # the validators stored under /guide
    report = upgraded.report
    assert (report["pages_removed"], report["pages_new"], report["converter"]["pages_pending"]) == (0, 0, 5)
    assert run_crawl(site.url + "/", cache).calls == []
