"""Rate limits in requests and tokens per minute, as LLM and embedding APIs set them:
at most so many in any 60 seconds (a sliding window, not a bucket that lets a second
minute's worth through at a window's edge)."""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass


@dataclass
class Entry:
    at: float
    amount: float
    live: bool = True


class SlidingWindow:
    """At most ``limit`` units in any ``window`` seconds. Pure: the caller passes the time.

    >>> w = SlidingWindow(2)
    >>> w.wait_time(1, now=0.0); _ = w.take(1, now=0.0); _ = w.take(1, now=10.0)
    0.0
    >>> w.wait_time(1, now=20.0), w.wait_time(2, now=20.0)
    (40.0, 50.0)
    >>> w.wait_time(5, now=20.0)  # more than the limit waits for an empty window
    50.0
    """

    def __init__(self, limit: float, window: float = 60.0) -> None:
        if limit <= 0:
            raise ValueError(f"a rate limit must be more than 0 a minute, got {limit!r}")
        self.limit = float(limit)
        self.window = window
        self.entries: deque[Entry] = deque()
        self.total = 0.0

    def _expire(self, now: float) -> None:
        while self.entries and self.entries[0].at <= now - self.window:
            entry = self.entries.popleft()
            entry.live = False
            self.total -= entry.amount

    def wait_time(self, amount: float, *, now: float) -> float:
        """Seconds until ``amount`` fits in the window."""
        self._expire(now)
        excess = self.total + min(amount, self.limit) - self.limit
        if excess <= 0:
            return 0.0
        freed = 0.0
        for entry in self.entries:
            freed += entry.amount
            if freed >= excess:
                return entry.at + self.window - now
        return self.window

    def take(self, amount: float, *, now: float) -> Entry:
        entry = Entry(now, amount)
        self.entries.append(entry)
        self.total += amount
        return entry

    def adjust(self, entry: Entry, amount: float) -> None:
        """Correct what an entry still in the window counts for."""
        if entry.live:
            self.total += amount - entry.amount
            entry.amount = amount


@dataclass
class Ticket:
    """One call let through: how long it waited, and its token entry for :meth:`RateLimiter.settle`."""

    waited: float
    tokens: Entry | None


class RateLimiter:
    """Waits so that calls stay under ``requests_per_minute`` and ``tokens_per_minute``
    (either 0: no limit). Callers queue in arrival order.

    ``await acquire(tokens)`` before a call with its estimated tokens; ``settle(ticket,
    actual)`` after it, when the API reported what the call really used."""

    def __init__(
        self,
        requests_per_minute: float = 0,
        tokens_per_minute: float = 0,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
    ) -> None:
        self.requests = SlidingWindow(requests_per_minute) if requests_per_minute else None
        self.tokens = SlidingWindow(tokens_per_minute) if tokens_per_minute else None
        self.clock = clock
        self.sleep = sleep
        self._lock = asyncio.Lock()
        #: seconds spent waiting for the limits
        self.waited = 0.0

    @property
    def active(self) -> bool:
        return self.requests is not None or self.tokens is not None

    async def acquire(self, tokens: int = 0) -> Ticket:
        if not self.active:
            return Ticket(0.0, None)
        waited = 0.0
        async with self._lock:
            while True:
                now = self.clock()
                wait = max(
                    self.requests.wait_time(1, now=now) if self.requests else 0.0,
                    self.tokens.wait_time(tokens, now=now) if self.tokens else 0.0,
                )
                if wait <= 0:
                    break
                waited += wait
                await self.sleep(wait)
            if self.requests:
                self.requests.take(1, now=now)
            entry = self.tokens.take(tokens, now=now) if self.tokens else None
        self.waited += waited
        return Ticket(waited, entry)

    def settle(self, ticket: Ticket, actual: int) -> None:
        """Count a call's real token use instead of its estimate."""
        if self.tokens is not None and ticket.tokens is not None:
            self.tokens.adjust(ticket.tokens, actual)
