"""The shared frontier's components against a real Redis (tests/redis_server.py): the
run's duplicate filter, the scheduler adapter, start requests once per run, the
worker's lease and outcome, and the run state read from outside."""

from __future__ import annotations

import json
import logging

import pytest
import redis
from scrapy import Request, Spider
from scrapy.exceptions import CloseSpider, DontCloseSpider, NotConfigured
from scrapy.utils.misc import build_from_crawler
from scrapy.utils.test import get_crawler

from crawler.addons.incremental import IncrementalAddon
from crawler.cache import cache_for
from crawler.frontier import Frontier, FrontierError
from crawler.frontier.dupefilter import RunDupeFilter
from crawler.frontier.runstate import RUN_TTL, RunKeys, RunState
from crawler.frontier.scheduler import FrontierScheduler
from crawler.frontier.start import StartOncePerRun
from crawler.frontier.worker import FrontierWorker
from tests.helpers import run
from tests.redis_server import free_port


class PagesSpider(Spider):
    name = "pages"

    def parse(self, response):
        yield from ()


_CRAWLERS: list = []


def frontier_crawler(tmp_path, run_id="r1", **settings):
    """A crawler of the run ``run_id`` with the add-on's frontier components, its own
    cache (each stands for a process); closed after the test (``_close_caches``)."""
    values = {
        "FRONTIER_ENABLED": True,
        "FRONTIER_RUN": run_id,
        "FRONTIER_LEASE_SECONDS": 30.0,
        "EXTRACTED_DOCS_DIR": str(tmp_path / f"cache{len(_CRAWLERS)}"),
        "ADDONS": {IncrementalAddon: 100},  # the frontier's components, as a crawl has them
        **settings,
    }
    crawler = get_crawler(PagesSpider, values)
    crawler.spider = crawler._create_spider()
    _CRAWLERS.append(crawler)
    return crawler


class StillLoop:
    """A looping call that never fires (no reactor runs here): the tests renew and
    nudge by hand."""

    def __init__(self, call):
        self.call = call
        self.running = False

    def start(self, interval, now=True):
        self.running = True

    def stop(self):
        self.running = False


def new_worker(crawler):
    """The worker extension, its looping calls still: no reactor runs in this test."""
    worker = build_from_crawler(FrontierWorker, crawler)
    worker.looping = StillLoop
    return worker


def close(worker, reason="finished", reasons=()):
    """The spider closes, then its pages are recorded (ClosingStages' run_recorded)."""
    from crawler.cache import cache_for
    from crawler.stages import PageViews, StageRun

    worker.spider_closed(reason)
    cache = cache_for(worker.crawler)
    worker.run_recorded(cache, StageRun(cache, PageViews(cache.store, use_clean=True), reasons=list(reasons)))


@pytest.fixture(autouse=True)
def _close_caches():
    yield
    from crawler.cache import peek_cache

    while _CRAWLERS:
        cache = peek_cache(_CRAWLERS.pop())
        if cache is not None:
            cache.close()


@pytest.fixture
def env(redis_url, monkeypatch):
    monkeypatch.setenv("FRONTIER_REDIS_URL", redis_url)
    return redis.Redis.from_url(redis_url)


def scheduler_for(crawler):
    scheduler = build_from_crawler(FrontierScheduler, crawler)
    scheduler.open(crawler.spider)
    return scheduler


# -- configuration -----------------------------------------------------------


def test_off_by_default(tmp_path):
    crawler = get_crawler(PagesSpider, {"EXTRACTED_DOCS_DIR": str(tmp_path)})
    with pytest.raises(NotConfigured, match="FRONTIER_ENABLED"):
        Frontier.from_crawler(crawler)
    with pytest.raises(NotConfigured):
        new_worker(crawler)


def test_missing_url_names_the_environment_variable(tmp_path, monkeypatch):
    monkeypatch.delenv("FRONTIER_REDIS_URL", raising=False)
    with pytest.raises(ValueError, match="environment variable FRONTIER_REDIS_URL"):
        Frontier.from_crawler(frontier_crawler(tmp_path))


