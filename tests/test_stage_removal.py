import pytest
from scrapy.utils.misc import build_from_crawler

from crawler.cache import cache_for
from crawler.items import PageItem
from crawler.pipelines.content_hash import ContentHashPipeline
from crawler.stages import PageViews, StageRun
from crawler.stages.removal import RemovalStage
from tests.helpers import next_run, run


@pytest.fixture
def setup(make_crawler):
    crawler = make_crawler()
    return crawler, build_from_crawler(RemovalStage, crawler), build_from_crawler(ContentHashPipeline, crawler)


def add(pipeline, url):
    return run(pipeline.process_item(PageItem(url=url, canonical_url=url, title="T", content="# T\n\nText.")))


def remove(crawler, stage, *, complete):
    """Plan and run the stage, its changes written, as the runner does."""
    cache = cache_for(crawler)
    pages = PageViews(cache.store)
    run(stage.run(stage.plan(StageRun(cache, pages, complete=complete))))
    pages.flush()
    return stage.removed


def test_gone_pages_always_unreached_ones_after_a_complete_crawl(setup):
    crawler, stage, pipeline = setup
    kept, gone, unreached = (add(pipeline, f"https://a.com/{n}") for n in ("kept", "gone", "unreached"))
    other_site = add(pipeline, "https://b.com/x")
    next_run(cache_for(crawler))
    cache = cache_for(crawler)
    add(pipeline, "https://a.com/kept")
    cache.run.gone.add(gone.url_hash)
    assert remove(crawler, stage, complete=False) == 1  # only the 404
    assert remove(crawler, stage, complete=True) == 2  # now the unreached one
    statuses = {
        k: cache.store.get_page(v.url_hash)["status"]
        for k, v in {"kept": kept, "gone": gone, "unreached": unreached, "other": other_site}.items()
    }
    assert statuses == {"kept": "unchanged", "gone": "removed", "unreached": "removed", "other": "new"}
    assert crawler.stats.get_value("removal/pages_removed") == 2
    assert cache.store.get_page(gone.url_hash)["removed_at"]


def test_gone_spelling_of_a_seen_page_is_not_removed(setup):
    crawler, stage, pipeline = setup
    item = add(pipeline, "https://a.com/guide/")
    cache_for(crawler).run.gone.add(item.url_hash)  # /guide/index.html answered 404
    assert remove(crawler, stage, complete=True) == 0
