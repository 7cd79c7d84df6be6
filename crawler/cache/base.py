"""What every store does alike, written once: :class:`StoreBase`.

A store keeps its pages in an SQL table ``pages`` (a column for each thing a question
over all pages asks about, see :mod:`crawler.cache.sqlpages`, and the record as JSON
text) and each page's parts (content, raw response, rendering, parsed page) beside
it. The base owns the rest: writes buffered until :meth:`StoreBase.commit` (one
transaction) and read back before it, the recent-pages memory (a page's parts read in
one query), and transactions. It stands on the primitives a backend writes
(:mod:`crawler.cache.backend`, which also says how their failures, unreadable entries
and another version's store are told) and asks the questions over all pages of
:mod:`crawler.cache.pagequeries`.
"""

from __future__ import annotations

import json
import logging
import zlib
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, NamedTuple

from crawler.cache.backend import PAGE_PARTS, StoreBackend
from crawler.cache.blocktable import BlockQueries
from crawler.cache.changetable import ChangeQueries
from crawler.cache.codecs import json_encode, rendered_decode, rendered_encode, response_decode, response_encode
from crawler.cache.errors import CacheStorageError
from crawler.cache.pagequeries import PageQueries
from crawler.cache.records import TEXT_HASH_FIELDS, stored_input_hash, with_text_hashes
from crawler.cache.responses import ParsedPage, RenderedPage, StoredResponse
from crawler.cache.sqlpages import PAGE_COLUMNS, RecentPages, page_row
from crawler.statuses import STATUS_REMOVED

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence


logger = logging.getLogger(__name__)

#: rows of the page table one read of a scan over every page takes (:meth:`StoreBase.iter_pages`)
ROWS_PER_READ = 1000

#: a page's columns that :class:`PageHead` holds, as the page table's row has them
HEAD_COLUMNS = ("url", "domain", "status")


class PageHead(NamedTuple):
    """What a pass over every page asks of each (the removal's, the boilerplate
    analysis'): read from the page table's columns, no record decoded."""

    url_hash: str
    url: str
    domain: str
    status: str


def _head_of(key: str, row: tuple[Any, ...]) -> tuple[Any, ...]:
    """``(key, url, domain, status)`` of a stored row of the head columns, or of a
    pending page-table row (:func:`crawler.cache.sqlpages.page_row`)."""
    if len(row) == len(HEAD_COLUMNS):
        return (key, *row)
    return (key, *(row[1 + PAGE_COLUMNS.index(column)] for column in HEAD_COLUMNS))


def _head(row: tuple[Any, ...]) -> PageHead:
    """The :class:`PageHead` of ``(key, url, domain, status)`` (a column not written: "")."""
    key, url, domain, status = row
    return PageHead(key, url or "", domain or "", status or "")


def _as_given(content: dict[str, Any] | None) -> dict[str, Any] | None:
    """A stored content as it was put: without the hashes the store keeps in it."""
    if content is not None:
        for name in TEXT_HASH_FIELDS:
            content.pop(name, None)
    return content


def _hash_fields_of(content: Mapping[str, Any] | None) -> tuple[Any, Any] | None:
    """``(text_sha256, clean_sha256)`` a content keeps (:func:`with_text_hashes`)."""
    if content is None:
        return None
    return content.get("text_sha256"), content.get("clean_sha256")


def _field_path(field: str) -> tuple[str, ...]:
    """``"a.b"`` as ``("a", "b")``; a name of letters, digits and ``_`` only (it is
    written into a query).

    >>> _field_path("extraction.input_hash")
    ('extraction', 'input_hash')
    """
    path = tuple(field.split("."))
    if not all(part and part.replace("_", "a").isalnum() and part.isascii() for part in path):
        raise ValueError(f"a record field is a dotted name of letters, digits and _, got {field!r}")
    return path