def test_missing_run_and_bad_run(tmp_path, env):
    with pytest.raises(ValueError, match="FRONTIER_RUN"):
        Frontier.from_crawler(frontier_crawler(tmp_path, run_id=""))
    with pytest.raises(ValueError, match="FRONTIER_RUN must be"):
        Frontier.from_crawler(frontier_crawler(tmp_path, run_id="a b%"))


def test_unreachable_redis_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("FRONTIER_REDIS_URL", f"redis://:secret@127.0.0.1:{free_port()}/0")
    with pytest.raises(FrontierError, match=r"does not answer") as error:
        Frontier.from_crawler(frontier_crawler(tmp_path))
    assert "secret" not in str(error.value)


def test_addon_sets_the_components_only_when_enabled():
    from scrapy.settings import Settings

    off = Settings()
    IncrementalAddon().update_settings(off)
    assert off["SCHEDULER"] == "scrapy.core.scheduler.Scheduler"
    assert off["DUPEFILTER_CLASS"] == "crawler.dupefilters.RedirectAwareDupeFilter"
    on = Settings({"FRONTIER_ENABLED": True})
    IncrementalAddon().update_settings(on)
    assert on["SCHEDULER"] == "crawler.frontier.scheduler.FrontierScheduler"
    assert on["DUPEFILTER_CLASS"] == "crawler.frontier.dupefilter.RunDupeFilter"
    assert "crawler.frontier.start.StartOncePerRun" in on.getdict("SPIDER_MIDDLEWARES")
    assert "crawler.frontier.worker.FrontierWorker" in on.getdict("EXTENSIONS")


# -- the run's duplicate filter ----------------------------------------------


def test_duplicates_by_page_identity_across_processes(tmp_path, env):
    first = build_from_crawler(RunDupeFilter, frontier_crawler(tmp_path))
    second = build_from_crawler(RunDupeFilter, frontier_crawler(tmp_path))
    assert not first.request_seen(Request("https://docs.example/guide/"))
    # other spellings of the same page, in another process of the run
    assert second.request_seen(Request("https://docs.example/guide"))
    assert second.request_seen(Request("https://DOCS.example/guide?utm_source=x#intro"))
    assert not second.request_seen(Request("https://docs.example/guide/index.html"))  # a key of its own
    # another run sees nothing of this one
    other = build_from_crawler(RunDupeFilter, frontier_crawler(tmp_path, run_id="r2"))
    assert not other.request_seen(Request("https://docs.example/guide/"))


def test_seen_set_holds_page_keys_and_expires(tmp_path, env):
    from crawler.identity import page_key

    dupefilter = build_from_crawler(RunDupeFilter, frontier_crawler(tmp_path))
    dupefilter.request_seen(Request("https://docs.example/a"))
    keys = RunKeys("r1")
    assert env.smembers(keys.seen) == {bytes.fromhex(page_key("https://docs.example/a"))}
    assert 0 < env.ttl(keys.seen) <= RUN_TTL
    dupefilter.close("finished")
    assert env.exists(keys.seen)  # the run's, not the process's


def test_a_redirect_to_another_spelling_is_not_a_duplicate(tmp_path, env):
    dupefilter = build_from_crawler(RunDupeFilter, frontier_crawler(tmp_path))
    assert not dupefilter.request_seen(Request("https://docs.example/guide"))
    moved = Request("https://docs.example/guide/", meta={"redirect_urls": ["https://docs.example/guide"]})
    assert not dupefilter.request_seen(moved)


