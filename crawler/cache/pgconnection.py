"""The PostgreSQL store's connection (:class:`PostgresConnection`): one connection to
the store's database that comes back when lost (a restart, a failover, a network cut)
with its settings and the advisory locks it held, or fences this process off when a
maintenance command took the store meanwhile; and those locks, the store's
(:meth:`~PostgresConnection.lock`, :meth:`~PostgresConnection.writer_lock`)."""

from __future__ import annotations

import logging
import time
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

import psycopg

from crawler.cache.base import StoreBase
from crawler.cache.errors import CacheStorageError
from crawler.cache.lock import CacheLockedError
from crawler.cache.pgdsn import check_credentials, dsn_password, masked_dsn, masked_message
from crawler.cache.pgschema import LOCK_CLASS, STORE_LOCK
from crawler.support import secrets

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator

T = TypeVar("T")
#: seconds between two attempts
RECONNECT_INTERVAL = 1.0
#: seconds one attempt may take
RECONNECT_TIMEOUT = 10


def _maintenance_count(conn: psycopg.Connection[Any]) -> str | None:
    """How many maintenance commands have taken the store's exclusive lock (None: none yet)."""
    row = conn.execute("SELECT value FROM store_meta WHERE name = 'maintenance'").fetchone()
    return str(row[0]) if row else None


class PostgresConnection(StoreBase):
    """:class:`~crawler.cache.base.StoreBase` on one PostgreSQL connection (see the
    module's docstring), the part of :class:`crawler.cache.postgres.PostgresDocStore`
    that connects."""

    db_errors: ClassVar[tuple[type[BaseException], ...]] = (psycopg.Error,)

    def __init__(self, dsn: str, *, readonly: bool, reconnect_seconds: float) -> None:
        check_credentials(dsn)
        super().__init__(masked_dsn(dsn), readonly=readonly)
        secrets.register(dsn_password(dsn), "the DSN's password", warn=False)
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
            raise CacheStorageError(
                f"Cannot connect to the cache database {self.location}: {masked_message(exc)}"
            ) from None
        try:
            # the writes made at once (extractions, claims, reports) are not waited on
            # to reach the disk, as the embedded store's files are not fsynced; a lost
            # one is found missing and made again. A commit waits (see the store's _write).
            row = self._conn.execute("SHOW synchronous_commit").fetchone()
            self._commit_sync = str(row[0]) if row else "on"  # the server's own, for commits
            self._conn.execute("SET synchronous_commit = off")
        except BaseException:
            self._close_unused()
            raise

    def _close_unused(self) -> None:
        """The connection closed as it is: a store that failed to open holds no lock yet."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None

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
        logging.getLogger(type(self).__module__).warning(  # the store's, as its other messages
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

    def _execute(self, sql: str, args: Iterable[Any] = (), *, kind: str = "read") -> psycopg.Cursor[Any]:
        with self._failing(kind):
            return self._retrying(lambda: self._connection.execute(sql, tuple(args)))  # the store's own SQL

    # -- the primitives of StoreBase -----------------------------------------------------------

    def _where(self) -> str:
        return f"the cache database {self.location}"

    def _error_text(self, exc: BaseException) -> str:
        return masked_message(exc)

    def _connected(self) -> bool:
        return self._conn is not None

    def _disconnect(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            try:  # released now: the server notices a closed connection a moment later
                conn.execute("SELECT pg_advisory_unlock_all()")
            except Exception as exc:  # noqa: BLE001 - closing goes on; the server drops them with the session
                logging.getLogger(type(self).__module__).debug(
                    "Releasing the advisory locks of %(dsn)s failed: %(exc)s", {"dsn": self.location, "exc": exc}
                )
            conn.close()

    # -- the locks ------------------------------------------------------------------------

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
