"""The embedded store's database file, as a file: its layout (tables, format version),
how it is made, checked and brought to this format. Read by the store
(:mod:`crawler.cache.sqlite`) and by the migration of the older layout
(:mod:`crawler.cache.migrate`), which builds a database of its own and imports neither."""

from __future__ import annotations

import logging
import os
import sqlite3
from typing import TYPE_CHECKING, Any

from crawler.cache.blocktable import block_tables_sql
from crawler.cache.changetable import change_table_sql, report_change_rows, upsert_change
from crawler.cache.codecs import json_encode, kv_decode, read_json_dict
from crawler.cache.errors import CacheCorruptError
from crawler.cache.perms import private_file
from crawler.cache.sqlpages import PAGE_COLUMNS, upsert_page
from crawler.identity import IDENTITY_VERSION

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

logger = logging.getLogger(__name__)

DB_NAME = "cache.sqlite"
#: the layout of ``cache.sqlite``; 1 was the five files of the older layout
FORMAT_VERSION = 7
STORE = "store/"

SCHEMA = f"""
    CREATE TABLE IF NOT EXISTS kv (key TEXT PRIMARY KEY, value BLOB);
    CREATE TABLE IF NOT EXISTS pages (key TEXT PRIMARY KEY, {", ".join(f"{c} TEXT" for c in PAGE_COLUMNS)},
        record TEXT NOT NULL);
    CREATE INDEX IF NOT EXISTS pages_url ON pages (url);
    CREATE INDEX IF NOT EXISTS pages_canonical_url ON pages (canonical_url);
    CREATE INDEX IF NOT EXISTS pages_domain_status ON pages (domain, status);
    CREATE INDEX IF NOT EXISTS pages_domain_key ON pages (domain, key, status);
    {change_table_sql("INTEGER")};
    {";".join(block_tables_sql("BLOB", "INTEGER"))};
"""
UPSERT_PAGE = upsert_page("?")
SQLITE_MAGIC = b"SQLite format 3\x00"


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


def import_report_changes(conn: sqlite3.Connection, path: Path) -> int:
    """The inline change list (``changes``) of each run report in ``runs/`` beside the
    database ``path`` copied into the ``changes`` table (a run whose rows are there
    already is left as it is); the reports stay as they are. Returns the rows written."""
    written = 0
    for report_path in sorted((path.parent / "runs").glob("*.json")):
        if report_path.name == "latest.json" or report_path.name.startswith("."):
            continue
        rows = report_change_rows(read_json_dict(report_path))
        if rows and conn.execute("SELECT 1 FROM changes WHERE run_id = ? LIMIT 1", (rows[0][0],)).fetchone() is None:
            conn.executemany(upsert_change("?"), rows)
            written += len(rows)
    return written


#: what brings a database of an older format to this one: format -> the steps that
#: make it the next format (see :func:`upgrade_database`): a statement, or a function
#: given the connection (in the upgrade's transaction) and the database's path
FORMAT_UPGRADES: dict[int, tuple[str | Callable[[sqlite3.Connection, Path], Any], ...]] = {
    # 3: the page table's selection_widened column (no record of format 2 holds the field)
    2: ("ALTER TABLE pages ADD COLUMN selection_widened TEXT",),
    # 4: the page table's named_out column (no record of format 3 holds the field)
    3: ("ALTER TABLE pages ADD COLUMN named_out TEXT",),
    # 5: the runs' change lists in a table of their own, those of the reports so far in it
    4: (change_table_sql("INTEGER"), import_report_changes),
    # 6: the boilerplate analysis's page signatures and domain statistics (empty: the
    # next analysis of each domain reads its pages once and makes them)
    5: block_tables_sql("BLOB", "INTEGER"),
    # 7: each content written keeps the SHA-256 of its texts (text_sha256, clean_sha256), which
    # the stages trust: nothing to change (a content stored before is read, then stored again
    # with them), but an older crawler, which would write a content with stale ones, refuses it
    6: (),
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
                for step in FORMAT_UPGRADES[version]:
                    conn.execute(step) if isinstance(step, str) else step(conn, path)
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
