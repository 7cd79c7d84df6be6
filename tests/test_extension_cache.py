import gc

import pytest
from scrapy import signals
from scrapy.utils.misc import build_from_crawler
from scrapy.utils.test import get_crawler

from crawler.cache import CacheLockedError, CacheNotOpenError, cache_for, peek_cache
from crawler.extensions.cache import CacheOwner

OWNER = "crawler.extensions.cache.CacheOwner"


def test_no_component_opens_the_cache_but_its_owner(make_crawler):
    crawler = make_crawler(cache=False)
    assert peek_cache(crawler) is None
    with pytest.raises(CacheNotOpenError, match="CacheOwner opens it"):
        cache_for(crawler)
    owner = build_from_crawler(CacheOwner, crawler)
    assert cache_for(crawler) is owner.cache is peek_cache(crawler)
    with pytest.raises(RuntimeError, match="one CacheOwner per crawl"):
        build_from_crawler(CacheOwner, crawler)
    assert cache_for(crawler) is owner.cache and not owner.cache.closed  # the first owner's, still open


def test_the_owner_commits_when_the_spider_closes_and_closes_when_the_engine_stops(make_crawler):
    crawler = make_crawler()
    cache = cache_for(crawler)
    cache.store.put_domain("a.com", {"n": 1})
    crawler.signals.send_catch_log(signal=signals.spider_closed, spider=None, reason="finished")
    assert not cache.closed
    crawler.signals.send_catch_log(signal=signals.engine_stopped)
    assert cache.closed
    again = make_crawler()  # the lock released: the next crawl opens it
    assert cache_for(again).store.get_domain("a.com") == {"n": 1}


def test_a_cache_another_crawl_holds_is_refused_when_the_crawl_starts(make_crawler):
    make_crawler()
    with pytest.raises(CacheLockedError, match="in use by another crawl"):
        make_crawler()


def test_a_crawl_that_fails_to_start_after_the_owner_releases_the_cache(tmp_path):
    """Review: a component built after the owner refused its settings, no engine ran, and
    the cache stayed locked: a second crawl in the same process was told another crawl
    held it."""
    directory = str(tmp_path / "cache")
    closing = "crawler.extensions.closing.ClosingStages"
    refused = {"EXTRACTOR_INTERRUPT_WAIT": -1, "EXTENSIONS": {OWNER: 400, closing: 500}}
    with pytest.raises(ValueError, match="EXTRACTOR_INTERRUPT_WAIT"):
        get_crawler(None, {"EXTRACTED_DOCS_DIR": directory, **refused})
    gc.collect()  # the failed start dropped the owner, and closed its cache
    crawler = get_crawler(None, {"EXTRACTED_DOCS_DIR": directory, "EXTENSIONS": {OWNER: 400}})
    cache = cache_for(crawler)
    assert not cache.closed
    cache.close()
