"""The ledger of pages: the one writer of page records, and the one place a page's
identity and status in a run are decided, so the run's counts are always those of the
statuses it holds.

Components tell it what they found: the pipeline a parsed page (:meth:`Ledger.parsed`),
the closing stages their records (:func:`write_back`), the commands invalidations.
A status is never taken back, and a ``new`` or ``changed`` recorded by a killed run stays
so until reported or extracted. See docs/architecture.md and docs/stats.md.
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, cast

from crawler.cache.records import STATUS_CHANGED, STATUS_NEW, STATUS_REMOVED, STATUS_UNCHANGED, add_history, utcnow
from crawler.incremental.converter import converter_only, holds_back, note_converter
from crawler.incremental.folding import Folded, directory_of, fold_evidence, note_folded
from crawler.lib.hashing import content_hash
from crawler.lib.tokens import estimate_tokens
from crawler.lib.urls import url_domain

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping

    from crawler.cache import Cache
    from crawler.cache.ports import LedgerStore, PageWriter
    from crawler.cache.records import ContentVersion, PageContent, PageRecord
    from crawler.identity import PageIdentity
    from crawler.incremental.revisit import RevisitPolicy

logger = logging.getLogger(__name__)

#: the history reason of a ``new`` event for a removed page seen again
RETURNED = "returned"
#: the history reason of a ``removed`` event for an index file spelling recorded as a
#: page of its own, then found to be its directory's page
FOLDED = "folded"


# -- a page's status in a run ---------------------------------------------------


def never_reported(previous: PageRecord, reported: Callable[[str], bool]) -> bool:
    """A page recorded ``new`` by a run that ended without a run report (``reported``:
    whether a run id has one) and never extracted: no report counted it.

    >>> never_reported({"status": "new", "run_id": "r1"}, lambda run_id: False)
    True
    >>> never_reported({"status": "new", "run_id": "r1", "extraction": {}}, lambda run_id: False)
    False
    """
    return (
        previous.get("status") == STATUS_NEW
        and "extraction" not in previous
        and "extraction_error" not in previous
        and not reported(str(previous.get("run_id", "")))
    )


#: the history event of an extraction written (:func:`extracted`)
EXTRACTED = "extracted"


def _last_event(previous: PageRecord) -> dict[str, object]:
    history = previous.get("history") or []
    return dict(history[-1]) if history else {}


def run_status(previous: PageRecord | None, *, same: bool, reported: Callable[[str], bool]) -> str:
    """The status of a page this run records: ``previous`` its record before the run
    (``None``: never recorded), ``same`` whether its text is the recorded one,
    ``reported`` whether a run id has a run report.

    >>> no = lambda run_id: False
    >>> run_status(None, same=False, reported=no), run_status({"status": "removed"}, same=True, reported=no)
    ('new', 'new')
    >>> run_status({"status": "unchanged", "run_id": "r"}, same=True, reported=no)
    'unchanged'
    >>> changed = {"status": "changed", "run_id": "r", "history": [{"event": "changed"}]}
    >>> run_status(changed, same=True, reported=no), run_status(changed, same=True, reported=lambda r: True)
    ('changed', 'unchanged')
    >>> paid = {"status": "new", "run_id": "r", "extraction": {}, "history": [{"event": "new"}, {"event": "extracted"}]}
    >>> run_status(paid, same=True, reported=no), run_status(paid, same=True, reported=lambda r: True)
    ('new', 'unchanged')
    """
    if previous is None or previous.get("status") == STATUS_REMOVED:
        return STATUS_NEW
    status, last = previous.get("status"), _last_event(previous)

    def unreported() -> bool:  # (asked last: reading a run's report is the one cost here)
        return not reported(str(previous.get("run_id", "")))

    # a removed page's return (its extraction kept) or a first recording, by a run
    # killed before its report: no report counted it
    came_back = last.get("event") == STATUS_NEW and last.get("reason") == RETURNED
    if status == STATUS_NEW and ((came_back and unreported()) or never_reported(previous, reported)):
        return STATUS_NEW
    if not same:
        return STATUS_CHANGED
    if status == STATUS_CHANGED and last.get("event") == STATUS_CHANGED and unreported():
        return STATUS_CHANGED  # its change recorded by a run killed before its report, not extracted since
    if status in (STATUS_NEW, STATUS_CHANGED) and last.get("event") == EXTRACTED and unreported():
        # its extraction paid (its record written as the call ended) by a run killed
        # before its report: listed by this one
        return str(status)
    return STATUS_UNCHANGED


def paid_status(record: PageRecord, *, recorded: bool, extracted_before: bool) -> str | None:
    """The status a page takes when the run writes its extraction: ``None`` when it
    keeps its own (already new or changed, or ``recorded`` False: not a page the run
    recorded, as in ``scrapy process``; a shared run's pages carry their processes' ids).

    >>> paid_status({"status": "unchanged"}, recorded=True, extracted_before=False)
    'new'
    >>> paid_status({"status": "unchanged"}, recorded=True, extracted_before=True)
    'changed'
    >>> paid_status({"status": "changed"}, recorded=True, extracted_before=True) is None
    True
    >>> paid_status({"status": "unchanged"}, recorded=False, extracted_before=True) is None
    True
    """
    if record.get("status") != STATUS_UNCHANGED or not recorded:
        return None
    return STATUS_CHANGED if extracted_before else STATUS_NEW


# -- what the closing stages and the commands tell of a page ---------------------


def removed(record: PageRecord, run_id: str, reason: str, now: str) -> None:
    """The page is gone (``reason``: ``gone``, ``not reached``, :data:`FOLDED`); a
    removal is a change (``scrapy cache ls --since`` lists it)."""
    fields: Any = record
    fields.update(status=STATUS_REMOVED, removed_at=now, last_changed=now, run_id=run_id)
    add_history(record, STATUS_REMOVED, now, reason=reason)


def extracted(
    record: PageRecord, reference: Mapping[str, Any], input_hash: str, when: str, *, recorded: bool
) -> str | None:
    """The run wrote (or adopted) the page's extraction, ``reference`` to it; returns
    the status the page took for it (:func:`paid_status`), ``None`` if it kept its own."""
    status = paid_status(record, recorded=recorded, extracted_before="extraction" in record)
    if status is not None:
        record["status"] = status
        record["last_changed"] = utcnow()  # (its extraction is what changed)
    record["extraction"] = cast("Any", dict(reference))
    record["last_extracted"] = when
    record.pop("extraction_error", None)
    record.pop("invalidated", None)
    add_history(record, EXTRACTED, when, input_hash=input_hash)
    return status


def extraction_failed(record: PageRecord, message: str, input_key: str, now: str) -> None:
    """The extractor failed on the page: the next run tries again."""
    record["extraction_error"] = {"at": now, "error": message[:2000], "input_key": input_key}
    add_history(record, "extraction_failed", now, error=message[:200])


def empty_input(record: PageRecord, *, empty: bool) -> bool:
    """Whether the page has nothing to send (since when: ``scrapy cache ls --empty``);
    whether that changed."""
    if not empty:
        return record.pop("empty_input", None) is not None
    if record.get("empty_input") is not None:
        return False
    record["empty_input"] = utcnow()
    return True


def vectors_noted(record: PageRecord, state: Mapping[str, Any] | None) -> None:
    """The page's vector sync state (``None``: none, the page is synced again)."""
    fields = cast("dict[str, Any]", record)
    if state is None:
        fields.pop("vectors", None)
    else:
        fields["vectors"] = dict(state)


