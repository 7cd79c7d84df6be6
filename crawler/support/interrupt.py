"""SIGINT and SIGTERM while a closing phase runs: stop taking work, let calls in flight
finish for a bounded time, then abandon them; never a silent exit.

Scrapy's own handlers stop the engine, which during the closing stage (the spider is
already closed) ends the process within a second, without a run report and with exit
status 0. :class:`Interruption` takes the two signals over while the closing stage
runs and gives them back afterwards.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import threading
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable
    from types import FrameType, TracebackType

logger = logging.getLogger(__name__)

SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Interruption:
    """While active (``with``), the first SIGINT/SIGTERM calls ``on_signal`` with its
    name at once (the phase stops taking new work) and sets :attr:`abandon` ``grace``
    seconds later; a second signal sets :attr:`abandon` at once (calls in flight are
    given up).

    Outside the main thread (signals cannot be handled there) it does nothing.
    """

    def __init__(
        self, grace: float, *, what: str = "calls in flight", on_signal: Callable[[str], None] | None = None
    ) -> None:
        self.grace = grace
        self.what = what
        #: called with the first signal's name, in the signal handler: it may only set a flag
        self.on_signal = on_signal
        self._received_one = False
        self.abandon = asyncio.Event()
        self._previous: dict[int, Any] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._closed = False

    def __enter__(self) -> Interruption:
        if threading.current_thread() is not threading.main_thread():
            return self
        self._loop = asyncio.get_running_loop()
        for signum in SIGNALS:
            self._previous[signum] = signal.signal(signum, self._received)
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self._closed = True  # a signal handled after this (already queued) changes nothing
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)
        self._previous.clear()
        if self._timer is not None:
            self._timer.cancel()

    def _received(self, signum: int, frame: FrameType | None) -> None:
        # a signal handler: no logging here (the interrupted code may be writing to the
        # same stream); the flag at once, the rest in the event loop
        if self._closed:
            return
        first = not self._received_one
        self._received_one = True
        if first and self.on_signal is not None:
            self.on_signal(signal.Signals(signum).name)
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._handle, signal.Signals(signum).name, first)

    def _handle(self, name: str, first: bool) -> None:
        if self._closed:
            return
        if first:
            logger.warning(
                "%(sig)s received: stopping; the %(what)s may finish for up to %(grace).0f s "
                "(send it again to give them up now)",
                {"sig": name, "what": self.what, "grace": self.grace},
            )
            assert self._loop is not None
            self._timer = self._loop.call_later(self.grace, self._give_up, "the wait ran out")
        else:
            self._give_up(f"{name} received again")

    def _give_up(self, why: str) -> None:
        if not self.abandon.is_set():
            logger.warning("Giving up the %(what)s: %(why)s", {"what": self.what, "why": why})
            self.abandon.set()


async def until_done_or_abandoned(tasks: list[asyncio.Task[Any]], interruption: Interruption | None) -> bool:
    """Wait for ``tasks``. When ``interruption`` says to abandon them, cancel those
    still running and return True. When one of them fails, cancel the others, wait
    for them, and raise its exception: no task is left running behind the caller."""
    abandon = asyncio.ensure_future(interruption.abandon.wait()) if interruption is not None else None
    pending: set[asyncio.Future[Any]] = set(tasks)
    try:
        while pending:
            done, _ = await asyncio.wait(
                pending | ({abandon} if abandon is not None else set()), return_when=asyncio.FIRST_COMPLETED
            )
            pending -= done
            failed = next((t for t in done if t is not abandon and not t.cancelled() and t.exception()), None)
            if failed is not None:
                await _cancel(pending)
                raise failed.exception()  # type: ignore[misc]
            if abandon is not None and abandon in done:
                abandoned = bool(pending)
                await _cancel(pending)
                return abandoned
        return False
    finally:
        if abandon is not None:
            abandon.cancel()


async def _cancel(tasks: set[asyncio.Future[Any]]) -> None:
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
