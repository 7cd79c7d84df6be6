import subprocess

import pytest
from scrapy import Request
from scrapy.exceptions import NotConfigured
from scrapy.settings import Settings, get_settings_priority
from scrapy.utils.misc import build_from_crawler

from crawler.addons import IncrementalAddon
from crawler.addons.incremental import RENAMED, SETTINGS, apply_renamed_settings
from crawler.cache import cache_for
from crawler.config import DeprecatedMetaKeyWarning, DeprecatedSettingWarning, known_settings, typed, unknown_settings
from crawler.middlewares.dedup import DedupMiddleware
from crawler.middlewares.render import RenderMiddleware
from crawler.middlewares.revalidation import RevalidationMiddleware
from crawler.pipelines.content_hash import ContentHashPipeline
from crawler.stages.extraction import ExtractionStage
from tests.crawl import ROOT, assert_ok, crawl_env, run_crawl, scrapy_command
from tests.helpers import run

ADDON = {"crawler.addons.IncrementalAddon": 100}
MIDDLEWARE = "crawler.middlewares.revalidation.RevalidationMiddleware"
PIPELINE = "crawler.pipelines.content_hash.ContentHashPipeline"
CLOSING = "crawler.extensions.closing.ClosingStages"
URL = "https://docs.example.com/guide/"


@pytest.fixture
def with_addon(make_crawler):
    """``with_addon(settings)``: a crawler whose settings the add-on completed."""
    return lambda settings=None, **kwargs: make_crawler({"ADDONS": ADDON, **(settings or {})}, **kwargs)


def test_every_default_is_set_at_the_addon_priority(with_addon):
    settings = with_addon().settings
    addon = get_settings_priority("addon")
    assert {name: settings.getpriority(name) for name in SETTINGS if name != "EXTRACTED_DOCS_DIR"} == {
        name: addon for name in SETTINGS if name != "EXTRACTED_DOCS_DIR"
    }
    assert {name: settings[name] for name in SETTINGS if name != "EXTRACTED_DOCS_DIR"} == {
        name: value for name, value in SETTINGS.items() if name != "EXTRACTED_DOCS_DIR"
    }
    assert settings.getdict("DOWNLOADER_MIDDLEWARES")[MIDDLEWARE] == 840
    assert settings.getdict("ITEM_PIPELINES")[PIPELINE] == 300
    assert settings.getdict("EXTENSIONS")[CLOSING] == 500
    assert settings["DUPEFILTER_CLASS"] == "crawler.dupefilters.RedirectAwareDupeFilter"


def test_a_components_list_is_a_copy_of_the_table(with_addon):
    settings = with_addon().settings
    settings.getlist("CONTENT_HASH_FIELDS").append("x")  # getlist copies; the value itself:
    settings["CONTENT_HASH_FIELDS"].append("tags")
    assert SETTINGS["CONTENT_HASH_FIELDS"] == ["title", "content"]


def test_the_users_values_and_component_priorities_win(with_addon):
    crawler = with_addon(
        {
            "EXTRACTOR_CONCURRENCY": 9,
            "DOWNLOADER_MIDDLEWARES": {MIDDLEWARE: 700},
            "ITEM_PIPELINES": {PIPELINE: None},  # turned off by the user: stays off
            "DUPEFILTER_CLASS": "scrapy.dupefilters.BaseDupeFilter",
        }
    )
    settings = crawler.settings
    assert (settings["EXTRACTOR_CONCURRENCY"], settings.getpriority("EXTRACTOR_CONCURRENCY")) == (9, 20)
    assert settings.getdict("DOWNLOADER_MIDDLEWARES") == {MIDDLEWARE: 700}
    assert settings.getdict("ITEM_PIPELINES") == {PIPELINE: None}
    assert settings["DUPEFILTER_CLASS"] == "scrapy.dupefilters.BaseDupeFilter"
    cmdline = Settings()
    cmdline.set("BOILERPLATE_THRESHOLD_PCT", 0.5, priority="cmdline")
    IncrementalAddon().update_settings(cmdline)
    assert cmdline.getfloat("BOILERPLATE_THRESHOLD_PCT") == 0.5


def test_the_old_middleware_path_keeps_working_and_is_not_installed_twice(with_addon):
    crawler = with_addon({"DOWNLOADER_MIDDLEWARES": {"crawler.middlewares.dedup.DedupMiddleware": 840}})
    assert crawler.settings.getdict("DOWNLOADER_MIDDLEWARES") == {"crawler.middlewares.dedup.DedupMiddleware": 840}
    with pytest.warns(DeprecatedSettingWarning, match="RevalidationMiddleware"):
        middleware = build_from_crawler(DedupMiddleware, crawler)
    assert isinstance(middleware, RevalidationMiddleware)


def test_commands_read_the_tables_defaults_without_the_addon():
    settings = Settings()  # a command's settings: no crawl, no add-on
    assert typed(settings).getint("EXTRACTOR_CONCURRENCY") == SETTINGS["EXTRACTOR_CONCURRENCY"]
    assert typed(settings).get("EXTRACTED_DOCS_DIR") == "extracted-docs"
    assert typed(settings).getlist("PROCESSING_STAGES") == SETTINGS["PROCESSING_STAGES"]
    assert typed(settings).getint("OTHER_PLUGIN_LIMIT", 7) == 7  # not this project's: the default given
    settings.set("EXTRACTOR_CONCURRENCY", "3", priority="cmdline")
    assert typed(settings).getint("EXTRACTOR_CONCURRENCY") == 3
    assert set(SETTINGS) | set(RENAMED) == known_settings()


