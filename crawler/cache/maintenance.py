"""Changes to a cache made outside a crawl: prune, verify and repair.

Prune and the check of records against extractions (:func:`verify_store`) work on any
store, through its ports; :func:`verify` first checks and repairs the
embedded store's files (``cache.sqlite``: a damaged or lost database, rebuilt from the
extraction files), which keep it from opening. A change holds the store's lock (the
``scrapy cache`` command takes it), so it never races a crawl.
"""

from __future__ import annotations

import logging
import sqlite3
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from crawler.cache.codecs import kv_decode
from crawler.cache.migrate import migrate_if_needed
from crawler.cache.perms import CacheAccessError, access_problem
from crawler.cache.records import STATUS_REMOVED, utcnow
from crawler.cache.sqlite import SqliteDocStore, index_lost
from crawler.cache.sqlitefile import DB_NAME, check_sqlite_file
from crawler.lib.urls import url_domain

if TYPE_CHECKING:
    from crawler.cache.base import StoreBase as MaintainedStore

logger = logging.getLogger(__name__)


# -- prune ----------------------------------------------------------------------


@dataclass
class PrunePlan:
    removed_pages: list[tuple[str, str]] = field(default_factory=list)  # (url_hash, url)
    #: extractions no record points to: (url_hash, name)
    orphan_files: list[tuple[str, str]] = field(default_factory=list)
    #: what a killed run left (temporary files), by name
    temp_files: list[str] = field(default_factory=list)
    stale_inputs: list[str] = field(default_factory=list)
    #: browser renderings of pages the index has no record of
    orphan_renderings: list[str] = field(default_factory=list)
    #: extractions of pages without a record but with stored content, by name: kept for verify --repair
    recoverable: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "removed_pages": [{"url_hash": h, "url": u} for h, u in self.removed_pages],
            "orphan_files": [name for _, name in self.orphan_files],
            "temp_files": list(self.temp_files),
            "stale_inputs": len(self.stale_inputs),
            "orphan_renderings": len(self.orphan_renderings),
            "kept_recoverable": list(self.recoverable),
        }


def plan_prune(store: MaintainedStore) -> PrunePlan:
    """What prune would delete: removed pages (records, content, stored responses,
    renderings, files), extraction files no record points to, temporary files left by
    a killed run, extraction-reuse entries that point to pages no longer kept, and
    browser renderings of pages the index does not know (the next crawl renders them again)."""
    plan = PrunePlan()
    live: set[str] = set()
    for url_hash, record in store.iter_pages():
        if record.get("status") == STATUS_REMOVED:
            plan.removed_pages.append((url_hash, record.get("url", "")))
        else:
            live.add(url_hash)
    # every key of the index counts, readable or not: an unreadable record's files
    # are what `verify --repair` restores it from
    indexed = set(store.iter_page_keys())
    for owner in store.iter_extraction_keys():
        if owner in indexed:
            continue
        name = store.extraction_name(owner)
        if _restorable(store, owner):
            plan.recoverable.append(name)  # a page a killed run did not index yet
        else:
            plan.orphan_files.append((owner, name))
    plan.temp_files = store.leftovers()
    plan.stale_inputs = [key for key, url_hash in store.iter_inputs() if url_hash not in live]
    for url_hash in store.iter_rendered_keys():
        if url_hash in indexed:
            continue
        rendered = store.get_rendered(url_hash)
        # kept: where a page's script sends the browser (an empty body): such a page
        # has no record of its own, and the record is what saves its rendering
        if rendered is None or rendered.body:
            plan.orphan_renderings.append(url_hash)
    return plan


def _restorable(store: MaintainedStore, url_hash: str) -> bool:
    data = store.read_extraction(url_hash)
    return (
        data is not None
        and extraction_of(url_hash, data)
        and bool(data.get("url"))
        and store.get_content(url_hash) is not None
    )


def apply_prune(store: MaintainedStore, plan: PrunePlan) -> None:
    for url_hash, _ in plan.removed_pages:
        store.delete_page(url_hash)
    for url_hash, _ in plan.orphan_files:
        store.delete_extraction(url_hash)
    store.delete_leftovers(plan.temp_files)
    for key in plan.stale_inputs:
        store.delete_input(key)
    for url_hash in plan.orphan_renderings:
        store.delete_rendered(url_hash)
    store.commit()


# -- verify and repair ------------------------------------------------------------


#: what a run stopped half-way (a kill, a power cut) leaves, which the next run puts
#: right by itself: findings of verify, not problems (verify exits 0 for them)
INTERRUPTED_RUN = "interrupted_run"
INTERRUPTED_PRUNE = "interrupted_prune"
INTERRUPTED = (INTERRUPTED_RUN, INTERRUPTED_PRUNE)
ADOPTED = "a run was stopped before indexing it; the next run adopts it without an extractor call"
PRUNE_ENDS_IT = "deleted by a prune that was stopped before its commit; the next `scrapy cache prune` ends it"


