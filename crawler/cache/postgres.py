"""A store on a PostgreSQL server: one cache shared by many crawler processes on many
machines (``EXTRACTED_DOCS_STORE = "crawler.cache.postgres.PostgresDocStore"``).

The DSN comes from the environment variable that ``EXTRACTED_DOCS_DSN_ENV`` names
(``EXTRACTED_DOCS_DSN`` by default), never from a setting's value; messages and
:attr:`PostgresDocStore.location` show it without its password. One database is one
store; its tables are made on the first open that may create the store (a crawl)::

    store_meta   name -> value: the store's format and page-key versions
    pages        page records (JSON) and a column for each thing queried (status,
                 domain, url, canonical_url, last_seen, last_changed, extraction key...)
    page_data    per page: content (JSON), raw response and rendering (zlib-packed
                 bodies, as the embedded store packs them), what the response parsed into
    inputs       input key -> url_hash of an extraction of that input
    extractions  what the extractor returned, per page (JSON)
    domains      per-domain boilerplate records (JSON)
    runs         run reports (JSON), by run id
    claims       extraction leases: input key, owner, expiry (:meth:`claim_extraction`)

``claims`` is ``UNLOGGED`` (no write-ahead log, no fsync per claim: a claim lives
seconds; a server crash empties the table, which only lets the next process claim).
JSON is kept as ``text`` (``jsonb`` refuses ``\\u0000``, which page text may hold).

Concurrency is the database's: several crawls and ``scrapy process`` runs write at
once, each under :meth:`writer_lock` (a shared advisory lock); a maintenance command
takes :meth:`lock` (the exclusive one) and so waits for no one and is refused while a
writer works. Two processes never extract one input at once: each claims the input
key first (a row of ``claims`` with an expiry, so a crashed process's claim lapses).
Page records, content and responses are buffered until :meth:`commit` (one
transaction; :class:`crawler.cache.base.StoreBase`, as in the embedded store);
extractions and their index by input, domain records and run reports are written at
once, as the embedded store writes their files, so another process finds an extraction
as soon as its claim is released.
"""

from __future__ import annotations

import json
import logging
import os
import time
from contextlib import contextmanager
from functools import partial
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar
from urllib.parse import unquote

import psycopg

from crawler.cache import StoreSettingError
from crawler.cache.backend import KEYS_PER_QUERY, PAGE_PARTS
from crawler.cache.base import StoreBase
from crawler.cache.codecs import json_encode
from crawler.cache.errors import CacheCorruptError, CacheMissingError, CacheStorageError
from crawler.cache.lock import CacheLockedError
from crawler.cache.sqlpages import PAGE_COLUMNS, page_row
from crawler.config import typed
from crawler.defaults import SETTINGS
from crawler.identity import IDENTITY_VERSION
from crawler.support import secrets
from crawler.support.secrets import mask_data

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator

    from scrapy.settings import BaseSettings

logger = logging.getLogger(__name__)

__all__ = ["FORMAT_VERSION", "DsnError", "PostgresDocStore", "masked_dsn"]

