"""The boilerplate stage: domain boilerplate analysis, before extraction."""

from __future__ import annotations

import hashlib
import logging
from collections import defaultdict
from typing import TYPE_CHECKING, Any, NamedTuple

from scrapy.exceptions import NotConfigured

from crawler.cache.blocktable import SignatureRow
from crawler.cache.ports import BoilerplateStore
from crawler.cache.records import utcnow
from crawler.config import typed
from crawler.incremental.converter import holds_back
from crawler.lib.blockkeys import shorten
from crawler.lib.blockstats import DomainStats
from crawler.lib.boilerplate import BOILERPLATE, CONTENT, Params, Reread, analyse_pages, params_json
from crawler.lib.hashing import sha256_hex
from crawler.stages import LiveKeys
from crawler.stages.keptstats import StoredPages, content_of, find_changes, load_stats, made_from, update_stats

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Mapping

    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings
    from scrapy.statscollectors import StatsCollector

    from crawler.cache import Cache
    from crawler.cache.ports import DomainStore
    from crawler.cache.records import PageContent
    from crawler.lib.boilerplate import Fingerprint
    from crawler.stages import PageView, PageViews, StageRun

logger = logging.getLogger(__name__)


def params_from_settings(base: BaseSettings) -> Params:
    settings = typed(base)
    return Params(
        threshold_pct=settings.getfloat("BOILERPLATE_THRESHOLD_PCT"),
        min_pages=settings.getint("BOILERPLATE_MIN_PAGES"),
    )


#: marks a page's content whose extractor input was made by the analysis by repetition
#: alone (before ``RECORD_VERSION`` 2) and is kept as extracted until the page changes
#: (the pipeline then stores its content anew, without it)
HELD = "clean_rule"
#: the domain record's format: 2 adds what was decided about each repeated block
#: (``blocks[].treated``, ``why``, ``section``, ``edge_pages``) and ``pages_emptied``;
#: records of version 1 (no ``version``) load as they are
RECORD_VERSION = 2


def pages_by_domain(pages: PageViews, domains: set[str] | None = None) -> dict[str, list[str]]:
    """url_hash of every stored page that is not removed, by domain (all domains
    when ``domains`` is None): one pass over the page table's columns."""
    grouped: dict[str, list[str]] = defaultdict(list)
    for head in pages.heads(domains):
        grouped[head.domain].append(head.url_hash)
    return dict(grouped)


def analysis(record: dict[str, Any] | None) -> dict[str, Any] | None:
    """The domain record's boilerplate analysis; None when it holds none (a record the
    revisit schedule made for its host's trust alone).

    >>> analysis({"revisit": {"streak": 3}}), analysis({"pages_analysed": 4})["pages_analysed"]
    (None, 4)
    """
    return record if record and set(record) - {"revisit"} else None


def previous_decisions(record: dict[str, Any] | None) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """Level ("" = the domain) -> hashes of the blocks that were boilerplate, and of
    the repeated blocks that were kept as content, at the last analysis. A record of
    version 1 knows no content blocks."""
    if not record or record.get("skipped"):
        return {}, {}
    previous = {"": set(record.get("hashes", []))}
    previous.update({s: set(h) for s, h in record.get("section_hashes", {}).items()})
    content: dict[str, set[str]] = {}
    for block in record.get("blocks", []):
        if block.get("treated") == CONTENT:
            content.setdefault(block.get("section") or "", set()).add(block["hash"])
    return previous, content


class PagesDigest:
    """SHA-256 over what a domain's analysis read and wrote, page by page in order: the
    url_hash, the URL, the text and the cleaned text (``None``: none). Two equal digests
    are the same pages saying the same, cleaned the same way."""

    def __init__(self) -> None:
        self._hash = hashlib.sha256()

    def add(self, url_hash: str, url: str, text: str, clean: str | None) -> None:
        for part in (url_hash, url, text, "\x00" if clean is None else "\x01" + clean):
            data = part.encode("utf-8", "surrogatepass")
            self._hash.update(len(data).to_bytes(8, "big"))
            self._hash.update(data)

    def hexdigest(self) -> str:
        return self._hash.hexdigest()


