"""The ``pages`` table every store keeps (the same columns in SQLite and PostgreSQL),
written once: its row of a record, the queries asked of it (each store gives its
placeholder and its byte-order collation; :class:`crawler.cache.pagequeries.PageQueries`
runs them), and the parts of the pages read last, kept in memory."""

from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING, Any

from crawler.cache.codecs import json_encode
from crawler.identity import page_key
from crawler.lib.urls import canonical_url

if TYPE_CHECKING:
    from collections.abc import Callable, Container, Iterable

#: the page table: a column for each thing a question over all pages asks about
PAGE_COLUMNS = (
    "url", "canonical_url", "domain", "status", "last_seen", "last_changed",
    "extraction_key", "extraction_error", "invalidated", "converter_pending", "empty_input",
    "selection_widened", "named_out",
)  # fmt: skip


def page_row(url_hash: str, record: dict[str, Any]) -> tuple[Any, ...]:
    """The page table's row of ``record``: its key, its queried columns, then the record."""
    extraction = record.get("extraction")
    error = record.get("extraction_error")
    values = {
        **{column: record.get(column) for column in PAGE_COLUMNS},
        "extraction_key": extraction.get("input_key") if isinstance(extraction, dict) else None,
        "extraction_error": error.get("at") if isinstance(error, dict) else None,
    }
    return (url_hash, *(_text(values[column]) for column in PAGE_COLUMNS), json_encode(record))


def upsert_page(placeholder: str) -> str:
    """The statement that writes a row of :func:`page_row` (a new page, or one whose
    columns and record it replaces), with a store's ``placeholder``."""
    return (
        f"INSERT INTO pages (key, {', '.join(PAGE_COLUMNS)}, record) "
        f"VALUES ({', '.join([placeholder] * (len(PAGE_COLUMNS) + 2))}) "
        f"ON CONFLICT (key) DO UPDATE SET {', '.join(f'{c} = excluded.{c}' for c in (*PAGE_COLUMNS, 'record'))}"
    )


def _text(value: Any) -> str | None:
    return value if value is None or isinstance(value, str) else str(value)


#: a commit's pending writes: url_hash -> the page table's row (None: deleted),
#: (url_hash, part) -> the part's value, url_hash -> (domain, run) of the pages touched
PageRows = dict[str, tuple[Any, ...] | None]
PartWrites = dict[tuple[str, str], Any]
Touched = dict[str, tuple[str, str]]

#: pages whose stored parts are kept in memory after a read (writable stores)
RECENT_PAGES = 64
#: ``find_page``'s second chance: the key of a record whose canonical URL or URL it is
FIND_BY_URL = "SELECT key FROM pages WHERE canonical_url = {p} UNION SELECT key FROM pages WHERE url = {p} LIMIT 1"


def page_query(
    placeholder: str,
    order: str,
    *,
    domain: str | None = None,
    status: str | None = None,
    changed_since: str | None = None,
    failed: bool = False,
    converter_pending: bool = False,
    empty: bool = False,
    widened: bool = False,
    named_out: bool = False,
    limit: int | None = None,
) -> tuple[str, list[Any]]:
    """The statement and parameters of ``query_pages`` (PagePort): every filter given,
    by ``order``.

    >>> sql, params = page_query("?", "url", domain="a.example", failed=True, limit=5)
    >>> sql
    'SELECT key, record FROM pages WHERE domain = ? AND extraction_error IS NOT NULL ORDER BY url LIMIT 5'
    >>> params
    ['a.example']
    """
    where: list[str] = []
    params: list[Any] = []
    for column, value in (("domain", domain), ("status", status)):
        if value:
            where.append(f"{column} = {placeholder}")
            params.append(value)
    if changed_since:
        where.append(f"last_changed >= {placeholder}")
        params.append(changed_since)
    for column, wanted in (
        ("extraction_error", failed),
        ("converter_pending", converter_pending),
        ("empty_input", empty),
        ("selection_widened", widened),
        ("named_out", named_out),
    ):
        if wanted:
            where.append(f"{column} IS NOT NULL")
    sql = "SELECT key, record FROM pages"
    if where:
        sql += " WHERE " + " AND ".join(where)
    sql += f" ORDER BY {order}"
    if limit is not None:
        sql += f" LIMIT {int(limit)}"
    return sql, params


def domain_rows(rows: Iterable[tuple[Any, ...]]) -> list[dict[str, Any]]:
    """``domain_summary``'s records from the rows of ``SELECT domain, pages, removed,
    extracted, failed, last seen, last changed``."""
    return [
        {
            "domain": domain,
            "pages": int(pages),
            "removed": int(removed),
            "extracted": int(extracted),
            "failed": int(failed),
            "last_seen": last_seen,
            "last_changed": last_changed,
        }
        for domain, pages, removed, extracted, failed, last_seen, last_changed in rows
    ]


def find_page(
    url_or_hash: str,
    is_key: Callable[[str], bool],
    keys_by_url: Callable[[str, str], list[str]],
    get_page: Callable[[str], dict[str, Any] | None],
) -> tuple[str, dict[str, Any]] | None:
    """A page by its url_hash or by any spelling of its URL: the key of its canonical
    URL, else a record whose canonical URL or URL it is (``keys_by_url(canonical, url)``
    runs :data:`FIND_BY_URL`)."""
    if is_key(url_or_hash):
        keys = [url_or_hash]
    else:
        canonical = canonical_url(url_or_hash)
        keys = [page_key(canonical), *keys_by_url(canonical, url_or_hash)]
    for key in keys:
        record = get_page(key)
        if record is not None:
            return key, record
    return None


class RecentPages:
    """The stored parts of the last :data:`RECENT_PAGES` pages read (by a writable
    store: the middleware, the spider and the pipeline each read one part of the same
    page within moments; the first read fetches them all in one query)."""

    def __init__(self, size: int = RECENT_PAGES) -> None:
        self.size = size
        self._pages: OrderedDict[str, dict[str, Any]] = OrderedDict()

    def get(self, url_hash: str) -> dict[str, Any] | None:
        parts = self._pages.get(url_hash)
        if parts is not None:
            self._pages.move_to_end(url_hash)
        return parts

    def put(self, url_hash: str, parts: dict[str, Any]) -> None:
        self._pages[url_hash] = parts
        if len(self._pages) > self.size:
            self._pages.popitem(last=False)

    def committed(
        self,
        pages: PageRows,
        parts: PartWrites,
        touched: Iterable[str],
        names: Container[str],
    ) -> None:
        """The writes just committed (a store's pending ``pages`` rows, ``parts`` of
        the ``names`` kept here, ``touched`` pages) applied to the pages kept: each then
        holds what a read would fetch now, since the pages a store writes are written
        by it alone (see ``StoreBase._recent``), and a page written since it was read is
        not fetched again (a first crawl's pipeline read one page in seven a second
        time: those a commit fell between its reads). A page only seen again
        (``touched``: the database changed its record) is dropped, and read again when
        asked for."""
        if not self._pages:
            return
        changes: dict[str, dict[str, Any]] = {}
        for (key, part), value in parts.items():
            if part in names and key in self._pages:
                changes.setdefault(key, {})[part] = value
        for key, row in pages.items():
            if key in self._pages:  # (a row's last column is the record's JSON)
                changes.setdefault(key, {})[""] = None if row is None else row[-1]
        for key, change in changes.items():
            kept = {**self._pages[key], **change}  # (a new dict: a reader may hold the old one)
            self._pages[key] = {name: value for name, value in kept.items() if value is not None}
        for key in touched:
            self._pages.pop(key, None)
