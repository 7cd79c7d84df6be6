from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from tests.site import Site, docs_site

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


@pytest.fixture
def make_crawler(tmp_path):
    """``make_crawler(settings)``: a Scrapy crawler (``get_crawler``) whose cache is in
    ``tmp_path / "cache"``; the caches it opened are closed after the test."""
    from scrapy.utils.test import get_crawler

    from crawler.cache import peek_cache

    crawlers = []

    def factory(settings=None, spidercls=None):
        crawler = get_crawler(spidercls, {"EXTRACTED_DOCS_DIR": str(tmp_path / "cache"), **(settings or {})})
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

    def factory(cls, settings=None):
        crawler = make_crawler(settings)
        return crawler, build_from_crawler(cls, crawler)

    return factory


@pytest.fixture(autouse=True)
def _forget_secrets() -> Iterator[None]:
    """Keys a test's components registered (crawler.lib.secrets) are masked in that test only."""
    yield
    from crawler.lib import secrets

    secrets.clear()
