"""End-to-end: bad input, crashes and concurrent crawls never lose what is stored."""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import threading
import time

from crawler.support.plural import plural
from tests.crawl import (
    ROOT,
    cache_command,
    crawl_env,
    paths,
    run_crawl,
    scrapy_command,
    start_crawl,
    stat,
    wait_for_lines,
    wait_for_text,
)
from tests.site import Raw

PDF = b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\n%%EOF\n"


def test_non_html_malformed_redirects_and_server_errors(site, tmp_path):
    site.raw["/files/report"] = Raw(PDF, "application/pdf")
    site.raw["/download"] = Raw(b"PK\x03\x04" + os.urandom(64), "application/zip")
    site.raw["/binary.html"] = Raw(b"\x00\x01\x02garbage\x00" * 20, "text/html")
    site.raw["/broken.html"] = Raw(
        b"<html><head><title>Broken</title><body><main><h1>Broken page<p>Unclosed <b>tags"
        b"<div><p>Still readable text \xff\xfe with bad bytes</main></table></html>"
    )
    site.raw["/empty.html"] = Raw(b"")
    site.raw["/error.html"] = Raw(b"<h1>Internal error</h1>", status=500)
    site.redirects["/old-guide"] = "/guide/"
    site.raw["/refresh.html"] = Raw(
        b'<html><head><meta http-equiv="refresh" content="0; url=/api.html"></head><body></body></html>'
    )
    site.pages["/"].links += [
        "/files/report",
        "/download",
        "/binary.html",
        "/broken.html",
        "/empty.html",
        "/error.html",
        "/old-guide",
        "/refresh.html",
    ]
    cache = tmp_path / "cache"
    result = run_crawl(site.url + "/", cache, settings={"RETRY_TIMES": "1"})
    assert result.returncode == 0, result.stderr[-2000:]
    assert "Traceback" not in result.stderr
    assert stat(result, "docs/non_html_skipped") == 2
    assert stat(result, "docs/binary_skipped") == 1
    assert stat(result, "docs/failed_pages") == 1  # the 500, after its retry
    called = paths(site, result.calls)
    assert "/broken.html" in called  # malformed HTML still gives its text
    broken = next(
        json.loads(p.read_text())
        for p in (cache / "extractions").glob("*.json")
        if json.loads(p.read_text())["url"].endswith("/broken.html")
    )
    assert "Still readable text" in broken["data"]["input"]
    # redirects and meta refresh lead to pages already known: no extra pages
    assert not any(p in called for p in ("/old-guide", "/refresh.html", "/files/report", "/download"))
    report = result.report
    assert report["pages_new"] == 8  # six site pages, broken.html, empty.html
    assert report["complete"] is False  # a page failed: nothing may be marked removed
    assert stat(result, "extraction/empty_input") == 1


def test_sigkill_during_extraction_then_resume(site, tmp_path, reap):
    for n in range(14):
        site.page(f"/extra/{n}.html", f"Extra {n}", f"Extra page number {n} with its own text.")
    site.pages["/"].links += [f"/extra/{n}.html" for n in range(14)]
    cache = tmp_path / "cache"
    calls_log = tmp_path / "killed-calls.log"
    proc = reap(start_crawl(site, cache, calls_log, {"TEST_EXTRACTOR_DELAY": "0.3", "EXTRACTOR_CONCURRENCY": "2"}))
    wait_for_lines(calls_log, 7, proc)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=10)
    started = [line.split("\t")[0] for line in calls_log.read_text().splitlines()]
    finished = {json.loads(p.read_text())["url"] for p in (cache / "extractions").glob("*.json")}
    assert 0 < len(finished) < 20
    assert not list((cache / "extractions").glob(".*.tmp"))  # no half-written file left visible
    # not damage: verify says the next run adopts them, and exits 0
    verified = subprocess.run(
        scrapy_command(["cache", "verify"], cache), cwd=ROOT, env=crawl_env(), capture_output=True, text=True
    )
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert f"the next run adopts {plural(len(finished), 'extraction')} without an extractor call" in verified.stdout

    resumed = run_crawl(site.url + "/", cache)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    # every page extracted exactly once across the two runs, except those whose call
    # was under way at the kill; nothing that finished before the kill is redone
    assert not finished & set(resumed.calls)
    assert set(resumed.calls) | finished == {
        json.loads(p.read_text())["url"] for p in (cache / "extractions").glob("*.json")
    }
    assert len(finished) + len(resumed.calls) == 20
    assert set(started) - finished <= set(resumed.calls)  # calls cut short are made again
    again = run_crawl(site.url + "/", cache)
    assert again.calls == []
    assert again.report["pages_unchanged"] == 20


