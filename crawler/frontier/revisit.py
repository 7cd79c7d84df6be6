"""The revisit schedule of a shared-frontier run: what its processes decide alike."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from crawler.frontier.runstate import RUN_TTL

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from crawler.frontier import Frontier

#: lastmods written to Redis in one command at most
CHUNK = 10_000


class SharedRevisit:
    """The revisit schedule's common ground in the run's Redis
    (:class:`crawler.incremental.revisit.RevisitShare`), so that each page is skipped or
    requested as one process would decide it, whichever process takes it.

    Shared: the sitemaps' lastmods (published before any page is queued), each host's trust
    as the run first read it (``HSETNX``, so a process that closes early does not change how
    the others decide), and the sample's draw (seeded by ``FRONTIER_RUN``). A failed call
    loses the frontier (:meth:`Frontier.call`). See docs/scaling.md.
    """

    def __init__(self, frontier: Frontier) -> None:
        self.frontier = frontier
        self.draw = frontier.run

    def publish_lastmods(self, lastmods: Mapping[str, str]) -> None:
        if not lastmods:
            return
        key = self.frontier.keys.lastmods

        def publish() -> None:
            pipe = self.frontier.server.pipeline(transaction=True)
            items = sorted(lastmods.items())
            for start in range(0, len(items), CHUNK):
                pipe.hset(key, mapping=dict(items[start : start + CHUNK]))
            pipe.expire(key, RUN_TTL)
            pipe.execute()

        self.frontier.call("publishing the sitemaps' lastmods", publish)

    def lastmods(self) -> dict[str, str]:
        raw = self.frontier.call(
            "reading the sitemaps' lastmods", lambda: self.frontier.server.hgetall(self.frontier.keys.lastmods), {}
        )
        return {key.decode(): value.decode() for key, value in raw.items()}

    def host_trust(self, domain: str, read: Callable[[], dict[str, Any] | None]) -> dict[str, Any] | None:
        key = self.frontier.keys.trust
        server = self.frontier.server
        raw = self.frontier.call("reading a host's trust", lambda: server.hget(key, domain))
        if raw is None:
            value = read()

            def first() -> Any:
                pipe = server.pipeline(transaction=True)
                pipe.hsetnx(key, domain, json.dumps(value))
                pipe.expire(key, RUN_TTL)
                pipe.hget(key, domain)
                return pipe.execute()[-1]

            raw = self.frontier.call("recording a host's trust", first)
            if raw is None:
                return value  # (the frontier is lost: the crawl stops)
        trust = json.loads(raw)
        return trust if isinstance(trust, dict) else None
