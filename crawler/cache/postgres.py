"""A store on a PostgreSQL server: one cache shared by many crawler processes on many
machines (``EXTRACTED_DOCS_STORE = "crawler.cache.postgres.PostgresDocStore"``).

The DSN comes from ``EXTRACTED_DOCS_DSN`` in the environment, never a setting, so it is
not written where settings are; it is shown without its password
(:mod:`crawler.cache.pgdsn`). Concurrency is the database's: writers share an advisory
lock, maintenance takes it exclusively, and extraction inputs are claimed with an expiry
(docs/scaling.md). Extractions are written at once, so another process finds one as soon
as its claim is released. Layers: :mod:`crawler.cache.pgconnection` (connection and
locks), :mod:`crawler.cache.pgrecords` (written at once), :mod:`crawler.cache.pgschema`.
"""

from __future__ import annotations

import json
import logging
import os
from functools import partial
from typing import TYPE_CHECKING, Any

from crawler.cache import StoreSettingError
from crawler.cache.backend import KEYS_PER_QUERY, PAGE_PARTS
from crawler.cache.pgdsn import DsnError
from crawler.cache.pgrecords import PostgresRecords
from crawler.cache.pgschema import FORMAT_VERSION, UPSERT_PAGE, prepare_tables
from crawler.cache.sqlpages import PageRows, PartWrites, Touched, page_row
from crawler.config import typed
from crawler.defaults import SETTINGS
from crawler.support.secrets import DSN_ENV

if TYPE_CHECKING:
    import psycopg
    from scrapy.settings import BaseSettings

logger = logging.getLogger(__name__)

__all__ = ["PostgresDocStore"]


