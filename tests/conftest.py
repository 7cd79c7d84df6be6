from __future__ import annotations

import os
import signal
from typing import TYPE_CHECKING

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

    def factory(settings=None, spidercls=None, *, cache=True):
        settings = {"EXTENSIONS": {OWNER: 400} if cache else {}, **(settings or {})}
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

    def factory(cls, settings=None, *, cache=True):
        crawler = make_crawler(settings, cache=cache)
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
