"""End-to-end: a partial run says so wherever a user looks (the summary line, `scrapy
cache stats`, `scrapy cache ls --failed`, the cron wrapper's log and its rule for
partial runs in a row), here for renderings that time out."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading

from tests.crawl import ROOT, TEST_SETTINGS, crawl_env, run_crawl, scrapy_command
from tests.site import Raw, Site

STUCK = ("/stuck-1/", "/stuck-2/", "/stuck-3/")
#: the browser waits for the page's load event, which a script that never answers keeps
#: from firing: every rendering of STUCK times out, however fast the machine (1 s: short)
STUCK_SETTINGS = {
    "PLAYWRIGHT_ENABLED": "True",
    "PLAYWRIGHT_DEFAULT_NAVIGATION_TIMEOUT": "1000",
    "RENDER_URL_PATTERNS": "/stuck-",
    "RETRY_TIMES": "0",
}


def stuck_site() -> tuple[Site, threading.Event]:
    site = Site("etag", noise=False)
    site.page("/", "Home", "The home page of the stuck site.", links=["/plain/", *STUCK])
    site.page("/plain/", "Plain", "A page without any script.")
    for path in STUCK:
        site.page(path, path.strip("/").title(), f"Raw text of {path}.", extra_html='<script src="/never.js"></script>')
    site.raw["/never.js"] = Raw(b"window.loaded = true;", "application/javascript")
    never = threading.Event()  # set when the test ends: the server's threads end
    site.holds["/never.js"] = never
    return site.start(), never


def cache_run(cache, *args):
    command = scrapy_command(["cache", *args], cache)
    done = subprocess.run(command, cwd=ROOT, env=crawl_env(), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-2000:]
    return done.stdout


def recrawl(url, cache, *options, **settings):
    command = [sys.executable, "-m", "crawler.recrawl", url, *options]
    for name, value in {**TEST_SETTINGS, "EXTRACTED_DOCS_DIR": str(cache), **settings}.items():
        command += ["-s", f"{name}={value}"]
    return subprocess.run(command, cwd=ROOT, env=crawl_env(), capture_output=True, text=True, timeout=120)


def test_a_run_whose_renderings_time_out_says_it_is_partial_everywhere(tmp_path):
    site, never = stuck_site()
    cache = tmp_path / "cache"
    stuck = sorted(site.url + path for path in STUCK)
    try:
        first = run_crawl(site.url + "/", cache, settings=STUCK_SETTINGS)
        assert first.returncode == 0 and "Traceback" not in first.stderr, first.stderr[-3000:]
        report = first.report
        assert report["complete"] is False and sorted(report["render"]["failed"]) == stuck
        assert report["incomplete_reasons"] == ["renderings failed", "failed pages"]
        # the summary line: partial, and why
        why = "partial, no page marked removed for not being reached: renderings failed; failed pages"
        assert re.search(rf"run {report['run_id']} \(finished in \w+, {why}\): 2 new", first.stderr)
        assert "3 renderings failed (`scrapy cache ls --failed`)" in first.stderr

        stats = cache_run(cache, "stats")
        assert "finished, partial " in stats and "Partial, last run: renderings failed; failed pages" in stats, stats

        listed = cache_run(cache, "ls", "--failed")
        assert sorted(line.split()[-1] for line in listed.splitlines() if "rendering failed" in line) == stuck
        failed = json.loads(cache_run(cache, "ls", "--failed", "--json"))
        assert sorted(page["url"] for page in failed) == stuck
        assert all("Timeout 1000ms exceeded" in page["render_error"] for page in failed)
        assert {page["render_failed_in"] for page in failed} == {report["run_id"]}

        # the cron wrapper: the second partial run in a row is one too many here (status 1, why)
        second = recrawl(site.url + "/", cache, "--partial-runs", "2", **STUCK_SETTINGS)
        assert second.returncode == 1, second.stderr[-3000:]
        assert "the last 2 runs were partial (renderings failed; failed pages)" in second.stderr
        assert "3 renderings failed" in (cache / "logs" / "latest.log").read_text()
    finally:
        never.set()
        site.stop()


def test_the_cron_wrapper_logs_a_partial_run_and_when_cron_will_be_told(site, tmp_path):
    """A partial run below the rule's count sends no mail; its verdict in the log says
    it is partial, why, and at which run in a row cron is told."""
    site.raw["/broken"] = Raw(b"<h1>down</h1>", status=500)
    site.pages["/"].links.append("/broken")
    cache = tmp_path / "cache"
    result = recrawl(site.url + "/", cache, RETRY_TIMES="0")
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    log = (cache / "logs" / "latest.log").read_text()
    assert "recrawl: OK (partial: failed pages; retry/max_reached: 1; partial run 1 in a row, the 3rd fails)" in log
    held = "partial, no page marked removed for not being reached"
    assert re.search(rf"\(finished in \w+, {held}: failed pages; retry/max_reached: 1\)", log)
