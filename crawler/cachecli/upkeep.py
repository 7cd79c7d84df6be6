"""``scrapy cache invalidate``, ``prune`` and ``verify``: the sub-commands that change
the cache, under its lock (``prune --dry-run`` and ``verify`` without ``--repair`` read
only); what they change said before they change it (a crawl writing to the cache now,
a lock held), on any store or on the embedded store's files."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from scrapy.exceptions import UsageError

from crawler.cache import store_factory, using_store
from crawler.cache.errors import CacheMissingError
from crawler.cache.lock import CacheLock, CacheLockedError
from crawler.cache.maintenance import (
    INTERRUPTED,
    INTERRUPTED_PRUNE,
    INTERRUPTED_RUN,
    Problem,
    PrunePlan,
    apply_prune,
    plan_prune,
    verify_store,
)
from crawler.cache.maintenance import verify as verify_files
from crawler.cachecli.tables import print_json
from crawler.config import typed
from crawler.incremental.ledger import invalidate as invalidate_pages
from crawler.stages.spool import SPOOL, Spool
from crawler.support.plural import plural
from crawler.support.tables import table

if TYPE_CHECKING:
    import argparse

    from scrapy.settings import BaseSettings

    from crawler.cache.base import StoreBase
    from crawler.cache.ports import DocStore


def invalidate(settings: BaseSettings, opts: argparse.Namespace) -> int:
    if bool(opts.urls) + bool(opts.domain) + opts.all != 1:
        raise UsageError("cache invalidate: give URLs, or --domain D, or --all (one of them)")
    with using_store(settings, changes=True) as store:
        if opts.all:
            targets = [h for h, _ in store.query_pages()]
        elif opts.domain:
            targets = [h for d in opts.domain for h, _ in store.query_pages(domain=d)]
        else:
            targets, missing = [], []
            for url in opts.urls:
                found = store.find_page(url)
                (targets.append(found[0]) if found else missing.append(url))
            if missing:
                print("Not in the cache: " + ", ".join(missing), file=sys.stderr)
                return 1
        with store.transaction():
            count = invalidate_pages(store, targets)
    if opts.json:
        print_json({"invalidated": count})
    else:
        print(f"{count} page(s) marked: the next crawl that reaches them extracts them again.")
    return 0


def prune(settings: BaseSettings, opts: argparse.Namespace) -> int:
    # a dry run changes nothing: no lock, a crawl may be running
    with using_store(settings, changes=not opts.dry_run) as store:
        plan, summary = prune_store(store, dry_run=opts.dry_run)
    if opts.json:
        print_json({"dry_run": opts.dry_run, **summary})
        return 0
    verb = "Would delete" if opts.dry_run else "Deleted"
    print(
        f"{verb} {len(plan.removed_pages)} removed page(s), {len(plan.orphan_files)} unreferenced file(s), "
        f"{len(plan.temp_files)} temporary file(s), {len(plan.stale_inputs)} stale reuse entries, "
        f"{len(plan.orphan_renderings)} unreferenced rendering(s)."
    )
    for item in summary["removed_pages"][:20]:
        print(f"  page  {item['url']}")
    for path in (summary["orphan_files"] + summary["temp_files"])[:20]:
        print(f"  file  {path}")
    return 0


def verify(settings: BaseSettings, opts: argparse.Namespace) -> int:
    location = typed(settings).get("EXTRACTED_DOCS_DIR")
    if store_factory(settings).embedded:  # its files first: a damaged one keeps it from opening
        problems, where = verify_cache(location, repair=opts.repair)
    else:
        with using_store(settings, changes=opts.repair) as store:
            problems, where = verify_store(cast("StoreBase", store), repair=opts.repair), store.location
    # what a stopped run or prune left is no damage: the next run (or prune) ends it
    unrepaired = [p for p in problems if not p.repaired and p.kind not in INTERRUPTED]
    adopted = sum(p.kind == INTERRUPTED_RUN and not p.repaired for p in problems)
    pruning = sum(p.kind == INTERRUPTED_PRUNE and not p.repaired for p in problems)
    pending = len(Spool(location).load())  # answers the store refused, kept for the next run
    if opts.json:
        print_json(
            {
                "ok": not unrepaired,
                "problems": [vars(p) for p in problems],
                "interrupted": {"extractions_adopted": adopted + pending, "prune_pages": pruning},
            }
        )
        return 1 if unrepaired else 0
    if not problems:
        print(f"The cache in {where} is consistent: index and files agree.")
    else:
        print(
            table(
                ["problem", "page or file", "detail", "repair"],
                [[p.kind, p.target, p.detail, p.repaired or "-"] for p in problems],
            )
        )
    if adopted or pending:
        kept = f" ({pending} kept in {SPOOL}/: the store refused them)" if pending else ""
        print(
            f"\nInterrupted, not damaged: the next run adopts {plural(adopted + pending, 'extraction')}{kept} "
            "without an extractor call (same extractor)."
        )
    if pruning:
        print(
            f"\nInterrupted, not damaged: a prune was stopped while deleting {plural(pruning, 'removed page')}; "
            "the next `scrapy cache prune` ends it."
        )
    if unrepaired:
        print(
            f"\n{len(unrepaired)} problem(s) left: `scrapy cache verify --repair` fixes them "
            "(orphan files: `scrapy cache prune`)."
        )
    return 1 if unrepaired else 0


def prune_store(store: DocStore, *, dry_run: bool) -> tuple[PrunePlan, dict[str, Any]]:
    """What ``prune`` deletes (nothing with ``dry_run``) and its summary, on any store
    (through its ports)."""
    plan = plan_prune(cast("StoreBase", store))
    if not dry_run:
        apply_prune(cast("StoreBase", store), plan)
    elif store.is_locked_elsewhere():
        print(
            "Note: a crawl is writing to this cache now; what it has not committed yet "
            "(its temporary files, files not yet in the index) may be listed here.",
            file=sys.stderr,
        )
    return plan, plan.as_dict()


def verify_cache(location: str, *, repair: bool) -> tuple[list[Problem], str]:
    """The embedded store's files checked (and repaired, under the cache's lock); it
    works on the directory, not on an opened store: a damaged file keeps a store
    from opening, and repairing it is what this is for."""
    directory = Path(location)
    if not any((directory / name).exists() for name in ("cache.sqlite", "index.sqlite", "extractions")):
        raise CacheMissingError(f"No cache in {directory}: run a crawl first.")
    if not repair:
        problems = verify_files(directory, repair=False)  # reads only: no lock needed
        if problems and CacheLock(directory).is_locked_elsewhere():
            print(
                "Note: a crawl is writing to this cache now; its index catches up with its files "
                "at each commit, so some of these may be writes in progress.",
                file=sys.stderr,
            )
        return problems, str(directory)
    lock = CacheLock(directory)
    try:
        lock.acquire()
    except CacheLockedError as exc:
        raise CacheLockedError(f"{exc} Nothing was changed.") from None
    try:
        return verify_files(directory, repair=True), str(directory)
    finally:
        lock.release()
