"""Items of this project's spiders."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class PageItem:
    """One HTML page of a documentation site.

    ``content`` is the page's main content as markdown; ``url_hash``,
    ``content_hash`` and ``status`` are filled in by the ContentHashPipeline.
    """

    url: str
    canonical_url: str
    title: str
    content: str
    http_status: int = 200
    depth: int = 0
    fetch: str = "fetched"  # fetched | not_modified | recheck_skipped
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