def write_back(store: PageWriter, changed: Iterable[tuple[str, PageRecord]]) -> int:
    """Write each record the stages changed, once; returns how many."""
    writes = 0
    for url_hash, record in changed:
        store.put_page(url_hash, record.copy())
        writes += 1
    return writes


def put_vectors(store: PageWriter, url_hash: str, state: Mapping[str, Any] | None) -> bool:
    """The vector sync state of a page a command worked on (``scrapy vectors``),
    written at once; False when the page has no record."""
    record = store.get_page(url_hash)
    if record is None:
        return False
    vectors_noted(record, state)
    store.put_page(url_hash, record)
    return True


def invalidate(store: PageWriter, url_hashes: Iterable[str]) -> int:
    """Mark pages so the next crawl re-extracts them even when unchanged; returns how
    many had a record."""
    now, count = utcnow(), 0
    for url_hash in url_hashes:
        record = store.get_page(url_hash)
        if record is not None:
            record["invalidated"] = now
            add_history(record, "invalidated", now)
            store.put_page(url_hash, record)
            count += 1
    return count


# -- the crawl: pages parsed ------------------------------------------------------


@dataclass(slots=True)
class Parsed:
    """What the crawl found of one page, as the pipeline read its item."""

    url: str
    fields: dict[str, Any]  # the item's fields the pipeline read (title, converter...)
    hashed: list[str]  # the fields whose values make the content hash
    text: str  # what the extractor reads


