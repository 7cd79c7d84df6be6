"""``scrapy cache stats``: the cache's pages, extractions, disk, recent runs, domains
and each host's change signals."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scrapy.exceptions import UsageError

from crawler.cache import using_store
from crawler.cachecli.tables import host_signals, print_json, print_runs, run_summary, signal_cell
from crawler.config import typed
from crawler.incremental.revisit import RevisitPolicy
from crawler.statuses import STATUSES
from crawler.support.plural import plural
from crawler.support.tables import human_bytes, table

if TYPE_CHECKING:
    import argparse

    from scrapy.settings import BaseSettings


def stats(settings: BaseSettings, opts: argparse.Namespace) -> int:
    with using_store(settings) as store:
        statuses = store.status_counts()
        data: dict[str, Any] = {
            "directory": store.location,
            "pages": sum(statuses.values()),
            "statuses": {s: statuses.get(s, 0) for s in STATUSES},
            "extractions": store.extraction_counts(),
            "disk_bytes": store.size_on_disk(),  # None: a store without a directory
            "runs": [run_summary(r) for r in store.run_reports(opts.runs)],
            "domains": store.domain_summary(),
        }
        # each host's change signals, as the revisit schedule learnt them
        data["signals"] = host_signals(store, trust_policy(settings), [d["domain"] for d in data["domains"]])
    if opts.json:
        print_json(data)
        return 0
    where = data["directory"]
    if not data["pages"] and not data["runs"]:
        print(f"The cache in {where} is empty: no page recorded yet.")
        return 0
    if not data["pages"]:
        # runs that recorded nothing (every page failed): they, not "empty", are the news
        print(f"Cache {where}: no page recorded yet (`scrapy cache ls --failed` lists the last run's failures)")
        print_runs(data["runs"])
        return 0
    disk = dict(data["disk_bytes"] or {})
    about = "about " if disk.pop("approximate", False) else ""
    ext = data["extractions"]
    domains = len(data["domains"])
    on_disk = f", {about}{human_bytes(sum(disk.values()))} on disk" if disk else ""
    print(f"Cache {where}: {plural(data['pages'], 'page', grouped=True)} on {plural(domains, 'domain')}{on_disk}")
    print("  " + "  ".join(f"{s} {n:,}" for s, n in data["statuses"].items()))
    print(
        f"  extractions {ext['extracted']:,}, failed {ext['failed']:,}, marked for re-extraction {ext['invalidated']:,}"
    )
    if disk:
        print("  disk: " + ", ".join(f"{part} {human_bytes(size)}" for part, size in disk.items()))
    print_runs(data["runs"])
    print("\nDomains:")
    rows = [
        [d["domain"], d["pages"], d["removed"], d["extracted"], d["failed"], d["last_seen"], d["last_changed"]]
        for d in data["domains"]
    ]
    print(
        table(
            ["domain", "pages", "removed", "extracted", "failed", "last seen", "last changed"],
            rows,
            right=range(1, 5),
        )
    )
    if data["signals"]:
        print("\nChange signals (revisit schedule; agree/noisy/stale observations):")
        rows = [
            [domain, *(signal_cell(signals[name]) for name in ("lastmod", "etag", "last_modified"))]
            for domain, signals in data["signals"].items()
        ]
        print(table(["domain", "lastmod", "ETag", "Last-Modified"], rows))
    return 0


def trust_policy(settings: BaseSettings) -> RevisitPolicy:
    """What the revisit schedule trusts (``REVISIT_TRUST_EVIDENCE``)."""
    try:
        return RevisitPolicy(trust_evidence=typed(settings).getint("REVISIT_TRUST_EVIDENCE"))
    except ValueError as exc:
        raise UsageError(str(exc)) from None
