"""The boilerplate analysis's tables every store keeps (the same columns in SQLite and
PostgreSQL): each page's block signature (``block_signatures``) and each domain's block
statistics (``block_stats``), kept between runs so that a recrawl reads the texts of
the pages that changed only (:mod:`crawler.lib.blockstats`).

A signature row also keeps what the stage needs of a page without reading its text:
``made_from`` (what it was made from: :func:`crawler.stages.boilerplate.made_from` of
the page's record), the text's bytes, the bytes cleaning removed and the SHA-256 of the
cleaned text. An empty ``signature``: the page has no text (not counted).

Rows are written at once (not buffered until a commit), by the boilerplate stage only;
a page deleted (:meth:`StoreBase.delete_page`) loses its row at the next commit, and
its domain its statistics (a page removed by a crawl keeps its record: the next
analysis takes it out). The
statistics are dropped before a domain's rows change and written after: statistics
that are there count exactly the rows (a kill between: none, the next run rebuilds).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from crawler.cache.backend import StoreBackend

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Sequence
    from typing import TypeAlias

    #: a domain's statistics as a store is given them: their bytes, or their parts in order
    BlockStatsBytes: TypeAlias = bytes | bytearray | Sequence[bytes | bytearray | memoryview]

#: rows read by one query of a domain's scan
SIGNATURES_PER_READ = 1000


class SignatureMark(NamedTuple):
    """A signature row without its signature: what the stage reads of every page."""

    url_hash: str
    made_from: str
    text_bytes: int
    removed_bytes: int
    input_hash: str
    counted: bool


class SignatureRow(NamedTuple):
    """A page's row, as written."""

    url_hash: str
    made_from: str
    text_bytes: int
    removed_bytes: int
    input_hash: str
    signature: bytes


def block_tables_sql(blob: str, integer: str) -> tuple[str, ...]:
    """The statements that make the tables, with a backend's binary and integer types."""
    return (
        "CREATE TABLE IF NOT EXISTS block_signatures (url_hash TEXT PRIMARY KEY, domain TEXT NOT NULL, "
        f"made_from TEXT NOT NULL, text_bytes {integer} NOT NULL, removed_bytes {integer} NOT NULL, "
        f"input_hash TEXT NOT NULL, signature {blob} NOT NULL)",
        "CREATE INDEX IF NOT EXISTS block_signatures_domain ON block_signatures (domain, url_hash)",
        f"CREATE TABLE IF NOT EXISTS block_stats (domain TEXT PRIMARY KEY, stats {blob} NOT NULL)",
    )


_COLUMNS = ("url_hash", "domain", "made_from", "text_bytes", "removed_bytes", "input_hash", "signature")


def upsert_signature(placeholder: str) -> str:
    return (
        f"INSERT INTO block_signatures ({', '.join(_COLUMNS)}) VALUES ({', '.join([placeholder] * len(_COLUMNS))}) "
        f"ON CONFLICT (url_hash) DO UPDATE SET {', '.join(f'{c} = excluded.{c}' for c in _COLUMNS[1:])}"
    )


