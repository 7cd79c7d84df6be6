"""The processing that follows a crawl, as explicit stages.

The stages are named, in order, in ``PROCESSING_STAGES`` and built with
``build_from_crawler`` (``NotConfigured``: off for the run). Each has ``plan(run)``
(cheap, no extractor or embedder call), ``await run(plan)`` and ``report(report)``, run
by :class:`crawler.extensions.closing.ClosingStages` at a crawl's close or by ``scrapy
process``; see docs/architecture.md. All stages share one :class:`PageViews`: a
bounded share of the pages held (memory grows with :data:`BUDGET`, not the site), many
pages read a batch at a time, what a stage changed written as it lets a batch go and
when it ends (:meth:`PageViews.flush`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import islice
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from crawler.cache.records import STATUS_REMOVED, page_text
from crawler.defaults import SETTINGS
from crawler.incremental import ledger
from crawler.lib.hashing import sha256_hex

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Iterable, Iterator, Sequence

    from crawler.cache import Cache
    from crawler.cache.base import PageHead
    from crawler.cache.ports import PageViewStore
    from crawler.cache.records import PageContent, PageRecord
    from crawler.support.interrupt import Interruption

#: what the views may hold by default (``PROCESSING_MEMORY_MB``), in characters: their
#: contents' and :data:`RECORD_COST` a view; past it, the views no stage changed go, the
#: least recently used first, and a page's content is read again when asked for
#: (counted: ``stages/content_reread``)
BUDGET = SETTINGS["PROCESSING_MEMORY_MB"] * 1024 * 1024
#: what a view's record counts for in the budget: a record of 1 kB of JSON holds about 4 kB
#: as Python objects (measured on the growth benchmark's pages; a content's text holds
#: about 1.2 bytes a character)
RECORD_COST = 4096
#: pages whose record and content :meth:`PageViews.batches` reads at a time
CONTENTS_PER_READ = 500


@runtime_checkable
class Stage(Protocol):
    """One step of the processing after a crawl (see the module's docstring)."""

    #: what ``scrapy process --stage`` calls it
    name: str

    def plan(self, run: StageRun) -> Any: ...
    async def run(self, plan: Any) -> None: ...
    def report(self, report: dict[str, Any]) -> Any: ...


class PageView:
    """One page as the stages see it: its record and content, read once; the text the
    extractor and the vector sync read (without the domain's boilerplate when that
    analysis is on) and its SHA-256, computed once."""

    __slots__ = (
        "_content", "_hash", "_held", "_loaded", "_views", "content_changed", "record", "record_changed", "url_hash",
    )  # fmt: skip

    def __init__(self, views: PageViews, url_hash: str, record: PageRecord) -> None:
        self._views = views
        self.url_hash = url_hash
        self.record = record
        self._content: PageContent | None = None
        #: the content was read and kept (it may be None: the store has none)
        self._loaded = False
        self._hash: str | None = None
        #: characters of content this view holds, counted in PageViews.held
        self._held = 0
        #: written by :meth:`PageViews.flush` or :meth:`PageViews.release`
        self.record_changed = False
        self.content_changed = False

    @property
    def content(self) -> PageContent | None:
        if self._loaded:
            return self._content
        return self._views.load_content(self)

    def keep_content(self, content: PageContent | None) -> None:
        self._content = content
        self._loaded = True
        self._views.hold(self, content)

    def drop_content(self) -> None:
        """Let the content go (read again when asked for): it is stored as it is."""
        self._views.hold(self, None)
        self._content = None
        self._loaded = False

    @property
    def text(self) -> str:
        """What the extractor reads: ``clean`` when the boilerplate analysis is on."""
        content = self.content
        return page_text(content, self._views.use_clean) if content is not None else ""

    @property
    def input_hash(self) -> str:
        if self._hash is None:
            self._hash = sha256_hex(self.text)
        return self._hash

    def set_content(self, content: PageContent, *, input_hash: str | None = None) -> None:
        """A stage changed what the page says (the boilerplate stage's ``clean``);
        ``input_hash``: the SHA-256 of its ``clean`` text, when the stage has it."""
        self._content = content
        self._loaded = True
        self._views.hold(self, content)  # held until written, whatever the budget says
        self._hash = input_hash if self._views.use_clean else None
        self.content_changed = True
        self._views.pin(self)

    def changed(self) -> None:
        """A stage changed the record: written once, when the stage releases the page
        or the stages end."""
        self.record_changed = True
        self._views.pin(self)


@dataclass
class PageViews:
    """The pages of one run of the stages, as the stages read them: a bounded number of
    views held, never every page at once (a store of a million pages). A stage that
    goes over many pages reads them :meth:`batches` at a time (a few queries a batch)
    and lets each batch go when done (:meth:`release`: what it changed written then);
    a page changed and not released stays held until :meth:`flush`. Passes over every
    page read the page table's columns only (:meth:`heads`)."""

    store: PageViewStore
    use_clean: bool = True
    #: what the views hold at most (:data:`BUDGET`): changed views are held until written
    budget: int = BUDGET
    #: told the number of writes of each batch released (the cache's ``wrote``: its
    #: commits keep the store's pending writes to a batch or so)
    wrote: Callable[[int], None] | None = None
    views: dict[str, PageView] = field(default_factory=dict)
    #: characters of content held
    held: int = 0
    #: content read again after the budget ran out
    rereads: int = 0
    #: the views no stage changed, the least recently used first: the first to go
    _unchanged: dict[str, None] = field(default_factory=dict)
    #: the pages a stage said it reads next, in order (:meth:`read_ahead`), and the
    #: place of the last one read from there (no index of them: a plan of 100,000
    #: calls is 10 MB as a dict)
    _ahead: list[str] = field(default_factory=list)
    _ahead_at: int = 0
    #: pages whose stored content did not say its hashes (:meth:`input_hashes`)
    _unhashed: set[str] = field(default_factory=set)

    def get(self, url_hash: str) -> PageView | None:
        """The page's view: held, or its record read (with the next pages of
        :meth:`read_ahead`'s, in one batch, when it is one of them)."""
        view = self.views.get(url_hash)
        if view is not None:
            if url_hash in self._unchanged:  # used last: the last to go
                self._unchanged[url_hash] = self._unchanged.pop(url_hash)
            return view
        place = self._place_ahead(url_hash)
        if place is not None:  # (the view itself: a budget smaller than a batch may let it go at once)
            self._ahead_at = place
            batch = self._read(self._ahead[place : place + CONTENTS_PER_READ], contents=True)
            return next((view for view in batch if view.url_hash == url_hash), None)
        record = self.store.get_page(url_hash)
        if record is None:
            return None
        view = self._add(url_hash, record)
        self._trim()
        return view

    def _add(self, url_hash: str, record: PageRecord) -> PageView:
        """A view of a page just read (the caller trims the views once it read all it reads)."""
        view = self.views[url_hash] = PageView(self, url_hash, record)
        self._unchanged[url_hash] = None
        return view

    @property
    def cost(self) -> int:
        """What the views hold, as :data:`BUDGET` counts it."""
        return self.held + RECORD_COST * len(self.views)

    def _trim(self) -> None:
        """The views no stage changed let go, the least recently used first, until the
        views fit the budget (or none is left to let go)."""
        over = self.cost - self.budget
        while over > 0 and self._unchanged:
            view = self.views.get(next(iter(self._unchanged)))
            over -= RECORD_COST + (view._held if view is not None else 0)
            self._forget(next(iter(self._unchanged)))

    def _forget(self, url_hash: str) -> None:
        """Let an unchanged view go (its page is read again when asked for)."""
        self._unchanged.pop(url_hash, None)
        view = self.views.pop(url_hash, None)
        if view is not None:
            self.hold(view, None)

    def pin(self, view: PageView) -> None:
        """A stage changed ``view``: held until written (held again if it went: a stage
        kept it meanwhile)."""
        key = view.url_hash
        self._unchanged.pop(key, None)
        other = self.views.get(key)
        if other is not view:
            if other is not None:  # read again meanwhile: what it holds is written first
                self._write(other)
                self._forget(key)
            self.views[key] = view
            self.hold(view, view._content if view._loaded else None)

    def _read(self, url_hashes: list[str], *, contents: bool) -> list[PageView]:
        """The views of ``url_hashes`` (those with a record, in order), the records and
        (``contents``) contents not held read in one batch each."""
        missing = [key for key in url_hashes if key not in self.views]
        if missing:
            for key, record in self.store.get_pages(missing).items():
                if record is not None and key not in self.views:
                    self._add(key, record)
        views = [view for key in url_hashes if (view := self.views.get(key)) is not None]
        if contents:  # kept while the batch is used: the least recently used go
            self.read_contents(views)
        self._trim()
        return views

    def read_contents(self, views: Iterable[PageView]) -> None:
        """The contents of ``views`` not held, read in one batch (kept as :meth:`_read`
        keeps them). One :meth:`input_hashes` found stored without its hashes (an older
        cache's) is stored again, with them: read once, not at every run."""
        views = list(views)
        unread = [view for view in views if not view._loaded]
        if unread:
            found = self.store.get_contents([view.url_hash for view in unread])
            for view in unread:
                view.keep_content(found.get(view.url_hash))
        writes = 0
        for view in views:
            if view.url_hash in self._unhashed and view._loaded:
                self._unhashed.discard(view.url_hash)
                if view._content is not None and not view.content_changed:  # (a changed one is written anyway)
                    self.store.put_content(view.url_hash, view._content.copy())
                    writes += 1
        if writes and self.wrote is not None:
            self.wrote(writes)
        self._trim()

    def record_fields(self, url_hashes: Iterable[str], fields: Sequence[str]) -> dict[str, tuple[Any, ...] | None]:
        """``fields`` of each page's record (the store's ``get_record_fields``: no record
        decoded where it can), as the store has them: a stage asks them of pages the
        stages before it wrote (:class:`ClosingStages` flushes after each)."""
        return self.store.get_record_fields(url_hashes, fields)

    def input_hashes(self, url_hashes: Iterable[str]) -> dict[str, str | None]:
        """Each page's :attr:`PageView.input_hash`, from the hashes the store keeps with its
        content (in one query, no content read; None: it does not say, the content is
        read, and stored again with them: :meth:`read_contents`)."""
        found = self.store.get_input_hashes(url_hashes, use_clean=self.use_clean)
        self._unhashed.update(key for key, value in found.items() if value is None)
        return found

    def batches(self, url_hashes: Iterable[str], *, contents: bool = True) -> Iterator[list[PageView]]:
        """The views of ``url_hashes`` (those with a record), :data:`CONTENTS_PER_READ` at a
        time, each batch read in a few queries; once the next batch is asked for (or
        the iteration ends), the last one is released (:meth:`release`)."""
        batch: list[str] = []
        for url_hash in url_hashes:
            batch.append(url_hash)
            if len(batch) == CONTENTS_PER_READ:
                yield from self._batch(batch, contents)
                batch = []
        if batch:
            yield from self._batch(batch, contents)

    def _batch(self, url_hashes: list[str], contents: bool) -> Iterator[list[PageView]]:
        views = self._read(url_hashes, contents=contents)
        try:
            yield views
        finally:
            writes = self.release(views)
            if writes and self.wrote is not None:
                self.wrote(writes)

    def read_ahead(self, url_hashes: Iterable[str]) -> None:
        """The pages a stage will :meth:`get` next, in order: a miss reads the next
        :data:`CONTENTS_PER_READ` of them in one batch (the extraction's calls)."""
        self._ahead = list(url_hashes)
        self._ahead_at = 0

    def _place_ahead(self, url_hash: str) -> int | None:
        """Where ``url_hash`` is in the pages read ahead, looked for from the last
        batch read on (the pages are asked for in order, a few at once)."""
        for start, stop in ((self._ahead_at, len(self._ahead)), (0, self._ahead_at)):
            try:
                return self._ahead.index(url_hash, start, stop)
            except ValueError:
                continue
        return None

    def heads(self, domains: set[str] | None = None) -> Iterator[PageHead]:
        """Every stored page not removed (of ``domains`` when given), in the store's
        order, as the page table's columns say, a held view's record as it is now."""
        for head in self.store.iter_page_heads():
            view = self.views.get(head.url_hash)
            if view is not None:
                record = view.record
                head = head._replace(
                    url=str(record.get("url", "")),
                    domain=str(record.get("domain", "")),
                    status=str(record.get("status", "")),
                )
            if head.status != STATUS_REMOVED and (domains is None or head.domain in domains):
                yield head

    def live_keys(self, domain: str) -> LiveKeys:
        """The keys of ``domain``'s stored pages not removed, in ascending order, read
        from the store at each pass over them, never held: as the store has them (as
        :meth:`record_fields`: :class:`ClosingStages` flushes after each stage)."""
        return LiveKeys(self.store, domain)

    def live(self, domains: set[str] | None = None) -> list[str]:
        """url_hash of the pages not removed (of ``domains`` when given), in the store's order."""
        return [head.url_hash for head in self.heads(domains)]

    def load_content(self, view: PageView) -> PageContent | None:
        content = self.store.get_content(view.url_hash)
        if self.cost + _size(content) <= self.budget:
            view.keep_content(content)
        else:
            self.rereads += 1
        return content

    def hold(self, view: PageView, content: PageContent | dict[str, Any] | None) -> None:
        """Count ``content`` as what ``view`` holds (instead of what it held)."""
        size = _size(content)
        self.held += size - view._held
        view._held = size

    def release(self, views: Iterable[PageView]) -> int:
        """A stage is done with ``views``: what it changed of each is written (its
        content, its record); each may go now, when the views are past the budget.
        Returns the number of writes."""
        writes = 0
        for view in views:
            if self.views.get(view.url_hash) is view:  # (not let go already)
                writes += self._write(view)
        self._trim()
        return writes

    def _write(self, view: PageView, *, records: bool = True) -> int:
        writes = 0
        if view.content_changed and view._content is not None:
            self.store.put_content(view.url_hash, view._content.copy())
            view.content_changed = False
            writes += 1
        if records and view.record_changed:
            writes += ledger.write_back(self.store, [(view.url_hash, view.record)])
            view.record_changed = False
        if not (view.content_changed or view.record_changed):
            self._unchanged[view.url_hash] = None
        return writes

    def flush(self, *, records: bool = True) -> int:
        """Write what the stages changed and did not release: each changed content,
        and (``records``) each changed record, once. Returns the number of writes."""
        writes = 0
        for view in list(self.views.values()):
            writes += self._write(view, records=records)
        self._trim()
        return writes


@dataclass(frozen=True)
class LiveKeys:
    """A domain's live keys in ascending order, each iteration a new pass over the
    store's page table (:meth:`PageViews.live_keys`)."""

    store: PageViewStore
    domain: str

    def __iter__(self) -> Iterator[str]:
        return self.store.iter_live_keys(self.domain)


@dataclass
class StageRun:
    """What the stages of one run share: the cache, the pages, which of them this run
    is about, and how the run went."""

    cache: Cache
    pages: PageViews
    #: "crawl" (at a crawl's close), "process" (``scrapy process``, no crawl) or "run"
    #: (``scrapy process --run``: the pages every crawl process of a shared-frontier run recorded)
    mode: str = "crawl"
    #: the crawl reached every page it could (removal and deletions need it)
    complete: bool = True
    #: why it did not
    reasons: list[str] = field(default_factory=list)
    #: the spider's ``in_crawl_scope(url)``, when it has one
    in_scope: Any = None
    #: ``scrapy process``: the pages worked on (every live stored page, or those of
    #: ``--domain``); a crawl works on the pages it recorded (``cache.run.seen``)
    selected: list[str] | None = None
    #: ``scrapy process --domain``: the domains worked on (None: all)
    domain_filter: set[str] | None = None
    interruption: Interruption | None = None

    @property
    def targets(self) -> Collection[str]:
        """url_hash of the pages this run is about, in order (the run's own, read as
        they are iterated: see :meth:`target_batches`)."""
        return self.selected if self.selected is not None else self.cache.run.seen

    def target_batches(self, size: int) -> Iterator[list[str]]:
        """:attr:`targets`, ``size`` at a time (a crawl's keys are held compactly: a
        batch of them is made into strings at a time, never all)."""
        keys = iter(self.targets)
        while batch := list(islice(keys, size)):
            yield batch

    @property
    def interrupted(self) -> bool:
        return self.cache.run.interrupted is not None


def _size(content: PageContent | dict[str, Any] | None) -> int:
    """Characters of a content record's texts (what holding it costs)."""
    if not content:
        return 0
    return len(str(content.get("text", ""))) + len(str(content.get("clean", "")))