def analysed_text(text: str, record: Mapping[str, Any]) -> str:
    r"""What of a page's ``text`` the analysis reads: all of it, but an item's (text no
    converter wrote: a user's spider's ``{url, title, text}``) without the title line
    the pipeline wrote above it, so that a line the site repeats at the start of what
    the item carried sits at the page's edge, as it would on a converted page.

    >>> analysed_text("# A guide\n\nSite header\n\nText", {})
    'Site header\n\nText'
    >>> analysed_text("# A guide\n\nText", {"converter": "markdown/10;links=text"})
    '# A guide\n\nText'
    """
    if record.get("converter") or not text.startswith("# "):
        return text
    return text.partition("\n\n")[2]


def analyse_domain(
    pages: PageViews,
    store: DomainStore,
    domain: str,
    url_hashes: Iterable[str],
    params: Params,
    *,
    write: bool,
    hold: bool = True,
    reuse: bool = False,
) -> dict[str, Any]:
    """Analyse one domain's stored pages; with ``write``, store each page's cleaned content
    (``content["clean"]``, the extractor's input) and the domain record. Each page is read
    once; ``content["text"]`` is never modified.

    Returns the domain record plus ``inputs_changed``: how many pages' extractor input now
    differs from their last extraction's (and their ``inputs_changed_urls``, but from the
    kept statistics, whose pass reads only what changed). ``hold``
    (``CONVERTER_UPGRADE = "keep"``) keeps an extracted page's old input until its text
    changes, since a little less chrome is not worth a call; ``reuse`` keeps the last
    analysis when its pages and parameters are unchanged (``pages_digest``). See
    docs/boilerplate.md.
    """
    old = analysis(store.get_domain(domain))
    if write and isinstance(store, BoilerplateStore):  # the statistics kept between runs
        return analyse_kept(pages, store, domain, url_hashes, params, old, hold=hold)
    hashes = list(url_hashes)

    def pages_of_domain() -> Iterator[tuple[PageView, str, PageContent]]:
        """Each page with a text, read a batch at a time and let go after it (what the
        last pass changed written then): a pass holds one batch, never the domain."""
        for batch in pages.batches(hashes):
            for view in batch:
                content = view.content
                if content is not None and isinstance(content.get("text"), str):
                    yield view, content.get("url") or view.record.get("url", ""), content

    if reuse and write and old is not None:
        kept = _unchanged_analysis(old, pages_of_domain(), params)
        if kept is not None:
            return kept

    # three passes (with positions, twice before cleaning), a batch of pages at a time
    texts = Reread(lambda: ((url, analysed_text(content["text"], v.record)) for v, url, content in pages_of_domain()))
    fingerprint, analyser = analyse_pages(texts, params, *previous_decisions(old))
    # the first analysis by this rule of a domain analysed by repetition alone
    upgrading = is_upgrading(old)
    bytes_total = bytes_removed = pages_cleaned = pages_held = 0
    changed_urls: list[str] = []
    digest = PagesDigest()
    for view, url, content in pages_of_domain():
        text = content["text"]
        emptied = analyser.pages_emptied
        cleaned = clean_page(
            view.record,
            content,
            (text, 0) if fingerprint.skipped else analyser.clean(url, text),
            hold=hold,
            upgrading=upgrading,
        )
        if cleaned.held:
            pages_held += 1
            analyser.forget_emptied(emptied, url)
        bytes_total += len(text.encode("utf-8"))
        bytes_removed += cleaned.removed
        pages_cleaned += bool(cleaned.removed)
        if cleaned.input_changed:
            changed_urls.append(url)
        digest.add(view.url_hash, url, text, cleaned.updated.get("clean"))
        if write and cleaned.updated != content:
            view.set_content(cleaned.updated, input_hash=cleaned.clean_hash)  # type: ignore[arg-type]
    record = domain_record(
        domain,
        params,
        fingerprint,
        Totals(pages_cleaned, pages_held, analyser.pages_emptied, analyser.emptied, bytes_total, bytes_removed),
    )
    # what the analysis read and left (see PagesDigest): the same again keeps it
    record["pages_digest"] = digest.hexdigest()
    if write:
        store_record(store, domain, record)
    return {**record, "inputs_changed": len(changed_urls), "inputs_changed_urls": changed_urls}


def is_upgrading(old: dict[str, Any] | None) -> bool:
    """Whether this is the first analysis by this rule of a domain analysed by
    repetition alone (record version 1)."""
    return old is not None and not old.get("skipped") and old.get("version", 1) < RECORD_VERSION


