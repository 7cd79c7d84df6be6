"""Stores for crawls whose cache fails after it opened (``EXTRACTED_DOCS_STORE``)."""

from __future__ import annotations

import os
import sqlite3

from crawler.cache.sqlite import SqliteDocStore


class UncheckedStore(SqliteDocStore):
    """Opens a damaged database as the store did before its start-up check read every
    page: damage that the start-up check did not see (a disk failing mid-crawl)."""

    check_on_open = False


class FailingWritesStore(SqliteDocStore):
    """Commits that write an entry of the kind named in ``TEST_FAIL_TABLE``
    (``content``, ``response``...) fail as a full disk does."""

    def _write(self, pages, parts, touched) -> None:
        if any(part == os.environ.get("TEST_FAIL_TABLE", "") for _, part in parts):
            raise sqlite3.OperationalError("database or disk is full")
        super()._write(pages, parts, touched)


class FailingExtractionsStore(SqliteDocStore):
    """Extraction files after the first ``TEST_FAIL_AFTER`` cannot be written, as in an
    ``extractions/`` folder that became unwritable (the index still works)."""

    written = 0

    def write_extraction(self, url_hash: str, extraction: dict) -> str:
        if FailingExtractionsStore.written >= int(os.environ.get("TEST_FAIL_AFTER", "0")):
            raise PermissionError(13, "Permission denied", str(self.extraction_path(url_hash)))
        FailingExtractionsStore.written += 1
        return super().write_extraction(url_hash, extraction)
