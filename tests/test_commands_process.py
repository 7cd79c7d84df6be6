"""``scrapy process``: the stages on the stored pages, run as a user runs them (a
subprocess), with the test site's request log proving nothing is fetched."""

from __future__ import annotations

import json
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from crawler.cache.sqlite import SqliteDocStore
from tests.crawl import (
    ROOT,
    cache_command,
    copy_of_crawl,
    crawl_env,
    run_crawl,
    scrapy_command,
    start_crawl,
    wait_for_lines,
    wait_for_text,
)
from tests.embedders import embedded
from tests.llm_server import KEY, LLMServer

pytestmark = pytest.mark.e2e  # every test runs `scrapy process` as a user does, in a process of its own


@dataclass
class Processed:
    returncode: int
    stderr: str
    calls: list[str]
    cache: Path

    @property
    def report(self):
        return json.loads((self.cache / "runs" / "latest.json").read_text())


def process(cache, *options, settings=None, env=None, timeout=120):
    calls_log = cache.parent / "process-calls.log"
    calls_log.unlink(missing_ok=True)
    command = scrapy_command(["process", *options], cache, {"TEST_EXTRACTOR_LOG": str(calls_log), **(settings or {})})
    proc = subprocess.run(command, cwd=ROOT, env=crawl_env(env), capture_output=True, text=True, timeout=timeout)
    calls = [line.split("\t", 1)[0] for line in calls_log.read_text().splitlines()] if calls_log.exists() else []
    return Processed(proc.returncode, proc.stderr, calls, cache)


@pytest.fixture
def crawled(crawled_site, tmp_path):
    """A fresh standard site (its request log empty), the cache of its first crawl (a
    copy of the module's) and the pages that crawl extracted."""
    site, cache = copy_of_crawl(crawled_site, tmp_path)
    site.reset_log()
    return site, cache, sorted(crawled_site[2].calls)


def test_the_same_settings_call_nothing_and_fetch_nothing(crawled):
    site, cache, _ = crawled
    result = process(cache)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.calls == [] and site.log == []
    report = result.report
    assert (report["kind"], report["pages_processed"], report["extractor_calls"]) == ("process", 6, 0)
    assert report["extraction_cache_hits"] == 6 and report["complete"] is True
    assert "process run " in result.stderr and "6 stored pages processed, nothing fetched" in result.stderr


def test_a_new_extractor_version_reextracts_each_extracted_page_once(crawled):
    site, cache, extracted = crawled
    result = process(cache, settings={"TEST_EXTRACTOR_VERSION": "2"})
    assert result.returncode == 0, result.stderr[-2000:]
    assert sorted(result.calls) == extracted and len(extracted) == 6  # one call per page, each once
    assert site.log == []  # nothing fetched
    assert result.report["extractor_calls"] == 6
    again = process(cache, settings={"TEST_EXTRACTOR_VERSION": "2"})
    assert again.returncode == 0 and again.calls == []
    # and the next crawl with that version has nothing to extract either
    recrawl = run_crawl(site.url + "/", cache, settings={"TEST_EXTRACTOR_VERSION": "2"})
    assert recrawl.returncode == 0 and recrawl.calls == []


def test_redo_extraction_calls_the_extractor_for_every_page_once_and_a_wrong_step_is_refused(crawled):
    site, cache, extracted = crawled
    redone = process(cache, "--redo", "extraction")
    assert redone.returncode == 0, redone.stderr[-2000:]
    assert sorted(redone.calls) == extracted and site.log == []  # every page once, nothing fetched
    assert process(cache).calls == []  # one run's choice: the next run calls nothing
    wrong = process(cache, "--redo", "download")  # no page is downloaded by scrapy process
    assert wrong.returncode == 2 and "invalid choice: 'download'" in wrong.stderr


def test_a_new_llm_prompt_reextracts_exactly_the_extracted_pages(site, tmp_path):
    from tests.test_e2e_llm import llm_settings

    llm = LLMServer().start()
    try:
        cache, env = tmp_path / "cache", {"LLM_API_KEY": KEY}
        first = run_crawl(site.url + "/", cache, settings=llm_settings(llm), env=env)
        assert first.returncode == 0, first.stderr[-2000:]
        extracted = sorted(call.url for call in llm.answered(200))
        assert len(extracted) == 6
        site.reset_log()
        llm.reset()
        prompt = llm_settings(llm, LLM_PROMPT="URL: {url}\n\nSummarise this page:\n\n{content}")
        dry = process(cache, "--dry-run", settings=prompt, env=env)
        assert dry.returncode == 0 and llm.calls == []
        assert "Dry run: the extractor would be called for 6 pages, about" in dry.stderr
        result = process(cache, settings=prompt, env=env)
        assert result.returncode == 0, result.stderr[-2000:]
        assert sorted(call.url for call in llm.answered(200)) == extracted  # each page once
        assert result.report["llm"]["requests"] == 6 and site.log == []
        llm.reset()
        again = process(cache, settings=prompt, env=env)
        assert again.returncode == 0 and llm.calls == [] and site.log == []
    finally:
        llm.stop()