class Cleaned(NamedTuple):
    """One page cleaned: its content as it is to be stored, and what was done."""

    updated: dict[str, Any]
    clean_hash: str
    removed: int
    held: bool
    #: its extractor input differs from its last extraction's
    input_changed: bool


def clean_page(
    record: Mapping[str, Any], content: PageContent, cleaned: tuple[str, int], *, hold: bool, upgrading: bool
) -> Cleaned:
    """The page's content with ``cleaned`` (its text cleaned, the bytes removed) as its
    extractor input, unless ``hold`` keeps the input it was extracted with (made by the
    rule by repetition alone, its text unchanged: ``clean_rule``)."""
    text = content["text"]
    clean, removed = cleaned
    extraction = record.get("extraction") or {}
    stored = content.get("clean", text)
    held = (
        hold
        and clean != stored
        and (upgrading or content.get(HELD) == 1)
        and extraction.get("input_hash") == sha256_hex(stored)
    )
    if held:  # made by the rule by repetition alone, extracted, its text unchanged
        clean = stored
        removed = max(0, len(text.encode("utf-8")) - len(stored.encode("utf-8")))
    clean_hash = sha256_hex(clean)
    updated: dict[str, Any] = {k: v for k, v in content.items() if k not in ("clean", HELD)}
    if clean != text:
        updated["clean"] = clean
    if held:
        updated[HELD] = 1
    return Cleaned(updated, clean_hash, removed, held, extraction.get("input_hash") != clean_hash)


class Totals(NamedTuple):
    """What the domain record counts over the domain's pages."""

    pages_cleaned: int
    pages_held: int
    pages_emptied: int
    pages_emptied_urls: list[str]
    bytes_total: int
    bytes_removed: int


def domain_record(domain: str, params: Params, fingerprint: Fingerprint, totals: Totals) -> dict[str, Any]:
    """The domain record of an analysis (docs/boilerplate.md)."""
    return {
        "version": RECORD_VERSION,
        "domain": domain,
        "analysed_at": utcnow(),
        "params": params_json(params),
        "skipped": fingerprint.skipped,
        "pages_analysed": fingerprint.pages_analysed,
        "pages_cleaned": totals.pages_cleaned,
        # pages whose input, made by the rule by repetition alone, is kept as extracted
        # until their text changes: the upgrade re-extracts no unchanged page
        "pages_held": totals.pages_held,
        # pages kept whole: cleaning would have left them (almost) no text
        "pages_emptied": totals.pages_emptied,
        "pages_emptied_urls": totals.pages_emptied_urls,  # the first 100
        "blocks_total": fingerprint.blocks_total,
        "blocks_boilerplate": fingerprint.blocks_boilerplate,
        "bytes_total": totals.bytes_total,
        "bytes_removed": totals.bytes_removed,
        "boilerplate_pct": round(100.0 * totals.bytes_removed / totals.bytes_total, 2) if totals.bytes_total else 0.0,
        "hashes": sorted(fingerprint.hashes),
        "section_hashes": {s: sorted(h) for s, h in sorted(fingerprint.section_hashes.items())},
        # every repeated block, boilerplate first: what was decided (treated), why, and
        # its text kept once per domain: facts that live only in a footer or a banner
        # (an address, a licence) are not lost to the extractor
        "blocks": [decision.to_json() for decision in fingerprint.decisions],
    }


def store_record(store: DomainStore, domain: str, record: dict[str, Any]) -> None:
    """The domain record stored, the host's trust (RevalidationMiddleware's) kept as
    stored at the write: a crawl process of another run may have added to it since the read."""
    store.update_domain(domain, lambda now: {**record, **{k: v for k, v in (now or {}).items() if k == "revisit"}})


