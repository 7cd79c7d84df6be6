"""``scrapy cache prune`` and ``verify``: what they change, said before they change it
(a crawl writing to the cache now, a lock held), on any store or on the embedded store's files."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from crawler.cache.errors import CacheMissingError
from crawler.cache.lock import CacheLock, CacheLockedError
from crawler.cache.maintenance import Problem, PrunePlan, apply_prune, plan_prune, verify

if TYPE_CHECKING:
    from crawler.cache.base import StoreBase
    from crawler.cache.ports import DocStore


def prune(store: DocStore, *, dry_run: bool) -> tuple[PrunePlan, dict[str, Any]]:
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
        problems = verify(directory, repair=False)  # reads only: no lock needed
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
        return verify(directory, repair=True), str(directory)
    finally:
        lock.release()
