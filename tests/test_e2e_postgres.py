"""End-to-end on the PostgreSQL store (a real server, tests/pg_server.py): crawls,
recrawls, ``scrapy cache stats`` and ``scrapy process`` as a user runs them, with
``-s EXTRACTED_DOCS_STORE=crawler.cache.postgres.PostgresDocStore`` and the DSN in the
environment; and two ``scrapy process`` at once on one store extracting each page once."""

from __future__ import annotations

import subprocess

import pytest

from crawler.cache.postgres import PostgresDocStore
from tests.crawl import ROOT, assert_ok, crawl_env, run_crawl, scrapy_command, stat, wait_for_lines

PAGES = 6  # tests/site.py's docs_site
STORE = {"EXTRACTED_DOCS_STORE": "crawler.cache.postgres.PostgresDocStore"}


def latest_report(dsn):
    store = PostgresDocStore(dsn, readonly=True, create=False)
    try:
        return store.latest_run_report()
    finally:
        store.close()


def run_command(args, tmp_path, dsn, settings=None):
    command = scrapy_command(args, tmp_path / "unused", {**STORE, **(settings or {})})
    return subprocess.run(
        command, cwd=ROOT, env=crawl_env({"EXTRACTED_DOCS_DSN": dsn}), capture_output=True, text=True, timeout=120
    )


def test_a_crawl_and_an_unchanged_recrawl_on_postgresql(site, tmp_path, postgres_dsn):
    cache = tmp_path / "cache"  # no directory is made: the store is the database
    env = {"EXTRACTED_DOCS_DSN": postgres_dsn}
    first = run_crawl(site.url + "/", cache, settings=STORE, env=env)
    assert_ok(first)
    assert len(first.calls) == PAGES and len(set(first.calls)) == PAGES
    report = latest_report(postgres_dsn)
    assert report["pages_new"] == PAGES and report["complete"] is True
    assert "postgresql://postgres@127.0.0.1" in first.stderr  # where the cache is, without a password

    site.reset_log()
    again = run_crawl(site.url + "/", cache, settings=STORE, env=env)
    assert_ok(again)
    assert again.calls == []
    assert site.count_status(304) == PAGES
    report = latest_report(postgres_dsn)
    assert (report["pages_unchanged"], report["pages_new"], report["pages_changed"]) == (PAGES, 0, 0)
    assert not cache.exists()

    stats = run_command(["cache", "stats"], tmp_path, postgres_dsn)
    assert stats.returncode == 0, stats.stderr[-3000:]
    assert "Traceback" not in stats.stderr
    assert f"{PAGES} pages on 1 domain" in stats.stdout and f"extractions {PAGES}, failed 0" in stats.stdout
    assert "postgresql://postgres@127.0.0.1" in stats.stdout

    # a new extractor version: `scrapy process` extracts every page again, fetching nothing
    calls_log = tmp_path / "process-calls.log"
    processed = run_command(
        ["process"], tmp_path, postgres_dsn, {"TEST_EXTRACTOR_LOG": str(calls_log), "TEST_EXTRACTOR_VERSION": "2"}
    )
    assert processed.returncode == 0, processed.stderr[-3000:]
    assert len(calls_log.read_text().splitlines()) == PAGES


def test_the_dsn_variable_missing_is_said_by_name(site, tmp_path):
    result = run_crawl(site.url + "/", tmp_path / "cache", settings=STORE)  # crawl_env: no EXTRACTED_DOCS_DSN
    assert result.returncode != 0
    assert "needs a PostgreSQL DSN in the environment variable EXTRACTED_DOCS_DSN" in result.stderr


@pytest.mark.parametrize(
    ("dsn", "said"),
    [
        # unparsable: libpq quotes it whole
        ("postgresql://user:PASSWORD1@[::1:15432/docs", "Cannot connect to the cache database"),
        # libpq would take WORD1@[ for the host, and print it
        ("postgresql://user:PASS@WORD1@127.0.0.1:9/docs", "unescaped '@' or '/'"),
        # libpq would read no password and take user:PASS for the host
        ("postgresql://user:PASS/WORD1@127.0.0.1:9/docs", "unescaped '@' or '/'"),
        ("host=127.0.0.1 password='PASSWORD1 x' dbname='never closed", "Cannot connect to the cache database"),
    ],
)
def test_a_malformed_dsn_is_never_printed_with_its_password(site, tmp_path, dsn, said):
    log = tmp_path / "crawl.log"
    result = run_crawl(
        site.url + "/", tmp_path / "cache", settings={**STORE, "LOG_FILE": str(log)}, env={"EXTRACTED_DOCS_DSN": dsn}
    )
    assert result.returncode != 0
    printed = result.stderr + result.stdout + log.read_text()
    assert said in printed  # the failure is said...
    assert "PASSWORD1" not in printed and "WORD1" not in printed  # ...without the password


def test_two_processing_runs_at_once_extract_each_page_once(site, tmp_path, postgres_dsn, reap):
    """Two ``scrapy process`` on one store at once: the first holds its calls (a gate
    file), the second finds their inputs claimed; 0 duplicate extractions."""
    env = {"EXTRACTED_DOCS_DSN": postgres_dsn}
    assert_ok(run_crawl(site.url + "/", tmp_path / "cache", settings=STORE, env=env))
    gate = tmp_path / "gate"
    logs = [tmp_path / "calls-a.log", tmp_path / "calls-b.log"]
    settings = {
        **STORE,
        "TEST_EXTRACTOR_VERSION": "2",  # every page's input key changed: every page to extract
        "TEST_EXTRACTOR_GATE": str(gate),
        "EXTRACTOR_CONCURRENCY": str(PAGES),
    }
    output = tmp_path / "first.log"
    with output.open("w") as handle:  # a file, not a pipe: nobody reads it while the process waits
        first = reap(
            subprocess.Popen(
                scrapy_command(["process"], tmp_path / "unused", {**settings, "TEST_EXTRACTOR_LOG": str(logs[0])}),
                cwd=ROOT,
                env=crawl_env(env),
                stdout=handle,
                stderr=subprocess.STDOUT,
            )
        )
    wait_for_lines(logs[0], PAGES, first, timeout=120)  # every call started, each input claimed
    second = run_command(["process"], tmp_path, postgres_dsn, {**settings, "TEST_EXTRACTOR_LOG": str(logs[1])})
    assert second.returncode == 0, second.stderr[-3000:]
    assert stat(second, "extraction/claimed_elsewhere") == PAGES  # a result with .stderr
    gate.touch()
    assert first.wait(timeout=120) == 0, output.read_text()[-3000:]
    calls = [line.split("\t")[0] for log in logs if log.exists() for line in log.read_text().splitlines()]
    assert len(calls) == PAGES and len(set(calls)) == PAGES  # 0 duplicate extractions

    # after both, a third finds every extraction made: nothing to call
    third_log = tmp_path / "calls-c.log"
    third = run_command(
        ["process"],
        tmp_path,
        postgres_dsn,
        {**STORE, "TEST_EXTRACTOR_VERSION": "2", "TEST_EXTRACTOR_LOG": str(third_log)},
    )
    assert third.returncode == 0, third.stderr[-3000:]
    assert not third_log.exists() or third_log.read_text() == ""
