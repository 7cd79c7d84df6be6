"""The store's ports: what each consumer of the cache may ask of it, and nothing more.

A store (``EXTRACTED_DOCS_STORE``) implements every port; each component holds it as
the narrow port of what it calls (the aliases at the end of this module), so what it
can touch is visible in its type. What a store can do is declared
(:attr:`StorePort.concurrent_writers`, :attr:`StorePort.embedded`), never probed.
New backends: :class:`crawler.cache.backend.StoreBackend`; the contract every store
meets: ``tests/test_store_contract.py``; who uses which port: docs/architecture.md
("The store's ports").

Every method is synchronous and short. Writes of pages, content, responses and the
reuse index may be buffered until :meth:`StorePort.commit` (visible at once in the same
process); extractions, domain records and run reports are written at once.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Sequence

    from crawler.cache.base import PageHead
    from crawler.cache.blocktable import BlockStatsBytes, SignatureMark, SignatureRow
    from crawler.cache.records import PageContent, PageRecord
    from crawler.cache.responses import ParsedPage, RenderedPage, StoredResponse


@runtime_checkable
class ResponsePort(Protocol):
    def get_response(self, url_hash: str) -> StoredResponse | None: ...
    def put_response(self, url_hash: str, response: StoredResponse) -> None: ...
    def get_rendered(self, url_hash: str) -> RenderedPage | None: ...
    def put_rendered(self, url_hash: str, page: RenderedPage) -> None: ...
    #: what the spider made of a stored response: reused while the response is the same
    def get_parsed(self, url_hash: str) -> ParsedPage | None: ...
    def put_parsed(self, url_hash: str, page: ParsedPage) -> None: ...


@runtime_checkable
class PagePort(Protocol):
    def get_page(self, url_hash: str) -> PageRecord | None: ...
    #: :meth:`get_page` of each page, by key (every key given, in order), in as few
    #: queries as the store takes (the stages read a batch of records at a time)
    def get_pages(self, url_hashes: Iterable[str]) -> dict[str, PageRecord | None]: ...
    def put_page(self, url_hash: str, record: PageRecord) -> None: ...
    #: the page seen again and nothing else of it changed: its ``last_seen`` and
    #: ``run_id`` stored without writing the whole record again
    def touch_page(self, url_hash: str, last_seen: str, run_id: str) -> None: ...
    #: every page, in the order first recorded, read a batch at a time (a scan holds one
    #: batch of rows, never the table)
    def iter_pages(self) -> Iterator[tuple[str, PageRecord]]: ...
    def iter_page_keys(self) -> Iterator[str]: ...
    #: every page's url, domain and status, from the page table's columns (no record decoded)
    def iter_page_heads(self) -> Iterator[PageHead]: ...
    #: the keys of a domain's pages not removed, in ascending key order, a batch at a time
    def iter_live_keys(self, domain: str) -> Iterator[str]: ...
    #: the same of some pages, by key (None: no page)
    def get_page_heads(self, url_hashes: Iterable[str]) -> dict[str, PageHead | None]: ...
    #: a few fields of each page's record (a dotted path), by key (None: no record),
    #: decoded by the database where it can (a pass over every page asking a few)
    def get_record_fields(
        self, url_hashes: Iterable[str], fields: Sequence[str]
    ) -> dict[str, tuple[Any, ...] | None]: ...
    def count_pages(self) -> int: ...
    #: everything kept for one page (record, content, responses, extraction); with
    #: ``keep_fetched``, its responses and what they parsed into stay
    def delete_page(self, url_hash: str, *, keep_fetched: bool = False) -> None: ...
    def get_content(self, url_hash: str) -> PageContent | None: ...
    #: :meth:`get_content` of each page, by key (every key given, in order), in as few
    #: queries as the store takes (the stages read every page's content at the close)
    def get_contents(self, url_hashes: Iterable[str]) -> dict[str, PageContent | None]: ...
    #: what the extractor reads of each page's content, hashed, from the hashes stored
    #: with it (None: read the content), in as few queries as the store takes
    def get_input_hashes(self, url_hashes: Iterable[str], *, use_clean: bool) -> dict[str, str | None]: ...
    def put_content(self, url_hash: str, content: PageContent) -> None: ...

    # questions over all pages (``scrapy cache``), answered by the store's own index
    def status_counts(self) -> dict[str, int]: ...
    #: {"extracted": n, "failed": n, "invalidated": n}
    def extraction_counts(self) -> dict[str, int]: ...
    #: one dict per domain: domain, pages, removed, extracted, failed, last_seen, last_changed
    def domain_summary(self) -> list[dict[str, Any]]: ...
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
    ) -> Iterator[tuple[str, PageRecord]]: ...
    #: a page by any spelling of its URL, or by its url_hash
    def find_page(self, url_or_hash: str) -> tuple[str, PageRecord] | None: ...
    #: the committed pages the run ``run_id`` marked removed, in the order first recorded
    def removed_in_run(self, run_id: str) -> Iterator[tuple[str, PageRecord]]: ...


@runtime_checkable
class ExtractionPort(Protocol):
    def read_extraction(self, url_hash: str) -> dict[str, Any] | None: ...
    #: returns where a person finds it (a path relative to the cache, a URL)
    def write_extraction(self, url_hash: str, extraction: dict[str, Any]) -> str: ...
    def delete_extraction(self, url_hash: str) -> None: ...
    def iter_extraction_keys(self) -> Iterator[str]: ...
    def find_extraction(self, input_key: str) -> str | None: ...
    def link_extraction(self, input_key: str, url_hash: str) -> None: ...
    #: a lease on extracting input ``key`` for ``seconds``: True when no other live
    #: owner holds one (an expired lease is taken over), so two processes never call
    #: the extractor for one input at once; always True on a store with one writer
    def claim_extraction(self, key: str, owner: str, seconds: float) -> bool: ...
    #: the lease given up, once the extraction is written (another owner's is kept)
    def release_extraction(self, key: str, owner: str) -> None: ...


@runtime_checkable
class DomainPort(Protocol):
    def get_domain(self, domain: str) -> dict[str, Any] | None: ...
    def put_domain(self, domain: str, record: dict[str, Any]) -> None: ...
    #: the record replaced by ``update(record)`` (None: none yet), with no other
    #: writer's record stored between the read and the write; returns what was stored
    def update_domain(
        self, domain: str, update: Callable[[dict[str, Any] | None], dict[str, Any]]
    ) -> dict[str, Any]: ...
    def iter_domains(self) -> Iterator[str]: ...


@runtime_checkable
class RunPort(Protocol):
    #: returns where a person finds it (:meth:`run_report_location`)
    def write_run_report(self, run_id: str, report: dict[str, Any]) -> str: ...
    #: where a person finds the report of ``run_id``: a file's path, a database's row
    def run_report_location(self, run_id: str) -> str: ...
    def has_run_report(self, run_id: str) -> bool: ...
    #: the report of the run ``run_id`` (None: it has none)
    def run_report(self, run_id: str) -> dict[str, Any] | None: ...
    #: the last ``last`` reports, oldest first
    def run_reports(self, last: int) -> list[dict[str, Any]]: ...
    def latest_run_report(self) -> dict[str, Any] | None: ...
    #: a run's change list (records of ``change_record``), a batch at a time, numbered
    #: from ``start``; written at once; returns how many
    def put_run_changes(self, run_id: str, changes: Iterable[dict[str, Any]], *, start: int = 0) -> int: ...
    def clear_run_changes(self, run_id: str) -> None: ...
    #: the run's change records in the order written (of ``status`` only), streamed
    def iter_run_changes(self, run_id: str, status: str | None = None) -> Iterator[dict[str, Any]]: ...
    #: the run's changes counted by status
    def count_run_changes(self, run_id: str) -> dict[str, int]: ...


@runtime_checkable
class MaintenancePort(Protocol):
    """What ``scrapy cache prune`` and ``verify`` read and delete besides the pages."""

    def iter_content_keys(self) -> Iterator[str]: ...
    def iter_rendered_keys(self) -> Iterator[str]: ...
    def delete_rendered(self, url_hash: str) -> None: ...
    #: ``(input_key, url_hash)`` of the extraction-reuse index
    def iter_inputs(self) -> Iterator[tuple[str, str]]: ...
    def delete_input(self, input_key: str) -> None: ...
    #: where a person finds the extraction of ``url_hash`` (``extractions/<key>.json``)
    def extraction_name(self, url_hash: str) -> str: ...
    #: the extraction of ``url_hash`` kept under its name plus ``suffix``, no page's any
    #: more (another page's extraction found there): its new name
    def set_extraction_aside(self, url_hash: str, suffix: str) -> str: ...
    #: what a killed run left that nothing refers to (temporary files), by name
    def leftovers(self) -> list[str]: ...
    def delete_leftovers(self, names: Iterable[str]) -> None: ...
    #: whether another process writes to the store now (a crawl holds its writer lock)
    def is_locked_elsewhere(self) -> bool: ...


@runtime_checkable
class BlockStatsPort(Protocol):
    """The boilerplate analysis's page signatures and domain statistics, kept between
    runs (crawler.cache.blocktable): written at once, not at a commit."""

    #: every signature row of a domain but the signature, by url_hash, streamed
    def iter_signature_marks(self, domain: str) -> Iterator[SignatureMark]: ...
    #: ``(url_hash, signature)`` of a domain's counted pages, streamed
    def iter_signatures(self, domain: str) -> Iterator[tuple[str, bytes]]: ...
    def get_signatures(self, url_hashes: Iterable[str]) -> dict[str, bytes]: ...
    def put_signatures(self, domain: str, rows: Iterable[SignatureRow]) -> int: ...
    def delete_signatures(self, url_hashes: Iterable[str]) -> None: ...
    def get_block_stats(self, domain: str) -> bytes | None: ...
    #: None: dropped
    def put_block_stats(self, domain: str, stats: BlockStatsBytes | None) -> None: ...


@runtime_checkable
class StorePort(Protocol):
    #: what the store is, for messages: a directory, a database URL (never a password)
    location: str
    #: several processes may write at once, each under :meth:`writer_lock` (extraction
    #: claims matter); False: one writer at a time
    concurrent_writers: bool
    #: the store is files in ``EXTRACTED_DOCS_DIR`` that ``scrapy cache verify`` checks
    #: and repairs before opening the store (a damaged file keeps it from opening)
    embedded: bool
    #: set by the crawl's cache: called with (table, key) for an entry that cannot be
    #: decoded, and with ("read" or "write", message) when the store fails
    on_read_error: Callable[[str, str], None] | None
    on_storage_error: Callable[[str, str], None] | None

    #: the store's exclusive lock (a cache command that changes the store as a whole;
    #: on a store with one writer, every writer): raises CacheLockedError while another
    #: process holds it or a :meth:`writer_lock`
    def lock(self) -> AbstractContextManager[None]: ...
    #: what a crawl and ``scrapy process`` hold while they write: the embedded store
    #: admits one writer (it is :meth:`lock`); a server store admits several at once
    #: and refuses them (CacheLockedError) while :meth:`lock`'s holder works
    def writer_lock(self) -> AbstractContextManager[None]: ...
    #: the writes made inside stored together at its end, or none of them (an exception)
    def transaction(self) -> AbstractContextManager[None]: ...
    #: store what is pending (writes may be buffered until then)
    def commit(self) -> None: ...
    def close(self) -> None: ...
    #: bytes used by part (``approximate``: extrapolated from a sample); None: the store
    #: cannot tell (a server's)
    def size_on_disk(self) -> dict[str, Any] | None: ...


@runtime_checkable
class DocStore(
    ResponsePort, PagePort, ExtractionPort, DomainPort, RunPort, MaintenancePort, BlockStatsPort, StorePort, Protocol
):
    """A whole store: every port."""


# -- what each component of a crawl asks of the store: its port ---------------------
#
# A component holds the store as the port below, so what it can touch is in its type;
# every store (a DocStore) is each of them. tests/test_cache_ports.py checks that each
# is a part of DocStore, and that the store classes meet every one.


class PageReader(Protocol):
    """A page's record (crawler.incremental.folding: which record a URL is recorded as)."""

    def get_page(self, url_hash: str) -> PageRecord | None: ...


