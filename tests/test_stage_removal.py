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


def remove(crawler, stage, *, complete, in_scope=None):
    """Plan and run the stage, its changes written, as the runner does."""
    cache = cache_for(crawler)
    pages = PageViews(cache.store)
    run(stage.run(stage.plan(StageRun(cache, pages, complete=complete, in_scope=in_scope))))
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


def test_most_of_a_site_not_reached_at_once_is_held_but_its_404s_are_removed(make_crawler):
    """A start page that answers a maintenance notice reaches nothing, and the run is
    complete: more than REMOVAL_MAX_SHARE of a site's pages is not removed for that."""
    crawler = make_crawler()
    stage = build_from_crawler(RemovalStage, crawler)
    pipeline = build_from_crawler(ContentHashPipeline, crawler)
    pages = [add(pipeline, f"https://a.com/{n}") for n in range(24)]
    small = [add(pipeline, f"https://b.com/{n}") for n in range(4)]
    cache = cache_for(crawler)
    next_run(cache)
    add(pipeline, "https://a.com/0")  # the start page alone reached
    add(pipeline, "https://b.com/0")  # a small site losing 3 of its 4 pages: removed
    cache.run.gone.add(pages[1].url_hash)  # a 404 is evidence, held or not
    assert remove(crawler, stage, complete=True) == 1 + len(small) - 1
    assert cache.run.incomplete_reasons == ["removal held: 22 of 24 pages of a.com not reached"]
    assert crawler.stats.get_value("removal/held_pages") == 22
    statuses = {p.url_hash: cache.store.get_page(p.url_hash)["status"] for p in pages}
    assert sorted(statuses.values()).count("removed") == 1  # the 404 alone


def test_removal_max_share_1_lets_a_run_remove_them_and_a_wrong_share_is_refused(make_crawler):
    crawler = make_crawler(settings={"REMOVAL_MAX_SHARE": 1.0})
    stage = build_from_crawler(RemovalStage, crawler)
    pipeline = build_from_crawler(ContentHashPipeline, crawler)
    for n in range(12):
        add(pipeline, f"https://a.com/{n}")
    cache = cache_for(crawler)
    next_run(cache)
    add(pipeline, "https://a.com/0")
    assert remove(crawler, stage, complete=True) == 11 and cache.run.incomplete_reasons == []
    with pytest.raises(ValueError, match="REMOVAL_MAX_SHARE must be a share between 0 and 1"):
        RemovalStage(crawler.stats, 1.5)


def test_the_share_held_is_of_the_pages_in_the_crawl_s_scope(make_crawler):
    """Pages the crawl leaves out of its scope (another version's) are not reached and
    not removed either: they do not make a maintenance page's run look small."""
    crawler = make_crawler()
    stage = build_from_crawler(RemovalStage, crawler)
    pipeline = build_from_crawler(ContentHashPipeline, crawler)
    for n in range(20):
        add(pipeline, f"https://a.com/v1/{n}")
    for n in range(30):
        add(pipeline, f"https://a.com/v2/{n}")
    cache = cache_for(crawler)
    next_run(cache)
    add(pipeline, "https://a.com/v1/0")
    assert remove(crawler, stage, complete=True, in_scope=lambda url: "/v1/" in url) == 0
    assert cache.run.incomplete_reasons == ["removal held: 19 of 20 pages of a.com not reached"]
