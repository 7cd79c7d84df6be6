import pytest
from scrapy.exceptions import NotConfigured
from scrapy.utils.misc import build_from_crawler
from twisted.internet.task import Clock

import crawler.extensions.memory
from crawler.addons.incremental import EXTENSIONS
from crawler.extensions.memory import INTERVAL, TRIM_EVERY, MemorySweep, malloc_trim


def test_the_add_on_installs_it():
    assert "crawler.extensions.memory.MemorySweep" in EXTENSIONS


def test_off_without_a_reactor(make_crawler):
    with pytest.raises(NotConfigured, match="no Twisted reactor"):
        build_from_crawler(MemorySweep, make_crawler())


def test_a_timer_every_second_while_the_engine_runs_the_free_pages_trimmed(make_crawler, monkeypatch):
    monkeypatch.setattr(crawler.extensions.memory, "is_reactor_installed", lambda: True)
    sweep = build_from_crawler(MemorySweep, make_crawler())
    trims = []
    sweep.trim = trims.append
    sweep.clock = clock = Clock()
    assert sweep.task is None
    sweep.engine_started()
    task = sweep.task
    assert task is not None and task.running and task.interval == INTERVAL
    clock.advance(INTERVAL)
    assert [call.getTime() for call in clock.getDelayedCalls()] == [2 * INTERVAL]  # the next one set
    for _ in range(2 * TRIM_EVERY - 1):
        clock.advance(INTERVAL)
    assert trims == [0, 0]
    sweep.engine_stopped()
    assert not task.running and sweep.task is None and not clock.getDelayedCalls()
    sweep.engine_stopped()  # (twice: nothing to stop)


def test_the_allocator_s_trim_is_found_on_glibc():
    import platform

    trim = malloc_trim()
    if platform.libc_ver()[0] == "glibc":
        assert trim is not None and trim(0) in (0, 1)
    else:
        assert trim is None