def analyse_kept(
    pages: PageViews,
    store: BoilerplateStore,
    domain: str,
    url_hashes: Iterable[str],
    params: Params,
    old: dict[str, Any] | None,
    *,
    hold: bool,
    rebuild: bool = False,
) -> dict[str, Any]:
    """:func:`analyse_domain` (writing) from the statistics kept between runs: the same
    record and cleaned contents as a full pass over the pages in ascending key order,
    with the texts of the pages that changed read (see :mod:`crawler.stages.keptstats`).
    ``rebuild``: the statistics made again from every page. ``url_hashes`` given as
    :class:`LiveKeys` are read from the store at each pass, never held (a recrawl that
    changed little holds what changed, not the domain's keys)."""
    live: Iterable[str] = url_hashes if isinstance(url_hashes, LiveKeys) else sorted(url_hashes)
    source = StoredPages(store, domain, pages, analysed_text)
    changes = find_changes(store, domain, live)
    kept = None if rebuild else store.get_block_stats(domain)
    stats = None if kept is None else load_stats(kept, domain, params)
    # (the kept bytes let go once loaded: a 100,000-page domain's are 6 MB; the
    # statistics say at the end whether they changed, and are written only then)
    stored = kept is not None
    del kept
    if stats is not None and stats.pages != changes.rows:
        logger.warning(
            "The boilerplate statistics of %(domain)s count %(n)d pages, their signatures %(rows)d: made again",
            {"domain": domain[:100], "n": stats.pages, "rows": changes.rows},
        )
        stats = None
    if stats is None:  # every page read once, its signature made again
        stats = DomainStats(params)
        changes.changed, changes.counted, changes.gone_counted = list(live), set(), []
        changes.inputs_changed.clear()
    if stored and (changes.changed or changes.gone):
        # dropped before the signatures change (statistics of other parameters too: they
        # would count rows no more theirs, were those parameters used again)
        store.put_block_stats(domain, None)
        stored = False
    try:
        update_stats(store, domain, stats, changes, source)
        stats.commit(source)
        fingerprint = stats.decide(*previous_decisions(old))
        to_clean = stats.pages_to_clean(source)
    except ValueError as exc:  # the signatures disagree with the statistics
        if rebuild:
            raise
        logger.warning(
            "The boilerplate statistics of %(domain)s disagree with its pages' signatures (%(exc)s): made again",
            {"domain": domain[:100], "exc": exc},
        )
        store.put_block_stats(domain, None)
        return analyse_kept(pages, store, domain, url_hashes, params, old, hold=hold, rebuild=True)
    upgrading = is_upgrading(old)
    # a page holding the input it was extracted with: every page cleaned, as a full pass
    everything = to_clean is None or upgrading or bool((old or {}).get("pages_held"))
    keys = live if everything else sorted(to_clean or ())
    inputs = changes.inputs_changed
    pages_held = 0
    if fingerprint.skipped:
        stats.emptied.clear()
    for batch in pages.batches(keys):
        signatures = store.get_signatures(view.url_hash for view in batch)
        rows: list[SignatureRow] = []
        for view in batch:
            content = content_of(view)
            if content is None:
                continue
            key, text = view.url_hash, content["text"]
            url = content.get("url") or view.record.get("url", "")
            cleaned = clean_page(
                view.record,
                content,
                (text, 0) if fingerprint.skipped else stats.clean(key, url, text),
                hold=hold,
                upgrading=upgrading,
            )
            source.read_keys.add(key)
            if cleaned.held:
                pages_held += 1
                stats.emptied.pop(key, None)
            inputs.discard(key)
            if cleaned.input_changed:
                inputs.add(key)
            if cleaned.updated != content:
                view.set_content(cleaned.updated, input_hash=cleaned.clean_hash)  # type: ignore[arg-type]
            size = len(text.encode("utf-8"))
            rows.append(
                SignatureRow(
                    key, made_from(view.record), size, cleaned.removed, cleaned.clean_hash, signatures.get(key, b"")
                )
            )
        store.put_signatures(domain, rows)
    bytes_total = bytes_removed = pages_cleaned = 0
    for mark in store.iter_signature_marks(domain):
        bytes_total += mark.text_bytes
        bytes_removed += mark.removed_bytes
        pages_cleaned += mark.removed_bytes > 0
    totals = Totals(pages_cleaned, pages_held, stats.pages_emptied, stats.emptied_urls(), bytes_total, bytes_removed)
    record = domain_record(domain, params, fingerprint, totals)
    store_record(store, domain, record)
    # the cleaned contents stored before the statistics that say they are
    pages.flush(records=False)
    store.commit()
    parts = stats.changed_parts() if stored else stats.to_parts()
    if parts is not None:
        store.put_block_stats(domain, parts)
    # (a count: the URLs are listed by ``scrapy boilerplate --pages``, which passes over
    # every page; a first crawl's would be every page's)
    return {**record, "inputs_changed": len(inputs), "texts_read": len(source.read_keys)}


