"""Item pipeline: two hashes per item (which page, what it says) and its status."""

from __future__ import annotations

import contextlib
import logging
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, cast

from itemadapter import ItemAdapter
from scrapy import signals

from crawler.cache import CacheStorageError, cache_for
from crawler.cache.records import (
    STATUS_NEW,
    STATUS_REMOVED,
    add_history,
    utcnow,
)
from crawler.config import ADDON_PRIORITY, typed
from crawler.identity import PageIdentity
from crawler.incremental.converter import check_upgrade, converter_only, effective_upgrade, holds_back, note_converter
from crawler.incremental.folding import Folded, directory_of, fold_evidence, note_folded
from crawler.incremental.ledger import RETURNED, never_reported, run_status
from crawler.incremental.schedule import revisit_policy
from crawler.lib.hashing import content_hash, normalize_value
from crawler.lib.tokens import estimate_tokens
from crawler.lib.urls import url_domain
from crawler.meta import META_FORCE_EXTRACTION, wants

if TYPE_CHECKING:
    from collections.abc import Mapping

    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector

    from crawler.cache import Cache
    from crawler.cache.ports import RecordStore
    from crawler.cache.records import ContentVersion, PageContent, PageRecord
    from crawler.incremental.revisit import RevisitPolicy

logger = logging.getLogger(__name__)


def extractor_input(fields: dict[str, Any], content_field: str, hash_fields: list[str]) -> str:
    """The text an extractor reads for an item: its ``content_field`` when that is a
    string (the docs spider's markdown), else its content-defining fields as lines.

    >>> extractor_input({"title": "A", "tags": ["x", "y"]}, "content", ["title", "tags"])
    'tags: x, y\\ntitle: A'
    """
    value = fields.get(content_field)
    if isinstance(value, str):
        return value
    lines = []
    for name in sorted(hash_fields):
        normalized = normalize_value(fields.get(name))
        if isinstance(normalized, list):
            normalized = ", ".join(str(v) for v in normalized)
        if normalized not in (None, ""):
            lines.append(f"{name}: {normalized}")
    return "\n".join(lines)


#: fields an item carries that are never its content: what the pipeline adds, and what
#: names the page or how it was read
NOT_CONTENT = frozenset(("canonical_url", "url_hash", "content_hash", "status", "converter"))


def text_fields(fields: Mapping[str, Any], url_field: str) -> list[str]:
    """The names of the text fields of an item that are not URLs: the fields hashed and
    sent to the extractor when the item lacks the default content field.

    >>> text_fields({"url": "https://a/x", "title": "A", "text": "B", "n": 3, "link": "https://a/y"}, "url")
    ['text', 'title']
    """
    return sorted(
        name
        for name, value in fields.items()
        if name != url_field and name not in NOT_CONTENT and isinstance(value, str) and not _is_url(value)
    )


def text_fields_input(fields: Mapping[str, Any], names: list[str]) -> str:
    r"""The text an extractor reads for an item hashed by its :func:`text_fields`: the
    title as a level-1 heading, then the other field's value (several: ``name: value``
    paragraphs). Empty when the fields beside the title are: a page with no text to
    extract, as a page with no main content.

    >>> text_fields_input({"title": " A  guide ", "text": "Install it."}, ["text", "title"])
    '# A guide\n\nInstall it.'
    >>> text_fields_input({"title": "A", "text": "B", "author": "C"}, ["author", "text", "title"])
    '# A\n\nauthor: C\n\ntext: B'
    >>> text_fields_input({"title": "A", "text": " "}, ["text", "title"])
    ''
    """
    parts = []
    title = fields.get("title")
    if "title" in names and isinstance(title, str) and title.strip():
        parts.append("# " + " ".join(title.split()))
    others = [name for name in names if name != "title" and str(fields.get(name, "")).strip()]
    if not others and any(name != "title" for name in names):
        return ""
    if len(others) == 1:
        parts.append(str(fields[others[0]]).strip())
    else:
        parts.extend(f"{name}: {str(fields[name]).strip()}" for name in others)
    return "\n\n".join(parts)


