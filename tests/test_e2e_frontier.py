"""End to end: three ``scrapy crawl docs`` processes of one run share a frontier in Redis.

A generated site of 300 linked pages; every process has its own cache (until the
shared store). Counted from the site's log: every page fetched exactly once per run
across the processes; the next run (another FRONTIER_RUN) fetches every page again,
conditionally; a process killed with -9 leaves the others to finish the frontier and
the run partial.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections import Counter

import pytest

from crawler.frontier.runstate import RunState
from tests.crawl import ROOT, crawl_env, scrapy_command
from tests.site import Site

PAGES = 300
#: each process fetches robots.txt itself (Scrapy's RobotsTxtMiddleware, outside the
#: scheduler); the spider's start requests (its Sitemap: lines) get that download's response
PER_PROCESS = {"/robots.txt"}
TIMEOUT = 300


def linked_site(pages: int = PAGES) -> Site:
    """``pages`` pages under /p/, each linking to six others, the home page to ten: the
    frontier grows quickly, so the processes overlap."""
    site = Site(noise=False)
    for i in range(pages):
        links = [f"/p/{(i * 7 + k) % pages}.html" for k in range(1, 6)] + [f"/p/{(i + 1) % pages}.html"]
        site.page(f"/p/{i}.html", f"Page {i}", f"Page {i} explains topic {i * 13 % 97} in detail.", links=links)
    # a moved page (its target is linked too) and a spelling redirect (/guide -> /guide/,
    # one page by identity: the redirect is its own request, not a duplicate)
    site.redirects["/old.html"] = "/p/1.html"
    site.redirects["/guide"] = "/guide/"
    site.page("/guide/", "Guide", "The guide, reached through a redirect.")
    home_links = [f"/p/{k}.html" for k in range(10)] + ["/old.html", "/guide"]
    site.page("/", "Home", "Welcome to the generated documentation.", links=home_links)
    return site


def served(pages: int = PAGES):
    """:func:`linked_site` started; its held pages let go and the server stopped after."""
    site = linked_site(pages)
    site.start()
    yield site
    for hold in site.holds.values():
        hold.set()
    site.stop()


@pytest.fixture
def frontier_site():
    yield from served()


def start_worker(site, tmp_path, redis_url, run, index, lease="30", reap=None):
    cache = tmp_path / f"cache{index}"
    log = tmp_path / f"{run}-{index}.log"
    settings = {
        "FRONTIER_ENABLED": "True",
        "FRONTIER_RUN": run,
        "FRONTIER_LEASE_SECONDS": lease,
        "TEST_EXTRACTOR_LOG": str(tmp_path / f"calls{index}.log"),
    }
    command = scrapy_command(["crawl", "docs", "-a", f"start_urls={site.url}/"], cache, settings)
    with open(log, "w") as handle:
        proc = subprocess.Popen(
            command,
            cwd=ROOT,
            env=crawl_env({"FRONTIER_REDIS_URL": redis_url}),
            stdout=handle,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    if reap is not None:
        reap(proc)
    proc.log = log
    return proc


def wait_until(condition, what, timeout=TIMEOUT):
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def finish(procs, timeout=TIMEOUT):
    for proc in procs:
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"a crawl did not end: {proc.log.read_text()[-3000:]}") from None


def fetches(site) -> Counter[str]:
    with site.lock:
        return Counter(path for path, _ in site.log if path not in PER_PROCESS)


def hold_until_all_joined(site, state, workers, path="/"):
    """The start page waits until ``workers`` processes have joined the run: they overlap."""
    site.holds[path] = threading.Event()
    return lambda: len(state.workers()) >= workers


def overlapping(site, state, workers, start, path="/"):
    """``workers`` crawl processes of the run ``state`` (``start(index)`` starts one)
    that overlap: ``path`` waits until all have joined. Each exits 0, without a traceback."""
    joined = hold_until_all_joined(site, state, workers, path=path)
    procs = [start(i) for i in range(workers)]
    wait_until(joined, f"{workers} processes in run {state.keys.run}")
    site.holds.pop(path).set()
    finish(procs)
    for proc in procs:
        log = proc.log.read_text()
        assert proc.returncode == 0, log[-3000:]
        assert "Traceback" not in log, log[-3000:]
    return procs


def crawl_run(site, tmp_path, redis_url, run, reap, workers=3):
    state = RunState.from_url(redis_url, run)
    procs = overlapping(site, state, workers, lambda i: start_worker(site, tmp_path, redis_url, run, i, reap=reap))
    for proc in procs:
        assert "never reached" not in proc.log.read_text()  # /old.html's target was reached, by some process
    return state, procs


def test_three_processes_fetch_every_page_once_per_run(frontier_site, tmp_path, redis_url, reap):
    site = frontier_site
    expected = {*(f"/p/{i}.html" for i in range(PAGES)), "/", "/sitemap.xml", "/old.html", "/guide", "/guide/"}

    state, _ = crawl_run(site, tmp_path, redis_url, "r1", reap)
    counted = fetches(site)
    assert set(counted) == expected
    assert {path: n for path, n in counted.items() if n != 1} == {}
    workers = state.workers()
    assert [(w.state, w.reason) for w in workers] == [("finished", "finished")] * 3
    assert state.complete() and not state.partial() and state.frontier_empty()

    site.reset_log()
    state, _ = crawl_run(site, tmp_path, redis_url, "r2", reap)
    counted = fetches(site)
    assert set(counted) == expected
    assert {path: n for path, n in counted.items() if n != 1} == {}
    # conditional requests: a process that fetched a page in r1 has its validators
    assert site.count_status(304) > 0
    assert state.complete()


def test_a_killed_process_leaves_the_run_partial(frontier_site, tmp_path, redis_url, reap):
    site = frontier_site
    state = RunState.from_url(redis_url, "k1")
    joined = hold_until_all_joined(site, state, 3)
    gate = "/p/150.html"  # held until a process is killed: the run cannot end before
    site.holds[gate] = threading.Event()
    procs = [start_worker(site, tmp_path, redis_url, "k1", i, lease="3", reap=reap) for i in range(3)]
    wait_until(joined, "3 processes in run k1")
    site.holds.pop("/").set()
    wait_until(lambda: site.requests_for(gate), f"{gate} requested")
    busy = [w for w in state.workers() if w.in_flight > 0]  # the one waiting for the gate, at least
    assert busy
    victim = next(proc for proc in procs if proc.pid == busy[0].pid)
    os.killpg(victim.pid, signal.SIGKILL)
    victim.wait(TIMEOUT)
    site.holds[gate].set()

    survivors = [proc for proc in procs if proc is not victim]
    finish(survivors)
    for proc in survivors:
        assert proc.returncode == 0, proc.log.read_text()[-3000:]
    assert victim.returncode == -signal.SIGKILL
    wait_until(lambda: {w.pid: w.state for w in state.workers()}[victim.pid] == "dead", "the lease to expire")
    workers = {w.pid: w for w in state.workers()}
    assert workers[victim.pid].state == "dead"
    assert all(workers[proc.pid].state == "finished" for proc in survivors)
    assert state.partial() and not state.complete()
    assert state.frontier_empty()  # the survivors took every request left in the queue
    assert max(fetches(site).values()) == 1  # none fetched twice


@pytest.mark.parametrize("url", [None, "unreachable", "a password with @"])
def test_no_redis_is_one_clear_line(frontier_site, tmp_path, url):
    from tests.redis_server import free_port

    password = "Redis@PW-0123@tail-xyz"  # unescaped: masked up to the last @, never the first
    credentials = f":{password}@" if url == "a password with @" else ""
    env = {} if url is None else {"FRONTIER_REDIS_URL": f"redis://{credentials}127.0.0.1:{free_port()}/0"}
    command = scrapy_command(
        ["crawl", "docs", "-a", f"start_urls={frontier_site.url}/"],
        tmp_path / "cache",
        {"FRONTIER_ENABLED": "True", "FRONTIER_RUN": "r1"},
    )
    environ = crawl_env(env)
    if url is None:
        environ.pop("FRONTIER_REDIS_URL", None)
    proc = subprocess.run(command, cwd=ROOT, env=environ, capture_output=True, text=True, timeout=TIMEOUT)
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    expected = "environment variable FRONTIER_REDIS_URL" if url is None else "does not answer"
    assert "Crawl not started: " in proc.stderr and expected in proc.stderr, proc.stderr[-2000:]
    assert "PW-0123" not in proc.stderr and "tail-xyz" not in proc.stderr
    assert frontier_site.log == []


def test_redis_lost_mid_crawl_stops_the_crawl_partial(tmp_path, own_redis, reap):
    """redis-server stops while a page is being fetched: the crawl stops at once with
    the reason frontier_lost and exit status 1, the run partial and nothing removed,
    a few error lines (no error repeated for ever, as the idle check did)."""
    import json

    gen = served(40)
    site = next(gen)
    try:
        first = start_worker(site, tmp_path, own_redis.url, "l1", 0, reap=reap)
        finish([first])
        assert first.returncode == 0, first.log.read_text()[-3000:]
        site.reset_log()

        gate = "/p/5.html"  # linked from the home page: held until Redis is gone
        site.holds[gate] = threading.Event()
        second = start_worker(site, tmp_path, own_redis.url, "l2", 0, reap=reap)
        wait_until(lambda: site.requests_for(gate) or second.poll() is not None, f"{gate} requested")
        own_redis.stop()
        site.holds[gate].set()
        finish([second])  # the timeout is a safety net only
    finally:
        next(gen, None)
    log = second.log.read_text()
    assert second.returncode == 1, log[-3000:]
    assert "(frontier_lost)" in log  # Scrapy's "Closing spider (frontier_lost)"
    assert "Exception in callback" not in log and "Traceback" not in log, log[-3000:]
    errors = [line for line in log.splitlines() if " ERROR: " in line]
    assert 1 <= len(errors) <= 3, errors
    assert "the frontier's Redis failed" in errors[0], errors
    report = json.loads((tmp_path / "cache0" / "runs" / "latest.json").read_text())
    assert report["complete"] is False
    assert any("the frontier's Redis failed" in reason for reason in report["incomplete_reasons"])
    assert report["pages_removed"] == 0