def _unchanged_analysis(
    old: dict[str, Any],
    domain_pages: Iterable[tuple[PageView, str, PageContent]],
    params: Params,
) -> dict[str, Any] | None:
    """The last analysis ``old`` with this run's ``inputs_changed``, when its pages and
    parameters are unchanged since (see :func:`analyse_domain`); else ``None``. A page
    holding the input it was extracted with (``clean_rule``) is analysed again, as its
    input depends on its extraction too."""
    if old.get("version") != RECORD_VERSION or old.get("params") != params_json(params) or not old.get("pages_digest"):
        return None
    digest = PagesDigest()
    changed_urls: list[str] = []
    for view, url, content in domain_pages:
        if HELD in content:
            return None
        clean = content.get("clean")
        digest.add(view.url_hash, url, content["text"], clean)
        clean_hash = sha256_hex(clean if clean is not None else content["text"])
        extraction: dict[str, Any] = dict(view.record.get("extraction") or {})
        if extraction.get("input_hash") != clean_hash:
            changed_urls.append(url)
    if digest.hexdigest() != old["pages_digest"]:
        return None
    return {**old, "inputs_changed": len(changed_urls), "inputs_changed_urls": changed_urls}


def boilerplate_blocks(record: dict[str, Any]) -> list[dict[str, Any]]:
    """The record's blocks treated as boilerplate (a version 1 record lists no others)."""
    return [b for b in record.get("blocks", []) if b.get("treated", BOILERPLATE) == BOILERPLATE]


def format_table(records: list[dict[str, Any]], params: Params) -> str:
    """The per-domain table logged at the end of a crawl."""
    lines = [
        f"Domain boilerplate (block on >= {params.threshold_pct:.0%} of a domain's pages, "
        f"min {params.min_pages} pages, {params.block_length_rule()}):",
        f"{'domain':32} {'pages':>6} {'boilerplate':>11} {'bytes removed':>13}  top repeated blocks",
    ]
    for r in records:
        if r["skipped"]:
            top = f"(left alone: fewer than {params.min_pages} pages)"
        else:
            top = ", ".join(f'"{shorten(b["text"], 40)}" ({b["pages"]})' for b in boilerplate_blocks(r)[:3]) or "-"
        lines.append(
            f"{r['domain'][:32]:32} {r['pages_analysed']:>6} {r['boilerplate_pct']:>10.1f}% "
            f"{r['bytes_removed']:>13,}  {top}"
        )
        content = [b for b in r["blocks"] if b.get("treated") == CONTENT]
        if content:
            kept = ", ".join(
                f'"{shorten(b["text"], 40)}" ({b["pages"]}: {b["why"].partition(":")[0]})' for b in content[:3]
            )
            lines.append(f"{'':32}   repeated but kept as content: {len(content)} block(s): {kept}")
        if r.get("pages_held"):
            lines.append(
                f"{'':32}   {r['pages_held']} page(s) keep the input they were extracted with until they change "
                "(boilerplate/pages_held; -s CONVERTER_UPGRADE=apply to re-extract them)"
            )
        if r.get("pages_emptied"):
            lines.append(
                f"{'':32}   {r['pages_emptied']} page(s) kept whole: cleaning would have left no text "
                f"(boilerplate/pages_emptied)"
            )
    return "\n".join(lines)


