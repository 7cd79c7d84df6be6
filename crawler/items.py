"""Items of this project's spiders."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class PageItem:
    """One HTML page of a documentation site.

    ``content`` is the page's main content as markdown, written by the converter
    ``converter`` (``crawler.lib.markdown.converter_id``); ``source_unchanged``: the
    page's response is the one stored before (a 304, a page the revisit schedule skipped, another
    spelling, the same bytes, a replayed rendering), so a different ``content`` can
    only come from another converter. ``selection_widened``: whether this parse's
    main content, as the converter first chose it, left out too much of the page's
    text and was widened by the selection's audit; ``None`` when the page was not
    parsed (its parse reused), so its record keeps what an earlier parse said.
    ``named_out``: the words the selection left out of the page's content container
    for what their class or id names (``None``: not parsed, as above).
    ``url_hash``, ``content_hash`` and ``status`` are filled in by the
    ContentHashPipeline.
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