class Ledger:
    """The pages a crawl records (:meth:`parsed`). ``content_field``: the item field
    holding the text; ``converter_upgrade``: ``keep`` holds back a text that differs
    only by a new converter; ``revisit``: the schedule each requested page updates."""

    def __init__(
        self,
        cache: Cache,
        identity: PageIdentity,
        stats: Any,
        *,
        content_field: str,
        converter_upgrade: str,
        revisit: RevisitPolicy | None = None,
    ) -> None:
        self.cache = cache
        self.store: LedgerStore = cache.store  # (its port: what the ledger calls)
        self.identity = identity
        self.stats = stats
        self.content_field = content_field
        self.converter_upgrade = converter_upgrade
        self.revisit = revisit
        self._new_run()

    def _new_run(self) -> None:
        """What the ledger holds of one run (a crawl is one run; a test may start others)."""
        for status in getattr(self, "counts", ()):
            self.stats.set_value(f"pages/{status}", 0)  # the counts are the run's
        if getattr(self, "folds", None):
            self.stats.set_value("pages/folded", 0)
        self.run = self.cache.run
        self.counts: Counter[str] = Counter()  # pages/<status>: the statuses of RunState.seen
        #: the index file spellings folded into their directory's page this run (``pages/folded``)
        self.folds: set[str] = set()
        #: directory url_hash -> an index file spelling folded into it for its last record
        #: alone, before the directory page itself came this run (see :meth:`_unfold`)
        self.folded: dict[str, Folded] = {}
        #: directory url_hash -> (url_hash, content hash, its record before this run) of an
        #: index file spelling recorded this run as a page of its own, before the directory
        #: page came (:meth:`_merge`)
        self.unmatched: dict[str, tuple[str, str, PageRecord | None]] = {}

    def _status(self, url_hash: str, status: str | None) -> None:
        """The page's status in this run (``None``: not a page of this run after all)."""
        before = self.run.seen.pop(url_hash, None) if status is None else self.run.seen.get(url_hash)
        if status is not None:
            self.run.seen[url_hash] = status
        if before == status:
            return
        if status is not None:
            self.counts[status] += 1
            self.stats.set_value(f"pages/{status}", self.counts[status])
        if before is not None:
            self.counts[before] -= 1
            self.stats.set_value(f"pages/{before}", self.counts[before])

    def _folded(self, spelling: str, *, folded: bool = True) -> None:
        (self.folds.add if folded else self.folds.discard)(spelling)
        self.stats.set_value("pages/folded", len(self.folds))

    def parsed(self, page: Parsed, *, fold: bool = True, chash: str | None = None) -> tuple[str, str, str]:
        """Record one parsed page; returns ``(status, url_hash, content_hash)``."""
        if self.run is not self.cache.run:
            self._new_run()
        url, fields = page.url, page.fields
        canonical, url_hash = self.identity(url)
        # the page's stored content, read once: an item saying what it says is not hashed again
        stored: PageContent | None = self.store.get_content(url_hash)
        stored_for: str | None = url_hash
        if chash is None:
            chash = self._stored_hash(stored, page) or content_hash(fields, page.hashed)
        directory = self._fold(page, chash) if fold else None
        if directory is not None:
            canonical, url_hash = directory
        run = self.cache.run
        previous = self.store.get_page(url_hash)
        merged: str | None = None
        if url_hash in run.seen and previous is not None:
            if directory is None and self._unfold(url_hash, chash):
                previous = self.store.get_page(url_hash)
                stored_for = None  # read again: the unfolding recorded another page
            else:
                # the same page twice in one run (two spellings of its URL): counted once
                self.stats.inc_value("pages/duplicates")
                if directory is not None:
                    self._note_folded(url_hash, previous, url)
                elif (
                    previous.get("url") != url
                    and "?" not in url
                    and directory_of(self.identity, str(previous.get("url")))
                ):
                    # recorded from its index file spelling (declared canonical), now come
                    # under its own URL: recorded as that, the spelling one it folded
                    self._note_folded(url_hash, previous, str(previous["url"]), url=url)
                return previous["status"], url_hash, chash
        elif directory is None:
            merged = self._merge(url_hash, chash)
        now = utcnow()
        same = previous is not None and previous.get("content_hash") == chash
        if stored_for != url_hash:
            stored = self.store.get_content(url_hash)
        pending = self._converter_pending(url_hash, previous, page, same, chash)
        new_chash = chash
        if pending and previous is not None:
            same, chash = True, previous.get("content_hash", chash)  # the stored text stays
        # a removed page seen again is new again, whatever its text: a change feed that
        # dropped it on `removed` adds it back (its extraction is reused if its text is the same)
        returned = previous is not None and previous.get("status") == STATUS_REMOVED
        if previous is None:
            status = STATUS_NEW
            record = cast("PageRecord", {"first_seen": now})  # completed below
        else:
            status = run_status(previous, same=same, reported=self.store.has_run_report)
            record = previous.copy()
            record.pop("removed_at", None)
        domain = url_domain(canonical)
        recorded_url = url
        # a spelling folded into a live page keeps the URL the page has (a removed page
        # comes back under the URL that answered)
        if directory is not None and previous is not None and previous.get("status") != STATUS_REMOVED:
            recorded_url = str(previous.get("url") or url)
        record.update(
            {
                "url": recorded_url,
                "canonical_url": canonical,
                "domain": domain,
                "status": status,
                "content_hash": chash,
                "last_seen": now,
                "run_id": run.run_id,
            }
        )
        if directory is not None:
            note_folded(cast("dict[str, Any]", record), url)
        elif merged is not None:
            note_folded(cast("dict[str, Any]", record), merged)
        if isinstance(fields.get("title"), str):
            record["title"] = fields["title"]
        if isinstance(fields.get("converter"), str):
            note_converter(record, fields["converter"], new_chash if pending else None)
        _note_selection(record, fields.get("selection_widened"), fields.get("named_out"), now)
        if self.revisit is not None:
            # (a page that reads differently only by a new converter did not change)
            self._note_revisit(
                url_hash, record, previous, changed=not same and fields.get("source_unchanged") is not True
            )
        if returned:
            self.stats.inc_value("pages/returned")
            record["last_changed"] = now
            add_history(record, status, now, content_hash=chash, reason=RETURNED)
        elif not same:
            record["last_changed"] = now
            add_history(record, status, now, content_hash=chash)
        if not same or (not pending and (stored is None or stored.get("text") != page.text)):
            # (the same hash: the content entry was lost, or the text differs in a way the
            # hash ignores, white space: the extractor must read what the page says now)
            self._store_content(url_hash, page, chash, now, stored)
        if previous is not None and _only_seen_again(previous, record):
            self.store.touch_page(url_hash, now, run.run_id)  # not the whole record written again
        else:
            self.store.put_page(url_hash, record)
        run.domains.add(domain)
        self._status(url_hash, status)
        self.cache.wrote(2)
        return status, url_hash, chash

    def not_recorded(self) -> None:
        """A page answered but could not be recorded: counted, and no page is marked
        removed this run for not being reached."""
        self.stats.inc_value("pages/errors")
        self.cache.run.mark_incomplete("a page could not be recorded")

    def _note_revisit(self, url_hash: str, record: PageRecord, previous: PageRecord | None, *, changed: bool) -> None:
        """A page this run requested: its schedule learns whether it changed, its host
        whether its lastmod and validators said so (a sampled change: one it missed)."""
        assert self.revisit is not None
        revisit = self.cache.run.revisit
        if url_hash in revisit.skipped:
            return
        before = previous.get("revisit") if previous is not None else None
        state, observation = self.revisit.checked(
            before if isinstance(before, dict) else None,
            changed=changed and previous is not None,
            lastmod=revisit.listed().get(url_hash),
            now=datetime.now(UTC),
        )
        record["revisit"] = state
        if observation is not None:
            revisit.observe(record["domain"], observation)
        revisit.observe_validators(record["domain"], url_hash, changed=changed and previous is not None)
        if url_hash in revisit.sampled and changed and previous is not None:
            revisit.sampled_changed += 1

    def _converter_pending(
        self, url_hash: str, previous: PageRecord | None, page: Parsed, same: bool, chash: str
    ) -> bool:
        """Whether this page's new text is held back (``CONVERTER_UPGRADE = "keep"``): it
        differs only by the converter (:func:`converter_only`) and a stored text is there
        to keep. Counted (pages, tokens of the text held back)."""
        converter = page.fields.get("converter")
        if not isinstance(converter, str):
            return False
        if not self.cache.run.converter:
            self.cache.run.converter = {"id": converter, "upgrade": self.converter_upgrade}
        unchanged_source = page.fields.get("source_unchanged") is True
        if not converter_only(previous, converter, same=same, source_unchanged=unchanged_source, content_hash=chash):
            return False  # no new converter, or the site changed: the page gets the new converter's text
        assert previous is not None
        if not holds_back(self.converter_upgrade) or never_reported(previous, self.store.has_run_report):
            self.stats.inc_value("converter/pages_upgraded")
            return False
        if self.store.get_content(url_hash) is None:
            return False  # nothing stored to keep
        if not self.stats.get_value("converter/pages_pending"):
            logger.info(
                "Pages read differently under the converter %(id)s although their site did not change: "
                "their stored text is kept, not extracted again (CONVERTER_UPGRADE=apply to do so)",
                {"id": converter},
            )
        self.stats.inc_value("converter/pages_pending")
        self.stats.inc_value("converter/tokens_pending", estimate_tokens(page.text))
        return True

    def _fold(self, page: Parsed, chash: str) -> tuple[str, str] | None:
        """``(canonical_url, url_hash)`` of the directory page the page, an index file
        spelling, is on evidence (:func:`fold_evidence`), else ``None``: a page of its
        own, until the directory comes with its content (:meth:`_merge`). A fold on the
        directory's last record alone is undone if it comes otherwise (:meth:`_unfold`)."""
        url = page.url
        directory = directory_of(self.identity, url)
        if directory is None:
            return None
        record = self.store.get_page(directory[1])
        evidence = fold_evidence(self.identity, url, directory, page.fields.get("canonical_url"), record, chash)
        if evidence is None:
            own = self.identity.url_hash(url)
            if directory[1] not in self.cache.run.seen:
                self.unmatched.setdefault(directory[1], (own, chash, self.store.get_page(own)))
            return None
        self._folded(url)
        if evidence != "canonical" and record is not None and directory[1] not in self.cache.run.seen:
            self.folded.setdefault(
                directory[1],
                Folded(url, chash, record, page.fields.get("selection_widened"), page.fields.get("named_out")),
            )
        return directory

    def _note_folded(self, url_hash: str, record: PageRecord, spelling: str, *, url: str | None = None) -> None:
        """Remember that the index file spelling ``spelling`` was fetched and folded into
        the page ``url_hash`` recorded this run (``url``: under this URL from now on): the
        next runs request it as that page (:func:`crawler.incremental.folding.folded_into`)."""
        updated = cast("dict[str, Any]", record.copy())
        moved = url is not None and updated.get("url") != url
        if moved:
            updated["url"] = url
        if note_folded(updated, spelling) or moved:
            self.store.put_page(url_hash, cast("PageRecord", updated))
            self.cache.wrote()

    def _unfold(self, url_hash: str, chash: str) -> bool:
        """The directory page ``url_hash`` came with content ``chash`` after an index file
        spelling was folded into it for its (last run's) record: if this content differs,
        they are two pages. The directory's record goes back to what the run found,
        the index file spelling is recorded as a page of its own, and the directory
        page is then recorded as usual (True)."""
        folded = self.folded.pop(url_hash, None)
        if folded is None or folded.content_hash == chash:
            return False
        current: dict[str, Any] = dict(self.store.get_page(url_hash) or {})
        # what the folded page said, from what its recording stored (not kept in memory:
        # a site linking every section as …/index.html folds thousands)
        content: Mapping[str, Any] = self.store.get_content(url_hash) or {}
        stored = dict(content.get("fields") or {})
        fields = {"title": current.get("title"), **stored}
        fields["selection_widened"] = folded.selection_widened
        fields["named_out"] = folded.named_out
        self._status(url_hash, None)
        self._folded(folded.url, folded=False)
        self.stats.inc_value("pages/unfolded")
        self.store.put_page(url_hash, folded.before)
        logger.info(
            "%(url)s is not its directory's page (their texts differ): recorded as a page of its own",
            {"url": folded.url},
        )
        spelling = Parsed(folded.url, fields, list(stored), content.get("text", ""))
        # (the hash of that text: a fold on a held-back text's hash stored the older text)
        self.parsed(spelling, fold=False, chash=content.get("content_hash") or folded.content_hash)
        return True

    def _merge(self, url_hash: str, chash: str) -> str | None:
        """The directory page ``url_hash`` comes after one of its index file spellings was
        recorded this run as a page of its own, with the same content: that spelling was
        this page. A record this run made goes; one an earlier run made is removed by the
        removal stage (``RunState.folded_away``: evidence, in a partial run too). The
        spelling's URL when merged, else ``None``."""
        unmatched = self.unmatched.pop(url_hash, None)
        if unmatched is None or unmatched[1] != chash:
            return None
        own, run, before = unmatched[0], self.cache.run, unmatched[2]
        record = self.store.get_page(own)
        if own not in run.seen or record is None or record.get("run_id") != run.run_id:
            return None
        if before is None:
            self.store.delete_page(own, keep_fetched=True)
        else:
            # recorded by an earlier run: as that run left it, for the removal stage to
            # end (reason folded), in this run's change list under its own URL
            self.store.put_page(own, before)
            if before.get("status") != STATUS_REMOVED:
                run.folded_away.add(own)
        self._status(own, None)
        self._folded(str(record.get("url")))
        self.stats.inc_value("pages/duplicates")
        return record.get("url")

    def _stored_hash(self, stored: PageContent | None, page: Parsed) -> str | None:
        """The content hash of ``stored`` when the page says exactly what it says (the
        same text and hashed fields), so that a reused page's text is not hashed again;
        else ``None`` (also for a hash made without the text: of the other fields alone)."""
        if stored is None or self.content_field not in page.hashed or stored.get("text") != page.text:
            return None
        value = page.fields.get(self.content_field)
        chash = stored.get("content_hash")
        others = {name: page.fields.get(name) for name in page.hashed if name != self.content_field}
        if not isinstance(value, str) or not isinstance(chash, str) or stored.get("fields") != others:
            return None
        if chash == content_hash(others, list(others)):
            return None  # hashed without the text
        return chash

    def _store_content(self, url_hash: str, page: Parsed, chash: str, now: str, old: PageContent | None) -> None:
        content: PageContent = {
            "url": page.url,
            "text": page.text,
            "fields": {name: page.fields.get(name) for name in page.hashed if name != self.content_field},
            "content_hash": chash,
            "stored_at": now,
        }
        if old is not None and (old.get("text") != page.text or old.get("fields") != content["fields"]):
            # the version before, for diffs (`scrapy cache diff`): its title (the other
            # hashed fields) too, so a page whose title alone changed has a diff to show
            keys = ("text", "fields", "content_hash", "stored_at")
            content["previous"] = cast("ContentVersion", {k: old.get(k) for k in keys})
        self.store.put_content(url_hash, content)


def _note_selection(record: PageRecord, widened: Any, named_out: Any, now: str) -> None:
    """What the parse said of the page's main content: widened by the selection's
    audit (``selection_widened``: since when), or not (the flag goes); the words it
    left out for a name (``named_out``); an item that does not say (a parse reused,
    another spider's item) leaves the record as it was."""
    if widened is True:
        record.setdefault("selection_widened", now)
    elif widened is False:
        record.pop("selection_widened", None)
    if isinstance(named_out, int) and named_out > 0:
        record["named_out"] = named_out
    elif named_out == 0:
        record.pop("named_out", None)


def _only_seen_again(previous: PageRecord, record: PageRecord) -> bool:
    """Whether ``record`` is ``previous`` with only ``last_seen`` and ``run_id`` moved (a
    page seen again, nothing else of it changed)."""
    before, after = cast("dict[str, Any]", previous), cast("dict[str, Any]", record)
    if before.keys() != after.keys():
        return False
    return all(after[key] == value for key, value in before.items() if key not in ("last_seen", "run_id"))
