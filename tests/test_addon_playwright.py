import json
import logging
import os
import subprocess
import sys

import pytest
from scrapy.exceptions import NotConfigured
from scrapy.settings import Settings
from scrapy.utils.misc import build_from_crawler, load_object

from crawler.addons import playwright as addon_module
from crawler.addons.playwright import (
    ASYNCIO_REACTOR,
    CHROMIUM_ARGS,
    HANDLER,
    ChromiumNotFoundError,
    PlaywrightAddon,
    abort_heavy_resources,
    find_chromium,
    launch_options,
)
from crawler.middlewares.render import PRIORITY, RenderMiddleware
from tests.crawl import ROOT, crawl_env

pytestmark = pytest.mark.browser  # enabling the add-on looks for Debian's Chromium

#: no download handlers of get_crawler's reactorless test mode (aiohttp): the add-on
#: refuses to replace a user's http handler
ADDONS = {"ADDONS": {PlaywrightAddon: 0}, "DOWNLOAD_HANDLERS": {}}


def updated(project=None, cmdline=None):
    """Scrapy's settings with ``project`` and ``cmdline`` values, updated by the add-on."""
    settings = Settings()
    settings.setdict(project or {}, "project")
    settings.setdict(cmdline or {}, "cmdline")
    PlaywrightAddon(enabled=True).update_settings(settings)
    return settings


def middlewares(settings):
    return {load_object(k): v for k, v in settings.getdict("DOWNLOADER_MIDDLEWARES").items()}


def test_not_configured_when_disabled_and_a_crawl_pays_nothing(make_crawler):
    with pytest.raises(NotConfigured):
        build_from_crawler(PlaywrightAddon, make_crawler(cache=False))
    settings = make_crawler(ADDONS).settings  # get_crawler applies the add-ons as a crawl does
    assert HANDLER not in settings.getdict("DOWNLOAD_HANDLERS").values()
    assert RenderMiddleware not in middlewares(settings)
    assert "PLAYWRIGHT_ABORT_REQUEST" not in settings


#: a crawler built from the project's settings as `scrapy crawl docs` builds it (add-ons,
#: extensions, the downloader with its middlewares and handlers), then the browser
#: libraries it imported
IMPORTS_PROBE = """
import json, sys
from scrapy.core.downloader import Downloader
from scrapy.crawler import Crawler
from scrapy.utils.project import get_project_settings
from scrapy.utils.reactor import install_reactor
from crawler.spiders.docs import DocsSpider
settings = get_project_settings()
settings.set("PLAYWRIGHT_ENABLED", sys.argv[1], "cmdline")
settings.set("EXTRACTED_DOCS_DIR", sys.argv[2], "cmdline")
install_reactor(settings["TWISTED_REACTOR"])
crawler = Crawler(DocsSpider, settings)
crawler._apply_settings()
Downloader(crawler)
print(json.dumps(sorted({m.split(".")[0] for m in sys.modules} & {"playwright", "scrapy_playwright"})))
"""


