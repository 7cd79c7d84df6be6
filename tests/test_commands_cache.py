"""``scrapy cache`` sub-commands, run as a user runs them, on caches made by real crawls."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from crawler.cache.responses import RenderedPage
from crawler.cache.sqlite import SqliteDocStore
from crawler.identity import page_key
from crawler.lib.urls import canonical_url
from tests.commands import run_command
from tests.crawl import (
    ROOT,
    crawl_env,
    run_crawl,
    scrapy_command,
    start_crawl,
    wait_for_lines,
)
from tests.helpers import drop_overrides

# every test crawls a site first; `scrapy cache` runs in this process (tests.commands),
# in a process of its own where a test kills or races it, and as cron runs it
pytestmark = pytest.mark.e2e


def backend_store(backend, cache, request):
    """``(store, settings, env)`` of a test's cache on ``backend`` ("sqlite" in
    ``cache``, or "postgres" on the test server): the open store, and the settings and
    environment a command needs to use it."""
    if backend != "postgres":
        return SqliteDocStore(cache), {}, {}
    from crawler.cache.postgres import PostgresDocStore

    dsn = request.getfixturevalue("postgres_dsn")
    settings = {"EXTRACTED_DOCS_STORE": "crawler.cache.postgres.PostgresDocStore"}
    return PostgresDocStore(dsn), settings, {"EXTRACTED_DOCS_DSN": dsn}


def cache_subprocess(cache, settings, env, *args):
    """``scrapy cache ARGS`` on ``cache`` with ``settings`` and environment ``env``, in
    this process (tests.commands): its exit status and output (it may fail)."""
    return run_command(["cache", *args], cache, settings, env)


def cache_cmd(cache, *args):
    return run_command(["cache", *args], cache)


def cache_process(cache, *args):
    """``scrapy cache ARGS`` in a process of its own, as a user runs it."""
    command = scrapy_command(["cache", *args], cache, {})
    return subprocess.run(command, cwd=ROOT, env=crawl_env(), capture_output=True, text=True, timeout=60)


def ok(proc):
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    return proc.stdout


def test_stats(crawled):
    site, cache = crawled
    assert "\nLast run:\n" in ok(cache_cmd(cache, "stats"))  # one run: no "Last 1 runs"
    assert run_crawl(site.url + "/", cache).calls == []
    out = ok(cache_cmd(cache, "stats"))
    assert "6 pages on 1 domain," in out and "Last 2 runs" in out and "hit rate" in out
    data = json.loads(ok(cache_cmd(cache, "stats", "--json")))
    assert data["pages"] == 6 and data["statuses"]["unchanged"] == 6
    assert data["extractions"]["extracted"] == 6
    first, second = data["runs"]
    assert (first["extractor_calls"], first["calls_saved"]) == (6, 0)
    assert (first["pages"], second["pages"], first["dry_run"]) == (6, 6, False)
    assert (second["extractor_calls"], second["calls_saved"], second["not_modified"], second["hit_rate"]) == (
        0,
        6,
        6,
        1.0,
    )
    assert data["domains"][0]["pages"] == 6 and data["disk_bytes"]["extractions"] > 0


def test_ls_filters(crawled):
    site, cache = crawled
    site.edit("/api.html", "The API now has two functions.")
    site.remove("/guide/usage.html")
    before = json.loads(ok(cache_cmd(cache, "stats", "--json")))["runs"][-1]["finished_at"]
    import time

    time.sleep(1.1)  # timestamps have one-second resolution
    run_crawl(site.url + "/", cache, settings={"TEST_EXTRACTOR_FAIL": "api"})
    changed = json.loads(ok(cache_cmd(cache, "ls", "--since", before, "--json")))
    # what changed since then: the edited page and the removed one (a removal is a change)
    assert sorted(r["url"] for r in changed if r["last_changed"] > before) == [
        site.url + "/api.html",
        site.url + "/guide/usage.html",
    ]
    rows = json.loads(ok(cache_cmd(cache, "ls", "--json")))
    assert len(rows) == 6
    assert [r["url"] for r in json.loads(ok(cache_cmd(cache, "ls", "--status", "removed", "--json")))] == [
        site.url + "/guide/usage.html"
    ]
    assert [r["url"] for r in json.loads(ok(cache_cmd(cache, "ls", "--failed", "--json")))] == [site.url + "/api.html"]
    assert len(json.loads(ok(cache_cmd(cache, "ls", "--since", "2000-01-01", "--json")))) == 6
    assert json.loads(ok(cache_cmd(cache, "ls", "--since", "2999-01-01", "--json"))) == []
    assert len(json.loads(ok(cache_cmd(cache, "ls", "--domain", "127.0.0.1:1", "--json")))) == 0
    table = ok(cache_cmd(cache, "ls", "--limit", "2"))
    assert "more pages match" in table and table.count(site.url) == 2
    assert "failed" in ok(cache_cmd(cache, "ls", "--failed"))


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_ls_widened_lists_the_pages_whose_main_content_was_widened(backend, tmp_path, request):
    """On either store: the pages whose record says ``selection_widened`` (the selection's
    audit widened their main content), and ``show`` says since when."""
    cache = tmp_path / "cache"
    store, settings, env = backend_store(backend, cache, request)
    wide = "https://docs.example.com/wide.html"
    for url, flag in ((wide, {"selection_widened": "2026-11-22T13:05:25Z"}), ("https://docs.example.com/p.html", {})):
        record = {"url": url, "canonical_url": url, "domain": "docs.example.com", "status": "new", **flag}
        store.put_page(page_key(url), record)
    store.commit()
    store.close()

    def cache_ls(*args):
        return cache_subprocess(cache, settings, env, *args)

    listed = [line for line in ok(cache_ls("ls", "--widened")).splitlines() if "https://" in line]
    assert [line.split()[-1] for line in listed] == [wide]
    assert [(r["url"], r["selection_widened"]) for r in json.loads(ok(cache_ls("ls", "--widened", "--json")))] == [
        (wide, "2026-11-22T13:05:25Z")
    ]
    assert len(json.loads(ok(cache_ls("ls", "--json")))) == 2
    shown = ok(cache_ls("show", wide))
    assert any(line.split() == ["selection_widened", "2026-11-22T13:05:25Z"] for line in shown.splitlines()), shown
    assert "--widened" in ok(cache_ls("ls", "--help"))


def test_show_and_diff(crawled):
    site, cache = crawled
    url = site.url + "/guide/install.html"
    assert "Only one version" in ok(cache_cmd(cache, "diff", url))
    site.edit("/guide/install.html", "Run pip install example==2.0 to install it.")
    run_crawl(site.url + "/", cache)
    shown = ok(cache_cmd(cache, "show", url))
    assert "changed" in shown and "History:" in shown and "extracted" in shown and '"title": "Install"' in shown
    data = json.loads(ok(cache_cmd(cache, "show", site.url + "/guide/install.html?utm_source=x", "--json")))
    assert [h["event"] for h in data["record"]["history"]] == ["new", "extracted", "changed", "extracted"]
    assert data["extraction"]["data"]["title"] == "Install" and data["record"]["status"] == "changed"
    assert "metadata" not in data  # the store's mirror of its records, not the page's
    assert f"Extraction file: extractions/{data['url_hash']}.json" in shown
    diff = ok(cache_cmd(cache, "diff", url))
    assert "-Run pip install example to install it." in diff
    assert "+Run pip install example==2.0 to install it." in diff
    missing = cache_cmd(cache, "show", site.url + "/nope.html")
    assert missing.returncode == 1 and "Not in the cache" in missing.stderr


def test_show_prints_a_long_extraction_s_first_lines_and_all_of_it_when_asked(crawled):
    # a table of contents page extracted into 400 KB of JSON: the first lines, and how to get the rest
    site, cache = crawled
    url = site.url + "/guide/install.html"
    store = SqliteDocStore(cache)
    try:
        key = page_key(url)
        extraction = store.read_extraction(key)
        extraction["data"]["outline"] = [{"level": 2, "title": f"Section {n}"} for n in range(100)]
        store.write_extraction(key, extraction)
        store.commit()
    finally:
        store.close()
    shown = ok(cache_cmd(cache, "show", url))
    assert '"title": "Section 10"' in shown and '"title": "Section 99"' not in shown
    assert f"more lines: --extraction prints it whole (or read extractions/{key}.json)" in shown
    whole = ok(cache_cmd(cache, "show", url, "--extraction"))
    assert '"title": "Section 99"' in whole and "more lines" not in whole


def test_diff_keeps_a_last_line_apart_and_shows_a_title_that_alone_changed(tmp_path):
    """A markdown that does not end in a newline used to run its old and new last lines
    together (``-Old text.+New text.``); a page whose title alone changed has a diff."""
    cache = tmp_path / "cache"
    store = SqliteDocStore(cache)
    edited, retitled = "https://docs.example.com/edited.html", "https://docs.example.com/retitled.html"
    store.put_content(
        page_key(edited),
        {"url": edited, "text": "# E\n\nNew text.", "fields": {"title": "E"}, "content_hash": "c2",
         "stored_at": "t2", "previous": {"text": "# E\n\nOld text.", "content_hash": "c1", "stored_at": "t1"}},
    )  # fmt: skip
    store.put_content(
        page_key(retitled),
        {"url": retitled, "text": "# R\n\nSame.", "fields": {"title": "R (v2)"}, "content_hash": "c4",
         "stored_at": "t2", "previous": {"text": "# R\n\nSame.", "fields": {"title": "R"}, "content_hash": "c3",
                                         "stored_at": "t1"}},
    )  # fmt: skip
    for url in (edited, retitled):
        store.put_page(page_key(url), {"url": url, "canonical_url": url, "domain": "docs.example.com",
                                       "status": "changed", "content_hash": "c"})  # fmt: skip
    changes = [
        {"url": url, "url_hash": page_key(url), "status": "changed", "content_hash": chash, "extraction_file": None}
        for url, chash in ((edited, "c2"), (retitled, "c4"))
    ]
    store.write_run_report("20261102T000000000Z-bbbbbb", {"run_id": "20261102T000000000Z-bbbbbb", "kind": "crawl",
                                                          "changes_total": 2})  # fmt: skip
    store.put_run_changes("20261102T000000000Z-bbbbbb", changes)
    store.commit()
    store.close()
    diff = ok(cache_cmd(cache, "diff", edited)).splitlines()
    assert diff[-2:] == ["-Old text.", "+New text."], diff
    assert ok(cache_cmd(cache, "diff", retitled)).splitlines()[-6:] == [
        "@@ -1,4 +1,4 @@", "-title: R", "+title: R (v2)", " ", " # R", " ",
    ]  # fmt: skip
    pages = json.loads(ok(cache_cmd(cache, "diff", "--run", "last", "--json")))["pages"]
    assert pages[0]["diff"].splitlines()[-2:] == ["-Old text.", "+New text."]
    assert "-title: R\n+title: R (v2)\n" in pages[1]["diff"]


def test_show_of_an_index_html_finds_its_directory_s_page(crawled):
    """``/index.html`` is recorded as ``/``: asking for it used to say "Not in the cache"."""
    site, cache = crawled
    shown = cache_cmd(cache, "show", site.url + "/index.html", "--json")
    assert json.loads(ok(shown))["record"]["url"] == site.url + "/"
    assert f"{site.url}/index.html is not in the cache by that name: showing {site.url}/ (" in shown.stderr
    assert "Not in the cache" not in ok(cache_cmd(cache, "diff", site.url + "/index.html#top"))
    missing = cache_cmd(cache, "show", site.url + "/guide/nope/index.html")
    assert missing.returncode == 1 and f"Not in the cache: {site.url}/guide/nope/index.html" in missing.stderr


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_ls_and_diff_of_a_run_read_its_change_list(backend, tmp_path, request):
    """On either store: ``ls --run`` and ``diff --run`` read the run's change list (the store's table);
    ``last`` is the last crawl's run, not a later ``scrapy process``; a report of an older
    version, an unknown run and filters that do not apply are said."""
    cache = tmp_path / "cache"
    store, settings, env = backend_store(backend, cache, request)
    edited, added = "https://docs.example.com/edited.html", "https://docs.example.com/added.html"
    store.put_content(
        page_key(edited),
        {"url": edited, "text": "# E\n\nNew text.\n", "fields": {}, "content_hash": "c2", "stored_at": "t2",
         "previous": {"text": "# E\n\nOld text.\n", "content_hash": "c1", "stored_at": "t1"}},
    )  # fmt: skip
    changes = [
        {"url": edited, "url_hash": page_key(edited), "status": "changed", "content_hash": "c2",
         "extraction_file": f"extractions/{page_key(edited)}.json"},
        {"url": added, "url_hash": page_key(added), "status": "new", "content_hash": "c3", "extraction_file": None},
    ]  # fmt: skip
    store.write_run_report("20261101T000000000Z-aaaaaa", {"run_id": "20261101T000000000Z-aaaaaa", "kind": "crawl"})
    store.write_run_report("20261102T000000000Z-bbbbbb", {"run_id": "20261102T000000000Z-bbbbbb", "kind": "crawl",
                                                          "changes_total": 2})  # fmt: skip
    store.put_run_changes("20261102T000000000Z-bbbbbb", changes)  # as the report stage writes them
    store.write_run_report("20261103T000000000Z-cccccc", {"run_id": "20261103T000000000Z-cccccc", "kind": "process",
                                                          "changes_total": 0})  # fmt: skip
    store.commit()
    store.close()

    def cache_run(*args):
        return cache_subprocess(cache, settings, env, *args)

    listed = ok(cache_run("ls", "--run", "last"))
    assert [line.split()[0] for line in listed.splitlines()[1:]] == ["changed", "new"] and added in listed
    assert [c["url"] for c in json.loads(ok(cache_run("ls", "--run", "last", "--status", "new", "--json")))] == [added]
    assert json.loads(ok(cache_run("ls", "--run", "20261103T000000000Z-cccccc", "--json"))) == []
    diff = json.loads(ok(cache_run("diff", "--run", "20261102T000000000Z-bbbbbb", "--json")))
    assert diff["pages"][0]["diff"].splitlines()[-2:] == ["-Old text.", "+New text."]
    assert (diff["pages"][1]["status"], diff["pages"][1]["diff"]) == ("new", None)
    for args, status, message in (
        (("ls", "--run", "20261101T000000000Z-aaaaaa"), 1, "has no change list"),
        (("ls", "--run", "nope"), 1, "No run 'nope'"),
        (("ls", "--run", "last", "--failed"), 2, "not --failed"),
        (("diff",), 2, "give a URL or --run"),
        (("diff", edited, "--run", "last"), 2, "give a URL or --run"),
    ):
        proc = cache_run(*args)
        assert (proc.returncode, "Traceback" in proc.stderr) == (status, False), (args, proc.stderr)
        assert message in proc.stderr, (args, proc.stderr)


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_a_run_of_more_changes_than_its_reports_sample_lists_them_all(backend, tmp_path, request):
    """The report keeps the first 100 changes; ``ls --run --limit 0`` lists every one
    from the store, ``--limit N`` the first N and says there are more, ``--json`` all
    of them as one array, ``diff --run`` each one."""
    cache = tmp_path / "cache"
    store, settings, env = backend_store(backend, cache, request)
    run_id = "20261101T000000000Z-aaaaaa"
    changes = [
        {"url": f"https://docs.example.com/{n}.html", "url_hash": f"h{n:04d}", "status": "removed" if n % 10 else "new",
         "content_hash": f"c{n}", "extraction_file": None}
        for n in range(2500)
    ]  # fmt: skip
    for start in range(0, len(changes), 500):
        store.put_run_changes(run_id, changes[start : start + 500], start=start)
    store.write_run_report(run_id, {"run_id": run_id, "kind": "crawl", "changes_total": 2500,
                                    "changes_sample": changes[:100]})  # fmt: skip
    store.close()

    def cache_run(*args):
        return cache_subprocess(cache, settings, env, *args)

    listed = ok(cache_run("ls", "--run", "last", "--limit", "0")).splitlines()
    assert listed[0].split() == ["status", "content", "hash", "extraction", "file", "url"]
    assert [line.split()[-1] for line in listed[1:]] == [c["url"] for c in changes]
    first = ok(cache_run("ls", "--run", "last", "--limit", "3")).splitlines()
    assert len(first) == 5 and first[-1].startswith("... more pages changed: --limit 6")
    assert json.loads(ok(cache_run("ls", "--run", "last", "--limit", "0", "--json"))) == changes
    new = json.loads(ok(cache_run("ls", "--run", run_id, "--status", "new", "--limit", "0", "--json")))
    assert [c["url_hash"] for c in new] == [f"h{n:04d}" for n in range(0, 2500, 10)]
    diff = json.loads(ok(cache_run("diff", "--run", "last", "--json")))
    assert diff["run_id"] == run_id and len(diff["pages"]) == 2500 and diff["pages"][1]["status"] == "removed"


def test_a_cache_of_the_previous_format_lists_its_old_runs_changes_after_the_upgrade(tmp_path):
    """A report written before the changes table held its list inline: the upgrade on
    the first open moves it into the table, and ``ls --run`` lists it from there."""
    import sqlite3

    cache = tmp_path / "cache"
    store = SqliteDocStore(cache)
    run_id = "20261101T000000000Z-aaaaaa"
    changes = [
        {"url": "https://docs.example.com/a.html", "url_hash": "h1", "status": "changed", "content_hash": "c1",
         "extraction_file": "extractions/h1.json"},
        {"url": "https://docs.example.com/b.html", "url_hash": "h2", "status": "removed", "content_hash": "c2",
         "extraction_file": None},
    ]  # fmt: skip
    store.write_run_report(run_id, {"run_id": run_id, "kind": "crawl", "changes": changes})
    store.close()
    with sqlite3.connect(cache / "cache.sqlite") as conn:  # the database as format 4 left it
        conn.execute("DROP TABLE changes")
        conn.execute("UPDATE kv SET value = '4' WHERE key = 'store/format'")
    conn.close()
    assert json.loads(ok(cache_cmd(cache, "ls", "--run", "last", "--json"))) == changes
    assert json.loads(ok(cache_cmd(cache, "ls", "--run", run_id, "--status", "removed", "--json"))) == changes[1:]


def test_invalidate_then_recrawl(crawled):
    site, cache = crawled
    out = ok(cache_cmd(cache, "invalidate", site.url + "/api.html", site.url + "/"))
    assert "2 page(s) marked" in out
    assert sorted(run_crawl(site.url + "/", cache).calls) == [site.url + "/", site.url + "/api.html"]
    assert run_crawl(site.url + "/", cache).calls == []
    assert "6 page(s)" in ok(cache_cmd(cache, "invalidate", "--all"))
    assert len(run_crawl(site.url + "/", cache).calls) == 6
    assert "6 page(s)" in ok(cache_cmd(cache, "invalidate", "--domain", site.url.split("//")[1]))
    bad = cache_cmd(cache, "invalidate")
    assert bad.returncode == 2 and "give URLs" in bad.stderr
    unknown = cache_cmd(cache, "invalidate", "http://elsewhere.example/")
    assert unknown.returncode == 1 and "Not in the cache" in unknown.stderr


def test_invalidate_refused_while_a_crawl_holds_the_lock(crawled, tmp_path, reap):
    site, cache = crawled
    calls, gate = tmp_path / "slow-calls.log", tmp_path / "gate"
    # the crawl's first extractor call waits for the gate: it holds the lock until the test opens it
    crawl = reap(start_crawl(site, cache, calls, {"TEST_EXTRACTOR_GATE": str(gate)}, args={"redo": "extraction"}))
    wait_for_lines(calls, 1, crawl)
    refused = cache_cmd(cache, "invalidate", "--all")
    assert refused.returncode == 1
    assert "in use by another crawl" in refused.stderr and "Nothing was changed" in refused.stderr
    assert ok(cache_cmd(cache, "stats"))  # reading works meanwhile
    gate.touch()
    crawl.communicate(timeout=120)
    assert crawl.returncode == 0
    assert json.loads(ok(cache_cmd(cache, "stats", "--json")))["extractions"]["invalidated"] == 0


def remove_two_pages(site, cache):
    """Two pages leave the site (one linked, one only in the sitemap) and a crawl marks
    them removed."""
    site.remove("/api.html")
    site.remove("/hidden.html")
    site.sitemap = ["/"]
    run_crawl(site.url + "/", cache)


def test_prune_after_pages_disappeared(crawled):
    site, cache = crawled
    remove_two_pages(site, cache)
    (cache / "extractions" / "0123456789abcdef0123456789abcdef01234567.json").write_text("{}")
    (cache / "extractions" / ".x.json.123.tmp").write_text("half")
    store = SqliteDocStore(cache)  # a rendering of a page never indexed, and where a script leads
    store.put_rendered(
        "ab" * 20, RenderedPage(url=site.url + "/x", headers={}, body=b"<p>x</p>", raw_sha256="r", rendered_at="t")
    )
    store.put_rendered(
        "cd" * 20, RenderedPage(url=site.url + "/", headers={}, body=b"", raw_sha256="r", rendered_at="t")
    )
    store.close()
    dry = json.loads(ok(cache_cmd(cache, "prune", "--dry-run", "--json")))
    assert sorted(p["url"] for p in dry["removed_pages"]) == [site.url + "/api.html", site.url + "/hidden.html"]
    assert dry["orphan_files"] == ["extractions/0123456789abcdef0123456789abcdef01234567.json"]
    assert dry["temp_files"] == ["extractions/.x.json.123.tmp"]
    assert dry["orphan_renderings"] == 1
    assert len(list((cache / "extractions").glob("*.json"))) == 7  # a dry run deletes nothing
    out = ok(cache_cmd(cache, "prune"))
    assert "Deleted 2 removed page(s), 1 unreferenced file(s), 1 temporary file(s)" in out
    assert "1 unreferenced rendering(s)." in out
    store = SqliteDocStore(cache)
    assert store.get_rendered("ab" * 20) is None and store.get_rendered("cd" * 20) is not None
    store.close()
    assert len(list((cache / "extractions").glob("*.json"))) == 4
    assert json.loads(ok(cache_cmd(cache, "stats", "--json")))["pages"] == 4
    assert "consistent" in ok(cache_cmd(cache, "verify"))
    assert run_crawl(site.url + "/", cache).calls == []


#: a sitecustomize that kills its process (SIGKILL) right after it deletes its first
#: extraction file, when KILL_AFTER_EXTRACTION_UNLINK is set: a prune stopped half-way,
#: at the same point every time
KILLING_SITECUSTOMIZE = """
import os, pathlib, signal
if os.environ.get("KILL_AFTER_EXTRACTION_UNLINK"):
    _unlink = pathlib.Path.unlink
    def unlink(self, missing_ok=False):
        _unlink(self, missing_ok=missing_ok)
        if self.parent.name == "extractions" and self.suffix == ".json":
            os.kill(os.getpid(), signal.SIGKILL)
    pathlib.Path.unlink = unlink