def test_redirect_to_a_page_reached_by_another_process_is_no_warning(tmp_path, env, caplog):
    a_crawler, b_crawler = frontier_crawler(tmp_path), frontier_crawler(tmp_path)
    a, b = build_from_crawler(RunDupeFilter, a_crawler), build_from_crawler(RunDupeFilter, b_crawler)
    target = Request("https://docs.example/new")
    assert not a.request_seen(target)
    redirect = Request("https://docs.example/new", meta={"redirect_urls": ["https://docs.example/old"]})
    assert b.request_seen(redirect)
    b.log(redirect, b_crawler.spider)
    assert b.unreached()  # nothing reached yet
    a.response_received(response=None, request=target)  # the page, in process a
    assert b.unreached()  # not told yet: a tells the run when it is idle, before its in-flight count goes
    a.frontier.settle()
    assert b.unreached() == []
    b.spider_idle()
    assert b_crawler.stats.get_value("dupefilter/redirect_unreached") is None


def test_redirect_never_reached_in_the_run_is_a_warning(tmp_path, env, caplog):
    crawler = frontier_crawler(tmp_path)
    dupefilter = build_from_crawler(RunDupeFilter, crawler)
    assert not dupefilter.request_seen(Request("https://docs.example/p/1"))
    dupefilter.log(Request("https://docs.example/p/1", meta={"redirect_times": 1}), crawler.spider)
    dupefilter.spider_idle()  # the run's frontier is empty: checked now
    assert crawler.stats.get_value("dupefilter/redirect_unreached") == 1
    assert "Page never reached" in caplog.text


# -- the scheduler adapter ---------------------------------------------------


def test_one_queue_for_the_run(tmp_path, env):
    one, two = frontier_crawler(tmp_path), frontier_crawler(tmp_path)
    first, second = scheduler_for(one), scheduler_for(two)
    assert first.enqueue_request(Request("https://docs.example/a", callback=one.spider.parse))
    assert not second.enqueue_request(Request("https://docs.example/a"))  # a duplicate in the run
    assert second.has_pending_requests()
    request = second.next_request()
    assert request.url == "https://docs.example/a"
    assert request.callback == two.spider.parse  # the spider's method, in this process
    assert second.next_request() is None and not first.has_pending_requests()
    # taken: in flight for the worker that took it until it is idle
    assert env.hgetall(RunKeys("r1").inflight) == {Frontier.from_crawler(two).worker.encode(): b"1"}
    assert one.stats.get_value("scheduler/enqueued/redis") == 1
    assert two.stats.get_value("frontier/requests_taken") == 1
    first.close("finished")
    assert env.exists(RunKeys("r1").seen)


def test_priority_order(tmp_path, env):
    crawler = frontier_crawler(tmp_path)
    scheduler = scheduler_for(crawler)
    scheduler.enqueue_request(Request("https://docs.example/low", priority=-1))
    scheduler.enqueue_request(Request("https://docs.example/high"))
    assert len(scheduler) == 2
    assert scheduler.next_request().url == "https://docs.example/high"
    assert scheduler.next_request().url == "https://docs.example/low"


def test_unserializable_request_stays_in_the_process(tmp_path, env):
    crawler = frontier_crawler(tmp_path)
    scheduler = scheduler_for(crawler)
    request = Request("https://docs.example/x", meta={"lock": __import__("threading").Lock()})
    assert scheduler.enqueue_request(request)
    assert scheduler.next_request() is request
    assert crawler.stats.get_value("frontier/unserializable") == 1


# -- start requests once per run ---------------------------------------------


async def collect(middleware, start):
    return [item async for item in middleware.process_start(start)]


async def starts():
    yield Request("https://docs.example/")
    yield Request("https://docs.example/sitemap.xml")


def test_start_requests_made_once_per_run(tmp_path, env):
    first = build_from_crawler(StartOncePerRun, frontier_crawler(tmp_path))
    second = build_from_crawler(StartOncePerRun, frontier_crawler(tmp_path))
    assert len(run(collect(first, starts()))) == 2
    assert run(collect(second, starts())) == []
    keys = RunKeys("r1")
    assert env.get(keys.started) == first.frontier.worker.encode()
    # the first counts as busy from its claim: no peer closes before the start requests are queued
    assert env.hget(keys.inflight, first.frontier.worker) == b"1"
    assert second.frontier.drained()  # ... while it holds a lease (the worker extension's, at spider_opened)
    first.frontier.register()
    assert not second.frontier.drained()
    other_run = build_from_crawler(StartOncePerRun, frontier_crawler(tmp_path, run_id="r2"))
    assert len(run(collect(other_run, starts()))) == 2


