"""A store backend as :class:`crawler.cache.base.StoreBase` sees it: :class:`StoreBackend`,
what a backend writes, the defaults it may answer better, and one way to tell the
failure of what it runs.

A new backend writes the primitives declared below (``_query``, ``_read_parts``,
``_read_part_of``, ``_part_keys``, ``_write``, ``_disconnect``, the locks,
``format_info`` and the extraction, input, domain and run methods; table in
docs/architecture.md) and sets its SQL's attributes, its driver's errors
(:attr:`StoreBackend.db_errors`) and its abilities. Failures are said one way for every
backend: a driver error is :class:`CacheStorageError` (said once to
:attr:`StoreBackend.on_storage_error`), an undecodable entry is counted and treated as
missing, a store of another version is refused.
"""

from __future__ import annotations

import json
import logging
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, ClassVar

from crawler.cache.errors import CacheCorruptError, CacheStorageError
from crawler.identity import IDENTITY_VERSION

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator
    from contextlib import AbstractContextManager

    from crawler.cache.sqlpages import PageRows, PartWrites, Touched

#: the stored parts of a page, besides its record
PAGE_PARTS = ("content", "response", "rendered", "parsed")
#: keys of one query of :meth:`StoreBase._read_part_of` (SQLite's older builds take
#: 999 parameters a statement at most)
KEYS_PER_QUERY = 500


class StoreBackend:
    """The primitives and the backend's own ports, declared (see the module's
    docstring); the defaults a backend may answer better; its failures told."""

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

    def _write(self, pages: PageRows, parts: PartWrites, touched: Touched) -> None:
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

    def _connected(self) -> bool:
        raise NotImplementedError

    def is_locked_elsewhere(self) -> bool:
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

    def _select_keys(self, sql: str, keys: list[str]) -> Iterator[tuple[Any, ...]]:
        """The rows of ``sql`` for ``keys``, at most :data:`KEYS_PER_QUERY` of them a
        query, each query's ``{keys}`` given as many placeholders as it has keys."""
        for start in range(0, len(keys), KEYS_PER_QUERY):
            chunk = keys[start : start + KEYS_PER_QUERY]
            yield from self._select(sql.replace("{keys}", ", ".join([self.placeholder] * len(chunk))), chunk)

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