"""


def test_a_prune_killed_half_way_is_interrupted_not_damage(crawled, tmp_path):
    site, cache = crawled
    remove_two_pages(site, cache)
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(KILLING_SITECUSTOMIZE)
    killed = subprocess.run(
        scrapy_command(["cache", "prune"], cache, {}),
        cwd=ROOT,
        env=crawl_env({"PYTHONPATH": str(hook), "KILL_AFTER_EXTRACTION_UNLINK": "1"}),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert killed.returncode == -9
    assert len(list((cache / "extractions").glob("*.json"))) == 5  # one of the two removed pages' files went
    found = cache_cmd(cache, "verify")
    assert found.returncode == 0, found.stdout + found.stderr
    assert "interrupted_prune" in found.stdout and "extraction_missing" not in found.stdout
    assert "a prune was stopped while deleting 1 removed page; the next `scrapy cache prune` ends it" in found.stdout
    assert json.loads(ok(cache_cmd(cache, "verify", "--json")))["interrupted"]["prune_pages"] == 1
    assert "Deleted 2 removed page(s)" in ok(cache_cmd(cache, "prune"))
    assert "consistent" in ok(cache_cmd(cache, "verify"))


def test_a_read_only_database_is_a_permission_problem_not_damage(crawled):
    site, cache = crawled
    database = cache / "cache.sqlite"
    database.chmod(0o444)
    before = database.read_bytes()
    for command in (["cache", "verify", "--repair"], ["crawl", "docs", "-a", f"start_urls={site.url}/"]):
        done = subprocess.run(
            drop_overrides(scrapy_command(command, cache, {})),
            cwd=ROOT,
            env=crawl_env(),
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 1, done.stderr[-2000:]
        assert f"The cache file {database} cannot be written by user " in done.stderr, done.stderr[-2000:]
        assert "mode 0444" in done.stderr and "`scrapy cache verify --repair` cannot fix this" in done.stderr
        assert "moves it aside" not in done.stderr and "Traceback" not in done.stderr
    assert database.read_bytes() == before  # (SQLite's own -wal and -shm may appear beside it)
    assert not list(cache.glob("cache.sqlite.corrupt-*"))


def test_a_database_another_program_locks_is_not_damage(crawled):
    import os
    import sqlite3

    _, cache = crawled
    database = cache / "cache.sqlite"
    files = sorted(cache.glob("cache.sqlite*"))
    holder = sqlite3.connect(database)  # another program: an exclusive lock held until it ends
    try:
        holder.execute("PRAGMA locking_mode = EXCLUSIVE")
        holder.execute("BEGIN EXCLUSIVE")
        for args in (("verify",), ("verify", "--repair")):
            done = cache_process(cache, *args)  # another process than the lock's holder
            assert done.returncode == 1, done.stdout + done.stderr
            assert f"The cache file {database} is locked by another program (pid {os.getpid()}: " in done.stderr
            assert "it is not damaged" in done.stderr and "corrupt" not in done.stdout + done.stderr
    finally:
        holder.rollback()
        holder.close()
    assert sorted(cache.glob("cache.sqlite*")) == files  # never moved aside
    assert "consistent" in ok(cache_cmd(cache, "verify"))


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_prune_and_verify_work_on_either_store(backend, tmp_path, request):
    """On either store: prune deletes a removed page (record, content, extraction, its
    reuse entry), an extraction no record points to and a rendering of no page; verify
    finds a record whose extraction is missing or another page's, and repairs both (the
    other page's extraction kept aside, never lost)."""
    cache = tmp_path / "cache"
    store, settings, env = backend_store(backend, cache, request)
    url = {name: f"https://docs.example.com/{name}.html" for name in ("ok", "lost", "foreign", "gone", "orphan")}
    key = {name: page_key(u) for name, u in url.items()}
    for name in ("ok", "lost", "foreign", "gone"):
        ref = {"input_key": f"k-{name}", "input_hash": "h", "extractor": "x", "version": "1",
               "file": store.extraction_name(key[name])}  # fmt: skip
        status = "removed" if name == "gone" else "unchanged"
        store.put_page(key[name], {"url": url[name], "canonical_url": url[name], "domain": "docs.example.com",
                                   "status": status, "extraction": ref})  # fmt: skip
        store.put_content(key[name], {"url": url[name], "text": name, "fields": {}, "content_hash": name})
        owner = "ok" if name == "foreign" else name  # the foreign page's file holds ok's extraction
        if name != "lost":
            store.write_extraction(key[name], {"url": url[owner], "url_hash": key[owner], "input_key": f"k-{owner}"})
        store.link_extraction(f"k-{name}", key[name])
    store.write_extraction(key["orphan"], {"url_hash": key["orphan"], "input_key": "k-orphan"})
    store.put_rendered("ab" * 20, RenderedPage(url=url["ok"], headers={}, body=b"<p>x</p>", raw_sha256="r",
                                               rendered_at="t"))  # fmt: skip
    store.commit()
    names = {name: store.extraction_name(k) for name, k in key.items()}
    store.close()

    def cache_run(*args):
        return cache_subprocess(cache, settings, env, *args)

    dry = json.loads(ok(cache_run("prune", "--dry-run", "--json")))
    assert [p["url"] for p in dry["removed_pages"]] == [url["gone"]]
    assert dry["orphan_files"] == [names["orphan"]] and dry["temp_files"] == []
    assert (dry["stale_inputs"], dry["orphan_renderings"]) == (1, 1)
    assert "Deleted 1 removed page(s), 1 unreferenced file(s)" in ok(cache_run("prune"))
    again = json.loads(ok(cache_run("prune", "--dry-run", "--json")))
    assert again["removed_pages"] == again["orphan_files"] == [] and again["stale_inputs"] == 0
    found = cache_run("verify", "--json")
    assert found.returncode == 1, found.stderr
    problems = {(p["kind"], p["target"]) for p in json.loads(found.stdout)["problems"]}
    assert problems == {("extraction_missing", url["lost"]), ("extraction_foreign", url["foreign"])}
    repaired = ok(cache_run("verify", "--repair"))
    assert f"the file moved to {names['foreign']}.corrupt-" in repaired
    assert "the next crawl extracts it again" in repaired
    assert "consistent" in ok(cache_run("verify"))
    store, _, _ = backend_store(backend, cache, request)
    try:
        assert store.get_page(key["gone"]) is None and store.get_content(key["gone"]) is None
        assert store.find_extraction("k-gone") is None and store.read_extraction(key["orphan"]) is None
        assert "extraction" not in store.get_page(key["foreign"]) and store.read_extraction(key["foreign"]) is None
        assert store.read_extraction(key["ok"])["url"] == url["ok"]
        assert store.get_rendered("ab" * 20) is None
        if backend == "postgres":  # the foreign extraction kept aside, a row no page's
            aside = f"{key['foreign']}.corrupt-%"
            assert store._select("SELECT count(*) FROM extractions WHERE url_hash LIKE %s", (aside,)) == [(1,)]
    finally:
        store.close()
    if backend == "sqlite":  # the foreign extraction kept aside, a file no page's
        assert len(list((cache / "extractions").glob(f"{key['foreign']}.json.corrupt-*"))) == 1