def test_two_crawls_at_once(site, tmp_path, reap):
    cache, calls_log, gate = tmp_path / "cache", tmp_path / "first-calls.log", tmp_path / "gate"
    # the first crawl's calls wait for the gate: it holds the lock until the test opens it
    first = reap(start_crawl(site, cache, calls_log, {"TEST_EXTRACTOR_GATE": str(gate)}))
    wait_for_lines(calls_log, 1, first)
    second = run_crawl(site.url + "/", cache)
    assert second.returncode == 1
    assert "in use by another crawl" in second.stderr
    assert "Traceback" not in second.stderr
    assert second.calls == []
    gate.touch()
    _out, err = first.communicate(timeout=120)
    assert first.returncode == 0, err[-2000:]
    report = json.loads((cache / "runs" / "latest.json").read_text())
    assert report["pages_new"] == 6
    assert len(list((cache / "runs").glob("*.json"))) == 2  # the first run's report and latest.json


def test_corrupt_cache_files(site, tmp_path):
    cache = tmp_path / "cache"
    assert run_crawl(site.url + "/", cache).returncode == 0
    # a damaged extraction file: the crawl trusts the page record (no file opened on a
    # recrawl); `scrapy cache verify` finds it, and after --repair the page is extracted again
    victim = next((cache / "extractions").glob("*.json"))
    url = json.loads(victim.read_text())["url"]
    victim.write_text("{not json")
    assert run_crawl(site.url + "/", cache).calls == []
    found = cache_command(cache, "verify", "--repair")
    assert "extraction_missing" in found and url in found
    repaired = run_crawl(site.url + "/", cache)
    assert repaired.returncode == 0
    assert repaired.calls == [url]
    assert json.loads(victim.read_text())["url"] == url

    # an index that is not a database: a clear message, exit 1, the file kept as it was
    index = cache / "cache.sqlite"
    for extra in ("cache.sqlite-wal", "cache.sqlite-shm"):
        (cache / extra).unlink(missing_ok=True)
    index.write_bytes(b"this is not a database" * 100)
    broken = run_crawl(site.url + "/", cache)
    assert broken.returncode == 1
    assert "cannot be read" in broken.stderr and "cache.sqlite" in broken.stderr
    assert "Traceback" not in broken.stderr
    assert index.read_bytes() == b"this is not a database" * 100


def _extra_pages(site, count):
    for n in range(count):
        site.page(f"/extra/{n}.html", f"Extra {n}", f"Extra page number {n} with its own text.")
    site.pages["/"].links += [f"/extra/{n}.html" for n in range(count)]


def test_sigint_during_extraction_finishes_the_call_in_flight_and_exits_130(site, tmp_path, reap):
    _extra_pages(site, 4)  # 10 pages
    cache, calls_log, log, gate = (tmp_path / n for n in ("cache", "calls.log", "crawl.log", "gate"))
    settings = {"TEST_EXTRACTOR_GATE": str(gate), "EXTRACTOR_CONCURRENCY": "1"}
    proc = reap(start_crawl(site, cache, calls_log, settings, log=log))
    wait_for_lines(calls_log, 1, proc)  # the first call is in flight, held by the gate
    proc.send_signal(signal.SIGINT)
    wait_for_text(log, "SIGINT received", proc)
    gate.touch()  # the call in flight may now end
    assert proc.wait(timeout=120) == 130
    output = log.read_text()
    assert "Traceback" not in output
    assert "INTERRUPTED by SIGINT, 9 extractions left for the next run" in output
    report = json.loads((cache / "runs" / "latest.json").read_text())
    assert report["interrupted"] == "SIGINT"
    assert report["extractor_calls"] == 1  # the call in flight finished and was saved
    assert report["extraction_left"] == 9
    assert len(calls_log.read_text().splitlines()) == 1  # no call started after the signal
    assert len(list((cache / "extractions").glob("*.json"))) == 1
    # the next run extracts exactly the 9 pages left
    second = run_crawl(site.url + "/", cache)
    assert second.returncode == 0, second.stderr[-2000:]
    assert len(second.calls) == 9
    assert second.report.get("interrupted") is None