class BlockQueries(StoreBackend):
    """The boilerplate analysis's signatures and statistics, in the backend's SQL (the
    backend's ``_write_rows`` writes at once, in one transaction)."""

    def _write_rows(self, sql: str, rows: list[tuple[Any, ...]]) -> None:
        raise NotImplementedError

    def iter_signature_marks(self, domain: str) -> Iterator[SignatureMark]:
        """Every signature row of ``domain`` but the signature, by url_hash, streamed."""
        p = self.placeholder
        sql = (
            "SELECT url_hash, made_from, text_bytes, removed_bytes, input_hash, length(signature) > 0 "
            f"FROM block_signatures WHERE domain = {p} AND url_hash > {p} ORDER BY url_hash{self.byte_order} "
            f"LIMIT {SIGNATURES_PER_READ}"
        )
        last = ""
        while True:
            rows = self._select(sql, (domain, last))
            for key, made, size, removed, input_hash, counted in rows:
                yield SignatureMark(key, made, int(size), int(removed), input_hash, bool(counted))
            if len(rows) < SIGNATURES_PER_READ:
                return
            last = rows[-1][0]

    def iter_signatures(self, domain: str) -> Iterator[tuple[str, bytes]]:
        """``(url_hash, signature)`` of every page of ``domain`` with one (counted), streamed."""
        p = self.placeholder
        sql = (
            f"SELECT url_hash, signature FROM block_signatures WHERE domain = {p} AND url_hash > {p} "
            f"AND length(signature) > 0 ORDER BY url_hash{self.byte_order} LIMIT {SIGNATURES_PER_READ}"
        )
        last = ""
        while True:
            rows = self._select(sql, (domain, last))
            for key, signature in rows:
                yield key, bytes(signature)
            if len(rows) < SIGNATURES_PER_READ:
                return
            last = rows[-1][0]

    def get_signatures(self, url_hashes: Iterable[str]) -> dict[str, bytes]:
        """The stored signature of each of ``url_hashes`` that has one (counted)."""
        sql = "SELECT url_hash, signature FROM block_signatures WHERE url_hash IN ({keys})"
        return {key: bytes(sig) for key, sig in self._select_keys(sql, list(dict.fromkeys(url_hashes))) if sig}

    def put_signatures(self, domain: str, rows: Iterable[SignatureRow]) -> int:
        """The rows of pages of ``domain`` stored, at once, in one transaction."""
        self._writable()
        values = [
            (r.url_hash, domain, r.made_from, r.text_bytes, r.removed_bytes, r.input_hash, r.signature) for r in rows
        ]
        if values:
            with self._failing("write"):
                self._write_rows(upsert_signature(self.placeholder), values)
        return len(values)

    def delete_signatures(self, url_hashes: Iterable[str]) -> None:
        """The rows of ``url_hashes`` deleted, at once."""
        self._writable()
        rows = [(key,) for key in dict.fromkeys(url_hashes)]
        if rows:
            with self._failing("write"):
                self._write_rows(f"DELETE FROM block_signatures WHERE url_hash = {self.placeholder}", rows)

    def drop_signatures(self, url_hashes: Iterable[str]) -> None:
        """The rows of ``url_hashes`` deleted with the statistics of their domains (which
        counted them: made again at the next analysis), at once (pages deleted)."""
        self._writable()
        rows = [(key,) for key in dict.fromkeys(url_hashes)]
        if rows:
            p = self.placeholder
            with self._failing("write"):
                domain = f"SELECT domain FROM block_signatures WHERE url_hash = {p}"
                self._write_rows(f"DELETE FROM block_stats WHERE domain IN ({domain})", rows)
                self._write_rows(f"DELETE FROM block_signatures WHERE url_hash = {p}", rows)

    def get_block_stats(self, domain: str) -> bytes | None:
        rows = self._select(f"SELECT stats FROM block_stats WHERE domain = {self.placeholder}", (domain,))
        return bytes(rows[0][0]) if rows else None

    def put_block_stats(self, domain: str, stats: BlockStatsBytes | None) -> None:
        """The domain's statistics stored (None: dropped), at once: ``stats``, their
        bytes, or the parts of them in order (``DomainStats.to_parts``), written one
        after the other where the backend can (:meth:`_write_stats`)."""
        self._writable()
        with self._failing("write"):
            if stats is None:
                self._write_rows(f"DELETE FROM block_stats WHERE domain = {self.placeholder}", [(domain,)])
            else:
                self._write_stats(domain, [stats] if isinstance(stats, (bytes, bytearray)) else stats)

    def _write_stats(self, domain: str, parts: Sequence[bytes | bytearray | memoryview]) -> None:
        """The statistics' row written, their parts joined (a backend that can write a
        value in parts does so instead)."""
        p = self.placeholder
        sql = (
            f"INSERT INTO block_stats (domain, stats) VALUES ({p}, {p}) "
            "ON CONFLICT (domain) DO UPDATE SET stats = excluded.stats"
        )
        self._write_rows(sql, [(domain, b"".join(parts))])
