"""End to end: a crawl stays under the path of its start URL (the server's request log
says so), ``-a scope=site`` crawls the whole site, a start URL's redirect takes the crawl
where it leads, and a cache crawled whole keeps its pages outside the path when it is
crawled again from a sub-path (never marked removed; unchanged when crawled whole again)."""

from __future__ import annotations

import json
import subprocess

import pytest

from crawler.cache.postgres import PostgresDocStore
from tests.crawl import ROOT, assert_ok, cache_command, crawl_env, run_crawl, scrapy_command, stat
from tests.site import Site

#: what the crawl reads besides pages (anywhere on the host)
DISCOVERY = {"/robots.txt", "/sitemap.xml"}
EN = {"/en/", "/en/guide.html", "/en/api/", "/en/api/run.html", "/en/listed.html", "/en/moved.html"}
ELSEWHERE = {"/", "/docs/", "/docs/intro.html", "/docs/moved.html", "/docs/listed.html", "/dev/", "/de/guide.html"}


def languages_site() -> Site:
    """A site of one product's documentation in English under /en/, another's under
    /docs/, a developer guide under /dev/, linked across; /en/moved.html redirects to
    /docs/moved.html; the sitemap lists a page of each part."""
    site = Site()
    site.page("/", "Home", "All the documentation of Example.", links=["/en/", "/docs/", "/dev/"])
    site.page(
        "/en/",
        "English",
        "The English documentation.",
        links=["/en/guide.html", "/en/api/", "/en/moved.html", "/docs/intro.html", "/dev/"],
    )
    site.page("/en/guide.html", "Guide", "How to use Example.", links=["/en/", "/de/guide.html"])
    site.page("/en/api/", "API", "The functions of Example.", links=["/en/api/run.html"])
    site.page("/en/api/run.html", "run", "run() runs Example.", links=["/en/api/", "/docs/"])
    site.page("/en/listed.html", "Listed", "Only the sitemap lists this English page.")
    site.redirects["/en/moved.html"] = "/docs/moved.html"
    site.page("/docs/", "Docs", "Another product's documentation.", links=["/docs/intro.html"])
    site.page("/docs/intro.html", "Intro", "An introduction to the other product.", links=["/docs/"])
    site.page("/docs/moved.html", "Moved", "A page moved out of the English part.")
    site.page("/docs/listed.html", "Listed too", "Only the sitemap lists this page.")
    site.page("/dev/", "Developers", "How Example is developed.", links=["/"])
    site.page("/de/guide.html", "Anleitung", "Wie man Example benutzt.", links=["/en/guide.html"])
    site.sitemap = ["/", "/en/listed.html", "/docs/listed.html"]
    return site


@pytest.fixture
def languages():
    served = languages_site().start()
    yield served
    served.stop()


def requested(site: Site) -> set[str]:
    """The paths the crawl asked the site for, discovery files aside."""
    with site.lock:
        return {path for path, _ in site.log} - DISCOVERY


def test_a_crawl_started_at_en_requests_nothing_outside_en_unless_widened(languages, tmp_path):
    site = languages
    result = assert_ok(run_crawl(site.url + "/en/", tmp_path / "scoped"))
    assert requested(site) == EN  # /en/moved.html answered its redirect, not followed to /docs/
    assert {path for path, _ in site.log} >= DISCOVERY  # robots.txt and the sitemap: read at the root
    report = result.report
    assert report["complete"] is True and report["pages_new"] == 5 and report["pages_removed"] == 0
    # /docs/intro.html, /dev/, /de/guide.html, /docs/ and / (each page's header) linked,
    # /docs/moved.html redirected to, / and /docs/listed.html listed: once each
    assert stat(result, "docs/out_of_scope") == 7
    assert stat(result, "docs/failed_pages") == 0 and stat(result, "docs/not_found_pages") == 0
    assert "7 URLs outside the crawl's scope (127.0.0.1/en) not requested" in result.stderr

    site.reset_log()
    whole = assert_ok(run_crawl(site.url + "/en/", tmp_path / "whole", args={"scope": "site"}))
    assert requested(site) == EN | ELSEWHERE
    assert whole.report["pages_new"] == 5 + len(ELSEWHERE) and stat(whole, "docs/out_of_scope") == 0


