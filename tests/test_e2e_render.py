"""End-to-end: JavaScript pages rendered by Debian's Chromium (never skipped: `make test`
installs it), and recrawls that render only what changed."""

from __future__ import annotations

import json
import re
import subprocess

import pytest

from tests.crawl import ROOT, assert_ok, crawl_env, paths, run_crawl, scrapy_command
from tests.site import Raw, Site

pytestmark = pytest.mark.browser

#: every browser crawl: a rendering slower than this fails (the failure test's script
#: takes far longer; a local page renders in well under a second)
RENDER_SETTINGS = {"PLAYWRIGHT_ENABLED": "True", "PLAYWRIGHT_DEFAULT_NAVIGATION_TIMEOUT": "10000"}


def inline_script_page(text: str) -> str:
    """HTML whose article text only JavaScript makes: the raw HTML holds it reversed."""
    return (
        '<div id="article"></div><script>document.getElementById("article").innerHTML = '
        f'"<p>" + "{text[::-1]}".split("").reverse().join("") + "</p>";</script>'
    )


FETCH_SCRIPT = (
    '<div id="data"></div><script>fetch("/data/article.json").then(r => r.json()).then(d => {'
    'document.getElementById("data").innerHTML = "<p>" + d.text + "</p>"; });</script>'
)


def json_data(text: str) -> Raw:
    return Raw(json.dumps({"text": text}).encode(), "application/json")


def js_site(validators: str, noise: bool) -> Site:
    site = Site(validators, noise)
    site.page("/", "Home", "Welcome to the app documentation.", links=["/app/", "/data-page/"])
    site.page("/app/", "App", "The app page.", extra_html=inline_script_page("Rendered by the inline script."))
    site.page("/data-page/", "Data", "The data page.", extra_html=FETCH_SCRIPT)
    site.raw["/data/article.json"] = json_data("Loaded from the JSON endpoint.")
    return site.start()


def extracted_text(cache, site, path):
    """The extractor input recorded in the extracted-docs output for ``path``."""
    for file in (cache / "extractions").glob("*.json"):
        extraction = json.loads(file.read_text())
        if extraction["url"] == site.url + path:
            return extraction["data"]["input"]
    raise AssertionError(f"no extraction for {path}")


def stat(result, name):
    """A stat of the crawl, from the stats Scrapy dumps at the end of the log; 0 when
    the dump, read as it is written, does not have it."""
    dump = result.stderr.partition("Dumping Scrapy stats:")[2]
    found = dict(re.findall(r"'([\w/.-]+)': (\d+)", dump))
    # the dump is there and read: a stat it lacks is truly 0, not a format it misses
    assert int(found.get("log_count/INFO", 0)) > 0, "no stats dump in the log"
    return int(found.get(name, 0))


