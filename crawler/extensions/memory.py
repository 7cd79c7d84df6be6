"""Memory the crawl no longer uses given back while it runs: :class:`MemorySweep`."""

from __future__ import annotations

import ctypes
from typing import TYPE_CHECKING

from scrapy import signals
from scrapy.exceptions import NotConfigured
from scrapy.utils.reactor import is_reactor_installed
from twisted.internet.task import LoopingCall

if TYPE_CHECKING:
    from collections.abc import Callable

    from scrapy.crawler import Crawler
    from twisted.internet.interfaces import IReactorTime

#: seconds between two sweeps
INTERVAL = 1.0
#: sweeps between two trims of the allocator's free pages
TRIM_EVERY = 5


def malloc_trim() -> Callable[[int], int] | None:
    """glibc's ``malloc_trim``, from the symbols the process has loaded (None
    elsewhere: musl, macOS, Windows)."""
    try:
        return getattr(ctypes.CDLL(None), "malloc_trim", None)
    except (OSError, TypeError):
        return None


class MemorySweep:
    """Gives back, every second, memory a crawl holds and no longer uses.

    - Twisted's cancelled timers. Each request sets timers that its answer cancels
      (its download timeout, its pooled connection's idle timeout); the reactor lets a
      cancelled timer go only when a timer fires, and then drops them all once more
      than half its timers are cancelled. A crawl whose every timer is cancelled meets
      none firing until the first timeout's end: an unchanged recrawl of the benchmark
      site (330 pages/s) held 17,800, about 5 MB. This sweep's own timer fires every
      second.
    - The C allocator's free pages (glibc's ``malloc_trim``, every
      :data:`TRIM_EVERY` sweeps, a fraction of a millisecond). A crawl frees what each
      page made (its response, its parsed tree) as it goes, and the free pages left
      between the objects it keeps stay resident: 5 MB of 117 at 30,000 pages.

    ``IncrementalAddon`` installs it (``EXTENSIONS``); off without a Twisted reactor."""

    def __init__(self, clock: IReactorTime | None = None) -> None:
        self.task: LoopingCall | None = None
        #: the reactor's timers (None: the installed reactor's)
        self.clock = clock
        self.trim = malloc_trim()
        self.sweeps = 0

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> MemorySweep:
        if not is_reactor_installed():
            raise NotConfigured("MemorySweep is off: no Twisted reactor")
        sweep = cls()
        crawler.signals.connect(sweep.engine_started, signal=signals.engine_started)
        crawler.signals.connect(sweep.engine_stopped, signal=signals.engine_stopped)
        return sweep

    def engine_started(self) -> None:
        self.task = LoopingCall(self.sweep)  # (the reactor drops cancelled timers as it runs this one)
        if self.clock is not None:
            self.task.clock = self.clock
        self.task.start(INTERVAL, now=False)

    def sweep(self) -> None:
        self.sweeps += 1
        if self.trim is not None and self.sweeps % TRIM_EVERY == 0:
            self.trim(0)

    def engine_stopped(self) -> None:
        if self.task is not None and self.task.running:
            self.task.stop()
        self.task = None