def test_a_start_url_s_redirect_takes_the_scope_where_it_leads(languages, tmp_path):
    site = languages
    site.redirects["/latest/"] = "/en/"
    result = assert_ok(run_crawl(site.url + "/latest/", tmp_path / "cache"))
    assert requested(site) == EN | {"/latest/"}
    assert f"Start URL {site.url}/latest/ redirected to {site.url}/en/: the crawl's scope is " in result.stderr
    assert result.report["complete"] is True and result.report["pages_new"] == 5

    site.reset_log()  # a start URL without its slash: the same part of the site
    site.redirects["/en"] = "/en/"
    assert_ok(run_crawl(site.url + "/en", tmp_path / "no-slash"))
    assert requested(site) == EN | {"/en"}


def test_a_cache_crawled_whole_keeps_its_pages_outside_the_path(languages, tmp_path):
    """The upgrade: a cache made before the path scope (the whole host) crawled from /en/
    with the default scope marks none of its other pages removed, and the run is
    complete; crawled whole again, they are unchanged."""
    site, cache = languages, tmp_path / "cache"
    before = assert_ok(run_crawl(site.url + "/en/", cache, args={"scope": "site"}))
    assert before.report["pages_new"] == 5 + len(ELSEWHERE)

    site.reset_log()
    scoped = assert_ok(run_crawl(site.url + "/en/", cache))
    assert requested(site) == EN
    report = scoped.report
    assert report["complete"] is True and report["pages_removed"] == 0 and "removal held" not in json.dumps(report)
    assert (report["pages_unchanged"], report["pages_new"], report["pages_changed"]) == (5, 0, 0)
    removed = json.loads(cache_command(cache, "ls", "--status", "removed", "--json"))
    assert removed == []
    live = {
        row["url"].removeprefix(site.url) for row in json.loads(cache_command(cache, "ls", "--limit", "0", "--json"))
    }
    assert live == (EN - {"/en/moved.html"}) | ELSEWHERE

    site.reset_log()
    again = assert_ok(run_crawl(site.url + "/en/", cache, args={"scope": "site"}))
    assert requested(site) == EN | ELSEWHERE
    report = again.report
    assert (report["pages_unchanged"], report["pages_new"], report["pages_removed"]) == (12, 0, 0)
    assert again.calls == []  # no page extracted again


def test_a_shared_run_from_en_requests_and_removes_nothing_outside_en(languages, tmp_path, postgres_dsn, redis_url):
    """The same upgrade in a shared-frontier run on the shared store: its crawl requests
    nothing outside /en/, and its processing (``scrapy process --run``) marks none of the
    pages outside it removed, the run complete."""
    site = languages
    settings = {"EXTRACTED_DOCS_STORE": "crawler.cache.postgres.PostgresDocStore"}
    env = {"EXTRACTED_DOCS_DSN": postgres_dsn, "FRONTIER_REDIS_URL": redis_url}
    assert_ok(run_crawl(site.url + "/en/", tmp_path / "whole", settings=settings, args={"scope": "site"}, env=env))

    site.reset_log()
    run = {**settings, "FRONTIER_ENABLED": "True", "FRONTIER_RUN": "scoped"}
    assert_ok(run_crawl(site.url + "/en/", tmp_path / "crawler", settings=run, env=env))
    assert requested(site) == EN
    command = scrapy_command(["process", "--run", "scoped", "--wait", "60"], tmp_path / "processing", settings)
    processed = subprocess.run(command, cwd=ROOT, env=crawl_env(env), capture_output=True, text=True, timeout=300)
    assert processed.returncode == 0, processed.stderr[-3000:]
    store = PostgresDocStore(postgres_dsn, readonly=True, create=False)
    try:
        report = next(r for r in reversed(store.run_reports(10)) if r["run_id"] == "scoped" and r["kind"] == "run")
        statuses = {record["url"].removeprefix(site.url): record["status"] for _, record in store.iter_pages()}
    finally:
        store.close()
    assert report["complete"] is True and report["pages_removed"] == 0
    assert sorted(path for path, status in statuses.items() if status == "removed") == []
    assert set(statuses) == (EN - {"/en/moved.html"}) | ELSEWHERE
