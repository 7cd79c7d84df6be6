"""A domain's boilerplate analysis from the statistics kept between runs: the texts of
the pages that changed are read, not the domain's (issue 40, item 2).

The store keeps each page's signature row (:mod:`crawler.cache.blocktable`) and each
domain's :class:`~crawler.lib.blockstats.DomainStats`. A run

1. reads a few fields of every live page's record (no text) beside its row, by url_hash: a page is
   changed when it has no row or its row was made from another text or URL
   (:func:`made_from` of its record differs); a row of no live page is a page gone;
2. takes the pages gone and changed out of the statistics (their old signatures) and
   the changed ones in (their texts read, in ascending key order), their rows written;
3. decides as a full pass would, and cleans the pages whose cleaned text may differ
   (:meth:`DomainStats.pages_to_clean`): the changed ones and those holding a block
   whose treatment changed;
4. writes the cleaned contents, commits them, then writes the statistics.

The statistics are dropped before a signature row changes and written last: kept
statistics count exactly the rows. None, or statistics of other parameters, unreadable
ones (a warning), or ones that disagree with the rows: every page is read once and they
are made again (:func:`analyse_kept` with no statistics), nothing else lost.
"""

from __future__ import annotations

import logging
from itertools import islice
from typing import TYPE_CHECKING, Any

from crawler.cache.blocktable import SignatureRow
from crawler.lib.blocksig import Signature
from crawler.lib.blockstats import DomainStats
from crawler.lib.hashing import sha256_hex

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Iterable, Iterator, Mapping

    from crawler.cache.blocktable import SignatureMark
    from crawler.cache.ports import BoilerplateStore
    from crawler.cache.records import PageContent, PageRecord
    from crawler.lib.boilerplate import Params
    from crawler.stages import PageView, PageViews

logger = logging.getLogger(__name__)

#: pages a batch of the passes over a domain's records
RECORDS_PER_READ = 500


#: what :func:`find_changes` reads of each live page's record
MARK_FIELDS = ("content_hash", "url", "converter", "extraction.input_hash")


def made_from(record: Mapping[str, Any]) -> str:
    """What a page's signature is made from, as its record says: the hash of its
    stored text, its URL, and whether a converter wrote it (:func:`analysed_text`).

    >>> page = {"content_hash": "ab", "url": "https://a.example/"}
    >>> made_from(page) == made_from(dict(page)), made_from(page) == made_from({**page, "converter": "markdown/1"})
    (True, False)
    """
    return made_from_fields(record.get("content_hash"), record.get("url"), record.get("converter"))


def made_from_fields(content_hash: Any, url: Any, converter: Any) -> str:
    """:func:`made_from` of these fields of a record (None: not there)."""
    parts = (str(content_hash or ""), str(url or ""), "1" if converter else "0")
    return sha256_hex("\n".join(parts))[:32]


def load_stats(blob: bytes, domain: str, params: Params) -> DomainStats | None:
    """The domain's kept statistics ``blob``; None when they are of other parameters
    or another version, or cannot be read (a warning): made again."""
    try:
        return DomainStats.from_bytes(blob, params)
    except (ValueError, KeyError, TypeError) as exc:
        logger.warning(
            "The boilerplate statistics of %(domain)s cannot be read (%(exc)s): made again from its pages",
            {"domain": domain[:100], "exc": exc},
        )
        return None


class StoredPages:
    """The domain's pages as the statistics read them (:class:`crawler.lib.blockstats.PageSource`):
    signatures from the store's rows, texts from the pages' contents."""

    def __init__(
        self, store: BoilerplateStore, domain: str, pages: PageViews, text_of: Callable[[str, PageRecord], str]
    ) -> None:
        self.store, self.domain, self.pages = store, domain, pages
        #: what of a page's text the analysis reads (analysed_text)
        self.text_of = text_of
        #: the pages whose text was read (by the statistics, and to clean them)
        self.read_keys: set[str] = set()

    def signatures(self) -> Iterator[tuple[str, Signature]]:
        for key, data in self.store.iter_signatures(self.domain):
            yield key, Signature.from_bytes(data)

    def texts(self, keys: Collection[str]) -> Iterator[tuple[str, str]]:
        for view, _, text in self.read(sorted(keys)):
            yield view.url_hash, text

    def read(self, keys: Iterable[str]) -> Iterator[tuple[PageView, str, str]]:
        """``(view, url, analysed text)`` of each of ``keys`` with a text, a batch at a time."""
        for batch in self.pages.batches(keys):
            for view in batch:
                content = view.content
                if content is not None and isinstance(content.get("text"), str):
                    self.read_keys.add(view.url_hash)
                    url = content.get("url") or view.record.get("url", "")
                    yield view, url, self.text_of(content["text"], view.record)