class ResponseReader(Protocol):
    """A page's stored response (crawler.incremental.folding: a directory's response)."""

    def get_response(self, url_hash: str) -> StoredResponse | None: ...


class PageAndResponseReader(PageReader, ResponseReader, Protocol):
    """A page's record and its stored response."""


@runtime_checkable
class RevalidationStore(PageAndResponseReader, Protocol):
    """RevalidationMiddleware: the stored response of a request (and the record that
    says whether the page is known, due, gone), and its host's revisit trust."""

    def put_response(self, url_hash: str, response: StoredResponse) -> None: ...
    def get_domain(self, domain: str) -> dict[str, Any] | None: ...
    def update_domain(
        self, domain: str, update: Callable[[dict[str, Any] | None], dict[str, Any]]
    ) -> dict[str, Any]: ...


@runtime_checkable
class RenderStore(PageReader, Protocol):
    """RenderMiddleware: a page's stored rendering, and its record (was it removed)."""

    def get_rendered(self, url_hash: str) -> RenderedPage | None: ...
    def put_rendered(self, url_hash: str, page: RenderedPage) -> None: ...


@runtime_checkable
class PageQueryStore(Protocol):
    """FrontierWorker: a domain's recorded pages (what the spider's scope leaves out)."""

    def query_pages(self, *, domain: str | None = None) -> Iterator[tuple[str, PageRecord]]: ...


