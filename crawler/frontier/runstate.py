"""A run of the shared frontier as Redis holds it: its keys, and what its workers did.

``RunState(redis, run)`` reads a run's state without taking part in it (the processing
of a run, a cron job, a test): its workers (running, finished with a reason, failed, or
dead: a lease that expired without an outcome), whether its frontier is empty, and
whether the run is complete or partial.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import redis

#: seconds a run's keys outlive its last activity: every key expires, so the next
#: run (another FRONTIER_RUN) starts with an empty seen set and the old one is gone
RUN_TTL = 3 * 24 * 3600


def utc_now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass(frozen=True)
class RunKeys:
    """The Redis keys of the run ``run``, all under ``frontier:{run}:``.

    >>> RunKeys("20261124").requests
    'frontier:20261124:requests'
    >>> RunKeys("r1").lease("host:42:ab12cd")
    'frontier:r1:lease:host:42:ab12cd'
    """

    run: str

    @property
    def prefix(self) -> str:
        return f"frontier:{self.run}:"

    @property
    def requests(self) -> str:
        """scrapy-redis's PriorityQueue (a sorted set of pickled requests)."""
        return self.prefix + "requests"

    @property
    def seen(self) -> str:
        """The duplicate filter: a set of page keys (20 bytes each)."""
        return self.prefix + "seen"

    @property
    def reached(self) -> str:
        """Page keys a response came for (the redirect check)."""
        return self.prefix + "reached"

    @property
    def started(self) -> str:
        """The worker that made the start requests (SET NX)."""
        return self.prefix + "started"

    @property
    def workers(self) -> str:
        """worker id -> its record (JSON)."""
        return self.prefix + "workers"

    @property
    def inflight(self) -> str:
        """worker id -> requests it took from the queue since it was last idle."""
        return self.prefix + "inflight"

    @property
    def lastmods(self) -> str:
        """The sitemaps' lastmods (url_hash -> lastmod), for the revisit schedule."""
        return self.prefix + "lastmods"

    @property
    def trust(self) -> str:
        """Each host's revisit trust as the run first read it (domain -> JSON)."""
        return self.prefix + "trust"

    def lease(self, worker: str) -> str:
        return f"{self.prefix}lease:{worker}"

    def run_keys(self) -> list[str]:
        """The keys that expire RUN_TTL after the run's last activity (leases expire on their own)."""
        return [
            self.requests,
            self.seen,
            self.reached,
            self.started,
            self.workers,
            self.inflight,
            self.lastmods,
            self.trust,
        ]


@dataclass(frozen=True)
class Worker:
    """One crawl process of a run: ``state`` is ``running``, ``finished`` (``reason``:
    Scrapy's finish reason), ``failed``, or ``dead`` (its lease expired while running:
    killed, or its machine gone)."""

    worker: str
    state: str
    reason: str | None
    host: str
    pid: int
    started_at: str
    finished_at: str | None
    in_flight: int


class RunState:
    """The state of the run ``run`` on the Redis ``server`` (read only)."""

    def __init__(self, server: redis.Redis, run: str) -> None:
        self.server = server
        self.keys = RunKeys(run)

    @classmethod
    def from_url(cls, url: str, run: str) -> RunState:
        import redis

        return cls(redis.Redis.from_url(url), run)

    def workers(self) -> list[Worker]:
        """Every worker that joined the run, in the order they started."""
        records: dict[bytes, bytes] = self.server.hgetall(self.keys.workers)  # type: ignore[assignment]
        inflight = self._inflight()
        ids = sorted(records)
        pipe = self.server.pipeline(transaction=False)
        for worker in ids:
            pipe.exists(self.keys.lease(worker.decode()))
        alive = pipe.execute()
        found = []
        for worker, live in zip(ids, alive, strict=True):
            record: dict[str, Any] = json.loads(records[worker])
            state = record.get("state", "running")
            if state == "running" and not live:
                state = "dead"
            name = worker.decode()
            found.append(
                Worker(
                    worker=name,
                    state=state,
                    reason=record.get("reason"),
                    host=str(record.get("host", "")),
                    pid=int(record.get("pid", 0)),
                    started_at=str(record.get("started_at", "")),
                    finished_at=record.get("finished_at"),
                    in_flight=inflight.get(name, 0) if state == "running" else 0,
                )
            )
        return sorted(found, key=lambda w: (w.started_at, w.worker))

    def queued(self) -> int:
        """Requests waiting in the run's queue."""
        return int(self.server.zcard(self.keys.requests))

    def started(self) -> bool:
        """Whether a worker has made the run's start requests."""
        return bool(self.server.exists(self.keys.started))

    def frontier_empty(self, ignore: str | None = None) -> bool:
        """No request waits in the queue and no live worker (but ``ignore``) has one in
        flight: nothing more will be found in this run."""
        pipe = self.server.pipeline(transaction=True)  # one snapshot of both
        pipe.zcard(self.keys.requests)
        pipe.hgetall(self.keys.inflight)
        queued, inflight = pipe.execute()
        if queued:
            return False
        busy = [w.decode() for w, n in inflight.items() if int(n) > 0 and w.decode() != ignore]
        if not busy:
            return True
        pipe = self.server.pipeline(transaction=False)
        for worker in busy:
            pipe.exists(self.keys.lease(worker))
        return not any(pipe.execute())

    def running(self) -> bool:
        return any(w.state == "running" for w in self.workers())

    def complete(self) -> bool:
        """Every worker finished with reason ``finished`` and the frontier is empty:
        every page of the run was reached."""
        workers = self.workers()
        done = all(w.state == "finished" and w.reason == "finished" for w in workers)
        return bool(workers) and done and self.frontier_empty()

    def partial(self) -> bool:
        """No worker runs any more, and the run is not complete (a worker died, failed,
        or closed for another reason: its pages may be missing)."""
        workers = self.workers()
        return bool(workers) and not any(w.state == "running" for w in workers) and not self.complete()

    def _inflight(self) -> dict[str, int]:
        raw: dict[bytes, bytes] = self.server.hgetall(self.keys.inflight)  # type: ignore[assignment]
        return {k.decode(): int(v) for k, v in raw.items()}
