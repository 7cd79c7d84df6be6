"""Do the vector store and the cache agree? Which points and pages drifted, and the repair."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from crawler.cache.records import STATUS_REMOVED, page_text
from crawler.lib.chunking import chunk_markdown
from crawler.vectors.sync import PageInput

if TYPE_CHECKING:
    from crawler.cache.ports import PagePort
    from crawler.vectors.sync import VectorSyncer


@dataclass
class Drift:
    """What ``verify`` found: problems, the pages to re-sync and the points to delete."""

    problems: list[dict[str, Any]] = field(default_factory=list)
    resync: list[PageInput] = field(default_factory=list)
    delete: list[str] = field(default_factory=list)
    #: removed pages that still have points: url_hash -> their point ids
    removed: dict[str, list[str]] = field(default_factory=dict)
    pages: int = 0
    points: int = 0

    @property
    def removed_points(self) -> int:
        return sum(len(ids) for ids in self.removed.values())

    def add(self, kind: str, target: str, detail: str) -> None:
        self.problems.append({"kind": kind, "target": target, "detail": detail})


def find_drift(docs: PagePort, syncer: VectorSyncer, *, use_clean: bool = True) -> Drift:
    """Compare every live page's expected points (its chunks' ids under the current
    settings and embedder) with the store's points, page by page."""
    drift = Drift()
    stored: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
    for point_id, payload in syncer.store.iter_points():
        stored[str(payload.get("url_hash", ""))][point_id] = payload
        drift.points += 1
    known: set[str] = set()
    for url_hash, record in docs.iter_pages():
        known.add(url_hash)
        moved_from = record.get("vectors", {}).get("moved_from")
        if moved_from and stored.get(moved_from):  # a page re-keyed by the migration of an older cache
            known.add(moved_from)
            drift.add(
                "re-keyed page",
                record.get("url", url_hash),
                f"{len(stored[moved_from])} point(s) under its key before the cache's migration: --repair "
                "(or the next vector sync) moves them, without embedding",
            )
            continue
        if record.get("status") == STATUS_REMOVED:
            if stored.get(url_hash):
                drift.removed[url_hash] = list(stored[url_hash])
            continue
        content = docs.get_content(url_hash)
        if content is None:
            continue
        drift.pages += 1
        page = PageInput(
            url_hash, record.get("url", ""), page_text(content, use_clean), record.get("title", "") or "",
            record.get("domain", "") or "",
        )  # fmt: skip
        expected = {chunk.point_id(url_hash) for chunk in chunk_markdown(page.text, syncer.target)}
        have = stored.get(url_hash, {})
        missing = expected - set(have)
        extra = set(have) - expected
        stale = [i for i in expected & set(have) if have[i].get("embedder") != syncer.key]
        if missing:
            drift.add("missing points", page.url, f"{len(missing)} of {len(expected)} chunks have no point")
        if extra:
            drift.add("stale points", page.url, f"{len(extra)} point(s) of text the page no longer has")
        if stale:
            drift.add("other embedder", page.url, f"{len(stale)} point(s) not made by {syncer.key}")
        if missing or extra or stale:
            drift.resync.append(page)
    for url_hash, points in stored.items():
        if url_hash not in known:
            drift.add("unknown page", url_hash or "(no url_hash)", f"{len(points)} point(s) of a page not in the cache")
            drift.delete.extend(points)
    return drift