def test_a_dry_run_is_reported_as_one(crawled):
    """A dry run on an extracted cache: it sends nothing, so it saves no call."""
    _, cache, _ = crawled
    dry = process(cache, "--dry-run")
    assert dry.returncode == 0 and dry.calls == [], dry.stderr[-2000:]
    assert dry.report["dry_run"] == {"pages": 0, "tokens": None}
    assert "dry run, nothing sent: 0 pages to send, 6 extracted already; 0 errors" in dry.stderr
    assert "extractor called" not in dry.stderr
    data = json.loads(cache_command(cache, "stats", "--json"))
    crawl, dry_run = data["runs"]
    assert (crawl["dry_run"], dry_run["dry_run"]) == (False, True)
    assert (dry_run["extractor_calls"], dry_run["calls_saved"], dry_run["hit_rate"]) == (0, 0, 0.0)
    table = cache_command(cache, "stats")
    assert "finished, dry run" in table and "Last 2 runs:" in table


def test_dry_run_and_domain_filter(crawled):
    site, cache, _ = crawled
    dry = process(cache, "--dry-run", settings={"TEST_EXTRACTOR_VERSION": "2"})
    assert dry.returncode == 0, dry.stderr[-2000:]
    assert dry.calls == [] and site.log == []
    assert "Dry run: the extractor would be called for 6 pages; nothing was sent" in dry.stderr
    assert dry.report["dry_run"] == {"pages": 6, "tokens": None}
    other = process(cache, "--domain", "other.example", settings={"TEST_EXTRACTOR_VERSION": "2"})
    assert other.returncode == 0 and other.calls == [] and other.report["pages_processed"] == 0
    host = site.url.split("//", 1)[1]
    mine = process(cache, "--domain", host, "--stage", "extraction", settings={"TEST_EXTRACTOR_VERSION": "2"})
    assert mine.returncode == 0 and len(mine.calls) == 6
    assert "boilerplate" not in mine.report  # --stage: that stage alone (and the report)


def test_vectors_are_synced_again_after_an_embedder_change(site, tmp_path):
    cache, log = tmp_path / "cache", tmp_path / "embedded.log"
    vectors = {
        "VECTOR_SYNC_ENABLED": "True",
        "EMBEDDER": "tests.embedders.CountingEmbedder",
        "TEST_EMBEDDER_LOG": str(log),
    }
    first = run_crawl(site.url + "/", cache, settings=vectors)
    assert first.returncode == 0, first.stderr[-2000:]
    chunks = len(embedded(log))
    assert chunks > 0
    site.reset_log()
    log.unlink()
    same = process(cache, "--stage", "vectors", settings={**vectors, "VECTOR_SYNC_ENABLED": "False"})
    assert same.returncode == 0, same.stderr[-2000:]
    assert embedded(log) == [] and same.report["vector_sync"]["pages_unchanged"] == 6  # --stage vectors turns it on
    changed = process(
        cache, "--stage", "vectors", settings={**vectors, "TEST_EMBEDDER_VERSION": "2", "TEST_EXTRACTOR_VERSION": "2"}
    )
    assert changed.returncode == 0, changed.stderr[-2000:]
    assert len(embedded(log)) == chunks  # every chunk again, under the new embedder
    assert changed.calls == [] and site.log == []  # the extraction stage was not asked for
    assert changed.report["vector_sync"]["chunks_updated"] == chunks


