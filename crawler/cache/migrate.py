"""Migrating a cache of the older layout (``index.sqlite``, ``content.sqlite``, ...,
``metadata/``) into the one-file store, once, in place, on its first open.

``cache.sqlite`` is built in ``.migrating/`` and renamed into place before the old files
are removed, so an interrupted migration leaves the old cache as it was and is done
again at the next open. Pages keyed by another ``REQUEST_FINGERPRINTER_CLASS`` are
re-keyed with everything stored for them. See docs/cache.md.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import sqlite3
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from crawler.cache.codecs import atomic_write_json, json_encode, read_json_dict
from crawler.cache.errors import CacheCorruptError
from crawler.cache.lock import CacheLock, CacheLockedError, FileLock, LockHeldError
from crawler.cache.records import utcnow
from crawler.cache.sqlitefile import DB_NAME, UPSERT_PAGE, check_sqlite_file, import_report_changes, prepare_database
from crawler.cache.sqlpages import page_row
from crawler.identity import page_key
from crawler.lib.urls import canonical_url

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

logger = logging.getLogger(__name__)

#: table -> file of the older layout
LEGACY_FILES = {
    "pages": "index.sqlite",
    "content": "content.sqlite",
    "responses": "responses.sqlite",
    "rendered": "rendered.sqlite",
    "inputs": "inputs.sqlite",
    "parsed": "parsed.sqlite",
}
WORK_DIR = ".migrating"
MIGRATION_KEY = "store/migration"
#: the work database is committed every so many rows or bytes
COMMIT_ROWS = 500
COMMIT_BYTES = 8 * 1024 * 1024


@dataclass
class Migrated:
    """What a migration kept, re-keyed and skipped (logged, and recorded in the database)."""

    pages: int = 0
    history_events: int = 0
    content: int = 0
    responses: int = 0
    rendered: int = 0
    parsed: int = 0
    inputs: int = 0
    extractions: int = 0
    #: pages whose record came from metadata/ (unreadable or missing in the index)
    from_metadata: int = 0
    #: old key -> new key
    rekeyed: dict[str, str] = field(default_factory=dict)
    #: re-keyed pages whose vector points are still under their old key (moved by the
    #: next vector sync or ``scrapy vectors verify --repair``, without embedding)
    vectors_to_move: int = 0
    #: pages of one canonical URL under two old keys: the later seen one is kept
    merged: int = 0
    #: rows (content, response, rendering, parsed page, input link) of the pages merged
    #: into another, not copied: they are not the kept record's
    skipped: int = 0
    unreadable: int = 0
    at: str = field(default_factory=utcnow)


def legacy_files(directory: Path) -> list[Path]:
    """The files of the older layout in ``directory`` (databases and their -wal/-shm)."""
    return [
        directory / (name + suffix)
        for name in LEGACY_FILES.values()
        for suffix in ("", "-wal", "-shm")
        if (directory / (name + suffix)).exists()
    ]


def is_legacy(directory: Path) -> bool:
    return any((directory / name).exists() for name in LEGACY_FILES.values())


def migrate_if_needed(directory: Path) -> Migrated | None:
    """Migrate ``directory`` if it holds a cache of the older layout; finish a
    migration whose clean-up was interrupted. Returns what was migrated (``None``: nothing to do)."""
    if not any((directory / name).exists() for name in (*LEGACY_FILES.values(), WORK_DIR, "metadata")):
        return None
    lock = FileLock(directory / ".migrate.lock")
    try:
        lock.acquire()
    except LockHeldError as exc:
        raise CacheCorruptError(
            f"The cache {directory} is being migrated to the one-file layout by another process "
            f"(pid {exc.holder}); try again when it has finished."
        ) from None
    try:
        cleaning_up = (directory / DB_NAME).exists() or not is_legacy(directory)
        with _cache_locked(directory, cleaning_up=cleaning_up) as locked:
            if not locked:
                return None  # a crawl writes to the cache: its leftovers are removed at a later open
            if (directory / DB_NAME).exists():
                _clean_up(directory, _recorded(directory / DB_NAME))
                return None
            if not is_legacy(directory):
                shutil.rmtree(directory / WORK_DIR, ignore_errors=True)
                return None
            try:
                return migrate(directory)
            except OSError as exc:
                shutil.rmtree(directory / WORK_DIR, ignore_errors=True)
                raise CacheCorruptError(
                    f"The cache {directory} (of the older layout) could not be migrated to the one-file layout "
                    f"({exc}); it was left as it was."
                ) from exc
    finally:
        lock.release()


@contextmanager
def _cache_locked(directory: Path, *, cleaning_up: bool) -> Iterator[bool]:
    """The cache's own lock (``.lock``, a crawl's) for the length of a migration or its
    clean-up, released after (before the store takes it again). Yields False when a
    crawl holds it and there is only clean-up to do (left for a later open); raises
    :class:`CacheLockedError` when a crawl holds it and the cache is to be migrated:
    a crawl of the older code writes to the files the migration replaces. Already
    held by this process (``scrapy cache verify --repair``): used as it is."""
    cache_lock = CacheLock(directory)
    if cache_lock.held_by_this_process():
        yield True
        return
    try:
        cache_lock.acquire(f"{os.getpid()}, migrating the cache")
    except CacheLockedError:
        if cleaning_up:
            yield False
            return
        raise CacheLockedError(
            f"The cache {directory} (of the older layout) is in use by a crawl (pid {_holder(cache_lock.path)}); "
            "it is migrated to the one-file layout when it is opened while no crawl runs. Nothing was changed."
        ) from None
    try:
        yield True
    finally:
        cache_lock.release()


def _holder(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace").strip() or "unknown"
    except OSError:
        return "unknown"


def migrate(directory: Path) -> Migrated:
    """Build ``cache.sqlite`` from the older layout's files, rename it into place,
    then remove the old files (see the module's docstring). Each old table is read
    row by row and the work database committed every :data:`COMMIT_ROWS` rows or
    :data:`COMMIT_BYTES` bytes (it is private until the rename): the old cache is
    never held in memory, only each page's old and new key."""
    work = directory / WORK_DIR
    shutil.rmtree(work, ignore_errors=True)  # what an interrupted migration left
    work.mkdir(mode=0o700)
    done = Migrated()
    old = _LegacyReader(directory)
    try:
        store = _WorkDatabase(work / DB_NAME)
        try:
            kept, dropped = _keys(directory, old, done)
            written = _Batches(store)
            for old_key, record in _kept_records(directory, old, kept):
                new_key = kept[old_key]
                done.pages += 1
                done.history_events += len(record.get("history") or [])
                if new_key != old_key:
                    done.rekeyed[old_key] = new_key
                    extraction = record.get("extraction")
                    if isinstance(extraction, dict):
                        extraction["file"] = f"extractions/{new_key}.json"
                    vectors = record.get("vectors")
                    if isinstance(vectors, dict) and not vectors.get("deleted_at"):
                        # its points are under the old key: the next vector sync moves them
                        vectors["moved_from"] = vectors.get("moved_from") or old_key
                        done.vectors_to_move += 1
                store.put_page(new_key, record)
                written.add(0)
            taken = set(kept.values())

            def target(key: str) -> str | None:
                """Where an old row of ``key`` goes: its kept page's key; None for a
                page merged into another (its parts are not the kept record's)."""
                if key in kept:
                    return kept[key]
                if key in dropped or key in taken:
                    done.skipped += 1
                    return None
                return key  # a part without a readable record, kept as it was

            for table, prefix, counter in (
                ("content", "content/", "content"),
                ("responses", "response/", "responses"),
                ("rendered", "rendered/", "rendered"),
                ("parsed", "parsed/", "parsed"),
            ):
                for key, value in old.items(table, done):
                    to = target(key)
                    if to is None:
                        continue
                    store.kv_put(prefix + to, value)
                    setattr(done, counter, getattr(done, counter) + 1)
                    written.add(len(value) if isinstance(value, bytes) else 0)
            for input_key, value in old.items("inputs", done):
                if isinstance(value, str):
                    to = target(value)
                    if to is None:
                        continue
                    store.link_extraction(input_key, to)
                    done.inputs += 1
                    written.add(0)
            import_report_changes(store.conn, directory / DB_NAME)  # the runs' change lists, in their table
            store.kv_put(MIGRATION_KEY, asdict(done))
            store.commit()
        finally:
            store.close()
    finally:
        old.close()
    # re-keyed extraction files, under their new names (the old names stay until the rename)
    extractions = directory / "extractions"
    for old_key, new_key in done.rekeyed.items():
        data = read_json_dict(extractions / f"{old_key}.json")
        if data is not None:
            data["url_hash"] = new_key
            atomic_write_json(extractions / f"{new_key}.json", data)
    done.extractions = sum(1 for _ in extractions.glob("*.json")) if extractions.is_dir() else 0
    _fsync(work / DB_NAME)
    os.replace(work / DB_NAME, directory / DB_NAME)  # the migration is done from here on
    _fsync(directory)
    _clean_up(directory, asdict(done))
    logger.info(
        "Migrated the cache in %(dir)s to one database (%(db)s): %(pages)d pages (%(events)d history events), "
        "%(content)d contents, %(responses)d stored responses, %(rendered)d renderings, %(parsed)d parsed pages, "
        "%(inputs)d extraction links, %(extractions)d extraction files; %(rekeyed)d pages re-keyed (another "
        "request fingerprinter made their keys; the vector points of %(vectors)d of them are moved to their new keys "
        "by the next vector sync or `scrapy vectors verify --repair`), %(merged)d merged "
        "(%(skipped)d rows of the pages merged into another dropped), %(from_metadata)d records taken from "
        "metadata/, %(unreadable)d unreadable entries skipped; the old files and metadata/ removed",
        {
            "dir": directory,
            "db": DB_NAME,
            "pages": done.pages,
            "events": done.history_events,
            "content": done.content,
            "responses": done.responses,
            "rendered": done.rendered,
            "parsed": done.parsed,
            "inputs": done.inputs,
            "extractions": done.extractions,
            "rekeyed": len(done.rekeyed),
            "merged": done.merged,
            "vectors": done.vectors_to_move,
            "skipped": done.skipped,
            "from_metadata": done.from_metadata,
            "unreadable": done.unreadable,
        },
    )
    return done


def _keys(directory: Path, old: _LegacyReader, done: Migrated) -> tuple[dict[str, str], set[str]]:
    """Which old pages are kept (old key -> new key) and which are dropped: of two
    old keys of one canonical URL, the record seen last is kept. Reads the records
    one by one: the index's, else the metadata file's (an unreadable or lost index
    entry)."""
    by_new: dict[str, tuple[str, str]] = {}  # new key -> (old key, last_seen) of the kept record
    dropped: set[str] = set()
    for old_key, record in _all_records(directory, old, done):
        if not isinstance(record, dict) or not isinstance(record.get("url"), str):
            done.unreadable += 1
            continue
        canonical = record.get("canonical_url") or canonical_url(record["url"])
        new_key = page_key(canonical)
        seen = str(record.get("last_seen", ""))
        other = by_new.get(new_key)
        if other is not None:
            done.merged += 1
            if other[1] >= seen:
                dropped.add(old_key)
                continue
            dropped.add(other[0])
        by_new[new_key] = (old_key, seen)
    kept = {old_key: new_key for new_key, (old_key, _) in by_new.items()}
    dropped -= kept.keys()
    return kept, dropped


def _all_records(directory: Path, old: _LegacyReader, done: Migrated) -> Iterator[tuple[str, Any]]:
    """Every old page record, one at a time: the index's, then those of metadata/
    whose index entry is unreadable or missing (counted in ``done``)."""
    in_index: set[str] = set()
    for key, record in old.items("pages", done):
        in_index.add(key)
        yield key, record
    metadata = directory / "metadata"
    if metadata.is_dir():
        for path in sorted(metadata.glob("*_meta.json")):
            key = path.name.removesuffix("_meta.json")
            if key in in_index:
                continue
            meta = read_json_dict(path)
            if meta is not None and meta.get("url") and meta.get("url_hash", key) == key:
                meta.pop("url_hash", None)
                done.from_metadata += 1
                yield key, meta


def _kept_records(directory: Path, old: _LegacyReader, kept: dict[str, str]) -> Iterator[tuple[str, dict[str, Any]]]:
    """The kept pages' records, read again one at a time."""
    for key, record in _all_records(directory, old, Migrated()):
        if key in kept:
            yield key, record


class _WorkDatabase:
    """The database a migration builds (private until renamed into place), in the
    store's layout (:mod:`crawler.cache.sqlitefile`), written with plain SQL: a store
    would migrate the directory it is opened on."""

    def __init__(self, path: Path) -> None:
        prepare_database(path)
        self.conn = sqlite3.connect(path, isolation_level=None)
        self.conn.execute("BEGIN IMMEDIATE")

    def put_page(self, key: str, record: dict[str, Any]) -> None:
        self.conn.execute(UPSERT_PAGE, page_row(key, record))

    def kv_put(self, key: str, value: Any) -> None:
        """``value`` (bytes, or anything JSON) under ``key`` of the key-value table."""
        encoded = value if isinstance(value, bytes) else json_encode(value)
        self.conn.execute("REPLACE INTO kv (key, value) VALUES (?, ?)", (key, encoded))

    def link_extraction(self, input_key: str, url_hash: str) -> None:
        self.kv_put(f"input/{input_key}", url_hash)

    def commit(self) -> None:
        self.conn.execute("COMMIT")
        self.conn.execute("BEGIN IMMEDIATE")

    def close(self) -> None:
        if self.conn.in_transaction:
            self.conn.execute("COMMIT")
        self.conn.close()  # the last connection: the WAL is written into the file


class _Batches:
    """Commits the work database every :data:`COMMIT_ROWS` rows or :data:`COMMIT_BYTES` bytes."""

    def __init__(self, store: _WorkDatabase) -> None:
        self.store = store
        self.rows = 0
        self.size = 0

    def add(self, size: int) -> None:
        self.rows += 1
        self.size += size
        if self.rows >= COMMIT_ROWS or self.size >= COMMIT_BYTES:
            self.store.commit()
            self.rows = self.size = 0


class _LegacyReader:
    """Read-only connections to the older layout's files, each checked page by page."""

    def __init__(self, directory: Path) -> None:
        self.conns: dict[str, sqlite3.Connection] = {}
        for table, name in LEGACY_FILES.items():
            path = directory / name
            if not path.exists() or path.stat().st_size == 0:
                continue
            try:
                check_sqlite_file(path, thorough=True)
                # not mode=ro: SQLite replays a WAL left by a killed crawl
                self.conns[table] = sqlite3.connect(path)
            except sqlite3.DatabaseError as exc:
                self.close()
                raise CacheCorruptError(
                    f"The cache file {path} (of the older layout) cannot be read ({exc}); it was not migrated "
                    "and nothing was changed. Move it aside and open the cache again: what it held comes back "
                    "with the next crawl."
                ) from exc

    def items(self, table: str, done: Migrated) -> Iterator[tuple[str, Any]]:
        """The rows of ``table``, one at a time, values decoded (unreadable ones counted in ``done``)."""
        conn = self.conns.get(table)
        if conn is None:
            return
        binary = table in ("responses", "rendered")
        try:
            for key, raw in conn.execute(f'SELECT key, value FROM "{table}" ORDER BY rowid'):
                if binary:
                    if isinstance(raw, bytes):
                        yield key, raw
                    else:
                        done.unreadable += 1
                    continue
                try:
                    value = json.loads(raw)
                except (ValueError, TypeError):
                    done.unreadable += 1
                    continue
                yield key, value
        except sqlite3.OperationalError as exc:
            if "no such table" not in str(exc):
                raise

    def close(self) -> None:
        for conn in self.conns.values():
            conn.close()
        self.conns.clear()


def _recorded(path: Path) -> dict[str, Any] | None:
    """The migration record in ``cache.sqlite``: present only in a migrated database."""
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            row = conn.execute("SELECT value FROM kv WHERE key = ?", (MIGRATION_KEY,)).fetchone()
        finally:
            conn.close()
        data = json.loads(row[0]) if row else None
    except (sqlite3.DatabaseError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _clean_up(directory: Path, migrated: dict[str, Any] | None) -> None:
    """Remove what the older layout left once ``cache.sqlite`` holds its migration:
    the old databases, ``metadata/``, the extraction files of re-keyed pages, the work
    directory. Old files beside a database that was not migrated from them are left."""
    shutil.rmtree(directory / WORK_DIR, ignore_errors=True)
    if migrated is None:
        return
    for old_key, new_key in (migrated.get("rekeyed") or {}).items():
        if old_key != new_key:
            (directory / "extractions" / f"{old_key}.json").unlink(missing_ok=True)
    for path in legacy_files(directory):
        path.unlink(missing_ok=True)
    shutil.rmtree(directory / "metadata", ignore_errors=True)


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