def test_rendered_once_replayed_while_unchanged_rendered_again_when_changed_and_retried_after_a_failure(tmp_path):
    site = js_site("etag", noise=True)
    cache = tmp_path / "cache"
    try:
        raw_app = site.render("/app/", site.pages["/app/"]).decode()
        assert "Rendered by the inline script." not in raw_app  # only the browser sees the text

        first = run_crawl(site.url + "/", cache, settings=RENDER_SETTINGS)
        assert_ok(first)
        assert first.report["render"] == {
            "pages_rendered": 3,
            "renders_avoided": 0,
            "errors": 0,
            "failed": {},
            "script_failed": {},
            "script_failed_recorded": {},
            "script_failed_standing": [],
        }
        assert stat(first, "playwright/browser_count") == 1
        assert "Rendered by the inline script." in extracted_text(cache, site, "/app/")
        assert "Loaded from the JSON endpoint." in extracted_text(cache, site, "/data-page/")

        # unchanged: every page answers 304, no page is rendered, no browser is launched
        second = run_crawl(site.url + "/", cache, settings=RENDER_SETTINGS)
        assert_ok(second)
        assert second.report["render"] == {
            "pages_rendered": 0,
            "renders_avoided": 3,
            "errors": 0,
            "failed": {},
            "script_failed": {},
            "script_failed_recorded": {},
            "script_failed_standing": [],
        }
        assert stat(second, "render/avoided_304") == 3
        assert stat(second, "playwright/browser_count") == 0
        assert "Launching browser" not in second.stderr
        assert second.calls == []
        assert second.report["pages_unchanged"] == 3

        # the inline script's text changes; the data page gets a script that never loads
        site.page("/app/", "App", "The app page.", extra_html=inline_script_page("Rendered again, second edition."))
        site.page("/data-page/", "Data", "The data page.", extra_html=FETCH_SCRIPT + '<script src="/slow.js"></script>')
        site.raw["/slow.js"] = Raw(b"window.slow = true;", "application/javascript")
        site.delays["/slow.js"] = 60
        site.raw["/data/article.json"] = json_data("Loaded from the JSON endpoint, second edition.")
        third = run_crawl(site.url + "/", cache, settings=RENDER_SETTINGS)
        assert_ok(third)  # the failure is told in lines, without a traceback
        render = third.report["render"]
        assert (render["pages_rendered"], render["renders_avoided"], render["errors"]) == (1, 1, 1)
        assert list(render["failed"]) == [site.url + "/data-page/"]
        assert "Timeout" in render["failed"][site.url + "/data-page/"]
        assert "Rendering " + site.url + "/data-page/ failed" in third.stderr
        assert paths(site, third.calls) == ["/app/"]
        assert "Rendered again, second edition." in extracted_text(cache, site, "/app/")
        # the failed page keeps what was stored; the run is incomplete, nothing is marked removed
        assert "Loaded from the JSON endpoint." in extracted_text(cache, site, "/data-page/")
        assert third.report["complete"] is False and third.report["pages_removed"] == 0

        # the script loads again: the page whose rendering failed is rendered (its raw
        # HTML answers 304, but it is not the HTML of the stored rendering)
        site.delays.clear()
        fourth = run_crawl(site.url + "/", cache, settings=RENDER_SETTINGS)
        assert_ok(fourth)
        assert fourth.report["render"] == {
            "pages_rendered": 1,
            "renders_avoided": 2,
            "errors": 0,
            "failed": {},
            "script_failed": {},
            "script_failed_recorded": {},
            "script_failed_standing": [],
        }
        assert stat(fourth, "render/reason/raw_changed") == 1
        assert paths(site, fourth.calls) == ["/data-page/"]
        assert "second edition" in extracted_text(cache, site, "/data-page/")
        assert fourth.report["complete"] is True
    finally:
        site.stop()


def test_scope_unchanged_raw_html_and_untrusted_sites(tmp_path):
    site = js_site("none", noise=False)  # no validators: every recrawl downloads every page
    cache = tmp_path / "cache"
    settings = {**RENDER_SETTINGS, "RENDER_URL_PATTERNS": "/app/$,/data-page/$"}
    try:
        first = run_crawl(site.url + "/", cache, settings=settings)
        assert_ok(first)
        assert first.report["render"]["pages_rendered"] == 2  # the home page is out of scope
        assert "Rendered by the inline script." in extracted_text(cache, site, "/app/")
        assert "Welcome to the app documentation." in extracted_text(cache, site, "/")

        second = run_crawl(site.url + "/", cache, settings=settings)
        assert_ok(second)
        assert second.report["render"]["renders_avoided"] == 2
        assert stat(second, "render/avoided_raw_unchanged") == 2
        assert stat(second, "playwright/browser_count") == 0
        assert second.calls == []

        # only the JSON changes: the raw HTML cannot tell, so this site is not trusted
        site.raw["/data/article.json"] = json_data("Loaded from the JSON endpoint, second edition.")
        third = run_crawl(site.url + "/", cache, settings={**settings, "RENDER_TRUST_RAW_HTML": "False"})
        assert_ok(third)
        assert third.report["render"]["pages_rendered"] == 2
        assert stat(third, "render/reason/not_trusted") == 2
        assert paths(site, third.calls) == ["/data-page/"]  # the app page rendered the same
        assert "second edition" in extracted_text(cache, site, "/data-page/")
    finally:
        site.stop()