def test_a_kill_during_extraction_loses_nothing_finished(crawled, tmp_path, reap):
    site, cache, extracted = crawled
    # the last page in the store's order waits for the gate; with one worker, those before it finish
    store = SqliteDocStore(cache, readonly=True)
    try:
        held = [record["url"] for _, record in store.iter_pages()][-1]
    finally:
        store.close()
    calls_log, gate = tmp_path / "killed-calls.log", tmp_path / "gate"
    settings = {
        "TEST_EXTRACTOR_VERSION": "2",
        "TEST_EXTRACTOR_GATE": str(gate),
        "TEST_EXTRACTOR_HOLD": f"^{held}$",
        "EXTRACTOR_CONCURRENCY": "1",
        "TEST_EXTRACTOR_LOG": str(calls_log),
    }
    proc = reap(
        subprocess.Popen(
            scrapy_command(["process"], cache, settings),
            cwd=ROOT,
            env=crawl_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
    )
    wait_for_text(calls_log, held, proc)
    proc.kill()  # SIGKILL
    proc.communicate(timeout=30)
    started = [line.split("\t", 1)[0] for line in calls_log.read_text().splitlines()]
    finished = [url for url in started if url != held]
    assert len(finished) == 5 and started[-1] == held
    # what the kill left is no damage: verify says the next run adopts it, and exits 0
    verified = subprocess.run(
        scrapy_command(["cache", "verify"], cache, {}), cwd=ROOT, env=crawl_env(), capture_output=True, text=True
    )
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert verified.stdout.count("interrupted_run") == 5 and "extraction_mismatch" not in verified.stdout
    assert "Interrupted, not damaged: the next run adopts 5 extractions without an extractor call" in verified.stdout
    resumed = process(cache, settings={"TEST_EXTRACTOR_VERSION": "2"})
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert sorted(resumed.calls) == sorted(set(extracted) - set(finished))  # the rest, the held one included
    assert resumed.report["extraction_cache_hits"] == len(finished)
    assert process(cache, settings={"TEST_EXTRACTOR_VERSION": "2"}).calls == []
    assert "consistent" in cache_command(cache, "verify")
    assert site.log == []


def test_sigint_stops_taking_calls_and_the_next_process_does_the_rest(crawled, tmp_path, reap):
    site, cache, _ = crawled
    calls_log, gate, log = tmp_path / "calls.log", tmp_path / "gate", tmp_path / "process.log"
    settings = {
        "TEST_EXTRACTOR_VERSION": "2",
        "TEST_EXTRACTOR_GATE": str(gate),
        "EXTRACTOR_CONCURRENCY": "1",
        "TEST_EXTRACTOR_LOG": str(calls_log),
    }
    with open(log, "w") as handle:
        proc = reap(
            subprocess.Popen(
                scrapy_command(["process"], cache, settings),
                cwd=ROOT,
                env=crawl_env(),
                stdout=handle,
                stderr=subprocess.STDOUT,
            )
        )
    wait_for_lines(calls_log, 1, proc)  # the first call is in flight, held by the gate
    proc.send_signal(signal.SIGINT)
    wait_for_text(log, "SIGINT received", proc)
    gate.touch()  # the call in flight may now end
    assert proc.wait(timeout=120) == 130
    output = log.read_text()
    assert "Traceback" not in output and "INTERRUPTED by SIGINT, 5 extractions left for the next run" in output
    assert len(calls_log.read_text().splitlines()) == 1
    rest = process(cache, settings={"TEST_EXTRACTOR_VERSION": "2"})
    assert rest.returncode == 0 and len(rest.calls) == 5 and rest.report.get("interrupted") is None
    assert site.log == []


def test_a_locked_cache_is_one_clear_line_and_exit_1(crawled, tmp_path, reap):
    site, cache, _ = crawled
    calls_log, gate = tmp_path / "first-calls.log", tmp_path / "gate"
    crawl = reap(start_crawl(site, cache, calls_log, {"TEST_EXTRACTOR_GATE": str(gate)}, args={"redo": "extraction"}))
    wait_for_lines(calls_log, 1, crawl)  # the crawl holds the lock, its calls held by the gate
    locked = process(cache)
    assert locked.returncode == 1
    assert "Processing not started: The cache" in locked.stderr and "in use by another crawl" in locked.stderr
    assert "Traceback" not in locked.stderr and locked.calls == []
    gate.touch()
    _, err = crawl.communicate(timeout=120)
    assert crawl.returncode == 0, err[-2000:]


def test_no_cache_is_one_line_and_exit_1(tmp_path):
    result = process(tmp_path / "nothing")
    assert result.returncode == 1
    assert f"Processing not started: no cache in {tmp_path / 'nothing'}: run a crawl first" in result.stderr
    assert not (tmp_path / "nothing").exists()


def test_a_wrong_stage_is_a_usage_error(tmp_path):
    result = process(tmp_path / "cache", "--stage", "removal")
    assert result.returncode == 2
    assert "--stage 'removal': one of boilerplate, extraction, vectors" in result.stderr


def test_the_run_claim_renewal_gives_up_after_two_failures(monkeypatch, caplog):
    """Redis gone during ``scrapy process --run``: the claim's renewal is tried once
    more, then said once and no more tried (it warned every few seconds, for ever)."""
    import logging
    import threading

    from crawler.frontier import runpart
    from crawler.processcli import ClaimRenewal

    monkeypatch.setattr(runpart, "PROCESSING_CLAIM_SECONDS", 0.03)
    calls = []
    third = threading.Event()

    def renew():
        calls.append(1)
        if len(calls) > 2:
            third.set()
        raise ConnectionError("Error 111 connecting to redis://:pass@word@127.0.0.1:1. Connection refused.")

    with caplog.at_level(logging.WARNING):
        renewal = ClaimRenewal(renew)
        renewal.thread.join(60)  # it ends by itself; the timeout is a safety net only
        alive = renewal.thread.is_alive()
        renewal.stop()
    assert not alive and not third.is_set() and len(calls) == 2
    [record] = caplog.records
    assert record.levelno == logging.ERROR and "Could not renew the claim" in record.getMessage()
    assert "pass@word" not in record.getMessage()
