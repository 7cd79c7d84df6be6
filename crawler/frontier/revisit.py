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
    requested as one process would decide it, whichever process takes it:

    - the sitemaps' lastmods (``frontier:{run}:lastmods``, url_hash -> lastmod): the
      process that makes the start requests reads the sitemaps first and publishes
      their lastmods before it queues any page (:class:`crawler.frontier.start.StartOncePerRun`);
      every process reads them once, when it decides its first page;
    - each host's trust as the run first read it (``frontier:{run}:trust``, domain ->
      JSON, ``HSETNX``: the first process to ask writes it): a process that closes
      early and adds its observations to the store does not change how the others
      decide in this run;
    - the sample's draw, made with the run's id (``FRONTIER_RUN``), not the process's.

    Each process adds the observations of the pages it checked (each page is checked
    by one process of the run) to the store when its part is recorded, as one process
    does. A failed call loses the frontier (:meth:`Frontier.call`): the crawl stops and
    the run is partial; the stored trust is used meanwhile.
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