def test_missing_chromium_is_one_line_and_nothing_starts(tmp_path):
    cache = tmp_path / "cache"
    result = run_crawl(
        "http://127.0.0.1:9/",
        cache,
        settings={
            "PLAYWRIGHT_ENABLED": "True",
            "PLAYWRIGHT_LAUNCH_OPTIONS": '{"executable_path": "/nonexistent/chromium"}',
        },
    )
    assert result.returncode == 1
    errors = [line for line in result.stderr.splitlines() if " ERROR: " in line]
    assert len(errors) == 1 and "Crawl not started:" in errors[0]
    assert "apt-get install --no-install-recommends chromium" in errors[0]
    assert "Traceback" not in result.stderr
    assert not cache.exists()


def test_a_browser_error_after_a_raw_200_fails_the_page_once_and_removes_nothing(tmp_path):
    """The browser gets 404 (not the page being gone), 503 on every try (retried, then
    failed once), 503 once (retried, rendered): nothing stored is lost."""
    site = Site("etag", noise=False)
    pages = ("/gone/", "/down/", "/flaky/")
    site.page("/", "Home", "The home page.", links=list(pages))
    for path in pages:
        site.page(path, path.strip("/").title(), "Raw text.", extra_html=inline_script_page(f"{path} first edition."))
    site.start()
    cache = tmp_path / "cache"
    settings = {**RENDER_SETTINGS, "RENDER_URL_PATTERNS": "/gone/$,/down/$,/flaky/$"}
    try:
        first = run_crawl(site.url + "/", cache, settings=settings)
        assert_ok(first)
        assert first.report["render"]["pages_rendered"] == 3

        for path in pages:  # new raw HTML: each page is rendered again
            site.page(path, path.strip("/").title(), "Raw text.", extra_html=inline_script_page(f"{path} second."))
        site.browser_statuses = {"/gone/": [404], "/down/": [503], "/flaky/": [503, 200]}
        site.browser_log.clear()
        second = run_crawl(site.url + "/", cache, settings=settings)
        assert_ok(second)
        render = second.report["render"]
        assert (render["pages_rendered"], render["errors"]) == (1, 2)
        assert paths(site, render["failed"]) == ["/down/", "/gone/"]
        assert render["failed"][site.url + "/gone/"] == "the browser got status 404"
        assert sorted(site.browser_log) == ["/down/"] * 3 + ["/flaky/"] * 2 + ["/gone/"]  # RETRY_TIMES 2
        assert second.stderr.count("failed (rendered again next run)") == 2
        assert stat(second, "docs/gone_pages") == 0 and stat(second, "docs/failed_pages") == 2
        # the run is incomplete: the pages whose rendering failed keep their text, none is removed
        assert second.report["complete"] is False and second.report["pages_removed"] == 0
        assert "/gone/ first edition." in extracted_text(cache, site, "/gone/")
        assert "/down/ first edition." in extracted_text(cache, site, "/down/")
        assert "/flaky/ second." in extracted_text(cache, site, "/flaky/")
        # each failed page is one error: /down/'s is RetryMiddleware's "Gave up retrying"
        assert stat(second, "log_count/ERROR") == 1 and second.report["errors"] == 2
        assert "; 2 errors; 2 renderings failed (`scrapy cache ls --failed`)" in second.stderr
    finally:
        site.stop()


LATIN_PAGE = (
    '<html><head><title>Latin</title></head><body><main><h1>Latin</h1><p>Caf\xe9 ouvert.</p><div id="a"></div>'
    '<script>document.getElementById("a").innerHTML = "<p>\\u65e5\\u672c\\u8a9e \\u2026 caf\\u00e9</p>";</script>'
    "</main></body></html>"
).encode("latin-1")