@pytest.mark.parametrize("old", sorted(RENAMED))
def test_an_old_setting_name_warns_naming_the_new_one_and_takes_effect(old):
    settings = Settings()
    settings.set(old, 7, priority="project")
    with pytest.warns(DeprecatedSettingWarning, match=" and ".join(RENAMED[old])):
        IncrementalAddon().update_settings(settings)
    assert {new: settings[new] for new in RENAMED[old]} == dict.fromkeys(RENAMED[old], 7)
    assert {settings.getpriority(new) for new in RENAMED[old]} == {get_settings_priority("project")}


def test_a_new_name_set_as_high_wins_over_the_old_one():
    settings = Settings()
    settings.set("DEDUP_FORCE", True, priority="cmdline")
    settings.set("EXTRACTOR_FORCE", False, priority="cmdline")
    with pytest.warns(DeprecatedSettingWarning):
        apply_renamed_settings(settings)
    assert (settings.getbool("EXTRACTOR_FORCE"), settings.getbool("RENDER_FORCE")) == (False, True)


def test_components_enabled_without_the_addon_read_old_names_with_the_warning(make_crawler):
    # the old way: the components listed by hand (even the old middleware path), no add-on
    crawler = make_crawler({"DEDUP_FORCE": True, "DEDUP_MAX_STORED_BYTES": 10, "DEDUP_MAX_AGE": 2})
    with pytest.warns(DeprecatedSettingWarning) as warned:
        stage = build_from_crawler(ExtractionStage, crawler)
    assert (stage.force, stage.max_age_days) == (True, 2)
    assert {str(w.message) for w in warned} == {
        "DEDUP_FORCE is deprecated: use EXTRACTOR_FORCE and RENDER_FORCE",
        "DEDUP_MAX_AGE is deprecated: use EXTRACTOR_MAX_AGE",
    }
    with pytest.warns(DeprecatedSettingWarning, match="DEDUP_MAX_STORED_BYTES"):
        assert build_from_crawler(RevalidationMiddleware, crawler).max_stored_bytes == 10
    # a new name set as high as the old one wins, silently
    settings = Settings()
    settings.set("DEDUP_MAX_AGE", 2, priority="project")
    settings.set("EXTRACTOR_MAX_AGE", 5, priority="cmdline")
    assert typed(settings).getfloat("EXTRACTOR_MAX_AGE") == 5


def test_a_misspelling_is_answered_with_a_current_name():
    assert unknown_settings(["DEDUP_FORCEE", "EXTRACTOR_FORCEE"]) == [
        ("DEDUP_FORCEE", None),
        ("EXTRACTOR_FORCEE", "EXTRACTOR_FORCE"),
    ]


def test_dedup_enabled_off_says_it_no_longer_reextracts_and_turns_off_only_revalidation(with_addon):
    with pytest.warns(DeprecatedSettingWarning, match="no longer re-extracts every page.*EXTRACTOR_FORCE"):
        crawler = with_addon({"DEDUP_ENABLED": False})
    with pytest.raises(NotConfigured, match="REVALIDATION_ENABLED"):
        build_from_crawler(RevalidationMiddleware, crawler)
    stage = build_from_crawler(ExtractionStage, crawler)
    assert stage.force is False  # the extraction cache keeps working


def test_dedup_force_forces_extraction_and_rendering(with_addon):
    with pytest.warns(DeprecatedSettingWarning, match="EXTRACTOR_FORCE and RENDER_FORCE"):
        crawler = with_addon({"DEDUP_FORCE": True, "PLAYWRIGHT_ENABLED": True})
    assert build_from_crawler(ExtractionStage, crawler).force is True
    assert build_from_crawler(ContentHashPipeline, crawler).converter_upgrade == "apply"
    assert build_from_crawler(RenderMiddleware, crawler).force is True


def test_the_other_old_names_reach_their_components(with_addon):
    with pytest.warns(DeprecatedSettingWarning) as warned:
        crawler = with_addon({"DEDUP_RECHECK_AFTER": 60, "DEDUP_MAX_STORED_BYTES": 100, "DEDUP_MAX_AGE": 3})
    assert len(warned) == 3
    middleware = build_from_crawler(RevalidationMiddleware, crawler)
    assert (middleware.recheck_after, middleware.max_stored_bytes) == (60, 100)
    assert build_from_crawler(ExtractionStage, crawler).max_age_days == 3


def test_the_old_meta_key_means_all_three_with_a_warning(with_addon):
    crawler = with_addon({"PLAYWRIGHT_ENABLED": True})
    middleware = build_from_crawler(RevalidationMiddleware, crawler)
    pipeline = build_from_crawler(ContentHashPipeline, crawler)
    render = build_from_crawler(RenderMiddleware, crawler)
    request = Request(URL, meta={"dont_dedup": True})
    with pytest.warns(DeprecatedMetaKeyWarning, match="dont_revalidate.*force_extraction.*force_render"):
        assert run(middleware.process_request(request)) is None
        pipeline.response_received(request)
        assert render._forced(request, pipeline.identity.url_hash(URL))
    assert crawler.stats.get_value("revalidation/unconditional") == 1
    assert cache_for(crawler).run.forced == {pipeline.identity.url_hash(URL)}


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


def test_a_command_accepts_an_old_name_with_the_same_warning(tmp_path):
    command = scrapy_command(["cache", "stats"], tmp_path / "no-cache", {"DEDUP_MAX_AGE": "3"})
    proc = subprocess.run(command, cwd=ROOT, env=crawl_env(), capture_output=True, text=True, timeout=60)
    assert "DEDUP_MAX_AGE is deprecated: use EXTRACTOR_MAX_AGE" in proc.stderr
    assert "No cache in" in proc.stderr  # and the command went on with it
