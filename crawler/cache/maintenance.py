"""Changes to a cache made outside a crawl: invalidate, prune, verify and repair.

These work on the default store (:class:`SqliteDocStore`) and must hold the cache
lock (the ``scrapy cache`` command takes it), so they never race a crawl.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from crawler.cache.sqlite import TABLE_FILES, SqliteDocStore, check_sqlite_file, index_lost, read_json
from crawler.cache.store import STATUS_REMOVED, add_history, metadata_of, utcnow
from crawler.lib.urls import url_domain

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

logger = logging.getLogger(__name__)

FILE_DIRS = ("extractions", "metadata", "runs", "boilerplate")


def invalidate(store: SqliteDocStore, url_hashes: Iterable[str]) -> int:
    """Mark pages so the next crawl re-extracts them even when unchanged."""
    now = utcnow()
    count = 0
    for url_hash in url_hashes:
        record = store.get_page(url_hash)
        if record is None:
            continue
        record["invalidated"] = now
        add_history(record, "invalidated", now)
        store.put_page(url_hash, record)
        count += 1
    store.commit()
    return count


# -- prune ----------------------------------------------------------------------


@dataclass
class PrunePlan:
    removed_pages: list[tuple[str, str]] = field(default_factory=list)  # (url_hash, url)
    orphan_files: list[Path] = field(default_factory=list)
    temp_files: list[Path] = field(default_factory=list)
    stale_inputs: list[str] = field(default_factory=list)

    def as_dict(self, base: Path) -> dict[str, Any]:
        return {
            "removed_pages": [{"url_hash": h, "url": u} for h, u in self.removed_pages],
            "orphan_files": [str(p.relative_to(base)) for p in self.orphan_files],
            "temp_files": [str(p.relative_to(base)) for p in self.temp_files],
            "stale_inputs": len(self.stale_inputs),
        }


def _file_hash(path: Path) -> str:
    return path.name.removesuffix(".json").removesuffix("_meta")


def plan_prune(store: SqliteDocStore) -> PrunePlan:
    """What prune would delete: removed pages (records, content, stored responses,
    files), files no record points to, temporary files left by a killed run, and
    extraction-reuse entries that point to pages no longer kept."""
    plan = PrunePlan()
    live: set[str] = set()
    for url_hash, record in store.iter_pages():
        if record.get("status") == STATUS_REMOVED:
            plan.removed_pages.append((url_hash, record.get("url", "")))
        else:
            live.add(url_hash)
    removed = {h for h, _ in plan.removed_pages}
    for sub in ("extractions", "metadata"):
        for path in sorted((store.directory / sub).glob("*.json")):
            owner = _file_hash(path)
            if owner not in live and owner not in removed:
                plan.orphan_files.append(path)
    for sub in FILE_DIRS:
        plan.temp_files.extend(sorted((store.directory / sub).glob(".*.tmp")))
    plan.stale_inputs = [key for key, url_hash in store.iter_inputs() if url_hash not in live]
    return plan


def apply_prune(store: SqliteDocStore, plan: PrunePlan) -> None:
    for url_hash, _ in plan.removed_pages:
        store.delete_page(url_hash)
    for path in plan.orphan_files + plan.temp_files:
        path.unlink(missing_ok=True)
    for key in plan.stale_inputs:
        store.delete_input(key)
    store.commit()


# -- verify and repair ------------------------------------------------------------


@dataclass
class Problem:
    kind: str  # corrupt_file, extraction_missing, extraction_mismatch, metadata_missing, orphan_file
    target: str
    detail: str = ""
    repaired: str = ""


def _move_aside(path: Path) -> Path:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    target = path.with_name(f"{path.name}.corrupt-{stamp}")
    path.rename(target)
    for suffix in ("-wal", "-shm"):
        companion = path.with_name(path.name + suffix)
        if companion.exists():
            companion.rename(target.with_name(target.name + suffix))
    return target


def verify(directory: Path, *, repair: bool) -> list[Problem]:
    """Check that the index and the files agree; with ``repair``, fix what can be:

    * an unreadable database file is moved aside (``*.corrupt-<time>``); an index is
      rebuilt from the metadata and extraction files, the extraction-reuse table from
      the extraction files; content and stored responses come back with the next crawl;
    * a page whose extraction file is missing or does not match is marked for
      re-extraction; a missing metadata file is written again from the record;
    * files no record points to are reported (``scrapy cache prune`` deletes them).
    """
    problems: list[Problem] = []
    moved: set[str] = set()
    if index_lost(directory):
        problem = Problem("corrupt_file", TABLE_FILES["pages"], "missing or empty while metadata/ holds records")
        if repair:
            index = directory / TABLE_FILES["pages"]
            problem.repaired = f"moved to {_move_aside(index).name}" if index.exists() else "will be rebuilt"
            moved.add("pages")
        problems.append(problem)
    for table, name in TABLE_FILES.items():
        if table in moved:
            continue
        path = directory / name
        try:
            check_sqlite_file(path)
        except Exception as exc:  # noqa: BLE001 - any failure to read is corruption here
            problem = Problem("corrupt_file", name, str(exc))
            if repair:
                problem.repaired = f"moved to {_move_aside(path).name}"
                moved.add(table)
            problems.append(problem)
    if any(p.kind == "corrupt_file" for p in problems) and not repair:
        return problems  # nothing more can be checked until it is repaired
    store = SqliteDocStore(directory, readonly=not repair, rebuilding="pages" in moved)
    try:
        if "pages" in moved:
            count = rebuild_index(store)
            problems.append(
                Problem("rebuilt", "index.sqlite", f"{count} pages from metadata and extraction files", "rebuilt")
            )
        if moved & {"pages", "inputs"}:
            rebuild_inputs(store)
        problems.extend(_check_records(store, repair))
    finally:
        store.close()
    return problems


def _check_records(store: SqliteDocStore, repair: bool) -> list[Problem]:
    problems = []
    known: set[str] = set()
    for url_hash, record in store.iter_pages():
        known.add(url_hash)
        extraction = record.get("extraction")
        changed = False
        if extraction:
            data = store.read_extraction(url_hash)
            if data is None or data.get("input_key") != extraction.get("input_key"):
                kind = "extraction_missing" if data is None else "extraction_mismatch"
                problem = Problem(kind, record.get("url", url_hash), f"extractions/{url_hash}.json")
                if repair:
                    record.pop("extraction", None)
                    record["invalidated"] = utcnow()
                    add_history(record, "invalidated", record["invalidated"], reason=kind)
                    changed = True
                    problem.repaired = "marked for re-extraction"
                problems.append(problem)
        if (extraction or record.get("status") == STATUS_REMOVED) and not store.metadata_path(url_hash).exists():
            problem = Problem("metadata_missing", record.get("url", url_hash), f"metadata/{url_hash}_meta.json")
            if repair:
                changed = True
                problem.repaired = "written again"
            problems.append(problem)
        if changed:
            store.put_page(url_hash, record)
            store.write_metadata(url_hash, metadata_of(url_hash, record))
    for sub in ("extractions", "metadata"):
        for path in sorted((store.directory / sub).glob("*.json")):
            if _file_hash(path) not in known:
                problems.append(Problem("orphan_file", f"{sub}/{path.name}", "no record points to it (prune)"))
    store.commit()
    return problems


def _json_files(directory: Path, pattern: str) -> Iterator[tuple[Path, dict[str, Any]]]:
    for path in sorted(directory.glob(pattern)):
        try:
            data = read_json(path)
        except (OSError, ValueError):
            logger.warning("Unreadable file %(path)s skipped", {"path": path})
            continue
        if isinstance(data, dict):
            yield path, data


def rebuild_index(store: SqliteDocStore) -> int:
    """Page records from ``metadata/*_meta.json``, completed by ``extractions/*.json``
    (seed 000: "index corruption: rebuild from existing extraction files")."""
    records: dict[str, dict[str, Any]] = {}
    for path, meta in _json_files(store.directory / "metadata", "*_meta.json"):
        url_hash = _file_hash(path)
        records[url_hash] = {k: v for k, v in meta.items() if k != "url_hash"}
    for path, data in _json_files(store.directory / "extractions", "*.json"):
        url_hash = _file_hash(path)
        record = records.setdefault(url_hash, {"url": data.get("url", ""), "status": "unchanged"})
        record.setdefault("title", data.get("title", ""))
        if "extraction" not in record and data.get("input_key"):
            extractor = data.get("extractor") or {}
            record["extraction"] = {
                "input_key": data["input_key"],
                "input_hash": data.get("input_hash"),
                "extractor": extractor.get("name"),
                "version": extractor.get("version"),
                "file": f"extractions/{url_hash}.json",
            }
            record.setdefault("last_extracted", data.get("extracted_at"))
    for url_hash, record in records.items():
        if "domain" not in record and record.get("url"):
            record["domain"] = url_domain(record["url"])
        store.put_page(url_hash, record)
    store.commit()
    return len(records)


def rebuild_inputs(store: SqliteDocStore) -> int:
    count = 0
    for path, data in _json_files(store.directory / "extractions", "*.json"):
        if data.get("input_key"):
            store.link_extraction(data["input_key"], _file_hash(path))
            count += 1
    store.commit()
    return count
