"""The default, embedded store: one SQLite database file plus readable JSON files.

Layout of the cache directory (``EXTRACTED_DOCS_DIR``)::

    cache.sqlite        one database (WAL), two tables:
      kv                  sqlitedict's key-value table, JSON values (bodies zlib-packed):
                          content/{url_hash}   page content (markdown, hashed fields)
                          response/{url_hash}  raw response and validators (zlib)
                          rendered/{url_hash}  browser rendering and its raw HTML's hash (zlib)
                          parsed/{url_hash}    what the spider made of the stored response
                          input/{input_key}    url_hash of an extraction of that input
                          store/format, store/identity_version
      pages               page records: the record (JSON) and a column for each thing
                          queried (status, domain, url, canonical_url, last_seen,
                          last_changed, extraction key, error, invalidated, ...)
    extractions/{url_hash}.json         what the extractor returned (a person can open it)
    boilerplate/{sha256(domain)}.json   per-domain boilerplate fingerprint, parameters, statistics
    runs/{run_id}.json, runs/latest.json
    .lock               the writer's lock (:meth:`SqliteDocStore.lock`)

A cache of the older layout (``index.sqlite``, ``content.sqlite``, ... and
``metadata/``) is migrated into this one the first time it is opened
(:mod:`crawler.cache.migrate`).

The key-value table is a ``SqliteDict`` (the project's sqlitedict, JSON-encoded, never
pickle: a tampered cache file cannot run code); the page table is plain SQL executed
through the same sqlitedict connection, so one :meth:`SqliteDocStore.commit` is one
transaction over both. Writes wait in memory until that commit (a reader in this
process sees them at once); a failing statement comes back to the caller as
:class:`CacheStorageError` (the commit never goes through sqlitedict's own
``commit()``, whose failure stops its thread and leaves the caller waiting forever).
Files are written to a temporary name and renamed, so a reader (or a crash) never
sees half a file.
"""

from __future__ import annotations

import copy
import json
import logging
import os
import re
import sqlite3
import threading
import zlib
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlitedict import SqliteDict, SqliteMultithread

from crawler.cache.codecs import (
    atomic_write_json,
    json_encode,
    kv_decode,
    kv_encode,
    read_json,
    read_json_dict,
    rendered_decode,
    rendered_encode,
    response_decode,
    response_encode,
)
from crawler.cache.lock import CacheLock
from crawler.cache.perms import CacheAccessError, access_problem, private_file, private_mkdir
from crawler.cache.sqlpages import FIND_BY_URL, RecentPages, domain_rows, find_page, page_query
from crawler.cache.store import (
    CacheCorruptError,
    CacheMissingError,
    CacheStorageError,
    EntryChecks,
    ParsedPage,
    RenderedPage,
    StoredResponse,
)
from crawler.identity import IDENTITY_VERSION
from crawler.lib.hashing import sha256_hex
from crawler.lib.secrets import mask_data

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator
    from contextlib import AbstractContextManager

logger = logging.getLogger(__name__)

__all__ = [
    "DB_NAME",
    "FORMAT_VERSION",
    "SqliteDocStore",
    "atomic_write_json",  # the helpers of crawler.cache.codecs, where they were before
    "check_sqlite_file",
    "index_lost",
    "json_encode",
    "kv_decode",
    "page_row",
    "read_json",
    "read_json_dict",
    "response_decode",
]

DB_NAME = "cache.sqlite"
#: the layout of ``cache.sqlite``; 1 was the five files of the older layout
FORMAT_VERSION = 3
URL_HASH_RE = re.compile(r"^[0-9a-f]{40}$")

#: key prefixes of the key-value table
CONTENT, RESPONSE, RENDERED, PARSED, INPUT, STORE = "content/", "response/", "rendered/", "parsed/", "input/", "store/"
PAGE_PARTS = (CONTENT, RESPONSE, RENDERED, PARSED)

#: the page table: a column for each thing a question over all pages asks about
PAGE_COLUMNS = (
    "url", "canonical_url", "domain", "status", "last_seen", "last_changed",
    "extraction_key", "extraction_error", "invalidated", "converter_pending", "empty_input",
    "selection_widened",
)  # fmt: skip
SCHEMA = f"""
    CREATE TABLE IF NOT EXISTS kv (key TEXT PRIMARY KEY, value BLOB);
    CREATE TABLE IF NOT EXISTS pages (key TEXT PRIMARY KEY, {", ".join(f"{c} TEXT" for c in PAGE_COLUMNS)},
        record TEXT NOT NULL);
    CREATE INDEX IF NOT EXISTS pages_url ON pages (url);
    CREATE INDEX IF NOT EXISTS pages_canonical_url ON pages (canonical_url);
    CREATE INDEX IF NOT EXISTS pages_domain_status ON pages (domain, status);
"""
_UPSERT_PAGE = (
    f"INSERT INTO pages (key, {', '.join(PAGE_COLUMNS)}, record) VALUES ({', '.join('?' * (len(PAGE_COLUMNS) + 2))}) "
    f"ON CONFLICT (key) DO UPDATE SET {', '.join(f'{c} = excluded.{c}' for c in (*PAGE_COLUMNS, 'record'))}"
)


