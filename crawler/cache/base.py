"""What every store does alike, written once: :class:`StoreBase`.

A store keeps its pages in an SQL table ``pages`` (a column for each thing a question
over all pages asks about, see :mod:`crawler.cache.sqlpages`, and the record as JSON
text) and each page's parts (content, raw response, rendering, parsed page) beside
it. The base owns the rest: writes buffered until :meth:`StoreBase.commit` (one
transaction) and read back before it, the recent-pages memory (a page's parts read in
one query), transactions, the failure of a read or a write (:class:`CacheStorageError`,
said once to :attr:`StoreBase.on_storage_error`), unreadable entries (counted, treated
as missing), the version check, and every question over all pages.

What a new backend must write (the primitives; each documented where it is declared
below)::

    _query(sql, args) -> list[tuple]    run one statement of the base's SQL (the pages
                                        table), every row; raise the driver's error
    _read_parts(url_hash) -> dict       a page's stored parts, raw, in one query
    _read_part_of(part, keys) -> dict   one part of many pages, raw, in a few queries
    _part_keys(part) -> list[str]       the keys that have a stored ``part``
    _write(pages, parts)                the pending writes, in one transaction
    _disconnect()                       close the connection
    lock(), writer_lock()               the store's locks
    format_info() -> dict               the format and page-key versions it records
    extractions: read_extraction, write_extraction, delete_extraction,
                 iter_extraction_keys, extraction_name, set_extraction_aside
    inputs:      find_extraction, link_extraction, iter_inputs, delete_input
                 (claim_extraction / release_extraction: a store with several writers)
    domains:     get_domain, put_domain, iter_domains
    runs:        write_run_report, run_report, run_reports, latest_run_report

and sets :attr:`StoreBase.placeholder`, :attr:`~StoreBase.first_recorded`,
:attr:`~StoreBase.byte_order` (its SQL), :attr:`~StoreBase.db_errors` (its driver's
errors) and its abilities (:attr:`~StoreBase.concurrent_writers`,
:attr:`~StoreBase.embedded`).
"""

from __future__ import annotations

import json
import logging
import re
import zlib
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, ClassVar

from crawler.cache.codecs import json_encode, rendered_decode, rendered_encode, response_decode, response_encode
from crawler.cache.errors import CacheCorruptError, CacheStorageError
from crawler.cache.responses import ParsedPage, RenderedPage, StoredResponse
from crawler.cache.sqlpages import FIND_BY_URL, RecentPages, domain_rows, find_page, page_query, page_row
from crawler.identity import IDENTITY_VERSION

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator
    from contextlib import AbstractContextManager


logger = logging.getLogger(__name__)

URL_HASH_RE = re.compile(r"^[0-9a-f]{40}$")
#: the stored parts of a page, besides its record
PAGE_PARTS = ("content", "response", "rendered", "parsed")
#: keys of one query of :meth:`StoreBase._read_part_of` (SQLite's older builds take
#: 999 parameters a statement at most)
KEYS_PER_QUERY = 500
#: the name an unreadable part is counted under (``cache/retrieve_error/<name>``)
PART_TABLES = {"content": "content", "response": "responses", "rendered": "rendered", "parsed": "parsed"}