@pytest.mark.e2e
@pytest.mark.parametrize(("enabled", "imported"), [("False", []), ("True", ["playwright", "scrapy_playwright"])])
def test_a_crawl_without_the_switch_imports_no_browser_library(tmp_path, enabled, imported):
    result = subprocess.run(
        [sys.executable, "-c", IMPORTS_PROBE, enabled, str(tmp_path / "cache")],
        cwd=ROOT,
        env=crawl_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert json.loads(result.stdout.splitlines()[-1]) == imported


def test_scope_settings_without_the_switch_are_reported(make_crawler, caplog):
    with caplog.at_level(logging.WARNING), pytest.raises(NotConfigured):
        build_from_crawler(PlaywrightAddon, make_crawler({"RENDER_DOMAINS": "docs.example.com"}))
    assert "RENDER_DOMAINS is set but PLAYWRIGHT_ENABLED is False" in caplog.text


def test_bad_switch_value_names_the_setting(make_crawler):
    with pytest.raises(ValueError, match="PLAYWRIGHT_ENABLED"):
        build_from_crawler(PlaywrightAddon, make_crawler({"PLAYWRIGHT_ENABLED": "maybe"}))


def test_enabled_sets_handlers_launch_options_and_the_render_middleware(make_crawler):
    settings = make_crawler({**ADDONS, "PLAYWRIGHT_ENABLED": True}).settings
    handlers = settings.getdict("DOWNLOAD_HANDLERS")
    assert handlers["http"] == handlers["https"] == HANDLER
    options = settings.getdict("PLAYWRIGHT_LAUNCH_OPTIONS")
    assert options["executable_path"] == find_chromium()
    assert os.access(options["executable_path"], os.X_OK)  # Debian's chromium is installed (make chromium)
    assert options["args"] == list(CHROMIUM_ARGS)
    assert middlewares(settings)[RenderMiddleware] == PRIORITY
    assert settings.get("PLAYWRIGHT_ABORT_REQUEST") is abort_heavy_resources


@pytest.mark.parametrize("scheme", ["http", "https"])
def test_a_users_own_http_handler_is_refused_not_replaced(scheme):
    mine = "myproject.handlers.MyHandler"
    with pytest.raises(ValueError, match=f"DOWNLOAD_HANDLERS sets '{scheme}' to '{mine}'"):
        updated(cmdline={"DOWNLOAD_HANDLERS": {scheme: mine}})
    kept = updated(cmdline={"DOWNLOAD_HANDLERS": {"ftp": None, scheme: HANDLER}}).getdict("DOWNLOAD_HANDLERS")
    assert kept == {"ftp": None, "http": HANDLER, "https": HANDLER}
    # scrapy-playwright's own, as its documentation has it: replaced by the one shared by both schemes
    library = "scrapy_playwright.handler.ScrapyPlaywrightDownloadHandler"
    kept = updated(cmdline={"DOWNLOAD_HANDLERS": {scheme: library}}).getdict("DOWNLOAD_HANDLERS")
    assert kept == {"http": HANDLER, "https": HANDLER}


def test_user_launch_options_are_merged_not_lost(tmp_path):
    browser = tmp_path / "my-chromium"
    browser.write_text("#!/bin/sh\n")
    browser.chmod(0o755)
    given = f'{{"executable_path": "{browser}", "args": ["--lang=de"], "headless": true}}'  # as -s gives it
    options = updated(cmdline={"PLAYWRIGHT_LAUNCH_OPTIONS": given}).getdict("PLAYWRIGHT_LAUNCH_OPTIONS")
    assert options["executable_path"] == str(browser)
    assert options["args"] == [*CHROMIUM_ARGS, "--lang=de"]
    assert options["headless"] is True


def test_missing_chromium_is_one_clear_error(make_crawler, monkeypatch):
    monkeypatch.setattr(addon_module, "find_chromium", lambda: None)
    with pytest.raises(
        ChromiumNotFoundError,
        match=r"not found at /usr/lib/chromium/chromium.*apt-get install --no-install-recommends chromium",
    ):
        make_crawler({**ADDONS, "PLAYWRIGHT_ENABLED": True})
    with pytest.raises(ChromiumNotFoundError, match="'/nonexistent/chromium' is not an executable"):
        updated(cmdline={"PLAYWRIGHT_LAUNCH_OPTIONS": {"executable_path": "/nonexistent/chromium"}})


def test_unreadable_launch_options_name_the_setting():
    with pytest.raises(ValueError, match="PLAYWRIGHT_LAUNCH_OPTIONS"):
        updated(cmdline={"PLAYWRIGHT_LAUNCH_OPTIONS": "{not json"})


def test_a_remote_browser_needs_no_local_chromium(monkeypatch):
    monkeypatch.setattr(addon_module, "find_chromium", lambda: None)
    settings = updated({"PLAYWRIGHT_CDP_URL": "http://127.0.0.1:9222"})
    assert "executable_path" not in settings.getdict("PLAYWRIGHT_LAUNCH_OPTIONS")


def test_the_default_reactor_is_asyncio_and_another_is_refused():
    assert Settings().get("TWISTED_REACTOR") == ASYNCIO_REACTOR  # Scrapy 2.19's default
    with pytest.raises(ValueError, match="TWISTED_REACTOR"):
        updated(cmdline={"TWISTED_REACTOR": "twisted.internet.epollreactor.EPollReactor"})


def test_find_chromium_takes_the_first_executable(tmp_path):
    plain = tmp_path / "plain"
    plain.write_text("")
    runnable = tmp_path / "runnable"
    runnable.write_text("#!/bin/sh\n")
    runnable.chmod(0o755)
    assert find_chromium([str(tmp_path / "missing"), str(plain), str(runnable)]) == str(runnable)
    assert find_chromium([str(tmp_path / "missing")]) is None


def test_launch_options_keep_user_args_once():
    options = launch_options({"args": ["--no-sandbox", "--window-size=800,600"], "slow_mo": 5}, "/usr/bin/chromium")
    assert options["args"].count("--no-sandbox") == 1
    assert options["args"][-1] == "--window-size=800,600"
    assert options["slow_mo"] == 5 and options["executable_path"] == "/usr/bin/chromium"


class FakeBrowserRequest:
    def __init__(self, resource_type):
        self.resource_type = resource_type


@pytest.mark.parametrize(("kind", "aborted"), [("image", True), ("font", True), ("script", False), ("fetch", False)])
def test_heavy_resources_are_aborted(kind, aborted):
    assert abort_heavy_resources(FakeBrowserRequest(kind)) is aborted


def test_the_libraries_failure_warning_is_one_line(make_crawler):
    from crawler.addons.playwright import OneLineRenderFailures

    make_crawler({**ADDONS, "PLAYWRIGHT_ENABLED": True})
    library_logger = logging.getLogger("scrapy-playwright")
    assert sum(isinstance(f, OneLineRenderFailures) for f in library_logger.filters) == 1
    try:
        raise TimeoutError("Page.goto: Timeout 6000ms exceeded.\nCall log:\n  - navigating")
    except TimeoutError as exc:
        record = library_logger.makeRecord(
            "scrapy-playwright", logging.WARNING, __file__, 1, "Closing page due to failed request: %s exc_msg=%s",
            ("<GET x>", str(exc)), (type(exc), exc, exc.__traceback__),
        )  # fmt: skip
    assert OneLineRenderFailures().filter(record)
    assert (
        record.getMessage() == "Closing page due to failed request: <GET x> exc_msg=Page.goto: Timeout 6000ms exceeded."
    )
    assert record.exc_info is None


def test_the_docs_quote_the_missing_chromium_message(monkeypatch):
    monkeypatch.setattr(addon_module, "find_chromium", lambda: None)
    with pytest.raises(ChromiumNotFoundError) as error:
        updated()
    assert f"Crawl not started: {error.value}\n" in (ROOT / "docs" / "rendering.md").read_text()