def test_renderings_keep_their_encoding_and_pages_the_browser_leaves_are_not_stored_as_theirs(tmp_path):
    """A latin-1 page rendered to UTF-8 is replayed as it was rendered; a script redirect
    and a meta refresh lead to their target, never to a stale copy of it; an
    invalidated page is rendered again."""
    site = Site("etag", noise=False)
    # latin-1 HTML whose script writes text latin-1 cannot hold: the browser's DOM is UTF-8
    site.raw["/latin/"] = Raw(LATIN_PAGE, "text/html; charset=iso-8859-1")
    site.page("/j/", "Jump", "Leaving.", extra_html='<script>location.replace("/p/")</script>')
    site.page("/p/", "Target", "The target.", extra_html=inline_script_page("Target, first edition."))
    refresh = b'<html><head><meta http-equiv="refresh" content="0; url=/p2/"></head><body>Moved</body></html>'
    site.raw["/m/"] = Raw(refresh)
    site.page("/p2/", "Refreshed", "Refreshed.", extra_html=inline_script_page("Refresh target."))
    site.start()
    cache = tmp_path / "cache"
    start = ",".join(site.url + path for path in ("/j/", "/p/", "/latin/", "/m/"))
    try:
        first = run_crawl(start, cache, settings=RENDER_SETTINGS)
        assert_ok(first)
        assert "日本語 … café" in extracted_text(cache, site, "/latin/")
        assert "Target, first edition." in extracted_text(cache, site, "/p/")
        assert "Refresh target." in extracted_text(cache, site, "/p2/")
        assert paths(site, first.calls) == ["/latin/", "/p/", "/p2/"]  # /j/ and /m/ are no pages
        assert "/m/" not in site.browser_log  # Scrapy followed the refresh, not the browser
        assert stat(first, "render/redirected") == 1

        # the target changes; /j/ (a 304) and /latin/ (the same bytes) did not; /p2/ is
        # marked by `scrapy cache invalidate`: rendered again although its HTML answers 304
        site.page("/p/", "Target", "The target.", extra_html=inline_script_page("Target, second edition."))
        invalidate = subprocess.run(
            scrapy_command(["cache", "invalidate", site.url + "/p2/"], cache),
            cwd=ROOT,
            env=crawl_env(),
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert invalidate.returncode == 0 and "1 page(s) marked" in invalidate.stdout, invalidate.stderr[-2000:]
        site.browser_log.clear()
        second = run_crawl(start, cache, settings=RENDER_SETTINGS)
        assert_ok(second)
        assert second.report["render"]["pages_rendered"] == 2
        assert sorted(site.browser_log) == ["/p/", "/p2/"]
        assert stat(second, "render/reason/forced") == 1 and stat(second, "render/reason/raw_changed") == 1
        assert stat(second, "render/redirected") == 1 and stat(second, "render/avoided_304") == 1  # /j/
        assert stat(second, "render/avoided_raw_unchanged") == 1  # /latin/, replayed
        # the replayed latin page decodes as it did: unchanged, not extracted again
        assert paths(site, second.calls) == ["/p/", "/p2/"]
        assert "Target, second edition." in extracted_text(cache, site, "/p/")
        assert "日本語 … café" in extracted_text(cache, site, "/latin/")
        # /p2/'s text is the same, but its extraction was made again (invalidated): listed changed
        assert second.report["pages_changed"] == 2 and second.report["pages_unchanged"] == 1
    finally:
        site.stop()


def test_a_browser_that_cannot_start_fails_every_page_as_an_error(tmp_path):
    """An executable that is no browser passes the start check: each page's rendering
    fails, is counted as an error and changes nothing."""
    site = Site("etag", noise=False)
    site.page("/", "Home", "The home page.", links=["/a/"])
    site.page("/a/", "A", "Page a.")
    site.start()
    cache = tmp_path / "cache"
    try:
        result = run_crawl(
            site.url + "/",
            cache,
            settings={**RENDER_SETTINGS, "PLAYWRIGHT_LAUNCH_OPTIONS": '{"executable_path": "/bin/true"}'},
        )
        assert result.returncode == 1, result.stderr[-3000:]  # no page could be crawled
        assert "No page could be crawled: the start page " in result.stderr and " FAILED (finished in " in result.stderr
        render = result.report["render"]
        assert (render["pages_rendered"], render["errors"]) == (0, 1)  # the home page; /a/ is never reached
        assert "BrowserType.launch" in render["failed"][site.url + "/"]
        assert (
            result.report["errors"] == 1
            and "; 1 error; 1 rendering failed (`scrapy cache ls --failed`)" in result.stderr
        )
        assert result.report["complete"] is False and result.calls == []
        # no page recorded, yet the cache is not empty to the user: the run and its failure show
        stats = subprocess.run(
            scrapy_command(["cache", "stats"], cache),
            cwd=ROOT,
            env=crawl_env(),
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert stats.returncode == 0, stats.stderr[-2000:]
        assert "is empty" not in stats.stdout
        assert "no page recorded yet" in stats.stdout
        assert result.report["run_id"] in stats.stdout
        assert "1 rendering failed, rendered again next run" in stats.stdout
    finally:
        site.stop()


#: the site's main script: it hydrates each article, as a Docusaurus or Next.js bundle
#: does (the server's HTML holds a placeholder, the script writes the text)
MAIN_JS = b'document.querySelectorAll("[data-text]").forEach(e => { e.innerHTML = "<p>" + e.dataset.text + "</p>"; });'


def hydrated_page(text: str, port: int) -> str:
    """A page the main script hydrates; it also loads an analytics script of another
    host (``localhost``, not ``127.0.0.1``) that always answers 404."""
    return (
        f'<div data-text="{text}"><p>Loading the interactive page.</p></div>'
        '<script src="/assets/js/main.js"></script>'
        f'<script src="http://localhost:{port}/analytics.js"></script>'
    )


def hydrated_site():
    """A started site of three pages the main script hydrates (a nonce in every answer:
    every page is rendered every run); ``(site, {path: the text it hydrates to})``."""
    site = Site("none", noise=True)
    site.start()
    port = site.server.server_address[1]
    texts = {"/": "Welcome, hydrated.", "/a/": "Page a, hydrated.", "/b/": "Page b, hydrated."}
    for path, text in texts.items():
        links = ["/a/", "/b/"] if path == "/" else []
        site.page(path, path.strip("/") or "Home", "Server text.", links=links, extra_html=hydrated_page(text, port))
    site.raw["/assets/js/main.js"] = Raw(MAIN_JS, "application/javascript")
    return site, texts


def test_a_rendering_whose_main_script_failed_to_load_is_counted_warned_and_re_extracts_nothing(tmp_path):
    """The site's main script answers 404 for a run: each page's rendering is the
    server's HTML, not hydrated; it is not trusted: the stored rendering stands in, the
    extractor is not called, the failure is counted and warned about. Then the script is
    back: rendered again, the same text, no call either."""
    site, texts = hydrated_site()
    cache = tmp_path / "cache"
    main_js = site.url + "/assets/js/main.js"
    try:
        first = run_crawl(site.url + "/", cache, settings=RENDER_SETTINGS)
        assert_ok(first)
        render = first.report["render"]
        assert (render["pages_rendered"], render["script_failed"]) == (3, {})  # analytics' 404: another host
        assert paths(site, first.calls) == ["/", "/a/", "/b/"]
        assert "Page a, hydrated." in extracted_text(cache, site, "/a/")
        assert "Loading the interactive page." not in extracted_text(cache, site, "/a/")
        assert site.requests_for("/analytics.js") == [404] * 3

        # a deployment half done: the HTML (a new nonce each time) names a script not there
        del site.raw["/assets/js/main.js"]
        second = run_crawl(site.url + "/", cache, settings=RENDER_SETTINGS)
        assert_ok(second)
        assert second.calls == []
        assert stat(second, "render/script_failed") == 3
        assert stat(second, "render/pages_rendered") == 0 and stat(second, "render/errors") == 0
        render = second.report["render"]
        assert render["script_failed"] == {site.url + path: f"{main_js} (404)" for path in texts}
        warnings = [line for line in second.stderr.splitlines() if "not trusted, its scripts failed to load" in line]
        assert len(warnings) == 3 and all(f"{main_js} (404)" in line and "WARNING" in line for line in warnings)
        assert "analytics.js" not in "".join(warnings)
        assert second.report["pages_unchanged"] == 3 and second.report["pages_changed"] == 0
        # a partial run: the stored renderings' links may not be the pages' own now
        assert second.report["complete"] is False and second.report["pages_removed"] == 0
        assert "Page a, hydrated." in extracted_text(cache, site, "/a/")

        site.raw["/assets/js/main.js"] = Raw(MAIN_JS, "application/javascript")
        third = run_crawl(site.url + "/", cache, settings=RENDER_SETTINGS)
        assert_ok(third)
        assert third.calls == []
        assert third.report["render"]["pages_rendered"] == 3 and third.report["render"]["script_failed"] == {}
        assert stat(third, "render/script_failed") == 0
        assert third.report["complete"] is True and third.report["pages_unchanged"] == 3
    finally:
        site.stop()


def test_scripts_failing_run_after_run_are_the_sites_state_and_the_run_completes(tmp_path):
    """The main script stays gone: the stored renderings stand in on every run, no call;
    the first runs of it are partial (a deployment half done), and from the third run
    in a row (``SCRIPT_FAILED_RUNS``) the failure is the site's state:
    the run is complete again, so removals are judged and the cron line succeeds. A page
    removed meanwhile is marked removed on that run. When the script is back, the count
    starts again."""
    from crawler.cache.sqlite import SqliteDocStore
    from crawler.identity import PageIdentity

    site, _ = hydrated_site()
    cache = tmp_path / "cache"
    settings = RENDER_SETTINGS

    def failed_runs(path):
        store = SqliteDocStore(cache, readonly=True)
        try:
            return store.get_rendered(PageIdentity().url_hash(site.url + path)).failed_runs
        finally:
            store.close()

    try:
        assert_ok(run_crawl(site.url + "/", cache, settings=settings))
        del site.raw["/assets/js/main.js"]
        second = assert_ok(run_crawl(site.url + "/", cache, settings=settings))
        assert second.calls == [] and second.report["complete"] is False
        assert stat(second, "render/script_failed") == 3 and stat(second, "render/script_failed_standing") == 0
        assert failed_runs("/a/") == 1

        third = assert_ok(run_crawl(site.url + "/", cache, settings=settings))
        assert third.report["complete"] is False
        assert stat(third, "render/script_failed") == 3 and stat(third, "render/script_failed_standing") == 0
        assert failed_runs("/a/") == 2

        site.pages.pop("/b/")  # gone for real: a 404 now, as before
        fourth = assert_ok(run_crawl(site.url + "/", cache, settings=settings))
        assert fourth.calls == []
        assert stat(fourth, "render/script_failed") == stat(fourth, "render/script_failed_standing") == 2
        assert fourth.report["complete"] is True and fourth.report["pages_unchanged"] == 2
        assert fourth.report["pages_removed"] == 1  # judged again: the run is complete
        assert fourth.report["render"]["script_failed_standing"] == [site.url + "/", site.url + "/a/"]
        warnings = [line for line in fourth.stderr.splitlines() if "taken as the site's state" in line]
        assert len(warnings) == 2 and all("as on the last 3 runs in a row" in line for line in warnings)
        assert "2 pages whose scripts failed to load" in fourth.stderr  # the summary line
        assert "Page a, hydrated." in extracted_text(cache, site, "/a/")

        site.raw["/assets/js/main.js"] = Raw(MAIN_JS, "application/javascript")
        fifth = assert_ok(run_crawl(site.url + "/", cache, settings=settings))
        assert fifth.calls == [] and fifth.report["complete"] is True
        assert stat(fifth, "render/script_failed") == 0 and failed_runs("/a/") == 0
    finally:
        site.stop()


#: Docusaurus's collapsible ``<details>`` ("Examples"): once hydrated, its script hides the
#: content of a closed one with an inline style (a reader opens it with a click)
DETAILS_PAGE = (
    '<p>The run function starts the example.</p><details class="details_lb9f alert alert--info">'
    '<summary>Examples</summary><div><div class="collapsibleContent_i85q">'
    "<p>Start it with a config file.</p><pre><code>example.run(config='example.toml')</code></pre>"
    "</div></div></details>"
    "<script>document.querySelectorAll('details:not([open]) > div').forEach("
    "d => d.setAttribute('style', 'display: none; overflow: hidden; height: 0px;'));</script>"
)


def stored_text(cache, url):
    """The markdown content stored for ``url``."""
    from crawler.cache.sqlite import SqliteDocStore
    from crawler.identity import PageIdentity

    store = SqliteDocStore(cache, readonly=True)
    try:
        content = store.get_content(PageIdentity().url_hash(url))
        assert content is not None, f"no content stored for {url}"
        return content["text"]
    finally:
        store.close()


def test_a_rendered_page_keeps_its_collapsed_details_text(tmp_path):
    site = Site("etag", noise=False)
    site.page("/api/", "API", "The API has one function.", extra_html=DETAILS_PAGE)
    site.start()
    url = site.url + "/api/"
    try:
        plain = run_crawl(url, tmp_path / "plain")
        assert_ok(plain)
        rendered = run_crawl(url, tmp_path / "rendered", settings=RENDER_SETTINGS)
        assert_ok(rendered)
        assert rendered.report["render"]["pages_rendered"] == 1
        text = stored_text(tmp_path / "plain", url)
        assert "Start it with a config file." in text and "example.run(config='example.toml')" in text
        assert stored_text(tmp_path / "rendered", url) == text
    finally:
        site.stop()


#: the stylesheet every page of the asset test links
SITE_CSS = b".only-raw { display: none; } body { font-family: serif; }"


def test_each_static_asset_is_fetched_once_per_crawl(tmp_path):
    """Nine rendered pages share one script and one stylesheet: the site sends each once
    in a crawl (the browser's requests are intercepted, which turns Chromium's own HTTP
    cache off; the render asset cache stands in), and every page reads as the script
    makes it. A script that answers 404 is not kept: each page asks again."""
    site = Site("etag", noise=False)
    site.start()
    port = site.server.server_address[1]
    pages = [f"/p{i}/" for i in range(8)]
    stylesheet = '<link rel="stylesheet" href="/assets/css/site.css">'
    site.page("/", "Home", "Server text.", links=pages, extra_html=hydrated_page("Home, hydrated.", port) + stylesheet)
    for path in pages:
        text = f"Page {path.strip('/')}, hydrated."
        site.page(path, path.strip("/"), "Server text.", extra_html=hydrated_page(text, port) + stylesheet)
    site.raw["/assets/js/main.js"] = Raw(MAIN_JS, "application/javascript")
    site.raw["/assets/css/site.css"] = Raw(SITE_CSS, "text/css")
    cache = tmp_path / "cache"
    try:
        result = run_crawl(site.url + "/", cache, settings=RENDER_SETTINGS)
        assert_ok(result)
        assert result.report["render"]["pages_rendered"] == 9
        assert site.requests_for("/assets/js/main.js") == [200]
        # the spider reads the stylesheet once for what a reader sees, the browser once
        assert site.requests_for("/assets/css/site.css") == [200, 200]
        assert site.requests_for("/analytics.js") == [404] * 9  # an error is never kept
        assert stat(result, "render/asset_cache/hits") == 2 * 9 - 2  # each asset's first load is the miss
        assert stat(result, "render/asset_cache/stored") == 2
        # one Playwright driver (and browser) serves both schemes' handler
        assert result.stderr.count("Starting download handler") == 1
        for path in pages:
            assert f"Page {path.strip('/')}, hydrated." in extracted_text(cache, site, path)
            assert "Loading the interactive page." not in extracted_text(cache, site, path)
        assert "Home, hydrated." in extracted_text(cache, site, "/")
    finally:
        site.stop()


#: a Debian documentation package's page: its scripts are symlinks into other packages
#: that are not installed (both answer 404 on every run), and an inline script that
#: needs them throws; the text is in the HTML
BROKEN_SCRIPTS = (
    '<script src="/js/jquery-1.10.2.min.js"></script><script src="/js/bootstrap.min.js"></script>'
    '<script>$(function () { $("#toc").addClass("ready"); });</script>'
)
#: what the symlinked jQuery does once its package is installed: the page shows more
JQUERY_JS = b'document.querySelector("main").insertAdjacentHTML("beforeend", "<p>Hydrated by jQuery.</p>");'


def test_a_site_whose_scripts_always_fail_is_recorded_warned_and_recrawled_without_calls(tmp_path):
    """A page whose own scripts fail the same way on every run (it never had a rendering
    whose scripts loaded) is recorded as the browser shows it, counted and warned about
    each run; unchanged it costs no extractor call, an edit costs one; the scripts back,
    the pages are hydrated and stored as any rendering."""
    site = Site("etag", noise=False)
    site.page("/", "Manual", "The manual's first page.", links=["/a/"], extra_html=BROKEN_SCRIPTS)
    site.page("/a/", "Install", "How to install the package.", extra_html=BROKEN_SCRIPTS)
    site.start()
    cache = tmp_path / "cache"
    failed = f"{site.url}/js/bootstrap.min.js (404), {site.url}/js/jquery-1.10.2.min.js (404)"
    pages = {site.url + "/": failed, site.url + "/a/": failed}
    try:
        first = run_crawl(site.url + "/", cache, settings=RENDER_SETTINGS)
        assert_ok(first)
        assert "No page could be crawled" not in first.stderr
        assert paths(site, first.calls) == ["/", "/a/"]
        assert "How to install the package." in extracted_text(cache, site, "/a/")
        render = first.report["render"]
        assert render["script_failed_recorded"] == pages
        assert (render["pages_rendered"], render["errors"], render["script_failed"]) == (2, 0, {})
        assert stat(first, "render/script_failed_recorded") == 2 and stat(first, "render/errors") == 0
        warnings = [line for line in first.stderr.splitlines() if "recorded as it stands" in line]
        assert len(warnings) == 2 and all("WARNING" in line and failed in line for line in warnings)
        # the pages read the same every run: the run is complete (removals are judged)
        assert first.report["complete"] is True
        assert "2 pages recorded with scripts that failed to load" in first.stderr

        # unchanged (304s): rendered again, as the scripts may be back; the same DOM
        second = run_crawl(site.url + "/", cache, settings=RENDER_SETTINGS)
        assert_ok(second)
        assert second.calls == []
        assert stat(second, "render/reason/scripts_failed") == 2
        assert second.report["render"]["script_failed_recorded"] == pages
        assert second.report["pages_unchanged"] == 2 and second.report["complete"] is True
        assert second.stderr.count("recorded as it stands") == 2

        site.page("/a/", "Install", "How to install the package, second edition.", extra_html=BROKEN_SCRIPTS)
        third = run_crawl(site.url + "/", cache, settings=RENDER_SETTINGS)
        assert_ok(third)
        assert paths(site, third.calls) == ["/a/"]
        assert "second edition" in extracted_text(cache, site, "/a/")

        # the missing packages are installed, the HTML unchanged: each page is rendered,
        # hydrated by jQuery, re-extracted once, and stored as any rendering
        site.raw["/js/jquery-1.10.2.min.js"] = Raw(JQUERY_JS, "application/javascript")
        site.raw["/js/bootstrap.min.js"] = Raw(b"window.bootstrap = {};", "application/javascript")
        fourth = run_crawl(site.url + "/", cache, settings=RENDER_SETTINGS)
        assert_ok(fourth)
        assert paths(site, fourth.calls) == ["/", "/a/"]
        assert "Hydrated by jQuery." in extracted_text(cache, site, "/a/")
        assert fourth.report["render"]["script_failed_recorded"] == {}
        fifth = run_crawl(site.url + "/", cache, settings=RENDER_SETTINGS)
        assert_ok(fifth)
        assert fifth.calls == [] and stat(fifth, "render/avoided_304") == 2
        assert stat(fifth, "playwright/browser_count") == 0
    finally:
        site.stop()
