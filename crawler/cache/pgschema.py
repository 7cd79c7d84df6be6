"""The PostgreSQL store's database: its tables, the keys of its advisory locks, and how
the tables are made and brought to this format (:func:`prepare_tables`). One database
is one store; its tables (listed in docs/scaling.md) are made on the first open that may
create the store (a crawl).

``claims`` is ``UNLOGGED``: a claim lives seconds, and a server crash emptying the
table only lets the next process claim. JSON is kept as ``text`` because ``jsonb``
refuses the NUL character, which page text may hold.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import psycopg

from crawler.cache.blocktable import block_tables_sql
from crawler.cache.changetable import change_table_sql, report_change_rows, upsert_change
from crawler.cache.codecs import json_encode
from crawler.cache.errors import CacheCorruptError, CacheMissingError
from crawler.cache.pgdsn import masked_message
from crawler.cache.sqlpages import PAGE_COLUMNS, upsert_page
from crawler.identity import IDENTITY_VERSION

if TYPE_CHECKING:
    from collections.abc import Callable


def import_report_changes(conn: psycopg.Connection[Any]) -> int:
    """The inline change list (``changes``) of each run report copied into the
    ``changes`` table (a run whose rows are there already is left as it is), one
    report read at a time; the reports stay as they are. Returns the rows written."""
    written = 0
    run_ids = [row[0] for row in conn.execute("SELECT run_id FROM runs ORDER BY seq").fetchall()]
    for run_id in run_ids:
        row = conn.execute("SELECT report FROM runs WHERE run_id = %s", (run_id,)).fetchone()
        try:
            report = json.loads(row[0]) if row else None
        except ValueError:
            continue  # an unreadable report: it has no change list to keep
        rows = report_change_rows(report)
        if rows and conn.execute("SELECT 1 FROM changes WHERE run_id = %s LIMIT 1", (rows[0][0],)).fetchone() is None:
            with conn.cursor() as cursor:
                cursor.executemany(upsert_change("%s"), rows)
            written += len(rows)
    return written


#: the layout of the tables below
FORMAT_VERSION = 6
#: what brings a store of an older format to this one: format -> the steps that make it
#: the next format (run on its first open by this code, see ``_upgrade``): a
#: statement, or a function given the connection (in the upgrade's transaction)
FORMAT_UPGRADES: dict[int, tuple[str | Callable[[psycopg.Connection[Any]], Any], ...]] = {
    # 2: the pages table's selection_widened column (no record of format 1 holds the field)
    1: ("ALTER TABLE pages ADD COLUMN IF NOT EXISTS selection_widened text",),
    # 3: the pages table's named_out column (no record of format 2 holds the field)
    2: ("ALTER TABLE pages ADD COLUMN IF NOT EXISTS named_out text",),
    # 4: the runs' change lists in a table of their own, those of the reports so far in it
    3: (change_table_sql("bigint"), import_report_changes),
    # 5: the boilerplate analysis's page signatures and domain statistics (empty: the
    # next analysis of each domain reads its pages once and makes them)
    4: block_tables_sql("bytea", "bigint"),
    # 6: each content written keeps the SHA-256 of its texts (text_sha256, clean_sha256), which
    # the stages trust: nothing to change, but an older crawler (which would write a content
    # with stale ones) refuses the store
    5: (),
}
#: the advisory locks' key (two ints): the class, then which lock
LOCK_CLASS = 0x45444353  # "EDCS"
STORE_LOCK, SCHEMA_LOCK = 1, 2

SCHEMA = f"""
CREATE TABLE IF NOT EXISTS store_meta (name text PRIMARY KEY, value text NOT NULL);
CREATE TABLE IF NOT EXISTS pages (
    key text PRIMARY KEY, seq bigserial, {", ".join(f"{c} text" for c in PAGE_COLUMNS)}, record text NOT NULL);
