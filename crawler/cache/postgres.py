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
transaction); extractions and their index by input, domain records and run reports are
written at once, as the embedded store writes their files, so another process finds an
extraction as soon as its claim is released.
"""

from __future__ import annotations

import json
import logging
import os
import zlib
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from crawler.cache import StoreSettingError
from crawler.cache.codecs import json_encode, rendered_decode, rendered_encode, response_decode, response_encode
from crawler.cache.lock import CacheLockedError
from crawler.cache.sqlite import PAGE_COLUMNS, URL_HASH_RE, page_row
from crawler.cache.sqlpages import FIND_BY_URL, RecentPages, domain_rows, find_page, page_query
from crawler.cache.store import (
    CacheCorruptError,
    CacheMissingError,
    CacheStorageError,
    EntryChecks,
    ParsedPage,
    RenderedPage,
    StoredResponse,
)
from crawler.config import typed
from crawler.identity import IDENTITY_VERSION
from crawler.lib import secrets
from crawler.lib.secrets import mask_data

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator

    import psycopg
    from scrapy.settings import BaseSettings

logger = logging.getLogger(__name__)

__all__ = ["FORMAT_VERSION", "DsnError", "PostgresDocStore", "masked_dsn"]

#: the layout of the tables below
FORMAT_VERSION = 2
#: what brings a store of an older format to this one: format -> the statements that
#: make it the next format (run on its first open by this code, see ``_upgrade``)
FORMAT_UPGRADES: dict[int, tuple[str, ...]] = {
    # 2: the pages table's selection_widened column (no record of format 1 holds the field)
    1: ("ALTER TABLE pages ADD COLUMN IF NOT EXISTS selection_widened text",),
}
#: the advisory locks' key (two ints): the class, then which lock
LOCK_CLASS = 0x45444353  # "EDCS"
STORE_LOCK, SCHEMA_LOCK = 1, 2
PARTS = ("content", "response", "rendered", "parsed")

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


class PostgresDocStore(EntryChecks):
    """Every port of :mod:`crawler.cache.ports` in one PostgreSQL database (see the
    module's docstring): ``-s EXTRACTED_DOCS_STORE=crawler.cache.postgres.PostgresDocStore``
    and the DSN in the environment variable ``EXTRACTED_DOCS_DSN_ENV`` names."""

    #: several processes may write at once, each under :meth:`writer_lock`
    concurrent_writers = True

    def __init__(self, dsn: str, *, readonly: bool = False, create: bool = True) -> None:
        import psycopg

        _check_credentials(dsn)
        self.location = masked_dsn(dsn)
        self.readonly = readonly
        self.read_errors = 0
        self.on_read_error: Callable[[str, str], None] | None = None
        self.on_storage_error: Callable[[str, str], None] | None = None
        secrets.register(_password(dsn), "the DSN's password", warn=False)
        secrets.register_connection(dsn, "the DSN's password")  # a malformed one's too: libpq quotes it whole
        self._pages_pending: dict[str, tuple[Any, ...] | None] = {}
        #: (url_hash, part) -> encoded value, None: deleted
        self._parts_pending: dict[tuple[str, str], Any] = {}
        self._recent = RecentPages()
        self._held: list[str] = []
        try:
            self._conn: psycopg.Connection[Any] | None = psycopg.connect(dsn, autocommit=True, connect_timeout=30)
        except psycopg.Error as exc:
            raise CacheStorageError(f"Cannot connect to the cache database {self.location}: {_message(exc)}") from None
        try:
            # the writes made at once (extractions, claims, reports) are not waited on
            # to reach the disk, as the embedded store's files are not fsynced; a lost
            # one is found missing and made again. A commit waits (see _flush).
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
        return cls(dsn.strip(), readonly=readonly, create=create)

    def _prepare(self, *, create: bool) -> None:
        """Make the tables if missing (``create``), or find them; check the versions."""
        import psycopg

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
            made_by["format"] = self._upgrade()
        format_version, identity = made_by.get("format"), made_by.get("identity_version")
        if format_version != json_encode(FORMAT_VERSION) or identity != json_encode(IDENTITY_VERSION):
            raise CacheCorruptError(
                f"The cache {self.location} was made by another version of the crawler (format {format_version}, "
                f"page keys version {identity}; this one reads format {FORMAT_VERSION}, keys version "
                f"{IDENTITY_VERSION}); it was left as it is."
            )

    def _upgrade(self) -> str | None:
        """Bring a store of an older format to :data:`FORMAT_VERSION` in one transaction
        (:data:`FORMAT_UPGRADES`), under the schema lock (another process may be doing
        it); whoever opens it first, as the embedded store does. Returns the format
        recorded after."""
        import psycopg

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
        return self._conn

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
        try:
            yield
        finally:
            if self._conn is not None and not self._conn.closed:
                self._execute(f"SELECT pg_advisory_unlock{kind}(%s, %s)", (LOCK_CLASS, STORE_LOCK))

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

    # -- SQL -------------------------------------------------------------------------------

    def _execute(self, sql: str, args: Iterable[Any] = (), *, kind: str = "read") -> psycopg.Cursor[Any]:
        import psycopg

        try:
            return self._connection.execute(sql, tuple(args))  # the store's own SQL
        except psycopg.Error as exc:
            raise self._failed(kind, exc) from None

    def _failed(self, kind: str, exc: BaseException) -> CacheStorageError:
        what = (
            f"{'Reading' if kind == 'read' else 'Writing'} the cache database {self.location} failed ({_message(exc)})"
        )
        if self.on_storage_error is not None:
            self.on_storage_error(kind, what)
        return CacheStorageError(what)

    def _json(self, table: str, key: str, raw: Any, kind: type = dict) -> Any:
        """``raw`` JSON text decoded if it is a ``kind``; otherwise unreadable (counted), None."""
        if raw is None:
            return None
        try:
            value = json.loads(raw)
        except (ValueError, TypeError) as exc:
            self._unreadable(table, key, exc)
            return None
        if not isinstance(value, kind):
            self._unreadable(table, key, TypeError(f"not a {kind.__name__}: {type(value).__name__}"))
            return None
        return value

    # -- the parts of a page ---------------------------------------------------------------

    def _page_parts(self, url_hash: str) -> dict[str, Any]:
        """Every stored part of a page (content, response, rendering, parsed page,
        record under ``""``), raw, in one query."""
        parts = self._recent.get(url_hash)
        if parts is not None:
            return parts
        row = self._execute(
            "SELECT d.content, d.response, d.rendered, d.parsed, p.record FROM (SELECT %s AS key) k "
            "LEFT JOIN page_data d ON d.key = k.key LEFT JOIN pages p ON p.key = k.key",
            (url_hash,),
        ).fetchone()
        parts = dict(zip((*PARTS, ""), row or (None,) * 5, strict=True))
        for name in ("response", "rendered"):
            if parts[name] is not None:
                parts[name] = bytes(parts[name])
        if self.readonly:
            return parts  # another process writes: nothing is kept
        self._recent.put(url_hash, parts)
        return parts

    def _part(self, url_hash: str, part: str) -> Any:
        if (url_hash, part) in self._parts_pending:
            return self._parts_pending[url_hash, part]
        return self._page_parts(url_hash)[part]

    def _put_part(self, url_hash: str, part: str, value: Any) -> None:
        self._writable()
        self._parts_pending[url_hash, part] = value

    def _body(self, url_hash: str, part: str, decode: Callable[[bytes], Any]) -> Any:
        raw = self._part(url_hash, part)
        if raw is None:
            return None
        try:
            return decode(raw)
        except (ValueError, zlib.error, UnicodeDecodeError, TypeError) as exc:
            self._unreadable("responses" if part == "response" else part, url_hash, exc)
            return None

    def get_content(self, url_hash: str) -> dict[str, Any] | None:
        content: dict[str, Any] | None = self._json("content", url_hash, self._part(url_hash, "content"))
        return content

    def put_content(self, url_hash: str, content: dict[str, Any]) -> None:
        self._put_part(url_hash, "content", json_encode(content))

    def get_response(self, url_hash: str) -> StoredResponse | None:
        response = self._body(url_hash, "response", response_decode)
        return response if isinstance(response, StoredResponse) else None

    def put_response(self, url_hash: str, response: StoredResponse) -> None:
        self._put_part(url_hash, "response", response_encode(response))

    def get_rendered(self, url_hash: str) -> RenderedPage | None:
        page = self._body(url_hash, "rendered", rendered_decode)
        return page if isinstance(page, RenderedPage) else None

    def put_rendered(self, url_hash: str, page: RenderedPage) -> None:
        self._put_part(url_hash, "rendered", rendered_encode(page))

    def get_parsed(self, url_hash: str) -> ParsedPage | None:
        data = self._json("parsed", url_hash, self._part(url_hash, "parsed"))
        return None if data is None else ParsedPage.from_json(data)

    def put_parsed(self, url_hash: str, page: ParsedPage) -> None:
        self._put_part(url_hash, "parsed", json_encode(page.to_json()))

    # -- pages -------------------------------------------------------------------------------

    def get_page(self, url_hash: str) -> dict[str, Any] | None:
        if url_hash in self._pages_pending:
            row = self._pages_pending[url_hash]
            raw = None if row is None else row[-1]
        else:
            raw = self._page_parts(url_hash)[""]
        record: dict[str, Any] | None = self._json("pages", url_hash, raw)
        return record

    def put_page(self, url_hash: str, record: dict[str, Any]) -> None:
        self._writable()
        self._pages_pending[url_hash] = page_row(url_hash, record)

    def iter_page_keys(self) -> Iterator[str]:
        """Every page's key, in the order first recorded (an unreadable record's too)."""
        stored = [row[0] for row in self._execute("SELECT key FROM pages ORDER BY seq")]
        return iter(_merge_keys(stored, self._pages_pending))

    def iter_pages(self) -> Iterator[tuple[str, dict[str, Any]]]:
        pending = dict(self._pages_pending)
        for key, raw in self._execute("SELECT key, record FROM pages ORDER BY seq").fetchall():
            if key in pending:
                row = pending.pop(key)
                raw = None if row is None else row[-1]
            record = self._json("pages", key, raw)
            if record is not None:
                yield key, record
        for key, row in pending.items():
            record = None if row is None else self._json("pages", key, row[-1])
            if record is not None:
                yield key, record

    def count_pages(self) -> int:
        if self._pages_pending:
            return sum(1 for _ in self.iter_page_keys())
        row = self._execute("SELECT count(*) FROM pages").fetchone()
        return int(row[0]) if row else 0

    def delete_page(self, url_hash: str) -> None:
        """Everything kept for one page: record, content, responses, parsed page, extraction."""
        self._writable()
        self._pages_pending[url_hash] = None
        for part in PARTS:
            self._parts_pending[url_hash, part] = None
        self.delete_extraction(url_hash)

    def iter_content_keys(self) -> Iterator[str]:
        stored = [row[0] for row in self._execute("SELECT key FROM page_data WHERE content IS NOT NULL ORDER BY key")]
        pending = {h: v for (h, part), v in self._parts_pending.items() if part == "content"}
        return iter(_merge_keys(stored, pending))

    # -- questions over all pages (committed pages) -------------------------------------

    def status_counts(self) -> dict[str, int]:
        return {str(s): int(n) for s, n in self._execute("SELECT status, count(*) FROM pages GROUP BY 1")}

    def extraction_counts(self) -> dict[str, int]:
        row = self._execute(
            "SELECT count(extraction_key), count(extraction_error), count(invalidated) FROM pages"
        ).fetchone() or (0, 0, 0)
        return {"extracted": int(row[0]), "failed": int(row[1]), "invalidated": int(row[2])}

    def domain_summary(self) -> list[dict[str, Any]]:
        return domain_rows(
            self._execute(
                "SELECT domain, count(*), count(*) FILTER (WHERE status = 'removed'), count(extraction_key), "
                "count(extraction_error), max(last_seen), max(last_changed) FROM pages "
                'GROUP BY 1 ORDER BY 2 DESC, domain COLLATE "C"'
            ).fetchall()
        )

    def query_pages(
        self,
        *,
        domain: str | None = None,
        status: str | None = None,
        changed_since: str | None = None,
        failed: bool = False,
        converter_pending: bool = False,
        empty: bool = False,
        widened: bool = False,
        limit: int | None = None,
    ) -> Iterator[tuple[str, dict[str, Any]]]:
        """``(url_hash, record)`` of the committed pages matching every filter given, by URL."""
        sql, params = page_query(
            "%s",
            'url COLLATE "C"',  # byte order, as the embedded store sorts
            domain=domain,
            status=status,
            changed_since=changed_since,
            failed=failed,
            converter_pending=converter_pending,
            empty=empty,
            widened=widened,
            limit=limit,
        )
        for key, raw in self._execute(sql, params).fetchall():
            record = self._json("pages", key, raw)
            if record is not None:
                yield key, record

    def find_page(self, url_or_hash: str) -> tuple[str, dict[str, Any]] | None:
        """A page by its url_hash or by any spelling of its URL."""
        return find_page(
            url_or_hash,
            lambda key: bool(URL_HASH_RE.match(key)),
            lambda canonical, url: [row[0] for row in self._execute(FIND_BY_URL.format(p="%s"), (canonical, url))],
            self.get_page,
        )

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

    def iter_extraction_keys(self) -> Iterator[str]:
        return iter([row[0] for row in self._execute('SELECT url_hash FROM extractions ORDER BY url_hash COLLATE "C"')])

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
        conn = self._connection
        try:
            with conn.transaction():
                conn.execute(
                    "INSERT INTO domains (domain, record) VALUES (%s, 'null') ON CONFLICT (domain) DO NOTHING",
                    (domain,),
                )
                row = conn.execute("SELECT record FROM domains WHERE domain = %s FOR UPDATE", (domain,)).fetchone()
                raw = row[0] if row and row[0] != "null" else None
                record = update(self._json("boilerplate", domain, raw))
                conn.execute("UPDATE domains SET record = %s WHERE domain = %s", (json_encode(record), domain))
        except psycopg.Error as exc:
            raise self._failed("write", exc) from None
        return record

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

    # -- lifecycle -------------------------------------------------------------------------------

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """The buffered writes made inside stored together at its end, or none of them."""
        self.commit()
        try:
            yield
        except BaseException:
            self._clear_pending()
            raise
        self.commit()

    def _clear_pending(self) -> None:
        self._pages_pending.clear()
        self._parts_pending.clear()

    def commit(self) -> None:
        """Write what is pending in one transaction. Raises :class:`CacheStorageError`
        when it fails: nothing of it is written, the pending writes are kept."""
        import psycopg

        if self.readonly or self._conn is None or not (self._pages_pending or self._parts_pending):
            return
        try:
            self._flush()
        except psycopg.Error as exc:
            raise self._failed("write", exc) from None
        self._recent.forget({*self._pages_pending, *(h for h, _ in self._parts_pending)})
        self._clear_pending()

    def _flush(self) -> None:
        conn = self._connection
        with conn.transaction(), conn.cursor() as cursor:
            # what commit() returns from is stored, as durably as the server stores anything
            cursor.execute("SELECT set_config('synchronous_commit', %s, true)", (self._commit_sync,))
            rows = [row for row in self._pages_pending.values() if row is not None]
            if rows:
                cursor.executemany(_UPSERT_PAGE, rows)
            gone = [(key,) for key, row in self._pages_pending.items() if row is None]
            by_part: dict[str, list[tuple[str, Any]]] = {}
            for (url_hash, part), value in self._parts_pending.items():
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

    def close(self) -> None:
        try:
            self.commit()
        except Exception as exc:
            pending = len(self._pages_pending) + len(self._parts_pending)
            logger.error(
                "Writing the cache's last %(n)d writes at close failed, they are lost: %(exc)s",
                {"n": pending, "exc": exc},
                exc_info=not isinstance(exc, CacheStorageError),
            )
        conn, self._conn = self._conn, None
        if conn is not None:
            try:  # released now: the server notices a closed connection a moment later
                conn.execute("SELECT pg_advisory_unlock_all()")
            except Exception as exc:  # noqa: BLE001 - closing goes on; the server drops them with the session
                logger.debug(
                    "Releasing the advisory locks of %(dsn)s failed: %(exc)s", {"dsn": self.location, "exc": exc}
                )
            conn.close()


def _merge_keys(stored: list[str], pending: dict[str, Any]) -> list[str]:
    """``stored`` keys with the pending writes applied (deletes dropped, new keys appended)."""
    if not pending:
        return stored
    known = set(stored)
    keys = [key for key in stored if pending.get(key, key) is not None]
    keys += [key for key, value in pending.items() if value is not None and key not in known]
    return keys


def _message(exc: BaseException) -> str:
    """psycopg's message on one line, without any registered secret or a DSN's credentials."""
    return secrets.mask_credentials(secrets.mask(" ".join(str(exc).split()) or type(exc).__name__))