def _is_url(value: str) -> bool:
    return value.startswith(("http://", "https://")) and len(value.split()) == 1


class ContentHashPipeline:
    """Records every item in the cache with two hashes: which page, and what it says.

    * ``url_hash``: identity, :func:`crawler.identity.page_key` of the item's canonical URL;
    * ``content_hash``: SHA-256 of the normalized ``CONTENT_HASH_FIELDS`` (lists
      order-insensitive, white space and Unicode normalized), never the raw HTML.

    An index file spelling (``/docs/index.html``, ``/docs/default.aspx``) is the page of
    its directory (``/docs``) only on evidence (:meth:`fold`): the page declares that
    URL canonical, or the directory's record has the same content; else it is a page of
    its own. Status per page: ``new``, ``changed`` or ``unchanged`` (``removed`` is decided at
    the closing stage). Works for items of any spider whose items carry a URL in
    ``CONTENT_HASH_URL_FIELD``. The item gets ``url_hash``, ``content_hash`` and
    ``status`` where it has room for them.

    An item that lacks ``CONTENT_HASH_CONTENT_FIELD`` or one of ``CONTENT_HASH_FIELDS``
    gets a warning (the first such item of a crawl). Under the defaults (neither
    setting set: ``infer_fields``), an item without the content field is hashed by its
    other text fields that are not URLs (:func:`text_fields`), and the extractor reads
    them (:func:`text_fields_input`): ``{url, title, text}`` needs no setting. An item
    that carries the content field is hashed as the settings say.

    Items that name their ``converter`` (the docs spider's) keep it in the page
    record. When a page reads differently only because the converter did (its item
    says ``source_unchanged``), ``CONVERTER_UPGRADE = "keep"`` keeps the stored text:
    the page stays unchanged, its record notes ``converter_pending``, and the run
    counts it (``converter/pages_pending``, ``converter/tokens_pending``); ``"apply"``
    stores the new text, a change like any other. Items that say
    ``selection_widened`` (the docs spider's, when it parsed the page) mark the
    record while the page's main content is widened by the selection's audit.

    A request with ``meta["force_extraction"] = True`` has its page extracted again
    by the extraction stage. Installed by :class:`crawler.addons.IncrementalAddon` (300).
    """

    def __init__(
        self,
        cache: Cache,
        identity: PageIdentity,
        stats: StatsCollector,
        *,
        fields: list[str],
        url_field: str,
        content_field: str,
        converter_upgrade: str,
        infer_fields: bool = False,
        content_field_set: bool = False,
        revisit: RevisitPolicy | None = None,
    ) -> None:
        self.check(fields, converter_upgrade)
        self.cache = cache
        #: the store's methods this component calls (:mod:`crawler.cache.ports`)
        self.store: RecordStore = cache.store
        self.identity = identity
        self.stats = stats
        self.fields = fields
        self.url_field = url_field
        self.content_field = content_field
        self.converter_upgrade = converter_upgrade
        #: the settings are the defaults: an item without the content field is hashed
        #: by its text fields (:func:`text_fields`)
        self.infer_fields = infer_fields
        #: CONTENT_HASH_CONTENT_FIELD was set: an item without it is warned about even
        #: when it is not one of the hashed fields (by default such an item's extractor
        #: reads its hashed fields, as the catalog spider's)
        self.content_field_set = content_field_set
        #: an item lacking a configured field was warned about (once a crawl)
        self.warned = False
        #: the revisit schedule, whose page state each checked page updates (None: off)
        self.revisit = revisit
        #: the fields the pipeline reads: copying only these is 10 times cheaper than
        #: ItemAdapter.asdict() of a page item
        self.read_fields = list(
            dict.fromkeys(
                [
                    url_field,
                    content_field,
                    "title",
                    "canonical_url",
                    *fields,
                    "converter",
                    "source_unchanged",
                    "selection_widened",
                    "named_out",
                ]
            )
        )
        #: directory url_hash -> an index file spelling folded into it for its last record
        #: alone, before the directory page itself came this run (see :meth:`unfold`)
        self.folded: dict[str, Folded] = {}
        #: directory url_hash -> (url_hash, content hash, its record before this run) of an
        #: index file spelling recorded this run as a page of its own, before the directory
        #: page came (:meth:`merge`)
        self.unmatched: dict[str, tuple[str, str, PageRecord | None]] = {}

    @staticmethod
    def check(fields: list[str], converter_upgrade: str) -> None:
        if not fields:
            raise ValueError("CONTENT_HASH_FIELDS must name at least one item field")
        check_upgrade(converter_upgrade)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> ContentHashPipeline:
        settings = typed(crawler.settings)
        fields = settings.getlist("CONTENT_HASH_FIELDS")
        upgrade = settings.get("CONVERTER_UPGRADE")
        cls.check(fields, upgrade)  # before the cache is opened and locked
        upgrade = effective_upgrade(upgrade, extractor_force=settings.getbool("EXTRACTOR_FORCE"))
        assert crawler.stats is not None
        user_set = {
            name: (crawler.settings.getpriority(name) or 0) > ADDON_PRIORITY
            for name in ("CONTENT_HASH_FIELDS", "CONTENT_HASH_CONTENT_FIELD")
        }
        pipeline = cls(
            cache_for(crawler),
            PageIdentity.from_crawler(crawler),
            crawler.stats,
            fields=fields,
            url_field=settings.get("CONTENT_HASH_URL_FIELD"),
            content_field=settings.get("CONTENT_HASH_CONTENT_FIELD"),
            converter_upgrade=upgrade,
            infer_fields=not any(user_set.values()),
            content_field_set=user_set["CONTENT_HASH_CONTENT_FIELD"],
            revisit=revisit_policy(crawler.settings, skipping=False)
            if settings.getbool("REVALIDATION_ENABLED")
            else None,
        )
        crawler.signals.connect(pipeline.response_received, signal=signals.response_received)
        return pipeline

    def response_received(self, request: Request) -> None:
        """A request with ``meta["force_extraction"]``: its page is extracted again."""
        if wants(request.meta, META_FORCE_EXTRACTION):
            self.cache.run.forced.add(self.identity.url_hash(request.url))

    async def process_item(self, item: Any) -> Any:
        adapter = ItemAdapter(item)
        url = adapter.get(self.url_field)
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            self.not_recorded()
            logger.error(
                "Item without a usable %(field)s field (an absolute http(s) URL; CONTENT_HASH_URL_FIELD names "
                "the field), not recorded: %(item)r",
                {"field": self.url_field, "item": _shorten(item)},
            )
            return item
        try:
            status, url_hash, chash = self.record(url, self.read(adapter, check=True))
        except Exception as exc:
            self.not_recorded()
            logger.error(
                "Recording %(url)s in the cache failed: %(exc)s",
                {"url": url, "exc": exc},
                exc_info=not isinstance(exc, CacheStorageError),  # a traceback for the unforeseen only
            )
            return item
        for name, value in (("url_hash", url_hash), ("content_hash", chash), ("status", status)):
            with contextlib.suppress(KeyError):  # an Item class without that field
                adapter[name] = value
        return item

    def not_recorded(self) -> None:
        """A page answered but is not recorded: counted, and this run must not mark it
        removed for not being reached."""
        self.stats.inc_value("pages/errors")
        self.cache.run.mark_incomplete("a page could not be recorded")

    def read(self, adapter: ItemAdapter, *, check: bool = False) -> dict[str, Any]:
        """The fields the pipeline reads, as ``adapter.asdict()`` gives them (nested
        items as dicts); a missing field is ``None``. With ``check``, an item lacking a
        configured field is warned about, and its text fields are read when they are
        hashed instead (:attr:`infer_fields`)."""
        fields = {name: _read_field(adapter, name) for name in self.read_fields}
        if not check:
            return fields
        if self.infer_fields and fields[self.content_field] is None:
            for name in adapter:
                if name not in fields:
                    fields[name] = _read_field(adapter, name)
        if not self.warned:
            missing = [name for name in self.fields if fields[name] is None]
            if fields[self.content_field] is None and self.content_field not in self.fields and self.content_field_set:
                missing.append(self.content_field)
            if missing:
                self.warned = True
                self._warn_missing(adapter, fields, missing)
        return fields

    def _warn_missing(self, adapter: ItemAdapter, fields: dict[str, Any], missing: list[str]) -> None:
        """Says once a crawl what an item lacking the configured fields is hashed by: a
        warning when something of it goes unnoticed, else (an item of text fields, the
        defaults' ``{url, title, text}``) a line of information."""
        carried = sorted(name for name in adapter if _read_field(adapter, name) is not None)
        level = logging.WARNING
        if self.infer_fields and fields[self.content_field] is None:
            hashed = text_fields(fields, self.url_field)
            consequence = (
                f"their text fields that are not URLs ({', '.join(hashed) or 'none'}) are hashed "
                "and sent to the extractor instead"
            )
            left_out = [
                name
                for name in carried
                if name not in (self.url_field, *NOT_CONTENT, *hashed)
                and not (isinstance(fields.get(name), str) and _is_url(fields[name]))
            ]
            if left_out:
                consequence += (
                    f"; {', '.join(left_out)} {'is' if len(left_out) == 1 else 'are'} not text and left out: "
                    "an edit there goes unnoticed unless CONTENT_HASH_FIELDS names it"
                )
            elif hashed:
                level = logging.INFO  # every field of it read: nothing goes unnoticed
        else:
            consequence = "an edit of a field not in CONTENT_HASH_FIELDS goes unnoticed"
        logger.log(
            level,
            "Items lack the field(s) %(missing)s that CONTENT_HASH_FIELDS=%(fields)r and "
            "CONTENT_HASH_CONTENT_FIELD=%(content)r name (%(url)s carries %(carried)s): %(consequence)s. "
            "Set CONTENT_HASH_FIELDS to the fields that define an item's content and "
            "CONTENT_HASH_CONTENT_FIELD to the text the extractor reads",
            {
                "missing": ", ".join(missing),
                "fields": self.fields,
                "content": self.content_field,
                "url": fields.get(self.url_field),
                "carried": ", ".join(carried),
                "consequence": consequence,
            },
        )

    def _hashed(self, fields: dict[str, Any]) -> list[str]:
        """The fields that make an item's content hash: ``CONTENT_HASH_FIELDS``, or,
        under the defaults, the text fields of an item without the content field."""
        if self.infer_fields and fields.get(self.content_field) is None:
            return text_fields(fields, self.url_field) or self.fields
        return self.fields

    def record(self, url: str, fields: dict[str, Any], *, fold: bool = True) -> tuple[str, str, str]:
        """Record one item; returns ``(status, url_hash, content_hash)``."""
        canonical, url_hash = self.identity(url)
        hashed = self._hashed(fields)
        if hashed is self.fields:
            text = extractor_input(fields, self.content_field, self.fields)
        else:
            text = text_fields_input(fields, hashed)
        # the page's stored content, read once: an item saying what it says is not hashed again
        stored: PageContent | None = self.store.get_content(url_hash)
        stored_for: str | None = url_hash
        chash = self._stored_hash(stored, fields, hashed, text) or content_hash(fields, hashed)
        directory = self.fold(url, fields, chash) if fold else None
        if directory is not None:
            canonical, url_hash = directory
        run = self.cache.run
        previous = self.store.get_page(url_hash)
        merged: str | None = None
        if url_hash in run.seen and previous is not None:
            if directory is None and self.unfold(url_hash, chash):
                previous = self.store.get_page(url_hash)
                stored_for = None  # read again: the unfolding recorded another page
            else:
                # the same page twice in one run (two spellings of its URL): count it once
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
            merged = self.merge(url_hash, chash)
        now = utcnow()
        same = previous is not None and previous.get("content_hash") == chash
        if stored_for != url_hash:
            stored = self.store.get_content(url_hash)
        pending = self._converter_pending(url_hash, previous, fields, same, text, chash)
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
        self._note_selection(record, fields.get("selection_widened"), fields.get("named_out"), now)
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
        if not same:
            self._store_content(url_hash, fields, hashed, text, chash, now, stored)
        elif not pending and (stored is None or stored.get("text") != text):
            # the content entry was lost, or the text differs in a way the hash
            # ignores (white space): the extractor must read what the page says now
            self._store_content(url_hash, fields, hashed, text, chash, now, stored)
        if previous is not None and _only_seen_again(previous, record):
            self.store.touch_page(url_hash, now, run.run_id)  # not the whole record written again
        else:
            self.store.put_page(url_hash, record)
        run.seen[url_hash] = None
        run.domains.add(domain)
        self.stats.inc_value(f"pages/{status}")
        self.cache.wrote(2)
        return status, url_hash, chash

    def _note_revisit(self, url_hash: str, record: PageRecord, previous: PageRecord | None, *, changed: bool) -> None:
        """A page this run requested (not one the revisit schedule skipped): its
        schedule learns whether it changed since its last check, its host whether its
        lastmod and its validators said so; a sampled page that changed is a change the
        schedule would have missed."""
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
        self,
        url_hash: str,
        previous: PageRecord | None,
        fields: dict[str, Any],
        same: bool,
        text: str,
        chash: str,
    ) -> bool:
        """Whether this page's new text is held back (``CONVERTER_UPGRADE = "keep"``):
        it differs from the stored text only because the converter changed (the page's
        source is the one stored, or the text is the one held back before: the page
        fetched under another spelling), the page was extracted before, and its stored
        text is there to keep. Counted (pages, tokens of the text held back)."""
        converter = fields.get("converter")
        if not isinstance(converter, str):
            return False
        if not self.cache.run.converter:
            self.cache.run.converter = {"id": converter, "upgrade": self.converter_upgrade}
        unchanged_source = fields.get("source_unchanged") is True
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
        self.stats.inc_value("converter/tokens_pending", estimate_tokens(text))
        return True

    @staticmethod
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

    def fold(self, url: str, fields: dict[str, Any], chash: str) -> tuple[str, str] | None:
        """``(canonical_url, url_hash)`` of the directory page that ``url``, an index file
        spelling, is on evidence (:func:`crawler.incremental.folding.fold_evidence`),
        else ``None`` (a page of its own). A fold for the record alone, made before the
        directory page came this run, is undone if that page comes with other content
        (:meth:`unfold`); a spelling recorded as a page of its own first is merged into
        the directory page that comes later with its content (:meth:`merge`)."""
        directory = directory_of(self.identity, url)
        if directory is None:
            return None
        record = self.store.get_page(directory[1])
        evidence = fold_evidence(self.identity, url, directory, fields.get("canonical_url"), record, chash)
        if evidence is None:
            own = self.identity.url_hash(url)
            if directory[1] not in self.cache.run.seen:
                self.unmatched.setdefault(directory[1], (own, chash, self.store.get_page(own)))
            return None
        self.stats.inc_value("pages/folded")
        if evidence != "canonical" and record is not None and directory[1] not in self.cache.run.seen:
            self.folded.setdefault(
                directory[1],
                Folded(url, chash, record, fields.get("selection_widened"), fields.get("named_out")),
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

    def unfold(self, url_hash: str, chash: str) -> bool:
        """The directory page ``url_hash`` came with content ``chash`` after an index file
        spelling was folded into it for its (last run's) record: if this content differs,
        they are two pages. The directory's record goes back to what the run
        found, the index file spelling is recorded as a page of its own, and the
        directory page is then recorded as usual (True)."""
        folded = self.folded.pop(url_hash, None)
        if folded is None or folded.content_hash == chash:
            return False
        current: dict[str, Any] = dict(self.store.get_page(url_hash) or {})
        # what the folded item said, from what its recording stored (not kept in memory:
        # a site linking every section as …/index.html folds thousands)
        content: Mapping[str, Any] = self.store.get_content(url_hash) or {}
        stored = content.get("fields") or {}
        text = content.get("text", "")
        fields = {"title": current.get("title"), **stored, self.url_field: folded.url}
        if not (self.infer_fields and text == text_fields_input(stored, sorted(stored))):
            fields[self.content_field] = text  # (else the item had no content field: hashed by its text fields)
        fields["selection_widened"] = folded.selection_widened
        fields["named_out"] = folded.named_out
        self.stats.inc_value(f"pages/{current.get('status')}", -1)
        self.stats.inc_value("pages/folded", -1)
        self.stats.inc_value("pages/unfolded")
        self.store.put_page(url_hash, folded.before)
        del self.cache.run.seen[url_hash]
        logger.info(
            "%(url)s is not its directory's page (their texts differ): recorded as a page of its own",
            {"url": folded.url},
        )
        self.record(folded.url, fields, fold=False)
        return True

    def merge(self, url_hash: str, chash: str) -> str | None:
        """The directory page ``url_hash`` comes after one of its index file spellings was
        recorded this run as a page of its own: with the same content, that spelling
        was this page (the evidence came second). A record this run made goes (nothing
        was extracted from it yet); one an earlier run made is removed by the removal
        stage (``RunState.folded_away``), in a partial run too: it is evidence, not absence.
        Its stored response stays, as a spelling folded into its directory page keeps
        one. The spelling's URL when merged, else ``None``."""
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
        del run.seen[own]
        self.stats.inc_value(f"pages/{record.get('status')}", -1)
        self.stats.inc_value("pages/folded")
        self.stats.inc_value("pages/duplicates")
        return record.get("url")

    def _stored_hash(
        self, stored: PageContent | None, fields: dict[str, Any], hashed: list[str], text: str
    ) -> str | None:
        """The content hash of ``stored`` when the item says exactly what it says (the
        same text and hashed fields, the text one of the hashed fields), so that a reused
        page's text is not normalized and hashed again; else ``None``. A stored hash made
        without the text (``CONTENT_HASH_FIELDS`` lacked the content field then) is no
        answer: it is the hash of the other fields alone."""
        if stored is None or self.content_field not in hashed or stored.get("text") != text:
            return None
        value = fields.get(self.content_field)
        chash = stored.get("content_hash")
        others = {name: fields.get(name) for name in hashed if name != self.content_field}
        if not isinstance(value, str) or not isinstance(chash, str) or stored.get("fields") != others:
            return None
        if chash == content_hash(others, list(others)):
            return None  # hashed without the text
        return chash

    def _store_content(
        self,
        url_hash: str,
        fields: dict[str, Any],
        hashed: list[str],
        text: str,
        chash: str,
        now: str,
        old: PageContent | None,
    ) -> None:
        content: PageContent = {
            "url": fields[self.url_field],
            "text": text,
            "fields": {name: fields.get(name) for name in hashed if name != self.content_field},
            "content_hash": chash,
            "stored_at": now,
        }
        if old is not None and (old.get("text") != text or old.get("fields") != content["fields"]):
            # the version before, for diffs (`scrapy cache diff`): its title (the other
            # hashed fields) too, so a page whose title alone changed has a diff to show
            keys = ("text", "fields", "content_hash", "stored_at")
            content["previous"] = cast("ContentVersion", {k: old.get(k) for k in keys})
        self.store.put_content(url_hash, content)


def _read_field(adapter: ItemAdapter, name: str) -> Any:
    """The value of field ``name`` as ``adapter.asdict()`` gives it (nested items as
    dicts); ``None`` when missing."""
    try:
        value = adapter[name]
    except (KeyError, AttributeError):  # AttributeError: an unset dataclass or attrs field
        return None
    if not (value is None or isinstance(value, (str, int, float))):
        value = ItemAdapter({name: value}).asdict()[name]
    return value


def _shorten(item: Any, limit: int = 200) -> str:
    text = repr(item)
    return text if len(text) <= limit else text[:limit] + "..."


def _only_seen_again(previous: PageRecord, record: PageRecord) -> bool:
    """Whether ``record`` is ``previous`` with only ``last_seen`` and ``run_id`` moved (a
    page seen again, nothing else of it changed)."""
    before, after = cast("dict[str, Any]", previous), cast("dict[str, Any]", record)
    if before.keys() != after.keys():
        return False
    return all(after[key] == value for key, value in before.items() if key not in ("last_seen", "run_id"))
