"""The cache's records, defined once: their keys, their types, their JSON form.

Each record is a ``TypedDict``: its JSON form is the dict itself (what a store
writes, what ``scrapy cache show`` prints, what a person finds in
``extractions/{url_hash}.json``), and mypy checks every key a module reads or writes
against the one definition here. Keys a record may lack are ``NotRequired``.
Sub-records built in more than one place have one constructor here, and so have
the values every record shares: the page statuses (defined in the leaf
:mod:`crawler.statuses`), the history's events, the time stamps.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, NotRequired, TypedDict, cast

# re-exported: the cache's modules name a page's status from its records
from crawler.lib.hashing import sha256_hex
from crawler.statuses import STATUS_CHANGED as STATUS_CHANGED
from crawler.statuses import STATUS_NEW as STATUS_NEW
from crawler.statuses import STATUS_REMOVED as STATUS_REMOVED
from crawler.statuses import STATUS_UNCHANGED as STATUS_UNCHANGED
from crawler.statuses import STATUSES as STATUSES

if TYPE_CHECKING:
    from collections.abc import Mapping


class HistoryEvent(TypedDict):
    """One event of a page's life: new, changed, removed, extracted,
    extraction_failed, invalidated; details per event (content_hash, input_hash,
    reason, error)."""

    at: str
    event: str
    content_hash: NotRequired[str]
    input_hash: NotRequired[str]
    reason: NotRequired[str]
    error: NotRequired[str]


class ExtractionRef(TypedDict):
    """The page record's pointer to its current extraction."""

    input_key: str
    input_hash: str
    extractor: str
    version: str
    file: str
    #: the extractor's estimate of the prompt tokens of this input (an extractor with a
    #: token estimate): what a recrawl that finds it unchanged saves, without the text
    tokens_estimate: NotRequired[int]


class ExtractionError(TypedDict):
    at: str
    error: str
    input_key: str


class VectorsRecord(TypedDict):
    """The page's last vector sync: ``key`` (embedder, chunk size, store), the
    ``input_hash`` of what was synced and its number of points; or, for a removed
    page, when its points were deleted."""

    key: str
    points: int
    input_hash: NotRequired[str]
    synced_at: NotRequired[str]
    deleted_at: NotRequired[str]
    #: the page's key before the migration of an older cache re-keyed it: its points
    #: are still under that key until the next vector sync moves them (no embedding)
    moved_from: NotRequired[str]


class PageRecord(TypedDict):
    """A page in the index (keyed by ``url_hash``, :func:`crawler.identity.page_key`)."""

    url: str
    canonical_url: str
    domain: str
    status: str  # new, changed, unchanged, removed
    content_hash: str
    first_seen: str
    last_seen: str
    run_id: str
    title: NotRequired[str]
    last_changed: NotRequired[str]
    removed_at: NotRequired[str]
    last_extracted: NotRequired[str]
    extraction: NotRequired[ExtractionRef]
    extraction_error: NotRequired[ExtractionError]
    #: when ``scrapy cache invalidate`` asked for a new extraction
    invalidated: NotRequired[str]
    #: when the page last had no text to extract
    empty_input: NotRequired[str]
    #: when a crawl first found the page's main content, as the converter first chose
    #: it, leaving out too much of the page's text, and widened it (removed when a
    #: later parse is not widened; a page whose parse is reused keeps it)
    selection_widened: NotRequired[str]
    #: the words the last parse left out of the content container for a class or id
    #: name (absent: none; a page whose parse is reused keeps it)
    named_out: NotRequired[int]
    #: the converter of the stored text; one whose text was held back, and its hash
    converter: NotRequired[str]
    converter_pending: NotRequired[str]
    converter_pending_hash: NotRequired[str]
    vectors: NotRequired[VectorsRecord]
    #: the revisit schedule's state (crawler.incremental.revisit): ``interval`` (days),
    #: ``verified_at`` (the last check), ``lastmod`` (the sitemap's, at that check)
    revisit: NotRequired[dict[str, Any]]
    #: the index file spellings (``/docs/index.html``) fetched and folded into this
    #: directory page: the revisit schedule decides them as this page
    folded_from: NotRequired[list[str]]
    history: NotRequired[list[HistoryEvent]]