def page_row(url_hash: str, record: dict[str, Any]) -> tuple[Any, ...]:
    """The page table's row of ``record``: its queried columns, then the record."""
    extraction = record.get("extraction")
    error = record.get("extraction_error")
    values = {
        **{column: record.get(column) for column in PAGE_COLUMNS},
        "extraction_key": extraction.get("input_key") if isinstance(extraction, dict) else None,
        "extraction_error": error.get("at") if isinstance(error, dict) else None,
    }
    return (url_hash, *(_text(values[column]) for column in PAGE_COLUMNS), json_encode(record))


def _text(value: Any) -> str | None:
    return value if value is None or isinstance(value, str) else str(value)


SQLITE_MAGIC = b"SQLite format 3\x00"
#: one update of a domain record at a time in this process (``update_domain``)
_DOMAIN_UPDATES = threading.Lock()


def check_sqlite_file(path: Path, *, thorough: bool = False) -> None:
    """Raise ``sqlite3.DatabaseError`` if ``path`` exists and is not a readable
    SQLite database (checked before it is opened for use). With
    ``thorough``, every page of it is checked (``PRAGMA quick_check``), which finds
    damage beyond the header and costs a full read."""
    if not path.exists() or path.stat().st_size == 0:
        return
    with path.open("rb") as handle:
        if handle.read(len(SQLITE_MAGIC)) != SQLITE_MAGIC:
            raise sqlite3.DatabaseError("file is not a database")
    try:
        _check_connection(sqlite3.connect(f"file:{path}?mode=ro", uri=True), thorough=thorough)
    except sqlite3.DatabaseError:
        if not os.access(path, os.W_OK):
            raise
        # a read-only connection may misread a write-ahead log a crawl left (killed, or
        # closing as this reads): a plain connection replays it first, as SQLite does
        # for any writer; only what fails then is damage
        _check_connection(sqlite3.connect(str(path)), thorough=thorough)


def _check_connection(conn: sqlite3.Connection, *, thorough: bool) -> None:
    try:
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        if thorough:
            rows = conn.execute("PRAGMA quick_check(20)").fetchall()
            if not rows or rows[0][0] != "ok":
                raise sqlite3.DatabaseError(f"damaged: {_first_problem(rows)}")
    finally:
        conn.close()


def _first_problem(rows: list[tuple[str]]) -> str:
    """One line from ``PRAGMA quick_check``'s answer (a list of problems, one may span lines)."""
    lines = [line for row in rows for line in str(row[0]).splitlines() if line and not line.startswith("***")]
    if not lines:
        return "no answer"
    return lines[0] + (f" and {len(lines) - 1} more problem(s)" if len(lines) > 1 else "")


def prepare_database(path: Path) -> None:
    """Create ``path`` (0600, WAL) with the store's tables if missing, with a plain
    connection, and prove it writable (a read-only file system, a file the user cannot
    write): a write that is never committed."""
    private_file(path)
    conn = sqlite3.connect(path, timeout=30, isolation_level=None)
    try:
        conn.execute("PRAGMA journal_mode = WAL")  # readers (cache commands) never block the crawl
        conn.executescript(SCHEMA)
        for key, value in ((STORE + "format", FORMAT_VERSION), (STORE + "identity_version", IDENTITY_VERSION)):
            conn.execute("INSERT OR IGNORE INTO kv (key, value) VALUES (?, ?)", (key, json_encode(value)))
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("DELETE FROM kv WHERE key = ?", ("\0probe",))
        conn.execute("ROLLBACK")
    finally:
        conn.close()


#: what brings a database of an older format to this one: format -> the statements
#: that make it the next format (see :func:`upgrade_database`)
FORMAT_UPGRADES: dict[int, tuple[str, ...]] = {
    # 3: the page table's selection_widened column (no record of format 2 holds the field)
    2: ("ALTER TABLE pages ADD COLUMN selection_widened TEXT",),
}


def upgrade_database(path: Path) -> int | None:
    """Bring ``path``, a database of an older format, to :data:`FORMAT_VERSION` in one
    transaction (:data:`FORMAT_UPGRADES`), on its first open by this code, whoever opens
    it (a crawl, or a command that only reads, as the older layout is migrated): a
    column added, the format noted. Returns the format it had, or ``None`` when there
    was nothing to do (a format this code cannot upgrade is refused by the open)."""
    conn = sqlite3.connect(path, timeout=30, isolation_level=None)
    try:
        if _stored_format(conn) not in FORMAT_UPGRADES:
            return None
        conn.execute("BEGIN IMMEDIATE")
        try:
            old = _stored_format(conn)  # again, under the write lock: another process may have done it
            if old not in FORMAT_UPGRADES:
                conn.execute("ROLLBACK")
                return None
            for version in range(old, FORMAT_VERSION):
                for statement in FORMAT_UPGRADES[version]:
                    conn.execute(statement)
            conn.execute("UPDATE kv SET value = ? WHERE key = ?", (json_encode(FORMAT_VERSION), STORE + "format"))
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
    except sqlite3.DatabaseError as exc:
        raise CacheCorruptError(
            f"The cache file {path} is of an older format; opening it adds what this version of the crawler "
            f"keeps (format {FORMAT_VERSION}), which failed ({exc}). It was left as it is."
        ) from exc
    finally:
        conn.close()
    logger.info(
        "Upgraded the cache file %(path)s from format %(old)s to %(new)s",
        {"path": path, "old": old, "new": FORMAT_VERSION},
    )
    return int(old)


