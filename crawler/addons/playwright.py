"""Scrapy add-on: pages rendered by the system Chromium through scrapy-playwright.

Off unless ``PLAYWRIGHT_ENABLED`` is true: a crawl without it imports neither
scrapy-playwright nor Playwright and starts no browser.
"""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING, Any

from scrapy.exceptions import NotConfigured
from scrapy.settings import get_settings_priority

from crawler.config import install_hint, typed

if TYPE_CHECKING:
    from collections.abc import Iterable

    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings

logger = logging.getLogger(__name__)

#: where Debian's ``chromium`` package puts the browser (the binary, then its wrapper script)
CHROMIUM_PATHS = ("/usr/lib/chromium/chromium", "/usr/bin/chromium", "/usr/bin/chromium-browser")
#: flags for a server: no sandbox (root, containers), no GPU, and none of the browser's
#: own background connections (updates, sync, QUIC probes), which a closed network refuses
CHROMIUM_ARGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)
#: scrapy-playwright's handler, built once for http and https (one driver, one browser)
HANDLER = "crawler.handlers.playwright.PlaywrightDownloadHandler"
#: scrapy-playwright's own: in DOWNLOAD_HANDLERS (as its documentation has it), replaced by HANDLER
LIBRARY_HANDLER = "scrapy_playwright.handler.ScrapyPlaywrightDownloadHandler"
ASYNCIO_REACTOR = "twisted.internet.asyncioreactor.AsyncioSelectorReactor"
#: resource types a rendering for text never needs
ABORTED_RESOURCE_TYPES = frozenset({"image", "media", "font"})


class ChromiumNotFoundError(RuntimeError):
    """PLAYWRIGHT_ENABLED is on but no Chromium executable can be found."""


def find_chromium(candidates: Iterable[str] = CHROMIUM_PATHS) -> str | None:
    """The first of ``candidates`` that is an executable file, else ``None``."""
    for path in candidates:
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None


def launch_options(options: dict[str, Any], executable_path: str | None) -> dict[str, Any]:
    """``PLAYWRIGHT_LAUNCH_OPTIONS`` for the system Chromium: the user's options, the
    executable found when they name none, and the server flags before their own.

    >>> launch_options({"args": ["--lang=en", "--no-sandbox"]}, "/usr/bin/chromium")["args"][-2:]
    ['--disable-sync', '--lang=en']
    >>> launch_options({"executable_path": "/opt/chrome"}, None)["executable_path"]
    '/opt/chrome'
    """
    merged = dict(options)
    if not merged.get("executable_path") and executable_path:
        merged["executable_path"] = executable_path
    user_args = [str(arg) for arg in merged.get("args") or []]
    merged["args"] = list(CHROMIUM_ARGS) + [arg for arg in user_args if arg not in CHROMIUM_ARGS]
    return merged


def abort_heavy_resources(request: Any) -> bool:
    """The default ``PLAYWRIGHT_ABORT_REQUEST``: images, media and fonts are not
    downloaded by the browser (they carry no text)."""
    return request.resource_type in ABORTED_RESOURCE_TYPES


class OneLineRenderFailures(logging.Filter):
    """scrapy-playwright logs a failed rendering as a warning with a traceback and a
    multi-line call log; RenderMiddleware says it in one line. This keeps the first
    line of the library's warning and drops the traceback."""

    def filter(self, record: logging.LogRecord) -> bool:
        if str(record.msg).startswith("Closing page due to failed request"):
            record.msg = next(iter(record.getMessage().splitlines()), "")
            record.args = None
            record.exc_info = None
            record.exc_text = None
        return True


