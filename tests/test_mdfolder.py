"""MarkdownFolder (crawler.mdfolder): the cache's pages as markdown files, written whole
or for a run's changes, on a real store; only inside its directory, only its own files
deleted, a file written only when its bytes change."""

from __future__ import annotations

import hashlib
import os
import re

import pytest

from crawler.cache.lock import FileLock
from crawler.cache.sqlite import SqliteDocStore
from crawler.identity import page_key
from crawler.lib.mdfiles import index_entries, page_file
from crawler.lib.urls import canonical_url, url_domain
from crawler.mdfolder import MarkdownFolder
from tests.helpers import export_stamps, export_tree

SITE = "http://127.0.0.1:8000"
NOW = "2026-01-01T00:00:00Z"


@pytest.fixture
def store(tmp_path):
    opened = SqliteDocStore(tmp_path / "cache")
    yield opened
    opened.close()


def put(store, path, text, *, title="Title", status="new", changed=NOW):
    """A page recorded with ``text`` as its markdown; its url_hash."""
    url = SITE + path
    canonical = canonical_url(url)
    url_hash = page_key(canonical)
    chash = hashlib.sha256(text.encode()).hexdigest()
    store.put_page(
        url_hash,
        {
            "url": url,
            "canonical_url": canonical,
            "domain": url_domain(url),
            "status": status,
            "content_hash": chash,
            "first_seen": NOW,
            "last_seen": changed,
            "last_changed": changed,
            "run_id": "r1",
            "title": title,
        },
    )
    store.put_content(url_hash, {"url": url, "text": text, "fields": {}, "content_hash": chash, "stored_at": changed})
    store.commit()
    return url_hash


def change(store, url_hash, status):
    record = store.get_page(url_hash)
    return {"url": record["url"], "url_hash": url_hash, "status": status}


@pytest.fixture
def site(store):
    """Four pages with text, one without, one removed: their url_hashes by path."""
    return {
        "/": put(store, "/", "# Home\n\nWelcome."),
        "/guide/": put(store, "/guide/", "# Guide\n\nRead it."),
        "/guide/install.html": put(store, "/guide/install.html", "# Install\n\npip install it", title="Install"),
        "/api.html?v=2": put(store, "/api.html?v=2", "# API", title="API [v2]"),
        "/empty.html": put(store, "/empty.html", "  \n"),
        "/gone.html": put(store, "/gone.html", "# Gone", status="removed"),
    }


def test_every_live_page_with_text_is_a_file_its_text_after_the_front_matter(store, site, tmp_path):
    out = tmp_path / "md"
    done = MarkdownFolder(out).export_all(store)
    files = export_tree(out)
    install = store.get_page(site["/guide/install.html"])
    assert files["127.0.0.1+8000/guide/install.md"].decode() == page_file(install, "# Install\n\npip install it")
    assert {"127.0.0.1+8000/index.md", "127.0.0.1+8000/guide/index.md"} <= set(files)
    api = [path for path in files if path.startswith("127.0.0.1+8000/api~")]
    assert len(api) == 1 and files[api[0]].endswith(b"\n---\n# API\n")
    assert not any("empty" in path or "gone" in path for path in files)  # no text, removed: no file
    entries = index_entries(files["index.md"].decode())
    assert sorted(entries) == sorted(path for path in files if path != "index.md")
    assert entries[api[0]] == ("API [v2]", SITE + "/api.html?v=2")
    assert (done.pages, done.written, done.unchanged, done.removed, done.without_text) == (4, 4, 0, 0, 1)
    assert (out.stat().st_mode & 0o777, os.stat(out / "index.md").st_mode & 0o777) == (0o700, 0o600)


def test_an_export_again_writes_nothing_that_did_not_change(store, site, tmp_path):
    out = tmp_path / "md"
    MarkdownFolder(out).export_all(store)
    before = export_stamps(out)
    done = MarkdownFolder(out).export_all(store)
    assert export_stamps(out) == before
    assert (done.written, done.unchanged, done.removed) == (0, 4, 0)


def test_the_front_matter_is_the_stored_text_s_a_record_moved_by_other_things_rewrites_nothing(store, site, tmp_path):
    out = tmp_path / "md"
    MarkdownFolder(out).export_all(store)
    before = export_stamps(out)
    url_hash = site["/guide/"]
    record = store.get_page(url_hash)  # seen again under another spelling, extracted again
    store.put_page(url_hash, {**record, "url": SITE + "/guide", "last_changed": "2026-02-02T00:00:00Z"})
    store.commit()
    assert MarkdownFolder(out).export_all(store).written == 0 and export_stamps(out) == before
    text = export_tree(out)["127.0.0.1+8000/guide/index.md"].decode()
    assert f'url: "{SITE}/guide/"' in text and f'last_changed: "{NOW}"' in text


