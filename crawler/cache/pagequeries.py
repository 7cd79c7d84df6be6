"""The questions over all pages (:class:`~crawler.cache.ports.PagePort`'s counts,
summaries, filters and look-ups), asked of the committed ``pages`` table in the
backend's SQL: :class:`PageQueries`, part of :class:`crawler.cache.base.StoreBase`.
The statements are :mod:`crawler.cache.sqlpages`'s."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, ClassVar

from crawler.cache.backend import StoreBackend
from crawler.cache.sqlpages import FIND_BY_URL, domain_rows, find_page, page_query

if TYPE_CHECKING:
    from collections.abc import Iterator

URL_HASH_RE = re.compile(r"^[0-9a-f]{40}$")


class PageQueries(StoreBackend):
    """The questions over all committed pages, in the backend's SQL (:attr:`placeholder`,
    :attr:`byte_order`); a record decoded as the base decodes a page's (:meth:`_record`,
    :meth:`get_page`)."""

    #: the backend's SQL of "text ``{column}`` holds the parameter" (a first sieve)
    text_holds: ClassVar[str] = "instr({column}, {p}) > 0"

    def _record(self, url_hash: str, raw: Any) -> dict[str, Any] | None:
        """A stored record's JSON decoded, as a read of the page sees it."""
        raise NotImplementedError

    def get_page(self, url_hash: str) -> dict[str, Any] | None:
        raise NotImplementedError

    def status_counts(self) -> dict[str, int]:
        return {str(s): int(n) for s, n in self._select("SELECT status, count(*) FROM pages GROUP BY status")}

    def extraction_counts(self) -> dict[str, int]:
        rows = self._select("SELECT count(extraction_key), count(extraction_error), count(invalidated) FROM pages")
        row = rows[0] if rows else (0, 0, 0)
        return {"extracted": int(row[0]), "failed": int(row[1]), "invalidated": int(row[2])}

    def domain_summary(self) -> list[dict[str, Any]]:
        return domain_rows(
            self._select(
                "SELECT domain, count(*), sum(CASE WHEN status = 'removed' THEN 1 ELSE 0 END), "
                "count(extraction_key), count(extraction_error), max(last_seen), max(last_changed) FROM pages "
                f"GROUP BY domain ORDER BY 2 DESC, domain{self.byte_order}"
            )
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
        named_out: bool = False,
        limit: int | None = None,
    ) -> Iterator[tuple[str, dict[str, Any]]]:
        """``(url_hash, record)`` of the committed pages matching every filter given, by
        URL (byte order). ``converter_pending``: pages whose stored text awaits a
        converter upgrade; ``empty``: pages whose last crawl found no text to extract;
        ``widened``: pages whose last parse had its main content widened; ``named_out``:
        pages whose last parse left words out of the content container for a name."""
        sql, params = page_query(
            self.placeholder,
            f"url{self.byte_order}",
            domain=domain,
            status=status,
            changed_since=changed_since,
            failed=failed,
            converter_pending=converter_pending,
            empty=empty,
            widened=widened,
            named_out=named_out,
            limit=limit,
        )
        for key, raw in self._select(sql, params):
            record = self._record(key, raw)
            if record is not None:
                yield key, record

    def removed_in_run(self, run_id: str) -> Iterator[tuple[str, dict[str, Any]]]:
        """``(url_hash, record)`` of the committed pages the run ``run_id`` marked
        removed (their status ``removed``, their record's ``run_id`` the run's), in the
        order first recorded: a query, not a pass over every record."""
        if not run_id:
            return
        holds = self.text_holds.format(column="record", p=self.placeholder)
        sql = (
            f"SELECT key, record FROM pages WHERE status = {self.placeholder} AND {holds} "
            f"ORDER BY {self.first_recorded}"
        )
        for key, raw in self._select(sql, ("removed", run_id)):
            record = self._record(key, raw)
            if record is not None and record.get("run_id") == run_id:
                yield key, record

    def find_page(self, url_or_hash: str) -> tuple[str, dict[str, Any]] | None:
        """A page by its url_hash or by any spelling of its URL."""
        sql = FIND_BY_URL.format(p=self.placeholder)
        return find_page(
            url_or_hash,
            lambda key: bool(URL_HASH_RE.match(key)),
            lambda canonical, url: [row[0] for row in self._select(sql, (canonical, url))],
            self.get_page,
        )