class PostgresDocStore(PostgresRecords):
    """Every port of :mod:`crawler.cache.ports` in one PostgreSQL database (see the
    module's docstring): ``-s EXTRACTED_DOCS_STORE=crawler.cache.postgres.PostgresDocStore``
    and the DSN in the environment variable ``EXTRACTED_DOCS_DSN``."""

    concurrent_writers = True
    placeholder = "%s"
    first_recorded = "seq"
    byte_order = ' COLLATE "C"'
    text_holds = "strpos({column}, {p}) > 0"
    format_version = FORMAT_VERSION

    def __init__(
        self,
        dsn: str,
        *,
        readonly: bool = False,
        create: bool = True,
        reconnect_seconds: float = SETTINGS["EXTRACTED_DOCS_RECONNECT_SECONDS"],
    ) -> None:
        super().__init__(dsn, readonly=readonly, reconnect_seconds=reconnect_seconds)
        try:
            self._prepare(create=create and not readonly)
        except BaseException:
            self._close_unused()
            raise

    @classmethod
    def from_settings(cls, settings: BaseSettings, *, readonly: bool, create: bool) -> PostgresDocStore:
        """The store whose DSN is in the environment variable ``EXTRACTED_DOCS_DSN``."""
        dsn = os.environ.get(DSN_ENV, "")
        if not dsn.strip():
            raise DsnError(
                f"EXTRACTED_DOCS_STORE=crawler.cache.postgres.PostgresDocStore needs a PostgreSQL DSN in the "
                f"environment variable {DSN_ENV}, which is unset or empty "
                f"(e.g. export {DSN_ENV}=postgresql://user:password@host:5432/dbname)"
            )
        patience = typed(settings).getfloat("EXTRACTED_DOCS_RECONNECT_SECONDS")
        if patience < 0:
            raise StoreSettingError(f"EXTRACTED_DOCS_RECONNECT_SECONDS must be >= 0 seconds, got {patience!r}")
        return cls(dsn.strip(), readonly=readonly, create=create, reconnect_seconds=patience)

    def _prepare(self, *, create: bool) -> None:
        """Make the tables if missing (``create``), or find them, bring them to this
        format; check the versions."""
        upgraded_from = prepare_tables(self._connection, self.location, create=create)
        if upgraded_from is not None:
            logger.info(
                "Upgraded the cache %(location)s from format %(old)s to %(new)s",
                {"location": self.location, "old": upgraded_from, "new": FORMAT_VERSION},
            )
        self.check_versions()

    def format_info(self) -> dict[str, Any]:
        """What the database records about itself: its format and identity versions."""
        made_by = dict(self._select("SELECT name, value FROM store_meta"))
        return {name: _decoded(made_by.get(name)) for name in ("format", "identity_version")}

    # -- the pages: the primitives of StoreBase -----------------------------------------------

    def _query(self, sql: str, args: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        return self._retrying(lambda: self._connection.execute(sql, args).fetchall())

    def _read_parts(self, url_hash: str) -> dict[str, Any]:
        row = self._retrying(
            lambda: self._connection.execute(
                "SELECT d.content, d.response, d.rendered, d.parsed, p.record FROM (SELECT %s AS key) k "
                "LEFT JOIN page_data d ON d.key = k.key LEFT JOIN pages p ON p.key = k.key",
                (url_hash,),
            ).fetchone()
        )
        parts = dict(zip((*PAGE_PARTS, ""), row or (None,) * 5, strict=True))
        for name in ("response", "rendered"):
            if parts[name] is not None:
                parts[name] = bytes(parts[name])
        return parts

    def _read_part_of(self, part: str, keys: list[str]) -> dict[str, Any]:
        if part not in PAGE_PARTS:
            raise ValueError(f"no stored part {part!r}")
        found: dict[str, Any] = {}
        for start in range(0, len(keys), KEYS_PER_QUERY):
            rows = self._query(
                f"SELECT key, {part} FROM page_data WHERE key = ANY(%s) AND {part} IS NOT NULL",
                (keys[start : start + KEYS_PER_QUERY],),
            )
            found.update((key, bytes(raw) if part in ("response", "rendered") else raw) for key, raw in rows)
        return found

    def _part_keys(self, part: str) -> list[str]:
        if part not in PAGE_PARTS:
            raise ValueError(f"no stored part {part!r}")
        return [row[0] for row in self._query(f"SELECT key FROM page_data WHERE {part} IS NOT NULL ORDER BY key", ())]

    def _write(self, pages: PageRows, parts: PartWrites, touched: Touched) -> None:
        self._retrying(partial(self._write_once, pages, parts, touched))

    def _write_rows(self, sql: str, rows: list[tuple[Any, ...]]) -> None:
        def write() -> None:
            conn = self._connection
            with conn.transaction(), conn.cursor() as cursor:
                cursor.execute("SELECT set_config('synchronous_commit', %s, true)", (self._commit_sync,))
                cursor.executemany(sql, rows)

        self._retrying(write)

    def _write_once(self, pages: PageRows, parts: PartWrites, touched: Touched) -> None:
        conn = self._connection
        with conn.transaction(), conn.cursor() as cursor:
            # what commit() returns from is stored, as durably as the server stores anything
            cursor.execute("SELECT set_config('synchronous_commit', %s, true)", (self._commit_sync,))
            rows = [row for row in pages.values() if row is not None]
            if touched:
                rows += self._touched_rows(cursor, touched)
            if rows:
                cursor.executemany(UPSERT_PAGE, rows)
            gone = [(key,) for key, row in pages.items() if row is None]
            by_part: dict[str, list[tuple[str, Any]]] = {}
            for (url_hash, part), value in parts.items():
                by_part.setdefault(part, []).append((url_hash, value))
            for part, values in by_part.items():
                cursor.executemany(
                    f"INSERT INTO page_data (key, {part}) VALUES (%s, %s) "
                    f"ON CONFLICT (key) DO UPDATE SET {part} = excluded.{part}",
                    values,
                )
            if gone:
                cursor.executemany("DELETE FROM pages WHERE key = %s", gone)
                cursor.executemany(
                    "DELETE FROM page_data WHERE key = %s AND content IS NULL AND response IS NULL "
                    "AND rendered IS NULL AND parsed IS NULL",
                    gone,
                )

    @staticmethod
    def _touched_rows(cursor: psycopg.Cursor[Any], touched: dict[str, tuple[str, str]]) -> list[tuple[Any, ...]]:
        """The rows of the pages seen again, their two fields moved: read and written in
        the commit's transaction, the rows locked meanwhile (the record is text, and
        ``jsonb`` would refuse the ``\\u0000`` page text may hold, and reorder its keys)."""
        cursor.execute("SELECT key, record FROM pages WHERE key = ANY(%s) FOR UPDATE", (list(touched),))
        rows = []
        for key, raw in cursor.fetchall():
            try:
                record = json.loads(raw)
            except ValueError:
                continue  # verify's to find
            if isinstance(record, dict):
                record["last_seen"], record["run_id"] = touched[key]
                rows.append(page_row(key, record))
        return rows


def _decoded(raw: Any) -> Any:
    try:
        return None if raw is None else json.loads(raw)
    except ValueError:
        return raw
