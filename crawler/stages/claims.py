"""Who extracts an input now: this process's claims on the inputs it extracts, and
its calls running now."""

from __future__ import annotations

import asyncio
import os
import socket
from contextlib import contextmanager
from typing import TYPE_CHECKING

from crawler.cache import CacheStorageError

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from crawler.cache.ports import ExtractionStore


class Claims:
    """Across processes (a store shared by several): one calls the extractor for an
    input, the others skip it; a claim outlives a call's timeout, and lapses when its
    process died. Within this process: the calls running now by input key, so that a
    page with the same input (a mirror) waits for the answer instead of calling."""

    def __init__(self, store: ExtractionStore, run_id: str, timeout: float) -> None:
        self.store = store
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{run_id}"
        self.seconds = max(60.0, 2 * timeout)
        #: input keys being extracted now -> done when the call ends
        self.running: dict[str, asyncio.Future[None]] = {}

    async def finished(self, key: str) -> None:
        """Wait for this process's call on ``key``, if one is running."""
        running = self.running.get(key)
        if running is not None:
            await asyncio.shield(running)

    def claim(self, key: str) -> bool:
        """Claim ``key`` for this process: False while another process holds it.
        Raises :class:`CacheStorageError`."""
        return self.store.claim_extraction(key, self.owner, self.seconds)

    @contextmanager
    def held(self, key: str, release_failed: Callable[[CacheStorageError], None]) -> Iterator[None]:
        """The call on the claimed ``key`` runs in this block; released after it (the
        extraction was written), whatever happened."""
        done = self.running.setdefault(key, asyncio.get_running_loop().create_future())
        try:
            yield
        finally:
            try:
                self.store.release_extraction(key, self.owner)  # after the extraction was written
            except CacheStorageError as exc:  # the claim lapses by itself
                release_failed(exc)
            if self.running.get(key) is done:
                del self.running[key]
                done.set_result(None)