@runtime_checkable
class SpiderStore(Protocol):
    """The docs spider (crawler.incremental.spiderport): what a stored response was
    parsed into; the first pages recorded of a site, by status."""

    def get_parsed(self, url_hash: str) -> ParsedPage | None: ...
    def put_parsed(self, url_hash: str, page: ParsedPage) -> None: ...
    def query_pages(
        self, *, domain: str | None = None, status: str | None = None, limit: int | None = None
    ) -> Iterator[tuple[str, PageRecord]]: ...
    #: the last ``last`` run reports, oldest first (was the last crawl bounded by max_pages?)
    def run_reports(self, last: int) -> list[dict[str, Any]]: ...


class PageWriter(PageReader, Protocol):
    """What the ledger needs to write back a record the stages or a command changed."""

    def put_page(self, url_hash: str, record: PageRecord) -> None: ...


@runtime_checkable
class LedgerStore(PageReader, Protocol):
    """The crawl's Ledger: a page's record and content, written; an index file
    spelling's record folded into its directory's (delete_page); whether the run that
    last saw a page was reported."""

    def put_page(self, url_hash: str, record: PageRecord) -> None: ...
    def touch_page(self, url_hash: str, last_seen: str, run_id: str) -> None: ...
    def delete_page(self, url_hash: str, *, keep_fetched: bool = False) -> None: ...
    def get_content(self, url_hash: str) -> PageContent | None: ...
    def put_content(self, url_hash: str, content: PageContent) -> None: ...
    def has_run_report(self, run_id: str) -> bool: ...


