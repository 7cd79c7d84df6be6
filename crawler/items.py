"""Items of this project's spiders."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class PageItem:
    """One HTML page of a documentation site.

    ``content`` is the page's main content as markdown, written by the converter
    ``converter`` (``crawler.lib.markdown.converter_id``); ``source_unchanged``: the
    page's response is the one stored before (a 304, a skipped recheck, another
    spelling, the same bytes, a replayed rendering), so a different ``content`` can
    only come from another converter. ``url_hash``, ``content_hash`` and ``status``
    are filled in by the ContentHashPipeline.
    """

    url: str
    canonical_url: str
    title: str
    content: str
    http_status: int = 200
    depth: int = 0
    fetch: str = "fetched"  # fetched | not_modified | recheck_skipped | duplicate
    converter: str | None = None
    source_unchanged: bool = False
    url_hash: str | None = None
    content_hash: str | None = None
    status: str | None = None


@dataclass
class DatasetItem:
    """One dataset of a data catalogue (the second spider; seed 004's example)."""

    url: str
    title: str
    description: str = ""
    tags: list[str] = field(default_factory=list)
    publisher: str = ""
    url_hash: str | None = None
    content_hash: str | None = None
    status: str | None = None