# -- the worker: lease, closing, outcome -------------------------------------


def test_worker_lease_and_outcome(tmp_path, env):
    crawler = frontier_crawler(tmp_path, FRONTIER_LEASE_SECONDS=5.0)
    worker = new_worker(crawler)
    frontier = worker.frontier
    keys = RunKeys("r1")
    worker.spider_opened()
    try:
        assert 0 < env.pttl(keys.lease(frontier.worker)) <= 5000
        record = json.loads(env.hget(keys.workers, frontier.worker))
        assert record["state"] == "running" and record["pid"] > 0
        state = RunState(env, "r1")
        assert [w.state for w in state.workers()] == ["running"]
        assert not state.complete() and not state.partial()
    finally:
        close(worker)
    assert not env.exists(keys.lease(frontier.worker))
    assert [(w.state, w.reason) for w in RunState(env, "r1").workers()] == [("finished", "finished")]
    assert RunState(env, "r1").complete()


def test_idle_worker_stays_while_requests_are_queued(tmp_path, env):
    one, two = frontier_crawler(tmp_path), frontier_crawler(tmp_path)
    worker = new_worker(two)
    worker.spider_opened()
    try:
        scheduler_for(one).enqueue_request(Request("https://docs.example/a"))
        with pytest.raises(DontCloseSpider):  # the engine takes it at its next look
            worker.spider_idle()
        assert scheduler_for(two).next_request().url == "https://docs.example/a"
        worker.spider_idle()  # the frontier is empty, its one request done: it may close
    finally:
        close(worker)


def test_idle_worker_waits_for_a_live_peer_in_flight(tmp_path, env):
    busy_crawler, idle_crawler = frontier_crawler(tmp_path), frontier_crawler(tmp_path)
    busy, idle = new_worker(busy_crawler), new_worker(idle_crawler)
    busy.spider_opened()
    idle.spider_opened()
    try:
        scheduler_for(busy_crawler).enqueue_request(Request("https://docs.example/a"))
        assert scheduler_for(busy_crawler).next_request() is not None  # in flight for busy
        with pytest.raises(DontCloseSpider):
            idle.spider_idle()
        # busy is killed: its lease expires (deleted here, as expiry does)
        env.delete(RunKeys("r1").lease(busy.frontier.worker))
        idle.spider_idle()  # no DontCloseSpider: the frontier is empty
        states = {w.worker: w.state for w in RunState(env, "r1").workers()}
        assert states[busy.frontier.worker] == "dead"
    finally:
        close(idle)
        busy.renewal.stop()
    state = RunState(env, "r1")
    assert state.partial() and not state.complete() and state.frontier_empty()


def test_failed_outcome_when_the_engine_stops_without_closing(tmp_path, env):
    crawler = frontier_crawler(tmp_path)
    worker = new_worker(crawler)
    worker.spider_opened()
    worker.engine_stopped()
    [record] = RunState(env, "r1").workers()
    assert record.state == "failed" and record.reason == "its pages were not all recorded"
    assert RunState(env, "r1").partial()


def test_redis_gone_at_an_idle_check_closes_the_spider_frontier_lost(tmp_path, env):
    crawler = frontier_crawler(tmp_path)
    gone = redis.Redis.from_url(f"redis://127.0.0.1:{free_port()}/0", socket_connect_timeout=1)
    cache = cache_for(crawler)
    worker = FrontierWorker(crawler, Frontier(gone, "r1", 30.0))
    with pytest.raises(CloseSpider) as closed:
        worker.spider_idle()
    assert closed.value.reason == "frontier_lost"
    assert crawler.stats.get_value("frontier_worker/redis_error") == 1
    assert worker.frontier.lost.startswith("the frontier's Redis failed settling this worker's requests")
    assert cache.run.failed == worker.frontier.lost and worker.frontier.lost in cache.run.incomplete_reasons
    with pytest.raises(CloseSpider):  # asked again: no call to Redis, the same answer
        worker.spider_idle()
    assert len(worker.frontier.errors) == 1