class PlaywrightAddon:
    """Routes the pages in scope through a headless Chromium (scrapy-playwright).

    ``-s PLAYWRIGHT_ENABLED=True`` turns it on. It then sets scrapy-playwright's download
    handler for http and https, one instance for both
    (:class:`crawler.handlers.playwright.PlaywrightDownloadHandler`: one Playwright
    driver and one browser; requests without the ``playwright`` meta key still go
    through Scrapy's own HTTP client), ``PLAYWRIGHT_LAUNCH_OPTIONS`` for the system
    Chromium (``executable_path`` found at Debian's paths unless given) and enables
    :class:`crawler.middlewares.render.RenderMiddleware`, which decides which
    requests a browser renders. Scrapy's default reactor (asyncio) is the one
    Playwright needs; another ``TWISTED_REACTOR`` is refused.
    """

    def __init__(self, *, enabled: bool) -> None:
        self.enabled = enabled

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> PlaywrightAddon:
        settings = typed(crawler.settings)
        if not settings.getbool("PLAYWRIGHT_ENABLED", False):
            for name in ("RENDER_DOMAINS", "RENDER_URL_PATTERNS"):
                if settings.getlist(name):
                    logger.warning(
                        "%(name)s is set but PLAYWRIGHT_ENABLED is False: no page is rendered", {"name": name}
                    )
            # no message: Scrapy logs an add-on's NotConfigured message as a warning,
            # and a crawl without a browser is the usual case
            raise NotConfigured
        library_logger = logging.getLogger("scrapy-playwright")
        if not any(isinstance(f, OneLineRenderFailures) for f in library_logger.filters):
            library_logger.addFilter(OneLineRenderFailures())
        return cls(enabled=True)

    def update_settings(self, settings: BaseSettings) -> None:
        try:
            import scrapy_playwright  # noqa: F401
        except ModuleNotFoundError as exc:
            raise ImportError(f"PLAYWRIGHT_ENABLED needs scrapy-playwright{install_hint(exc)}") from exc
        reactor = settings.get("TWISTED_REACTOR")
        if reactor != ASYNCIO_REACTOR:
            raise ValueError(f"PLAYWRIGHT_ENABLED needs TWISTED_REACTOR={ASYNCIO_REACTOR!r}, got {reactor!r}")
        try:
            options = settings.getdict("PLAYWRIGHT_LAUNCH_OPTIONS")
        except ValueError:
            raise ValueError(
                f"Setting PLAYWRIGHT_LAUNCH_OPTIONS={settings.get('PLAYWRIGHT_LAUNCH_OPTIONS')!r} is not a JSON object"
            ) from None
        if self._needs_local_chromium(settings):
            options = launch_options(options, find_chromium())
            self.check_executable(options.get("executable_path"))
        _set(settings, "PLAYWRIGHT_LAUNCH_OPTIONS", options)
        handlers = settings.getdict("DOWNLOAD_HANDLERS")
        for scheme in ("http", "https"):
            if scheme in handlers and _object_path(handlers[scheme]) not in (HANDLER, LIBRARY_HANDLER):
                # scrapy-playwright's handler downloads the pages not rendered too (with
                # Scrapy's own HTTP client): another handler for the scheme cannot stay
                raise ValueError(
                    f"PLAYWRIGHT_ENABLED needs scrapy-playwright's download handler for http and https, "
                    f"but DOWNLOAD_HANDLERS sets {scheme!r} to {handlers[scheme]!r}: remove it from "
                    "DOWNLOAD_HANDLERS, or leave PLAYWRIGHT_ENABLED off"
                )
        handlers.update(http=HANDLER, https=HANDLER)
        _set(settings, "DOWNLOAD_HANDLERS", handlers)
        settings.setdefault("PLAYWRIGHT_ABORT_REQUEST", abort_heavy_resources, "addon")
        from crawler.middlewares.render import PRIORITY, RenderMiddleware

        settings.setdefault_in_component_priority_dict("DOWNLOADER_MIDDLEWARES", RenderMiddleware, PRIORITY)

    @staticmethod
    def _needs_local_chromium(settings: BaseSettings) -> bool:
        remote = settings.get("PLAYWRIGHT_CDP_URL") or settings.get("PLAYWRIGHT_CONNECT_URL")
        return not remote and (settings.get("PLAYWRIGHT_BROWSER_TYPE") or "chromium") == "chromium"

    @staticmethod
    def check_executable(path: str | None) -> None:
        hint = (
            "install Debian's package (`apt-get install --no-install-recommends chromium`) or name the browser in "
            'PLAYWRIGHT_LAUNCH_OPTIONS={"executable_path": "/path/to/chromium"}'
        )
        if not path:
            raise ChromiumNotFoundError(
                f"PLAYWRIGHT_ENABLED needs Chromium, not found at {', '.join(CHROMIUM_PATHS)}: {hint}"
            )
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            raise ChromiumNotFoundError(
                f"PLAYWRIGHT_LAUNCH_OPTIONS executable_path {path!r} is not an executable: {hint}"
            )


def _object_path(value: Any) -> str:
    """A setting's object as the import path Scrapy would load it from."""
    if isinstance(value, str) or value is None:
        return str(value)
    return f"{value.__module__}.{value.__qualname__}"


def _set(settings: BaseSettings, name: str, value: Any) -> None:
    """Set ``name`` at the add-on's priority or the priority it already has, whichever
    is higher: the value given is the user's own merged with the add-on's (the caller
    merges it, or refuses a value it cannot keep)."""
    settings.set(name, value, max(settings.getpriority(name) or 0, get_settings_priority("addon")))
