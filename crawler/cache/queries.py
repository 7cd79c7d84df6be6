"""Read-only queries on the default (SQLite) cache, in SQL: what ``scrapy cache`` shows.

The crawl reads the index by key (crawler.cache.sqlite); questions over all pages (how
many are removed, which failed) are answered here by SQLite itself (its JSON
functions), so they stay fast on caches of 100,000 pages and more. Safe to run while a
crawl writes (WAL mode: readers never block the writer).
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Any

from crawler.cache.sqlite import TABLE_FILES, add_summary_table, check_sqlite_file, index_lost, read_json_dict
from crawler.cache.store import CacheCorruptError
from crawler.lib.urls import canonical_url

if TYPE_CHECKING:
    from collections.abc import Iterator

URL_HASH_RE = re.compile(r"^[0-9a-f]{40}$")


class CacheMissingError(RuntimeError):
    """There is no cache (or an empty one) where the settings point."""


class CacheReader:
    """Read-only view of a cache directory made by :class:`SqliteDocStore`."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory)
        index = self.directory / TABLE_FILES["pages"]
        if index_lost(self.directory):
            raise CacheCorruptError(
                f"The cache index {index} is missing or empty but metadata/ holds page records: "
                "`scrapy cache verify --repair` rebuilds it."
            )
        if not index.exists():
            raise CacheMissingError(f"No cache in {self.directory}: run a crawl first.")
        self._connections: dict[str, sqlite3.Connection] = {}
        try:
            check_sqlite_file(index)
            add_summary_table(index)  # a cache made before the summary existed
            self.db("pages").execute("SELECT 1 FROM page_summary LIMIT 1").fetchall()
        except sqlite3.DatabaseError as exc:
            self.close()
            raise CacheCorruptError(
                f"The cache index {index} cannot be read ({exc}); `scrapy cache verify --repair` rebuilds it "
                "from the extraction and metadata files."
            ) from exc

    def db(self, table: str) -> sqlite3.Connection:
        conn = self._connections.get(table)
        if conn is None:
            path = self.directory / TABLE_FILES[table]
            check_sqlite_file(path)
            conn = sqlite3.connect(path)
            self._connections[table] = conn
        return conn

    def close(self) -> None:
        for conn in self._connections.values():
            conn.close()
        self._connections.clear()

    def __enter__(self) -> CacheReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- counts (from the page_summary table) --------------------------------------

    def status_counts(self) -> dict[str, int]:
        rows = self.db("pages").execute("SELECT status, count(*) FROM page_summary GROUP BY 1").fetchall()
        return {str(status): int(n) for status, n in rows}

    def extraction_counts(self) -> dict[str, int]:
        row = (
            self.db("pages")
            .execute("SELECT total(extracted), total(failed), total(invalidated) FROM page_summary")
            .fetchone()
        )
        return {"extracted": int(row[0]), "failed": int(row[1]), "invalidated": int(row[2])}

    def domains(self) -> list[dict[str, Any]]:
        rows = (
            self.db("pages")
            .execute(
                "SELECT domain, count(*), total(status = 'removed'), total(extracted), total(failed), "
                "max(last_seen), max(last_changed) FROM page_summary GROUP BY 1 ORDER BY 2 DESC, 1"
            )
            .fetchall()
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

    # -- pages -------------------------------------------------------------------

    def pages(
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
        for key, value in self.db("pages").execute(sql, params):
            try:
                record = json.loads(value)
            except ValueError:
                continue
            if isinstance(record, dict):
                yield key, record

    def find(self, url_or_hash: str) -> tuple[str, dict[str, Any]] | None:
        """A page by its URL (any spelling of it) or its url_hash."""
        conn = self.db("pages")
        if URL_HASH_RE.match(url_or_hash):
            row = conn.execute("SELECT key, value FROM pages WHERE key = ?", (url_or_hash,)).fetchone()
        else:
            row = conn.execute(
                "SELECT p.key, p.value FROM pages p WHERE p.key IN ("
                "SELECT key FROM page_summary WHERE canonical_url = ? UNION SELECT key FROM page_summary WHERE url = ?"
                ") LIMIT 1",
                (canonical_url(url_or_hash), url_or_hash),
            ).fetchone()
        if row is None:
            return None
        try:
            record = json.loads(row[1])
        except ValueError:
            raise CacheCorruptError(
                f"The record of {url_or_hash} in the index cannot be read; `scrapy cache verify --repair` "
                "restores it from its metadata and extraction files."
            ) from None
        return row[0], record

    def content(self, url_hash: str) -> dict[str, Any] | None:
        if not (self.directory / TABLE_FILES["content"]).exists():
            return None
        row = self.db("content").execute("SELECT value FROM content WHERE key = ?", (url_hash,)).fetchone()
        return json.loads(row[0]) if row else None

    def extraction(self, url_hash: str) -> dict[str, Any] | None:
        return read_json_dict(self.directory / "extractions" / f"{url_hash}.json")

    def metadata(self, url_hash: str) -> dict[str, Any] | None:
        return read_json_dict(self.directory / "metadata" / f"{url_hash}_meta.json")

    # -- runs and disk -----------------------------------------------------------

    def runs(self, last: int) -> list[dict[str, Any]]:
        paths = sorted(p for p in (self.directory / "runs").glob("*.json") if p.name != "latest.json")
        reports = []
        for path in paths[-last:] if last > 0 else []:
            report = read_json_dict(path)
            if report is not None:
                reports.append(report)
        return reports

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
