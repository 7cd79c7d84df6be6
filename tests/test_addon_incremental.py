import pytest
from scrapy import Request
from scrapy.settings import Settings
from scrapy.utils.misc import build_from_crawler

from crawler.addons import IncrementalAddon
from crawler.cache import cache_for
from crawler.config import known_settings, typed, unknown_settings
from crawler.defaults import REMOVED, SETTINGS
from crawler.extensions.closing import ClosingStages
from crawler.middlewares.render import RenderMiddleware
from crawler.pipelines.content_hash import ContentHashPipeline
from tests.crawl import assert_ok, run_crawl

ADDON = {"crawler.addons.IncrementalAddon": 100}
MIDDLEWARE = "crawler.middlewares.revalidation.RevalidationMiddleware"
ROBOTS = "crawler.middlewares.robots.RobotsTxtOnce"
PIPELINE = "crawler.pipelines.content_hash.ContentHashPipeline"
CLOSING = "crawler.extensions.closing.ClosingStages"
URL = "https://docs.example.com/guide/"


@pytest.fixture
def with_addon(make_crawler):
    """``with_addon(settings)``: a crawler whose settings the add-on completed."""
    return lambda settings=None, **kwargs: make_crawler({"ADDONS": ADDON, **(settings or {})}, **kwargs)


def test_the_addon_installs_the_components_and_writes_no_setting_of_the_project(with_addon):
    settings = with_addon().settings
    assert {name for name in SETTINGS if name in settings and name != "EXTRACTED_DOCS_DIR"} == set()
    assert settings.getdict("DOWNLOADER_MIDDLEWARES")[MIDDLEWARE] == 840
    assert settings.getdict("DOWNLOADER_MIDDLEWARES")[ROBOTS] == 101
    assert settings.getdict("ITEM_PIPELINES")[PIPELINE] == 300
    assert settings.getdict("EXTENSIONS")[CLOSING] == 500
    assert settings["DUPEFILTER_CLASS"] == "crawler.dupefilters.RedirectAwareDupeFilter"
    assert settings.getint("CONCURRENT_ITEMS") == 8


def test_a_read_default_is_a_copy_of_the_table(with_addon):
    settings = typed(with_addon().settings)
    settings.getlist("CONTENT_HASH_FIELDS").append("x")
    settings.get("CONTENT_HASH_FIELDS").append("tags")
    assert SETTINGS["CONTENT_HASH_FIELDS"] == ["title", "content"]


def test_the_users_values_and_component_priorities_win(with_addon):
    crawler = with_addon(
        {
            "EXTRACTOR_CONCURRENCY": 9,
            "DOWNLOADER_MIDDLEWARES": {MIDDLEWARE: 700},
            "ITEM_PIPELINES": {PIPELINE: None},  # turned off by the user: stays off
            "DUPEFILTER_CLASS": "scrapy.dupefilters.BaseDupeFilter",
            "CONCURRENT_ITEMS": 50,
        }
    )
    settings = crawler.settings
    assert (typed(settings).getint("EXTRACTOR_CONCURRENCY"), settings.getpriority("EXTRACTOR_CONCURRENCY")) == (9, 20)
    assert settings.getdict("DOWNLOADER_MIDDLEWARES") == {MIDDLEWARE: 700, ROBOTS: 101}
    assert settings.getdict("ITEM_PIPELINES") == {PIPELINE: None}
    assert settings["DUPEFILTER_CLASS"] == "scrapy.dupefilters.BaseDupeFilter"
    assert settings.getint("CONCURRENT_ITEMS") == 50
    cmdline = Settings()
    cmdline.set("BOILERPLATE_THRESHOLD_PCT", 0.5, priority="cmdline")
    IncrementalAddon().update_settings(cmdline)
    assert cmdline.getfloat("BOILERPLATE_THRESHOLD_PCT") == 0.5