class BoilerplateStage:
    """Finds text that repeats across a site's pages and keeps it from the extractor.

    Analyses every domain of the run (a crawl's crawled domains; ``scrapy process``:
    the stored pages' domains, or ``--domain``) across all its stored pages, this
    crawl's and the unchanged ones, and stores each page's content without the
    domain's (or its section's) boilerplate blocks beside the original. The
    extractor reads that cleaned content, so a change to boilerplate alone
    re-extracts nothing. On by default; ``BOILERPLATE_ENABLED = False`` turns it off.
    Per-domain records go to the store's domain records (``boilerplate/``).
    """

    name = "boilerplate"

    def __init__(self, stats: StatsCollector, params: Params, *, hold: bool = True) -> None:
        self.stats = stats
        self.params = params
        #: the first analysis by this rule keeps the inputs pages were extracted with
        #: (CONVERTER_UPGRADE=keep): see analyse_domain
        self.hold = hold
        self.records: list[dict[str, Any]] = []
        #: domain -> why its analysis failed (its pages keep their last cleaned input)
        self.errors: dict[str, str] = {}

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> BoilerplateStage:
        if not typed(crawler.settings).getbool("BOILERPLATE_ENABLED"):
            raise NotConfigured("BoilerplateStage is off: BOILERPLATE_ENABLED is False")
        params = params_from_settings(crawler.settings)  # a wrong value fails here
        assert crawler.stats is not None
        hold = holds_back(typed(crawler.settings).get("CONVERTER_UPGRADE"))
        return cls(crawler.stats, params, hold=hold)

    def plan(self, run: StageRun) -> tuple[StageRun, dict[str, Iterable[str]]]:
        """The run's domains that have stored live pages, each with their keys
        (:class:`LiveKeys`: read at each pass, never held)."""
        grouped = {domain: run.pages.live_keys(domain) for domain in run.cache.run.domains}
        return run, {domain: keys for domain, keys in grouped.items() if next(iter(keys), None) is not None}

    async def run(self, plan: tuple[StageRun, dict[str, Iterable[str]]]) -> None:
        run, grouped = plan
        self.analyse(run.cache, run.pages, grouped)

    def analyse(self, cache: Cache, pages: PageViews, grouped: Mapping[str, Iterable[str]]) -> None:
        for domain in sorted(grouped):
            try:
                record = analyse_domain(
                    pages, cache.store, domain, grouped[domain], self.params, write=True, hold=self.hold, reuse=True
                )
            except Exception as exc:  # one domain's failure never stops the others
                self.errors[domain] = f"{type(exc).__name__}: {exc}"
                self.stats.inc_value("boilerplate/errors")
                logger.exception("Boilerplate analysis of %(domain)s failed", {"domain": domain[:100]})
                continue
            cache.wrote(1)
            self.records.append(record)
            self._count(record)
        # the cleaned inputs now, so a kill during extraction finds them as extracted
        cache.wrote(pages.flush(records=False))
        cache.commit()
        if self.records:
            logger.info("%(table)s", {"table": format_table(self.records, self.params)})

    def _count(self, record: dict[str, Any]) -> None:
        inc = self.stats.inc_value
        if record.get("texts_read"):
            inc("boilerplate/texts_read", record["texts_read"])
        if record["skipped"]:
            inc("boilerplate/domains_skipped")
            return
        inc("boilerplate/domains_analysed")
        inc("boilerplate/pages_analysed", record["pages_analysed"])
        inc("boilerplate/pages_cleaned", record["pages_cleaned"])
        inc("boilerplate/blocks_boilerplate", record["blocks_boilerplate"])
        inc("boilerplate/bytes_total", record["bytes_total"])
        inc("boilerplate/bytes_removed", record["bytes_removed"])
        inc("boilerplate/inputs_changed", record["inputs_changed"])
        if record["pages_emptied"]:
            inc("boilerplate/pages_emptied", record["pages_emptied"])
        if record["pages_held"]:
            inc("boilerplate/pages_held", record["pages_held"])

    def report(self, report: dict[str, Any]) -> None:
        analysed = [r for r in self.records if not r["skipped"]]
        total = sum(r["bytes_total"] for r in analysed)
        removed = sum(r["bytes_removed"] for r in analysed)
        report["boilerplate"] = {
            "domains_analysed": len(analysed),
            "domains_skipped": len(self.records) - len(analysed),
            "pages_analysed": sum(r["pages_analysed"] for r in analysed),
            "pages_emptied": sum(r["pages_emptied"] for r in analysed),
            "bytes_total": total,
            "bytes_removed": removed,
            "boilerplate_pct": round(100.0 * removed / total, 2) if total else 0.0,
            "domains": {
                r["domain"]: {
                    "pages": r["pages_analysed"],
                    "boilerplate_pct": r["boilerplate_pct"],
                    "bytes_removed": r["bytes_removed"],
                    "pages_emptied": r.get("pages_emptied", 0),
                    "pages_emptied_urls": r.get("pages_emptied_urls", []),
                    "skipped": r["skipped"],
                }
                for r in self.records
            },
        }
        if self.errors:
            report["boilerplate"]["errors"] = dict(self.errors)
            report["errors"] = report.get("errors", 0) + len(self.errors)