class Changes:
    """What pass 1 found: the pages changed and gone, and the unchanged pages' rows."""

    def __init__(self) -> None:
        self.changed: list[str] = []  # in ascending key order
        self.counted: set[str] = set()  # of the changed: counted by the statistics (an old signature)
        self.gone: list[str] = []  # rows of no live page
        self.gone_counted: list[str] = []
        #: unchanged pages whose extractor input differs from their last extraction's
        #: (their keys: a first crawl's are every page, no URL held for each)
        self.inputs_changed: set[str] = set()
        self.rows = 0  # rows counted (with a signature)


def find_changes(store: BoilerplateStore, domain: str, live: Iterable[str]) -> Changes:
    """Pass 1: a few fields of every live page's record (:data:`MARK_FIELDS`, read by
    the store's queries, no record decoded where it can) beside its row, in key order
    (``live`` is in ascending order, read a batch at a time)."""
    found = Changes()
    marks = store.iter_signature_marks(domain)
    mark: SignatureMark | None = next(marks, None)
    keys = iter(live)
    while batch := list(islice(keys, RECORDS_PER_READ)):
        for key, fields in store.get_record_fields(batch, MARK_FIELDS).items():
            if fields is None:  # no record (or unreadable): not a page of the analysis
                continue
            content_hash, url, converter, input_hash = fields
            while mark is not None and mark.url_hash < key:  # a row of no live page
                found.gone.append(mark.url_hash)
                if mark.counted:
                    found.gone_counted.append(mark.url_hash)
                    found.rows += 1
                mark = next(marks, None)
            own = mark if mark is not None and mark.url_hash == key else None
            if own is not None:
                found.rows += own.counted
                mark = next(marks, None)
            if own is None or own.made_from != made_from_fields(content_hash, url, converter):
                found.changed.append(key)
                if own is not None and own.counted:
                    found.counted.add(key)
                continue
            if own.counted and input_hash != own.input_hash:
                found.inputs_changed.add(key)
    while mark is not None:
        found.gone.append(mark.url_hash)
        if mark.counted:
            found.gone_counted.append(mark.url_hash)
            found.rows += 1
        mark = next(marks, None)
    return found


def update_stats(
    store: BoilerplateStore, domain: str, stats: DomainStats, changes: Changes, source: StoredPages
) -> None:
    """Pass 2: the pages gone and changed taken out, the changed ones counted in, their
    rows written (the statistics dropped first)."""
    out = [*changes.gone_counted, *sorted(changes.counted)]
    old = {}
    for start in range(0, len(out), RECORDS_PER_READ):
        old.update(store.get_signatures(out[start : start + RECORDS_PER_READ]))
    for key in out:
        if key not in old:
            raise ValueError(f"page {key!r}: counted by the statistics, its signature is not stored")
        stats.remove_page(key, Signature.from_bytes(old[key]))
    if changes.gone:
        store.delete_signatures(changes.gone)
    rows: list[SignatureRow] = []
    read: set[str] = set()
    for view, url, text in source.read(changes.changed):
        read.add(view.url_hash)
        sig = stats.add_page(view.url_hash, url, text)
        rows.append(SignatureRow(view.url_hash, made_from(view.record), 0, 0, "", sig.to_bytes()))
        if len(rows) >= RECORDS_PER_READ:
            store.put_signatures(domain, rows)
            rows = []
    # a page without text: a row saying so (not counted), so it is not read again
    records = store_records(source.pages, [key for key in changes.changed if key not in read])
    rows += [SignatureRow(key, made_from(record), 0, 0, "", b"") for key, record in records]
    store.put_signatures(domain, rows)


def store_records(pages: PageViews, keys: list[str]) -> list[tuple[str, Mapping[str, Any]]]:
    """The records of ``keys`` (no content read)."""
    return [(view.url_hash, view.record) for batch in pages.batches(keys, contents=False) for view in batch]


def content_of(view: PageView) -> PageContent | None:
    content = view.content
    return content if content is not None and isinstance(content.get("text"), str) else None