def test_commands_read_the_tables_defaults_without_the_addon():
    settings = Settings()  # a command's settings: no crawl, no add-on
    assert typed(settings).getint("EXTRACTOR_CONCURRENCY") == SETTINGS["EXTRACTOR_CONCURRENCY"]
    assert typed(settings).get("EXTRACTED_DOCS_DIR") == "extracted-docs"
    assert typed(settings).getlist("PROCESSING_STAGES") == SETTINGS["PROCESSING_STAGES"]
    assert typed(settings).getint("OTHER_PLUGIN_LIMIT", 7) == 7  # not this project's: the default given
    settings.set("EXTRACTOR_CONCURRENCY", "3", priority="cmdline")
    assert typed(settings).getint("EXTRACTOR_CONCURRENCY") == 3
    assert set(SETTINGS) == known_settings()


def test_the_defaults_of_library_parameters_are_the_librarys_own():
    from crawler.incremental.revisit import RevisitPolicy
    from crawler.lib.boilerplate import Params
    from crawler.lib.chunking import DEFAULT_TARGET
    from crawler.lib.markdown import DEFAULT_LINKS

    policy, params = RevisitPolicy(), Params()
    assert (
        SETTINGS["REVISIT_MIN_INTERVAL"],
        SETTINGS["REVISIT_MAX_STALENESS"],
        SETTINGS["REVISIT_SAMPLE"],
        SETTINGS["REVISIT_TRUST_EVIDENCE"],
    ) == (policy.min_interval, policy.max_staleness, policy.sample, policy.trust_evidence)
    assert (SETTINGS["BOILERPLATE_THRESHOLD_PCT"], SETTINGS["BOILERPLATE_MIN_PAGES"]) == (
        params.threshold_pct,
        params.min_pages,
    )
    assert (SETTINGS["VECTOR_SYNC_CHUNK_SIZE"], SETTINGS["MARKDOWN_LINKS"]) == (DEFAULT_TARGET, DEFAULT_LINKS)


def test_a_misspelling_is_answered_with_a_current_name():
    assert unknown_settings(["EXTRACTOR_TIMEOUTS", "DOWNLOAD_DELAY"]) == [("EXTRACTOR_TIMEOUTS", "EXTRACTOR_TIMEOUT")]


def test_a_removed_setting_is_refused_with_what_replaces_it(with_addon):
    assert not set(REMOVED) & set(SETTINGS)
    with pytest.raises(ValueError, match=r"^Setting EXTRACTOR_FORCE was removed: .* -a redo=extraction"):
        build_from_crawler(ClosingStages, with_addon({"EXTRACTOR_FORCE": True}))
    assert unknown_settings(["LLM_API_KEY_ENV"]) == []  # not a misspelling: removed


def test_the_new_meta_keys_each_do_one_thing(with_addon):
    crawler = with_addon({"PLAYWRIGHT_ENABLED": True})
    pipeline = build_from_crawler(ContentHashPipeline, crawler)
    render = build_from_crawler(RenderMiddleware, crawler)
    url_hash = pipeline.identity.url_hash(URL)
    pipeline.response_received(Request(URL, meta={"dont_revalidate": True, "force_render": True}))
    assert cache_for(crawler).run.forced == set()
    assert render._forced(Request(URL, meta={"force_render": True}), url_hash)
    assert not render._forced(Request(URL, meta={"force_extraction": True}), url_hash)
    pipeline.response_received(Request(URL, meta={"force_extraction": True}))
    assert cache_for(crawler).run.forced == {url_hash}


@pytest.mark.e2e
def test_revalidation_off_downloads_every_page_but_extracts_none_again(site, tmp_path):
    cache = tmp_path / "cache"
    first = run_crawl(site.url + "/", cache)
    assert_ok(first)
    assert len(first.calls) == 6
    site.reset_log()
    second = run_crawl(site.url + "/", cache, settings={"REVALIDATION_ENABLED": "False"})
    assert_ok(second)
    assert site.count_status(304) == 0 and site.requests_for("/guide/") == [200]  # every page in full
    assert second.calls == []  # unchanged inputs: the extraction cache answers
    assert second.report["pages_unchanged"] == 6