def test_second_sigterm_gives_up_the_call_in_flight_and_exits_143(site, tmp_path, reap):
    cache, calls_log, log, gate = (tmp_path / n for n in ("cache", "calls.log", "crawl.log", "gate"))
    settings = {"TEST_EXTRACTOR_GATE": str(gate), "EXTRACTOR_CONCURRENCY": "2"}
    proc = reap(start_crawl(site, cache, calls_log, settings, log=log))
    wait_for_lines(calls_log, 2, proc)
    proc.send_signal(signal.SIGTERM)
    wait_for_text(log, "SIGTERM received", proc)
    proc.send_signal(signal.SIGTERM)  # the gate never opens: the calls are given up
    assert proc.wait(timeout=120) == 143
    output = log.read_text()
    assert "Giving up the extractor calls in flight: SIGTERM received again" in output
    assert "'extraction/abandoned': 2" in output
    report = json.loads((cache / "runs" / "latest.json").read_text())
    assert report["interrupted"] == "SIGTERM"
    assert report["extractor_calls"] == 0
    assert report["extraction_errors"] == 0  # given up is not failed
    assert report["extraction_left"] == 6
    from crawler.cache.sqlite import SqliteDocStore

    store = SqliteDocStore(cache, readonly=True)
    records = [record for _, record in store.iter_pages()]
    store.close()
    assert len(records) == 6 and not [r for r in records if "extraction_error" in r]
    second = run_crawl(site.url + "/", cache)
    assert len(second.calls) == 6


def test_sigint_wait_runs_out(site, tmp_path, reap):
    cache, calls_log, log, gate = (tmp_path / n for n in ("cache", "calls.log", "crawl.log", "gate"))
    settings = {"TEST_EXTRACTOR_GATE": str(gate), "EXTRACTOR_CONCURRENCY": "1", "EXTRACTOR_INTERRUPT_WAIT": "0"}
    proc = reap(start_crawl(site, cache, calls_log, settings, log=log))
    wait_for_lines(calls_log, 1, proc)
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=120) == 130
    assert "Giving up the extractor calls in flight: the wait ran out" in log.read_text()


def test_a_wrong_value_of_a_scrapy_setting_is_named(site, tmp_path):
    """``-s DOWNLOAD_DELAY=abc`` used to say only ``could not convert string to float:
    'abc'``, naming no setting."""
    cache = tmp_path / "cache"
    result = run_crawl(site.url + "/", cache, settings={"DOWNLOAD_DELAY": "abc"})
    assert result.returncode == 1
    assert "Crawl not started: Setting DOWNLOAD_DELAY='abc' is not a valid number" in result.stderr
    assert "Traceback" not in result.stderr and not cache.exists() and site.log == []


def test_a_misspelt_spider_argument_is_said_not_silently_ignored(site, tmp_path):
    """``-a maxpages=2`` used to crawl the whole site without a word; any other ``-a``
    stays a spider attribute, as in Scrapy (scrapyd's ``_job``)."""
    result = run_crawl(site.url + "/", tmp_path / "cache", args={"maxpages": "2", "_job": "j1"})
    assert result.returncode == 0, result.stderr[-2000:]
    assert "Unknown spider argument maxpages, ignored (did you mean max_pages?)" in result.stderr
    assert "_job" not in result.stderr


def test_sigint_while_fetching_exits_130_not_0(site, tmp_path, reap):
    """Ctrl-C while pages are downloaded: Scrapy stops gracefully (finish reason
    ``shutdown``) and used to exit 0, as if the crawl had finished."""
    cache, calls_log, log = tmp_path / "cache", tmp_path / "calls.log", tmp_path / "crawl.log"
    held = site.holds["/api.html"] = threading.Event()
    proc = reap(start_crawl(site, cache, calls_log, {}, log=log))
    deadline = time.monotonic() + 60
    while "/api.html" not in [path for path, _ in site.log]:  # its download is in flight
        assert time.monotonic() < deadline and proc.poll() is None, log.read_text()[-2000:]
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    wait_for_text(log, "Received SIGINT, shutting down gracefully", proc)
    held.set()  # the download in flight ends; the crawl closes
    assert proc.wait(timeout=120) == 130
    output = log.read_text()
    assert "Traceback" not in output and re.search(r"\(shutdown in \w+, partial", output)
    assert json.loads((cache / "runs" / "latest.json").read_text())["finish_reason"] == "shutdown"


