"""Stores for crawls whose cache fails after it opened (``EXTRACTED_DOCS_STORE``)."""

from __future__ import annotations

import os
import sqlite3
from typing import Any

from crawler.cache.sqlite import SqliteDocStore


class UncheckedStore(SqliteDocStore):
    """Opens a damaged database as the store did before its start-up check read every
    page: damage that the start-up check did not see (a disk failing mid-crawl)."""

    check_on_open = False


class FailingWritesStore(SqliteDocStore):
    """Commits to the table named in ``TEST_FAIL_TABLE`` fail as a full disk does."""

    def _flush(self, conn: sqlite3.Connection, table: str, dirty: dict[str, Any]) -> None:  # type: ignore[override]
        if table == os.environ.get("TEST_FAIL_TABLE"):
            raise sqlite3.OperationalError("database or disk is full")
        super()._flush(conn, table, dirty)
