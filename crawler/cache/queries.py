"""Read-only view of a cache directory for ``scrapy cache``: the store's own queries
(:class:`crawler.cache.ports.PagePort`) under the names the commands use, and the
size of the cache on disk.

Safe to run while a crawl writes (WAL mode: readers never block the writer).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from crawler.cache.migrate import is_legacy
from crawler.cache.sqlite import DB_NAME, URL_HASH_RE, SqliteDocStore, index_lost
from crawler.cache.store import CacheCorruptError

if TYPE_CHECKING:
    from collections.abc import Iterator

__all__ = ["URL_HASH_RE", "CacheMissingError", "CacheReader"]


class CacheMissingError(RuntimeError):
    """There is no cache (or an empty one) where the settings point."""


class CacheReader:
    """Read-only view of a cache directory made by :class:`SqliteDocStore` (a cache of
    the older layout is migrated first)."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory)
        if index_lost(self.directory):
            raise CacheCorruptError(
                f"The cache database {self.directory / DB_NAME} is missing or empty but extractions/ holds "
                "extractions: `scrapy cache verify --repair` rebuilds its page records."
            )
        if not (self.directory / DB_NAME).exists() and not is_legacy(self.directory):
            raise CacheMissingError(f"No cache in {self.directory}: run a crawl first.")
        self.store = SqliteDocStore(self.directory, readonly=True)

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> CacheReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def status_counts(self) -> dict[str, int]:
        return self.store.status_counts()

    def extraction_counts(self) -> dict[str, int]:
        return self.store.extraction_counts()

    def domains(self) -> list[dict[str, Any]]:
        return self.store.domain_summary()

    def pages(self, **filters: Any) -> Iterator[tuple[str, dict[str, Any]]]:
        return self.store.query_pages(**filters)

    def find(self, url_or_hash: str) -> tuple[str, dict[str, Any]] | None:
        return self.store.find_page(url_or_hash)

    def content(self, url_hash: str) -> dict[str, Any] | None:
        return self.store.get_content(url_hash)

    def extraction(self, url_hash: str) -> dict[str, Any] | None:
        return self.store.read_extraction(url_hash)

    def metadata(self, url_hash: str) -> dict[str, Any] | None:
        """The metadata mirror is no longer written."""
        return None

    def runs(self, last: int) -> list[dict[str, Any]]:
        return self.store.run_reports(last)

    def size_on_disk(self, exact_up_to: int = 2000) -> dict[str, Any]:
        """Bytes used, by part of the cache. A folder of more than ``exact_up_to``
        files (``extractions/`` of a large site) is measured on an even sample of them
        and extrapolated (``approximate`` is then true): one ``stat`` per file of
        100,000 would take most of a second."""
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
