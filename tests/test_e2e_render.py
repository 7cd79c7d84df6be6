"""End-to-end: JavaScript pages rendered by Debian's Chromium (never skipped: `make test`
installs it), and recrawls that render only what changed."""

from __future__ import annotations

import json
import re

from tests.crawl import run_crawl
from tests.site import Raw, Site

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


def assert_ok(result):
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Traceback" not in result.stderr, result.stderr[-3000:]


def paths(site, urls):
    return sorted(url.replace(site.url, "") for url in urls)


def extracted_text(cache, site, path):
    """The extractor input recorded in the extracted-docs output for ``path``."""
    for file in (cache / "extractions").glob("*.json"):
        extraction = json.loads(file.read_text())
        if extraction["url"] == site.url + path:
            return extraction["data"]["input"]
    raise AssertionError(f"no extraction for {path}")


def stat(result, name):
    """A stat of the crawl, from the stats Scrapy dumps at the end of the log (0 if absent)."""
    found = re.search(rf"'{re.escape(name)}': (\d+)", result.stderr)
    return int(found.group(1)) if found else 0


def test_rendered_once_replayed_while_unchanged_rendered_again_when_changed_and_retried_after_a_failure(tmp_path):
    site = js_site("etag", noise=True)
    cache = tmp_path / "cache"
    try:
        raw_app = site.render("/app/", site.pages["/app/"]).decode()
        assert "Rendered by the inline script." not in raw_app  # only the browser sees the text

        first = run_crawl(site.url + "/", cache, settings=RENDER_SETTINGS)
        assert_ok(first)
        assert first.report["render"] == {"pages_rendered": 3, "renders_avoided": 0, "errors": 0, "failed": {}}
        assert stat(first, "playwright/browser_count") == 1
        assert "Rendered by the inline script." in extracted_text(cache, site, "/app/")
        assert "Loaded from the JSON endpoint." in extracted_text(cache, site, "/data-page/")

        # unchanged: every page answers 304, no page is rendered, no browser is launched
        second = run_crawl(site.url + "/", cache, settings=RENDER_SETTINGS)
        assert_ok(second)
        assert second.report["render"] == {"pages_rendered": 0, "renders_avoided": 3, "errors": 0, "failed": {}}
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
        assert fourth.report["render"] == {"pages_rendered": 1, "renders_avoided": 2, "errors": 0, "failed": {}}
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
    assert len(errors) == 1 and "Crawl not started:" in errors[0] and "apt-get install chromium" in errors[0]
    assert "Traceback" not in result.stderr
    assert not cache.exists()
