"""The storage protocol every component talks to, and the records it holds.

The default implementation is :class:`crawler.cache.sqlite.SqliteDocStore` (embedded,
one directory); another backend only has to implement :class:`DocStore` and be named
in the ``EXTRACTED_DOCS_STORE`` setting.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

#: Page statuses, as recorded in the index and counted in the run report.
STATUS_NEW = "new"
STATUS_CHANGED = "changed"
STATUS_UNCHANGED = "unchanged"
STATUS_REMOVED = "removed"
STATUSES = (STATUS_NEW, STATUS_CHANGED, STATUS_UNCHANGED, STATUS_REMOVED)


#: events kept in a page record's ``history`` (the oldest are dropped)
HISTORY_MAX = 50


def add_history(record: dict[str, Any], event: str, at: str, **details: Any) -> None:
    """Append ``event`` (new, changed, removed, extracted, extraction_failed,
    invalidated) to ``record["history"]``, keeping the last ``HISTORY_MAX``.

    >>> record = {}
    >>> add_history(record, "new", "2026-01-01T00:00:00Z", content_hash="ab")
    >>> record["history"]
    [{'at': '2026-01-01T00:00:00Z', 'event': 'new', 'content_hash': 'ab'}]
    """
    history = record.setdefault("history", [])
    history.append({"at": at, "event": event, **details})
    del history[:-HISTORY_MAX]


def metadata_of(url_hash: str, record: dict[str, Any]) -> dict[str, Any]:
    """The ``metadata/{url_hash}_meta.json`` view of a page record: everything needed
    to rebuild the record if the index is lost."""
    keys = (
        "url", "canonical_url", "domain", "title", "status", "content_hash", "first_seen",
        "last_seen", "last_changed", "last_extracted", "removed_at", "extraction", "extraction_error",
        "invalidated", "history",
    )  # fmt: skip
    return {"url_hash": url_hash, **{k: record[k] for k in keys if k in record}}


class CacheCorruptError(RuntimeError):
    """A cache file exists but cannot be read."""


class CacheMissingError(RuntimeError):
    """There is no cache where the settings point (a store opened with ``create=False``)."""


class CacheStorageError(CacheCorruptError):
    """Reading or writing an open cache failed (a damaged file, a full disk): what was
    stored before is left as it is; the writes of this run not yet committed are not kept."""


def page_text(content: dict[str, Any], use_clean: bool = True) -> str:
    """The text of a page's content record that the extractor and the vector sync read:
    without the domain's boilerplate (``clean``) when that analysis is on and found some."""
    text = content.get("clean", content.get("text", "")) if use_clean else content.get("text", "")
    return text if isinstance(text, str) else ""


def utcnow() -> str:
    """Now, as the ISO-8601 UTC string every record uses."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        return datetime.strptime(value, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    except ValueError:
        return None


@dataclass
class StoredResponse:
    """A raw response kept so that a 304 or a skipped recheck can still be parsed."""

    url: str
    status: int
    headers: dict[str, str]
    body: bytes
    fetched_at: str
    checked_at: str = field(default="")

    @property
    def etag(self) -> str | None:
        return self.headers.get("ETag")

    @property
    def last_modified(self) -> str | None:
        return self.headers.get("Last-Modified")


@dataclass
class RenderedPage:
    """A page as a browser rendered it (its DOM after JavaScript ran), kept so that a
    recrawl whose raw HTML is unchanged reuses it instead of rendering again.

    ``raw_sha256`` is the SHA-256 of the raw (decoded, decompressed) HTML body that
    was rendered: the rendering stands for that raw page and no other. ``encoding`` is
    the one ``body`` is encoded in (the browser's text is encoded in the header's
    charset when it can be, else in UTF-8). A ``url`` of another page (its key is not
    this URL's) records that the browser ended there: ``body`` is empty, and the
    rendering of that page is its own.
    """

    url: str
    headers: dict[str, str]
    body: bytes
    raw_sha256: str
    rendered_at: str
    encoding: str = ""


@dataclass
class ParsedPage:
    """What the spider made of a stored response: its item's fields and the links it
    found. A recrawl answered by that response again (a 304, a skipped recheck) reuses
    it instead of parsing and converting the page again, while ``body_sha256`` (of the
    stored response's body) and ``converter`` (the converter id) are still the same."""

    body_sha256: str
    converter: str
    fields: dict[str, Any]
    #: every link the page holds (absolute URLs, before the spider's rules): the
    #: spider applies its rules of the day to them
    links: list[str]
    parsed_at: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "body_sha256": self.body_sha256,
            "converter": self.converter,
            "fields": self.fields,
            "links": self.links,
            "parsed_at": self.parsed_at,
        }

    @classmethod
    def from_json(cls, data: Any) -> ParsedPage | None:
        """The record, or ``None`` for anything that is not one (an older form)."""
        if not isinstance(data, dict):
            return None
        try:
            page = cls(**data)
        except TypeError:
            return None
        ok = isinstance(page.fields, dict) and isinstance(page.links, list) and isinstance(page.body_sha256, str)
        return page if ok else None


@runtime_checkable
class DocStore(Protocol):
    """Storage of the extracted-docs cache.

    ``url_hash`` keys are :func:`crawler.identity.page_key` of canonical URLs. Page
    records and content are JSON-able dicts. Writes may be buffered until
    :meth:`commit`; a reader in the same process sees them at once.
    """

    directory: Path

    # page records (the index)
    def get_page(self, url_hash: str) -> dict[str, Any] | None: ...
    def put_page(self, url_hash: str, record: dict[str, Any]) -> None: ...
    def iter_pages(self) -> Iterator[tuple[str, dict[str, Any]]]: ...
    def iter_page_keys(self) -> Iterator[str]: ...
    def count_pages(self) -> int: ...
    #: everything kept for one page (record, content, responses, files)
    def delete_page(self, url_hash: str) -> None: ...

    # page content: what the item said, kept for re-analysis without a download
    def get_content(self, url_hash: str) -> dict[str, Any] | None: ...
    def put_content(self, url_hash: str, content: dict[str, Any]) -> None: ...

    # raw responses behind conditional requests
    def get_response(self, url_hash: str) -> StoredResponse | None: ...
    def put_response(self, url_hash: str, response: StoredResponse) -> None: ...

    # pages rendered by a browser, with the hash of the raw HTML they were made from
    def get_rendered(self, url_hash: str) -> RenderedPage | None: ...
    def put_rendered(self, url_hash: str, page: RenderedPage) -> None: ...

    # what the spider made of a stored response (see ParsedPage)
    def get_parsed(self, url_hash: str) -> ParsedPage | None: ...
    def put_parsed(self, url_hash: str, page: ParsedPage) -> None: ...

    # extractions, by page and by input key (extractor name + version + input hash)
    def read_extraction(self, url_hash: str) -> dict[str, Any] | None: ...
    def write_extraction(self, url_hash: str, extraction: dict[str, Any]) -> str: ...
    def find_extraction(self, input_key: str) -> str | None: ...
    def link_extraction(self, input_key: str, url_hash: str) -> None: ...
    def write_metadata(self, url_hash: str, metadata: dict[str, Any]) -> str: ...

    # per-domain analysis records (domain boilerplate)
    def get_domain(self, domain: str) -> dict[str, Any] | None: ...
    def put_domain(self, domain: str, record: dict[str, Any]) -> None: ...

    # run reports
    def write_run_report(self, run_id: str, report: dict[str, Any]) -> str: ...
    def has_run_report(self, run_id: str) -> bool: ...

    def commit(self) -> None: ...
    def close(self) -> None: ...