def test_verify_repairs_a_deleted_extraction_file(crawled):
    site, cache = crawled
    victim = next(
        p for p in (cache / "extractions").glob("*.json") if json.loads(p.read_text())["url"].endswith("/api.html")
    )
    victim.unlink()
    found = cache_cmd(cache, "verify")
    assert found.returncode == 1 and "extraction_missing" in found.stdout
    repaired = ok(cache_cmd(cache, "verify", "--repair"))
    assert "the next crawl extracts it again" in repaired
    assert "consistent" in ok(cache_cmd(cache, "verify"))
    assert run_crawl(site.url + "/", cache).calls == [site.url + "/api.html"]


def test_verify_rebuilds_a_corrupted_index(crawled):
    site, cache = crawled
    (cache / "cache.sqlite-wal").unlink(missing_ok=True)
    (cache / "cache.sqlite-shm").unlink(missing_ok=True)
    (cache / "cache.sqlite").write_bytes(b"\x00garbage" * 500)
    for command in (["stats"], ["ls"], ["show", site.url + "/"]):
        broken = cache_cmd(cache, *command)
        assert broken.returncode == 1 and "cannot be read" in broken.stderr and "Traceback" not in broken.stderr
    assert "corrupt_file" in cache_cmd(cache, "verify").stdout
    repaired = ok(cache_cmd(cache, "verify", "--repair"))
    assert "rebuilt" in repaired and "6 pages" in repaired
    assert list(cache.glob("cache.sqlite.corrupt-*"))  # the damaged file is kept aside
    assert json.loads(ok(cache_cmd(cache, "stats", "--json")))["pages"] == 6
    # the rebuilt index knows every extraction: the next crawl calls the extractor 0 times
    assert run_crawl(site.url + "/", cache).calls == []


