"""Item pipeline: two hashes per item (which page, what it says) and its status."""

from __future__ import annotations

import contextlib
import logging
from typing import TYPE_CHECKING, Any

from itemadapter import ItemAdapter
from scrapy import signals

from crawler.cache import CacheStorageError, cache_for
from crawler.choices import run_choices
from crawler.config import ADDON_PRIORITY, typed
from crawler.identity import PageIdentity
from crawler.incremental.converter import check_upgrade, effective_upgrade
from crawler.incremental.ledger import Ledger, Parsed
from crawler.incremental.schedule import revisit_policy
from crawler.lib.hashing import normalize_value
from crawler.meta import META_FORCE_EXTRACTION, wants

if TYPE_CHECKING:
    from collections.abc import Mapping

    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector

    from crawler.cache import Cache
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


#: the field holding an item's URL (an absolute http(s) URL)
URL_FIELD = "url"
#: fields an item carries that are never its content: what the pipeline adds, and what
#: names the page or how it was read
NOT_CONTENT = frozenset(("canonical_url", "url_hash", "content_hash", "status", "converter"))


def text_fields(fields: Mapping[str, Any]) -> list[str]:
    """The names of the text fields of an item that are not URLs: the fields hashed and
    sent to the extractor when the item lacks the default content field.

    >>> text_fields({"url": "https://a/x", "title": "A", "text": "B", "n": 3, "link": "https://a/y"})
    ['text', 'title']
    """
    return sorted(
        name
        for name, value in fields.items()
        if name != URL_FIELD and name not in NOT_CONTENT and isinstance(value, str) and not _is_url(value)
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
    """Reads every item into what the ledger records of its page
    (:class:`crawler.incremental.ledger.Ledger`): its URL, ``content_hash`` (SHA-256 of
    the normalized ``CONTENT_HASH_FIELDS``, never the raw HTML, so markup churn is no
    change) and the text the extractor reads; the ledger decides its page and status.
    Works for any spider whose items carry ``url``.

    With neither content setting set, an item is hashed by its text fields that are not
    URLs (:func:`text_fields`), so ``{url, title, text}`` needs no setting; see
    docs/settings.md. ``meta["force_extraction"] = True`` extracts the page again.
    Installed by :class:`crawler.addons.IncrementalAddon` (300).
    """

    def __init__(
        self,
        cache: Cache,
        identity: PageIdentity,
        stats: StatsCollector,
        *,
        fields: list[str],
        content_field: str,
        converter_upgrade: str,
        infer_fields: bool = False,
        content_field_set: bool = False,
        revisit: RevisitPolicy | None = None,
    ) -> None:
        self.check(fields, converter_upgrade)
        self.cache = cache
        self.identity = identity
        self.stats = stats
        self.fields = fields
        self.content_field = content_field
        #: the settings are the defaults: an item without the content field is hashed
        #: by its text fields (:func:`text_fields`)
        self.infer_fields = infer_fields
        #: CONTENT_HASH_CONTENT_FIELD was set: an item without it is warned about even
        #: when it is not one of the hashed fields (by default such an item's extractor
        #: reads its hashed fields, as the catalog spider's)
        self.content_field_set = content_field_set
        #: an item lacking a configured field was warned about (once a crawl)
        self.warned = False
        #: the one writer of page records: what each item says is told to it
        self.ledger = Ledger(
            cache, identity, stats, content_field=content_field, converter_upgrade=converter_upgrade, revisit=revisit
        )
        #: the fields the pipeline reads: copying only these is 10 times cheaper than
        #: ItemAdapter.asdict() of a page item
        self.read_fields = list(
            dict.fromkeys(
                [
                    URL_FIELD,
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
        upgrade = effective_upgrade(upgrade, extractor_force="extraction" in run_choices(crawler).redo)
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
            content_field=settings.get("CONTENT_HASH_CONTENT_FIELD"),
            converter_upgrade=upgrade,
            infer_fields=not any(user_set.values()),
            content_field_set=user_set["CONTENT_HASH_CONTENT_FIELD"],
            revisit=revisit_policy(crawler.settings) if settings.getbool("REVALIDATION_ENABLED") else None,
        )
        crawler.signals.connect(pipeline.response_received, signal=signals.response_received)
        return pipeline

    def response_received(self, request: Request) -> None:
        """A request with ``meta["force_extraction"]``: its page is extracted again."""
        if wants(request.meta, META_FORCE_EXTRACTION):
            self.cache.run.forced.add(self.identity.url_hash(request.url))

    async def process_item(self, item: Any) -> Any:
        adapter = ItemAdapter(item)
        url = adapter.get(URL_FIELD)
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            self.ledger.not_recorded()
            logger.error(
                "Item without a usable %(field)s field (an absolute http(s) URL), not recorded: %(item)r",
                {"field": URL_FIELD, "item": _shorten(item)},
            )
            return item
        try:
            status, url_hash, chash = self.record(url, self.read(adapter, check=True))
        except Exception as exc:
            self.ledger.not_recorded()
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
            hashed = text_fields(fields)
            consequence = (
                f"their text fields that are not URLs ({', '.join(hashed) or 'none'}) are hashed "
                "and sent to the extractor instead"
            )
            left_out = [
                name
                for name in carried
                if name not in (URL_FIELD, *NOT_CONTENT, *hashed)
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
                "url": fields.get(URL_FIELD),
                "carried": ", ".join(carried),
                "consequence": consequence,
            },
        )

    def _hashed(self, fields: dict[str, Any]) -> list[str]:
        """The fields that make an item's content hash: ``CONTENT_HASH_FIELDS``, or,
        under the defaults, the text fields of an item without the content field."""
        if self.infer_fields and fields.get(self.content_field) is None:
            return text_fields(fields) or self.fields
        return self.fields

    def record(self, url: str, fields: dict[str, Any]) -> tuple[str, str, str]:
        """Record one item (the ledger decides and writes); returns ``(status, url_hash,
        content_hash)``."""
        hashed = self._hashed(fields)
        if hashed is self.fields:
            text = extractor_input(fields, self.content_field, self.fields)
        else:
            text = text_fields_input(fields, hashed)
        return self.ledger.parsed(Parsed(url, fields, hashed, text))


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