def _field(record: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    """The value at ``path`` in ``record`` (None where a part is missing or not an object)."""
    value: Any = record
    for part in path:
        value = value.get(part) if isinstance(value, dict) else None
    return value


#: the name an unreadable part is counted under (``cache/retrieve_error/<name>``)
PART_TABLES = {"content": "content", "response": "responses", "rendered": "rendered", "parsed": "parsed"}


class StoreBase(PageQueries, ChangeQueries, BlockQueries, StoreBackend):
    """Every port of :mod:`crawler.cache.ports` but the primitives a backend writes
    (:class:`~crawler.cache.backend.StoreBackend`)."""

    def __init__(self, location: str, *, readonly: bool) -> None:
        super().__init__(location, readonly=readonly)
        #: url_hash -> the page table's row of the record put (a snapshot), None: deleted
        self._pages_pending: dict[str, tuple[Any, ...] | None] = {}
        #: (key, part) -> the encoded value put, None: deleted
        self._parts_pending: dict[tuple[str, str], Any] = {}
        #: url_hash -> (last_seen, run_id) of pages only seen again (:meth:`touch_page`)
        self._touched: dict[str, tuple[str, str]] = {}
        #: pages deleted whose boilerplate signature goes at the next commit
        self._signatures_gone: set[str] = set()
        #: the stored parts of the pages read last: the first read of a page fetches all
        #: of them in one query. Writable stores only: no one else changes them meanwhile
        #: (the one writer; or, with several, each writes its own pages)
        self._recent = RecentPages()
        #: the pages written since the store was found empty while its one writer
        #: (this process) held its lock (:meth:`_found_empty`): any other page has
        #: nothing stored, and is not asked for (a first crawl reads no page).
        #: ``None``: not known empty
        self._written_since_empty: set[str] | None = None

    # -- a page's parts --------------------------------------------------------------

    def _nothing_stored(self, key: str) -> bool:
        """Whether nothing can be stored under ``key`` (a page's, an input's): the store
        was found empty under its one writer's lock, and no commit wrote ``key`` since
        (pending writes are the caller's to look at first)."""
        written = self._written_since_empty
        return written is not None and key not in written

    def _page_parts(self, url_hash: str) -> dict[str, Any]:
        """Every stored part of a page, raw: the middleware, the spider and the
        pipeline each read one part of the same page within moments."""
        parts = self._recent.get(url_hash)
        if parts is not None:
            return parts
        if self._nothing_stored(url_hash):
            parts = {}  # nothing stored: the store was empty, and this page is not written since
        else:
            with self._failing("read"):
                parts = self._read_parts(url_hash)
        if not self.readonly:  # a read-only store's writer is another process: nothing kept
            self._recent.put(url_hash, parts)
        return parts

    def _part(self, key: str, part: str) -> Any:
        if (key, part) in self._parts_pending:
            return self._parts_pending[key, part]
        return self._page_parts(key).get(part)

    def _put_part(self, key: str, part: str, value: Any) -> None:
        self._writable()
        self._parts_pending[key, part] = value

    def _body(self, url_hash: str, part: str, decode: Callable[[bytes], Any]) -> Any:
        raw = self._part(url_hash, part)
        if raw is None:
            return None
        try:
            if not isinstance(raw, bytes):
                raise TypeError(f"not a packed body: {type(raw).__name__}")
            return decode(raw)
        except (ValueError, zlib.error, UnicodeDecodeError, TypeError) as exc:
            self._unreadable(PART_TABLES[part], url_hash, exc)
            return None

    def _keys_of(self, part: str) -> list[str]:
        """The keys with a ``part``, pending writes applied."""
        with self._failing("read"):
            stored = self._part_keys(part)
        return merge_keys(stored, {key: v for (key, p), v in self._parts_pending.items() if p == part})

    def get_content(self, url_hash: str) -> dict[str, Any] | None:
        return _as_given(self._json("content", url_hash, self._part(url_hash, "content")))

    def get_contents(self, url_hashes: Iterable[str]) -> dict[str, dict[str, Any] | None]:
        return {key: _as_given(content) for key, content in self._stored_contents(url_hashes).items()}

    def _stored_contents(self, url_hashes: Iterable[str]) -> dict[str, dict[str, Any] | None]:
        """:meth:`get_content` of each of ``url_hashes`` (every key given, in order; None:
        none stored, or unreadable and counted), the ones to fetch in a few queries
        (:meth:`_read_part_of`) instead of one each: the stages read every page's
        content at the close, long after the crawl read it. Pending writes and the
        pages kept after a read answer first, as for :meth:`get_content`; none is kept."""
        raws: dict[str, Any] = {}
        fetch: list[str] = []
        for key in url_hashes:
            if (key, "content") in self._parts_pending:
                raws[key] = self._parts_pending[key, "content"]
                continue
            parts = self._recent.get(key)
            if parts is not None:
                raws[key] = parts.get("content")
            elif self._nothing_stored(key):
                raws[key] = None
            else:
                raws[key] = None
                fetch.append(key)
        if fetch:
            with self._failing("read"):
                raws.update(self._read_part_of("content", list(dict.fromkeys(fetch))))
        return {key: self._json("content", key, raw) for key, raw in raws.items()}

    def put_content(self, url_hash: str, content: dict[str, Any]) -> None:
        """The page's content, with the hashes of its texts (:func:`with_text_hashes`)."""
        self._put_part(url_hash, "content", json_encode(with_text_hashes(content)))

    def get_input_hashes(self, url_hashes: Iterable[str], *, use_clean: bool) -> dict[str, str | None]:
        """What an extraction's ``input_hash`` of each page's content is (the SHA-256 of
        :func:`page_text`), from the hashes kept in it (:func:`with_text_hashes`), by key
        (every key given, in order; None: no content, or one that does not say: read
        it). Where the backend reads them in its queries (:meth:`_text_hash_fields`) no
        content is decoded here: the extraction plan of a recrawl asks it of every page."""
        fields: dict[str, tuple[Any, Any] | None] = {}
        fetch: list[str] = []
        for key in url_hashes:
            if (key, "content") in self._parts_pending:
                fields[key] = _hash_fields_of(self._json("content", key, self._parts_pending[key, "content"]))
            else:
                fields[key] = None
                fetch.append(key)
        fetch = list(dict.fromkeys(fetch))
        if fetch:
            with self._failing("read"):
                fields.update(self._text_hash_fields(fetch))
        return {key: None if got is None else stored_input_hash(*got, use_clean) for key, got in fields.items()}

    def _text_hash_fields(self, url_hashes: list[str]) -> dict[str, tuple[Any, Any] | None]:
        """``(text_sha256, clean_sha256)`` of each committed content: decoded
        here (a backend whose queries read JSON fields does it there)."""
        return {key: _hash_fields_of(content) for key, content in self._stored_contents(url_hashes).items()}

    def iter_content_keys(self) -> Iterator[str]:
        return iter(self._keys_of("content"))

    def get_response(self, url_hash: str) -> StoredResponse | None:
        response = self._body(url_hash, "response", response_decode)
        return response if isinstance(response, StoredResponse) else None

    def put_response(self, url_hash: str, response: StoredResponse) -> None:
        self._put_part(url_hash, "response", response_encode(response))

    def get_rendered(self, url_hash: str) -> RenderedPage | None:
        page = self._body(url_hash, "rendered", rendered_decode)
        return page if isinstance(page, RenderedPage) else None

    def put_rendered(self, url_hash: str, page: RenderedPage) -> None:
        self._put_part(url_hash, "rendered", rendered_encode(page))

    def iter_rendered_keys(self) -> Iterator[str]:
        return iter(self._keys_of("rendered"))

    def delete_rendered(self, url_hash: str) -> None:
        self._put_part(url_hash, "rendered", None)

    def get_parsed(self, url_hash: str) -> ParsedPage | None:
        data = self._json("parsed", url_hash, self._part(url_hash, "parsed"))
        return None if data is None else ParsedPage.from_json(data)

    def put_parsed(self, url_hash: str, page: ParsedPage) -> None:
        self._put_part(url_hash, "parsed", json_encode(page.to_json()))

    # -- pages -----------------------------------------------------------------------

    def _record(self, url_hash: str, raw: Any) -> dict[str, Any] | None:
        record: dict[str, Any] | None = self._json("pages", url_hash, raw)
        seen = self._touched.get(url_hash)
        if record is not None and seen is not None:
            record["last_seen"], record["run_id"] = seen
        return record

    def get_page(self, url_hash: str) -> dict[str, Any] | None:
        if url_hash in self._pages_pending:
            row = self._pages_pending[url_hash]
            return None if row is None else self._record(url_hash, row[-1])
        return self._record(url_hash, self._page_parts(url_hash).get(""))

    def get_pages(self, url_hashes: Iterable[str]) -> dict[str, dict[str, Any] | None]:
        """:meth:`get_page` of each of ``url_hashes`` (every key given, in order; None:
        no record, or unreadable and counted), the ones to fetch in a few queries (at
        most :data:`KEYS_PER_QUERY` keys a query) instead of one each, as
        :meth:`get_contents` reads contents: the report stage reads a run's records in
        batches. Pending writes and the pages kept after a read answer first."""
        raws: dict[str, Any] = {}
        fetch: list[str] = []
        for key in url_hashes:
            if key in self._pages_pending:
                row = self._pages_pending[key]
                raws[key] = None if row is None else row[-1]
                continue
            parts = self._recent.get(key)
            raws[key] = None if parts is None else parts.get("")
            if parts is None and not self._nothing_stored(key):
                fetch.append(key)
        raws.update(
            self._select_keys("SELECT key, record FROM pages WHERE key IN ({keys})", list(dict.fromkeys(fetch)))
        )
        return {key: self._record(key, raw) for key, raw in raws.items()}

    def get_page_heads(self, url_hashes: Iterable[str]) -> dict[str, PageHead | None]:
        """The :class:`PageHead` of each of ``url_hashes`` (every key given, in order;
        None: no page), from the page table's columns (no record decoded), pending
        writes applied, at most :data:`KEYS_PER_QUERY` keys a query: a pass over a run's
        pages that needs their status decodes the records of a few."""
        heads: dict[str, PageHead | None] = {}
        fetch: list[str] = []
        for key in url_hashes:
            row = self._pages_pending.get(key)
            if key in self._pages_pending:
                heads[key] = None if row is None else _head(_head_of(key, row))
            else:
                heads[key] = None
                fetch.append(key)
        columns = ", ".join(("key", *HEAD_COLUMNS))
        query = f"SELECT {columns} FROM pages WHERE key IN ({{keys}})"
        for row in self._select_keys(query, list(dict.fromkeys(fetch))):
            heads[row[0]] = _head(row)
        return heads

    def _json_fields_sql(self, column: str, paths: Sequence[tuple[str, ...]]) -> str | None:
        """The SQL of a JSON array of the values at ``paths`` in the JSON object of
        ``column``, NULL when the column holds no valid JSON object; None: the backend
        decodes the column to read them (what :class:`StoreBase` does)."""
        return None

    def get_record_fields(self, url_hashes: Iterable[str], fields: Sequence[str]) -> dict[str, tuple[Any, ...] | None]:
        """``fields`` of each page's record (a dotted path: ``extraction.input_hash``; a
        field not there: None), by key (every key given, in order; None: no record, or
        unreadable and counted), pending writes applied: where the backend reads them in
        its queries (:meth:`_json_fields_sql`) no record is decoded here, so a pass over
        every page that asks a few fields of each does not pay for whole records."""
        paths = [_field_path(field) for field in fields]
        values_sql = self._json_fields_sql("record", paths)
        if values_sql is None:
            return {
                key: None if record is None else tuple(_field(record, path) for path in paths)
                for key, record in self.get_pages(url_hashes).items()
            }
        found: dict[str, tuple[Any, ...] | None] = {}
        fetch: list[str] = []
        for key in url_hashes:
            if key in self._pages_pending:
                row = self._pages_pending[key]
                record = None if row is None else self._record(key, row[-1])
                found[key] = None if record is None else tuple(_field(record, path) for path in paths)
            else:
                found[key] = None
                fetch.append(key)
        unreadable: list[str] = []
        query = f"SELECT key, {values_sql} FROM pages WHERE key IN ({{keys}})"
        for key, values in self._select_keys(query, list(dict.fromkeys(fetch))):
            if values is None:
                unreadable.append(key)
            else:
                found[key] = tuple(json.loads(values)[: len(paths)])
        for key, record in self.get_pages(unreadable).items() if unreadable else ():  # (counted there)
            found[key] = None if record is None else tuple(_field(record, path) for path in paths)
        touched = [index for index, path in enumerate(paths) if path in (("last_seen",), ("run_id",))]
        if touched and self._touched:
            for key, got in found.items():
                if got is not None and key in self._touched and key not in self._pages_pending:
                    seen = dict(zip(("last_seen", "run_id"), self._touched[key], strict=True))
                    found[key] = tuple(seen[paths[i][0]] if i in touched else v for i, v in enumerate(got))
        return found

    def put_page(self, url_hash: str, record: dict[str, Any]) -> None:
        self._writable()
        self._touched.pop(url_hash, None)
        self._pages_pending[url_hash] = page_row(url_hash, dict(record))

    def touch_page(self, url_hash: str, last_seen: str, run_id: str) -> None:
        """The page's ``last_seen`` and ``run_id`` moved, and nothing else of its
        record (a page seen again unchanged): stored as a narrow update, not the whole
        record written again. A page with a record put and not yet committed has it
        put again instead."""
        self._writable()
        row = self._pages_pending.get(url_hash)
        if row is not None:
            record = json.loads(row[-1])
            record["last_seen"], record["run_id"] = last_seen, run_id
            self._pages_pending[url_hash] = page_row(url_hash, record)
        elif url_hash not in self._pages_pending:
            self._touched[url_hash] = (last_seen, run_id)

    def _scan(self, columns: str) -> Iterator[tuple[Any, ...]]:
        """The committed rows of ``pages`` (``columns``) recorded before the scan began, in
        the order first recorded, :data:`ROWS_PER_READ` at a time: a scan of every page
        holds one batch of rows, never the table (a store of a million pages)."""
        order = self.first_recorded
        top = self._select(f"SELECT max({order}) FROM pages")
        end = top[0][0] if top and top[0][0] is not None else None
        last: Any = None
        while end is not None:
            after = "" if last is None else f" AND {order} > {self.placeholder}"
            rows = self._select(
                f"SELECT {order}, {columns} FROM pages WHERE {order} <= {self.placeholder}{after} "
                f"ORDER BY {order} LIMIT {ROWS_PER_READ}",
                (end,) if last is None else (end, last),
            )
            for row in rows:
                yield row[1:]
            if len(rows) < ROWS_PER_READ:
                return
            last = rows[-1][0]

    def _scan_pending(self, columns: str, of_row: Callable[[str, tuple[Any, ...]], Any]) -> Iterator[Any]:
        """:meth:`_scan` with the writes not committed applied: ``of_row(key, row)`` of each
        stored page (``row``: its pending page-table row, or the stored ``columns``) and
        then of each page pending when the scan began that the scan did not meet (a new
        page; one a commit during the scan wrote). A page deleted and not committed is
        left out."""
        pending = dict.fromkeys(self._pages_pending)  # (in the order they were put)
        for key, *stored in self._scan(columns):
            pending.pop(key, None)
            if key in self._pages_pending:
                row = self._pages_pending[key]
                if row is not None:
                    yield of_row(key, row)
            else:
                yield of_row(key, tuple(stored))
        for key in pending:
            row = self._pages_pending.get(key)
            if row is not None:
                yield of_row(key, row)
            elif key not in self._pages_pending and (record := self.get_page(key)) is not None:
                yield of_row(key, page_row(key, record))  # committed meanwhile

    def iter_page_keys(self) -> Iterator[str]:
        """Every page's key, in the order first recorded (an unreadable record's too)."""
        return self._scan_pending("key", lambda key, _row: key)

    def iter_pages(self) -> Iterator[tuple[str, dict[str, Any]]]:
        """Every readable record, in the order first recorded, pending writes applied,
        read :data:`ROWS_PER_READ` at a time."""
        for key, raw in self._scan_pending("key, record", lambda key, row: (key, row[-1])):
            record = self._record(key, raw)
            if record is not None:
                yield key, record

    def iter_page_heads(self) -> Iterator[PageHead]:
        """Every page's :class:`PageHead` (its url, domain and status: the page table's
        columns, no record decoded), in the order first recorded, pending writes applied."""
        columns = ", ".join(("key", *HEAD_COLUMNS))
        for row in self._scan_pending(columns, _head_of):
            yield _head(row)

    def iter_live_keys(self, domain: str) -> Iterator[str]:
        """The keys of the pages of ``domain`` not removed, in ascending key order (as
        Python orders them), pending writes applied, :data:`ROWS_PER_READ` at a time
        from the ``pages_domain_key`` index: a pass in key order that never holds the
        domain's keys."""
        at_domain, at_status = (1 + PAGE_COLUMNS.index(column) for column in ("domain", "status"))

        def live(row: tuple[Any, ...] | None) -> bool:
            return row is not None and row[at_domain] == domain and row[at_status] != STATUS_REMOVED

        pending = sorted(self._pages_pending.items())  # (bounded by the commits)
        taken = 0
        key_order, p = f"key{self.byte_order}", self.placeholder
        last: str | None = None
        while True:
            rows = self._select(
                f"SELECT key, status FROM pages WHERE domain = {p}{'' if last is None else f' AND {key_order} > {p}'} "
                f"ORDER BY {key_order} LIMIT {ROWS_PER_READ}",
                (domain,) if last is None else (domain, last),
            )
            for key, status in rows:
                while taken < len(pending) and pending[taken][0] < key:
                    if live(pending[taken][1]):
                        yield pending[taken][0]
                    taken += 1
                if taken < len(pending) and pending[taken][0] == key:
                    if live(pending[taken][1]):
                        yield key
                    taken += 1
                elif status != STATUS_REMOVED:
                    yield key
            if len(rows) < ROWS_PER_READ:
                break
            last = rows[-1][0]
        for key, row in pending[taken:]:
            if live(row):
                yield key

    def count_pages(self) -> int:
        if self._pages_pending:
            return sum(1 for _ in self.iter_page_keys())
        rows = self._select("SELECT count(*) FROM pages")
        return int(rows[0][0]) if rows else 0

    def delete_page(self, url_hash: str, *, keep_fetched: bool = False) -> None:
        """Everything kept for one page: record, content, stored and rendered responses,
        what it parsed into, its extraction; ``keep_fetched``: the responses and what
        they parsed into stay (a URL found to be another page's spelling: its validators
        serve its next conditional request)."""
        self._writable()
        self._touched.pop(url_hash, None)
        self._pages_pending[url_hash] = None
        for part in ("content",) if keep_fetched else PAGE_PARTS:
            self._parts_pending[url_hash, part] = None
        self._signatures_gone.add(url_hash)
        self.delete_extraction(url_hash)

    # -- lifecycle ---------------------------------------------------------------------

    def _pending(self) -> int:
        return len(self._pages_pending) + len(self._parts_pending) + len(self._touched)

    def _clear_pending(self) -> None:
        self._pages_pending.clear()
        self._parts_pending.clear()
        self._touched.clear()
        self._signatures_gone.clear()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """The writes made inside are stored together, by one commit at its end, or not
        at all: an exception inside drops them. What was pending before is committed
        first (it is not this transaction's)."""
        self.commit()
        try:
            yield
        except BaseException:
            self._clear_pending()
            raise
        self.commit()

    def _found_empty(self, empty: bool) -> None:
        """Called by a store with one writer when its writer lock is taken (``empty``:
        whether it holds no page and no part of one then) and when it is released
        (False): while the lock is held, no one else writes it."""
        self._written_since_empty = set() if empty and not self.readonly and not self.concurrent_writers else None

    def commit(self) -> None:
        """Write what is pending in one transaction. Raises :class:`CacheStorageError`
        when it fails: nothing of it is written (the pending writes are kept, a later
        commit tries them again), nothing committed before is touched."""
        if self.readonly or not self._connected() or not self._pending():
            return
        written = self._written_since_empty
        if written is not None:  # (before the write: counted as written even if it fails)
            written.update(self._pages_pending, (key for key, _ in self._parts_pending), self._touched)
        with self._failing("write"):
            self._write(self._pages_pending, self._parts_pending, self._touched)
        self._recent.committed(self._pages_pending, self._parts_pending, self._touched, PAGE_PARTS)
        gone, self._signatures_gone = self._signatures_gone, set()
        self._clear_pending()
        if gone:  # (after the pages: a signature left by a failure here is a removed page's)
            self.drop_signatures(gone)

    def close(self) -> None:
        try:
            self.commit()
        except Exception as exc:
            logger.error(
                "Writing the cache's last %(n)d writes at close failed, they are lost: %(exc)s",
                {"n": self._pending(), "exc": exc},
                exc_info=not isinstance(exc, CacheStorageError),  # a traceback for the unforeseen only
            )
        self._disconnect()


def merge_keys(stored: list[str], pending: dict[str, Any]) -> list[str]:
    """``stored`` keys with the pending writes applied (deletes dropped, new keys appended).

    >>> merge_keys(["a", "b"], {"b": None, "c": 1, "a": 2})
    ['a', 'c']
    """
    if not pending:
        return stored
    known = set(stored)
    keys = [key for key in stored if pending.get(key, key) is not None]
    keys += [key for key, value in pending.items() if value is not None and key not in known]
    return keys
