"""What changed: ``scrapy cache ls --run`` (a run's change list, from its report) and
``scrapy cache diff`` (a page's last change, or each page a run changed, as diffs made
by :mod:`.diff`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scrapy.exceptions import UsageError

from crawler.cache import using_store
from crawler.cachecli.diff import run_diff, version_diff
from crawler.cachecli.find import find_page, find_run
from crawler.cachecli.tables import print_json
from crawler.support.tables import table

if TYPE_CHECKING:
    import argparse
    from collections.abc import Mapping

    from scrapy.settings import BaseSettings


def ls_run(settings: BaseSettings, opts: argparse.Namespace, limit: int | None) -> int:
    """``ls --run last|ID``: the run's change list, from its report."""
    others = [f"--{n.replace('_', '-')}" for n in ("domain", "since", "failed", "converter_pending", "empty",
                                                   "widened", "named_out") if getattr(opts, n)]  # fmt: skip
    if others:
        raise UsageError(f"cache ls --run lists a run's changes; it takes --status and --limit, not {others[0]}")
    with using_store(settings) as store:
        report = find_run(store, opts.run)
    changes = [c for c in report["changes"] if opts.status is None or c.get("status") == opts.status]
    more = limit is not None and len(changes) > limit
    changes = changes[:limit]
    if opts.json:
        print_json(changes)
        return 0
    if not changes:
        print(f"Run {report['run_id']} changed no page{'' if opts.status is None else f' ({opts.status})'}.")
        return 0
    rows = [
        [c.get("status"), (c.get("content_hash") or "")[:12], c.get("extraction_file") or "", c.get("url")]
        for c in changes
    ]
    print(table(["status", "content hash", "extraction file", "url"], rows))
    if more and limit is not None:
        print(f"... more pages changed: --limit {limit * 2} or --limit 0 for all")
    return 0


def diff(settings: BaseSettings, opts: argparse.Namespace) -> int:
    if (opts.url is None) == (opts.run is None):
        raise UsageError("cache diff: give a URL or --run last|ID (one of them)")
    if opts.run is not None:
        return diff_run(settings, opts)
    with using_store(settings) as store:
        found = find_page(store, opts.url)
        if found is None:
            return 1
        url_hash, record = found
        content: Mapping[str, Any] = store.get_content(url_hash) or {}
    previous = content.get("previous")
    if not previous:
        message = f"Only one version of {record.get('url')} is stored: it has not changed since it was first crawled."
        print_json({"url": record.get("url"), "diff": None, "message": message}) if opts.json else print(message)
        return 0
    text = version_diff(record.get("url"), previous, content)
    if opts.json:
        print_json(
            {
                "url": record.get("url"),
                "from": previous.get("stored_at"),
                "to": content.get("stored_at"),
                "diff": text,
            }
        )
    else:
        print(text if text.endswith("\n") else text + "\n", end="")
    return 0


def diff_run(settings: BaseSettings, opts: argparse.Namespace) -> int:
    """``diff --run last|ID``: each page the run changed, as a diff of the version
    before the run and the run's own (while the cache still holds both: the run's is
    the page's last change); its new and removed pages named."""
    entries = []
    with using_store(settings) as store:
        report = find_run(store, opts.run)
        for change in report["changes"]:
            content: Mapping[str, Any] = store.get_content(str(change.get("url_hash"))) or {}
            entries.append(run_diff(change, content))
    if opts.json:
        print_json({"run_id": report["run_id"], "pages": entries})
        return 0
    if not entries:
        print(f"Run {report['run_id']} changed no page.")
    for entry in entries:
        if entry["diff"]:
            print(entry["diff"] if entry["diff"].endswith("\n") else entry["diff"] + "\n", end="")
        else:
            print(f"# {entry['status']}: {entry['url']}: {entry['message']}")
    return 0