@runtime_checkable
class PageViewStore(PageReader, Protocol):
    """The stages' PageViews: every page's url, domain and status (one pass over the
    page table's columns), the records and contents of a batch of pages (a few
    queries), both written back as each batch is done."""

    def iter_page_heads(self) -> Iterator[PageHead]: ...
    def iter_live_keys(self, domain: str) -> Iterator[str]: ...
    def iter_page_keys(self) -> Iterator[str]: ...
    def get_pages(self, url_hashes: Iterable[str]) -> dict[str, PageRecord | None]: ...
    def put_page(self, url_hash: str, record: PageRecord) -> None: ...
    def get_content(self, url_hash: str) -> PageContent | None: ...
    def get_contents(self, url_hashes: Iterable[str]) -> dict[str, PageContent | None]: ...
    def get_input_hashes(self, url_hashes: Iterable[str], *, use_clean: bool) -> dict[str, str | None]: ...
    def get_record_fields(
        self, url_hashes: Iterable[str], fields: Sequence[str]
    ) -> dict[str, tuple[Any, ...] | None]: ...
    def put_content(self, url_hash: str, content: PageContent) -> None: ...


@runtime_checkable
class MarkdownStore(PageReader, Protocol):
    """The markdown export (crawler.mdfolder): every page's record (one pass) and the
    markdown of many pages in a few queries, for the whole folder; a run's changed
    pages' records one by one."""

    def iter_pages(self) -> Iterator[tuple[str, PageRecord]]: ...
    def get_contents(self, url_hashes: Iterable[str]) -> dict[str, PageContent | None]: ...