def test_redis_gone_leaves_the_scheduler_nothing_pending(tmp_path, env, caplog):
    """The engine's idle check asks the scheduler several times a second: a failed call
    is said once, and the scheduler holds nothing more (it raised for ever before)."""
    crawler = frontier_crawler(tmp_path)
    scheduler = scheduler_for(crawler)
    scheduler.enqueue_request(Request("https://docs.example/a"))
    assert scheduler.has_pending_requests()
    scheduler.server = scheduler.queue.server = scheduler.frontier.server = redis.Redis.from_url(
        f"redis://127.0.0.1:{free_port()}/0", socket_connect_timeout=1
    )
    with caplog.at_level(logging.ERROR):
        for _ in range(5):
            assert not scheduler.has_pending_requests()
        assert len(scheduler) == 0
        assert not scheduler.enqueue_request(Request("https://docs.example/b"))
        assert scheduler.next_request() is None
    [error] = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert error.startswith("the frontier's Redis failed reading the length of the run's queue (ConnectionError")
    assert scheduler.frontier.lost is not None


# -- the revisit schedule, shared by the run -----------------------------------


def test_revisit_schedule_decided_alike_by_every_process_of_the_run(tmp_path, env):
    """The process that reads the sitemaps publishes their lastmods before its first
    request leaves it; another process reads them when it decides its first page. Both
    decide with the host trust the run read first, and draw the sample with the run's
    id. What each skipped and observed goes to the run's part, for the run's report."""
    from crawler.frontier.runpart import read_run

    one, two = frontier_crawler(tmp_path, REVISIT_ENABLED=True), frontier_crawler(tmp_path, REVISIT_ENABLED=True)
    workers = [new_worker(one), new_worker(two)]
    for worker in workers:
        worker.spider_opened()
    first, second = cache_for(one).run.revisit, cache_for(two).run.revisit
    assert first.share is not None and second.share is not None
    assert first.draw("a run id of its own") == second.draw("another") == "r1"

    async def reads_the_sitemaps_then_starts():
        first.lastmods.update({"a": "2026-11-01", "b": "2026-11-02"})  # (the spider, reading the sitemaps)
        yield Request("https://docs.example/")

    start = build_from_crawler(StartOncePerRun, one)
    assert len(run(collect(start, reads_the_sitemaps_then_starts()))) == 1
    assert second.listed() == {"a": "2026-11-01", "b": "2026-11-02"}

    assert second.share.host_trust("docs.example", lambda: {"streak": 3}) == {"streak": 3}
    # a process asking later gets what the run read first, whatever the store says now
    assert first.share.host_trust("docs.example", lambda: {"streak": 9}) == {"streak": 3}
    assert first.share.host_trust("new.example", lambda: None) is None
    assert second.share.host_trust("new.example", lambda: {"streak": 1}) is None

    first.skipped.add("a")
    first.observe("docs.example", "agree")
    second.observe("docs.example", "agree")
    second.sampled.add("b")
    for worker in workers:
        close(worker)
    part = read_run(env, RunKeys("r1"))
    assert (part.revisit_skipped, part.revisit_sampled) == ({"a"}, {"b"})
    assert part.revisit_tally == {"lastmod|docs.example|agree": 2}
    assert env.ttl(RunKeys("r1").lastmods) > 0 and env.ttl(RunKeys("r1").trust) > 0


def test_no_shared_revisit_without_the_schedule(tmp_path, env):
    worker = new_worker(frontier_crawler(tmp_path))
    worker.spider_opened()
    try:
        assert cache_for(worker.crawler).run.revisit.share is None
    finally:
        close(worker)