class ContentVersion(TypedDict, total=False):
    text: str
    fields: dict[str, Any]
    content_hash: str
    stored_at: str


class PageContent(TypedDict):
    """What a page says (its item's content field and hashed fields), kept for the
    stages that read it after the crawl (boilerplate, extraction, vector sync)."""

    url: str
    text: str
    fields: dict[str, Any]
    content_hash: str
    stored_at: str
    #: the text without the domain's boilerplate (set by the boilerplate stage)
    clean: NotRequired[str]
    #: the text before the last change, for ``scrapy cache diff``
    previous: NotRequired[ContentVersion]


class ExtractorId(TypedDict):
    name: str
    version: str


class Extraction(TypedDict):
    """``extractions/{url_hash}.json``: what the extractor returned for one input."""

    url: str
    url_hash: str
    title: str
    extractor: ExtractorId
    input_hash: str
    input_key: str
    extracted_at: str
    data: dict[str, Any]
    #: the URL whose extraction of the same input this one reuses
    reused_from: NotRequired[str]


def extraction_ref(url_hash: str, extraction: Extraction) -> ExtractionRef:
    """The page record's pointer to ``extraction`` (the one place it is built)."""
    return {
        "input_key": extraction["input_key"],
        "input_hash": extraction["input_hash"],
        "extractor": extraction["extractor"]["name"],
        "version": extraction["extractor"]["version"],
        "file": f"extractions/{url_hash}.json",
    }


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


def page_text(content: Mapping[str, object], use_clean: bool = True) -> str:
    """The text of a page's content record that the extractor and the vector sync read:
    without the domain's boilerplate (``clean``) when that analysis is on and found some."""
    text = content.get("clean", content.get("text", "")) if use_clean else content.get("text", "")
    return text if isinstance(text, str) else ""


#: the fields a store keeps in a content record beside what it was given, and leaves
#: out of what it reads back (:func:`with_text_hashes`)
TEXT_HASH_FIELDS = ("text_sha256", "clean_sha256")


def with_text_hashes(content: Mapping[str, Any]) -> dict[str, Any]:
    """``content`` with the SHA-256 of its ``text`` and (when it has one) ``clean``, as a
    store writes it: made from the texts it is written with, never stale.

    >>> stored = with_text_hashes({"text": "A", "clean_sha256": "stale"})
    >>> stored["text_sha256"] == input_hash({"text": "A"}), "clean_sha256" in stored
    (True, False)
    """
    stored = {name: value for name, value in content.items() if name not in TEXT_HASH_FIELDS}
    text = content.get("text")
    stored["text_sha256"] = sha256_hex(text if isinstance(text, str) else "")
    if "clean" in content:  # (one that is not text reads as "", as page_text reads it)
        clean = content["clean"]
        stored["clean_sha256"] = sha256_hex(clean if isinstance(clean, str) else "")
    return stored


def input_hash(content: Mapping[str, object], use_clean: bool = True) -> str:
    """The SHA-256 of :func:`page_text`: what an extraction's ``input_hash`` says."""
    return sha256_hex(page_text(content, use_clean))


def stored_input_hash(text_sha: Any, clean_sha: Any, use_clean: bool) -> str | None:
    """:func:`input_hash` from the fields :func:`with_text_hashes` stored (``clean_sha``
    None: the content has no ``clean``); None when they do not say (a content written
    before them): the content is read.

    >>> content = with_text_hashes({"text": "A", "clean": "B"})
    >>> fields = (content["text_sha256"], content["clean_sha256"])
    >>> [stored_input_hash(*fields, use) == input_hash(content, use) for use in (True, False)]
    [True, True]
    >>> stored_input_hash(None, None, True), stored_input_hash(None, None, False)
    (None, None)
    """
    found = clean_sha if use_clean and clean_sha is not None else text_sha
    return found if isinstance(found, str) and found else None


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
