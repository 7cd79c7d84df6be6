"""Read-only queries on the default (SQLite) cache, in SQL: what ``scrapy cache`` shows.

The crawl reads the index by key through sqlitedict; questions over all pages (how
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

from crawler.cache.sqlite import TABLE_FILES, check_sqlite_file, read_json
from crawler.cache.store import CacheCorruptError
from crawler.lib.urls import canonical_url

if TYPE_CHECKING:
    from collections.abc import Iterator

URL_HASH_RE = re.compile(r"^[0-9a-f]{40}$")
STATUS = "json_extract(value, '$.status')"
DOMAIN = "json_extract(value, '$.domain')"


class CacheMissingError(RuntimeError):
    """There is no cache (or an empty one) where the settings point."""


class CacheReader:
    """Read-only view of a cache directory made by :class:`SqliteDocStore`."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory)
        index = self.directory / TABLE_FILES["pages"]
        if not index.exists():
            raise CacheMissingError(f"No cache in {self.directory}: run a crawl first.")
        self._connections: dict[str, sqlite3.Connection] = {}
        try:
            self.db("pages").execute("SELECT 1 FROM pages LIMIT 1").fetchall()
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

    # -- counts ----------------------------------------------------------------

    def count(self) -> int:
        return int(self.db("pages").execute("SELECT count(*) FROM pages").fetchone()[0])

    def status_counts(self) -> dict[str, int]:
        rows = self.db("pages").execute(f"SELECT {STATUS}, count(*) FROM pages GROUP BY 1").fetchall()
        return {str(status): int(n) for status, n in rows}

    def extraction_counts(self) -> dict[str, int]:
        row = (
            self.db("pages")
            .execute(
                "SELECT count(json_extract(value, '$.extraction.input_key')), "
                "count(json_extract(value, '$.extraction_error.at')), "
                "count(json_extract(value, '$.invalidated')) FROM pages"
            )
            .fetchone()
        )
        return {"extracted": int(row[0]), "failed": int(row[1]), "invalidated": int(row[2])}

    def domains(self) -> list[dict[str, Any]]:
        rows = (
            self.db("pages")
            .execute(
                f"SELECT {DOMAIN}, count(*), "
                f"sum({STATUS} = 'removed'), "
                "count(json_extract(value, '$.extraction.input_key')), "
                "count(json_extract(value, '$.extraction_error.at')), "
                "max(json_extract(value, '$.last_seen')), max(json_extract(value, '$.last_changed')) "
                "FROM pages GROUP BY 1 ORDER BY 2 DESC, 1"
            )
            .fetchall()
        )
        return [
            {
                "domain": domain,
                "pages": int(pages),
                "removed": int(removed or 0),
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
        limit: int | None = None,
    ) -> Iterator[tuple[str, dict[str, Any]]]:
        """``(url_hash, record)`` of the pages matching every filter given, by URL."""
        where, params = [], []
        if domain:
            where.append(f"{DOMAIN} = ?")
            params.append(domain)
        if status:
            where.append(f"{STATUS} = ?")
            params.append(status)
        if changed_since:
            where.append("json_extract(value, '$.last_changed') >= ?")
            params.append(changed_since)
        if failed:
            where.append("json_extract(value, '$.extraction_error') IS NOT NULL")
        sql = "SELECT key, value FROM pages"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY json_extract(value, '$.url')"
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
            canonical = canonical_url(url_or_hash)
            row = conn.execute(
                "SELECT key, value FROM pages WHERE json_extract(value, '$.canonical_url') = ? "
                "OR json_extract(value, '$.url') = ? LIMIT 1",
                (canonical, url_or_hash),
            ).fetchone()
        if row is None:
            return None
        return row[0], json.loads(row[1])

    def content(self, url_hash: str) -> dict[str, Any] | None:
        if not (self.directory / TABLE_FILES["content"]).exists():
            return None
        row = self.db("content").execute("SELECT value FROM content WHERE key = ?", (url_hash,)).fetchone()
        return json.loads(row[0]) if row else None

    def extraction(self, url_hash: str) -> dict[str, Any] | None:
        return _read_optional(self.directory / "extractions" / f"{url_hash}.json")

    def metadata(self, url_hash: str) -> dict[str, Any] | None:
        return _read_optional(self.directory / "metadata" / f"{url_hash}_meta.json")

    # -- runs and disk -----------------------------------------------------------

    def runs(self, last: int) -> list[dict[str, Any]]:
        paths = sorted(p for p in (self.directory / "runs").glob("*.json") if p.name != "latest.json")
        reports = []
        for path in paths[-last:] if last > 0 else []:
            report = _read_optional(path)
            if report is not None:
                reports.append(report)
        return reports

    def size_on_disk(self) -> dict[str, int]:
        """Bytes used, by part of the cache."""
        sizes = {"index": 0, "extractions": 0, "metadata": 0, "other": 0}
        for entry in _walk(self.directory):
            part = entry.path[len(str(self.directory)) + 1 :].split(os.sep, 1)[0]
            key = "index" if part.endswith((".sqlite", ".sqlite-wal", ".sqlite-shm")) else part
            sizes[key if key in sizes else "other"] += entry.stat(follow_symlinks=False).st_size
        return sizes


def _read_optional(path: Path) -> dict[str, Any] | None:
    try:
        data = read_json(path)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _walk(directory: Path) -> Iterator[os.DirEntry[str]]:
    stack = [str(directory)]
    while stack:
        with os.scandir(stack.pop()) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                else:
                    yield entry
