"""The ``changes`` table every store keeps (the same columns in SQLite and PostgreSQL):
a run's change list, one row a page, in the order the run's report stage wrote them,
listed page by page (:class:`ChangeQueries`, part of
:class:`crawler.cache.base.StoreBase`), so that no reader holds a whole run's list.

Rows are written at once (not buffered until a commit), as run reports are, by the
report stage, and by the upgrade that moves an older report's inline ``changes`` list
into the table (:func:`report_change_rows`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from crawler.cache.backend import StoreBackend

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

#: a change record's fields, in the table's order (after ``run_id`` and ``seq``)
CHANGE_COLUMNS = ("url_hash", "url", "status", "content_hash", "extraction_file")
#: rows read by one query of :meth:`ChangeQueries.iter_run_changes`
CHANGES_PER_READ = 1000


def change_table_sql(integer: str) -> str:
    """The statement that makes the table, with a backend's integer type."""
    return (
        f"CREATE TABLE IF NOT EXISTS changes (run_id TEXT NOT NULL, seq {integer} NOT NULL, "
        "url_hash TEXT NOT NULL, url TEXT, status TEXT NOT NULL, content_hash TEXT, extraction_file TEXT, "
        "PRIMARY KEY (run_id, seq))"
    )


def upsert_change(placeholder: str) -> str:
    """The statement that writes one row (again: a write asked twice comes to the same)."""
    columns = ("run_id", "seq", *CHANGE_COLUMNS)
    return (
        f"INSERT INTO changes ({', '.join(columns)}) VALUES ({', '.join([placeholder] * len(columns))}) "
        f"ON CONFLICT (run_id, seq) DO UPDATE SET {', '.join(f'{c} = excluded.{c}' for c in CHANGE_COLUMNS)}"
    )


def change_row(run_id: str, seq: int, change: dict[str, Any]) -> tuple[Any, ...]:
    """The table's row of one change record (``change_record``'s fields).

    >>> change_row("r", 0, {"url": "u", "url_hash": "h", "status": "new", "content_hash": None})
    ('r', 0, 'h', 'u', 'new', None, None)
    """
    return (run_id, seq, *(_text(change.get(column)) for column in CHANGE_COLUMNS))


def report_change_rows(report: Any) -> list[tuple[Any, ...]]:
    """The rows of a report written before the table (its inline ``changes`` list),
    each entry that names a page and a status; none for a report without one.

    >>> report_change_rows({"run_id": "r", "changes": [{"url_hash": "h", "status": "new"}, "junk"]})
    [('r', 0, 'h', None, 'new', None, None)]
    >>> report_change_rows({"run_id": "r"})
    []
    """
    if not isinstance(report, dict) or not isinstance(report.get("changes"), list) or not report.get("run_id"):
        return []
    entries = [c for c in report["changes"] if isinstance(c, dict) and c.get("url_hash") and c.get("status")]
    return [change_row(str(report["run_id"]), seq, change) for seq, change in enumerate(entries)]


def _text(value: Any) -> str | None:
    return value if value is None or isinstance(value, str) else str(value)


class ChangeQueries(StoreBackend):
    """A run's change list in the ``changes`` table, in the backend's SQL."""

    def _write_rows(self, sql: str, rows: list[tuple[Any, ...]]) -> None:
        """``sql`` run for each of ``rows`` in one transaction, at once (not a commit's)."""
        raise NotImplementedError

    def put_run_changes(self, run_id: str, changes: Iterable[dict[str, Any]], *, start: int = 0) -> int:
        """``changes`` (change records) stored as the run's, numbered from ``start`` (a
        batch after ``start`` rows): one transaction. Returns how many."""
        self._writable()
        rows = [change_row(run_id, start + index, change) for index, change in enumerate(changes)]
        if rows:
            with self._failing("write"):
                self._write_rows(upsert_change(self.placeholder), rows)
        return len(rows)

    def clear_run_changes(self, run_id: str) -> None:
        """The run's change list emptied (a run's processing done again writes it anew)."""
        self._writable()
        with self._failing("write"):
            self._write_rows(f"DELETE FROM changes WHERE run_id = {self.placeholder}", [(run_id,)])

    def iter_run_changes(self, run_id: str, status: str | None = None) -> Iterator[dict[str, Any]]:
        """The run's change records (``url_hash``, ``url``, ``status``,
        ``content_hash``, ``extraction_file``) in the order written, those of
        ``status`` only when given, read :data:`CHANGES_PER_READ` at a time."""
        p = self.placeholder
        where = f"run_id = {p} AND seq > {p}" + (f" AND status = {p}" if status else "")
        columns = ", ".join(CHANGE_COLUMNS)
        sql = f"SELECT seq, {columns} FROM changes WHERE {where} ORDER BY seq LIMIT {CHANGES_PER_READ}"
        last = -1
        while True:
            rows = self._select(sql, (run_id, last, status) if status else (run_id, last))
            for row in rows:
                yield dict(zip(CHANGE_COLUMNS, row[1:], strict=True))
            if len(rows) < CHANGES_PER_READ:
                return
            last = int(rows[-1][0])

    def count_run_changes(self, run_id: str) -> dict[str, int]:
        """The run's changes counted by status (none: ``{}``)."""
        sql = f"SELECT status, count(*) FROM changes WHERE run_id = {self.placeholder} GROUP BY status"
        return {str(status): int(n) for status, n in self._select(sql, (run_id,))}
