"""The shared frontier: N ``scrapy crawl`` processes of one run share one request queue
and one duplicate filter in Redis (``FRONTIER_ENABLED``).

:class:`Frontier` is one crawl process's place in a run (a *worker*): the Redis
connection, the run's keys (:class:`~crawler.frontier.runstate.RunKeys`) and the few
writes the components make. The components: the scheduler adapter
(:mod:`crawler.frontier.scheduler`), the run's duplicate filter
(:mod:`crawler.frontier.dupefilter`), the start requests made once per run
(:mod:`crawler.frontier.start`) and the worker's lease and closing
(:mod:`crawler.frontier.worker`). What a run looks like from outside:
:class:`crawler.frontier.runstate.RunState`.
"""

from __future__ import annotations

import json
import logging
import os
import re
import socket
import time
import uuid
import weakref
from typing import TYPE_CHECKING, Any

from scrapy.exceptions import NotConfigured

from crawler.config import typed
from crawler.frontier.runstate import RUN_TTL, RunKeys, RunState, utc_now
from crawler.support import secrets

if TYPE_CHECKING:
    from collections.abc import Callable

    import redis
    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)

#: a run id: what a key may hold safely (a date, a name)
RUN_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,99}$")

#: pops the head of the run's queue (scrapy-redis's PriorityQueue: a sorted set, the
#: same ZRANGE + ZREMRANGEBYRANK as its pop) and counts it in flight for this worker,
#: in one step: no peer sees the queue empty and this request nowhere
POP = """
local item = redis.call('ZRANGE', KEYS[1], 0, 0)
if #item == 0 then return false end
redis.call('ZREMRANGEBYRANK', KEYS[1], 0, 0)
redis.call('HINCRBY', KEYS[2], ARGV[1], 1)
redis.call('EXPIRE', KEYS[2], ARGV[2])
return item[1]
"""
#: the first worker of a run to ask makes the start requests, and counts as busy
#: (in flight) from that moment, so that no peer closes before they are queued
CLAIM_START = """
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'EX', ARGV[2]) then
  redis.call('HINCRBY', KEYS[2], ARGV[1], 1)
  redis.call('EXPIRE', KEYS[2], ARGV[2])
  return 1
end
return 0
"""

#: why a process's own cache must not mark unreached pages removed: the run's pages are
#: spread across its processes (the run's processing decides, from the run's state)
PART_OF_RUN = "shared frontier: this process crawled part of the run"
#: a process that found the run's frontier empty and was given no request: not a failure
NO_REQUEST = "shared frontier: no request was left for this process"
#: the crawl's close reason when a call to the run's Redis failed
FRONTIER_LOST = "frontier_lost"

_FRONTIERS: weakref.WeakKeyDictionary[Crawler, Frontier] = weakref.WeakKeyDictionary()


class FrontierError(Exception):
    """The shared frontier cannot be used (Redis unreachable): the message says which server."""


def redis_url() -> str:
    """The Redis URL from the environment variable ``FRONTIER_REDIS_URL`` (never a
    settings value: a URL may hold a password)."""
    url = os.environ.get(secrets.REDIS_URL_ENV, "")
    if not url:
        raise ValueError(
            f"FRONTIER_ENABLED needs the Redis URL in the environment variable {secrets.REDIS_URL_ENV}, "
            f"e.g. {secrets.REDIS_URL_ENV}=redis://127.0.0.1:6379/0"
        )
    return url


def connect(url: str) -> redis.Redis:
    """A Redis client for ``url`` that has answered a PING; :class:`FrontierError` else."""
    import redis
    from redis.backoff import NoBackoff
    from redis.retry import Retry

    # never resent: a pop or an SADD sent twice after a late reply takes a second
    # request, or calls a new page seen; a failed call is said (Frontier.errors) instead
    secrets.register_connection(url, "the frontier's Redis password")
    client = redis.Redis.from_url(
        url, socket_timeout=30, socket_connect_timeout=10, retry_on_timeout=False, retry=Retry(NoBackoff(), 0)
    )
    try:
        client.ping()
    except redis.RedisError as exc:
        raise FrontierError(f"The frontier's Redis at {mask(url)} does not answer: {mask(str(exc))}") from None
    return client


