"""Rate limits in requests and tokens per minute, as LLM and embedding APIs set them."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable


class TokenBucket:
    """``per_minute`` units a minute, refilled continuously, at most one minute's worth
    saved up. Pure: the caller passes the time.

    >>> bucket = TokenBucket(60, now=0.0)
    >>> bucket.wait_time(60, now=0.0), bucket.wait_time(61, now=0.0)
    (0.0, 0.0)
    >>> bucket.take(60, now=0.0)
    >>> bucket.wait_time(1, now=0.0), bucket.wait_time(30, now=10.0)
    (1.0, 20.0)
    """

    def __init__(self, per_minute: float, *, now: float) -> None:
        if per_minute <= 0:
            raise ValueError(f"a rate limit must be more than 0 a minute, got {per_minute!r}")
        self.capacity = float(per_minute)
        self.rate = per_minute / 60.0
        self.level = self.capacity
        self.updated = now

    def _refill(self, now: float) -> None:
        self.level = min(self.capacity, self.level + (now - self.updated) * self.rate)
        self.updated = now

    def wait_time(self, amount: float, *, now: float) -> float:
        """Seconds until ``amount`` can be taken (an amount over a minute's worth waits
        for a full bucket)."""
        self._refill(now)
        missing = min(amount, self.capacity) - self.level
        return max(0.0, missing / self.rate)

    def take(self, amount: float, *, now: float) -> None:
        """Take ``amount`` (the level may go below zero: a debt paid by waiting)."""
        self._refill(now)
        self.level -= amount


class RateLimiter:
    """Waits so that calls stay under ``requests_per_minute`` and ``tokens_per_minute``
    (either 0: no limit). Callers queue in arrival order.

    ``acquire(tokens)`` before a call with its estimated tokens; ``settle(estimated,
    actual)`` after it, when the API reported what the call really used."""

    def __init__(
        self,
        requests_per_minute: float = 0,
        tokens_per_minute: float = 0,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
    ) -> None:
        now = clock()
        self.requests = TokenBucket(requests_per_minute, now=now) if requests_per_minute else None
        self.tokens = TokenBucket(tokens_per_minute, now=now) if tokens_per_minute else None
        self.clock = clock
        self.sleep = sleep
        self._lock = asyncio.Lock()
        #: seconds spent waiting for the limits
        self.waited = 0.0

    @property
    def active(self) -> bool:
        return self.requests is not None or self.tokens is not None

    async def acquire(self, tokens: int = 0) -> None:
        if not self.active:
            return
        async with self._lock:
            while True:
                now = self.clock()
                wait = max(
                    self.requests.wait_time(1, now=now) if self.requests else 0.0,
                    self.tokens.wait_time(tokens, now=now) if self.tokens else 0.0,
                )
                if wait <= 0:
                    break
                self.waited += wait
                await self.sleep(wait)
            if self.requests:
                self.requests.take(1, now=now)
            if self.tokens:
                self.tokens.take(tokens, now=now)

    def settle(self, estimated: int, actual: int) -> None:
        """Correct the token bucket once a call's real token count is known."""
        if self.tokens is not None and actual != estimated:
            self.tokens.take(actual - estimated, now=self.clock())
