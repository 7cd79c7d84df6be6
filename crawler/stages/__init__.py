"""The processing that follows a crawl, as explicit stages.

The stages are named, in order, in ``PROCESSING_STAGES`` and built with
``build_from_crawler`` (``NotConfigured``: off for the run). Each has ``plan(run)``
(cheap, no extractor or embedder call), ``await run(plan)`` and ``report(report)``, run
by :class:`crawler.extensions.closing.ClosingStages` at a crawl's close or by ``scrapy
process``; see docs/architecture.md. All stages share one :class:`PageViews`, so each
page is read once and a record changed by several stages is written once
(:meth:`PageViews.flush`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from crawler.cache.records import STATUS_REMOVED, page_text
from crawler.incremental import ledger
from crawler.lib.hashing import sha256_hex

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    from crawler.cache import Cache
    from crawler.cache.ports import PageViewStore
    from crawler.cache.records import PageContent, PageRecord
    from crawler.support.interrupt import Interruption

#: characters of page content the views keep in memory; past it, content not changed
#: by a stage is read again when asked for (counted: ``stages/content_reread``)
CONTENT_BUDGET = 256 * 1024 * 1024
#: pages whose content :meth:`PageViews.load_contents` reads at a time
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
        #: written by :meth:`PageViews.flush`
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

    def changed(self) -> None:
        """A stage changed the record: written once, when the stages end."""
        self.record_changed = True


@dataclass
class PageViews:
    """The pages of one run of the stages, each read from the store once."""

    store: PageViewStore
    use_clean: bool = True
    budget: int = CONTENT_BUDGET
    views: dict[str, PageView] = field(default_factory=dict)
    #: characters of content held
    held: int = 0
    #: content read again after the budget ran out
    rereads: int = 0
    _all_loaded: bool = False

    def load_all(self) -> None:
        """Every page record, in one pass over the store (removal and the boilerplate
        analysis look at all pages)."""
        if self._all_loaded:
            return
        views: dict[str, PageView] = {}
        for url_hash, record in self.store.iter_pages():  # the store's order; views already made kept
            views[url_hash] = self.views.get(url_hash) or PageView(self, url_hash, record)
        self.views = views
        self._all_loaded = True

    def get(self, url_hash: str) -> PageView | None:
        view = self.views.get(url_hash)
        if view is None and not self._all_loaded:
            record = self.store.get_page(url_hash)
            if record is None:
                return None
            view = self.views[url_hash] = PageView(self, url_hash, record)
        return view

    def __iter__(self) -> Iterator[PageView]:
        self.load_all()
        return iter(list(self.views.values()))

    def live(self, domains: set[str] | None = None) -> list[PageView]:
        """The pages not removed (of ``domains`` when given), in the store's order."""
        return [
            view
            for view in self
            if view.record.get("status") != STATUS_REMOVED and (domains is None or view.record.get("domain") in domains)
        ]

    def load_contents(self, url_hashes: Iterable[str]) -> None:
        """The content of each page of ``url_hashes`` not read yet, read now, a batch of
        :data:`CONTENTS_PER_READ` pages at a time (``get_contents``: a few queries, not
        one per page), each kept as :meth:`load_content` keeps it (while the budget
        lasts): for a stage that is about to read all of them (the boilerplate
        analysis, the extraction's plan). Past the budget, nothing more is read ahead."""
        wanted: list[PageView] = []
        for url_hash in url_hashes:
            view = self.get(url_hash)
            if view is not None and not view._loaded:
                wanted.append(view)
        for start in range(0, len(wanted), CONTENTS_PER_READ):
            if self.held >= self.budget:
                return  # (the rest are read when asked for, as before)
            batch = [view for view in wanted[start : start + CONTENTS_PER_READ] if not view._loaded]
            contents = self.store.get_contents([view.url_hash for view in batch])
            for view in batch:
                content = contents.get(view.url_hash)
                if self.held + _size(content) <= self.budget:
                    view.keep_content(content)

    def load_content(self, view: PageView) -> PageContent | None:
        content = self.store.get_content(view.url_hash)
        if self.held + _size(content) <= self.budget:
            view.keep_content(content)
        else:
            self.rereads += 1
        return content

    def hold(self, view: PageView, content: PageContent | dict[str, Any] | None) -> None:
        """Count ``content`` as what ``view`` holds (instead of what it held)."""
        size = _size(content)
        self.held += size - view._held
        view._held = size

    def flush(self, *, records: bool = True) -> int:
        """Write what the stages changed: each changed content, and (``records``)
        each changed record, once. Returns the number of writes."""
        writes = 0
        for view in self.views.values():
            if view.content_changed and view._content is not None:
                self.store.put_content(view.url_hash, view._content.copy())
                view.content_changed = False
                writes += 1
                if self.held > self.budget:
                    view.drop_content()  # written: read again if a later stage asks
        if records:
            changed = [view for view in self.views.values() if view.record_changed]
            writes += ledger.write_back(self.store, ((view.url_hash, view.record) for view in changed))
            for view in changed:
                view.record_changed = False
        return writes


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
    def targets(self) -> list[str]:
        """url_hash of the pages this run is about, in order."""
        return list(self.selected) if self.selected is not None else list(self.cache.run.seen)

    @property
    def interrupted(self) -> bool:
        return self.cache.run.interrupted is not None


def _size(content: PageContent | dict[str, Any] | None) -> int:
    """Characters of a content record's texts (what holding it costs)."""
    if not content:
        return 0
    return len(str(content.get("text", ""))) + len(str(content.get("clean", "")))