def test_pages_of_a_run_killed_while_fetching_are_new_for_the_run_that_reports_them(site, tmp_path, reap):
    cache, calls_log = tmp_path / "cache", tmp_path / "calls.log"
    site.holds["/hidden.html"] = threading.Event()  # fetching never ends while it is held
    proc = reap(start_crawl(site, cache, calls_log, {"EXTRACTED_DOCS_COMMIT_EVERY": "1"}))
    deadline = time.monotonic() + 60
    recorded = 0
    while recorded < 5:  # the five linked pages recorded and committed
        assert time.monotonic() < deadline and proc.poll() is None, "the crawl did not record the pages"
        time.sleep(0.05)
        try:
            with sqlite3.connect(f"file:{cache / 'cache.sqlite'}?mode=ro", uri=True) as conn:
                recorded = conn.execute("SELECT count(*) FROM pages").fetchone()[0]
        except sqlite3.Error:
            recorded = 0
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    site.holds.pop("/hidden.html").set()
    assert not (cache / "runs" / "latest.json").exists()  # no run reported these pages
    result = run_crawl(site.url + "/", cache)
    assert result.returncode == 0, result.stderr[-2000:]
    assert (result.report["pages_new"], result.report["pages_unchanged"]) == (6, 0)
    again = run_crawl(site.url + "/", cache)
    assert (again.report["pages_new"], again.report["pages_unchanged"]) == (0, 6)


def test_a_site_that_does_not_answer_exits_1(tmp_path):
    result = run_crawl("http://127.0.0.1:9/", tmp_path / "cache", settings={"RETRY_TIMES": "0"})  # nothing listens
    assert result.returncode == 1
    assert "Connection was refused" in result.stderr
    assert (
        "No page could be crawled: the start page http://127.0.0.1:9/ failed: DownloadConnectionRefusedError"
        in result.stderr
    )
    assert result.report["pages_removed"] == 0
    # Scrapy's RobotsTxtMiddleware logged the refused robots.txt with some 60 lines of
    # traceback; robots.txt, the start page and the sitemap are one cause: one line
    assert "Traceback" not in result.stderr
    problems = [line for line in result.stderr.splitlines() if " WARNING: " in line or " ERROR: " in line]
    assert len(problems) == 2 and "(other requests to 127.0.0.1:9 failing so are not logged)" in problems[0]


def test_a_failing_robots_txt_is_downloaded_once(site, tmp_path):
    """Scrapy's RobotsTxtMiddleware reads robots.txt for its rules, the spider for its
    Sitemap: lines: one download (and its retry) serves both."""
    site.robots_status = 503
    result = run_crawl(site.url + "/", tmp_path / "cache", settings={"RETRY_TIMES": "1"})
    assert site.requests_for("/robots.txt") == [503, 503]  # were [503, 503, 503, 503]
    # said as robots.txt (was "Sitemap failed: .../robots.txt"); the run is partial, as before
    assert f"robots.txt failed: {site.url}/robots.txt: status 503" in result.stderr
    assert "Sitemap failed" not in result.stderr
    assert "robots.txt failed" in result.report["incomplete_reasons"]
    assert "sitemap failed" not in result.report["incomplete_reasons"]
    assert result.report["complete"] is False and result.report["pages_new"] == 6  # every page of the site


def test_a_misspelled_spider_name_is_one_line_naming_the_spiders(tmp_path):
    """Scrapy's own answer was a KeyError traceback."""
    result = run_crawl("http://127.0.0.1:9/", tmp_path / "cache", spider="doc")
    assert result.returncode == 1
    assert "Crawl not started: no spider named 'doc' (this project's: catalog, docs)" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "cache").exists()
