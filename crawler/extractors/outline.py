"""The default extractor: offline, no key, useful for documentation."""

from __future__ import annotations

from typing import Any

from crawler.lib.outline import outline_markdown


class OutlineExtractor:
    """Title, heading outline, sections of text, code blocks and links of a page.

    Needs no network and no model; the extraction to compare an LLM extractor with.
    """

    name = "outline"
    version = "1"
    blocking = False  # pure computation: run inline, no worker thread

    def extract(self, url: str, content: str) -> dict[str, Any]:
        return {"url": url, **outline_markdown(content)}
