import io
import logging

from crawler.support.progress import Progress


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_log_lines_at_the_interval(caplog):
    clock = Clock()
    progress = Progress(
        4, logger=logging.getLogger("t"), label="Extraction", interval=10, clock=clock, note=lambda: "5 tokens"
    )
    with caplog.at_level(logging.INFO, logger="t"):
        clock.now += 5
        progress.advance()  # 5 s: no line yet
        clock.now += 5
        progress.advance()
        clock.now += 1
        progress.advance()
    assert caplog.messages == ["Extraction: 2/4 pages (50%), 0.2 pages/s, ETA 10s, 5 tokens"]
    progress.finish()


def test_bar_on_a_terminal_is_erased_before_log_lines():
    clock = Clock()
    terminal = io.StringIO()
    handler = logging.StreamHandler(terminal)
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        progress = Progress(2, logger=logging.getLogger("t"), label="X", interval=0, terminal=terminal, clock=clock)
        clock.now += 1
        progress.advance()
        assert terminal.getvalue().endswith("X [###############...............] 1/2 pages (50%), 1.0 pages/s, ETA 1s")
        logging.getLogger("t").warning("a log line")
        assert terminal.getvalue().endswith("\r\x1b[Ka log line\n")  # erased, then the line
        progress.advance()  # the last page always redraws
        assert terminal.getvalue().endswith("2/2 pages (100%), 2.0 pages/s, ETA 0s")
        progress.finish()
        assert terminal.getvalue().endswith("\r\x1b[K")
        assert handler.filters == []
    finally:
        root.removeHandler(handler)


def test_tick_logs_while_nothing_advances(caplog):
    clock = Clock()
    progress = Progress(3, logger=logging.getLogger("t"), label="Extraction", interval=10, clock=clock)
    with caplog.at_level(logging.INFO, logger="t"):
        clock.now += 11
        progress.tick()  # every worker waits on a rate limit: still a line
    assert caplog.messages == ["Extraction: 0/3 pages (0%), 0.0 pages/s, ETA unknown"]
    progress.finish()
