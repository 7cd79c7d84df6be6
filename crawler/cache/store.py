"""What the store holds besides the typed records (:mod:`crawler.cache.records`):
page statuses, page history, stored responses, renderings and parsed pages, the
store's errors, and time stamps.

The ports a store implements are in :mod:`crawler.cache.ports`; the default store is
:class:`crawler.cache.sqlite.SqliteDocStore`.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from collections.abc import Mapping

    from crawler.cache.records import HistoryEvent, PageRecord

#: Page statuses, as recorded in the index and counted in the run report.
STATUS_NEW = "new"
STATUS_CHANGED = "changed"
STATUS_UNCHANGED = "unchanged"
STATUS_REMOVED = "removed"
STATUSES = (STATUS_NEW, STATUS_CHANGED, STATUS_UNCHANGED, STATUS_REMOVED)


#: events kept in a page record's ``history`` (the oldest are dropped)
HISTORY_MAX = 50


def add_history(record: PageRecord, event: str, at: str, **details: Any) -> None:
    """Append ``event`` (new, changed, removed, extracted, extraction_failed,
    invalidated) to ``record["history"]``, keeping the last ``HISTORY_MAX``.

    >>> record: PageRecord = {}  # type: ignore[typeddict-item]
    >>> add_history(record, "new", "2026-01-01T00:00:00Z", content_hash="ab")
    >>> record["history"]
    [{'at': '2026-01-01T00:00:00Z', 'event': 'new', 'content_hash': 'ab'}]
    """
    history = record.setdefault("history", [])
    history.append(cast("HistoryEvent", {"at": at, "event": event, **details}))
    del history[:-HISTORY_MAX]


class CacheCorruptError(RuntimeError):
    """A cache file exists but cannot be read."""


class CacheMissingError(RuntimeError):
    """There is no cache where the settings point (a store opened with ``create=False``)."""


class CacheStorageError(CacheCorruptError):
    """Reading or writing an open cache failed (a damaged file, a full disk): what was
    stored before is left as it is; the writes of this run not yet committed are not kept."""


def page_text(content: Mapping[str, object], use_clean: bool = True) -> str:
    """The text of a page's content record that the extractor and the vector sync read:
    without the domain's boilerplate (``clean``) when that analysis is on and found some."""
    text = content.get("clean", content.get("text", "")) if use_clean else content.get("text", "")
    return text if isinstance(text, str) else ""


#: the second :func:`utcnow` last formatted, and its text
_last_now: tuple[int, str] = (-1, "")


def utcnow() -> str:
    """Now, as the ISO-8601 UTC string every record uses (``datetime.now(UTC)`` to the
    second). Formatted once a second: a crawl asks for it several times a page."""
    global _last_now
    second = time.time_ns() // 1_000_000_000
    if second != _last_now[0]:
        _last_now = (second, time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(second)))
    return _last_now[1]


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


def parse_source(response: StoredResponse) -> str:
    """The identity of what a stored response is read as: its body with the headers the
    reading depends on (``Content-Type``, its charset; ``Content-Encoding``). A server
    that fixes a page's charset, and sends the same bytes, has another page to read.

    >>> a = StoredResponse("u", 200, {"Content-Type": "text/html; charset=koi8-r"}, b"x", "t")
    >>> b = StoredResponse("u", 200, {"Content-Type": "text/html; charset=windows-1251"}, b"x", "t")
    >>> parse_source(a) == parse_source(b), parse_source(a) == parse_source(a)
    (False, True)
    """
    digest = hashlib.sha256()
    for name in ("Content-Type", "Content-Encoding"):
        value = next((v for k, v in response.headers.items() if k.lower() == name.lower()), "")
        digest.update(f"{name}: {value}\n".encode("utf-8", "replace"))
    digest.update(b"\n")
    digest.update(response.body)
    return digest.hexdigest()


@dataclass
class ParsedPage:
    """What the spider made of a stored response: its item's fields and the links it
    found. A recrawl answered by that response again (a 304, a skipped recheck) reuses
    it instead of parsing and converting the page again, while ``source_sha256`` (of the
    stored response's body) and ``converter`` (the converter id) are still the same."""

    #: SHA-256 of what the page was read from: the stored body and the headers its
    #: reading depends on (see :func:`parse_source`)
    source_sha256: str
    converter: str
    fields: dict[str, Any]
    #: every link the page holds (absolute URLs, before the spider's rules): the
    #: spider applies its rules of the day to them
    links: list[str]
    parsed_at: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "source_sha256": self.source_sha256,
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
        ok = isinstance(page.fields, dict) and isinstance(page.links, list) and isinstance(page.source_sha256, str)
        return page if ok else None
