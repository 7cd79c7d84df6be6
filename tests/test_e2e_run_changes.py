"""End-to-end: "what changed last night" in one command. Two real crawls of a local
site; between them one page is edited, one deleted (it answers 404) and one added; the
second run's change list, ``scrapy cache ls --run last``, ``scrapy cache diff --run
last``, its change feed (CHANGES_FEEDS) and its webhook POST all name exactly those three."""

from __future__ import annotations

import json
import re
import socket
import threading
from http.server import BaseHTTPRequestHandler

from tests.crawl import assert_ok, cache_command, run_crawl
from tests.helpers import serve, stop_serving


def webhook_server():
    """A server on 127.0.0.1 that keeps the JSON bodies POSTed to it."""
    received: list[dict] = []
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers["Content-Length"]))
            with lock:
                received.append(json.loads(body))
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args):
            pass

    return serve(Handler), received


def test_a_recrawl_lists_exactly_the_edited_deleted_and_added_pages(site, tmp_path):
    cache = tmp_path / "cache"
    feeds = tmp_path / "feeds"
    server, received = webhook_server()
    settings = {
        "CHANGES_FEEDS": json.dumps({str(feeds / "%(name)s-%(run_id)s.jsonl"): {"format": "jsonlines"}}),
        "CHANGES_WEBHOOK_URL": f"http://127.0.0.1:{server.server_address[1]}/hook",
    }
    try:
        first = assert_ok(run_crawl(site.url + "/", cache, settings=settings))
        first_report = first.report  # runs/latest.json, read now
        first_changes = first_report["changes_sample"]
        assert len(first_changes) == 6 and {c["status"] for c in first_changes} == {"new"}
        assert all(c["extraction_file"] == f"extractions/{c['url_hash']}.json" for c in first_changes)
        assert all((cache / c["extraction_file"]).exists() for c in first_changes)

        site.edit("/guide/install.html", "Run pip install example==2.0 to install it.")
        site.remove("/api.html")  # the home page still links to it: it answers 404
        site.page("/guide/faq.html", "FAQ", "Answers to the questions asked most.")
        site.sitemap = [*(site.sitemap or []), "/guide/faq.html"]  # found, no other page changed
        second = assert_ok(run_crawl(site.url + "/", cache, settings=settings))
    finally:
        stop_serving(server)

    report = second.report
    run_id = report["run_id"]
    expected = {
        f"{site.url}/guide/install.html": "changed",
        f"{site.url}/api.html": "removed",
        f"{site.url}/guide/faq.html": "new",
    }
    assert {c["url"]: c["status"] for c in report["changes_sample"]} == expected
    assert (report["pages_new"], report["pages_changed"], report["pages_removed"]) == (1, 1, 1)

    # scrapy cache ls --run last: those pages, with their statuses
    listed = json.loads(cache_command(cache, "ls", "--run", "last", "--json"))
    assert {c["url"]: c["status"] for c in listed} == expected

    # scrapy cache diff --run last: the edit itself
    diff = cache_command(cache, "diff", "--run", "last")
    assert "-Run pip install example to install it." in diff
    assert "+Run pip install example==2.0 to install it." in diff
    assert f"# new: {site.url}/guide/faq.html" in diff and f"# removed: {site.url}/api.html" in diff

    # the change feed of each run, one file per run (%(run_id)s), through Scrapy's feed exports
    second_feed = feeds / f"docs-{run_id}.jsonl"
    records = [json.loads(line) for line in second_feed.read_text().splitlines()]
    assert {r["url"]: r["status"] for r in records} == expected
    assert {r["run_id"] for r in records} == {run_id}
    assert len((feeds / f"docs-{first_report['run_id']}.jsonl").read_text().splitlines()) == 6

    # the webhook: one POST per run, the summary and the change list
    assert [body["run_id"] for body in received] == [first_report["run_id"], run_id]
    body = received[1]
    assert {c["url"]: c["status"] for c in body["changes"]} == expected
    assert re.match(rf"run {run_id} \(finished in \w+\): 1 new, 1 changed", body["summary"])
    assert "changes_sample" not in body["report"] and body["report"]["pages_removed"] == 1


def test_a_webhook_that_never_answers_and_a_feed_that_cannot_be_written_leave_the_crawl_whole(site, tmp_path):
    cache = tmp_path / "cache"
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    with socket.socket() as silent:  # accepts connections, never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        settings = {
            "CHANGES_FEEDS": json.dumps({str(blocker / "changes.jsonl"): {"format": "jsonlines"}}),
            "CHANGES_WEBHOOK_URL": f"http://127.0.0.1:{silent.getsockname()[1]}/hook",
            "CHANGES_WEBHOOK_TIMEOUT": "0.5",
        }
        result = assert_ok(run_crawl(site.url + "/", cache, settings=settings))
    assert len(result.report["changes_sample"]) == 6  # the report is stored, whole
    assert "The change feed of run" in result.log and "was not written" in result.log
    assert "the webhook http://127.0.0.1:" in result.log and "was not sent" in result.log
    assert re.search(r"\(finished in \w+\): 6 new", result.log)  # the summary line, last
    assert len(json.loads(cache_command(cache, "ls", "--run", "last", "--json"))) == 6


def test_a_run_of_more_changes_than_the_reports_sample_sends_and_lists_every_one(tmp_path):
    """A first crawl of 140 pages: the report keeps the first 100 changes and the
    counts, latest.json points at it; the feed, the webhook and ``cache ls --run last
    --limit 0`` have every one, from the store's change table."""
    from bench.site import GeneratedSite
    from bench.site import serve as serve_site

    site = serve_site(GeneratedSite(140))
    threading.Thread(target=site.serve_forever, daemon=True).start()
    hook, received = webhook_server()
    cache, feed = tmp_path / "cache", tmp_path / "changes.jsonl"
    settings = {
        "CHANGES_FEEDS": json.dumps({str(feed): {"format": "jsonlines"}}),
        "CHANGES_WEBHOOK_URL": f"http://127.0.0.1:{hook.server_address[1]}/hook",
    }
    try:
        result = assert_ok(run_crawl(f"http://127.0.0.1:{site.server_address[1]}/", cache, settings=settings))
    finally:
        stop_serving(hook)
        stop_serving(site)
    report = result.report
    assert (report["changes_total"], report["changes_by_status"], report["pages_new"]) == (140, {"new": 140}, 140)
    assert len(report["changes_sample"]) == 100 and "changes" not in report
    latest = cache / "runs" / "latest.json"
    assert latest.is_symlink() and latest.resolve() == cache / "runs" / f"{report['run_id']}.json"
    listed = json.loads(cache_command(cache, "ls", "--run", "last", "--limit", "0", "--json"))
    assert len(listed) == 140 and len({c["url"] for c in listed}) == 140
    assert listed[:100] == report["changes_sample"]
    assert [json.loads(line)["url"] for line in feed.read_text().splitlines()] == [c["url"] for c in listed]
    (body,) = received
    assert body["changes"] == listed and body["report"]["changes_total"] == 140
