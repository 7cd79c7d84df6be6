"""The default, embedded cache: SQLite (one file per table) plus readable JSON files.

Layout of the cache directory::

    index.sqlite        page records (the index), JSON values
    content.sqlite      page content (markdown and hashed fields), JSON values
    responses.sqlite    raw responses behind conditional requests (zlib, binary)
    rendered.sqlite     pages rendered by a browser, with their raw HTML's hash (zlib, binary)
    inputs.sqlite       extraction input key -> url_hash of an extraction with that input
    parsed.sqlite       what the spider made of each stored response (fields, links), JSON
    extractions/{url_hash}.json
    metadata/{url_hash}_meta.json
    boilerplate/{sha256(domain)}.json   per-domain boilerplate fingerprint, parameters, statistics
                        (older caches: boilerplate/{domain}.json, renamed when read or written)
    runs/{run_id}.json, runs/latest.json

Values are JSON, never pickle: a tampered cache file cannot run code. Each table
lives in its own file so that its connection never waits for another's transaction.
Files are written to a temporary name and renamed, so a reader (or a crash) never
sees half a file.
"""

from __future__ import annotations

import json
import logging
import os
import re
import sqlite3
import zlib
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from crawler.cache.lock import CacheLock
from crawler.cache.perms import open_private, private_file, private_mkdir
from crawler.cache.store import (
    CacheCorruptError,
    CacheMissingError,
    CacheStorageError,
    ParsedPage,
    RenderedPage,
    StoredResponse,
)
from crawler.lib.hashing import sha256_hex
from crawler.lib.secrets import mask_data
from crawler.lib.urls import canonical_url

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

logger = logging.getLogger(__name__)

TABLE_FILES = {
    "pages": "index.sqlite",
    "content": "content.sqlite",
    "responses": "responses.sqlite",
    "rendered": "rendered.sqlite",
    "inputs": "inputs.sqlite",
    "parsed": "parsed.sqlite",
}