#: the layout of the tables below
FORMAT_VERSION = 3
#: what brings a store of an older format to this one: format -> the statements that
#: make it the next format (run on its first open by this code, see ``_upgrade``)
FORMAT_UPGRADES: dict[int, tuple[str, ...]] = {
    # 2: the pages table's selection_widened column (no record of format 1 holds the field)
    1: ("ALTER TABLE pages ADD COLUMN IF NOT EXISTS selection_widened text",),
    # 3: the pages table's named_out column (no record of format 2 holds the field)
    2: ("ALTER TABLE pages ADD COLUMN IF NOT EXISTS named_out text",),
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
"""
_UPSERT_PAGE = (
    f"INSERT INTO pages (key, {', '.join(PAGE_COLUMNS)}, record) "
    f"VALUES ({', '.join(['%s'] * (len(PAGE_COLUMNS) + 2))}) "
    f"ON CONFLICT (key) DO UPDATE SET {', '.join(f'{c} = excluded.{c}' for c in (*PAGE_COLUMNS, 'record'))}"
)


class DsnError(StoreSettingError):
    """The DSN's environment variable is unset, or its value is no PostgreSQL DSN."""


def masked_dsn(dsn: str) -> str:
    """The DSN as messages show it: ``postgresql://user@host:port/dbname``, never its password.

    >>> masked_dsn("postgresql://crawler:s3cret@db.example:5433/docs?sslmode=require")
    'postgresql://crawler@db.example:5433/docs'
    >>> masked_dsn("host=db user=crawler password=s3cret dbname=docs")
    'postgresql://crawler@db/docs'
    """
    from psycopg.conninfo import conninfo_to_dict

    try:
        parts = conninfo_to_dict(dsn)
    except Exception:  # noqa: BLE001 - psycopg's message may quote the password
        return "postgresql://(an unreadable DSN)"
    user = f"{parts['user']}@" if parts.get("user") else ""
    port = f":{parts['port']}" if parts.get("port") else ""
    return f"postgresql://{user}{parts.get('host', '')}{port}/{parts.get('dbname', '')}"


def _password(dsn: str) -> str | None:
    from psycopg.conninfo import conninfo_to_dict

    try:
        value = conninfo_to_dict(dsn).get("password")
    except Exception:  # noqa: BLE001
        return None
    return str(value) if value else None


def _check_credentials(dsn: str) -> None:
    """:class:`DsnError` when libpq would read another password than the one written: an
    unescaped ``@`` (libpq takes the first one, and the rest of the password for the
    host name, which its errors then print) or ``/`` (libpq then reads no password, and
    takes ``user:pass…`` for the host)."""
    from psycopg.conninfo import conninfo_to_dict

    written = secrets.connection_password(dsn)
    if not written:
        return
    try:
        read = conninfo_to_dict(dsn).get("password")
    except Exception:  # noqa: BLE001 - unreadable: psycopg says so (masked) at connect
        return
    if read != unquote(written):
        raise DsnError(
            f"The PostgreSQL DSN {secrets.mask_credentials(dsn)} has an unescaped '@' or '/' in its user or "
            "password: write them URL-encoded, as %40 and %2F (e.g. postgresql://user:pass%40word@host:5432/dbname)"
        )


T = TypeVar("T")
#: seconds between two attempts
RECONNECT_INTERVAL = 1.0
#: seconds one attempt may take
RECONNECT_TIMEOUT = 10


def _maintenance_count(conn: psycopg.Connection[Any]) -> str | None:
    """How many maintenance commands have taken the store's exclusive lock (None: none yet)."""
    row = conn.execute("SELECT value FROM store_meta WHERE name = 'maintenance'").fetchone()
    return str(row[0]) if row else None


class PostgresDocStore(StoreBase):
    """Every port of :mod:`crawler.cache.ports` in one PostgreSQL database (see the
    module's docstring): ``-s EXTRACTED_DOCS_STORE=crawler.cache.postgres.PostgresDocStore``
    and the DSN in the environment variable ``EXTRACTED_DOCS_DSN_ENV`` names."""

    concurrent_writers = True
    placeholder = "%s"
    first_recorded = "seq"
    byte_order = ' COLLATE "C"'
    db_errors: ClassVar[tuple[type[BaseException], ...]] = (psycopg.Error,)
    format_version = FORMAT_VERSION

    def __init__(
        self,
        dsn: str,
        *,
        readonly: bool = False,
        create: bool = True,
        reconnect_seconds: float = SETTINGS["EXTRACTED_DOCS_RECONNECT_SECONDS"],
    ) -> None:
        _check_credentials(dsn)
        super().__init__(masked_dsn(dsn), readonly=readonly)
        secrets.register(_password(dsn), "the DSN's password", warn=False)
        secrets.register_connection(dsn, "the DSN's password")  # a malformed one's too: libpq quotes it whole
        self._dsn = dsn  # (kept to connect again: its password is registered as a secret above)
        #: the advisory locks this connection holds ("" exclusive, "_shared"), taken again on a reconnection
        self._locks_held: list[str] = []
        #: seconds a lost connection is tried again for
        self._patience = reconnect_seconds
        #: a reconnection did not find the server back in time: the next one tries once
        self._gave_up = False
        #: why this process uses the store no more (its lock was taken while it was away)
        self._fenced: str | None = None
        #: the maintenance commands counted when the writer lock was taken
        self._maintenance_seen: str | None = None
        try:
            self._conn: psycopg.Connection[Any] | None = psycopg.connect(dsn, autocommit=True, connect_timeout=30)
        except psycopg.Error as exc:
            raise CacheStorageError(f"Cannot connect to the cache database {self.location}: {_message(exc)}") from None
        try:
            # the writes made at once (extractions, claims, reports) are not waited on
            # to reach the disk, as the embedded store's files are not fsynced; a lost
            # one is found missing and made again. A commit waits (see _write).
            row = self._conn.execute("SHOW synchronous_commit").fetchone()
            self._commit_sync = str(row[0]) if row else "on"  # the server's own, for commits
            self._conn.execute("SET synchronous_commit = off")
            self._prepare(create=create and not readonly)
        except BaseException:
            self._conn.close()
            self._conn = None
            raise

    @classmethod
    def from_settings(cls, settings: BaseSettings, *, readonly: bool, create: bool) -> PostgresDocStore:
        """The store whose DSN is in the environment variable ``EXTRACTED_DOCS_DSN_ENV`` names."""
        name = typed(settings).get("EXTRACTED_DOCS_DSN_ENV")
        dsn = os.environ.get(name, "") if name else ""
        if not dsn.strip():
            raise DsnError(
                f"EXTRACTED_DOCS_STORE=crawler.cache.postgres.PostgresDocStore needs a PostgreSQL DSN in the "
                f"environment variable {name or '(none: EXTRACTED_DOCS_DSN_ENV is empty)'}, which is unset or empty "
                f"(e.g. export {name or 'EXTRACTED_DOCS_DSN'}=postgresql://user:password@host:5432/dbname)"
            )
        patience = typed(settings).getfloat("EXTRACTED_DOCS_RECONNECT_SECONDS")
        if patience < 0:
            raise StoreSettingError(f"EXTRACTED_DOCS_RECONNECT_SECONDS must be >= 0 seconds, got {patience!r}")
        return cls(dsn.strip(), readonly=readonly, create=create, reconnect_seconds=patience)

    def _prepare(self, *, create: bool) -> None:
        """Make the tables if missing (``create``), or find them; check the versions."""
        conn = self._connection
        try:
            exists = conn.execute("SELECT to_regclass('store_meta') IS NOT NULL").fetchone()
            if not (exists and exists[0]):
                if not create:
                    raise CacheMissingError(f"No cache in {self.location}: run a crawl first.")
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
            raise CacheCorruptError(f"The cache database {self.location} cannot be read ({_message(exc)}).") from None
        if made_by.get("format") in {json_encode(version) for version in FORMAT_UPGRADES}:
            self._upgrade()
        self.check_versions()

    def format_info(self) -> dict[str, Any]:
        """What the database records about itself: its format and identity versions."""
        made_by = dict(self._select("SELECT name, value FROM store_meta"))
        return {name: _decoded(made_by.get(name)) for name in ("format", "identity_version")}

    def _upgrade(self) -> str | None:
        """Bring a store of an older format to :data:`FORMAT_VERSION` in one transaction
        (:data:`FORMAT_UPGRADES`), under the schema lock (another process may be doing
        it); whoever opens it first, as the embedded store does. Returns the format
        recorded after."""
        conn = self._connection
        try:
            with conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s, %s)", (LOCK_CLASS, SCHEMA_LOCK))
                row = conn.execute("SELECT value FROM store_meta WHERE name = 'format'").fetchone()
                old = json.loads(row[0]) if row else None
                if old not in FORMAT_UPGRADES:
                    return None if row is None else str(row[0])  # done by another process meanwhile
                for version in range(old, FORMAT_VERSION):
                    for statement in FORMAT_UPGRADES[version]:
                        conn.execute(statement)
                conn.execute("UPDATE store_meta SET value = %s WHERE name = 'format'", (json_encode(FORMAT_VERSION),))
        except psycopg.Error as exc:
            raise CacheCorruptError(
                f"The cache {self.location} is of an older format; opening it adds what this version of the "
                f"crawler keeps (format {FORMAT_VERSION}), which failed ({_message(exc)}). It was left as it is."
            ) from None
        logger.info(
            "Upgraded the cache %(location)s from format %(old)s to %(new)s",
            {"location": self.location, "old": old, "new": FORMAT_VERSION},
        )
        return json_encode(FORMAT_VERSION)

    @property
    def _connection(self) -> psycopg.Connection[Any]:
        if self._conn is None:
            raise RuntimeError(f"The cache {self.location} is closed")
        if self._fenced is not None:
            raise psycopg.OperationalError(self._fenced)
        return self._conn

    def _retrying(self, operation: Callable[[], T]) -> T:
        """``operation()``, once more on a new connection (:meth:`_reconnect`) when the
        connection was lost under it (the server restarted, a failover, a network cut).
        Each is one read, or a write that comes to the same when applied twice (upserts,
        deletes: the server may have committed it before the connection went); an
        update that is not (:meth:`update_domain`) is not asked again."""
        try:
            return operation()
        except psycopg.OperationalError:
            if self._conn is None or self._fenced is not None or not (self._conn.closed or self._conn.broken):
                raise
        self._reconnect()
        return operation()

    def _reconnect(self) -> None:
        """A new connection for the one lost, with its settings and the advisory locks it
        held, tried for up to ``EXTRACTED_DOCS_RECONNECT_SECONDS`` (a restart), once after a
        time it was not back (not waited again for each page); the last error raised
        for :meth:`_failing` to say. A maintenance command holding the store's lock by
        then fences this process off: it writes nothing more."""
        deadline = time.monotonic() + (0.0 if self._gave_up else self._patience)
        while True:
            try:
                conn = psycopg.connect(self._dsn, autocommit=True, connect_timeout=RECONNECT_TIMEOUT)
                break
            except psycopg.OperationalError:
                if time.monotonic() >= deadline:
                    self._gave_up = True
                    raise
                time.sleep(RECONNECT_INTERVAL)
        self._gave_up = False
        try:
            conn.execute("SET synchronous_commit = off")
            for kind in self._locks_held:
                row = conn.execute(f"SELECT pg_try_advisory_lock{kind}(%s, %s)", (LOCK_CLASS, STORE_LOCK)).fetchone()
                if not (row and row[0]):
                    self._fence(
                        "its lock is held by another session now (a maintenance command, or this process's own "
                        "session the server has not dropped yet)"
                    )
            if "_shared" in self._locks_held and _maintenance_count(conn) != self._maintenance_seen:
                self._fence("a maintenance command ran on it meanwhile")
        except BaseException:
            conn.close()
            raise
        old, self._conn = self._conn, conn
        if old is not None:
            old.close()
        logger.warning(
            "Connected again to the cache database %(location)s (the connection was lost)", {"location": self.location}
        )

    def _fence(self, why: str) -> None:
        """This process uses the store no more: what it holds in memory may contradict
        what changed while it was away."""
        self._fenced = (
            f"the connection to the cache database {self.location} was lost, and {why}: this process reads and "
            "writes nothing more"
        )
        raise psycopg.OperationalError(self._fenced)

    # -- the locks and the claims ---------------------------------------------------------

    @contextmanager
    def lock(self) -> Iterator[None]:
        """The store's exclusive lock (an advisory lock of the database, dropped with
        the connection on any exit): a command that changes the store as a whole.
        :class:`CacheLockedError` while another process holds it or :meth:`writer_lock`."""
        with self._advisory("", "a maintenance command or a crawl"):
            yield

    @contextmanager
    def writer_lock(self) -> Iterator[None]:
        """What each crawl and ``scrapy process`` holds: shared with the others, refused
        (:class:`CacheLockedError`) while a maintenance command holds :meth:`lock`."""
        with self._advisory("_shared", "a maintenance command"):
            yield

    @contextmanager
    def _advisory(self, kind: str, holder: str) -> Iterator[None]:
        row = self._execute(f"SELECT pg_try_advisory_lock{kind}(%s, %s)", (LOCK_CLASS, STORE_LOCK)).fetchone()
        if not (row and row[0]):
            raise CacheLockedError(f"The cache {self.location} is in use by {holder} (its lock is held).")
        self._locks_held.append(kind)
        if kind == "":
            # each maintenance command counted: a crawl connecting again after losing its
            # connection finds out whether one ran while its lock was gone
            self._execute(
                "INSERT INTO store_meta (name, value) VALUES ('maintenance', '1') ON CONFLICT (name) "
                "DO UPDATE SET value = (store_meta.value::bigint + 1)::text",
                kind="write",
            )
        elif kind == "_shared":
            with self._failing("read"):
                self._maintenance_seen = _maintenance_count(self._connection)
        try:
            yield
        finally:
            self._locks_held.remove(kind)
            if self._conn is not None and not self._conn.closed and self._fenced is None:
                self._execute(f"SELECT pg_advisory_unlock{kind}(%s, %s)", (LOCK_CLASS, STORE_LOCK))

    def is_locked_elsewhere(self) -> bool:
        """Whether another process holds :meth:`lock` or a :meth:`writer_lock` now."""
        row = self._execute("SELECT pg_try_advisory_lock(%s, %s)", (LOCK_CLASS, STORE_LOCK)).fetchone()
        if not (row and row[0]):
            return True
        self._execute("SELECT pg_advisory_unlock(%s, %s)", (LOCK_CLASS, STORE_LOCK))
        return False

    def claim_extraction(self, key: str, owner: str, seconds: float) -> bool:
        """Claim the extraction of input ``key`` for ``seconds``: True when no other
        owner holds a live claim on it (an expired claim is taken over)."""
        row = self._execute(
            "INSERT INTO claims (input_key, owner, expires_at) VALUES (%s, %s, now() + make_interval(secs => %s)) "
            "ON CONFLICT (input_key) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at "
            "WHERE claims.expires_at < now() OR claims.owner = excluded.owner RETURNING owner",
            (key, owner, float(seconds)),
            kind="write",
        ).fetchone()
        return row is not None

    def release_extraction(self, key: str, owner: str) -> None:
        self._execute("DELETE FROM claims WHERE input_key = %s AND owner = %s", (key, owner), kind="write")

    # -- the primitives of StoreBase ---------------------------------------------------------

    def _where(self) -> str:
        return f"the cache database {self.location}"

    def _error_text(self, exc: BaseException) -> str:
        return _message(exc)

    def _connected(self) -> bool:
        return self._conn is not None

    def _execute(self, sql: str, args: Iterable[Any] = (), *, kind: str = "read") -> psycopg.Cursor[Any]:
        with self._failing(kind):
            return self._retrying(lambda: self._connection.execute(sql, tuple(args)))  # the store's own SQL

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

    def _write(
        self,
        pages: dict[str, tuple[Any, ...] | None],
        parts: dict[tuple[str, str], Any],
        touched: dict[str, tuple[str, str]],
    ) -> None:
        self._retrying(partial(self._write_once, pages, parts, touched))

    def _write_once(
        self,
        pages: dict[str, tuple[Any, ...] | None],
        parts: dict[tuple[str, str], Any],
        touched: dict[str, tuple[str, str]],
    ) -> None:
        conn = self._connection
        with conn.transaction(), conn.cursor() as cursor:
            # what commit() returns from is stored, as durably as the server stores anything
            cursor.execute("SELECT set_config('synchronous_commit', %s, true)", (self._commit_sync,))
            rows = [row for row in pages.values() if row is not None]
            if touched:
                rows += self._touched_rows(cursor, touched)
            if rows:
                cursor.executemany(_UPSERT_PAGE, rows)
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

    def _disconnect(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            try:  # released now: the server notices a closed connection a moment later
                conn.execute("SELECT pg_advisory_unlock_all()")
            except Exception as exc:  # noqa: BLE001 - closing goes on; the server drops them with the session
                logger.debug(
                    "Releasing the advisory locks of %(dsn)s failed: %(exc)s", {"dsn": self.location, "exc": exc}
                )
            conn.close()

    # -- extractions (written at once) -----------------------------------------------------

    def read_extraction(self, url_hash: str) -> dict[str, Any] | None:
        row = self._execute("SELECT extraction FROM extractions WHERE url_hash = %s", (url_hash,)).fetchone()
        extraction: dict[str, Any] | None = self._json("extractions", url_hash, row[0] if row else None)
        return extraction

    def write_extraction(self, url_hash: str, extraction: dict[str, Any]) -> str:
        self._writable()
        self._execute(
            "INSERT INTO extractions (url_hash, extraction) VALUES (%s, %s) "
            "ON CONFLICT (url_hash) DO UPDATE SET extraction = excluded.extraction, written_at = now()",
            (url_hash, json_encode(extraction)),
            kind="write",
        )
        return f"extractions/{url_hash} in {self.location}"

    def delete_extraction(self, url_hash: str) -> None:
        self._writable()
        self._execute("DELETE FROM extractions WHERE url_hash = %s", (url_hash,), kind="write")

    def extraction_name(self, url_hash: str) -> str:
        return f"extractions/{url_hash}"

    def set_extraction_aside(self, url_hash: str, suffix: str) -> str:
        """The extraction of ``url_hash`` kept as a row of its own, no page's
        (``{url_hash}{suffix}``, which holds a dot: no page key has one): its name."""
        self._writable()
        self._execute(
            "UPDATE extractions SET url_hash = %s WHERE url_hash = %s", (url_hash + suffix, url_hash), kind="write"
        )
        return f"extractions/{url_hash}{suffix}"

    def iter_extraction_keys(self) -> Iterator[str]:
        return iter(
            [
                row[0]
                for row in self._execute(
                    "SELECT url_hash FROM extractions WHERE strpos(url_hash, '.') = 0 ORDER BY url_hash COLLATE \"C\""
                )
            ]
        )

    def find_extraction(self, input_key: str) -> str | None:
        row = self._execute("SELECT url_hash FROM inputs WHERE input_key = %s", (input_key,)).fetchone()
        return str(row[0]) if row else None

    def link_extraction(self, input_key: str, url_hash: str) -> None:
        """Written at once, as the extraction: another process finds it before extracting."""
        self._writable()
        self._execute(
            "INSERT INTO inputs (input_key, url_hash) VALUES (%s, %s) "
            "ON CONFLICT (input_key) DO UPDATE SET url_hash = excluded.url_hash",
            (input_key, url_hash),
            kind="write",
        )

    def iter_inputs(self) -> Iterator[tuple[str, str]]:
        return iter(self._execute('SELECT input_key, url_hash FROM inputs ORDER BY input_key COLLATE "C"').fetchall())

    def delete_input(self, input_key: str) -> None:
        self._writable()
        self._execute("DELETE FROM inputs WHERE input_key = %s", (input_key,), kind="write")

    # -- domains and runs (written at once) ---------------------------------------------------

    def get_domain(self, domain: str) -> dict[str, Any] | None:
        row = self._execute("SELECT record FROM domains WHERE domain = %s", (domain,)).fetchone()
        record: dict[str, Any] | None = self._json("boilerplate", domain, row[0] if row else None)
        return record

    def put_domain(self, domain: str, record: dict[str, Any]) -> None:
        self._writable()
        self._execute(
            "INSERT INTO domains (domain, record) VALUES (%s, %s) "
            "ON CONFLICT (domain) DO UPDATE SET record = excluded.record",
            (domain, json_encode(record)),
            kind="write",
        )

    def update_domain(self, domain: str, update: Callable[[dict[str, Any] | None], dict[str, Any]]) -> dict[str, Any]:
        """The record replaced by ``update(record)`` in one transaction that holds the
        domain's row (``SELECT ... FOR UPDATE``; a missing row inserted first, so two
        processes adding the first record wait for each other too): the crawl processes
        of a shared run update it at once without losing one another's update."""
        import psycopg

        self._writable()

        def transaction() -> dict[str, Any]:
            conn = self._connection
            with conn.transaction():
                conn.execute(
                    "INSERT INTO domains (domain, record) VALUES (%s, 'null') ON CONFLICT (domain) DO NOTHING",
                    (domain,),
                )
                row = conn.execute("SELECT record FROM domains WHERE domain = %s FOR UPDATE", (domain,)).fetchone()
                raw = row[0] if row and row[0] != "null" else None
                record = update(self._json("boilerplate", domain, raw))
                conn.execute("UPDATE domains SET record = %s WHERE domain = %s", (json_encode(record), domain))
            return record

        try:
            if self._conn is not None and (self._conn.closed or self._conn.broken):
                self._reconnect()  # lost before: connected again first
            # not asked again on a lost connection: the server may have committed it, and
            # ``update`` adds to what it reads (a second time would count twice)
            return transaction()
        except psycopg.Error as exc:
            raise self._failed("write", exc) from None

    def iter_domains(self) -> Iterator[str]:
        return iter([row[0] for row in self._execute('SELECT domain FROM domains ORDER BY domain COLLATE "C"')])

    def write_run_report(self, run_id: str, report: dict[str, Any]) -> str:
        self._writable()
        self._execute(
            "INSERT INTO runs (run_id, report) VALUES (%s, %s) "
            "ON CONFLICT (run_id) DO UPDATE SET report = excluded.report, seq = DEFAULT, written_at = now()",
            (run_id, json_encode(mask_data(report))),  # errors in it may echo a key the crawl read
            kind="write",
        )
        return self.run_report_location(run_id)

    def run_report_location(self, run_id: str) -> str:
        return f"runs/{run_id} in {self.location}"

    def has_run_report(self, run_id: str) -> bool:
        return bool(run_id) and self._execute("SELECT 1 FROM runs WHERE run_id = %s", (run_id,)).fetchone() is not None

    def run_report(self, run_id: str) -> dict[str, Any] | None:
        """The report of the run ``run_id``, None when it has none."""
        row = self._execute("SELECT report FROM runs WHERE run_id = %s", (run_id,)).fetchone() if run_id else None
        report: dict[str, Any] | None = None if row is None else self._json("runs", run_id, row[0])
        return report

    def run_reports(self, last: int) -> list[dict[str, Any]]:
        """The last ``last`` reports, oldest first (run ids sort by time)."""
        if last <= 0:
            return []
        rows = self._execute(
            'SELECT run_id, report FROM runs ORDER BY run_id COLLATE "C" DESC LIMIT %s', (int(last),)
        ).fetchall()
        reports = (self._json("runs", run_id, raw) for run_id, raw in reversed(rows))
        return [report for report in reports if report is not None]

    def latest_run_report(self) -> dict[str, Any] | None:
        row = self._execute("SELECT run_id, report FROM runs ORDER BY seq DESC LIMIT 1").fetchone()
        report: dict[str, Any] | None = None if row is None else self._json("runs", row[0], row[1])
        return report


def _decoded(raw: Any) -> Any:
    try:
        return None if raw is None else json.loads(raw)
    except ValueError:
        return raw


def _message(exc: BaseException) -> str:
    """psycopg's message on one line, without any registered secret or a DSN's credentials."""
    return secrets.mask_credentials(secrets.mask(" ".join(str(exc).split()) or type(exc).__name__))