def test_export(crawled, tmp_path):
    site, cache = crawled
    lines = [json.loads(line) for line in ok(cache_cmd(cache, "export")).splitlines()]
    assert len(lines) == 6 and all(line["extraction"]["title"] for line in lines)
    out = tmp_path / "pages.jsonl"
    proc = cache_cmd(cache, "export", "--output", str(out), "--include-content", "--domain", site.url.split("//")[1])
    assert proc.returncode == 0 and "Exported 6 pages" in proc.stderr
    first = json.loads(out.read_text().splitlines()[0])
    assert first["content"].startswith("# ") and first["extractor"]["name"] == "recording"


def test_missing_cache_and_bad_arguments(tmp_path):
    for command in (
        ["stats"],
        ["ls"],
        ["show", "http://a/"],
        ["diff", "http://a/"],
        ["invalidate", "--all"],
        ["prune"],
        ["verify"],
        ["export"],
    ):
        proc = cache_cmd(tmp_path / "none", *command)
        assert proc.returncode == 1, command
        assert "No cache in" in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "none").exists()  # nothing created
    for command in (
        ["frobnicate"],
        [],
        ["ls", "--since", "yesterday"],
        ["ls", "--limit", "x"],
        ["show"],
        ["stats", "--nope"],
    ):
        proc = cache_cmd(tmp_path / "none", *command)
        assert proc.returncode == 2, (command, proc.stderr)
        assert "Traceback" not in proc.stderr


