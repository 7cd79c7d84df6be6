"""Each component of a crawl holds the store as the narrow port of what it calls
(crawler.cache.ports): a part of the whole store, met by every store class."""

import inspect

import pytest

from crawler.cache import ports, store_methods
from crawler.cache.postgres import PostgresDocStore
from crawler.cache.sqlite import SqliteDocStore

#: consumer -> its port, and the store methods it may call (the closing note's figures)
CONSUMER_PORTS = {
    "RevalidationMiddleware": (
        ports.RevalidationStore,
        {"get_page", "get_response", "put_response", "get_domain", "update_domain"},
    ),
    "RenderMiddleware": (ports.RenderStore, {"get_page", "get_rendered", "put_rendered"}),
    "DocsSpider (SpiderPort)": (ports.SpiderStore, {"get_parsed", "put_parsed", "query_pages", "run_reports"}),
    "ContentHashPipeline": (
        ports.LedgerStore,
        {"get_page", "put_page", "touch_page", "delete_page", "get_content", "put_content", "has_run_report"},
    ),
    "PageViews (the stages)": (
        ports.PageViewStore,
        {
            "iter_page_heads",
            "iter_live_keys",
            "iter_page_keys",
            "get_page",
            "get_pages",
            "put_page",
            "get_content",
            "get_contents",
            "get_input_hashes",
            "get_record_fields",
            "put_content",
        },
    ),
    "ExtractionStage": (
        ports.ExtractionStore,
        {
            "read_extraction",
            "write_extraction",
            "find_extraction",
            "link_extraction",
            "claim_extraction",
            "release_extraction",
        },
    ),
    "BoilerplateStage": (
        ports.BoilerplateStore,
        {
            "get_domain",
            "update_domain",
            "iter_signature_marks",
            "iter_signatures",
            "get_signatures",
            "put_signatures",
            "delete_signatures",
            "get_block_stats",
            "put_block_stats",
            "get_record_fields",
            "commit",
        },
    ),
    "scrapy boilerplate compare": (ports.DomainStore, {"get_domain", "update_domain"}),
    "ReportStage": (
        ports.ReportStore,
        {"get_page_heads", "get_pages", "removed_in_run", "put_run_changes", "clear_run_changes", "write_run_report"},
    ),
    "ChangeFeeds, ChangesWebhook, MarkdownExport (a run's changes)": (ports.ChangeReader, {"iter_run_changes"}),
    "FrontierWorker": (ports.PageQueryStore, {"query_pages"}),
    "MarkdownFolder (the markdown export)": (ports.MarkdownStore, {"iter_pages", "get_page", "get_contents"}),
}


def methods(port: type) -> set[str]:
    return {
        name
        for name, value in inspect.getmembers(port)
        if not name.startswith("_") and callable(value) and name in set(store_methods())
    }


@pytest.mark.parametrize("consumer", sorted(CONSUMER_PORTS))
def test_each_consumer_s_port_is_the_few_methods_it_calls_of_the_whole_store(consumer):
    port, expected = CONSUMER_PORTS[consumer]
    assert methods(port) == expected
    # nothing a store does not have: a part of DocStore
    own = {name for name in vars(port) if not name.startswith("_") and callable(vars(port)[name])}
    assert own <= set(store_methods())
    assert len(expected) < len(store_methods())


@pytest.mark.parametrize("store_cls", [SqliteDocStore, PostgresDocStore])
@pytest.mark.parametrize("consumer", sorted(CONSUMER_PORTS))
def test_every_store_class_meets_every_consumer_s_port(store_cls, consumer):
    port, expected = CONSUMER_PORTS[consumer]
    assert all(callable(getattr(store_cls, name, None)) for name in expected)
    if port is ports.ExtractionStore:
        assert isinstance(store_cls.concurrent_writers, bool)  # declared, never probed
