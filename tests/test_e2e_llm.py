"""End-to-end: real crawls with the LLM extractor against a local chat-completions server."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import socket
import subprocess
from urllib.parse import quote, quote_plus

import pytest

from tests.crawl import ROOT, assert_ok, crawl_env, run_crawl, scrapy_command
from tests.llm_server import KEY, MODEL, LLMServer

PAGES = {"/", "/guide/", "/guide/install.html", "/guide/usage.html", "/api.html", "/hidden.html"}


@pytest.fixture
def llm():
    served = LLMServer().start()
    yield served
    served.stop()


def stored_pages(cache):
    """Every page record of the cache, read through its store."""
    from crawler.cache.sqlite import SqliteDocStore

    store = SqliteDocStore(cache, readonly=True)
    try:
        return list(store.iter_pages())
    finally:
        store.close()


def llm_settings(server, **extra):
    return {
        "EXTRACTOR": "crawler.extractors.llm.LLMExtractor",
        "LLM_BASE_URL": server.base_url,
        "LLM_MODEL": MODEL,
        "LLM_PRICES": json.dumps({MODEL: [0.5, 1.5]}),
        **extra,
    }


def page_calls(server, site):
    """Pages of the answered calls, as paths."""
    return sorted(call.url.replace(site.url, "") for call in server.answered(200))


def test_retries_failures_tokens_concurrency_and_the_key(site, llm, tmp_path):
    cache = tmp_path / "cache"
    llm.delay = 0.3  # each answer takes a while, so concurrent calls overlap
    llm.slow_seconds = 6.0
    llm.behaviours = [
        (r"/guide/install\.html$", ["429", "ok"]),
        (r"/api\.html$", ["500", "500", "ok"]),
        (r"/hidden\.html$", ["slow", "ok"]),
        (r"/guide/usage\.html$", ["bad_json"]),  # every time: a recorded failure
    ]
    env = {"LLM_API_KEY": KEY}
    settings = llm_settings(llm, EXTRACTOR_CONCURRENCY="2", EXTRACTOR_TIMEOUT="3", LOG_LEVEL="DEBUG")
    first = run_crawl(site.url + "/", cache, settings=settings, env=env)
    assert_ok(first)

    assert llm.max_in_flight == 2  # EXTRACTOR_CONCURRENCY, never more
    # usage.html answered twice, malformed JSON both times
    assert page_calls(llm, site) == sorted([*PAGES, "/guide/usage.html"])
    modes = [(call.url.replace(site.url, ""), call.mode, call.status) for call in llm.calls]
    assert sorted(m for m in modes if m[2] != 200) == [
        ("/api.html", "500", 500),
        ("/api.html", "500", 500),
        ("/guide/install.html", "429", 429),
        ("/hidden.html", "abandoned", 499),  # the client timed out and hung up
    ]
    report = first.report
    assert (report["extractor_calls"], report["extraction_errors"]) == (6, 1)
    section = report["llm"]
    # 6 pages + 2 retries after 500 + 1 after 429 + 1 after the timeout + 1 invalid answer asked again
    assert (section["requests"], section["retries"], section["invalid_answers"]) == (11, 5, 2)
    assert section["tokens_sent"] == sum(usage_of(c) for c in llm.answered(200)) > 0
    expected_cost = section["tokens_sent"] * 0.5e-6 + section["tokens_received"] * 1.5e-6
    assert section["cost_usd"] == pytest.approx(expected_cost, abs=1e-6)
    assert "retry 1 of 5 in 1.0s" in first.log  # the 429's Retry-After: 1
    [failed] = [record for _, record in stored_pages(cache) if record["url"].endswith("/guide/usage.html")]
    assert "InvalidAnswer: answer is not JSON" in json.dumps(failed)

    extraction = next(
        json.loads(p.read_text())
        for p in (cache / "extractions").glob("*.json")
        if json.loads(p.read_text())["url"].endswith("/guide/install.html")
    )
    assert extraction["extractor"]["name"] == "llm" and extraction["extractor"]["version"].startswith(MODEL)
    assert extraction["data"]["relevant"] is True and extraction["data"]["title"]

    # the key is in no log line (even at DEBUG) and in no file of the cache
    assert KEY not in first.stderr and KEY not in first.stdout
    for path in cache.rglob("*"):
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), path

    # next run: only the page whose extraction failed is called again
    llm.reset()
    llm.behaviours = []
    second = run_crawl(site.url + "/", cache, settings=settings, env=env)
    assert_ok(second)
    assert page_calls(llm, site) == ["/guide/usage.html"]
    tokens = second.report["llm"]
    assert tokens["requests"] == 1 and tokens["tokens_saved_unchanged"] > 5 * 50
    assert tokens["cost_saved_usd"] > 0

    llm.reset()
    third = run_crawl(site.url + "/", cache, settings=settings, env=env)
    assert_ok(third)
    assert llm.calls == []


#: a Google-style key (no sk- shape), with characters URL-encoding changes
GOOGLE_KEY = "AIzaSyC9x-Y7w_Q2p/Zr+Lm4=Kq8vTn3eRtU"


def assert_written_nowhere(key, cache, *results):
    """``key``, as is or URL-encoded, in no output of the crawls and no file of the cache."""
    forms = {key, quote(key), quote(key, safe=""), quote_plus(key)}
    for result in results:
        for form in forms:
            assert form not in result.stdout and form not in result.stderr, form
    files = [path for path in cache.rglob("*") if path.is_file()]
    assert any(path.suffix == ".sqlite" for path in files)
    for path in files:
        data = path.read_bytes()
        for form in forms:
            assert form.encode() not in data, (path, form)


def test_a_key_of_any_shape_echoed_by_the_endpoint_is_written_nowhere(site, llm, tmp_path):
    cache = tmp_path / "cache"
    llm.key = GOOGLE_KEY
    llm.behaviours = [(r"/guide/usage\.html$", ["echo_key"])]  # a 400 repeating the key, twice encoded
    # the extractor logs the key too, as a careless log call anywhere in the process would
    settings = llm_settings(llm, EXTRACTOR="tests.extractors.KeyLoggingLLMExtractor", LOG_LEVEL="DEBUG")
    first = run_crawl(site.url + "/", cache, settings=settings, env={"LLM_API_KEY": GOOGLE_KEY})
    assert first.returncode == 0, first.stderr[-3000:]  # (with the traceback logged on purpose)
    assert first.report["extraction_errors"] == 1
    [failed] = [record for _, record in stored_pages(cache) if record["url"].endswith("/guide/usage.html")]
    stored = failed["extraction_error"]["error"]
    assert stored == "RuntimeError: HTTP 400: Invalid request for key ***; see https://example.com/usage?key=*** " + (
        "(after 0 retries)"
    )
    assert f"Extraction failed for {site.url}/guide/usage.html: {stored}" in first.log
    assert "Using the key *** (***)" in first.log  # the log-record factory, for any logger
    assert "RuntimeError: a failure that names the key ***" in first.log  # and for tracebacks

    # the next run presents a key the server refuses, and its 401 repeats the key
    llm.reset()
    llm.behaviours = []
    llm.key, llm.echo_key = "sk-the-right-key-0000", True
    second = run_crawl(site.url + "/", cache, settings=settings, env={"LLM_API_KEY": GOOGLE_KEY})
    assert second.returncode == 1, second.stderr[-3000:]  # the extraction stopped
    assert [call.status for call in llm.calls] == [401]
    stopped = second.report["extraction_stopped"]
    assert stopped == f"{MODEL}: HTTP 401: Incorrect API key provided: *** (key=***)."
    assert_written_nowhere(GOOGLE_KEY, cache, first, second)


def test_a_key_echoed_in_a_successful_answer_is_stored_masked(site, llm, tmp_path):
    cache = tmp_path / "cache"
    llm.key = GOOGLE_KEY
    llm.behaviours = [(r"/guide/usage\.html$", ["echo_key_answer"])]  # a 200 whose text repeats the key
    result = run_crawl(site.url + "/", cache, settings=llm_settings(llm), env={"LLM_API_KEY": GOOGLE_KEY})
    assert_ok(result)
    assert result.report["extraction_errors"] == 0
    echoed = [path for path in (cache / "extractions").rglob("*") if path.is_file() and "***" in path.read_text()]
    assert len(echoed) == 1  # the answer is kept, the key in it masked
    assert_written_nowhere(GOOGLE_KEY, cache, result)


def usage_of(call):
    """The prompt tokens the server reported for ``call`` (recomputed as it does)."""
    from tests.llm_server import count_tokens

    return sum(count_tokens(m["content"]) + 3 for m in call.body["messages"]) + 3


def test_dry_run_sends_nothing_and_needs_no_key(site, llm, tmp_path):
    cache = tmp_path / "cache"
    dry = run_crawl(
        site.url + "/",
        cache,
        settings=llm_settings(llm, LLM_BASE_URL="https://api.openai.com/v1"),
        env={"OPENAI_API_KEY": ""},
        args={"dry_run": "true"},
    )
    assert_ok(dry)
    assert llm.calls == []
    report = dry.report
    assert report["dry_run"]["pages"] == 6 and report["dry_run"]["tokens"] > 6 * 50
    assert report["llm"]["dry_run_cost_usd"] == pytest.approx(report["dry_run"]["tokens"] * 0.5e-6, abs=1e-6)
    assert "Dry run: the extractor would be called for 6 pages, about" in dry.log
    real = run_crawl(site.url + "/", cache, settings=llm_settings(llm), env={"LLM_API_KEY": KEY})
    assert_ok(real)
    assert page_calls(llm, site) == sorted(PAGES)


def test_wrong_key_stops_extraction_with_one_message(site, llm, tmp_path):
    result = run_crawl(site.url + "/", tmp_path / "cache", settings=llm_settings(llm), env={"LLM_API_KEY": "sk-wrong"})
    assert result.returncode == 1, result.stderr[-3000:]
    assert len(llm.calls) <= 4  # the calls already in flight, not one per page
    assert result.log.count("Extractor unavailable, extraction stopped") == 1
    assert "Incorrect API key provided" in result.log and "sk-wrong" not in result.log
    assert result.report["extraction_stopped"].startswith(f"{MODEL}: HTTP 401")


def test_an_extraction_that_stopped_says_so_fails_the_crawl_and_loses_nothing(site, llm, tmp_path):
    """It used to go on with progress lines and an ETA after the stop, end with
    "Extraction phase: ..." as if done, report the run complete and exit 0."""
    cache = tmp_path / "cache"
    llm.slow_seconds = 2.5  # the first call is still answering when the others stop the extraction
    llm.behaviours = [(r".", ["slow", "quota"])]
    settings = llm_settings(llm, LOGSTATS_INTERVAL="0.2")
    first = run_crawl(site.url + "/", cache, settings=settings, env={"LLM_API_KEY": KEY})
    assert first.returncode == 1, first.stderr[-3000:]
    assert "Traceback" not in first.stderr
    after_stop = first.log.split("Extractor unavailable, extraction stopped", 1)[1]
    assert "Extraction: " not in after_stop  # no progress line, no ETA once it stopped
    assert "Extraction phase:" not in first.log
    assert "Extraction stopped after " in after_stop and ": 5 of 6 pages left for the next run" in after_stop
    report = first.report
    assert report["complete"] is False
    assert report["incomplete_reasons"] == ["extraction stopped: 5 pages left for the next run"]
    assert report["extraction_stopped"].startswith(f"{MODEL}: HTTP 429")
    summary = first.log.rsplit("INFO: run ", 1)[1]
    assert re.match(rf"{report['run_id']} \(finished in \w+, partial: extraction stopped: 5 pages left", summary)
    assert len(llm.answered(200)) == 1  # the call in flight was answered and is kept

    llm.reset()
    llm.behaviours = []
    second = run_crawl(site.url + "/", cache, settings=settings, env={"LLM_API_KEY": KEY})
    assert_ok(second)
    assert len(page_calls(llm, site)) == 5  # the extraction kept is not paid for again
    assert second.report["complete"] is True and second.report["extraction_cache_hits"] == 1


def test_an_unreachable_endpoint_fails_the_crawl(site, llm, tmp_path):
    with socket.socket() as closed:  # bound, never listening: connections are refused
        closed.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{closed.getsockname()[1]}/v1"
        settings = llm_settings(llm, LLM_BASE_URL=url, LLM_MAX_RETRIES="0")
        result = run_crawl(site.url + "/", tmp_path / "cache", settings=settings, env={"LLM_API_KEY": KEY})
    assert result.returncode == 1, result.stderr[-3000:]
    assert f"cannot reach {url}/" in result.log
    assert ": 6 of 6 pages left for the next run" in result.log
    assert result.report["incomplete_reasons"] == ["extraction stopped: 6 pages left for the next run"]


def test_progress_bar_on_a_terminal(site, llm, tmp_path, reap):
    llm.delay = 0.1
    command = scrapy_command(
        ["crawl", "docs", "-a", f"start_urls={site.url}/"],
        tmp_path / "cache",
        llm_settings(llm, EXTRACTOR_CONCURRENCY="1", LOGSTATS_INTERVAL="0.2"),
    )
    parent, child = pty.openpty()
    env = crawl_env({"LLM_API_KEY": KEY})
    proc = reap(subprocess.Popen(command, cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=child, stderr=child))
    os.close(child)
    output = b""
    while True:
        ready, _, _ = select.select([parent], [], [], 60)
        if not ready:
            proc.kill()
            break
        try:
            chunk = os.read(parent, 65536)
        except OSError:  # the crawl closed the terminal
            break
        if not chunk:
            break
        output += chunk
    os.close(parent)
    assert proc.wait(timeout=60) == 0
    text = output.decode(errors="replace")
    assert "\r\x1b[KExtraction [" in text and "6/6 pages (100%)" in text
    assert "tokens sent" in text
    assert "Extraction: " in text  # the log lines, between redraws of the bar


def test_boilerplate_is_not_sent_and_its_tokens_are_counted_saved(llm, tmp_path):
    from tests.test_e2e_boilerplate import HELPFUL, NEWSLETTER, build_site

    site = build_site().start()
    try:
        result = run_crawl(site.url + "/", tmp_path / "cache", settings=llm_settings(llm), env={"LLM_API_KEY": KEY})
    finally:
        site.stop()
    assert_ok(result)
    prompts = [call.body["messages"][1]["content"] for call in llm.answered(200)]
    assert len(prompts) == 8
    assert not any(NEWSLETTER in p or HELPFUL in p for p in prompts)  # the extractor never pays for them
    report = result.report
    removed = report["boilerplate"]["bytes_removed"]
    assert removed > 1500
    # about a token per four bytes removed, scaled to the server's own count
    saved = report["llm"]["tokens_saved_boilerplate"]
    assert 0.5 * removed / 4 < saved < 2 * removed / 4
    assert report["tokens"]["saved_boilerplate_estimate"] > 0
