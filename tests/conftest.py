from __future__ import annotations

import os
import platform
import signal
import subprocess
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import HealthCheck, settings

from tests.crawl import copy_of_crawl, crawled_once
from tests.site import Site, docs_site

# real servers started by session fixtures (the shared store's and the shared frontier's tests)
pytest_plugins = ["tests.pg_server", "tests.redis_server"]

# property tests: the same examples every run, no deadline (a loaded machine is slower,
# never wrong), no example database written into the checkout
settings.register_profile(
    "project", deadline=None, derandomize=True, database=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("project")

# Tests that run `make` expect what a user typing it sees; under `make test` the outer make's
# variables would make every inner make print "Entering directory" (GNU make's -w).
for _variable in ("MAKELEVEL", "MAKEFLAGS", "MFLAGS"):
    os.environ.pop(_variable, None)


#: what a test needs beyond Python, by the fixtures it uses (``make check`` leaves them out)
SERVER_MARKERS = {
    "postgres": {"postgres_server", "postgres_dsn"},
    "redis": {"redis_server", "redis_url", "own_redis"},
}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The tiers: a test file named ``test_e2e_*`` (real crawls against local servers)
    or ``test_model_*`` is ``e2e``; a test using a database server's fixture is
    ``postgres`` or ``redis``; ``browser`` and the other ``e2e`` tests are marked where
    they are written."""
    for item in items:
        name = item.path.name
        if name.startswith(("test_e2e_", "test_model_")):
            item.add_marker(pytest.mark.e2e)
        fixtures = set(getattr(item, "fixturenames", ()))
        callspec = getattr(item, "callspec", None)
        params = list(callspec.params.values()) if callspec is not None else []
        for marker, names in SERVER_MARKERS.items():
            # (a backend parametrized by name asks for the server's fixture when it runs)
            if fixtures & names or marker in params:
                item.add_marker(getattr(pytest.mark, marker))


#: the markers of the tiers ``make check`` leaves out
SLOW_TIERS = ("e2e", *SERVER_MARKERS, "browser")


#: the standard library's processor probe starts ``uname -p`` once per process and keeps
#: its answer; libraries ask for it (openai's request headers): asked here, before any
#: test, whichever test first makes a client is not taken for starting a process
platform.processor()


@pytest.fixture(autouse=True)
def _fast_tier_starts_no_process(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """A test of the fast tier that starts a process fails, saying to mark it ``e2e``:
    the tiers are what the tests do, not what their files are called."""
    if any(request.node.get_closest_marker(name) for name in SLOW_TIERS):
        return

    def refused(self: subprocess.Popen[Any], args: Any, *more: Any, **options: Any) -> None:
        pytest.fail(f"{request.node.nodeid} starts a process ({args!r}): mark it @pytest.mark.e2e")

    monkeypatch.setattr(subprocess.Popen, "__init__", refused)


if TYPE_CHECKING:
    from collections.abc import Iterator


@pytest.fixture
def site() -> Iterator[Site]:
    """The standard documentation site, with ETags and per-request noise."""
    served = docs_site().start()
    yield served
    served.stop()


@pytest.fixture
def make_site() -> Iterator:
    """Factory for sites with other validators: ``make_site("last-modified")``."""
    started: list[Site] = []

    def factory(validators: str = "etag", noise: bool = True) -> Site:
        served = docs_site(validators, noise).start()
        started.append(served)
        return served

    yield factory
    for served in started:
        served.stop()


#: the cache's owner, as the add-on installs it
OWNER = "crawler.extensions.cache.CacheOwner"


@pytest.fixture
def make_crawler(tmp_path):
    """``make_crawler(settings)``: a Scrapy crawler (``get_crawler``) whose cache is in
    ``tmp_path / "cache"``, opened by its owner as a crawl's is (the extension
    CacheOwner, unless ``settings`` names its own ``EXTENSIONS``; ``cache=False``: none,
    for a crawler that only checks settings); the caches it opened are closed after the
    test."""
    from scrapy.utils.test import get_crawler

    from crawler.cache import peek_cache

    crawlers = []

    def factory(settings=None, spidercls=None, *, cache=True, spider_args=None):
        settings = {"EXTENSIONS": {OWNER: 400} if cache else {}, **(settings or {})}
        if spider_args:  # a crawl's -a NAME=VALUE, as components see it before the spider is made
            from scrapy.utils.test import DefaultSpider

            spidercls = type("ArgumentsSpider", (spidercls or DefaultSpider,), dict(spider_args))
        crawler = get_crawler(spidercls, {"EXTRACTED_DOCS_DIR": str(tmp_path / "cache"), **settings})
        crawlers.append(crawler)
        return crawler

    yield factory
    for crawler in crawlers:
        cache = peek_cache(crawler)
        if cache is not None:
            cache.close()


@pytest.fixture
def make_component(make_crawler):
    """``make_component(Cls, settings)``: ``(crawler, component)``, the component built
    as Scrapy builds it (``build_from_crawler``)."""
    from scrapy.utils.misc import build_from_crawler

    def factory(cls, settings=None, *, cache=True, spider_args=None):
        crawler = make_crawler(settings, cache=cache, spider_args=spider_args)
        return crawler, build_from_crawler(cls, crawler)

    return factory


@pytest.fixture
def reap():
    """``reap(proc)``: the background process is killed (if still running) and waited
    for when the test ends, whatever the test's outcome: no test leaks a process."""
    procs = []

    def register(proc):
        procs.append(proc)
        return proc

    yield register
    for proc in procs:
        if proc.poll() is None:
            try:
                if os.getpgid(proc.pid) == proc.pid:  # its own process group: its children too
                    os.killpg(proc.pid, signal.SIGKILL)
                else:
                    proc.kill()
            except ProcessLookupError:
                pass
        proc.communicate()


@pytest.fixture(autouse=True)
def _forget_secrets() -> Iterator[None]:
    """Keys a test's components registered (crawler.support.secrets) are masked in that test only."""
    yield
    from crawler.support import secrets

    secrets.clear()


@pytest.fixture(scope="module")
def crawled_site(tmp_path_factory):
    """The standard site crawled once for the module that asks (each test has a copy:
    ``crawled``; a module needing other settings makes its own with ``crawled_once``)."""
    once = crawled_once(tmp_path_factory)
    yield once
    once[0].stop()


@pytest.fixture
def crawled(crawled_site, tmp_path):
    """A fresh standard site and the cache its first crawl left (a copy of the module's)."""
    return copy_of_crawl(crawled_site, tmp_path)