CREATE INDEX IF NOT EXISTS pages_seq ON pages (seq);
CREATE INDEX IF NOT EXISTS pages_url ON pages (url);
CREATE INDEX IF NOT EXISTS pages_canonical_url ON pages (canonical_url);
CREATE INDEX IF NOT EXISTS pages_domain_status ON pages (domain, status);
CREATE INDEX IF NOT EXISTS pages_domain_key ON pages (domain, key COLLATE "C", status);
CREATE TABLE IF NOT EXISTS page_data (
    key text PRIMARY KEY, content text, response bytea, rendered bytea, parsed text);
CREATE TABLE IF NOT EXISTS inputs (input_key text PRIMARY KEY, url_hash text NOT NULL);
CREATE TABLE IF NOT EXISTS extractions (
    url_hash text PRIMARY KEY, extraction text NOT NULL, written_at timestamptz NOT NULL DEFAULT now());
CREATE TABLE IF NOT EXISTS domains (domain text PRIMARY KEY, record text NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    run_id text PRIMARY KEY, seq bigserial, report text NOT NULL, written_at timestamptz NOT NULL DEFAULT now());
CREATE UNLOGGED TABLE IF NOT EXISTS claims (
    input_key text PRIMARY KEY, owner text NOT NULL, expires_at timestamptz NOT NULL);
{change_table_sql("bigint")};
{";".join(block_tables_sql("bytea", "bigint"))};
"""
UPSERT_PAGE = upsert_page("%s")


def prepare_tables(conn: psycopg.Connection[Any], location: str, *, create: bool) -> int | None:
    """Make the tables if missing (``create``; else :class:`CacheMissingError`), or
    find them, and bring a store of an older format to this one (:func:`_upgrade`).
    Returns the format it was upgraded from, None when there was nothing to upgrade."""
    try:
        exists = conn.execute("SELECT to_regclass('store_meta') IS NOT NULL").fetchone()
        if not (exists and exists[0]):
            if not create:
                raise CacheMissingError(f"No cache in {location}: run a crawl first.")
            with conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s, %s)", (LOCK_CLASS, SCHEMA_LOCK))
                conn.execute(SCHEMA)  # constant text, several statements
                conn.execute(
                    "INSERT INTO store_meta (name, value) VALUES ('format', %s), ('identity_version', %s) "
                    "ON CONFLICT (name) DO NOTHING",
                    (json_encode(FORMAT_VERSION), json_encode(IDENTITY_VERSION)),
                )
        made_by = dict(conn.execute("SELECT name, value FROM store_meta").fetchall())
    except psycopg.Error as exc:
        raise CacheCorruptError(f"The cache database {location} cannot be read ({masked_message(exc)}).") from None
    if made_by.get("format") in {json_encode(version) for version in FORMAT_UPGRADES}:
        return _upgrade(conn, location)
    return None


def _upgrade(conn: psycopg.Connection[Any], location: str) -> int | None:
    """Bring a store of an older format to :data:`FORMAT_VERSION` in one transaction
    (:data:`FORMAT_UPGRADES`), under the schema lock (another process may be doing
    it); whoever opens it first, as the embedded store does. Returns the format it
    had, None when another process upgraded it meanwhile."""
    try:
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s, %s)", (LOCK_CLASS, SCHEMA_LOCK))
            row = conn.execute("SELECT value FROM store_meta WHERE name = 'format'").fetchone()
            old = json.loads(row[0]) if row else None
            if old not in FORMAT_UPGRADES:
                return None  # done by another process meanwhile
            for version in range(old, FORMAT_VERSION):
                for step in FORMAT_UPGRADES[version]:
                    conn.execute(step) if isinstance(step, str) else step(conn)
            conn.execute("UPDATE store_meta SET value = %s WHERE name = 'format'", (json_encode(FORMAT_VERSION),))
    except psycopg.Error as exc:
        raise CacheCorruptError(
            f"The cache {location} is of an older format; opening it adds what this version of the "
            f"crawler keeps (format {FORMAT_VERSION}), which failed ({masked_message(exc)}). It was left as it is."
        ) from None
    return int(old)