def json_encode(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def json_decode(raw: str | bytes) -> Any:
    return json.loads(raw)


def pack_body(head: dict[str, Any], body: bytes, level: int) -> sqlite3.Binary:
    """A stored body and its metadata in one value: JSON head, NUL, body, zlib-compressed."""
    return sqlite3.Binary(zlib.compress(json_encode(head).encode("utf-8") + b"\0" + body, level))


def unpack_body(raw: bytes) -> tuple[dict[str, Any], bytes]:
    head, _, body = zlib.decompress(raw).partition(b"\0")
    return json.loads(head), body


def response_encode(response: StoredResponse) -> sqlite3.Binary:
    # level 1: written for every fetched page; 28 instead of 42 µs for 4% more bytes
    head = {
        "url": response.url,
        "status": response.status,
        "headers": response.headers,
        "fetched_at": response.fetched_at,
        "checked_at": response.checked_at,
    }
    return pack_body(head, response.body, 1)


def response_decode(raw: bytes) -> StoredResponse:
    meta, body = unpack_body(raw)
    return StoredResponse(body=body, **meta)


def rendered_encode(page: RenderedPage) -> sqlite3.Binary:
    head = {
        "url": page.url,
        "headers": page.headers,
        "raw_sha256": page.raw_sha256,
        "rendered_at": page.rendered_at,
        "encoding": page.encoding,
    }
    return pack_body(head, page.body, 6)


def rendered_decode(raw: bytes) -> RenderedPage:
    meta, body = unpack_body(raw)
    return RenderedPage(body=body, **meta)


def _same(value: Any) -> Any:
    return value


#: table -> (encode, decode)
CODECS: dict[str, tuple[Callable[[Any], Any], Callable[[Any], Any]]] = {
    "pages": (json_encode, json_decode),
    "content": (json_encode, json_decode),
    "responses": (response_encode, response_decode),
    "rendered": (rendered_encode, rendered_decode),
    "inputs": (json_encode, json_decode),
    "parsed": (lambda page: json_encode(page.to_json()), lambda raw: ParsedPage.from_json(json_decode(raw))),
}


def atomic_write_json(path: Path, data: Any) -> None:
    """Write ``data`` as JSON to ``path`` so that ``path`` is always whole."""
    tmp = path.parent / f".{path.name}.{os.getpid()}.tmp"
    fd = open_private(tmp, os.O_WRONLY | os.O_TRUNC)  # 0600: extractions may hold private data
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            # one write: json.dump() to a file writes piece by piece, several times slower
            handle.write(json.dumps(data, ensure_ascii=False, indent=2, sort_keys=True) + "\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read_json(path: Path) -> Any:
    with path.open(encoding="utf-8") as handle:
        return json.load(handle)


def read_json_dict(path: Path) -> dict[str, Any] | None:
    """The JSON object in ``path``; ``None`` when it is missing, unreadable or not an object."""
    try:
        data = read_json(path)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


SQLITE_MAGIC = b"SQLite format 3\x00"
URL_HASH_RE = re.compile(r"^[0-9a-f]{40}$")

#: A narrow summary of each page record, kept by SQLite triggers in the same
#: transaction as every write of the record: ``scrapy cache`` counts, filters and finds
#: pages from it without parsing the JSON of 100,000 records.
SUMMARY_COLUMNS = {
    "domain": "'$.domain'",
    "status": "'$.status'",
    "url": "'$.url'",
    "canonical_url": "'$.canonical_url'",
    "last_seen": "'$.last_seen'",
    "last_changed": "'$.last_changed'",
    "extracted": "'$.extraction.input_key'",
    "failed": "'$.extraction_error.at'",
    "invalidated": "'$.invalidated'",
}
_FLAGS = ("extracted", "failed", "invalidated")


def _summary_values(row: str) -> str:
    values = []
    for column, path in SUMMARY_COLUMNS.items():
        expression = f"json_extract({row}.value, {path})"
        values.append(f"({expression} IS NOT NULL)" if column in _FLAGS else expression)
    return ", ".join(values)


def add_summary_table(path: Path) -> None:
    """Create the ``page_summary`` table, its triggers and indexes if missing, and
    fill it from the records already there (a cache made before it existed)."""
    conn = sqlite3.connect(path, timeout=30)
    try:
        if conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'page_summary'").fetchone():
            return
        columns = ", ".join(SUMMARY_COLUMNS)
        conn.executescript(f"""
            BEGIN;
            CREATE TABLE IF NOT EXISTS page_summary (key TEXT PRIMARY KEY, {columns});
            CREATE INDEX IF NOT EXISTS page_summary_url ON page_summary (url);
            CREATE INDEX IF NOT EXISTS page_summary_canonical_url ON page_summary (canonical_url);
            CREATE INDEX IF NOT EXISTS page_summary_domain_status ON page_summary (domain, status);
            CREATE TRIGGER IF NOT EXISTS page_summary_insert AFTER INSERT ON pages WHEN json_valid(new.value) BEGIN
                INSERT OR REPLACE INTO page_summary VALUES (new.key, {_summary_values("new")});
            END;
            CREATE TRIGGER IF NOT EXISTS page_summary_update AFTER UPDATE ON pages WHEN json_valid(new.value) BEGIN
                INSERT OR REPLACE INTO page_summary VALUES (new.key, {_summary_values("new")});
            END;
            CREATE TRIGGER IF NOT EXISTS page_summary_invalid AFTER INSERT ON pages WHEN NOT json_valid(new.value) BEGIN
                DELETE FROM page_summary WHERE key = new.key;
            END;
            CREATE TRIGGER IF NOT EXISTS page_summary_delete AFTER DELETE ON pages BEGIN
                DELETE FROM page_summary WHERE key = old.key;
            END;
            INSERT INTO page_summary SELECT key, {_summary_values("pages")} FROM pages
                WHERE json_valid(value);
            COMMIT;
        """)
    finally:
        conn.close()


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
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
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


def index_lost(directory: Path) -> bool:
    """The index is missing, empty or holds no page while metadata files of pages
    exist: it was lost (deleted, truncated, emptied), not never made."""
    if next((directory / "metadata").glob("*_meta.json"), None) is None:
        return False
    index = directory / TABLE_FILES["pages"]
    if not index.exists() or index.stat().st_size == 0:
        return True
    try:
        conn = sqlite3.connect(f"file:{index}?mode=ro", uri=True)
        try:
            return conn.execute("SELECT 1 FROM pages LIMIT 1").fetchone() is None
        finally:
            conn.close()
    except sqlite3.DatabaseError:
        return False  # unreadable: that is corruption, reported as such


class SqliteDocStore:
    """Embedded :class:`~crawler.cache.store.DocStore` in one directory."""

    #: check every page of each database when opened for writing (``PRAGMA quick_check``)
    check_on_open = True

    def __init__(
        self, directory: str | Path, *, readonly: bool = False, create: bool = True, rebuilding: bool = False
    ) -> None:
        self.directory = Path(directory)
        #: what the store is, for messages
        self.location = str(self.directory)
        self.readonly = readonly
        self.read_errors = 0
        self.on_read_error: Callable[[str, str], None] | None = None
        #: called with ("read" or "write", what failed) when SQLite fails on an open
        #: store, before :class:`CacheStorageError` is raised
        self.on_storage_error: Callable[[str, str], None] | None = None
        if not rebuilding and index_lost(self.directory):
            raise CacheCorruptError(
                f"The cache index {self.directory / TABLE_FILES['pages']} is missing or empty but metadata/ "
                "holds page records: `scrapy cache verify --repair` rebuilds it."
            )
        if (readonly or not create) and not rebuilding and not (self.directory / TABLE_FILES["pages"]).exists():
            raise CacheMissingError(f"No cache in {self.directory}: run a crawl first.")
        if not readonly:
            for sub in ("extractions", "metadata", "runs", "boilerplate"):
                private_mkdir(self.directory / sub)
        self._conns: dict[str, sqlite3.Connection] = {}
        self._dirty: dict[str, dict[str, Any]] = {name: {} for name in TABLE_FILES}
        try:
            for name in TABLE_FILES:
                conn = self._open_table(name)
                if conn is not None:
                    self._conns[name] = conn
        except BaseException:
            self.close()
            raise

    def _open_table(self, name: str) -> sqlite3.Connection | None:
        """A connection to one table's file, checked: every page of the file readable
        (``PRAGMA quick_check``) and, unless read-only, the file writable. Reads and
        writes go through this connection, in the calling thread: a failure raises at
        once instead of stopping a writer thread that the caller would wait for."""
        path = self.directory / TABLE_FILES[name]
        if self.readonly and (not path.exists() or path.stat().st_size == 0):
            return None
        conn: sqlite3.Connection | None = None
        try:
            check_sqlite_file(path, thorough=self.check_on_open and not self.readonly)
            if not self.readonly:
                private_file(path)  # 0600
                conn = sqlite3.connect(path, timeout=30, isolation_level=None)
                conn.execute("PRAGMA journal_mode = WAL")  # readers (cache commands) never block the crawl
                conn.execute("PRAGMA synchronous = NORMAL")  # WAL: no fsync per commit, never corrupt
                conn.execute("PRAGMA temp_store = MEMORY")
                conn.execute(f'CREATE TABLE IF NOT EXISTS "{name}" (key TEXT PRIMARY KEY, value BLOB)')
                # prove the file writable (a read-only file system, a file the user
                # cannot write): a write that is never committed
                conn.execute("BEGIN IMMEDIATE")
                conn.execute(f'DELETE FROM "{name}" WHERE key = ?', ("\0probe",))
                conn.execute("ROLLBACK")
                if name == "pages":
                    add_summary_table(path)
            else:
                if name == "pages":
                    add_summary_table(path)  # a cache made before the summary existed
                conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30, isolation_level=None)
            conn.execute(f'SELECT 1 FROM "{name}" LIMIT 1').fetchone()  # touch it: a damaged file fails here
        except (sqlite3.DatabaseError, OSError) as exc:
            if conn is not None:
                conn.close()
            raise CacheCorruptError(
                f"The cache file {path} cannot be read or written ({exc}). It was left as it is: "
                "`scrapy cache verify --repair` moves it aside (an index is rebuilt from extractions/ "
                "and metadata/)."
            ) from exc
        return conn

    # -- helpers -------------------------------------------------------------
    #
    # Writes are kept in self._dirty (encoded) until commit(), which writes them in one
    # transaction per table. What was written since the last commit is read from
    # self._dirty, the rest from the table's connection (WAL: the cache commands read
    # while a crawl writes). Every read and write is in the calling thread: an SQLite
    # error (a damaged page, a full disk) raises CacheStorageError there, at once.

    def _reader(self, table: str) -> sqlite3.Connection | None:
        return self._conns.get(table)

    def _failed(self, kind: str, table: str, exc: BaseException) -> CacheStorageError:
        path = self.directory / TABLE_FILES[table]
        what = f"{'Reading' if kind == 'read' else 'Writing'} the cache file {path} failed ({exc})"
        if self.on_storage_error is not None:
            self.on_storage_error(kind, what)
        return CacheStorageError(what)

    def _put(self, table: str, key: str, value: Any) -> None:
        self._writable()
        self._dirty[table][key] = CODECS[table][0](value)

    def _delete(self, table: str, key: str) -> None:
        self._writable()
        self._dirty[table][key] = None

    def _writable(self) -> None:
        if self.readonly:
            raise RuntimeError(f"The cache {self.directory} was opened read-only")

    def _keys(self, table: str) -> list[str]:
        """The table's keys, in the order they were first written, pending writes
        included (not committed here: a failing commit does not fail a read)."""
        conn = self._reader(table)
        try:
            stored = [row[0] for row in conn.execute(f'SELECT key FROM "{table}" ORDER BY rowid')] if conn else []
        except sqlite3.DatabaseError as exc:
            raise self._failed("read", table, exc) from exc
        dirty = self._dirty[table]
        if not dirty:
            return stored
        known = set(stored)
        return [key for key in stored if dirty.get(key, key) is not None] + [
            key for key, value in dirty.items() if value is not None and key not in known
        ]

    def _get(self, table: str, key: str) -> Any:
        dirty = self._dirty[table]
        if key in dirty:
            raw = dirty[key]
        else:
            conn = self._reader(table)
            try:
                row = conn.execute(f'SELECT value FROM "{table}" WHERE key = ?', (key,)).fetchone() if conn else None
            except sqlite3.DatabaseError as exc:
                raise self._failed("read", table, exc) from exc
            raw = row[0] if row else None
        if raw is None:
            return None
        try:
            return CODECS[table][1](raw)
        except (ValueError, zlib.error, UnicodeDecodeError, TypeError) as exc:
            self.read_errors += 1
            logger.warning(
                "Unreadable %(table)s entry %(key)s in %(dir)s, treated as missing: %(exc)s",
                {"table": table, "key": key, "dir": self.directory, "exc": exc},
            )
            if self.on_read_error is not None:
                self.on_read_error(table, key)
            return None

    # -- pages ---------------------------------------------------------------

    def get_page(self, url_hash: str) -> dict[str, Any] | None:
        record = self._get("pages", url_hash)
        return record if isinstance(record, dict) else None

    def put_page(self, url_hash: str, record: dict[str, Any]) -> None:
        self._put("pages", url_hash, record)

    def iter_page_keys(self) -> Iterator[str]:
        return iter(self._keys("pages"))

    def iter_pages(self) -> Iterator[tuple[str, dict[str, Any]]]:
        for key in self._keys("pages"):
            record = self._get("pages", key)
            if isinstance(record, dict):
                yield key, record

    def count_pages(self) -> int:
        return len(self._keys("pages"))

    # -- questions over all pages (the page_summary table) -------------------
    #
    # Answered by SQLite from the summary its triggers keep, so they stay fast on
    # caches of 100,000 pages; pending writes are committed first.

    def _query(self, sql: str, params: tuple[Any, ...] | list[Any] = ()) -> list[Any]:
        if not self.readonly and any(self._dirty.values()):
            self.commit()
        conn = self._reader("pages")
        if conn is None:
            return []
        try:
            return conn.execute(sql, params).fetchall()
        except sqlite3.DatabaseError as exc:
            raise self._failed("read", "pages", exc) from exc

    def status_counts(self) -> dict[str, int]:
        rows = self._query("SELECT status, count(*) FROM page_summary GROUP BY 1")
        return {str(status): int(n) for status, n in rows}

    def extraction_counts(self) -> dict[str, int]:
        rows = self._query("SELECT total(extracted), total(failed), total(invalidated) FROM page_summary")
        extracted, failed, invalidated = rows[0] if rows else (0, 0, 0)
        return {"extracted": int(extracted), "failed": int(failed), "invalidated": int(invalidated)}

    def domain_summary(self) -> list[dict[str, Any]]:
        rows = self._query(
            "SELECT domain, count(*), total(status = 'removed'), total(extracted), total(failed), "
            "max(last_seen), max(last_changed) FROM page_summary GROUP BY 1 ORDER BY 2 DESC, 1"
        )
        return [
            {
                "domain": domain,
                "pages": int(pages),
                "removed": int(removed),
                "extracted": int(extracted),
                "failed": int(failed),
                "last_seen": last_seen,
                "last_changed": last_changed,
            }
            for domain, pages, removed, extracted, failed, last_seen, last_changed in rows
        ]

    def query_pages(
        self,
        *,
        domain: str | None = None,
        status: str | None = None,
        changed_since: str | None = None,
        failed: bool = False,
        converter_pending: bool = False,
        empty: bool = False,
        limit: int | None = None,
    ) -> Iterator[tuple[str, dict[str, Any]]]:
        """``(url_hash, record)`` of the pages matching every filter given, by URL.
        ``converter_pending``: pages whose stored text awaits a converter upgrade;
        ``empty``: pages whose last crawl found no text to extract (``empty_input``)."""
        where, params = [], []
        for column, value in (("domain", domain), ("status", status)):
            if value:
                where.append(f"s.{column} = ?")
                params.append(value)
        if changed_since:
            where.append("s.last_changed >= ?")
            params.append(changed_since)
        if failed:
            where.append("s.failed")
        if converter_pending:
            where.append("json_extract(p.value, '$.converter_pending') IS NOT NULL")
        if empty:  # rare: read from the record, not a summary column
            where.append("json_extract(p.value, '$.empty_input') IS NOT NULL")
        sql = "SELECT p.key, p.value FROM page_summary s JOIN pages p ON p.key = s.key"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY s.url"
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        for key, value in self._query(sql, params):
            try:
                record = json_decode(value)
            except ValueError:
                continue
            if isinstance(record, dict):
                yield key, record

    def find_page(self, url_or_hash: str) -> tuple[str, dict[str, Any]] | None:
        """A page by its URL (any spelling of it) or its url_hash; CacheCorruptError
        when its record cannot be read."""
        if URL_HASH_RE.match(url_or_hash):
            rows = self._query("SELECT key, value FROM pages WHERE key = ?", (url_or_hash,))
        else:
            rows = self._query(
                "SELECT p.key, p.value FROM pages p WHERE p.key IN ("
                "SELECT key FROM page_summary WHERE canonical_url = ? UNION SELECT key FROM page_summary WHERE url = ?"
                ") LIMIT 1",
                (canonical_url(url_or_hash), url_or_hash),
            )
        if not rows:
            return None
        key, value = rows[0]
        try:
            record = json_decode(value)
        except ValueError:
            record = None
        if not isinstance(record, dict):
            raise CacheCorruptError(
                f"The record of {url_or_hash} in the index cannot be read; `scrapy cache verify --repair` "
                "restores it from its metadata and extraction files."
            )
        return key, record

    # -- content -------------------------------------------------------------

    def get_content(self, url_hash: str) -> dict[str, Any] | None:
        content = self._get("content", url_hash)
        return content if isinstance(content, dict) else None

    def put_content(self, url_hash: str, content: dict[str, Any]) -> None:
        self._put("content", url_hash, content)

    def iter_content_keys(self) -> Iterator[str]:
        return iter(self._keys("content"))

    # -- responses -----------------------------------------------------------

    def get_response(self, url_hash: str) -> StoredResponse | None:
        response = self._get("responses", url_hash)
        return response if isinstance(response, StoredResponse) else None

    def put_response(self, url_hash: str, response: StoredResponse) -> None:
        self._put("responses", url_hash, response)

    # -- rendered pages ------------------------------------------------------

    def get_rendered(self, url_hash: str) -> RenderedPage | None:
        page = self._get("rendered", url_hash)
        return page if isinstance(page, RenderedPage) else None

    def put_rendered(self, url_hash: str, page: RenderedPage) -> None:
        self._put("rendered", url_hash, page)

    def iter_rendered_keys(self) -> Iterator[str]:
        return iter(self._keys("rendered"))

    def delete_rendered(self, url_hash: str) -> None:
        self._delete("rendered", url_hash)

    # -- parsed pages --------------------------------------------------------

    def get_parsed(self, url_hash: str) -> ParsedPage | None:
        page = self._get("parsed", url_hash)
        return page if isinstance(page, ParsedPage) else None

    def put_parsed(self, url_hash: str, page: ParsedPage) -> None:
        self._put("parsed", url_hash, page)

    # -- extractions ---------------------------------------------------------

    def extraction_path(self, url_hash: str) -> Path:
        return self.directory / "extractions" / f"{url_hash}.json"

    def metadata_path(self, url_hash: str) -> Path:
        return self.directory / "metadata" / f"{url_hash}_meta.json"

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
        path = self.extraction_path(url_hash)
        atomic_write_json(path, extraction)
        return str(path.relative_to(self.directory))

    def find_extraction(self, input_key: str) -> str | None:
        found = self._get("inputs", input_key)
        return found if isinstance(found, str) else None

    def link_extraction(self, input_key: str, url_hash: str) -> None:
        self._put("inputs", input_key, url_hash)

    def iter_inputs(self) -> Iterator[tuple[str, str]]:
        for key in self._keys("inputs"):
            value = self._get("inputs", key)
            if isinstance(value, str):
                yield key, value

    def delete_input(self, input_key: str) -> None:
        self._delete("inputs", input_key)

    def delete_extraction(self, url_hash: str) -> None:
        self._writable()
        self.extraction_path(url_hash).unlink(missing_ok=True)

    def iter_extraction_keys(self) -> Iterator[str]:
        for path in sorted((self.directory / "extractions").glob("*.json")):
            yield path.name.removesuffix(".json")

    def delete_page(self, url_hash: str) -> None:
        """Everything kept for one page: record, content, stored and rendered responses, files."""
        for name in ("pages", "content", "responses", "rendered", "parsed"):
            self._delete(name, url_hash)
        self.extraction_path(url_hash).unlink(missing_ok=True)
        self.metadata_path(url_hash).unlink(missing_ok=True)

    def write_metadata(self, url_hash: str, metadata: dict[str, Any]) -> str:
        path = self.metadata_path(url_hash)
        atomic_write_json(path, metadata)
        return str(path.relative_to(self.directory))

    # -- domains -------------------------------------------------------------

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

    def iter_domains(self) -> Iterator[str]:
        """The domains that have a record (read from the records: file names are hashes)."""
        seen: set[str] = set()
        for path in sorted((self.directory / "boilerplate").glob("*.json")):
            record = read_json_dict(path)
            domain = record.get("domain") if record else None
            if isinstance(domain, str) and domain not in seen:
                seen.add(domain)
                yield domain

    def put_domain(self, domain: str, record: dict[str, Any]) -> None:
        atomic_write_json(self.domain_path(domain), record)
        legacy = self.legacy_domain_path(domain)
        try:
            if read_json(legacy).get("domain", domain) == domain:
                legacy.unlink()  # replaced by the file just written
        except (OSError, ValueError, AttributeError):
            pass

    # -- run reports ---------------------------------------------------------

    def write_run_report(self, run_id: str, report: dict[str, Any]) -> Path:
        path = self.directory / "runs" / f"{run_id}.json"
        report = mask_data(report)  # errors in it may echo a key the crawl read
        atomic_write_json(path, report)
        atomic_write_json(self.directory / "runs" / "latest.json", report)
        return path

    def has_run_report(self, run_id: str) -> bool:
        """Whether the run ``run_id`` finished (a run killed before its report has none)."""
        return bool(run_id) and "/" not in run_id and (self.directory / "runs" / f"{run_id}.json").exists()

    def run_reports(self, last: int) -> list[dict[str, Any]]:
        """The last ``last`` run reports, oldest first (run ids sort by time)."""
        paths = sorted(p for p in (self.directory / "runs").glob("*.json") if p.name != "latest.json")
        reports = []
        for path in paths[-last:] if last > 0 else []:
            report = read_json_dict(path)
            if report is not None:
                reports.append(report)
        return reports

    def latest_run_report(self) -> dict[str, Any] | None:
        return read_json_dict(self.directory / "runs" / "latest.json")

    # -- lifecycle -----------------------------------------------------------

    @contextmanager
    def lock(self) -> Iterator[None]:
        """The cache directory's lock (``.lock``): raises CacheLockedError at once
        when another process (a crawl, a cache command) holds it."""
        lock = CacheLock(self.directory)
        lock.acquire()
        try:
            yield
        finally:
            lock.release()

    def size_on_disk(self, exact_up_to: int = 2000) -> dict[str, Any]:
        """Bytes used, by part of the cache. A folder of more than ``exact_up_to``
        files (``extractions/`` of a large site) is measured on an even sample of them
        and extrapolated (``approximate`` is then true): one ``stat`` per file of
        100,000 would take most of a second."""
        sizes: dict[str, Any] = {"index": 0, "extractions": 0, "metadata": 0, "other": 0}
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

    def commit(self) -> None:
        """Write what is pending, one transaction per table. Raises
        :class:`CacheStorageError` when SQLite fails; that table's pending writes are
        kept (a later commit tries them again), nothing committed before is touched."""
        if self.readonly:
            return
        # content and responses first: a page record never points at content that a
        # crash could lose
        for name in ("content", "responses", "rendered", "parsed", "inputs", "pages"):
            dirty = self._dirty[name]
            conn = self._conns.get(name)
            if conn is not None and dirty:
                try:
                    self._flush(conn, name, dirty)
                except sqlite3.DatabaseError as exc:
                    raise self._failed("write", name, exc) from exc
                dirty.clear()

    @staticmethod
    def _flush(conn: sqlite3.Connection, table: str, dirty: dict[str, Any]) -> None:
        """Write a table's changes since the last commit, and commit them."""
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.executemany(
                f'REPLACE INTO "{table}" (key, value) VALUES (?, ?)',
                [(key, value) for key, value in dirty.items() if value is not None],
            )
            conn.executemany(
                f'DELETE FROM "{table}" WHERE key = ?', [(key,) for key, value in dirty.items() if value is None]
            )
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise

    def close(self) -> None:
        try:
            self.commit()  # what is pending, in commit()'s order: content before records
        except Exception as exc:
            pending = sum(len(writes) for writes in self._dirty.values())
            logger.error(
                "Writing the cache's last %(n)d writes at close failed, they are lost: %(exc)s",
                {"n": pending, "exc": exc},
                exc_info=not isinstance(exc, CacheStorageError),  # a traceback for the unforeseen only
            )
        for name, conn in list(self._conns.items()):
            try:
                conn.close()
            except Exception:
                logger.exception("Closing cache table %(name)s failed", {"name": name})
        self._conns.clear()


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
