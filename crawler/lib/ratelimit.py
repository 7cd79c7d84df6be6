"""A sliding-window rate limit: at most ``per_minute`` calls in any 60 seconds."""

from __future__ import annotations

import bisect
import time
from collections.abc import Callable


class RateLimiter:
    """``reserve()`` books the next call and returns how many seconds to wait first.

    >>> now = [0.0]
    >>> limiter = RateLimiter(2, clock=lambda: now[0])
    >>> limiter.reserve(), limiter.reserve(), limiter.reserve()
    (0.0, 0.0, 60.0)
    >>> now[0] = 30.0
    >>> limiter.reserve()
    30.0
    >>> RateLimiter(0).reserve()  # 0: no limit
    0.0
    """

    def __init__(self, per_minute: int, clock: Callable[[], float] = time.monotonic, window: float = 60.0) -> None:
        self.per_minute = per_minute
        self.clock = clock
        self.window = window
        self._times: list[float] = []

    def reserve(self) -> float:
        if self.per_minute <= 0:
            return 0.0
        now = self.clock()
        cutoff = now - self.window
        while self._times and self._times[0] <= cutoff:
            self._times.pop(0)
        at = now if len(self._times) < self.per_minute else self._times[-self.per_minute] + self.window
        bisect.insort(self._times, at)
        return max(0.0, at - now)