def test_no_cache_names_the_caches_one_level_below(crawled):
    """``make demo`` writes extracted-docs/demo: a command on extracted-docs says where it is."""
    _site, cache = crawled
    proc = cache_cmd(cache.parent, "stats")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert proc.stderr == (
        f"Error: No cache in {cache.parent}: run a crawl first. "
        f"A cache is in {cache}: -s EXTRACTED_DOCS_DIR={cache} reads it.\n"
    )


def test_empty_cache(tmp_path, site):
    cache = tmp_path / "cache"
    site.pages.clear()
    site.sitemap = None
    run_crawl(site.url + "/", cache)
    out = ok(cache_cmd(cache, "stats"))
    # (not "empty": the test's own folder is named so) a run and no page: the run is shown
    assert "no page recorded yet" in out and "Last run" in out and " is empty" not in out
    assert "No page matches" in ok(cache_cmd(cache, "ls"))


def test_an_emptied_index_is_not_mistaken_for_a_new_cache(crawled):
    site, cache = crawled
    for name in ("cache.sqlite", "cache.sqlite-wal", "cache.sqlite-shm"):
        (cache / name).unlink(missing_ok=True)
    (cache / "cache.sqlite").write_bytes(b"")
    refused = run_crawl(site.url + "/", cache)
    assert refused.returncode == 1 and "verify --repair" in refused.stderr
    assert "rebuilt" in ok(cache_cmd(cache, "verify", "--repair"))
    again = run_crawl(site.url + "/", cache)
    # the records came back from extractions/ (the content hashes were in the lost
    # file): every page is known, none new, and no extraction is paid for again
    assert again.calls == [] and again.report["pages_new"] == 0


def _damage_record(cache, url_suffix):
    import sqlite3

    conn = sqlite3.connect(cache / "cache.sqlite")
    key = next(k for k, v in conn.execute("SELECT key, url FROM pages") if v.endswith(url_suffix))
    conn.execute("UPDATE pages SET record = ? WHERE key = ?", ("{broken", key))
    conn.commit()
    conn.close()
    return key


def test_prune_keeps_the_files_of_an_unreadable_record_and_repair_restores_it(crawled):
    site, cache = crawled
    key = _damage_record(cache, "/api.html")
    assert f"Unreadable pages entry {key}" in cache_cmd(cache, "show", key).stderr
    dry = json.loads(ok(cache_cmd(cache, "prune", "--dry-run", "--json")))
    assert dry["orphan_files"] == []  # its files are what a repair needs
    found = cache_cmd(cache, "verify")
    assert found.returncode == 1 and "record_unreadable" in found.stdout
    assert "restored" in ok(cache_cmd(cache, "verify", "--repair"))
    assert json.loads(ok(cache_cmd(cache, "show", key, "--json")))["record"]["url"].endswith("/api.html")
    assert run_crawl(site.url + "/", cache).calls == []


def test_files_of_a_page_the_index_never_recorded_are_restored_not_pruned(crawled):
    import sqlite3

    site, cache = crawled
    conn = sqlite3.connect(cache / "cache.sqlite")  # as if killed before the record's commit
    conn.execute("DELETE FROM pages WHERE url LIKE '%/api.html'")
    conn.commit()
    conn.close()
    dry = json.loads(ok(cache_cmd(cache, "prune", "--dry-run", "--json")))
    assert dry["orphan_files"] == [] and len(dry["kept_recoverable"]) == 1
    assert "record restored from its files" in ok(cache_cmd(cache, "verify", "--repair"))
    assert run_crawl(site.url + "/", cache).calls == []  # its extraction is not paid for again