def _stored_format(conn: sqlite3.Connection) -> Any:
    """The format a database records (``None``: none recorded, or no ``kv`` table)."""
    try:
        row = conn.execute("SELECT value FROM kv WHERE key = ?", (STORE + "format",)).fetchone()
    except sqlite3.OperationalError:
        return None
    try:
        return None if row is None else kv_decode(row[0])
    except ValueError:
        return None


class _QuietStoreThreads(logging.Filter):
    """sqlitedict logs every failed statement of its thread as a page of ERROR lines;
    the store reports each failure itself (:class:`CacheStorageError`), once."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.threadName or "").startswith(THREAD_NAME) and not str(record.msg).startswith(
            "An exception occurred from a previous statement"
        )


THREAD_NAME = "extracted-docs-store"
logging.getLogger("sqlitedict.SqliteMultithread").addFilter(_QuietStoreThreads())


class _FetchingCursor:
    """A cursor that reads every row of a statement while executing it.

    sqlitedict's thread executes a statement inside ``try`` (an error is handed to the
    caller) but then iterates the cursor outside it: SQLite reads the rows after the
    first one during that iteration, so a damaged page met there raised out of the
    thread, which ended, and the caller waited for the rest of its rows forever. Here
    every row is read inside ``execute``, so that error is the statement's.
    """

    def __init__(self, cursor: sqlite3.Cursor) -> None:
        self._cursor = cursor
        self._rows: list[Any] = []

    def execute(self, sql: str, args: Any = ()) -> None:
        self._rows = []
        self._rows = self._cursor.execute(sql, args).fetchall()

    def __iter__(self) -> Iterator[Any]:
        rows, self._rows = self._rows, []
        return iter(rows)


class _StoreConnection(SqliteMultithread):  # type: ignore[misc]
    def _connect(self) -> tuple[sqlite3.Connection, _FetchingCursor]:
        conn, cursor = super()._connect()
        return conn, _FetchingCursor(cursor)


class _StoreDict(SqliteDict):  # type: ignore[misc]
    """sqlitedict's dictionary on a connection whose statements' errors all come back
    (see :class:`_FetchingCursor`; sqlitedict is pinned, 2.1.0)."""

    def _new_conn(self) -> _StoreConnection:
        return _StoreConnection(
            self.filename, autocommit=self.autocommit, journal_mode=self.journal_mode, outer_stack=self._outer_stack
        )


class SqliteDocStore(EntryChecks):
    """The embedded store (every port of :mod:`crawler.cache.ports`) in one directory."""

    #: check every page of the database when opened for writing (``PRAGMA quick_check``)
    check_on_open = True

    def __init__(
        self, directory: str | Path, *, readonly: bool = False, create: bool = True, rebuilding: bool = False
    ) -> None:
        self.directory = Path(directory)
        self.location = str(self.directory)
        self.path = self.directory / DB_NAME
        self.readonly = readonly
        self.read_errors = 0
        self.on_read_error: Callable[[str, str], None] | None = None
        #: called with ("read" or "write", what failed) when SQLite fails on an open
        #: store, before :class:`CacheStorageError` is raised
        self.on_storage_error: Callable[[str, str], None] | None = None
        self._lock = CacheLock(self.directory)
        #: writes since the last commit: kv key -> value (None: delete); url_hash -> record
        self._kv_pending: dict[str, Any] = {}
        #: url_hash -> the page table's row of the record put (a snapshot: what the caller
        #: does to its dict afterwards changes nothing stored), None: deleted
        self._pages_pending: dict[str, tuple[Any, ...] | None] = {}
        self._kv: _StoreDict | None = None
        #: the stored parts of the pages read last (url_hash -> {key: raw value}):
        #: the first read of a page fetches all of them in one query. Writable stores
        #: only: the writer holds the lock, so no one else changes what it read.
        self._recent = RecentPages()
        from crawler.cache.migrate import migrate_if_needed  # the migration builds a store of its own

        migrate_if_needed(self.directory)
        if not rebuilding and index_lost(self.directory):
            raise CacheCorruptError(
                f"The cache database {self.path} is missing or empty but extractions/ holds extractions: "
                "`scrapy cache verify --repair` rebuilds its page records."
            )
        if (readonly or not create) and not rebuilding and not self.path.exists():
            raise CacheMissingError(f"No cache in {self.directory}: run a crawl first.")
        if not readonly:
            for sub in ("extractions", "runs", "boilerplate"):
                private_mkdir(self.directory / sub)
        self._open()

    def _open(self) -> None:
        """Check the file with a plain connection (every page readable, unless
        read-only the file writable; a file of an older format upgraded), then open it
        through sqlitedict."""
        if self.readonly and (not self.path.exists() or self.path.stat().st_size == 0):
            return  # nothing stored yet: every read finds nothing
        try:
            check_sqlite_file(self.path, thorough=self.check_on_open and not self.readonly)
            if self.path.exists() and self.path.stat().st_size:
                upgrade_database(self.path)
            if not self.readonly:
                prepare_database(self.path)
            kv = _StoreDict(
                str(self.path),
                tablename="kv",
                flag="r" if self.readonly else "c",
                journal_mode="WAL",
                encode=kv_encode,
                decode=kv_decode,
                outer_stack=False,  # a stack extracted per call costs more than the call
                timeout=30,
            )
        except CacheCorruptError:
            raise  # an upgrade that failed says so itself
        except (sqlite3.DatabaseError, OSError, RuntimeError) as exc:
            if (cause := access_problem(self.path, exc, write=not self.readonly)) is not None:
                raise CacheAccessError(cause) from exc  # permissions or a lock: not damage
            raise CacheCorruptError(
                f"The cache file {self.path} cannot be read or written ({exc}). It was left as it is: "
                "`scrapy cache verify --repair` moves it aside (its page records are rebuilt from "
                "extractions/)."
            ) from exc
        kv.conn.name = THREAD_NAME
        try:
            # sqlitedict turns synchronous off; WAL with NORMAL never corrupts on a crash
            kv.conn.select_one("PRAGMA synchronous = NORMAL")
            kv.conn.select_one("SELECT 1 FROM pages LIMIT 1")  # a table missing (a read-only open) fails here
        except sqlite3.DatabaseError as exc:
            kv.close()
            raise CacheCorruptError(f"The cache file {self.path} cannot be read ({exc}).") from exc
        self._kv = kv
        made_by = self.format_info()
        if made_by["format"] not in (None, FORMAT_VERSION) or made_by["identity_version"] not in (
            None,
            IDENTITY_VERSION,
        ):
            self.close()
            raise CacheCorruptError(
                f"The cache {self.directory} was made by another version of the crawler (format "
                f"{made_by['format']}, page keys version {made_by['identity_version']}; this one reads format "
                f"{FORMAT_VERSION}, keys version {IDENTITY_VERSION}); it was left as it is."
            )

    # -- the lock and the format --------------------------------------------------

    @contextmanager
    def lock(self) -> Iterator[None]:
        """The directory's writer lock (``.lock``, an ``flock`` the kernel drops on any
        exit); raises :class:`~crawler.cache.lock.CacheLockedError` when another holds it."""
        self._lock.acquire()
        try:
            yield
        finally:
            self._lock.release()

    def writer_lock(self) -> AbstractContextManager[None]:
        """One writer at a time (a crawl, ``scrapy process``): :meth:`lock` itself."""
        return self.lock()

    def is_locked_elsewhere(self) -> bool:
        return self._lock.is_locked_elsewhere()

    def format_info(self) -> dict[str, Any]:
        """What the database records about itself: its format and identity versions."""
        return {
            "format": self._kv_get(STORE + "format", "store"),
            "identity_version": self._kv_get(STORE + "identity_version", "store"),
        }

    # -- SQL through the one connection ---------------------------------------------

    def _select(self, sql: str, args: Iterable[Any] = ()) -> Iterator[tuple[Any, ...]]:
        if self._kv is None:
            return
        try:
            yield from self._kv.conn.select(sql, tuple(args))
        except sqlite3.DatabaseError as exc:
            raise self._failed("read", exc) from exc

    def _select_one(self, sql: str, args: Iterable[Any] = ()) -> tuple[Any, ...] | None:
        return next(iter(self._select(sql, args)), None)

    def _failed(self, kind: str, exc: BaseException) -> CacheStorageError:
        what = f"{'Reading' if kind == 'read' else 'Writing'} the cache file {self.path} failed ({exc})"
        if self.on_storage_error is not None:
            self.on_storage_error(kind, what)
        return CacheStorageError(what)

    # -- the key-value table ---------------------------------------------------------

    def _kv_put(self, key: str, value: Any) -> None:
        self._writable()
        # a snapshot, as a write is: the caller's dict changed afterwards changes nothing stored
        self._kv_pending[key] = copy.deepcopy(value) if isinstance(value, dict) else value

    def _kv_delete(self, key: str) -> None:
        self._writable()
        self._kv_pending[key] = None

    def _kv_raw(self, key: str, table: str) -> Any:
        """The decoded value of ``key``, pending writes first; ``None`` when missing or
        unreadable (counted)."""
        if key in self._kv_pending:
            value = self._kv_pending[key]
            return copy.deepcopy(value) if isinstance(value, dict) else value  # the caller's own copy
        if self._kv is None:
            return None
        prefix, _, url_hash = key.partition("/")
        try:
            if prefix + "/" in PAGE_PARTS:
                raw = self._page_parts(url_hash).get(key)
                return None if raw is None else self._kv.decode(raw)
            return self._kv.get(key)
        except sqlite3.DatabaseError as exc:
            raise self._failed("read", exc) from exc
        except (ValueError, UnicodeDecodeError, TypeError) as exc:
            self._unreadable(table, url_hash, exc)
            return None

    def _page_parts(self, url_hash: str) -> dict[str, Any]:
        """Every stored part of a page (content, response, rendering, parsed page,
        record under ``""``), raw, in one query: the middleware, the spider and the
        pipeline each read one part of the same page within moments."""
        parts = self._recent.get(url_hash)
        if parts is not None:
            return parts
        rows = self._select(
            "SELECT key, value FROM kv WHERE key IN (?, ?, ?, ?) UNION ALL SELECT '', record FROM pages WHERE key = ?",
            (*(prefix + url_hash for prefix in PAGE_PARTS), url_hash),
        )
        parts = dict(rows)
        if self.readonly:
            return parts  # another process writes: nothing is kept
        self._recent.put(url_hash, parts)
        return parts

    def _kv_get(self, key: str, table: str, decode: Callable[[Any], Any] | None = None) -> Any:
        raw = self._kv_raw(key, table)
        if raw is None or decode is None:
            return raw
        try:
            return decode(raw)
        except (ValueError, zlib.error, UnicodeDecodeError, TypeError) as exc:
            self._unreadable(table, key.partition("/")[2], exc)
            return None

    def _kv_typed(self, key: str, table: str, kind: type) -> Any:
        """The value of ``key`` if it is a ``kind``; another value is unreadable (counted)."""
        value = self._kv_raw(key, table)
        if value is None or isinstance(value, kind):
            return value
        self._unreadable(table, key.partition("/")[2], TypeError(f"not a {kind.__name__}: {type(value).__name__}"))
        return None

    def _kv_keys(self, prefix: str) -> list[str]:
        """The keys under ``prefix`` (without it), pending writes included."""
        # '/' + 1 is '0': every key that starts with the prefix sorts between them
        end = prefix[:-1] + chr(ord(prefix[-1]) + 1)
        stored = [row[0] for row in self._select("SELECT key FROM kv WHERE key >= ? AND key < ?", (prefix, end))]
        return _merge_keys(stored, {k: v for k, v in self._kv_pending.items() if k.startswith(prefix)}, len(prefix))

    # -- pages -------------------------------------------------------------------------

    def _decode_record(self, url_hash: str, raw: Any) -> dict[str, Any] | None:
        try:
            record = json.loads(raw)
        except (ValueError, TypeError) as exc:
            self._unreadable("pages", url_hash, exc)
            return None
        if not isinstance(record, dict):
            self._unreadable("pages", url_hash, TypeError(f"not a record: {type(record).__name__}"))
            return None
        return record

    def get_page(self, url_hash: str) -> dict[str, Any] | None:
        if url_hash in self._pages_pending:
            row = self._pages_pending[url_hash]
            return None if row is None else self._decode_record(url_hash, row[-1])
        raw = self._page_parts(url_hash).get("")
        return None if raw is None else self._decode_record(url_hash, raw)

    def put_page(self, url_hash: str, record: dict[str, Any]) -> None:
        self._writable()
        self._pages_pending[url_hash] = page_row(url_hash, record)

    def iter_page_keys(self) -> Iterator[str]:
        """Every page's key, in the order the pages were first recorded (an unreadable
        record's key too)."""
        stored = [row[0] for row in self._select("SELECT key FROM pages ORDER BY rowid")]
        return iter(_merge_keys(stored, self._pages_pending, 0))

    def iter_pages(self) -> Iterator[tuple[str, dict[str, Any]]]:
        """Every readable record, in the order first recorded, pending writes applied."""
        pending = dict(self._pages_pending)
        for key, raw in self._select("SELECT key, record FROM pages ORDER BY rowid"):
            if key in pending:
                row = pending.pop(key)
                raw = None if row is None else row[-1]
            record = None if raw is None else self._decode_record(key, raw)
            if record is not None:
                yield key, record
        for key, row in pending.items():
            record = None if row is None else self._decode_record(key, row[-1])
            if record is not None:
                yield key, record

    def count_pages(self) -> int:
        if not self._pages_pending:
            row = self._select_one("SELECT count(*) FROM pages")
            return int(row[0]) if row else 0
        return sum(1 for _ in self.iter_page_keys())

    def delete_page(self, url_hash: str) -> None:
        """Everything kept for one page: record, content, stored and rendered responses,
        what it parsed into, its extraction file."""
        self._writable()
        self._pages_pending[url_hash] = None
        for prefix in PAGE_PARTS:
            self._kv_pending[prefix + url_hash] = None
        self.delete_extraction(url_hash)

    # -- questions over all pages (committed pages) -------------------------------------

    def status_counts(self) -> dict[str, int]:
        return {str(s): int(n) for s, n in self._select("SELECT status, count(*) FROM pages GROUP BY 1")}

    def extraction_counts(self) -> dict[str, int]:
        row = self._select_one(
            "SELECT total(extraction_key IS NOT NULL), total(extraction_error IS NOT NULL), "
            "total(invalidated IS NOT NULL) FROM pages"
        ) or (0, 0, 0)
        return {"extracted": int(row[0]), "failed": int(row[1]), "invalidated": int(row[2])}

    def domain_summary(self) -> list[dict[str, Any]]:
        return domain_rows(
            self._select(
                "SELECT domain, count(*), total(status = 'removed'), total(extraction_key IS NOT NULL), "
                "total(extraction_error IS NOT NULL), max(last_seen), max(last_changed) FROM pages "
                "GROUP BY 1 ORDER BY 2 DESC, 1"
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
        limit: int | None = None,
    ) -> Iterator[tuple[str, dict[str, Any]]]:
        """``(url_hash, record)`` of the committed pages matching every filter given, by
        URL. ``converter_pending``: pages whose stored text awaits a converter upgrade;
        ``empty``: pages whose last crawl found no text to extract (``empty_input``);
        ``widened``: pages whose last parse had its main content widened by the
        selection's audit (``selection_widened``)."""
        sql, params = page_query(
            "?",
            "url",
            domain=domain,
            status=status,
            changed_since=changed_since,
            failed=failed,
            converter_pending=converter_pending,
            empty=empty,
            widened=widened,
            limit=limit,
        )
        for key, raw in self._select(sql, params):
            record = self._decode_record(key, raw)
            if record is not None:
                yield key, record

    def find_page(self, url_or_hash: str) -> tuple[str, dict[str, Any]] | None:
        """A page by its url_hash or by any spelling of its URL."""
        return find_page(
            url_or_hash,
            lambda key: bool(URL_HASH_RE.match(key)),
            lambda canonical, url: [row[0] for row in self._select(FIND_BY_URL.format(p="?"), (canonical, url))],
            self.get_page,
        )

    # -- content, responses, renderings, parsed pages -------------------------------------

    def get_content(self, url_hash: str) -> dict[str, Any] | None:
        content: dict[str, Any] | None = self._kv_typed(CONTENT + url_hash, "content", dict)
        return content

    def put_content(self, url_hash: str, content: dict[str, Any]) -> None:
        self._kv_put(CONTENT + url_hash, content)

    def iter_content_keys(self) -> Iterator[str]:
        return iter(self._kv_keys(CONTENT))

    def get_response(self, url_hash: str) -> StoredResponse | None:
        response = self._kv_get(RESPONSE + url_hash, "responses", _bytes_decoder(response_decode))
        return response if isinstance(response, StoredResponse) else None

    def put_response(self, url_hash: str, response: StoredResponse) -> None:
        self._kv_put(RESPONSE + url_hash, response_encode(response))

    def get_rendered(self, url_hash: str) -> RenderedPage | None:
        page = self._kv_get(RENDERED + url_hash, "rendered", _bytes_decoder(rendered_decode))
        return page if isinstance(page, RenderedPage) else None

    def put_rendered(self, url_hash: str, page: RenderedPage) -> None:
        self._kv_put(RENDERED + url_hash, rendered_encode(page))

    def iter_rendered_keys(self) -> Iterator[str]:
        return iter(self._kv_keys(RENDERED))

    def delete_rendered(self, url_hash: str) -> None:
        self._kv_delete(RENDERED + url_hash)

    def get_parsed(self, url_hash: str) -> ParsedPage | None:
        data = self._kv_typed(PARSED + url_hash, "parsed", dict)
        return None if data is None else ParsedPage.from_json(data)

    def put_parsed(self, url_hash: str, page: ParsedPage) -> None:
        self._kv_put(PARSED + url_hash, page.to_json())

    # -- extractions -----------------------------------------------------------------------

    def extraction_path(self, url_hash: str) -> Path:
        return self.directory / "extractions" / f"{url_hash}.json"

    def read_extraction(self, url_hash: str) -> dict[str, Any] | None:
        path = self.extraction_path(url_hash)
        try:
            data = read_json(path)
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            self.read_errors += 1
            logger.warning(
                "Unreadable extraction file %(path)s, treated as missing: %(exc)s",
                {"path": path, "exc": exc},
            )
            if self.on_read_error is not None:
                self.on_read_error("extractions", url_hash)
            return None
        return data if isinstance(data, dict) else None

    def write_extraction(self, url_hash: str, extraction: dict[str, Any]) -> str:
        self._writable()
        path = self.extraction_path(url_hash)
        atomic_write_json(path, extraction)
        return str(path.relative_to(self.directory))

    def delete_extraction(self, url_hash: str) -> None:
        self._writable()
        self.extraction_path(url_hash).unlink(missing_ok=True)

    def iter_extraction_keys(self) -> Iterator[str]:
        folder = self.directory / "extractions"
        if not folder.is_dir():
            return iter(())
        return iter(sorted(p.stem for p in folder.glob("*.json") if not p.name.startswith(".")))

    def find_extraction(self, input_key: str) -> str | None:
        found: str | None = self._kv_typed(INPUT + input_key, "inputs", str)
        return found

    def link_extraction(self, input_key: str, url_hash: str) -> None:
        self._kv_put(INPUT + input_key, url_hash)

    def claim_extraction(self, key: str, owner: str, seconds: float) -> bool:
        """Always granted: the store has one writer (:meth:`writer_lock`), so no other
        process extracts from it at the same time."""
        return True

    def release_extraction(self, key: str, owner: str) -> None:
        return None

    def iter_inputs(self) -> Iterator[tuple[str, str]]:
        for key in self._kv_keys(INPUT):
            value = self.find_extraction(key)
            if value is not None:
                yield key, value

    def delete_input(self, input_key: str) -> None:
        self._kv_delete(INPUT + input_key)

    # -- domains ---------------------------------------------------------------------------

    def domain_path(self, domain: str) -> Path:
        """``boilerplate/<sha256 of the domain>.json``: a file name of fixed length for
        any host name (a DNS name may be 253 characters, a file name only 255 bytes);
        the domain itself is in the record."""
        return self.directory / "boilerplate" / f"{sha256_hex(domain)}.json"

    def legacy_domain_path(self, domain: str) -> Path:
        """Where caches made before the hashed names keep a domain's record."""
        safe = "".join(c if c.isalnum() or c in ".-" else "_" for c in domain)
        return self.directory / "boilerplate" / f"{safe}.json"

    def get_domain(self, domain: str) -> dict[str, Any] | None:
        path = self.domain_path(domain)
        try:
            data = read_json(path)
        except FileNotFoundError:
            data = self._legacy_domain(domain)
        except (OSError, ValueError) as exc:
            self.read_errors += 1
            logger.warning("Unreadable domain record of %(domain)s, ignored: %(exc)s", {"domain": domain, "exc": exc})
            if self.on_read_error is not None:
                self.on_read_error("boilerplate", domain)
            return None
        return data if isinstance(data, dict) else None

    def _legacy_domain(self, domain: str) -> Any:
        """The record under its old file name, moved to the new name (writable store)."""
        legacy = self.legacy_domain_path(domain)
        try:
            data = read_json(legacy)
        except (OSError, ValueError):
            return None  # missing, a name too long to have ever been written, unreadable
        if not isinstance(data, dict) or data.get("domain", domain) != domain:
            return None  # another domain with the same old name (a_b.com for a:b.com)
        if not self.readonly:
            try:
                os.replace(legacy, self.domain_path(domain))
            except OSError as exc:
                logger.warning(
                    "Could not rename %(old)s to %(new)s: %(exc)s",
                    {"old": legacy, "new": self.domain_path(domain), "exc": exc},
                )
        return data

    def put_domain(self, domain: str, record: dict[str, Any]) -> None:
        self._writable()
        atomic_write_json(self.domain_path(domain), record)
        legacy = self.legacy_domain_path(domain)
        try:
            if read_json(legacy).get("domain", domain) == domain:
                legacy.unlink()  # replaced by the file just written
        except (OSError, ValueError, AttributeError):
            pass

    def update_domain(self, domain: str, update: Callable[[dict[str, Any] | None], dict[str, Any]]) -> dict[str, Any]:
        """The record replaced by ``update(record)``: the store has one writer process
        (:meth:`writer_lock`), and within it one update at a time."""
        self._writable()
        with _DOMAIN_UPDATES:
            record = update(self.get_domain(domain))
            self.put_domain(domain, record)
        return record

    def iter_domains(self) -> Iterator[str]:
        """Every domain with a record, sorted."""
        domains = set()
        for path in (self.directory / "boilerplate").glob("*.json"):
            data = read_json_dict(path)
            if data is not None and isinstance(data.get("domain"), str):
                domains.add(data["domain"])
        return iter(sorted(domains))

    # -- run reports -------------------------------------------------------------------------

    def write_run_report(self, run_id: str, report: dict[str, Any]) -> str:
        self._writable()
        path = self.directory / "runs" / f"{run_id}.json"
        report = mask_data(report)  # errors in it may echo a key the crawl read
        atomic_write_json(path, report)
        atomic_write_json(self.directory / "runs" / "latest.json", report)
        return str(path)

    def has_run_report(self, run_id: str) -> bool:
        """Whether the run ``run_id`` finished (a run killed before its report has none)."""
        return bool(run_id) and "/" not in run_id and (self.directory / "runs" / f"{run_id}.json").exists()

    def run_report(self, run_id: str) -> dict[str, Any] | None:
        """The report of the run ``run_id``, None when it has none."""
        if not self.has_run_report(run_id):
            return None
        return read_json_dict(self.directory / "runs" / f"{run_id}.json")

    def run_reports(self, last: int) -> list[dict[str, Any]]:
        """The last ``last`` reports, oldest first (run ids sort by time)."""
        paths = sorted(p for p in (self.directory / "runs").glob("*.json") if p.name != "latest.json")
        reports = []
        for path in paths[-last:] if last > 0 else []:
            report = read_json_dict(path)
            if report is not None:
                reports.append(report)
        return reports

    def latest_run_report(self) -> dict[str, Any] | None:
        return read_json_dict(self.directory / "runs" / "latest.json")

    # -- lifecycle -----------------------------------------------------------------------------

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """The writes made inside are stored together, by one commit at its end, or not
        at all: an exception inside drops them. What was pending before is committed
        first (it is not this transaction's)."""
        self.commit()
        try:
            yield
        except BaseException:
            self._kv_pending.clear()
            self._pages_pending.clear()
            raise
        self.commit()

    def commit(self) -> None:
        """Write what is pending in one transaction. Raises :class:`CacheStorageError`
        when SQLite fails: nothing of it is written (the pending writes are kept, a
        later commit tries them again), nothing committed before is touched."""
        if self.readonly or self._kv is None or not (self._kv_pending or self._pages_pending):
            return
        try:
            self._flush()
        except sqlite3.DatabaseError as exc:
            raise self._failed("write", exc) from exc
        self._recent.forget([*self._pages_pending, *(k.partition("/")[2] for k in self._kv_pending)])
        self._kv_pending.clear()
        self._pages_pending.clear()

    def _flush(self) -> None:
        """One transaction through sqlitedict's connection. Every statement's error
        comes back here: a ``SELECT`` after the writes raises the first failed write's,
        and ``COMMIT`` is a statement whose answer is awaited (sqlitedict's ``commit()``
        would stop its thread on a failure and never answer)."""
        assert self._kv is not None
        conn = self._kv.conn
        try:
            conn.select_one("BEGIN IMMEDIATE")
            puts = {k: v for k, v in self._kv_pending.items() if v is not None}
            if puts:
                self._kv.update(puts)  # sqlitedict's own batch write, JSON-encoded
            deletes = [(k,) for k, v in self._kv_pending.items() if v is None]
            if deletes:
                conn.executemany("DELETE FROM kv WHERE key = ?", deletes)
            rows = [row for row in self._pages_pending.values() if row is not None]
            if rows:
                conn.executemany(_UPSERT_PAGE, rows)
            gone = [(k,) for k, r in self._pages_pending.items() if r is None]
            if gone:
                conn.executemany("DELETE FROM pages WHERE key = ?", gone)
            conn.select_one("SELECT 1")  # raises the error of any write above
            conn.select_one("COMMIT")
        except BaseException:
            with suppress(sqlite3.Error):  # no transaction left to roll back
                conn.select_one("ROLLBACK")
            raise

    def size_on_disk(self, exact_up_to: int = 2000) -> dict[str, Any]:
        """Bytes used, by part of the cache (``index``: the database and its WAL). A
        folder of more than ``exact_up_to`` files (``extractions/`` of a large site) is
        measured on an even sample of them and extrapolated (``approximate`` is then
        true): one ``stat`` per file of 100,000 would take most of a second."""
        sizes: dict[str, Any] = {"index": 0, "extractions": 0, "other": 0}
        approximate = False
        for folder, files in _files_by_folder(self.directory):
            part = folder.relative_to(self.directory).parts[0] if folder != self.directory else ""
            step = max(1, len(files) // exact_up_to)
            approximate |= step > 1
            sample = files[::step]
            total = sum(_size(entry) for entry in sample)
            scaled = total * len(files) / len(sample) if sample else 0
            if part:
                sizes[part if part in sizes else "other"] += scaled
            else:
                for entry in files:
                    key = "index" if entry.name.endswith((".sqlite", ".sqlite-wal", ".sqlite-shm")) else "other"
                    sizes[key] += _size(entry)
        sizes = {k: int(v) for k, v in sizes.items()}
        sizes["approximate"] = approximate
        return sizes

    def close(self) -> None:
        try:
            self.commit()
        except Exception as exc:
            pending = len(self._kv_pending) + len(self._pages_pending)
            logger.error(
                "Writing the cache's last %(n)d writes at close failed, they are lost: %(exc)s",
                {"n": pending, "exc": exc},
                exc_info=not isinstance(exc, CacheStorageError),  # a traceback for the unforeseen only
            )
        kv, self._kv = self._kv, None
        if kv is not None:
            try:
                kv.close()
            except Exception:
                logger.exception("Closing the cache database %(path)s failed", {"path": self.path})


def _bytes_decoder(decode: Callable[[bytes], Any]) -> Callable[[Any], Any]:
    def checked(raw: Any) -> Any:
        if not isinstance(raw, bytes):
            raise TypeError(f"not a packed body: {type(raw).__name__}")
        return decode(raw)

    return checked


def _merge_keys(stored: list[str], pending: dict[str, Any], strip: int) -> list[str]:
    """``stored`` keys with the pending writes applied (deletes dropped, new keys
    appended), each without its first ``strip`` characters."""
    if not pending:
        return [key[strip:] for key in stored]
    known = set(stored)
    keys = [key for key in stored if pending.get(key, key) is not None]
    keys += [key for key, value in pending.items() if value is not None and key not in known]
    return [key[strip:] for key in keys]


def index_lost(directory: Path) -> bool:
    """The database is missing, empty or holds no page while extraction files exist:
    it was lost (deleted, truncated, emptied), not never made. A cache of the older
    layout is not lost: opening it migrates it."""
    from crawler.cache.migrate import is_legacy

    if next((directory / "extractions").glob("*.json"), None) is None or is_legacy(directory):
        return False
    path = directory / DB_NAME
    if not path.exists() or path.stat().st_size == 0:
        return True
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            return conn.execute("SELECT 1 FROM pages LIMIT 1").fetchone() is None
        finally:
            conn.close()
    except sqlite3.DatabaseError:
        return False  # unreadable: that is corruption, reported as such


def _size(entry: os.DirEntry[str]) -> int:
    try:
        return entry.stat(follow_symlinks=False).st_size
    except FileNotFoundError:  # a temporary file a running crawl just renamed
        return 0


def _files_by_folder(directory: Path) -> Iterator[tuple[Path, list[os.DirEntry[str]]]]:
    stack = [directory]
    while stack:
        folder = stack.pop()
        files = []
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(Path(entry.path))
                else:
                    files.append(entry)
        yield folder, files
