"""End-to-end: what a new user gets wrong is said at the end, not only in the first
lines of a long log; a run that fetched no page of its start is a failed run wherever
one looks (the summary line, the run report, ``scrapy cache stats``, the exit status),
and a host that cannot be reached is one line, not seven."""

from __future__ import annotations

import re
import socket

from crawler.cache.run_report import SUMMARY_MAX
from tests.crawl import assert_ok, cache_command, run_crawl


def summary(result) -> str:
    [line] = [line for line in result.stderr.splitlines() if "[crawler.extensions.closing] INFO: run " in line]
    return line.split("INFO: ", 1)[1]


def test_misspelt_settings_and_arguments_are_in_the_summary_the_report_and_cache_stats(site, tmp_path):
    cache = tmp_path / "cache"
    settings = {"DOWNLOAD_DELAYY": "1", "REVISIT_ENABLE": "True"}  # Scrapy's name, then the project's
    result = assert_ok(run_crawl(site.url + "/", cache, settings=settings, args={"maxpages": "2"}))
    line = summary(result)
    assert "; ignored: DOWNLOAD_DELAYY, REVISIT_ENABLE, -a maxpages;" in line  # what each meant: the warnings
    assert len(line.split("; report ")[0]) <= SUMMARY_MAX, line  # (then the report's place)
    assert result.report["pages_new"] == 6  # the run went on without them
    assert [(m["kind"], m["name"], m["meant"]) for m in result.report["mistakes"]] == [
        ("setting", "DOWNLOAD_DELAYY", "DOWNLOAD_DELAY"),
        ("setting", "REVISIT_ENABLE", "REVISIT_ENABLED"),
        ("spider argument", "maxpages", "max_pages"),
    ]
    stats = cache_command(cache, "stats")
    assert "Ignored, last run: Unknown setting DOWNLOAD_DELAYY, ignored (did you mean DOWNLOAD_DELAY?)" in stats

    clean = assert_ok(run_crawl(site.url + "/", cache))
    assert clean.report["mistakes"] == [] and "ignored:" not in summary(clean)


def test_a_start_page_not_found_is_a_failed_run_everywhere(site, tmp_path):
    cache = tmp_path / "cache"
    start = site.url + "/en/"  # the site has no such page
    site.sitemap = None  # (with one, see below)
    result = run_crawl(start, cache)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    said = f"No page could be crawled: the start page {start} answered 404 Not Found"
    assert [line for line in result.stderr.splitlines() if " ERROR: " in line] == [
        next(line for line in result.stderr.splitlines() if line.endswith(said))
    ]
    assert summary(result).startswith(f"run {result.report['run_id']} FAILED (finished in ")
    assert said[1:] in summary(result)
    report = result.report
    assert report["complete"] is False and report["failed"] == said[0].lower() + said[1:]
    assert report["incomplete_reasons"] == [report["failed"]] and report["broken_links"] == []
    stats = cache_command(cache, "stats")
    assert re.search(r"finished, FAILED +0 ", stats), stats
    assert f"FAILED, last run: no page could be crawled: the start page {start} answered 404" in stats


def test_a_host_that_refuses_connections_is_one_line_and_a_failed_run(tmp_path):
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    start = f"http://127.0.0.1:{port}/en/"
    result = run_crawl(start, tmp_path / "cache", settings={"RETRY_TIMES": "1"})
    assert result.returncode == 1 and "Traceback" not in result.stderr
    problems = [line for line in result.stderr.splitlines() if re.search(r" (WARNING|ERROR): ", line)]
    # robots.txt, the start page and the sitemap were each refused: one line for the cause,
    # one for the verdict that names the start page
    assert len(problems) == 2, "\n".join(problems)
    assert "Connection was refused" in problems[0] and f"other requests to 127.0.0.1:{port}" in problems[0]
    assert problems[1].endswith(f"No page could be crawled: the start page {start} failed: "
                                "DownloadConnectionRefusedError: Connection was refused by other side: 111: "
                                "Connection refused.")  # fmt: skip
    assert result.report["failed"].startswith(f"no page could be crawled: the start page {start} failed")


def test_a_start_page_not_found_fails_the_run_though_a_sitemap_led_elsewhere(site, tmp_path):
    start = site.url + "/en/"  # a mistyped start URL: the site's sitemap lists its other pages
    result = run_crawl(start, tmp_path / "cache", args={"scope": "site"})
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert result.report["pages_new"] == 6  # what was reached is recorded
    said = f"no start page could be crawled: the start page {start} answered 404 Not Found"
    assert result.report["failed"] == said and said in summary(result)
