"""Progress of a long phase: done / total, rate, ETA; a log line at an interval and,
on a terminal, a progress bar that log lines do not break."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TextIO


def format_duration(seconds: float) -> str:
    """``42s``, ``3m05s``, ``2h07m``.

    >>> format_duration(42.4), format_duration(185), format_duration(7620)
    ('42s', '3m05s', '2h07m')
    """
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


def progress_line(done: int, total: int, elapsed: float, note: str = "") -> str:
    """One line of progress.

    >>> progress_line(120, 480, 60.0, "9,000 tokens sent")
    '120/480 pages (25%), 2.0 pages/s, ETA 3m00s, 9,000 tokens sent'
    >>> progress_line(0, 10, 0.0)
    '0/10 pages (0%), 0.0 pages/s, ETA unknown'
    """
    rate = done / elapsed if elapsed > 0 else 0.0
    eta = format_duration((total - done) / rate) if rate > 0 else "unknown"
    percent = 100 * done // total if total else 100
    line = f"{done}/{total} pages ({percent}%), {rate:.1f} pages/s, ETA {eta}"
    return f"{line}, {note}" if note else line


def progress_bar(done: int, total: int, width: int = 30) -> str:
    """``[#######.......]``.

    >>> progress_bar(1, 4, width=8)
    '[##......]'
    """
    filled = width * done // total if total else width
    return "[" + "#" * filled + "." * (width - filled) + "]"


class _EraseBar(logging.Filter):
    """Erases the bar before a log line is written to the same terminal."""

    def __init__(self, progress: Progress) -> None:
        super().__init__()
        self.progress = progress

    def filter(self, record: logging.LogRecord) -> bool:
        self.progress.erase()
        return True


class Progress:
    """Reports ``advance()`` calls: a log line every ``interval`` seconds through
    ``logger``; with a ``terminal`` stream, also a bar redrawn in place at most every
    ``redraw`` seconds. ``note`` adds a caller's figures (tokens so far) to each line."""

    def __init__(
        self,
        total: int,
        *,
        logger: logging.Logger,
        label: str,
        interval: float,
        terminal: TextIO | None = None,
        note: Callable[[], str] | None = None,
        clock: Callable[[], float] = time.monotonic,
        redraw: float = 0.5,
    ) -> None:
        self.total = total
        self.done = 0
        self.logger = logger
        self.label = label
        self.interval = interval
        self.terminal = terminal
        self.note = note or (lambda: "")
        self.clock = clock
        self.redraw = redraw
        self.started = clock()
        self.logged = self.started
        self.drawn = float("-inf")
        self.bar_shown = False
        self._filter = _EraseBar(self)
        if terminal is not None:
            for handler in logging.getLogger().handlers:
                handler.addFilter(self._filter)

    def line(self) -> str:
        return progress_line(self.done, self.total, self.clock() - self.started, self.note())

    def advance(self, count: int = 1) -> None:
        self.done += count
        self.tick(force_draw=self.done == self.total)

    def tick(self, *, force_draw: bool = False) -> None:
        """Log and redraw when due; call it on a timer too, so that progress shows
        while every worker waits."""
        now = self.clock()
        if self.interval > 0 and now - self.logged >= self.interval:
            self.logged = now
            self.logger.info("%(label)s: %(line)s", {"label": self.label, "line": self.line()})
        if self.terminal is not None and (now - self.drawn >= self.redraw or force_draw):
            self.drawn = now
            self._draw()

    def _draw(self) -> None:
        assert self.terminal is not None
        self.terminal.write(f"\r\x1b[K{self.label} {progress_bar(self.done, self.total)} {self.line()}")
        self.terminal.flush()
        self.bar_shown = True

    def erase(self) -> None:
        if self.bar_shown and self.terminal is not None:
            self.terminal.write("\r\x1b[K")
            self.terminal.flush()
            self.bar_shown = False

    def finish(self) -> None:
        if self.terminal is not None:
            self.erase()
            for handler in logging.getLogger().handlers:
                handler.removeFilter(self._filter)