def test_verify_finds_damage_beyond_the_header(crawled):
    site, cache = crawled
    index = cache / "cache.sqlite"
    data = bytearray(index.read_bytes())
    assert len(data) > 12288
    data[8192:12288] = b"\xa5" * 4096  # a damaged page in the middle of the file
    index.write_bytes(bytes(data))
    found = cache_cmd(cache, "verify")
    assert found.returncode == 1 and "corrupt_file" in found.stdout
    repaired = ok(cache_cmd(cache, "verify", "--repair"))
    assert "rebuilt" in repaired
    assert run_crawl(site.url + "/", cache).calls == []


def test_an_index_emptied_of_rows_is_a_lost_index(crawled):
    import sqlite3

    site, cache = crawled
    conn = sqlite3.connect(cache / "cache.sqlite")
    conn.execute("DELETE FROM pages")
    conn.commit()
    conn.close()
    assert "verify --repair" in cache_cmd(cache, "stats").stderr
    refused = run_crawl(site.url + "/", cache)
    assert refused.returncode == 1 and "verify --repair" in refused.stderr
    prune = cache_cmd(cache, "prune")
    assert prune.returncode == 1 and len(list((cache / "extractions").glob("*.json"))) == 6  # nothing deleted
    assert "rebuilt" in ok(cache_cmd(cache, "verify", "--repair"))
    assert run_crawl(site.url + "/", cache).calls == []


def test_prune_dry_run_works_while_a_crawl_holds_the_lock(crawled):
    from crawler.cache.lock import CacheLock

    site, cache = crawled
    remove_two_pages(site, cache)
    lock = CacheLock(cache)
    lock.acquire()  # as a running crawl holds it
    try:
        dry = cache_cmd(cache, "prune", "--dry-run", "--json")
        plan = json.loads(ok(dry))
        assert sorted(p["url"] for p in plan["removed_pages"]) == [site.url + "/api.html", site.url + "/hidden.html"]
        assert "a crawl is writing to this cache now" in dry.stderr
        refused = cache_cmd(cache, "prune")
        assert refused.returncode == 1
        assert "in use by another crawl" in refused.stderr and "Nothing was changed" in refused.stderr
    finally:
        lock.release()
    assert json.loads(ok(cache_cmd(cache, "stats", "--json")))["pages"] == 6  # the dry run deleted nothing
    assert "Deleted 2 removed page(s)" in ok(cache_cmd(cache, "prune"))


def test_prune_dry_run_on_a_lost_index_says_so(crawled):
    _site, cache = crawled
    for name in ("cache.sqlite", "cache.sqlite-wal", "cache.sqlite-shm"):
        (cache / name).unlink(missing_ok=True)
    dry = cache_cmd(cache, "prune", "--dry-run")
    assert dry.returncode == 1 and "verify --repair" in dry.stderr and "Traceback" not in dry.stderr


def _file_of(cache, sub, url_suffix):
    """The extraction file (``sub="extractions"``) of the page whose URL ends so."""
    return next(p for p in (cache / sub).glob("*.json") if json.loads(p.read_text())["url"].endswith(url_suffix))


def test_verify_repair_never_gives_a_page_another_pages_extraction(crawled):
    site, cache = crawled
    api = _file_of(cache, "extractions", "/api.html")
    api.write_text(_file_of(cache, "extractions", "/guide/").read_text())  # another page's file in its place
    found = cache_cmd(cache, "verify")
    assert found.returncode == 1 and "extraction_foreign" in found.stdout
    assert "/guide/" in found.stdout
    repaired = ok(cache_cmd(cache, "verify", "--repair"))
    assert "the next crawl extracts the page again" in repaired
    shown = json.loads(ok(cache_cmd(cache, "show", site.url + "/api.html", "--json")))
    assert (shown["record"].get("extraction") or {}).get("file") is None  # not the guide's extraction
    assert list((cache / "extractions").glob(f"{api.name}.corrupt-*"))  # the file kept aside, not deleted
    assert "consistent" in ok(cache_cmd(cache, "verify"))
    assert run_crawl(site.url + "/", cache).calls == [site.url + "/api.html"]


def test_an_emptied_database_file_without_extractions_is_a_problem_for_verify(site, tmp_path):
    site.pages.clear()
    site.sitemap = None
    cache = tmp_path / "cache"
    run_crawl(site.url + "/", cache)
    for name in ("cache.sqlite-wal", "cache.sqlite-shm"):
        (cache / name).unlink(missing_ok=True)
    (cache / "cache.sqlite").write_bytes(b"")
    found = cache_cmd(cache, "verify")
    assert found.returncode == 1 and "Traceback" not in found.stderr
    assert "empty_file" in found.stdout and "cache.sqlite" in found.stdout
    repaired = ok(cache_cmd(cache, "verify", "--repair"))
    assert "empty_file" in repaired and "downloads each page in full again" in repaired
    assert "consistent" in ok(cache_cmd(cache, "verify"))


def test_a_lost_database_is_rebuilt_from_the_extraction_files(crawled):
    site, cache = crawled
    _file_of(cache, "extractions", "/api.html").unlink()  # this page is lost with the database
    for name in ("cache.sqlite", "cache.sqlite-wal", "cache.sqlite-shm"):
        (cache / name).unlink(missing_ok=True)
    repaired = ok(cache_cmd(cache, "verify", "--repair", "--json"))
    problems = json.loads(repaired)["problems"]
    rebuilt = next(p for p in problems if p["kind"] == "rebuilt")
    assert rebuilt["detail"].startswith("5 pages") and "5 from their files only" in rebuilt["detail"]
    partial = sorted(p["target"] for p in problems if p["kind"] == "record_partial")
    assert site.url + "/guide/install.html" in partial and site.url + "/api.html" not in partial
    shown = json.loads(ok(cache_cmd(cache, "show", site.url + "/guide/install.html", "--json")))["record"]
    assert shown["first_seen"] and shown["restored"]["from"] == ["extraction"]
    again = run_crawl(site.url + "/", cache)
    assert again.report["pages_new"] == 1  # the page whose extraction file was lost too
    assert again.calls == [site.url + "/api.html"]  # only that page is extracted again


def test_show_content_and_input(crawled):
    site, cache = crawled
    url = site.url + "/guide/install.html"
    content = ok(cache_cmd(cache, "show", url, "--content"))
    assert content.startswith("# Install") and "Run pip install example to install it." in content
    extractor_input = ok(cache_cmd(cache, "show", url, "--input"))
    called = [line for line in (cache.parent / "cache-calls.log").read_text().splitlines() if line.startswith(url)]
    sent = called[0].split("\t")[1]  # the start of what the extractor was sent, its line feeds as spaces
    assert extractor_input.replace("\n", " ").startswith(sent)
    data = json.loads(ok(cache_cmd(cache, "show", url, "--input", "--json")))
    assert data["input"] == extractor_input.rstrip("\n") and data["url"] == url
    both = cache_cmd(cache, "show", url, "--input", "--content")
    assert both.returncode == 2 and "not allowed with" in both.stderr


