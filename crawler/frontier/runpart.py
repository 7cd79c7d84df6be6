"""What the crawl processes of a shared-frontier run found, gathered for its one processing.

Each process of a run records its pages in the shared store, and, once they are
committed, its *part* of the run in Redis (:func:`write_part`): the pages it recorded,
those it found gone (404/410), the domains it crawled, the pages a request asked to be
extracted again, why it may have missed pages, and the stored pages its spider's scope
leaves out. ``scrapy process --run ID`` reads the union of the parts
(:func:`read_run`) when every process has finished or died, and runs the stages once
for the whole run: removal only when the run is complete.

The processing of a run is claimed (``SET NX``, with an expiry: a processing that
died frees it) and marked done, so that it runs once however many processes or cron
jobs ask for it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from crawler.frontier.runstate import RUN_TTL, RunKeys, RunState
from crawler.support.plural import plural

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    import redis

#: the sets of a run's parts, under ``frontier:{run}:part:``
PART_SETS = (
    "pages",
    "gone",
    "domains",
    "forced",
    "reasons",
    "out_of_scope",
    "revisit_skipped",
    "revisit_sampled",
    "revisit_oldest",
    "broken_links",
)
#: the stats of the crawl processes added up for the run's report (what they fetched
#: and recorded: the processing itself fetches and records nothing)
COUNTED_STATS = (
    "pages/",
    "revalidation/",
    "revisit/",
    "docs/",
    "converter/",
    "render/",
    "downloader/response_status_count/",
)
#: seconds a claim on a run's processing lasts without being renewed (the processing
#: renews it every third of that: a processing killed frees the run that soon)
PROCESSING_CLAIM_SECONDS = 60
#: claims the run's processing in one step: 1 and the report when it was processed,
#: 0 when claimed now, 2 and the holder when another processing holds it
CLAIM = """
local done = redis.call('GET', KEYS[1])
if done then return {1, done} end
if redis.call('SET', KEYS[2], ARGV[1], 'NX', 'EX', ARGV[2]) then return {0, ''} end
return {2, redis.call('GET', KEYS[2]) or ''}
"""
#: renews the claim, if ``owner`` still holds it
RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('EXPIRE', KEYS[1], ARGV[2]) end
return 0
"""
#: ends the claim of ``owner`` (never another's): processed (the report) or released
FINISH = """
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return 0 end
if ARGV[2] ~= '' then redis.call('SET', KEYS[1], ARGV[2], 'EX', ARGV[3]) end
redis.call('DEL', KEYS[2])
return 1
"""


def part_key(keys: RunKeys, name: str) -> str:
    """The key of one of the run's part sets.

    >>> part_key(RunKeys("r1"), "pages")
    'frontier:r1:part:pages'
    """
    return f"{keys.prefix}part:{name}"


@dataclass
class RunPart:
    """What one crawl process (or, read back, the whole run) found."""

    #: url_hash of every page recorded
    pages: set[str] = field(default_factory=set)
    #: url_hash of the pages found gone (404/410)
    gone: set[str] = field(default_factory=set)
    domains: set[str] = field(default_factory=set)
    #: url_hash of the pages whose request asked to be extracted again
    forced: set[str] = field(default_factory=set)
    #: why a process may not have reached every page
    reasons: set[str] = field(default_factory=set)
    #: URLs of stored pages of the crawled domains that the spider's scope leaves out
    out_of_scope: set[str] = field(default_factory=set)
    #: the processes' counts (:data:`COUNTED_STATS`), added up
    counts: dict[str, int] = field(default_factory=dict)
    #: url_hash of the pages the revisit schedule skipped, of those it sampled
    revisit_skipped: set[str] = field(default_factory=set)
    revisit_sampled: set[str] = field(default_factory=set)
    #: the oldest check of a page skipped, one per process (ISO times)
    revisit_oldest: set[str] = field(default_factory=set)
    #: the revisit schedule's observations and sampled changes
    #: (:meth:`crawler.incremental.revisit.RevisitRun.tally`), added up: reported, never
    #: added to a host's trust again (each process added its own)
    revisit_tally: dict[str, int] = field(default_factory=dict)
    #: the broken links each process listed (:func:`broken_link_member`)
    broken_links: set[str] = field(default_factory=set)

    def broken_link_entries(self) -> list[tuple[str, int, str | None]]:
        """The broken links the processes listed, ``(url, status, linked_from)``, by URL."""
        return sorted(tuple(json.loads(member)) for member in self.broken_links)


def broken_link_member(link: dict[str, Any]) -> str:
    """A broken link of a process's report as a member of the run's set.

    >>> part = RunPart(broken_links={broken_link_member({"url": "http://a/x", "status": 404, "linked_from": None})})
    >>> part.broken_link_entries()
    [('http://a/x', 404, None)]
    """
    return json.dumps([link["url"], link["status"], link["linked_from"]])


