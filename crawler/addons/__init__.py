"""Scrapy add-ons: :class:`IncrementalAddon` (incremental recrawls, in any project) and
:class:`crawler.addons.playwright.PlaywrightAddon` (JavaScript pages)."""

from crawler.addons.incremental import IncrementalAddon

__all__ = ["IncrementalAddon"]
