"""Items of this project's spiders."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class PageItem:
    """One HTML page of a documentation site.

    ``content`` is the main content as markdown, by ``converter``; ``source_unchanged``:
    the response is the one stored before, so a different ``content`` can only come from
    another converter. ``selection_widened`` and ``named_out`` are the selection's audit
    (``None`` when the parse was reused, so the record keeps an earlier parse's).
    ``url_hash``, ``content_hash`` and ``status`` are filled in by ContentHashPipeline.
    """

    url: str
    canonical_url: str
    title: str
    content: str
    converter: str | None = None
    source_unchanged: bool = False
    selection_widened: bool | None = None
    named_out: int | None = None
    url_hash: str | None = None
    content_hash: str | None = None
    status: str | None = None


@dataclass
class DatasetItem:
    """One dataset of a data catalogue (the ``catalog`` spider: the content-hash
    pipeline on items that are not pages). ``url_hash``, ``content_hash`` and
    ``status`` are filled in by the ContentHashPipeline."""

    url: str
    title: str
    description: str = ""
    tags: list[str] = field(default_factory=list)
    publisher: str = ""
    url_hash: str | None = None
    content_hash: str | None = None
    status: str | None = None