def mask(url: str) -> str:
    """``url`` without its credentials (:func:`crawler.support.secrets.mask_credentials`).

    >>> mask("redis://:secret@10.0.0.5:6379/0")
    'redis://***@10.0.0.5:6379/0'
    >>> mask("redis://:Redis@PW@127.0.0.1:6379/0")
    'redis://***@127.0.0.1:6379/0'
    >>> mask("redis://127.0.0.1:6379/0")
    'redis://127.0.0.1:6379/0'
    """
    return secrets.mask_credentials(url)


class Frontier:
    """One crawl process (a worker) of the run ``run`` on the Redis ``server``.

    ``Frontier.from_crawler(crawler)`` is the crawl's one instance (the scheduler, the
    duplicate filter, the start middleware and the worker extension share it); it
    raises ``NotConfigured`` unless ``FRONTIER_ENABLED``, and ``ValueError`` naming the
    setting or the environment variable that is missing.
    """

    def __init__(self, server: redis.Redis, run: str, lease_seconds: float, worker: str | None = None) -> None:
        if not RUN_RE.match(run):
            raise ValueError(f"FRONTIER_RUN must be letters, digits, '.', '_', ':' or '-', got {run!r}")
        if lease_seconds <= 0:
            raise ValueError(f"FRONTIER_LEASE_SECONDS must be more than 0, got {lease_seconds!r}")
        self.server = server
        self.run = run
        self.keys = RunKeys(run)
        self.state = RunState(server, run)
        self.lease_seconds = lease_seconds
        self.worker = worker or f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"
        self.started_at = utc_now()
        #: pages this worker reached since it was last idle (see :meth:`mark_reached`)
        self.reached: set[bytes] = set()
        #: the frontier's calls that failed: a request may be lost, the run is partial
        self.errors: list[str] = []
        #: why the run's Redis can no longer be used (its first failed call); None while
        #: it answers. Once lost, no call is made to it again: the crawl stops
        self.lost: str | None = None
        #: called once, with the message, when a call first fails (the worker stops the crawl)
        self.on_lost: Callable[[str], None] | None = None
        self._pop = server.register_script(POP)
        self._claim_start = server.register_script(CLAIM_START)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Frontier:
        frontier = _FRONTIERS.get(crawler)
        if frontier is not None:
            return frontier
        settings = typed(crawler.settings)
        if not settings.getbool("FRONTIER_ENABLED"):
            raise NotConfigured("the shared frontier is off (FRONTIER_ENABLED)")
        run = str(settings.get("FRONTIER_RUN") or "")
        if not run:
            raise ValueError(
                "FRONTIER_ENABLED needs the run's id in FRONTIER_RUN (the same for every process of a run)"
            )
        lease = settings.getfloat("FRONTIER_LEASE_SECONDS")
        frontier = _FRONTIERS[crawler] = cls(connect(redis_url()), run, lease)
        return frontier

    # -- the queue and the seen set ------------------------------------------

    def pop(self) -> bytes | None:
        """The encoded request at the head of the run's queue, now in flight for this
        worker; ``None`` when the queue is empty (or Redis is lost)."""
        if self.lost is not None:
            return None
        try:
            data = self._pop(keys=[self.keys.requests, self.keys.inflight], args=[self.worker, RUN_TTL])
        except Exception as exc:  # noqa: BLE001 - a Redis error: the crawl stops, the run is partial
            self.failed("taking a request from the run's queue", exc)
            return None
        return data if isinstance(data, bytes) else None

    def see(self, fingerprint: bytes) -> bool:
        """Add ``fingerprint`` to the run's seen set; whether it was there already (a
        Redis error: not, and the crawl stops)."""
        if self.lost is not None:
            return False
        pipe = self.server.pipeline(transaction=False)
        pipe.sadd(self.keys.seen, fingerprint)
        pipe.expire(self.keys.seen, RUN_TTL)
        pipe.expire(self.keys.requests, RUN_TTL)  # pushed next: its TTL is kept fresh here
        try:
            added, _, _ = pipe.execute()
        except Exception as exc:  # noqa: BLE001 - a Redis error: the crawl stops, the run is partial
            self.failed("recording a request in the run's seen set", exc)
            return False
        return int(added) == 0

    def failed(self, what: str, exc: BaseException) -> None:
        """A call to the run's Redis failed: the frontier is lost (said once, the first
        failure), no call is made to it again, :attr:`on_lost` stops the crawl and the
        run is partial. Not retried: a request popped or a page seen may or may not
        have reached Redis, and a peer may already be waiting on this worker's lease."""
        message = f"the frontier's Redis failed {what} ({type(exc).__name__}: {mask(str(exc))})"
        self.errors.append(message)
        if self.lost is not None:
            logger.debug("%(message)s", {"message": message})
            return
        self.lost = message
        logger.error("%(message)s: stopping the crawl, the run is partial", {"message": message})
        if self.on_lost is not None:
            self.on_lost(message)

    def call(self, what: str, function: Callable[[], Any], default: Any = None) -> Any:
        """``function()`` (a call to the run's Redis); ``default`` when the frontier is
        lost, or when the call fails (:meth:`failed`)."""
        if self.lost is not None:
            return default
        try:
            return function()
        except Exception as exc:  # noqa: BLE001 - a Redis error of any kind: the frontier is lost
            self.failed(what, exc)
            return default

    def mark_reached(self, fingerprints: list[bytes]) -> None:
        """Pages a response came for (the redirect check reads them): written to the
        run's set at :meth:`settle`, in one go, before this worker's in-flight count
        goes (a peer that finds the frontier empty finds them all)."""
        self.reached.update(fingerprints)

    def reached_among(self, fingerprints: list[bytes]) -> set[bytes]:
        """Those of ``fingerprints`` a response came for, in this worker or another
        (this worker's only, once the frontier is lost)."""
        found = self.call(
            "reading the pages reached",
            lambda: self.server.smismember(self.keys.reached, fingerprints),
            [False] * len(fingerprints),
        )
        return {fp for fp, hit in zip(fingerprints, found, strict=True) if hit or fp in self.reached}

    # -- the run's start and end ---------------------------------------------

    def claim_start(self) -> bool:
        """Whether this worker is the run's first to ask: it makes the start requests."""
        return bool(
            self.call(
                "claiming the run's start",
                lambda: self._claim_start(keys=[self.keys.started, self.keys.inflight], args=[self.worker, RUN_TTL]),
                False,
            )
        )

    def settle(self) -> None:
        """This worker is idle: every request it took is done and what it found is
        queued; nothing of it is in flight any more."""
        pipe = self.server.pipeline(transaction=True)
        if self.reached:
            pipe.sadd(self.keys.reached, *self.reached)
            pipe.expire(self.keys.reached, RUN_TTL)
        pipe.hdel(self.keys.inflight, self.worker)
        pipe.execute()
        self.reached.clear()

    def drained(self) -> bool:
        """The run's queue is empty and no other live worker has a request in flight
        (asked by an idle worker: its own are done)."""
        return self.state.frontier_empty(ignore=self.worker)

    # -- the worker's record and lease ---------------------------------------

    def register(self) -> None:
        self._record({"state": "running"})
        self.renew()

    def renew(self) -> None:
        """Renew this worker's lease and the run's keys' time to live."""
        pipe = self.server.pipeline(transaction=False)
        pipe.set(self.keys.lease(self.worker), self.worker, px=int(self.lease_seconds * 1000))
        for key in self.keys.run_keys():
            pipe.expire(key, RUN_TTL)
        pipe.execute()

    def finish(self, state: str, reason: str | None) -> None:
        """Record this worker's outcome (``finished`` with Scrapy's finish reason, or
        ``failed``); its lease and in-flight count go."""
        self._record({"state": state, "reason": reason, "finished_at": utc_now()})
        pipe = self.server.pipeline(transaction=False)
        pipe.delete(self.keys.lease(self.worker))
        pipe.hdel(self.keys.inflight, self.worker)
        pipe.execute()

    def _record(self, fields: dict[str, Any]) -> None:
        record = {
            "worker": self.worker,
            "host": socket.gethostname(),
            "pid": os.getpid(),
            "started_at": self.started_at,
            "state": "running",
            "reason": None,
            "finished_at": None,
            "updated": time.time(),
            **fields,
        }
        pipe = self.server.pipeline(transaction=False)
        pipe.hset(self.keys.workers, self.worker, json.dumps(record))
        pipe.expire(self.keys.workers, RUN_TTL)
        pipe.execute()