@runtime_checkable
class ExtractionStore(Protocol):
    """ExtractionStage: extractions, the reuse index by input key, and the leases of a
    store with several writers (declared: :attr:`StorePort.concurrent_writers`)."""

    concurrent_writers: bool

    def read_extraction(self, url_hash: str) -> dict[str, Any] | None: ...
    def write_extraction(self, url_hash: str, extraction: dict[str, Any]) -> str: ...
    def find_extraction(self, input_key: str) -> str | None: ...
    def link_extraction(self, input_key: str, url_hash: str) -> None: ...
    def claim_extraction(self, key: str, owner: str, seconds: float) -> bool: ...
    def release_extraction(self, key: str, owner: str) -> None: ...


@runtime_checkable
class DomainStore(Protocol):
    """``scrapy boilerplate compare``: a domain's analysis record, read and updated."""

    def get_domain(self, domain: str) -> dict[str, Any] | None: ...
    def update_domain(
        self, domain: str, update: Callable[[dict[str, Any] | None], dict[str, Any]]
    ) -> dict[str, Any]: ...


@runtime_checkable
class BoilerplateStore(DomainStore, BlockStatsPort, Protocol):
    """BoilerplateStage: a domain's analysis record, read and updated; its pages'
    signatures and its statistics kept between runs (:class:`BlockStatsPort`)."""

    #: a few fields of each page's record (its live pages' pass), decoded by the
    #: database where it can
    def get_record_fields(
        self, url_hashes: Iterable[str], fields: Sequence[str]
    ) -> dict[str, tuple[Any, ...] | None]: ...
    #: the cleaned contents stored before the statistics that say they are
    def commit(self) -> None: ...


@runtime_checkable
class ChangeReader(Protocol):
    """ChangeFeeds, ChangesWebhook, MarkdownExport: a run's change list, streamed."""

    def iter_run_changes(self, run_id: str, status: str | None = None) -> Iterator[dict[str, Any]]: ...


@runtime_checkable
class ReportStore(Protocol):
    """ReportStage: the run's pages' statuses read in batches (and the records of those
    it changed) and the pages it marked removed, its change list written, its report
    written."""

    def get_page_heads(self, url_hashes: Iterable[str]) -> dict[str, PageHead | None]: ...
    def get_pages(self, url_hashes: Iterable[str]) -> dict[str, PageRecord | None]: ...
    def removed_in_run(self, run_id: str) -> Iterator[tuple[str, PageRecord]]: ...
    def put_run_changes(self, run_id: str, changes: Iterable[dict[str, Any]], *, start: int = 0) -> int: ...
    def clear_run_changes(self, run_id: str) -> None: ...
    def write_run_report(self, run_id: str, report: dict[str, Any]) -> str: ...