def test_the_files_of_pages_gone_are_deleted_and_their_folders_with_them_but_nothing_else(store, site, tmp_path):
    out = tmp_path / "md"
    MarkdownFolder(out).export_all(store)
    mine = {"notes.md": b"# my notes\n", "127.0.0.1+8000/guide/notes.md": b"---\ntitle: mine\n---\n", "a.txt": b"x"}
    for path, data in mine.items():
        (out / path).write_bytes(data)
    leftover = out / "127.0.0.1+8000" / "deep" / ".x.md.abc123.mdtmp"  # a killed export's
    leftover.parent.mkdir()
    leftover.write_bytes(b"half")
    put(store, "/guide/install.html", "# Install", status="removed")
    put(store, "/guide/", "", title="Guide")  # its text gone
    done = MarkdownFolder(out).export_all(store)
    files = export_tree(out)
    assert "127.0.0.1+8000/guide/install.md" not in files and "127.0.0.1+8000/guide/index.md" not in files
    assert {path: files[path] for path in mine} == mine  # not written by the export: kept
    assert not (out / "127.0.0.1+8000" / "deep").exists()  # the leftover, and the folder it emptied
    assert done.removed == 2
    put(store, "/guide/notes.html", "# Notes")  # (a page beside the user's file)
    (out / "127.0.0.1+8000/guide/notes.md").unlink()
    store.put_page(site["/api.html?v=2"], {**store.get_page(site["/api.html?v=2"]), "status": "removed"})
    MarkdownFolder(out).export_all(store)
    assert sorted(index_entries(export_tree(out)["index.md"].decode())) == [
        "127.0.0.1+8000/guide/notes.md",
        "127.0.0.1+8000/index.md",
    ]


def test_a_run_s_changes_touch_only_their_files_and_leave_the_tree_a_whole_export_makes(store, site, tmp_path):
    out = tmp_path / "md"
    MarkdownFolder(out).export_all(store)
    before = export_stamps(out)
    put(
        store, "/guide/install.html", "# Install\n\npip install it==2", status="changed", changed="2026-01-02T00:00:00Z"
    )
    gone = put(store, "/", "# Home", status="removed")
    new = put(store, "/faq/", "# FAQ", title="FAQ")
    emptied = put(store, "/guide/", "", status="changed")
    changes = [
        change(store, site["/guide/install.html"], "changed"),
        change(store, gone, "removed"),
        change(store, new, "new"),
        change(store, emptied, "changed"),
    ]
    done = MarkdownFolder(out).export_changes(store, changes)
    after = export_stamps(out)
    untouched = "127.0.0.1+8000/" + next(p.split("/", 1)[1] for p in before if "/api~" in p)
    assert after[untouched] == before[untouched]
    assert after["127.0.0.1+8000/guide/install.md"] != before["127.0.0.1+8000/guide/install.md"]
    assert "127.0.0.1+8000/index.md" not in after and "127.0.0.1+8000/guide/index.md" not in after
    assert (done.written, done.removed, done.without_text, done.pages) == (2, 2, 1, 3)
    whole = tmp_path / "whole"
    MarkdownFolder(whole).export_all(store)
    assert export_tree(out) == export_tree(whole)


def test_the_first_run_without_an_index_writes_every_page(store, site, tmp_path):
    out = tmp_path / "md"
    done = MarkdownFolder(out).export_changes(store, [])
    whole = tmp_path / "whole"
    MarkdownFolder(whole).export_all(store)
    assert done.pages == 4 and export_tree(out) == export_tree(whole)


def test_a_directory_that_cannot_be_the_export_s_is_said_and_nothing_is_written(store, site, tmp_path):
    a_file = tmp_path / "a-file"
    a_file.write_text("x")
    for directory, said in (
        (a_file, f"{a_file} is not a directory"),
        (a_file / "md", f"{a_file} is not a directory"),
    ):
        with pytest.raises(ValueError, match=re.escape(said)):
            MarkdownFolder(directory).export_all(store)
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    (theirs / "index.md").write_text("# My index\n")
    with pytest.raises(ValueError, match=r"holds an index\.md this export did not write"):
        MarkdownFolder(theirs).export_all(store)
    assert a_file.read_text() == "x" and [p.name for p in theirs.iterdir()] == ["index.md"]


def test_one_export_at_a_time(store, site, tmp_path):
    out = tmp_path / "md"
    out.mkdir()
    held = FileLock(out / ".lock")
    held.acquire("pid 4242")
    try:
        with pytest.raises(ValueError, match=r"being written by another process \(pid 4242\)"):
            MarkdownFolder(out).export_all(store)
    finally:
        held.release()
    assert MarkdownFolder(out).export_all(store).pages == 4


def test_nothing_is_written_through_a_link_out_of_the_directory(store, site, tmp_path):
    out, elsewhere = tmp_path / "md", tmp_path / "elsewhere"
    out.mkdir()
    elsewhere.mkdir()
    (out / "127.0.0.1+8000").symlink_to(elsewhere)
    with pytest.raises(ValueError, match="leads out of"):
        MarkdownFolder(out).export_all(store)
    assert list(elsewhere.iterdir()) == []


def test_a_relative_directory_is_the_current_directory_s(store, site, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    folder = MarkdownFolder("md")
    assert folder.root == tmp_path / "md"
    folder.export_all(store)
    assert (tmp_path / "md" / "index.md").is_file()