class StoreBase:
    """Every port of :mod:`crawler.cache.ports` but the primitives a backend writes
    (see the module's docstring)."""

    #: several processes may write at once, each under :meth:`writer_lock` (extraction
    #: claims then matter); else one writer at a time
    concurrent_writers: ClassVar[bool] = False
    #: the store is files in ``EXTRACTED_DOCS_DIR``: ``scrapy cache verify`` checks and
    #: repairs them before it opens the store (a damaged file keeps it from opening)
    embedded: ClassVar[bool] = False
    #: the SQL of the backend: its placeholder, the column giving the order pages
    #: were first recorded in, the collation suffix that sorts text by bytes
    placeholder: ClassVar[str] = "?"
    first_recorded: ClassVar[str] = "rowid"
    byte_order: ClassVar[str] = ""
    #: the driver's errors: a read or write that raises one fails (CacheStorageError)
    db_errors: ClassVar[tuple[type[BaseException], ...]] = ()
    #: the format this code writes (:meth:`check_versions`)
    format_version: ClassVar[int] = 0

    location: str
    readonly: bool

    def __init__(self, location: str, *, readonly: bool) -> None:
        self.location = location
        self.readonly = readonly
        self.read_errors = 0
        #: called with (table, key) for each entry that cannot be decoded
        self.on_read_error: Callable[[str, str], None] | None = None
        #: called with ("read" or "write", what failed) when the database fails on an
        #: open store, before :class:`CacheStorageError` is raised
        self.on_storage_error: Callable[[str, str], None] | None = None
        #: url_hash -> the page table's row of the record put (a snapshot), None: deleted
        self._pages_pending: dict[str, tuple[Any, ...] | None] = {}
        #: (key, part) -> the encoded value put, None: deleted
        self._parts_pending: dict[tuple[str, str], Any] = {}
        #: url_hash -> (last_seen, run_id) of pages only seen again (:meth:`touch_page`)
        self._touched: dict[str, tuple[str, str]] = {}
        #: the stored parts of the pages read last: the first read of a page fetches all
        #: of them in one query. Writable stores only: no one else changes them meanwhile
        #: (the one writer; or, with several, each writes its own pages)
        self._recent = RecentPages()
        #: the pages written since the store was found empty while its one writer
        #: (this process) held its lock (:meth:`_found_empty`): any other page has
        #: nothing stored, and is not asked for (a first crawl reads no page).
        #: ``None``: not known empty
        self._written_since_empty: set[str] | None = None

    # -- the primitives -------------------------------------------------------------

    def _query(self, sql: str, args: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        """Every row of one statement (the base's SQL of the ``pages`` table, with
        :attr:`placeholder`); the driver's error raised as it is."""
        raise NotImplementedError

    def _read_parts(self, url_hash: str) -> dict[str, Any]:
        """The stored parts of a page, raw (as :meth:`_write` was given them), by name
        (:data:`PAGE_PARTS`, and ``""`` for its record's JSON), in one query; a part
        not stored is missing or None."""
        raise NotImplementedError

    def _read_part_of(self, part: str, keys: list[str]) -> dict[str, Any]:
        """The stored ``part`` (one of :data:`PAGE_PARTS`, committed) of each of
        ``keys``, raw (as :meth:`_write` was given it), by key, in as few queries as the
        backend takes (at most :data:`KEYS_PER_QUERY` keys a query); a key without one
        is missing or None."""
        raise NotImplementedError

    def _part_keys(self, part: str) -> list[str]:
        """The keys with a stored ``part`` (committed ones), in a stable order."""
        raise NotImplementedError

    def _write(
        self,
        pages: dict[str, tuple[Any, ...] | None],
        parts: dict[tuple[str, str], Any],
        touched: dict[str, tuple[str, str]],
    ) -> None:
        """Store the pending writes in one transaction, or none of them (raise):
        ``pages`` url_hash -> the page table's row (:func:`page_row`: key, the
        columns, the record's JSON) or None (deleted); ``parts`` (key, part) -> the
        encoded value (str or bytes) or None (deleted); ``touched`` url_hash ->
        (last_seen, run_id): only those two fields of the stored record and the
        ``last_seen`` column change (:meth:`touch_page`)."""
        raise NotImplementedError

    def _disconnect(self) -> None:
        raise NotImplementedError

    def format_info(self) -> dict[str, Any]:
        """What the store records about itself: ``format`` and ``identity_version``."""
        raise NotImplementedError

    def lock(self) -> AbstractContextManager[None]:
        raise NotImplementedError

    def writer_lock(self) -> AbstractContextManager[None]:
        raise NotImplementedError

    # -- failures --------------------------------------------------------------------

    def _where(self) -> str:
        """The store in a message: ``the cache file …``, ``the cache database …``."""
        return f"the cache {self.location}"

    def _error_text(self, exc: BaseException) -> str:
        return str(exc)

    def _failed(self, kind: str, exc: BaseException) -> CacheStorageError:
        what = f"{'Reading' if kind == 'read' else 'Writing'} {self._where()} failed ({self._error_text(exc)})"
        if self.on_storage_error is not None:
            self.on_storage_error(kind, what)
        return CacheStorageError(what)

    @contextmanager
    def _failing(self, kind: str = "read") -> Iterator[None]:
        """The driver's errors inside turned into :class:`CacheStorageError` (said once)."""
        try:
            yield
        except self.db_errors as exc:
            raise self._failed(kind, exc) from None

    def _select(self, sql: str, args: Iterable[Any] = ()) -> list[tuple[Any, ...]]:
        with self._failing("read"):
            return self._query(sql, tuple(args))

    def _unreadable(self, table: str, key: str, exc: BaseException) -> None:
        self.read_errors += 1
        logging.getLogger(type(self).__module__).warning(
            "Unreadable %(table)s entry %(key)s in %(dir)s, treated as missing: %(exc)s",
            {"table": table, "key": key, "dir": self.location, "exc": exc},
        )
        if self.on_read_error is not None:
            self.on_read_error(table, key)

    def _writable(self) -> None:
        if self.readonly:
            raise RuntimeError(f"The cache {self.location} was opened read-only")

    def _json(self, table: str, key: str, raw: Any, kind: type = dict) -> Any:
        """``raw`` JSON decoded if it is a ``kind``; otherwise unreadable (counted), None."""
        if raw is None:
            return None
        try:
            value = json.loads(raw)
        except (ValueError, TypeError) as exc:
            self._unreadable(table, key, exc)
            return None
        if not isinstance(value, kind):
            self._unreadable(table, key, TypeError(f"not a {kind.__name__}: {type(value).__name__}"))
            return None
        return value

    def check_versions(self, *, unrecorded_ok: bool = False) -> None:
        """:class:`CacheCorruptError` when the store was made by another version of the
        crawler (its format or page-key version is not this code's)."""
        made_by = self.format_info()
        accepted = (None,) if unrecorded_ok else ()
        if made_by["format"] not in (*accepted, self.format_version) or made_by["identity_version"] not in (
            *accepted,
            IDENTITY_VERSION,
        ):
            raise CacheCorruptError(
                f"The cache {self.location} was made by another version of the crawler (format "
                f"{made_by['format']}, page keys version {made_by['identity_version']}; this one reads format "
                f"{self.format_version}, keys version {IDENTITY_VERSION}); it was left as it is."
            )

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
        content: dict[str, Any] | None = self._json("content", url_hash, self._part(url_hash, "content"))
        return content

    def get_contents(self, url_hashes: Iterable[str]) -> dict[str, dict[str, Any] | None]:
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
        self._put_part(url_hash, "content", json_encode(content))

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

    def _stored_rows(self, columns: str) -> list[tuple[Any, ...]]:
        return self._select(f"SELECT {columns} FROM pages ORDER BY {self.first_recorded}")

    def iter_page_keys(self) -> Iterator[str]:
        """Every page's key, in the order first recorded (an unreadable record's too)."""
        return iter(merge_keys([row[0] for row in self._stored_rows("key")], self._pages_pending))

    def iter_pages(self) -> Iterator[tuple[str, dict[str, Any]]]:
        """Every readable record, in the order first recorded, pending writes applied."""
        pending = dict(self._pages_pending)
        for key, raw in self._stored_rows("key, record"):
            if key in pending:
                row = pending.pop(key)
                raw = None if row is None else row[-1]
            record = self._record(key, raw)
            if record is not None:
                yield key, record
        for key, row in pending.items():
            record = None if row is None else self._record(key, row[-1])
            if record is not None:
                yield key, record

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
        self.delete_extraction(url_hash)

    # -- questions over all pages (committed pages) -------------------------------------

    def status_counts(self) -> dict[str, int]:
        return {str(s): int(n) for s, n in self._select("SELECT status, count(*) FROM pages GROUP BY status")}

    def extraction_counts(self) -> dict[str, int]:
        rows = self._select("SELECT count(extraction_key), count(extraction_error), count(invalidated) FROM pages")
        row = rows[0] if rows else (0, 0, 0)
        return {"extracted": int(row[0]), "failed": int(row[1]), "invalidated": int(row[2])}

    def domain_summary(self) -> list[dict[str, Any]]:
        return domain_rows(
            self._select(
                "SELECT domain, count(*), sum(CASE WHEN status = 'removed' THEN 1 ELSE 0 END), "
                "count(extraction_key), count(extraction_error), max(last_seen), max(last_changed) FROM pages "
                f"GROUP BY domain ORDER BY 2 DESC, domain{self.byte_order}"
            )
        )

    def query_pages(
        self,
        *,
        domain: str | None = None,
        status: str | None = None,
        changed_since: str | None = None,
        failed: bool = False,
        converter_pending: bool = False,
        empty: bool = False,
        widened: bool = False,
        named_out: bool = False,
        limit: int | None = None,
    ) -> Iterator[tuple[str, dict[str, Any]]]:
        """``(url_hash, record)`` of the committed pages matching every filter given, by
        URL (byte order). ``converter_pending``: pages whose stored text awaits a
        converter upgrade; ``empty``: pages whose last crawl found no text to extract;
        ``widened``: pages whose last parse had its main content widened; ``named_out``:
        pages whose last parse left words out of the content container for a name."""
        sql, params = page_query(
            self.placeholder,
            f"url{self.byte_order}",
            domain=domain,
            status=status,
            changed_since=changed_since,
            failed=failed,
            converter_pending=converter_pending,
            empty=empty,
            widened=widened,
            named_out=named_out,
            limit=limit,
        )
        for key, raw in self._select(sql, params):
            record = self._record(key, raw)
            if record is not None:
                yield key, record

    def find_page(self, url_or_hash: str) -> tuple[str, dict[str, Any]] | None:
        """A page by its url_hash or by any spelling of its URL."""
        sql = FIND_BY_URL.format(p=self.placeholder)
        return find_page(
            url_or_hash,
            lambda key: bool(URL_HASH_RE.match(key)),
            lambda canonical, url: [row[0] for row in self._select(sql, (canonical, url))],
            self.get_page,
        )

    # -- the backend's own: extractions, their index by input, domains, runs -------------
    # (the ports say what each does: crawler.cache.ports)

    def read_extraction(self, url_hash: str) -> dict[str, Any] | None:
        raise NotImplementedError

    def write_extraction(self, url_hash: str, extraction: dict[str, Any]) -> str:
        raise NotImplementedError

    def delete_extraction(self, url_hash: str) -> None:
        raise NotImplementedError

    def iter_extraction_keys(self) -> Iterator[str]:
        raise NotImplementedError

    def extraction_name(self, url_hash: str) -> str:
        raise NotImplementedError

    def set_extraction_aside(self, url_hash: str, suffix: str) -> str:
        raise NotImplementedError

    def find_extraction(self, input_key: str) -> str | None:
        raise NotImplementedError

    def link_extraction(self, input_key: str, url_hash: str) -> None:
        raise NotImplementedError

    def iter_inputs(self) -> Iterator[tuple[str, str]]:
        raise NotImplementedError

    def delete_input(self, input_key: str) -> None:
        raise NotImplementedError

    def get_domain(self, domain: str) -> dict[str, Any] | None:
        raise NotImplementedError

    def put_domain(self, domain: str, record: dict[str, Any]) -> None:
        raise NotImplementedError

    def iter_domains(self) -> Iterator[str]:
        raise NotImplementedError

    def write_run_report(self, run_id: str, report: dict[str, Any]) -> str:
        raise NotImplementedError

    def run_report_location(self, run_id: str) -> str:
        raise NotImplementedError

    def run_report(self, run_id: str) -> dict[str, Any] | None:
        raise NotImplementedError

    def run_reports(self, last: int) -> list[dict[str, Any]]:
        raise NotImplementedError

    def latest_run_report(self) -> dict[str, Any] | None:
        raise NotImplementedError

    def is_locked_elsewhere(self) -> bool:
        raise NotImplementedError

    # -- what the ports ask that a backend may answer better ----------------------------

    def has_run_report(self, run_id: str) -> bool:
        """Whether the run ``run_id`` finished (a run killed before its report has none)."""
        return bool(run_id) and "/" not in run_id and self.run_report(run_id) is not None

    def claim_extraction(self, key: str, owner: str, seconds: float) -> bool:
        """Always granted on a store with one writer (:meth:`writer_lock`): no other
        process extracts from it at the same time."""
        return True

    def release_extraction(self, key: str, owner: str) -> None:
        return None

    def leftovers(self) -> list[str]:
        """What a killed run left behind that nothing refers to (temporary files), by
        name: none on a store that writes in transactions only."""
        return []

    def delete_leftovers(self, names: Iterable[str]) -> None:
        return None

    def size_on_disk(self) -> dict[str, Any] | None:
        """Bytes used, by part; None when the store cannot tell (a server's)."""
        return None

    # -- lifecycle ---------------------------------------------------------------------

    def _pending(self) -> int:
        return len(self._pages_pending) + len(self._parts_pending) + len(self._touched)

    def _clear_pending(self) -> None:
        self._pages_pending.clear()
        self._parts_pending.clear()
        self._touched.clear()

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

    def _connected(self) -> bool:
        raise NotImplementedError

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
        self._clear_pending()

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
