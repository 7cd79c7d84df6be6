"""The default, embedded store: one SQLite database file plus readable JSON files.

Layout of the cache directory (``EXTRACTED_DOCS_DIR``): see docs/cache.md. A cache of
the older layout is migrated the first time it is opened (:mod:`crawler.cache.migrate`).

Values are JSON, never pickled, so a tampered cache file cannot run code. What every
store does alike is :class:`crawler.cache.base.StoreBase`'s; one
:meth:`SqliteDocStore.commit` is one transaction over both tables. Files are written to
a temporary name and renamed, so a reader (or a crash) never sees half a file.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import threading
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from crawler.cache.base import StoreBase
from crawler.cache.codecs import (
    atomic_symlink,
    atomic_write_json,
    atomic_write_text,
    json_encode,
    json_file_text,
    kv_decode,
    read_json,
    read_json_dict,
)
from crawler.cache.errors import CacheCorruptError, CacheMissingError
from crawler.cache.lock import CacheLock
from crawler.cache.perms import CacheAccessError, access_problem, mkdir_problem, private_mkdir
from crawler.cache.sqlitefile import (
    DB_NAME,
    FORMAT_VERSION,
    STORE,
    UPSERT_PAGE,
    check_sqlite_file,
    prepare_database,
    upgrade_database,
)
from crawler.lib.hashing import sha256_hex
from crawler.support.secrets import mask_data

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Sequence
    from contextlib import AbstractContextManager

    from crawler.cache.sqlpages import PageRows, PartWrites, Touched

logger = logging.getLogger(__name__)

__all__ = ["SqliteDocStore", "index_lost"]

#: a page seen again: its last_seen column and two fields of its record, in place (a
#: record that is not JSON is left alone: it is verify's to find)
_TOUCH_PAGE = (
    "UPDATE pages SET last_seen = ?1, record = json_set(record, '$.last_seen', ?1, '$.run_id', ?2) "
    "WHERE key = ?3 AND json_valid(record)"
)


#: the name that points at the last run's report, in ``runs/``
LATEST = "latest.json"

#: one update of a domain record at a time in this process (``update_domain``)
_DOMAIN_UPDATES = threading.Lock()


class SqliteDocStore(StoreBase):
    """The embedded store (every port of :mod:`crawler.cache.ports`) in one directory."""

    embedded = True
    db_errors = (sqlite3.DatabaseError,)
    format_version = FORMAT_VERSION
    #: check every page of the database when opened for writing (``PRAGMA quick_check``)
    check_on_open: ClassVar[bool] = True

    def __init__(
        self, directory: str | Path, *, readonly: bool = False, create: bool = True, rebuilding: bool = False
    ) -> None:
        self.directory = Path(directory)
        super().__init__(str(self.directory), readonly=readonly)
        self.path = self.directory / DB_NAME
        self._lock = CacheLock(self.directory)
        self._conn: sqlite3.Connection | None = None
        #: the connection is one; a thread that reads (a command's) waits for another's statement
        self._conn_lock = threading.RLock()
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
                try:
                    private_mkdir(self.directory / sub)
                except OSError as exc:  # a path through a file, a read-only or missing mount
                    raise CacheAccessError(
                        f"The cache directory {self.directory / sub} cannot be made "
                        f"({mkdir_problem(self.directory / sub, exc)}): "
                        "set EXTRACTED_DOCS_DIR to a directory you may write. Nothing was changed."
                    ) from None
        self._open()

    def _open(self) -> None:
        """Check the file with a plain connection (every page readable, unless
        read-only the file writable; a file of an older format upgraded), then open
        the store's connection."""
        if self.readonly and (not self.path.exists() or self.path.stat().st_size == 0):
            return  # nothing stored yet: every read finds nothing
        try:
            check_sqlite_file(self.path, thorough=self.check_on_open and not self.readonly)
            if self.path.exists() and self.path.stat().st_size:
                upgrade_database(self.path)
            if not self.readonly:
                prepare_database(self.path)
            conn = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
        except CacheCorruptError:
            raise  # an upgrade that failed says so itself
        except (sqlite3.DatabaseError, OSError) as exc:
            if (cause := access_problem(self.path, exc, write=not self.readonly)) is not None:
                raise CacheAccessError(cause) from exc  # permissions or a lock: not damage
            raise CacheCorruptError(
                f"The cache file {self.path} cannot be read or written ({exc}). It was left as it is: "
                "`scrapy cache verify --repair` moves it aside (its page records are rebuilt from "
                "extractions/)."
            ) from exc
        try:
            conn.execute("PRAGMA synchronous = NORMAL")  # with WAL, never corrupt on a crash
            for table in ("kv", "pages"):  # a table missing (a read-only open) fails here
                conn.execute(f"SELECT 1 FROM {table} LIMIT 1").fetchall()
        except sqlite3.DatabaseError as exc:
            conn.close()
            raise CacheCorruptError(f"The cache file {self.path} cannot be read ({exc}).") from exc
        self._conn = conn
        try:
            self.check_versions(unrecorded_ok=True)
        except CacheCorruptError:
            self.close()
            raise

    # -- the lock and the format --------------------------------------------------

    @contextmanager
    def lock(self) -> Iterator[None]:
        """The directory's writer lock (``.lock``, an ``flock`` the kernel drops on any
        exit); raises :class:`~crawler.cache.lock.CacheLockedError` when another holds it."""
        self._lock.acquire()
        try:
            self._found_empty(self._is_empty())
            yield
        finally:
            self._found_empty(False)
            self._lock.release()

    def _is_empty(self) -> bool:
        """Whether the database holds no page record and no value but its own
        (``store/format``...): a new cache."""
        if self.readonly or self._conn is None:
            return False
        try:
            found = self._query(
                "SELECT 1 FROM pages UNION ALL SELECT 1 FROM kv WHERE key < ? OR key >= ? LIMIT 1",
                (STORE, STORE[:-1] + chr(ord(STORE[-1]) + 1)),  # (not "store/" to "store0")
            )
        except sqlite3.DatabaseError:
            return False  # then every read asks, and says what fails
        return not found

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

    # -- the primitives of StoreBase -------------------------------------------------

    def _where(self) -> str:
        return f"the cache file {self.path}"

    def _connected(self) -> bool:
        return self._conn is not None

    def _query(self, sql: str, args: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        if self._conn is None:
            return []
        with self._conn_lock:
            return self._conn.execute(sql, args).fetchall()

    def _read_parts(self, url_hash: str) -> dict[str, Any]:
        rows = self._query(
            "SELECT key, value FROM kv WHERE key IN (?, ?, ?, ?) UNION ALL SELECT '', record FROM pages WHERE key = ?",
            (*(f"{part}/{url_hash}" for part in ("content", "response", "rendered", "parsed")), url_hash),
        )
        return {key.partition("/")[0]: raw for key, raw in rows}

    def _read_part_of(self, part: str, keys: list[str], value: str = "value") -> dict[str, Any]:
        """StoreBase's; ``value``: what of each value to read (an SQL expression of it)."""
        skip = len(part) + 1
        rows = self._select_keys(f"SELECT key, {value} FROM kv WHERE key IN ({{keys}})", [f"{part}/{k}" for k in keys])
        return {key[skip:]: raw for key, raw in rows}

    def _json_fields_sql(self, column: str, paths: Sequence[tuple[str, ...]]) -> str | None:
        """StoreBase's, by SQLite's JSON functions: the column parsed twice (checked, then
        read; an object starts with "{" as json_encode writes it), not decoded in Python."""
        where = ", ".join(f"'$.{'.'.join(path)}'" for path in (*paths, paths[0]))  # (two at least: an array)
        return (
            f"CASE WHEN json_valid({column}) AND substr({column}, 1, 1) = '{{' THEN json_extract({column}, {where}) END"
        )

    def _text_hash_fields(self, url_hashes: list[str]) -> dict[str, tuple[Any, Any] | None]:
        """StoreBase's, by SQLite's JSON functions: no content decoded (an unreadable one
        is None here, and counted when it is read)."""
        values_sql = self._json_fields_sql("value", [("text_sha256",), ("clean_sha256",)])
        assert values_sql is not None  # (SQLite's is SQL)
        found = self._read_part_of("content", url_hashes, value=values_sql)
        return {key: (*json.loads(values)[:2],) for key, values in found.items() if values is not None}

    def _part_keys(self, part: str) -> list[str]:
        # '/' + 1 is '0': every key that starts with "part/" sorts between them
        rows = self._query("SELECT key FROM kv WHERE key >= ? AND key < ?", (part + "/", part + "0"))
        return [row[0][len(part) + 1 :] for row in rows]

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """The connection in a write transaction of its own (under the connection's
        lock): committed when the block ends, rolled back when it raises."""
        assert self._conn is not None
        conn = self._conn
        with self._conn_lock:
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
                conn.execute("COMMIT")
            except BaseException:
                with suppress(sqlite3.Error):  # no transaction left to roll back
                    conn.execute("ROLLBACK")
                raise

    def _write(self, pages: PageRows, parts: PartWrites, touched: Touched) -> None:
        with self._transaction() as conn:
            puts = [(f"{part}/{key}", value) for (key, part), value in parts.items() if value is not None]
            if puts:
                conn.executemany("REPLACE INTO kv (key, value) VALUES (?, ?)", puts)
            deletes = [(f"{part}/{key}",) for (key, part), value in parts.items() if value is None]
            if deletes:
                conn.executemany("DELETE FROM kv WHERE key = ?", deletes)
            rows = [row for row in pages.values() if row is not None]
            if rows:
                conn.executemany(UPSERT_PAGE, rows)
            gone = [(key,) for key, row in pages.items() if row is None]
            if gone:
                conn.executemany("DELETE FROM pages WHERE key = ?", gone)
            if touched:
                conn.executemany(_TOUCH_PAGE, [(seen, run, key) for key, (seen, run) in touched.items()])

    def _write_rows(self, sql: str, rows: list[tuple[Any, ...]]) -> None:
        with self._transaction() as conn:
            conn.executemany(sql, rows)

    def _write_stats(self, domain: str, parts: Sequence[bytes | bytearray | memoryview]) -> None:
        """BlockQueries': the row written with a blob of the whole size, then the parts
        into it one after the other (SQLite's incremental blob I/O): no copy of the
        whole statistics (6 MB for a 100,000-page domain) in this process or SQLite's."""
        size = sum(memoryview(part).nbytes for part in parts)
        with self._transaction() as conn:
            conn.execute(
                "INSERT INTO block_stats (domain, stats) VALUES (?, zeroblob(?)) "
                "ON CONFLICT (domain) DO UPDATE SET stats = excluded.stats",
                (domain, size),
            )
            (rowid,) = conn.execute("SELECT rowid FROM block_stats WHERE domain = ?", (domain,)).fetchone()
            with conn.blobopen("block_stats", "stats", rowid) as blob:
                for part in parts:
                    blob.write(part)

    def _disconnect(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            try:
                conn.close()
            except Exception:
                logger.exception("Closing the cache database %(path)s failed", {"path": self.path})

    # -- the key-value table, as the migration and a salvage write it ------------------

    def _kv_put(self, key: str, value: Any) -> None:
        """``value`` (decoded: bytes, or anything JSON) under the key-value table's ``key``."""
        part, _, name = key.partition("/")
        self._put_part(name, part, value if isinstance(value, bytes) else json_encode(value))

    def _kv_raw(self, key: str) -> Any:
        part, _, name = key.partition("/")
        if (name, part) in self._parts_pending:
            return self._parts_pending[name, part]
        rows = self._select("SELECT value FROM kv WHERE key = ?", (key,))
        return rows[0][0] if rows else None

    def _kv_get(self, key: str, table: str) -> Any:
        """The decoded value of ``key``, pending writes first; None when missing or
        unreadable (counted)."""
        raw = self._kv_raw(key)
        try:
            return None if raw is None else kv_decode(raw)
        except (ValueError, UnicodeDecodeError, TypeError) as exc:
            self._unreadable(table, key.partition("/")[2], exc)
            return None

    # -- extractions -----------------------------------------------------------------------

    def extraction_path(self, url_hash: str) -> Path:
        return self.directory / "extractions" / f"{url_hash}.json"

    def extraction_name(self, url_hash: str) -> str:
        return f"extractions/{url_hash}.json"

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

    def set_extraction_aside(self, url_hash: str, suffix: str) -> str:
        """The extraction file renamed ``{url_hash}.json{suffix}`` (no longer an
        extraction of any page, kept for a person): its new name."""
        self._writable()
        path = self.extraction_path(url_hash)
        aside = path.with_name(path.name + suffix)
        path.rename(aside)
        return f"extractions/{aside.name}"

    def iter_extraction_keys(self) -> Iterator[str]:
        folder = self.directory / "extractions"
        if not folder.is_dir():
            return iter(())
        return iter(sorted(p.stem for p in folder.glob("*.json") if not p.name.startswith(".")))

    def find_extraction(self, input_key: str) -> str | None:
        if (input_key, "input") not in self._parts_pending and self._nothing_stored(input_key):
            return None  # (a first crawl's new inputs: no query)
        found: str | None = self._json("inputs", input_key, self._kv_raw("input/" + input_key), str)
        return found

    def link_extraction(self, input_key: str, url_hash: str) -> None:
        self._put_part(input_key, "input", json_encode(url_hash))

    def iter_inputs(self) -> Iterator[tuple[str, str]]:
        for key in self._keys_of("input"):
            value = self.find_extraction(key)
            if value is not None:
                yield key, value

    def delete_input(self, input_key: str) -> None:
        self._put_part(input_key, "input", None)

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
        """``runs/<run id>.json``, and ``runs/latest.json`` pointed at it: a symbolic
        link (every reader of the file reads the report), or where the file system has
        none, a pointer ``{"run_id", "report": "runs/<run id>.json"}``; never a copy."""
        self._writable()
        path = Path(self.run_report_location(run_id))
        atomic_write_text(path, json_file_text(mask_data(report)))  # errors in it may echo a key the crawl read
        latest = self.directory / "runs" / LATEST
        try:
            atomic_symlink(path.name, latest)
        except OSError:
            atomic_write_json(latest, {"run_id": run_id, "report": f"runs/{path.name}"})
        return self.run_report_location(run_id)

    def run_report_location(self, run_id: str) -> str:
        return str(self.directory / "runs" / f"{run_id}.json")

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
        paths = sorted(p for p in (self.directory / "runs").glob("*.json") if p.name != LATEST)
        reports = []
        for path in paths[-last:] if last > 0 else []:
            report = read_json_dict(path)
            if report is not None:
                reports.append(report)
        return reports

    def latest_run_report(self) -> dict[str, Any] | None:
        """The report ``runs/latest.json`` points at (a link, or a pointer), or holds
        (a copy, as versions before the pointer wrote it)."""
        found = read_json_dict(self.directory / "runs" / LATEST)
        if found is not None and set(found) == {"run_id", "report"}:  # a pointer
            return self.run_report(str(found["run_id"]))
        return found

    # -- files -------------------------------------------------------------------------------

    def leftovers(self) -> list[str]:
        """Temporary files a killed run left (``extractions/.x.json.123.tmp``...)."""
        return [
            str(path.relative_to(self.directory))
            for sub in ("extractions", "runs", "boilerplate")
            for path in sorted((self.directory / sub).glob(".*.tmp"))
        ]

    def delete_leftovers(self, names: Iterable[str]) -> None:
        self._writable()
        for name in names:
            (self.directory / name).unlink(missing_ok=True)

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