@dataclass
class Problem:
    #: corrupt_file, empty_file, extraction_missing, extraction_mismatch, extraction_foreign,
    #: orphan_file, record_unreadable, rebuilt, record_partial; interrupted_run and
    #: interrupted_prune (:data:`INTERRUPTED`: not damage, the next run or prune ends them)
    kind: str
    target: str
    detail: str = ""
    repaired: str = ""


def _stamp() -> str:
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")


def _move_aside(path: Path) -> Path:
    target = path.with_name(f"{path.name}.corrupt-{_stamp()}")
    path.rename(target)
    for suffix in ("-wal", "-shm"):
        companion = path.with_name(path.name + suffix)
        if companion.exists():
            companion.rename(target.with_name(target.name + suffix))
    return target


def _remove_database(path: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        path.with_name(path.name + suffix).unlink(missing_ok=True)


def verify(directory: Path, *, repair: bool) -> list[Problem]:
    """Check that the database and the extraction files agree; with ``repair``, fix
    what can be.

    The extraction files are the paid-for part, so they are the source of repair: an
    unreadable database is moved aside (``cache.sqlite.corrupt-<time>``) and page records
    lost with it, or with a lost database, are rebuilt from them; an extraction file newer
    than its record (a run killed before its commit) is taken into the record; a missing
    one drops the record's extraction, so the page is extracted again. See docs/commands.md.
    """
    path = directory / DB_NAME
    if path.exists() and (cause := access_problem(path, _lock_error(path), write=repair)) is not None:
        raise CacheAccessError(cause)  # before anything is changed (or waited for again)
    migrate_if_needed(directory)
    problems: list[Problem] = []
    rebuild = False
    aside: Path | None = None
    if index_lost(directory):
        problem = Problem("corrupt_file", DB_NAME, "missing, empty or without pages while extractions/ holds files")
        if repair:
            if path.exists() and path.stat().st_size == 0:
                _remove_database(path)
            problem.repaired = "its page records rebuilt from extractions/"
            rebuild = True
        problems.append(problem)
    elif path.exists() and path.stat().st_size == 0:
        # SQLite opens it as an empty database: what it held is lost, and no crawl
        # ever leaves a database file of 0 bytes (it was truncated)
        problem = Problem("empty_file", DB_NAME, "0 bytes: what it held is lost")
        if repair:
            _remove_database(path)
            problem.repaired = "an empty database made in its place; the next crawl downloads each page in full again"
        problems.append(problem)
    else:
        try:
            check_sqlite_file(path, thorough=True)
        except Exception as exc:  # any failure to read is corruption here...
            if (cause := access_problem(path, exc, write=repair)) is not None:
                raise CacheAccessError(cause) from exc  # ...but permissions or a lock: never moved aside
            problem = Problem("corrupt_file", DB_NAME, str(exc))
            if repair:
                aside = _move_aside(path)
                problem.repaired = f"moved to {aside.name}"
                rebuild = True
            problems.append(problem)
    if any(p.kind == "corrupt_file" for p in problems) and not repair:
        return problems  # nothing more can be checked until it is repaired
    store = SqliteDocStore(directory, readonly=not repair, rebuilding=rebuild)
    try:
        if rebuild:
            salvaged = salvage(store, aside) if aside is not None else 0
            count, partial = rebuild_index(store)
            detail = f"{count + salvaged} pages: {salvaged} read from the damaged file, {count} from extractions/"
            if partial:
                detail += f" ({len(partial)} from their files only: listed as record_partial)"
            problems.append(Problem("rebuilt", DB_NAME, detail, "rebuilt"))
            problems.extend(partial)
            rebuild_inputs(store)
        problems.extend(verify_store(store, repair=repair))
    finally:
        store.close()
    return problems


def _lock_error(path: Path) -> sqlite3.OperationalError | None:
    """The error of a read of ``path`` when another program holds a lock on it (SQLite's
    own wait, 5 seconds, spent once), else None (damage is for the checks that follow)."""
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        finally:
            conn.close()
    except sqlite3.OperationalError as exc:
        return exc if "locked" in str(exc).lower() else None
    except sqlite3.DatabaseError:
        return None
    return None


def salvage(store: SqliteDocStore, damaged: Path) -> int:
    """Copy into ``store`` what can still be read from the ``damaged`` database file
    (records, content, links), up to the first entry SQLite cannot read in each
    table. Returns the number of page records kept."""
    pages = 0
    try:
        conn = sqlite3.connect(f"file:{damaged}?mode=ro", uri=True)
    except sqlite3.DatabaseError:
        return 0
    try:
        for sql in ("SELECT key, value FROM kv", "SELECT key, record FROM pages"):
            try:
                for key, raw in conn.execute(sql):
                    try:
                        value = kv_decode(raw)
                    except (ValueError, TypeError):
                        continue
                    if sql.endswith("pages"):
                        if isinstance(value, dict) and value.get("url"):
                            store.put_page(key, value)
                            pages += 1
                    elif not key.startswith("store/"):
                        store._kv_put(key, value)
            except sqlite3.DatabaseError as exc:
                logger.warning("Salvaging %(path)s stopped at: %(exc)s", {"path": damaged, "exc": exc})
    finally:
        conn.close()
    store.commit()
    return pages


def verify_store(store: MaintainedStore, *, repair: bool) -> list[Problem]:
    """Check that the page records and the extractions agree, through the store's
    ports (any store; the embedded one's files are :func:`verify`'s); with ``repair``,
    fix what can be (see :func:`verify`)."""
    problems = []
    readable: set[str] = set()
    for url_hash, record in store.iter_pages():
        readable.add(url_hash)
        problem = _check_extraction(store, url_hash, record, repair)
        if problem is not None:
            problems.append(problem)
    indexed = set(store.iter_page_keys())
    for url_hash in sorted(indexed - readable):
        problem = Problem("record_unreadable", url_hash, "the stored record is not valid JSON")
        if repair:
            restored = _record_from_files(store, url_hash)
            if restored is not None:
                store.put_page(url_hash, restored)
                problem.repaired = "restored from its extraction file and stored content"
        problems.append(problem)
    for url_hash in sorted(set(store.iter_extraction_keys()) - indexed):
        problem = Problem("orphan_file", url_hash, "the extraction file of a page the index does not know")
        orphan = _record_from_files(store, url_hash) if repair else None
        if orphan is not None and orphan.get("url"):
            store.put_page(url_hash, orphan)
            problem.repaired = "record restored from its files"
        elif not repair:
            problem.detail += ": `verify --repair` restores its record if it can, else prune deletes it"
        problems.append(problem)
    store.commit()
    return problems


def _check_extraction(store: MaintainedStore, url_hash: str, record: dict[str, Any], repair: bool) -> Problem | None:
    extraction = record.get("extraction")
    if not extraction:
        return _unindexed(store, url_hash, record, repair)
    data = store.read_extraction(url_hash)
    if data is not None and not extraction_of(url_hash, data, record):
        problem = Problem(
            "extraction_foreign",
            record.get("url", url_hash),
            f"{store.extraction_name(url_hash)} holds the extraction of "
            f"{data.get('url') or data.get('url_hash') or '?'}",
        )
        if repair:
            aside = store.set_extraction_aside(url_hash, f".corrupt-{_stamp()}")
            record.pop("extraction", None)
            problem.repaired = f"the file moved to {aside}; the next crawl extracts the page again"
            store.put_page(url_hash, record)
        return problem
    if data is not None and data.get("input_key") == extraction.get("input_key"):
        return None
    url = record.get("url", url_hash)
    if data is None and record.get("status") == STATUS_REMOVED:
        # prune deletes a removed page's files before its commit: one stopped half-way left this
        problem = Problem(
            INTERRUPTED_PRUNE, url, f"{store.extraction_name(url_hash)} of a removed page: {PRUNE_ENDS_IT}"
        )
        if repair:
            record.pop("extraction", None)
            problem.repaired = "its extraction dropped from the record; `scrapy cache prune` deletes the page"
    elif data is None:
        problem = Problem("extraction_missing", url, store.extraction_name(url_hash))
        if repair:
            record.pop("extraction", None)  # no extraction: the next crawl makes it again
            problem.repaired = "the next crawl extracts it again"
    else:
        if str(data.get("extracted_at") or "") >= str(record.get("last_extracted") or ""):
            # the file is written before the record: a run stopped between the two left it
            problem = Problem(
                INTERRUPTED_RUN, url, f"{store.extraction_name(url_hash)} is newer than the index: {ADOPTED}"
            )
        else:
            problem = Problem("extraction_mismatch", url, "the file is older than the index says")
        if repair:
            record["extraction"] = _extraction_entry(url_hash, data)
            record["last_extracted"] = data.get("extracted_at", record.get("last_extracted"))
            problem.repaired = "the record now points to the file"
    if repair:
        store.put_page(url_hash, record)
    return problem


def _unindexed(store: MaintainedStore, url_hash: str, record: dict[str, Any], repair: bool) -> Problem | None:
    """A page whose record names no extraction yet has an extraction of its own: a
    run stopped before indexing the page's first extraction (the next run adopts it)."""
    if record.get("status") == STATUS_REMOVED:
        return None
    data = store.read_extraction(url_hash)
    if data is None or not data.get("input_key") or not extraction_of(url_hash, data, record):
        return None
    url = record.get("url", url_hash)
    problem = Problem(INTERRUPTED_RUN, url, f"{store.extraction_name(url_hash)} is not in the index yet: {ADOPTED}")
    if repair:
        record["extraction"] = _extraction_entry(url_hash, data)
        record["last_extracted"] = data.get("extracted_at", record.get("last_extracted"))
        problem.repaired = "the record now points to the file"
        store.put_page(url_hash, record)
    return problem


def extraction_of(url_hash: str, data: dict[str, Any], record: dict[str, Any] | None = None) -> bool:
    """``data`` (an extraction file's content) is the extraction of page ``url_hash``:
    its own ``url_hash`` says so, or (a file without one) its URL is the record's."""
    if "url_hash" in data:
        return bool(data["url_hash"] == url_hash)
    if record is None or not data.get("url"):
        return False
    return data["url"] in (record.get("url"), record.get("canonical_url"))


def _extraction_entry(url_hash: str, data: dict[str, Any]) -> dict[str, Any]:
    extractor = data.get("extractor") or {}
    return {
        "input_key": data["input_key"],
        "input_hash": data.get("input_hash"),
        "extractor": extractor.get("name"),
        "version": extractor.get("version"),
        "file": f"extractions/{url_hash}.json",
    }


def _record_from_files(store: MaintainedStore, url_hash: str) -> dict[str, Any] | None:
    """A page record rebuilt from ``extractions/{url_hash}.json`` and the page's stored
    content (its ``content_hash``: the next crawl finds the page unchanged). An
    extraction file of another page is not used."""
    data = store.read_extraction(url_hash)
    if data is not None and not extraction_of(url_hash, data):
        data = None
    content = store.get_content(url_hash)
    if data is None and content is None:
        return None
    record: dict[str, Any] = {}
    if data is not None:
        record["url"] = data.get("url", "")
        record["status"] = "unchanged"
        record["title"] = data.get("title", "")
        if data.get("input_key"):
            record["extraction"] = _extraction_entry(url_hash, data)
            record["last_extracted"] = data.get("extracted_at")
    _complete_from_content(record, content, data)
    if "domain" not in record and record.get("url"):
        record["domain"] = url_domain(record["url"])
    return record


def _complete_from_content(record: dict[str, Any], content: dict[str, Any] | None, data: dict[str, Any] | None) -> None:
    """What a page gets back from its stored content: its URL, status, content hash;
    ``first_seen`` and ``last_changed`` are estimates (the earliest and the latest
    time stored), its history is lost: ``restored`` says so."""
    if content is not None:
        if isinstance(content.get("url"), str):
            record.setdefault("url", content["url"])
        record.setdefault("status", "unchanged")
        if content.get("content_hash"):
            record["content_hash"] = content["content_hash"]
    times = [
        t
        for t in (
            ((content or {}).get("previous") or {}).get("stored_at"),
            (content or {}).get("stored_at"),
            (data or {}).get("extracted_at"),
        )
        if isinstance(t, str)
    ]
    if times:
        record.setdefault("first_seen", min(times))
        if content is not None and isinstance(content.get("stored_at"), str):
            record.setdefault("last_changed", content["stored_at"])
    record["restored"] = {
        "at": utcnow(),
        "from": [name for name, part in (("content", content), ("extraction", data)) if part is not None],
        "lost": "first_seen is an estimate, history lost"
        + ("" if record.get("content_hash") else ", no content hash: the next crawl reports the page changed"),
    }


def rebuild_index(store: MaintainedStore) -> tuple[int, list[Problem]]:
    """Page records of the pages without one (a lost or corrupt index), rebuilt from
    ``extractions/*.json`` and the stored content, which also gives back pages with
    no extraction. Returns the count and one problem per page rebuilt (its history
    is lost)."""
    count = 0
    partial = []
    indexed = set(store.iter_page_keys())
    owners = (set(store.iter_extraction_keys()) | set(store.iter_content_keys())) - indexed
    for url_hash in sorted(owners):
        record = _record_from_files(store, url_hash)
        if record is not None and record.get("url"):
            store.put_page(url_hash, record)
            count += 1
            partial.append(Problem("record_partial", record["url"], record["restored"]["lost"], "rebuilt"))
    store.commit()
    return count, partial


def rebuild_inputs(store: MaintainedStore) -> int:
    count = 0
    for url_hash in store.iter_extraction_keys():
        data = store.read_extraction(url_hash)
        if data is not None and data.get("input_key"):
            store.link_extraction(data["input_key"], url_hash)
            count += 1
    store.commit()
    return count