def counted(stats: dict[str, object]) -> dict[str, int]:
    """The stats of a crawl process that its run's report adds up.

    >>> counted({"pages/new": 3, "extraction/calls": 2, "revalidation/not_modified": 1, "start_time": "x"})
    {'pages/new': 3, 'revalidation/not_modified': 1}
    """
    return {
        name: int(value)
        for name, value in stats.items()
        if name.startswith(COUNTED_STATS) and isinstance(value, int | float) and not isinstance(value, bool)
    }


def out_of_scope(urls: Iterable[str], in_scope: Callable[[str], bool] | None) -> set[str]:
    """The URLs among ``urls`` the spider's scope hook leaves out (none without one).

    >>> sorted(out_of_scope(["/a", "/blog/b"], lambda url: "/blog/" not in url))
    ['/blog/b']
    >>> out_of_scope(["/a"], None)
    set()
    """
    if in_scope is None:
        return set()
    return {url for url in urls if not in_scope(url)}


def write_part(server: redis.Redis, keys: RunKeys, part: RunPart) -> None:
    """Add ``part`` to the run's sets, in one transaction (a reader sees all of it or
    none), before the process records that it finished."""
    pipe = server.pipeline(transaction=True)
    for name in PART_SETS:
        members = sorted(getattr(part, name))
        key = part_key(keys, name)
        for start in range(0, len(members), 10_000):
            pipe.sadd(key, *members[start : start + 10_000])
        pipe.expire(key, RUN_TTL)
    for hash_name, counts in (("counts", part.counts), ("revisit_tally", part.revisit_tally)):
        for name, value in counts.items():
            pipe.hincrby(part_key(keys, hash_name), name, value)
        pipe.expire(part_key(keys, hash_name), RUN_TTL)
    pipe.execute()


def read_run(server: redis.Redis, keys: RunKeys) -> RunPart:
    """The union of every part written for the run."""
    pipe = server.pipeline(transaction=True)
    for name in PART_SETS:
        pipe.smembers(part_key(keys, name))
    pipe.hgetall(part_key(keys, "counts"))
    pipe.hgetall(part_key(keys, "revisit_tally"))
    *found, counts, tally = pipe.execute()
    sets = {name: {m.decode() for m in members} for name, members in zip(PART_SETS, found, strict=True)}
    return RunPart(
        pages=sets["pages"],
        gone=sets["gone"],
        domains=sets["domains"],
        forced=sets["forced"],
        reasons=sets["reasons"],
        out_of_scope=sets["out_of_scope"],
        counts={name.decode(): int(value) for name, value in counts.items()},
        revisit_skipped=sets["revisit_skipped"],
        revisit_sampled=sets["revisit_sampled"],
        revisit_oldest=sets["revisit_oldest"],
        revisit_tally={name.decode(): int(value) for name, value in tally.items()},
        broken_links=sets["broken_links"],
    )


def run_gaps(state: RunState, part: RunPart) -> list[str]:
    """Why the run may have missed pages (empty: it is complete), said in its report: a
    process dead, failed or closed for another reason than ``finished``, requests left
    in the queue, what the processes noted."""
    workers = state.workers()
    reasons = sorted(part.reasons)
    if not workers:
        reasons.append("no crawl process joined the run")
    for worker in workers:
        if worker.state == "dead":
            reasons.append(f"crawl process {worker.worker} died (its lease expired)")
        elif worker.state == "failed":
            reasons.append(f"crawl process {worker.worker} failed: {worker.reason}")
        elif worker.state == "finished" and worker.reason != "finished":
            reasons.append(f"crawl process {worker.worker} closed: {worker.reason}")
    queued = state.queued()
    if queued:
        reasons.append(f"{plural(queued, 'request was', 'requests were')} left in the run's queue")
    return reasons


def processed_key(keys: RunKeys) -> str:
    return f"{keys.prefix}processed"


def processing_key(keys: RunKeys) -> str:
    return f"{keys.prefix}processing"


def claim_processing(server: redis.Redis, keys: RunKeys, owner: str) -> tuple[str, str]:
    """Claim the run's processing for ``owner``, atomically: ``("claimed", "")``,
    ``("processed", report)`` when it was processed, or ``("held", holder)`` while
    another processing holds it."""
    state, value = server.register_script(CLAIM)(
        keys=[processed_key(keys), processing_key(keys)], args=[owner, PROCESSING_CLAIM_SECONDS]
    )
    text = _text(value)
    return {0: ("claimed", ""), 1: ("processed", text)}.get(int(state), ("held", text or "another process"))


def renew_processing(server: redis.Redis, keys: RunKeys, owner: str) -> bool:
    """Keep ``owner``'s claim for another :data:`PROCESSING_CLAIM_SECONDS`; False when
    it lost it (it expired: another processing may have taken the run)."""
    return bool(server.register_script(RENEW)(keys=[processing_key(keys)], args=[owner, PROCESSING_CLAIM_SECONDS]))


def finish_processing(server: redis.Redis, keys: RunKeys, owner: str, report: str | None) -> None:
    """``owner``'s processing ended: done (``report``, its report's id) or not
    (``None``: the run may be processed again). Another's claim is left alone."""
    server.register_script(FINISH)(
        keys=[processed_key(keys), processing_key(keys)], args=[owner, report or "", RUN_TTL]
    )


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value
