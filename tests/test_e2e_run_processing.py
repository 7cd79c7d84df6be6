"""End to end: many crawlers, one cache, one processing per run.

Three ``scrapy crawl docs`` processes of one run share the frontier (Redis) and the
store (PostgreSQL); they record pages and call no extractor. ``scrapy process --run ID``
then runs boilerplate analysis, extraction and removal once for the run. Counted with
the recording extractor and the site's log: every page fetched once per run and
extracted once; an unchanged rerun costs 0 calls and only 304s; a crawler killed with
-9 leaves the run partial (nothing removed), and the next run completes it with nothing
lost or extracted twice.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
from collections import Counter

import pytest

from crawler.cache.postgres import PostgresDocStore
from crawler.frontier.runstate import RunState
from tests.crawl import ROOT, crawl_env, scrapy_command
from tests.test_e2e_frontier import TIMEOUT, fetches, finish, hold_until_all_joined, overlapping, served, wait_until

#: the generated site of the main test: a few thousand pages
PAGES = 2000
STORE = "crawler.cache.postgres.PostgresDocStore"


@pytest.fixture
def big_site():
    yield from served(PAGES)


@pytest.fixture
def small_site():
    yield from served(300)


class Shared:
    """The servers of one test and where its crawlers write: one store, one frontier,
    one extractor log (only ``scrapy process --run`` may write to it)."""

    def __init__(self, tmp_path, dsn, redis_url):
        self.tmp_path = tmp_path
        self.dsn = dsn
        self.redis_url = redis_url
        self.calls = tmp_path / "calls.log"
        self.calls.touch()

    def settings(self, **more):
        return {"EXTRACTED_DOCS_STORE": STORE, "TEST_EXTRACTOR_LOG": str(self.calls), **more}

    def env(self):
        return crawl_env({"EXTRACTED_DOCS_DSN": self.dsn, "FRONTIER_REDIS_URL": self.redis_url})

    def start_crawler(self, site, run, index, reap, lease="30", wrapper=False):
        """A crawl process of the run, by ``scrapy crawl`` or by the cron wrapper."""
        settings = self.settings(FRONTIER_ENABLED="True", FRONTIER_RUN=run, FRONTIER_LEASE_SECONDS=lease)
        cache = self.tmp_path / f"cache{index}"  # the wrapper's logs and lock; the pages go to PostgreSQL
        command = scrapy_command(["crawl", "docs", "-a", f"start_urls={site.url}/"], cache, settings)
        if wrapper:
            command = [command[0], "-m", "crawler.recrawl", f"{site.url}/", *command[command.index("-s") :]]
        log = self.tmp_path / f"{run}-{index}.log"
        with open(log, "w") as handle:
            proc = subprocess.Popen(
                command, cwd=ROOT, env=self.env(), stdout=handle, stderr=subprocess.STDOUT, start_new_session=True
            )
        reap(proc)
        proc.log = log
        return proc

    def crawl(self, site, run, reap, workers=3):
        """A run of ``workers`` crawl processes that overlap (the start page waits
        until all have joined); each exits 0."""
        state = RunState.from_url(self.redis_url, run)
        overlapping(site, state, workers, lambda i: self.start_crawler(site, run, i, reap))
        return state

    def process(self, run, *more):
        command = scrapy_command(["process", "--run", run, *more], self.tmp_path / "cache", self.settings())
        return subprocess.run(command, cwd=ROOT, env=self.env(), capture_output=True, text=True, timeout=TIMEOUT)

    def calls_made(self) -> Counter[str]:
        """Extractor calls since the last look, by URL."""
        made = Counter(line.split("\t", 1)[0] for line in self.calls.read_text().splitlines())
        self.calls.write_text("")
        return made

    def report(self, run):
        store = PostgresDocStore(self.dsn, readonly=True, create=False)
        try:
            return next(r for r in reversed(store.run_reports(50)) if r["run_id"] == run and r["kind"] == "run")
        finally:
            store.close()


@pytest.fixture
def shared(tmp_path, postgres_dsn, redis_url):
    return Shared(tmp_path, postgres_dsn, redis_url)


def page_paths(pages):
    return {*(f"/p/{i}.html" for i in range(pages)), "/", "/guide/"}


def test_three_crawlers_one_processing_every_page_fetched_and_extracted_once(big_site, shared, reap):
    site = big_site
    urls = {site.url + path for path in page_paths(PAGES)}

    shared.crawl(site, "r1", reap)
    fetched = fetches(site)
    assert {path: n for path, n in fetched.items() if n != 1} == {}  # each page once across the three
    assert page_paths(PAGES) <= set(fetched)
    assert shared.calls_made() == Counter()  # crawlers record pages; they extract nothing

    processed = shared.process("r1", "--wait", "60")
    assert processed.returncode == 0, processed.stderr[-3000:]
    calls = shared.calls_made()
    assert set(calls) == urls and set(calls.values()) == {1}  # every page extracted exactly once
    report = shared.report("r1")
    assert (report["pages_new"], report["complete"], report["pages_removed"]) == (len(urls), True, 0)
    assert report["extractor_calls"] == len(urls)

    again = shared.process("r1")  # a second processing of the run (another cron job): nothing
    assert again.returncode == 0 and "processed already" in again.stderr
    assert shared.calls_made() == Counter()

    # the next night: every page revisited with a conditional request, nothing extracted
    site.reset_log()
    shared.crawl(site, "r2", reap)
    statuses = Counter(status for path, status in site.log if path in page_paths(PAGES))
    assert statuses == {304: len(urls)}
    assert shared.process("r2", "--wait", "60").returncode == 0
    assert shared.calls_made() == Counter()
    report = shared.report("r2")
    assert (report["pages_unchanged"], report["pages_new"], report["pages_removed"]) == (len(urls), 0, 0)
    assert report["complete"] is True


def test_a_run_still_crawling_is_not_processed(small_site, shared, reap):
    site = small_site
    site.pages["/guide/"].links.append("/missing/")  # a broken link: listed in the run's report
    state = RunState.from_url(shared.redis_url, "w1")
    site.holds["/"] = threading.Event()  # the run cannot end before the test says so
    proc = shared.start_crawler(site, "w1", 0, reap, wrapper=True)  # as cron runs it
    wait_until(lambda: len(state.workers()) == 1, "the crawler joined")
    early = shared.process("w1")
    assert early.returncode == 75 and "still crawling (1 process)" in early.stderr, early.stderr[-2000:]
    site.holds.pop("/").set()
    finish([proc])
    assert proc.returncode == 0 and proc.log.read_text() == ""  # the wrapper: silent when all went well
    waited = shared.process("w1", "--wait", str(TIMEOUT))
    assert waited.returncode == 0, waited.stderr[-3000:]
    assert len(shared.calls_made()) == len(page_paths(300))
    report = shared.report("w1")
    missing = {"url": site.url + "/missing/", "status": 404, "linked_from": site.url + "/guide/"}
    assert (report["links_broken"], report["broken_links"]) == (1, [missing])  # the summary points here


def test_a_killed_crawler_makes_the_run_partial_and_the_next_run_completes_it(small_site, shared, reap):
    site = small_site
    urls = {site.url + path for path in page_paths(300)}
    shared.crawl(site, "k0", reap)  # a complete run first: every page stored and extracted
    assert shared.process("k0", "--wait", "60").returncode == 0
    extracted = shared.calls_made()
    assert set(extracted) == urls and set(extracted.values()) == {1}

    edited = {site.url + path for path in page_paths(300) if path.startswith("/p/")}
    for path in page_paths(300):
        if path.startswith("/p/"):
            site.edit(path, f"{path} was edited before the run whose crawler is killed.")
    state = RunState.from_url(shared.redis_url, "k1")
    joined = hold_until_all_joined(site, state, 3)
    gate = "/p/150.html"  # held until a crawler is killed: the run cannot end before
    site.holds[gate] = threading.Event()
    site.reset_log()
    procs = [shared.start_crawler(site, "k1", i, reap, lease="10") for i in range(3)]
    wait_until(joined, "3 processes in run k1")
    site.holds.pop("/").set()
    wait_until(lambda: site.requests_for(gate), f"{gate} requested")
    busy = next(w for w in state.workers() if w.in_flight > 0)  # it took requests from the queue
    victim = next(proc for proc in procs if proc.pid == busy.pid)
    os.killpg(victim.pid, signal.SIGKILL)
    victim.wait(TIMEOUT)
    site.holds[gate].set()
    survivors = [proc for proc in procs if proc is not victim]
    finish(survivors)
    assert all(proc.returncode == 0 for proc in survivors)
    assert max(fetches(site).values()) == 1  # none fetched twice

    partial = shared.process("k1", "--wait", str(TIMEOUT))  # waits for the victim's lease to expire
    assert partial.returncode == 0, partial.stderr[-3000:]
    assert "is partial" in partial.stderr and "died (its lease expired)" in partial.stderr
    report = shared.report("k1")
    # why it is partial is in the report, not only in the log
    assert any("died (its lease expired)" in reason for reason in report["incomplete_reasons"])
    recorded = report["pages_new"] + report["pages_changed"] + report["pages_unchanged"]
    # the victim's pages are not in the run's part: a complete run would remove them
    assert recorded < len(urls)
    assert (report["complete"], report["pages_removed"]) == (False, 0)
    # the edits the survivors recorded are extracted; the victim's wait for the next run
    first = shared.calls_made()
    assert set(first) < edited and set(first.values()) == {1}
    assert report["pages_changed"] == len(first)

    # the next night, complete: a page deleted from the site meanwhile is removed, on
    # evidence, and nothing else
    gone = site.url + "/p/7.html"
    site.remove("/p/7.html")
    site.reset_log()
    shared.crawl(site, "k2", reap)
    assert max(fetches(site).values()) == 1
    done = shared.process("k2", "--wait", "60")
    assert done.returncode == 0, done.stderr[-3000:]
    report = shared.report("k2")
    assert (report["complete"], report["pages_removed"]) == (True, 1)
    # the edits the victim recorded are extracted now, and counted as what they are:
    # changed pages of this run (not "unchanged" pages that cost calls)
    caught_up = shared.calls_made()
    assert set(caught_up) == edited - set(first) - {gone} and set(caught_up.values()) == {1}
    assert report["pages_changed"] == report["extractor_calls"] == len(caught_up)
    assert report["pages_unchanged"] == len(urls) - 1 - len(caught_up)
    store = PostgresDocStore(shared.dsn, readonly=True, create=False)
    try:
        records = [record for _, record in store.iter_pages()]
        statuses = Counter(record.get("status") for record in records)
    finally:
        store.close()
    assert statuses == {"unchanged": len(urls) - 1 - len(caught_up), "changed": len(caught_up), "removed": 1}
    assert {r["url"] for r in records if r.get("status") == "changed"} == set(caught_up)


def test_what_a_run_lost_with_its_redis_recorded_is_listed_by_the_run_that_extracts_it(
    tmp_path, postgres_dsn, own_redis, reap
):
    """A run's crawl process recorded every page, then the run's Redis was lost before
    its processing: nothing extracted them. The next run's processing pays for each
    once and lists each as new in its change list (its feeds and webhook hear of them),
    not as an unchanged page that cost a call."""
    gen = served(20)
    site = next(gen)
    try:
        Shared(tmp_path, postgres_dsn, own_redis.url).crawl(site, "lost", reap, workers=1)
        own_redis.stop()  # the run's parts are gone with it: no `scrapy process --run lost`
        shared = Shared(tmp_path, postgres_dsn, own_redis.start().url)
        shared.crawl(site, "next", reap, workers=1)
        done = shared.process("next", "--wait", "60")
    finally:
        next(gen, None)
    assert done.returncode == 0, done.stderr[-3000:]
    urls = {site.url + path for path in page_paths(20)}
    calls = shared.calls_made()
    assert set(calls) == urls and set(calls.values()) == {1}
    report = shared.report("next")
    assert report["pages_new"] == report["extractor_calls"] == len(urls)
    assert report["pages_unchanged"] == report["pages_changed"] == 0
    assert sorted(c["url"] for c in report["changes_sample"]) == sorted(urls)
    assert {c["status"] for c in report["changes_sample"]} == {"new"}


def test_postgres_stopped_during_processing_loses_no_finished_call(tmp_path, redis_url, reap):
    """PostgreSQL stops while 4 extractor calls of ``scrapy process --run`` are out (the
    test holds them, then stops the server, then lets them answer): their answers are
    kept in ``pending-extractions/``, no call starts after, and the next processing,
    with the server back, adopts them: every page paid for once. The answers used to be
    lost and paid for again."""
    from tests.crawl import wait_for_lines
    from tests.pg_server import create_database, running_postgres, start_again, stop_server
    from tests.test_e2e_frontier import linked_site

    site = linked_site(40)
    site.start()
    try:
        with running_postgres() as server:
            shared = Shared(tmp_path, create_database(server, "stopped"), redis_url)
            shared.crawl(site, "s1", reap, workers=1)
            urls = {site.url + path for path in page_paths(40)}
            gate = tmp_path / "gate"
            # (the store tries a lost connection again for 30 s by default: the server stays down here)
            settings = shared.settings(
                TEST_EXTRACTOR_GATE=str(gate), EXTRACTOR_CONCURRENCY="4", EXTRACTED_DOCS_RECONNECT_SECONDS="0"
            )
            command = scrapy_command(["process", "--run", "s1"], tmp_path / "cache", settings)
            log = tmp_path / "process.log"
            with open(log, "w") as handle:
                proc = reap(subprocess.Popen(command, cwd=ROOT, env=shared.env(), stdout=handle, stderr=handle))
            wait_for_lines(shared.calls, 4, proc, timeout=TIMEOUT)
            stop_server(server)
            gate.touch()  # the 4 calls answer now, with the store gone
            proc.wait(TIMEOUT)
            output = log.read_text()
            first = shared.calls_made()
            assert len(first) == 4 and set(first.values()) == {1}, output[-3000:]
            assert proc.returncode != 0, output[-3000:]
            kept = list((tmp_path / "cache" / "pending-extractions").glob("*.json"))
            assert len(kept) == 4, output[-3000:]

            start_again(server)
            again = shared.process("s1")
            assert again.returncode == 0, again.stderr[-3000:]
            second = shared.calls_made()
            assert set(second).isdisjoint(first) and set(second.values()) == {1}
            assert set(first) | set(second) == urls  # 0 calls paid twice
            assert "'extraction/recovered_pending': 4" in again.stderr
            assert list((tmp_path / "cache" / "pending-extractions").glob("*.json")) == []
    finally:
        site.stop()


def test_redis_lost_during_the_processing_fails_with_one_clear_line(tmp_path, postgres_dsn, own_redis, reap):
    """redis-server stops while ``scrapy process --run`` extracts: the run is processed
    from what was read, and recording that in Redis fails: exit status 1 and one error
    line naming the run and what to do (it was a bare traceback)."""
    gen = served(20)
    site = next(gen)
    shared = Shared(tmp_path, postgres_dsn, own_redis.url)
    gate = tmp_path / "gate"
    try:
        shared.crawl(site, "g1", reap, workers=1)
    finally:
        next(gen, None)
    command = scrapy_command(
        ["process", "--run", "g1"], tmp_path / "cache", shared.settings(TEST_EXTRACTOR_GATE=str(gate))
    )
    log = tmp_path / "process.log"
    with open(log, "w") as handle:
        proc = subprocess.Popen(
            command, cwd=ROOT, env=shared.env(), stdout=handle, stderr=subprocess.STDOUT, start_new_session=True
        )
    reap(proc)
    wait_until(lambda: shared.calls.read_text() or proc.poll() is not None, "the first extractor call")
    own_redis.stop()
    gate.touch()
    proc.wait(TIMEOUT)  # a safety net only
    output = log.read_text()
    assert proc.returncode == 1, output[-3000:]
    assert "Traceback" not in output, output[-3000:]
    errors = [line for line in output.splitlines() if " ERROR: " in line]
    assert len(errors) == 1, errors
    assert "Run g1 was processed (report g1), but recording that in the frontier's Redis failed" in errors[0]
    assert "the next `scrapy process --run g1` processes it again" in errors[0]  # what happens next