def test_sub_command_help_and_usage(tmp_path):
    shown = cache_cmd(tmp_path, "show", "--help")
    assert shown.returncode == 0 and "usage: scrapy cache show" in shown.stdout and "--input" in shown.stdout
    top = cache_cmd(tmp_path, "--help")
    assert top.returncode == 0 and "verify" in top.stdout and "check that index and files agree" in top.stdout
    wrong = cache_cmd(tmp_path, "frobnicate")
    assert wrong.returncode == 2 and "invalid choice: 'frobnicate'" in wrong.stderr


def test_a_closed_pipe_is_not_an_error(tmp_path):
    cache = tmp_path / "cache"
    store = SqliteDocStore(cache)  # more pages than a pipe holds (64 KiB of lines)
    for n in range(3000):
        url = f"https://docs.example.com/page/{n}.html"
        store.put_page(f"{n:040x}", {"url": url, "canonical_url": url, "domain": "docs.example.com", "status": "new"})
    store.close()
    command = " ".join(f"'{part}'" for part in scrapy_command(["cache", "ls", "--limit", "0"], cache, {}))
    proc = subprocess.run(
        ["bash", "-o", "pipefail", "-c", f"{command} | head -c 10"],
        cwd=ROOT,
        env=crawl_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr


def test_a_domain_without_its_port_gets_a_hint(crawled):
    site, cache = crawled
    host, port = site.url.split("//")[1].split(":")
    listed = ok(cache_cmd(cache, "ls", "--domain", host))
    assert f"No page of {host}; did you mean {host}:{port}?" in listed
    exported = cache_cmd(cache, "export", "--domain", host)
    assert exported.returncode == 0 and f"did you mean {host}:{port}?" in exported.stderr


def test_every_command_uses_the_store_named_in_extracted_docs_store(site, tmp_path):
    """``scrapy cache``, ``scrapy vectors``, ``scrapy boilerplate`` and the cron wrapper
    open the store EXTRACTED_DOCS_STORE names and reach it through its ports only: a
    store that has nothing else (tests/recording_store.py) serves them all."""
    from tests.test_e2e_vector_sync import vector_settings
    from tests.test_recrawl import recrawl_command

    cache, log, embedded_log = tmp_path / "cache", tmp_path / "stores.jsonl", tmp_path / "embedded.log"
    assert run_crawl(site.url + "/", cache, settings=vector_settings(embedded_log)).returncode == 0
    env = crawl_env({"TEST_STORE_LOG": str(log)})
    ports_only = {"EXTRACTED_DOCS_STORE": "tests.recording_store.PortsOnlyStore"}
    url = site.url + "/guide/install.html"
    commands = {
        "stats": ["cache", "stats"],
        "ls": ["cache", "ls", "--failed"],
        "show": ["cache", "show", url],
        "diff": ["cache", "diff", url],
        "export": ["cache", "export", "--domain", "nowhere.example"],
        "invalidate": ["cache", "invalidate", url],
        "prune": ["cache", "prune", "--dry-run"],
        "verify": ["cache", "verify"],
        "boilerplate": ["boilerplate"],
        "vectors": ["vectors", "verify"],
    }
    out, used = {}, {}
    for name, args in commands.items():
        settings = {**(vector_settings(embedded_log) if name == "vectors" else {}), **ports_only}
        proc = subprocess.run(
            scrapy_command(args, cache, settings), cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
        )
        out[name] = ok(proc)
        [used[name]] = [json.loads(line) for line in log.read_text().splitlines()]  # one store, opened once
        log.unlink()
    store = SqliteDocStore(cache, readonly=True)
    assert "invalidated" in store.find_page(url)[1]  # written through it
    store.close()
    assert f"Cache ports-only:{cache}: 6 pages" in out["stats"]  # where the store says it is
    assert "disk:" not in out["stats"]  # a store without a directory has no size on disk
    recrawl = subprocess.run(
        [*recrawl_command(site.url + "/", cache), "-s", "EXTRACTED_DOCS_STORE=tests.recording_store.RecordingStore"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert recrawl.returncode == 0, recrawl.stderr[-2000:]
    stores = [json.loads(line) for line in log.read_text().splitlines()]
    assert all(u["store"] == "PortsOnlyStore" for u in used.values())
    assert {"status_counts", "extraction_counts", "domain_summary", "run_reports"} <= set(used["stats"]["calls"])
    assert {"query_pages"} <= set(used["ls"]["calls"])
    assert {"find_page", "read_extraction", "get_content"} <= set(used["show"]["calls"])
    assert {"find_page", "get_content"} <= set(used["diff"]["calls"])
    assert {"query_pages", "domain_summary"} <= set(used["export"]["calls"])
    assert not any(u["readonly"] is False for name, u in used.items() if name != "invalidate")
    assert used["invalidate"]["readonly"] is False
    assert {"lock", "find_page", "put_page", "transaction"} <= set(used["invalidate"]["calls"])
    assert {"iter_pages", "iter_extraction_keys", "iter_inputs", "leftovers"} <= set(used["prune"]["calls"])
    assert "Would delete 0 removed page(s)" in out["prune"]
    assert {"iter_pages", "read_extraction"} <= set(used["verify"]["calls"])  # a store without files: its ports
    assert "is consistent" in out["verify"]
    assert {"iter_page_heads", "get_domain"} <= set(used["boilerplate"]["calls"])
    assert {"iter_pages", "get_content"} <= set(used["vectors"]["calls"])
    wrapper = [u for u in stores if u["store"] == "RecordingStore" and u["argv"][0].endswith("recrawl.py")]
    crawl = [u for u in stores if u["store"] == "RecordingStore" and u["argv"][0].endswith("scrapy/__main__.py")]
    assert len(wrapper) == 2 and all(u["readonly"] for u in wrapper) and len(crawl) == 1  # before and after it


def test_a_store_that_cannot_be_loaded_is_one_line_and_status_2(crawled, tmp_path):
    site, cache = crawled
    for args in (["cache", "stats"], ["cache", "invalidate", "--all"], ["vectors", "verify"], ["boilerplate"]):
        for name in ("tests.nowhere.Store", "crawler.cache.lock.CacheLock"):
            proc = subprocess.run(
                scrapy_command(args, cache, {"EXTRACTED_DOCS_STORE": name}),
                cwd=ROOT,
                env=crawl_env(),
                capture_output=True,
                text=True,
                timeout=60,
            )
            assert proc.returncode == 2, (args, proc.stderr)
            assert f"EXTRACTED_DOCS_STORE={name!r}" in proc.stderr and "Traceback" not in proc.stderr
    assert "is not a store: it lacks get_response" in proc.stderr
    from tests.test_recrawl import recrawl_command

    refused = subprocess.run(
        [*recrawl_command(site.url + "/", cache), "-s", "EXTRACTED_DOCS_STORE=tests.nowhere.Store"],
        cwd=ROOT,
        env=crawl_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert refused.returncode == 2 and "EXTRACTED_DOCS_STORE='tests.nowhere.Store' cannot be imported" in refused.stderr


def test_ls_status_is_the_current_one_and_no_match_points_to_a_run_s_changes(crawled):
    """A page changed by one run and seen unchanged by the next is ``unchanged``: ``ls
    --status changed`` used to answer a bare "No page matches."."""
    site, cache = crawled
    site.edit("/api.html", "The API now has two functions.")
    assert run_crawl(site.url + "/", cache).report["pages_changed"] == 1
    assert run_crawl(site.url + "/", cache).report["pages_changed"] == 0
    out = ok(cache_cmd(cache, "ls", "--status", "changed"))
    assert out.strip() == (
        "No page matches. --status is a page's current status (the last crawl that saw it): "
        "what a run changed is `scrapy cache ls --run last` (or --run ID, from `scrapy cache stats`)."
    ), out
    assert ok(cache_cmd(cache, "ls", "--since", "2999-01-01")) == "No page matches.\n"  # no --status: no hint
    assert "current status" in " ".join(ok(cache_cmd(cache, "ls", "--help")).split())


def test_show_of_a_missing_spelling_suggests_the_stored_pages_close_to_it(crawled):
    """``show .../guide/install`` used to say "Not in the cache" alone while
    ``.../guide/install.html`` was stored."""
    site, cache = crawled
    bare = site.url.removeprefix("http://")  # typed without its scheme
    for asked, stored in (
        (site.url + "/guide/install", "/guide/install.html"),
        (site.url + "/guide/install/", "/guide/install.html"),
        (site.url + "/api", "/api.html"),
        (bare + "/api.html", "/api.html"),
        (bare + "/api", "/api.html"),
    ):
        missing = cache_cmd(cache, "show", asked)
        assert missing.returncode == 1 and "Traceback" not in missing.stderr
        assert missing.stderr.strip() == (f"Not in the cache: {asked}; stored close to it: {site.url}{stored}"), (
            missing.stderr
        )
    assert "Not in the cache" not in ok(cache_cmd(cache, "show", site.url + "/guide/install.html"))
    nothing = cache_cmd(cache, "diff", site.url + "/nope")
    assert nothing.returncode == 1 and nothing.stderr.strip() == f"Not in the cache: {site.url}/nope"


@pytest.mark.parametrize(
    ("command", "said"),
    [
        (["-m", "scrapy", "cache", "stats"], "scrapy cache: not in a Scrapy project"),
        (["-m", "scrapy", "boilerplate"], "scrapy boilerplate: not in a Scrapy project"),
        (["-m", "scrapy", "process"], "scrapy process: not in a Scrapy project"),
        (["-m", "crawler.recrawl", "http://127.0.0.1:9/"], "recrawl: not in a Scrapy project"),
    ],
)
def test_outside_the_project_a_command_says_where_to_run_it_in_one_line(tmp_path, command, said):
    """Scrapy itself said ``Unknown command: cache`` there, and ``python -m
    crawler.recrawl`` raised ModuleNotFoundError (the package is installed now, its
    commands found by their entry points)."""
    proc = subprocess.run(
        [sys.executable, *command], cwd=tmp_path, env=crawl_env(), capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 2, proc.stderr
    [line] = proc.stderr.splitlines()
    assert line.startswith(f"{said} (no scrapy.cfg in {tmp_path} or above): cd {ROOT}"), line
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_outside_the_project_a_cache_named_on_the_command_line_is_read(crawled, tmp_path):
    _, cache = crawled
    proc = subprocess.run(
        [sys.executable, "-m", "scrapy", "cache", "stats", "-s", f"EXTRACTED_DOCS_DIR={cache}"],
        cwd=tmp_path, env=crawl_env(), capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 0 and proc.stdout.startswith(f"Cache {cache}: "), proc.stderr


def test_export_markdown_writes_a_file_per_page_and_show_takes_the_file(crawled, tmp_path):
    site, cache = crawled
    out = tmp_path / "md"
    done = cache_process(cache, "export", "--markdown", str(out))
    assert ok(done).startswith(f"Exported 6 pages to {out}: 6 files written, 0 unchanged, 0 deleted; the index is ")
    install = out / f"127.0.0.1+{site.url.rsplit(':', 1)[1]}" / "guide" / "install.md"
    content = ok(cache_cmd(cache, "show", site.url + "/guide/install.html", "--content"))
    assert install.read_text().split("\n---\n", 1)[1] == content  # the body: what show --content prints
    assert ok(cache_cmd(cache, "show", str(install), "--content")) == content
    relative = os.path.relpath(install, ROOT)  # (the command runs in the project directory)
    assert ok(cache_cmd(cache, "show", relative)) == ok(cache_cmd(cache, "show", site.url + "/guide/install.html"))
    again = json.loads(ok(cache_cmd(cache, "export", "--markdown", str(out), "--json")))
    assert (again["pages"], again["written"], again["unchanged"], again["removed"]) == (6, 0, 6, 0)


def test_export_markdown_refuses_what_cannot_be_its_directory_in_one_line(crawled, tmp_path):
    _site, cache = crawled
    a_file = tmp_path / "a-file"
    a_file.write_text("x")
    locked_out = tmp_path / "read-only"
    locked_out.mkdir(mode=0o555)
    before = (cache / "cache.sqlite").read_bytes()
    for directory, said in (
        (a_file, f"{a_file} is not a directory"),
        (locked_out / "md", f"{locked_out} is not writable"),
    ):
        done = subprocess.run(
            drop_overrides(scrapy_command(["cache", "export", "--markdown", str(directory)], cache, {})),
            cwd=ROOT,
            env=crawl_env(),
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 1 and done.stderr.strip().splitlines() == [
            f"Error: The markdown export's directory {directory}: {said}"
        ], done.stderr
    assert a_file.read_text() == "x" and list(locked_out.iterdir()) == []
    assert (cache / "cache.sqlite").read_bytes() == before
    mixed = cache_cmd(cache, "export", "--markdown", str(tmp_path / "md"), "--include-content")
    assert mixed.returncode == 2 and "--markdown DIR writes every live page, not with --include-content" in mixed.stderr
    notes = tmp_path / "notes.md"
    notes.write_text("# my notes\n")
    shown = cache_cmd(cache, "show", str(notes))
    assert shown.returncode == 1 and f"Error: {notes} names no page: no url in a front matter" in shown.stderr


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_export_markdown_works_on_either_store(backend, tmp_path, request):
    cache, out = tmp_path / "cache", tmp_path / "md"
    store, settings, env = backend_store(backend, cache, request)
    pages = {"https://docs.example.com/a.html": "# A\n\nText of A.", "https://docs.example.com/b/": "# B"}
    for url, text in pages.items():
        key = page_key(canonical_url(url))
        record = {"url": url, "canonical_url": canonical_url(url), "domain": "docs.example.com", "status": "new"}
        store.put_page(key, {**record, "title": text.split("\n")[0][2:], "content_hash": key})
        store.put_content(key, {"url": url, "text": text, "fields": {}, "content_hash": key, "stored_at": "x"})
    store.commit()

    def cache_run(*args):
        return cache_subprocess(cache, settings, env, *args)

    assert ok(cache_run("export", "--markdown", str(out))).startswith(f"Exported 2 pages to {out}: 2 files written")
    a, b = out / "docs.example.com" / "a.md", out / "docs.example.com" / "b" / "index.md"
    assert ok(cache_run("show", str(a), "--content")) == "# A\n\nText of A.\n" == a.read_text().split("\n---\n")[1]
    key = page_key(canonical_url("https://docs.example.com/b/"))
    store.put_page(key, {**store.get_page(key), "status": "removed"})
    store.commit()
    store.close()
    assert ": 0 files written, 1 unchanged, 1 deleted;" in ok(cache_run("export", "--markdown", str(out)))
    assert a.is_file() and not b.exists() and not b.parent.exists()
